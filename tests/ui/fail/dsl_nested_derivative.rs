// Derivatives apply to fields; nesting them is refused with the two-stencil fix.
use ppstencil::stencil;

stencil! {
    fn fourth(o: out, p: in) {
        o[0, 0] = d2x(d2x(p, 2), 2);
    }
}

fn main() {}
