// Slicing a device field on the host.
use ppstencil::{MemSpaceHip, ScalarField};

fn main() -> ppstencil::Result<()> {
    let p: ScalarField<MemSpaceHip> = ScalarField::new(8, 8)?;
    let sum: f32 = p.as_slice().iter().sum();
    println!("{sum}");
    Ok(())
}
