// A user-authored stencil with two outputs, a scalar, `let` and a function.
use ppstencil::{stencil, HostField, Rayon, ScalarField, Serial};

stencil! {
    /// Gradient magnitude and Laplacian of `u`.
    pub fn analyse(mag: out, lap: out, u: in, inv2h: real) {
        let gx = (u[0, 1] - u[0, -1]) * inv2h;
        let gz = (u[1, 0] - u[-1, 0]) * inv2h;
        mag[0, 0] = sqrt(gx * gx + gz * gz);
        lap[0, 0] = u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0];
    }
}

fn main() -> ppstencil::Result<()> {
    let u: HostField<f64> = ScalarField::from_fn(6, 7, |iz, ix| (iz * 7 + ix) as f64)?;
    let mut mag: HostField<f64> = ScalarField::new(6, 7)?;
    let mut lap: HostField<f64> = ScalarField::new(6, 7)?;
    analyse(&Serial, &mut mag, &mut lap, &u, 0.5)?;
    // u = 7 iz + ix: gradient (1, 7), Laplacian 0.
    assert!((mag[(2, 3)] - 50f64.sqrt()).abs() < 1e-12);
    assert_eq!(lap[(2, 3)], 0.0);
    analyse(&Rayon::new(), &mut mag, &mut lap, &u, 0.5)?;
    Ok(())
}
