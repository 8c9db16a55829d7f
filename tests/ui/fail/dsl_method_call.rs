// Rust method syntax: the DSL spells functions as calls.
use ppstencil::stencil;

stencil! {
    fn root(o: out, p: in) {
        o[0, 0] = p[0, 0].sqrt();
    }
}

fn main() {}
