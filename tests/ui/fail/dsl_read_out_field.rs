// Reading a field declared `out`: its old value is undefined (use `inout`).
use ppstencil::stencil;

stencil! {
    fn accumulate(acc: out, p: in) {
        acc[0, 0] = acc[0, 0] + p[0, 0];
    }
}

fn main() {}
