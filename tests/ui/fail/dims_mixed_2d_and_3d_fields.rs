// One call mixing a 3D output and a 2D input.
use ppstencil::{stencil, HostField, ScalarField, Serial};

stencil! {
    fn copy3(o: out, p: in) {
        o[0, 0, 0] = p[0, 0, 0];
    }
}

fn main() -> ppstencil::Result<()> {
    let p: HostField<f32, 2> = ScalarField::new(8, 8)?;
    let mut o: HostField<f32, 3> = ScalarField::new_3d(8, 8, 8)?;
    copy3(&Serial, &mut o, &p)?;
    Ok(())
}
