// Reading an element of a device field on the host.
use ppstencil::{MemSpaceCuda, ScalarField};

fn main() -> ppstencil::Result<()> {
    let p: ScalarField<MemSpaceCuda> = ScalarField::new(8, 8)?;
    let centre = p[(4, 4)];
    println!("{centre}");
    Ok(())
}
