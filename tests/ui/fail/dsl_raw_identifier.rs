// Raw identifiers are refused with a name to use instead.
use ppstencil::stencil;

stencil! {
    fn raw(r#type: out, p: in) {
        r#type[0, 0] = p[0, 0];
    }
}

fn main() {}
