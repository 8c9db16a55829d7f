//! Sources and receivers off the grid (Hicks' windowed sinc): the dot-product identity
//! with off-grid positions (2D and 3D, f64 and f32, every execution space); on-grid
//! positions give the grid-point operator's results bit for bit; a receiver half-way
//! between grid receivers records the quintic interpolation of their traces on a well-sampled
//! wave; a window leaving the interior is refused naming the position.

use ppstencil::solver::{Boundary, SourceMode, WaveOperator};
use ppstencil::{ExecutionSpace, MemSpaceHost, Real, ScalarField, Serial, WaveConfig};
use ppstencil_tests::{for_each_space, Rng};

/// `Σ a b` in f64.
fn dot<T: Real>(a: &[T], b: &[T]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.to_f64() * y.to_f64()).sum()
}

fn config_2d() -> WaveConfig {
    WaveConfig {
        nz: 24,
        nx: 30,
        nt: 40,
        dt: 0.001,
        dh: 10.0,
        src_z: 10,
        src_x: 12,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![],
        space_order: 4,
        absorb: 3,
        boundary: Boundary::Sponge,
        source_mode: SourceMode::Add,
        receivers: vec![(8, 20)],
        ..WaveConfig::paper()
    }
}

fn config_3d() -> WaveConfig {
    WaveConfig {
        nz: 12,
        ny: 14,
        nx: 16,
        nt: 30,
        dt: 0.0008,
        dh: 10.0,
        src_z: 5,
        src_y: 6,
        src_x: 7,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![],
        space_order: 2,
        absorb: 0,
        boundary: Boundary::Rigid,
        source_mode: SourceMode::Add,
        receivers_3d: vec![(5, 6, 8)],
        ..WaveConfig::paper()
    }
}

/// The relative dot-product difference with off-grid `source` and `receivers` (metres).
fn dot_off_grid<E: ExecutionSpace + Clone, T: Real, const D: usize>(
    space: &E,
    config: WaveConfig,
    shape: [usize; D],
    source: [f64; D],
    receivers: &[[f64; D]],
) -> f64
where
    ppstencil::solver::Dims<D>: ppstencil::solver::WaveKernels<D>,
{
    let mut rng = Rng::new(31 + D as u64);
    let n: usize = shape.iter().product();
    let v = ScalarField::<MemSpaceHost, T, D>::from_vec_shape(
        shape,
        rng.vec(n, 1800.0, 2600.0, T::lit),
    )
    .expect("model");
    let op = WaveOperator::<E, T, D>::with_velocity(space.clone(), config, &v).expect("op");
    let off = op.off_grid(source, receivers).expect("off grid");
    let m = rng.vec(op.steps(), -1.0, 1.0, T::lit);
    let fm = off.forward(&m).expect("forward");
    let rms = (dot(&fm, &fm) / fm.len() as f64).sqrt();
    assert!(rms > 0.0);
    let d: Vec<T> = fm
        .iter()
        .map(|&f| T::lit(rng.uniform(-1.0, 1.0) + f.to_f64() / rms))
        .collect();
    let fd = off.adjoint(&d).expect("adjoint");
    let (lhs, rhs) = (dot(&fm, &d), dot(&m, &fd));
    (lhs - rhs).abs() / lhs.abs().max(rhs.abs())
}

/// The dot-product identity off the grid, 2D (order 4, sponge) and 3D (order 2, rigid).
fn dot_product_off_grid<E: ExecutionSpace + Clone>(space: E) {
    let rec2 = [[83.0, 201.7], [128.6, 65.2], [150.0, 170.0]];
    let src2 = [95.3, 117.8];
    let r64 = dot_off_grid::<E, f64, 2>(&space, config_2d(), [24, 30], src2, &rec2);
    let r32 = dot_off_grid::<E, f32, 2>(&space, config_2d(), [24, 30], src2, &rec2);
    let rec3 = [[45.5, 62.0, 81.3], [58.0, 71.9, 44.4]];
    let src3 = [54.2, 67.1, 72.5];
    let s64 = dot_off_grid::<E, f64, 3>(&space, config_3d(), [12, 14, 16], src3, &rec3);
    let s32 = dot_off_grid::<E, f32, 3>(&space, config_3d(), [12, 14, 16], src3, &rec3);
    eprintln!("off-grid dot-product test: 2D {r64:.2e} (f64) {r32:.2e} (f32); 3D {s64:.2e} (f64) {s32:.2e} (f32)");
    assert!(r64 <= 1e-12 && s64 <= 1e-12, "{r64:e} {s64:e}");
    assert!(r32 <= 1e-5 && s32 <= 1e-5, "{r32:e} {s32:e}");
}

for_each_space!(dot_product_off_grid);

#[test]
fn on_grid_positions_give_the_grid_points_results() {
    let config = WaveConfig {
        receivers: vec![(8, 20), (15, 7)],
        ..config_2d()
    };
    let op = WaveOperator::<Serial, f64>::new(Serial, config).expect("op");
    let off = op
        .off_grid([100.0, 120.0], &[[80.0, 200.0], [150.0, 70.0]])
        .expect("on grid");
    let mut rng = Rng::new(4);
    let m = rng.vec(40, -1.0, 1.0, |x| x);
    let d = rng.vec(80, -1.0, 1.0, |x| x);
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    assert_eq!(
        bits(off.forward(&m).unwrap()),
        bits(op.forward(&m).unwrap())
    );
    assert_eq!(
        bits(off.adjoint(&d).unwrap()),
        bits(op.adjoint(&d).unwrap())
    );
}

#[test]
fn a_receiver_half_way_records_the_interpolated_wave() {
    // 20 points per wavelength at the peak frequency (2000 m/s, 10 Hz, 10 m): the quintic
    // (six-point Lagrange, weights (3, -25, 150, 150, -25, 3) / 256) interpolation of the
    // on-grid neighbours' traces is an independent estimate of the wave half-way.
    let config = WaveConfig {
        nz: 40,
        nx: 60,
        nt: 320,
        fpeak: 10.0,
        src_z: 20,
        src_x: 15,
        absorb: 8,
        receivers: vec![(20, 40)],
        ..config_2d()
    };
    let op = WaveOperator::<Serial, f64>::new(Serial, config).expect("op");
    let wavelet = op.source_wavelet([20, 15]).unwrap();
    let at = |x: f64| [200.0, x];
    let off = op
        .off_grid(
            at(150.0),
            &[
                at(380.0),
                at(390.0),
                at(400.0),
                at(410.0),
                at(420.0),
                at(430.0),
                at(405.0),
            ],
        )
        .unwrap();
    let t = off.forward(&wavelet).unwrap();
    let peak = t.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let (mut worst, mut linear) = (0.0f64, 0.0f64);
    for k in 0..320 {
        let r = &t[7 * k..7 * k + 7];
        let quintic = (3.0 * (r[0] + r[5]) - 25.0 * (r[1] + r[4]) + 150.0 * (r[2] + r[3])) / 256.0;
        worst = worst.max((r[6] - quintic).abs());
        linear = linear.max((r[6] - 0.5 * (r[2] + r[3])).abs());
    }
    eprintln!(
        "half-way receiver: |sinc - quintic| <= {:.2e} of the peak (|sinc - linear| {:.2e})",
        worst / peak,
        linear / peak
    );
    assert!(peak > 0.0);
    // Measured 2.4e-3 (the window's own error on the Ricker's upper frequencies, about 8
    // points per wavelength); linear interpolation is off by 1.2e-2.
    assert!(worst <= 5e-3 * peak, "{} of the peak", worst / peak);
    assert!(linear > 3.0 * worst, "the test must tell sinc from linear");
}

#[test]
fn a_window_outside_the_interior_is_refused() {
    let op = WaveOperator::<Serial, f64>::new(Serial, config_2d()).expect("op");
    let e = op
        .off_grid([100.0, 120.0], &[[80.0, 200.0], [30.5, 100.0]])
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("receiver 1 position") && e.contains("30.5"),
        "{e}"
    );
    assert!(op.off_grid([f64::NAN, 120.0], &[]).is_err());
}
