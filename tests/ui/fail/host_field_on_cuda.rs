// A field in host memory handed to a kernel running on the CUDA execution space.
use ppstencil::kernels::fd_pxx;
use ppstencil::{Cuda, HostField, ScalarField};

fn main() -> ppstencil::Result<()> {
    let cuda = Cuda::new()?;
    let p: HostField = ScalarField::new(8, 8)?;
    let mut pxx: HostField = ScalarField::new(8, 8)?;
    fd_pxx(&cuda, &mut pxx, &p)?;
    Ok(())
}
