// A field in host memory handed to a kernel running on the HIP execution space.
use ppstencil::kernels::add_source;
use ppstencil::{HostField, Hip, ScalarField};

fn main() -> ppstencil::Result<()> {
    let hip = Hip::new()?;
    let mut p: HostField = ScalarField::new(8, 8)?;
    add_source(&hip, &mut p, 1.0, 4, 4)?;
    Ok(())
}
