// Reading a field that is not a parameter of the stencil.
use ppstencil::stencil;

stencil! {
    fn step(pnew: out, p: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0];
    }
}

fn main() {}
