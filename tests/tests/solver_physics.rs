//! Physics checks of the acoustic solver against an analytic solution.

use ppstencil::solver::SourceMode;
use ppstencil::{Rayon, WaveConfig, WaveSimulator};
use std::f64::consts::PI;

/// Ricker wavelet delayed by `t0`, written out here independently of the library.
fn ricker(t: f64, f: f64, t0: f64) -> f64 {
    let a = (PI * f * (t - t0)).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// The analytic 2D pressure at distance `r` and time `t` for the source term
/// `c² s(t) δ(x)`: the Green's function `H(t - r/c) / (2π sqrt(t² - r²/c²))` convolved with
/// the causal wavelet `s` (zero before t = 0). With `τ = (r/c) cosh u` the integrand loses
/// its singularity: `p = (1/2π) ∫_0^U s(t - (r/c) cosh u) du`, `U = acosh(c t / r)`.
fn analytic(r: f64, t: f64, c: f64, f: f64, t0: f64) -> f64 {
    let tr = r / c;
    if t <= tr {
        return 0.0;
    }
    let umax = (t / tr).acosh();
    let n = 4000; // Simpson panels
    let h = umax / n as f64;
    let g = |u: f64| ricker(t - tr * u.cosh(), f, t0);
    let mut sum = g(0.0) + g(umax);
    for k in 1..n {
        sum += if k % 2 == 1 { 4.0 } else { 2.0 } * g(k as f64 * h);
    }
    sum * h / 3.0 / (2.0 * PI)
}

struct Case {
    dh: f64,
    order: usize,
    cfl: f64,
}

/// Runs the homogeneous problem and returns (relative L2 error, peak amplitude).
fn trace_error(case: &Case, verbose: bool) -> (f64, f64) {
    let c = 2000.0;
    let f = 10.0;
    let t0 = 1.5 / f;
    let (lz, lx) = (1000.0, 1400.0);
    let (src_z_m, src_x_m) = (500.0, 500.0);
    let r = 400.0;
    let t_end = 0.5;
    let dh = case.dh;
    let dt = case.cfl * dh / c;
    let nt = (t_end / dt).round() as usize;
    // The border of `order / 2` cells stays zero: the rigid walls lie that far inside, so the
    // grid grows by it to keep the walls' reflections out of the time window.
    let rad = case.order / 2;
    let nz = (lz / dh).round() as usize + 1 + 2 * rad;
    let nx = (lx / dh).round() as usize + 1 + 2 * rad;
    let (sz, sx) = (
        (src_z_m / dh).round() as usize + rad,
        (src_x_m / dh).round() as usize + rad,
    );
    let rx = sx + (r / dh).round() as usize;
    let config = WaveConfig {
        nz,
        nx,
        nt,
        dt,
        dh,
        src_z: sz,
        src_x: sx,
        fpeak: f,
        vmin: c,
        layers: vec![],
        space_order: case.order,
        source_mode: SourceMode::Add,
        receivers: vec![(sz, rx)],
        ..WaveConfig::paper()
    };
    let mut sim = WaveSimulator::<Rayon, f64>::with_config(Rayon::new(), config);
    let start = std::time::Instant::now();
    sim.run().expect("runs");
    let seis = sim.seismogram().expect("recorded");
    let (mut e2, mut a2, mut peak) = (0.0, 0.0, 0.0f64);
    for it in 0..nt {
        let t = seis.time(it);
        let a = analytic(r, t, c, f, t0);
        let n = seis.get(it, 0).expect("sample");
        e2 += (n - a).powi(2);
        a2 += a * a;
        peak = peak.max(a.abs());
    }
    let err = (e2 / a2).sqrt();
    if verbose {
        eprintln!(
            "dh {dh} order {} cfl {} grid {nz}x{nx} nt {nt}: rel L2 error {err:.4e} peak {peak:.4e} ({:.2?})",
            case.order, case.cfl, start.elapsed()
        );
    }
    (err, peak)
}

// Geometry: c = 2000 m/s, 10 Hz Ricker (peak wavelength 200 m), receiver 400 m from the
// source, 0.5 s window; errors are relative L2 norms of the whole trace.

#[test]
fn additive_source_matches_the_analytic_2d_solution() {
    // Order 8, dh = 20 m (10 points per peak wavelength), CFL 0.1: measured 0.29 %.
    let (err, peak) = trace_error(
        &Case {
            dh: 20.0,
            order: 8,
            cfl: 0.1,
        },
        true,
    );
    assert!(err < 0.005, "relative L2 error {err:.3e} >= 0.5 %");
    // The analytic peak amplitude is ~0.055: the source scaling is physical, not arbitrary.
    assert!((0.05..0.06).contains(&peak), "{peak}");
    // The paper's order 4 on a finer grid: measured 0.24 %.
    let (err, _) = trace_error(
        &Case {
            dh: 10.0,
            order: 4,
            cfl: 0.1,
        },
        true,
    );
    assert!(err < 0.005, "relative L2 error {err:.3e} >= 0.5 %");
}

#[test]
fn error_falls_at_the_expected_rate_when_the_grid_is_refined() {
    // Small CFL, so the spatial error dominates: halving dh divides the error by ~2^order.
    // Order 2: measured 0.389 -> 0.0915 (ratio 4.3, rate 2.1).
    let coarse = trace_error(
        &Case {
            dh: 20.0,
            order: 2,
            cfl: 0.1,
        },
        true,
    )
    .0;
    let fine = trace_error(
        &Case {
            dh: 10.0,
            order: 2,
            cfl: 0.1,
        },
        true,
    )
    .0;
    let rate = (coarse / fine).log2();
    assert!((1.7..2.8).contains(&rate), "order 2: rate {rate:.2}");
    // Order 4: measured 0.0459 -> 0.0024 (ratio 19, rate 4.3).
    let coarse = trace_error(
        &Case {
            dh: 20.0,
            order: 4,
            cfl: 0.1,
        },
        true,
    )
    .0;
    let fine = trace_error(
        &Case {
            dh: 10.0,
            order: 4,
            cfl: 0.1,
        },
        true,
    )
    .0;
    let rate = (coarse / fine).log2();
    assert!((3.3..5.0).contains(&rate), "order 4: rate {rate:.2}");
}

#[test]
fn error_falls_when_the_order_is_raised() {
    // dh = 20 m, CFL 0.1: measured 0.389 (2), 0.0459 (4), 0.0075 (6), 0.0029 (8), where the
    // leapfrog's time error (~0.002 at this dt) starts to dominate.
    let errors: Vec<f64> = [2, 4, 6, 8]
        .iter()
        .map(|&order| {
            trace_error(
                &Case {
                    dh: 20.0,
                    order,
                    cfl: 0.1,
                },
                true,
            )
            .0
        })
        .collect();
    for (k, w) in errors.windows(2).enumerate() {
        assert!(
            w[1] < w[0] / 2.0,
            "order {} -> {}: {:?}",
            2 * k + 2,
            2 * k + 4,
            errors
        );
    }
}

#[test]
fn the_time_error_is_second_order() {
    // Order 16 makes the spatial error negligible; halving dt (CFL 0.2 -> 0.1 -> 0.05) should
    // divide the error by ~4.
    let e: Vec<f64> = [0.2, 0.1]
        .iter()
        .map(|&cfl| {
            trace_error(
                &Case {
                    dh: 20.0,
                    order: 16,
                    cfl,
                },
                true,
            )
            .0
        })
        .collect();
    let rate = (e[0] / e[1]).log2();
    assert!((1.5..2.6).contains(&rate), "rate {rate:.2} from {e:?}");
}
