//! The contract of `solver::adjoint`: the dot-product identity `<F m, d> = <m, F* d>` for
//! random wavelets `m` and random traces `d`, every even space order in 2D and the small
//! orders in 3D, rigid border and sponge, centred and off-centre sources, on every execution
//! space; the forward map against `WaveSimulator`; the settings without an adjoint refused;
//! the gradient's Taylor test (the remainder of the first-order expansion falls as h²); and
//! the monitor, which sees every time step of a call and stops it with its error.

use ppstencil::solver::{ricker_delayed, Boundary, Layer, SourceMode, Storage, WaveOperator};
use ppstencil::{
    Error, ExecutionSpace, MemSpaceHost, Real, ScalarField, Serial, StepKernels, WaveConfig,
    WaveSimulator,
};
use ppstencil_tests::{for_each_space, is_host, Rng};
use std::sync::{Arc, Mutex};

/// A host field of `D` dimensions.
type HostN<T, const D: usize> = ScalarField<MemSpaceHost, T, D>;

/// `Σ a b` accumulated in f64.
fn dot<T: Real>(a: &[T], b: &[T]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.to_f64() * y.to_f64()).sum()
}

/// The 2D problem: 24 x 30 cells, 40 steps, source at `src`, five receivers (the one at
/// (0, 3) lies in every order's rigid border, the one at (3, 26) in the border from order 8).
fn config_2d(order: usize, sponge: bool, src: (usize, usize)) -> WaveConfig {
    WaveConfig {
        nz: 24,
        nx: 30,
        nt: 40,
        dt: 0.001,
        dh: 10.0,
        src_z: src.0,
        src_x: src.1,
        fpeak: 20.0,
        vmin: 2000.0,
        layers: vec![],
        space_order: order,
        absorb: if sponge { 5 } else { 0 },
        boundary: if sponge {
            Boundary::Sponge
        } else {
            Boundary::Rigid
        },
        source_mode: SourceMode::Add,
        receivers: vec![(12, 15), (9, 10), (16, 22), (0, 3), (3, 26)],
        ..WaveConfig::paper()
    }
}

/// The 3D problem: 12 x 14 x 16 cells, 30 steps, source at `src`, four receivers (the one at
/// (0, 5, 5) in the rigid border).
fn config_3d(order: usize, sponge: bool, src: (usize, usize, usize)) -> WaveConfig {
    WaveConfig {
        nz: 12,
        ny: 14,
        nx: 16,
        nt: 30,
        dt: 0.0008,
        dh: 10.0,
        src_z: src.0,
        src_y: src.1,
        src_x: src.2,
        fpeak: 20.0,
        vmin: 2000.0,
        layers: vec![],
        space_order: order,
        absorb: if sponge { 3 } else { 0 },
        boundary: if sponge {
            Boundary::Sponge
        } else {
            Boundary::Rigid
        },
        source_mode: SourceMode::Add,
        receivers_3d: vec![(6, 7, 8), (5, 8, 10), (7, 5, 6), (0, 5, 5)],
        ..WaveConfig::paper()
    }
}

/// A random velocity model of `shape` between 1800 and 3000 m/s, so that `kv2` varies at
/// every point (`L K` and `K L` differ).
fn random_velocity<T: Real, const D: usize>(shape: [usize; D], rng: &mut Rng) -> HostN<T, D> {
    let n: usize = shape.iter().product();
    let values = rng.vec(n, 1800.0, 3000.0, T::lit);
    ScalarField::from_vec_shape(shape, values).expect("velocity model")
}

/// The relative difference `|<F m, d> - <m, F* d>| / max(|.|, |.|)` for a random `m` and a
/// random `d` of the operator of `config` on a random velocity model.
fn dot_test<E: ExecutionSpace + Clone, T: Real, const D: usize>(
    space: &E,
    config: WaveConfig,
    rng: &mut Rng,
) -> f64
where
    ppstencil::solver::Dims<D>: ppstencil::solver::WaveKernels<D>,
{
    let shape: [usize; D] = {
        let zyx = [config.nz, config.ny, config.nx];
        std::array::from_fn(|a| if D == 2 { [zyx[0], zyx[2]][a] } else { zyx[a] })
    };
    let v = random_velocity::<T, D>(shape, rng);
    let what = format!(
        "{}, order {}, {}D, source ({}, {}, {}), {:?} with {} cells",
        T::NAME,
        config.space_order,
        D,
        config.src_z,
        config.src_y,
        config.src_x,
        config.boundary,
        config.absorb
    );
    let op = WaveOperator::<E, T, D>::with_velocity(space.clone(), config, &v).expect(&what);
    let m = rng.vec(op.steps(), -1.0, 1.0, T::lit);
    let fm = op.forward(&m).expect("forward");
    // d: uniform noise on every sample plus F m scaled to unit rms, so that <F m, d> is
    // not the near-cancelling sum of an almost orthogonal pair (which would measure the
    // draw's conditioning, not the adjoint).
    let rms = (dot(&fm, &fm) / fm.len() as f64).sqrt();
    assert!(rms > 0.0, "{what}: the wave must reach a receiver");
    let d: Vec<T> = fm
        .iter()
        .map(|&f| T::lit(rng.uniform(-1.0, 1.0) + f.to_f64() / rms))
        .collect();
    let fd = op.adjoint(&d).expect("adjoint");
    let (lhs, rhs) = (dot(&fm, &d), dot(&m, &fd));
    let rel = (lhs - rhs).abs() / lhs.abs().max(rhs.abs());
    assert!(rel.is_finite() && lhs.abs() > 0.0, "{what}: {lhs} {rhs}");
    // The same difference against the Cauchy-Schwarz bound ‖F m‖ ‖d‖.
    let bound = (dot(&fm, &fm) * dot(&d, &d)).sqrt();
    assert!(
        (lhs - rhs).abs() <= tolerance::<T>() * bound,
        "{what}: {lhs} {rhs}"
    );
    rel
}

/// The tolerance of the dot-product test in `T`: 1e-12 in f64, 1e-5 in f32 (device
/// backends contract to FMA, which leaves the identity exact to the same rounding).
fn tolerance<T: Real>() -> f64 {
    if T::NAME == "f64" {
        1e-12
    } else {
        1e-5
    }
}

/// The dot-product identity in 2D at every even order 2..16, rigid and sponge, for a
/// centred and an off-centre source, in f64 and f32.
fn dot_product_2d_every_order<E: ExecutionSpace + Clone>(space: E) {
    let mut rng = Rng::new(2024);
    let (mut worst64, mut worst32) = (0.0f64, 0.0f64);
    for order in (2..=16).step_by(2) {
        for sponge in [false, true] {
            for src in [(12, 15), (9, 20)] {
                let rel = dot_test::<E, f64, 2>(&space, config_2d(order, sponge, src), &mut rng);
                assert!(
                    rel <= tolerance::<f64>(),
                    "f64 order {order} sponge {sponge} {src:?}: {rel:e}"
                );
                worst64 = worst64.max(rel);
                let rel = dot_test::<E, f32, 2>(&space, config_2d(order, sponge, src), &mut rng);
                assert!(
                    rel <= tolerance::<f32>(),
                    "f32 order {order} sponge {sponge} {src:?}: {rel:e}"
                );
                worst32 = worst32.max(rel);
            }
        }
    }
    eprintln!(
        "2D dot-product test: worst relative difference {worst64:.2e} (f64), {worst32:.2e} (f32)"
    );
}

/// The dot-product identity in 3D at orders 2, 4, 6 and 8, rigid and sponge, centred and
/// off-centre sources, in f64 and f32.
fn dot_product_3d_small_orders<E: ExecutionSpace + Clone>(space: E) {
    let mut rng = Rng::new(3033);
    let (mut worst64, mut worst32) = (0.0f64, 0.0f64);
    for order in [2, 4, 6, 8] {
        for sponge in [false, true] {
            for src in [(6, 7, 8), (5, 4, 11)] {
                let rel = dot_test::<E, f64, 3>(&space, config_3d(order, sponge, src), &mut rng);
                assert!(
                    rel <= tolerance::<f64>(),
                    "f64 order {order} sponge {sponge} {src:?}: {rel:e}"
                );
                worst64 = worst64.max(rel);
                let rel = dot_test::<E, f32, 3>(&space, config_3d(order, sponge, src), &mut rng);
                assert!(
                    rel <= tolerance::<f32>(),
                    "f32 order {order} sponge {sponge} {src:?}: {rel:e}"
                );
                worst32 = worst32.max(rel);
            }
        }
    }
    eprintln!(
        "3D dot-product test: worst relative difference {worst64:.2e} (f64), {worst32:.2e} (f32)"
    );
}

/// The forward map with the simulator's own wavelet records the simulator's seismogram (bit
/// for bit on host spaces, where both run with the config's numerics), with the sponge and
/// with the rigid border, in 2D and 3D, in f64 and f32.
fn forward_equals_the_simulator<E: ExecutionSpace + Clone>(space: E) {
    fn check<E: ExecutionSpace + Clone, T: Real, const D: usize>(space: &E, config: WaveConfig)
    where
        ppstencil::solver::Dims<D>: ppstencil::solver::WaveKernels<D>,
    {
        let config = WaveConfig {
            layers: vec![Layer {
                z0: 7,
                z1: config.nz,
                velocity: 2800.0,
            }],
            ..config
        };
        let mut sim = WaveSimulator::<E, T, D>::with_config(space.clone(), config.clone());
        sim.run().expect("simulator");
        let seismogram = sim.seismogram().expect("seismogram");
        // The additive source's term: the delayed Ricker scaled by dt² v_src² / dh^dims.
        let v_src = config.velocity_at_zyx([config.src_z, config.src_y, config.src_x]);
        let cell = config.dh.powi(D as i32);
        let scale = config.dt * config.dt * v_src * v_src / cell;
        let wavelet: Vec<T> =
            ricker_delayed(config.nt, config.dt, config.fpeak, config.source_delay())
                .into_iter()
                .map(|r| T::lit(scale * r))
                .collect();
        let op = WaveOperator::<E, T, D>::new(space.clone(), config).expect("operator");
        let traces = op.forward(&wavelet).expect("forward");
        assert_eq!(traces.len(), seismogram.data.len());
        let peak = traces.iter().fold(0.0f64, |a, t| a.max(t.to_f64().abs()));
        assert!(peak > 0.0, "the wave must reach a receiver");
        for (k, (a, b)) in traces.iter().zip(&seismogram.data).enumerate() {
            let (a, b) = (a.to_f64(), b.to_f64());
            if is_host::<E>() {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "{} sample {k}: {a} vs {b}",
                    T::NAME
                );
            } else {
                let tol = if T::NAME == "f64" { 1e-12 } else { 1e-5 };
                assert!(
                    (a - b).abs() <= tol * peak,
                    "{} sample {k}: {a} vs {b}",
                    T::NAME
                );
            }
        }
    }
    for sponge in [false, true] {
        check::<E, f64, 2>(&space, config_2d(6, sponge, (9, 20)));
        check::<E, f32, 2>(&space, config_2d(6, sponge, (9, 20)));
        check::<E, f64, 3>(&space, config_3d(4, sponge, (5, 4, 11)));
        check::<E, f32, 3>(&space, config_3d(4, sponge, (5, 4, 11)));
    }
}

/// The Taylor test of the gradient in f64: with `g` the gradient of `J(s)` with respect to
/// the squared slowness, `|J(s + h δs) - J(s) - h <g, δs>|` falls by about 100 when `h`
/// falls by 10, over three decades of `h`.
fn taylor<E: ExecutionSpace + Clone, const D: usize>(space: &E, config: WaveConfig)
where
    ppstencil::solver::Dims<D>: ppstencil::solver::WaveKernels<D>,
{
    let shape: [usize; D] = {
        let zyx = [config.nz, config.ny, config.nx];
        std::array::from_fn(|a| if D == 2 { [zyx[0], zyx[2]][a] } else { zyx[a] })
    };
    let n: usize = shape.iter().product();
    let mut rng = Rng::new(77 + D as u64);
    // The true model has a fast lens; the starting model is the background.
    let v_true = HostN::<f64, D>::from_shape_fn(shape, |i| {
        let r2: f64 = (0..D)
            .map(|a| {
                let c = shape[a] as f64 / 2.0;
                ((i[a] as f64 - c) / 3.0).powi(2)
            })
            .sum();
        2000.0 + 600.0 * (-r2).exp()
    })
    .expect("true model");
    let s0: Vec<f64> = vec![1.0 / (2000.0f64 * 2000.0); n];
    let ds: Vec<f64> = rng.vec(n, -0.05, 0.05, |x| x * s0[0]);
    let wavelet: Vec<f64> =
        ricker_delayed(config.nt, config.dt, config.fpeak, config.source_delay())
            .into_iter()
            .map(|r| r * 1e3)
            .collect();
    let model = |s: &[f64]| {
        let v: Vec<f64> = s.iter().map(|&s| 1.0 / s.sqrt()).collect();
        ScalarField::from_vec_shape(shape, v).expect("model")
    };
    let op = |v: &HostN<f64, D>| {
        WaveOperator::<E, f64, D>::with_velocity(space.clone(), config.clone(), v)
            .expect("operator")
    };
    let observed = op(&v_true).forward(&wavelet).expect("observed");
    let base = op(&model(&s0))
        .misfit_gradient(&wavelet, &observed)
        .expect("gradient");
    assert!(base.misfit > 0.0);
    let slope = dot(base.gradient.as_slice(), &ds);
    assert!(slope.abs() > 0.0);
    let misfit = |h: f64| {
        let s: Vec<f64> = s0.iter().zip(&ds).map(|(a, b)| a + h * b).collect();
        let traces = op(&model(&s)).forward(&wavelet).expect("forward");
        0.5 * traces
            .iter()
            .zip(&observed)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
    };
    let hs = [1.0, 0.1, 0.01, 0.001];
    let remainders: Vec<f64> = hs
        .iter()
        .map(|&h| (misfit(h) - base.misfit - h * slope).abs())
        .collect();
    let shown: Vec<String> = remainders.iter().map(|r| format!("{r:.3e}")).collect();
    eprintln!(
        "{D}D Taylor test: J = {:.4e}, <g, ds> = {slope:.4e}, remainders at h = 1, 0.1, 0.01, 0.001: {}",
        base.misfit,
        shown.join(", ")
    );
    for w in remainders.windows(2) {
        let ratio = w[0] / w[1];
        assert!(
            (60.0..160.0).contains(&ratio),
            "{D}D: the remainder must fall as h^2 (ratio ~100 per decade): {remainders:?}"
        );
    }
}

/// The gradient's Taylor test in 2D (order 8, sponge) and 3D (order 4, rigid border).
fn gradient_taylor_test<E: ExecutionSpace + Clone>(space: E) {
    taylor::<E, 2>(&space, config_2d(8, true, (9, 15)));
    taylor::<E, 3>(&space, config_3d(4, false, (4, 7, 8)));
}

/// The counts a monitor saw, and the operator of `config` on `space` with a monitor that
/// records each count and returns `Error::Stopped` at the count `stop` (`None`: never).
fn monitored<E: ExecutionSpace + Clone>(
    space: &E,
    config: &WaveConfig,
    stop: Option<usize>,
) -> (Arc<Mutex<Vec<usize>>>, WaveOperator<E, f64>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut op = WaveOperator::<E, f64>::new(space.clone(), config.clone()).expect("operator");
    let record = Arc::clone(&seen);
    op.set_monitor(move |k| {
        record.lock().expect("counts").push(k);
        match stop {
            Some(s) if k == s => Err(Error::Stopped {
                steps: k,
                reason: format!("the test stops at {s}"),
            }),
            _ => Ok(()),
        }
    });
    (seen, op)
}

/// A monitor sees the counts 1, 2, … of every time step of a call: `nt` for `forward` and
/// `adjoint`; for `misfit_gradient_with`, the forward sweep's `nt`, the adjoint sweep's `nt`
/// and, with checkpoints, the `recomputed_steps` of the replays, which an unmonitored call
/// reports. A monitor that fails at step `k` stops the call there with its own error, for
/// every `k`, in the first forward run, the adjoint sweep and the replays alike; a monitor
/// that lets the call finish leaves the result unchanged bit for bit.
fn monitor_counts_and_stops_the_gradient<E: ExecutionSpace + Clone>(space: E) {
    let config = config_2d(4, true, (12, 15));
    let nt = config.nt;
    let plain = WaveOperator::<E, f64>::new(space.clone(), config.clone()).expect("operator");
    let wavelet = plain.source_wavelet([12, 15]).expect("wavelet");
    let observed = Rng::new(5).vec(nt * plain.receivers(), -1e-3, 1e-3, |x| x);
    let (seen, op) = monitored(&space, &config, None);
    op.forward(&wavelet).expect("forward");
    op.adjoint(&observed).expect("adjoint");
    let all: Vec<usize> = (1..=nt).chain(1..=nt).collect();
    assert_eq!(*seen.lock().unwrap(), all, "forward, then adjoint");
    let bytes = 3 * 2 * plain.field_bytes();
    for storage in [Storage::Full, Storage::Checkpoints { bytes }] {
        let want = plain
            .misfit_gradient_with(&wavelet, &observed, storage)
            .expect("gradient");
        if storage != Storage::Full {
            assert!(want.recomputed_steps > 0, "the replays must run");
        }
        let total = 2 * nt + want.recomputed_steps;
        let (seen, op) = monitored(&space, &config, None);
        let got = op
            .misfit_gradient_with(&wavelet, &observed, storage)
            .expect("monitored gradient");
        assert_eq!(*seen.lock().unwrap(), (1..=total).collect::<Vec<_>>());
        assert_eq!(got.misfit.to_bits(), want.misfit.to_bits(), "{storage:?}");
        assert_eq!(
            got.gradient.as_slice(),
            want.gradient.as_slice(),
            "{storage:?}"
        );
        for k in 1..=total {
            let (seen, op) = monitored(&space, &config, Some(k));
            match op.misfit_gradient_with(&wavelet, &observed, storage) {
                Err(Error::Stopped { steps, reason }) => {
                    assert_eq!(steps, k, "{storage:?}");
                    assert_eq!(reason, format!("the test stops at {k}"));
                }
                Err(e) => panic!("{storage:?}, stop at {k}: another error: {e}"),
                Ok(_) => panic!("{storage:?}, stop at {k}: the call ran to the end"),
            }
            assert_eq!(seen.lock().unwrap().last(), Some(&k), "{storage:?}");
        }
    }
}

for_each_space!(
    dot_product_2d_every_order,
    dot_product_3d_small_orders,
    forward_equals_the_simulator,
    gradient_taylor_test,
    monitor_counts_and_stops_the_gradient,
);

/// The settings without an adjoint are refused, naming what to use instead; buffers of the
/// wrong length are errors naming the length.
#[test]
fn settings_without_an_adjoint_are_refused() {
    let refused = |c: WaveConfig, needle: &str| {
        let e = WaveOperator::<Serial, f64>::new(Serial, c)
            .err()
            .expect("must be refused")
            .to_string();
        assert!(e.contains(needle), "`{e}` should mention `{needle}`");
    };
    let base = config_2d(4, true, (12, 15));
    refused(
        WaveConfig {
            boundary: Boundary::Pml,
            ..base.clone()
        },
        "use Boundary::Sponge",
    );
    refused(
        WaveConfig {
            source_mode: SourceMode::Set,
            ..base.clone()
        },
        "use SourceMode::Add",
    );
    refused(
        WaveConfig {
            kernels: StepKernels::Split,
            ..base.clone()
        },
        "use StepKernels::Fused",
    );
    let e = WaveOperator::<Serial, f64, 3>::new(Serial, base.clone())
        .err()
        .expect("2D config, 3D operator")
        .to_string();
    assert!(e.contains("WaveOperator<E, T, 2>"), "{e}");
    let op = WaveOperator::<Serial, f64>::new(Serial, base).expect("operator");
    let e = op
        .forward(&[0.0; 39])
        .expect_err("short wavelet")
        .to_string();
    assert!(e.contains("39 values") && e.contains("nt = 40"), "{e}");
    let e = op
        .adjoint(&[0.0; 40])
        .expect_err("short traces")
        .to_string();
    assert!(e.contains("nt x receivers = 200"), "{e}");
}
