// Offsets must be integer constants: `k` is a runtime value.
use ppstencil::stencil;

stencil! {
    fn shift(out: out, p: in, k: real) {
        out[0, 0] = p[0, k];
    }
}

fn main() {}
