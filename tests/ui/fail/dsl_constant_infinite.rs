// A constant that folds to infinity is an error at the operator, not a panic.
use ppstencil::stencil;

stencil! {
    fn blow_up(o: out, p: in) {
        o[0, 0] = 1.0 / 0.0 * p[0, 0];
    }
}

fn main() {}
