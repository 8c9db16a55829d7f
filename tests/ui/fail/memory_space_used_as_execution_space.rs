// A memory space (where data lives) passed where an execution space (how code runs) goes.
use ppstencil::kernels::fd_pxx;
use ppstencil::{HostField, MemSpaceHost, ScalarField};

fn main() -> ppstencil::Result<()> {
    let p: HostField = ScalarField::new(8, 8)?;
    let mut pxx: HostField = ScalarField::new(8, 8)?;
    fd_pxx(&MemSpaceHost, &mut pxx, &p)?;
    Ok(())
}
