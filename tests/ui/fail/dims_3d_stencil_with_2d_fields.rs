// A 3D stencil called with 2D fields.
use ppstencil::{stencil, HostField, ScalarField, Serial};

stencil! {
    fn lap3(o: out, p: in) {
        o[0, 0, 0] = laplacian(p, 2);
    }
}

fn main() -> ppstencil::Result<()> {
    let p: HostField = ScalarField::new(8, 8)?;
    let mut o: HostField = ScalarField::new(8, 8)?;
    lap3(&Serial, &mut o, &p)?;
    Ok(())
}
