// `^` is xor in Rust and no power in the DSL.
use ppstencil::stencil;

stencil! {
    fn square(o: out, p: in) {
        o[0, 0] = p[0, 0] ^ 2;
    }
}

fn main() {}
