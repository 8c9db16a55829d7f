// An algorithm written once over the execution space, run on Serial and Rayon.
use ppstencil::kernels::{fd_pxx, fd_pzz};
use ppstencil::{ExecutionSpace, HostField, Rayon, Result, ScalarField, Serial};

/// The 4th-order Laplacian (unscaled) of a host field, computed on `space`.
fn laplacian<E: ExecutionSpace>(space: &E, p: &HostField) -> Result<HostField> {
    let [nz, nx] = p.shape();
    let p = ScalarField::<E::Memory>::from_host(p)?;
    let mut pxx = ScalarField::<E::Memory>::new(nz, nx)?;
    let mut pzz = ScalarField::<E::Memory>::new(nz, nx)?;
    fd_pxx(space, &mut pxx, &p)?;
    fd_pzz(space, &mut pzz, &p)?;
    let (mut a, b) = (pxx.to_host()?, pzz.to_host()?);
    for (x, z) in a.as_mut_slice().iter_mut().zip(b.as_slice()) {
        *x += z;
    }
    Ok(a)
}

fn main() -> Result<()> {
    let mut p: HostField = ScalarField::new(9, 9)?;
    p[(4, 4)] = 1.0;
    let serial = laplacian(&Serial, &p)?;
    let rayon = laplacian(&Rayon::new(), &p)?;
    assert_eq!(serial.as_slice(), rayon.as_slice());
    assert_eq!(serial[(4, 4)], -5.0);
    Ok(())
}
