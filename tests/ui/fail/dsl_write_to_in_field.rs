// Assigning to a field declared `in`.
use ppstencil::stencil;

stencil! {
    fn smooth(out: out, p: in) {
        out[0, 0] = 0.5 * (p[0, -1] + p[0, 1]);
        p[0, 0] = 0.0;
    }
}

fn main() {}
