// Two stencils giving one marker type (`FdStep4`) are refused.
use ppstencil::stencil;

stencil! {
    fn fd_step4(o: out, p: in) {
        o[0, 0] = p[0, 0];
    }
    fn fd_step_4(o: out, p: in) {
        o[0, 0] = p[0, 0];
    }
}

fn main() {}
