// One kernel call with an output in host memory and an input in CUDA memory.
use ppstencil::kernels::fd_pzz;
use ppstencil::{HostField, MemSpaceCuda, ScalarField, Serial};

fn main() -> ppstencil::Result<()> {
    let p: ScalarField<MemSpaceCuda> = ScalarField::new(8, 8)?;
    let mut pzz: HostField = ScalarField::new(8, 8)?;
    fd_pzz(&Serial, &mut pzz, &p)?;
    Ok(())
}
