// The output field is also passed as the input: the kernel would read what it writes.
use ppstencil::kernels::fd_pxx;
use ppstencil::{HostField, ScalarField, Serial};

fn main() -> ppstencil::Result<()> {
    let mut p: HostField = ScalarField::new(8, 8)?;
    fd_pxx(&Serial, &mut p, &p)?;
    Ok(())
}
