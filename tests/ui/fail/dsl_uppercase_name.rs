// `Ok` would be the enum variant in the generated Rust, not a new variable.
use ppstencil::stencil;

stencil! {
    fn shadow(o: out, p: in) {
        let Ok = p[0, 0];
        o[0, 0] = Ok;
    }
}

fn main() {}
