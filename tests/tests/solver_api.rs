//! The solver's options end to end: space orders, receivers, snapshots, velocity models,
//! double precision, and the DSL's grouping of floating-point sums.

use ppstencil::kernels::{fd_step_of_order, SPACE_ORDERS};
use ppstencil::model::VelocityModel;
use ppstencil::receivers::ReceiverLine;
use ppstencil::solver::{cfl_limit_for, Layer, SourceMode};
use ppstencil::{stencil, HostField, Rayon, ScalarField, Serial, WaveConfig, WaveSimulator};

fn small() -> WaveConfig {
    WaveConfig {
        nz: 60,
        nx: 70,
        nt: 80,
        dt: 0.0005,
        dh: 5.0,
        src_z: 30,
        src_x: 35,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![],
        ..WaveConfig::paper()
    }
}

#[test]
fn each_order_differentiates_polynomials_exactly_up_to_its_degree() {
    // With pold = 2p and kv2 = 1 the step returns the unscaled Laplacian of p. For
    // p = x^k + z^k (grid units) the order-N stencil is exact for k <= N + 1, giving
    // k (k-1) (x^(k-2) + z^(k-2)); for k = N + 2 it is not (calculus, not the code).
    let (nz, nx) = (40, 41);
    for order in SPACE_ORDERS {
        for (k, exact) in [(2, true), (order + 1, true), (order + 2, false)] {
            let (cz, cx) = (19.0, 20.0);
            let f = |iz: usize, ix: usize| -> f64 {
                let (z, x) = ((iz as f64 - cz) / 10.0, (ix as f64 - cx) / 10.0);
                x.powi(k as i32) + z.powi(k as i32)
            };
            let p: HostField<f64> = ScalarField::from_fn(nz, nx, f).expect("field");
            let pold: HostField<f64> =
                ScalarField::from_fn(nz, nx, |z, x| 2.0 * f(z, x)).expect("field");
            let kv2: HostField<f64> = ScalarField::from_fn(nz, nx, |_, _| 1.0).expect("field");
            let mut lap: HostField<f64> = ScalarField::new(nz, nx).expect("field");
            fd_step_of_order(&Serial, order, &mut lap, &p, &pold, &kv2).expect("runs");
            let (iz, ix) = (22, 24);
            let (z, x) = ((iz as f64 - cz) / 10.0, (ix as f64 - cx) / 10.0);
            let kf = k as f64;
            // Grid units: d/dx = 10 d/d(x/10), so d²/dx² = 1/100 d²/d(x/10)².
            let want = kf * (kf - 1.0) * (x.powi(k as i32 - 2) + z.powi(k as i32 - 2)) / 100.0;
            let got = lap[(iz, ix)];
            let ok = (got - want).abs() <= 1e-9 * want.abs().max(1.0);
            assert_eq!(ok, exact, "order {order}, x^{k}: got {got}, want {want}");
            // The border of radius order/2 stays zero.
            assert_eq!(lap[(order / 2 - 1, ix)], 0.0);
        }
    }
    assert!(fd_step_of_order(
        &Serial,
        5,
        &mut ScalarField::new(9, 9).unwrap(),
        &ScalarField::<_, f64>::new(9, 9).unwrap(),
        &ScalarField::new(9, 9).unwrap(),
        &ScalarField::new(9, 9).unwrap()
    )
    .is_err());
}

#[test]
fn cfl_limits_follow_the_order() {
    // 2 / sqrt(2 Σ|w|): order 2 has Σ|w| = 4 (1/sqrt 2); order 4 has 16/3 (0.6124).
    assert!((cfl_limit_for(2).unwrap() - 0.5f64.sqrt()).abs() < 1e-12);
    assert!((cfl_limit_for(4).unwrap() - 2.0 / (32.0f64 / 3.0).sqrt()).abs() < 1e-12);
    let mut last = 1.0;
    for order in SPACE_ORDERS {
        let l = cfl_limit_for(order).unwrap();
        // Σ|w| grows towards the spectral π², so the limit falls towards √2/π ≈ 0.450.
        assert!(
            l < last && l > 2.0f64.sqrt() / std::f64::consts::PI,
            "order {order}: {l}"
        );
        last = l;
    }
    // A run just above the order-8 limit is refused before any step, just below it runs.
    let limit = cfl_limit_for(8).unwrap();
    let mut c = WaveConfig {
        space_order: 8,
        nt: 5,
        ..small()
    };
    c.dt = 1.01 * limit * c.dh / c.vmin;
    let e = WaveSimulator::<Serial>::with_config(Serial, c.clone())
        .run()
        .unwrap_err()
        .to_string();
    assert!(e.contains("order-8 scheme"), "{e}");
    c.dt = 0.99 * limit * c.dh / c.vmin;
    WaveSimulator::<Serial>::with_config(Serial, c)
        .run()
        .expect("stable");
}

#[test]
fn receivers_record_the_wavefield_every_step() {
    let line: ReceiverLine = "10:5:65:15".parse().unwrap();
    let mut sim = WaveSimulator::<Rayon>::with_config(Rayon::new(), small());
    sim.add_receiver_line(line).add_receiver(30, 35);
    // Snapshots every 20 steps; the receivers' samples at those steps must equal them.
    sim.set_snapshot_every(Some(20));
    let mut frames = Vec::new();
    sim.run_with(
        |_, _| {},
        |step, p| {
            frames.push((step, p.as_slice().to_vec()));
            Ok(())
        },
    )
    .expect("runs");
    let seis = sim.seismogram().expect("recorded").clone();
    assert_eq!((seis.nt, seis.nrec), (80, 6));
    assert_eq!(
        seis.positions[..5],
        [
            [10, 0, 5],
            [10, 0, 20],
            [10, 0, 35],
            [10, 0, 50],
            [10, 0, 65]
        ]
    );
    assert_eq!(
        frames.iter().map(|f| f.0).collect::<Vec<_>>(),
        vec![20, 40, 60, 80]
    );
    for (step, frame) in &frames {
        for (r, &[z, _, x]) in seis.positions.iter().enumerate() {
            assert_eq!(seis.get(step - 1, r), Some(frame[z * 70 + x]));
        }
    }
    let last = sim.wavefield_host().unwrap();
    assert_eq!(seis.get(79, 2), Some(last[(10, 35)]));
    assert!(
        seis.trace(2).iter().any(|v| *v != 0.0),
        "the wave reached row 10"
    );
}

#[test]
fn a_snapshot_hook_error_stops_the_run() {
    let mut sim = WaveSimulator::<Serial>::with_config(
        Serial,
        WaveConfig {
            snapshot_every: Some(3),
            ..small()
        },
    );
    let mut calls = 0;
    let e = sim
        .run_with(
            |_, _| {},
            |_, _| {
                calls += 1;
                Err(ppstencil::Error::invalid("snapshot", "disk", "full"))
            },
        )
        .unwrap_err();
    assert_eq!(calls, 1);
    assert!(e.to_string().contains("disk"));
}

#[test]
fn velocity_model_with_layers_on_top() {
    let (nz, nx) = (50, 60);
    let values: Vec<f64> = (0..nz * nx)
        .map(|k| 1500.0 + (k / nx) as f64 * 10.0)
        .collect();
    let model = VelocityModel::new(nz, nx, values).unwrap();
    let mut c = WaveConfig {
        layers: vec![Layer {
            z0: 40,
            z1: 50,
            velocity: 3000.0,
        }],
        src_z: 20,
        src_x: 30,
        ..small()
    };
    c.set_velocity_model(model);
    assert_eq!((c.nz, c.nx), (50, 60));
    assert_eq!(c.vmax(), 3000.0);
    let v = c.velocity_model::<f64>().unwrap();
    assert_eq!(v[(10, 3)], 1600.0); // the model
    assert_eq!(v[(45, 3)], 3000.0); // the layer on top
    let mut sim = WaveSimulator::<Rayon>::with_config(Rayon::new(), c);
    sim.run().expect("runs");
    assert!(sim.wavefield_host().unwrap().max_abs() > 0.0);
}

#[test]
fn single_and_double_precision_agree() {
    let c = WaveConfig {
        space_order: 8,
        absorb: 10,
        source_mode: SourceMode::Add,
        receivers: vec![(30, 50)],
        ..small()
    };
    let mut s32 = WaveSimulator::<Rayon, f32>::with_config(Rayon::new(), c.clone());
    let mut s64 = WaveSimulator::<Rayon, f64>::with_config(Rayon::new(), c);
    s32.run().unwrap();
    s64.run().unwrap();
    let (a, b) = (
        s32.seismogram().unwrap().trace(0),
        s64.seismogram().unwrap().trace(0),
    );
    let peak = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(peak > 0.0);
    for (x, y) in a.iter().zip(&b) {
        assert!((f64::from(*x) - y).abs() < 1e-4 * peak, "{x} vs {y}");
    }
}

#[test]
fn the_paper_defaults_are_unchanged() {
    let c = WaveConfig::paper();
    assert_eq!(
        (c.space_order, c.absorb, c.source_mode),
        (4, 0, SourceMode::Set)
    );
    assert!(c.receivers.is_empty() && c.snapshot_every.is_none() && c.velocity.is_none());
    assert_eq!(c.source_delay(), 1.5 / 10.0);
}

stencil! {
    /// `a + (b + c)`, grouped as written.
    fn grouped_sum(o: out, a: in, b: in, c: in) {
        o[0, 0] = a[0, 0] + (b[0, 0] + c[0, 0]);
    }
}

#[test]
fn generated_code_keeps_the_grouping_of_sums() {
    // IEEE f64: 1 + (1e16 - 1e16) = 1, but (1 + 1e16) - 1e16 = 0.
    let one: HostField<f64> = ScalarField::from_fn(1, 1, |_, _| 1.0).unwrap();
    let big: HostField<f64> = ScalarField::from_fn(1, 1, |_, _| 1e16).unwrap();
    let neg: HostField<f64> = ScalarField::from_fn(1, 1, |_, _| -1e16).unwrap();
    let mut o: HostField<f64> = ScalarField::new(1, 1).unwrap();
    grouped_sum(&Serial, &mut o, &one, &big, &neg).unwrap();
    assert_eq!(o[(0, 0)], 1.0);
}

ppstencil::stencil! {
    /// One leapfrog step of the 1D wave equation, Courant number squared `c2`.
    fn leapfrog_1d(pnew: out, p: in, pold: in, c2: real) {
        pnew[0] = 2.0 * p[0] - pold[0] + c2 * (p[-1] - 2.0 * p[0] + p[1]);
    }
}

/// `TimeLevels::advance` runs a user's leapfrog loop one call per step and rotates the
/// levels right: 40 steps agree bit for bit with a hand loop over plain vectors; a failing
/// step leaves the levels unrotated.
#[test]
fn time_levels_rotate_a_users_leapfrog_loop_like_a_hand_loop() {
    let n = 41;
    let c2 = 0.36f64;
    let mut levels = ppstencil::TimeLevels::<ppstencil::MemSpaceHost, f64, 1>::zeros([n]).unwrap();
    // A pulse, zero on the border (which the stencil never writes, as in the hand loop).
    let mut start: Vec<f64> = (0..n)
        .map(|i| (-((i as f64 - 20.0) / 3.0).powi(2)).exp())
        .collect();
    start[0] = 0.0;
    start[n - 1] = 0.0;
    levels.current_mut().as_mut_slice().copy_from_slice(&start);
    levels.previous_mut().as_mut_slice().copy_from_slice(&start);
    let (mut pold, mut p) = (start.clone(), start);
    for _ in 0..40 {
        levels
            .advance(|next, now, before| leapfrog_1d(&Serial, next, now, before, c2))
            .unwrap();
        let mut pnew = vec![0.0; n];
        for i in 1..n - 1 {
            pnew[i] = 2.0 * p[i] - pold[i] + c2 * (p[i - 1] - 2.0 * p[i] + p[i + 1]);
        }
        pold = std::mem::replace(&mut p, pnew);
    }
    assert_eq!(levels.current().as_slice(), &p[..]);
    assert_eq!(levels.previous().as_slice(), &pold[..]);
    assert!(levels.current().max_abs() > 0.1);
    let before = levels.current().as_slice().to_vec();
    let failed = levels.advance(|_, _, _| -> ppstencil::Result<()> {
        Err(ppstencil::Error::invalid("step", "x", "a test failure"))
    });
    assert!(failed.is_err());
    assert_eq!(levels.current().as_slice(), &before[..]);
}
