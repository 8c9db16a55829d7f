//! A user-authored stencil: the 2D heat equation, written once with `stencil!` and run on the
//! Serial and Rayon execution spaces.
//!
//! `cargo run --release -p ppstencil-examples --example heat`
//!
//! The explicit step `u ← u + α ∇²u` (5-point Laplacian, α = κ dt / dh² ≤ 1/4 for stability)
//! spreads a Gaussian hot spot. While it stays away from the (cold, fixed) border the scheme
//! conserves the total heat exactly and the variance of the distribution along each axis
//! grows by exactly 2α per step, so after n steps σ² = σ0² + 2αn and the peak is close to
//! the continuous solution's `M / (2π σ²)`. The example checks both backends agree bit for
//! bit and compares with these analytic values.

use ppstencil::launch::Stencil;
use ppstencil::{stencil, ExecutionSpace, HostField, Rayon, ScalarField, Serial};

stencil! {
    /// One explicit step of the heat equation: `unew = u + alpha * laplacian(u)`.
    pub fn heat_step(unew: out, u: in, alpha: real) {
        unew[0, 0] = u[0, 0] + alpha * (u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0]);
    }
}

const N: usize = 129;
const CENTRE: f64 = 64.0;
const SIGMA0: f64 = 3.0;
const ALPHA: f64 = 0.2;
const STEPS: usize = 200;
const REPORT_EVERY: usize = 50;

/// Total heat, variance along x, peak value.
fn moments(u: &HostField<f64>) -> (f64, f64, f64) {
    let mut total = 0.0;
    let mut var = 0.0;
    let mut peak = 0.0f64;
    for z in 0..N {
        for x in 0..N {
            let v = u[(z, x)];
            total += v;
            var += v * (x as f64 - CENTRE).powi(2);
            peak = peak.max(v);
        }
    }
    (total, var / total, peak)
}

/// Runs `steps` heat steps on `space`, calling `report(step, field)` every REPORT_EVERY steps.
fn simulate<E: ExecutionSpace<Memory = ppstencil::MemSpaceHost>>(
    space: &E,
    u0: &HostField<f64>,
    mut report: impl FnMut(usize, &HostField<f64>),
) -> ppstencil::Result<HostField<f64>> {
    let mut u = ScalarField::from_host(u0)?;
    let mut unew = ScalarField::new(N, N)?;
    for step in 1..=STEPS {
        heat_step(space, &mut unew, &u, ALPHA)?;
        u.swap(&mut unew);
        if step % REPORT_EVERY == 0 {
            report(step, &u);
        }
    }
    Ok(u)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let u0: HostField<f64> = ScalarField::from_fn(N, N, |z, x| {
        let r2 = (z as f64 - CENTRE).powi(2) + (x as f64 - CENTRE).powi(2);
        (-r2 / (2.0 * SIGMA0 * SIGMA0)).exp()
    })?;
    let (heat0, var0, _) = moments(&u0);
    println!("2D heat equation on {N} x {N}, alpha = {ALPHA}, Gaussian sigma0 = {SIGMA0} cells");
    let info = HeatStep::INFO;
    println!(
        "stencil `{}`: radius {}, {} flops and {} bytes per point in f64 (derived from the \
         stencil IR); printed back from the IR:\n{}",
        info.name,
        info.radius,
        info.flops_per_point,
        info.bytes_per_point::<f64>(),
        info.dsl
    );
    println!(
        "{:>5}  {:>14}  {:>12} {:>12}  {:>10} {:>10}",
        "step", "heat change", "variance", "analytic", "peak", "analytic"
    );
    let mut worst_var = 0.0f64;
    let serial = simulate(&Serial, &u0, |step, u| {
        let (heat, var, peak) = moments(u);
        let var_exact = var0 + 2.0 * ALPHA * step as f64;
        let peak_exact = heat0 / (2.0 * std::f64::consts::PI * var_exact);
        worst_var = worst_var.max((var / var_exact - 1.0).abs());
        println!(
            "{step:>5}  {:>14.3e}  {var:>12.6} {var_exact:>12.6}  {peak:>10.6} {peak_exact:>10.6}",
            heat / heat0 - 1.0
        );
    })?;
    let rayon = simulate(&Rayon::new(), &u0, |_, _| {})?;

    let (heat, _, _) = moments(&serial);
    let identical = serial.as_slice() == rayon.as_slice();
    println!(
        "\nSerial and Rayon ({} threads) agree bit for bit: {identical}",
        Rayon::new().threads()
    );
    println!(
        "total heat conserved to {:.1e} (relative); variance within {:.1e} of sigma0^2 + 2*alpha*n",
        (heat / heat0 - 1.0).abs(),
        worst_var
    );
    if !identical {
        return Err("Serial and Rayon results differ".into());
    }
    if (heat / heat0 - 1.0).abs() > 1e-9 || worst_var > 1e-6 {
        return Err("the heat step does not match the analytic solution".into());
    }
    Ok(())
}
