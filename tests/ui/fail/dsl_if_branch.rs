// No branches in a stencil: the error names min/max and masks.
use ppstencil::stencil;

stencil! {
    fn clamp(o: out, p: in) {
        o[0, 0] = if p[0, 0] > 0.0 { p[0, 0] } else { 0.0 };
    }
}

fn main() {}
