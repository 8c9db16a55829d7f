// An output may only be written at the point the stencil is at, `[0, 0]`.
use ppstencil::stencil;

stencil! {
    fn scatter(out: out, p: in) {
        out[0, 1] = p[0, 0];
    }
}

fn main() {}
