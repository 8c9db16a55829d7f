// An `inout` field read at a neighbour: another thread may already have updated it.
use ppstencil::stencil;

stencil! {
    fn smooth_in_place(u: inout) {
        u[0, 0] = 0.5 * (u[0, -1] + u[0, 1]);
    }
}

fn main() {}
