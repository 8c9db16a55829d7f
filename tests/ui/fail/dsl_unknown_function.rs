// `tanh` is not one of the functions the DSL knows.
use ppstencil::stencil;

stencil! {
    fn activate(out: out, p: in) {
        out[0, 0] = tanh(p[0, 0]);
    }
}

fn main() {}
