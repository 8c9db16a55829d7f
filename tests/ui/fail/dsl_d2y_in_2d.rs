// `d2y` in a 2D stencil: there is no y axis.
use ppstencil::stencil;

stencil! {
    fn f(o: out, p: in) {
        o[0, 0] = d2x(p, 4) + d2y(p, 4);
    }
}

fn main() {}
