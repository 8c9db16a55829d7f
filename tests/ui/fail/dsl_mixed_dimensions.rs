// A stencil whose reads have different numbers of offsets.
use ppstencil::stencil;

stencil! {
    fn f(o: out, p: in, q: in) {
        o[0, 0, 0] = p[0, 1, 0] + q[0, 1];
    }
}

fn main() {}
