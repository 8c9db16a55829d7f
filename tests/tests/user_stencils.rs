//! Stencils a user writes with `stencil!`, run on every execution space compiled in and
//! compared with hand-written loops over the same formulas (in f64 on the host).

use ppstencil::{stencil, Error, ExecutionSpace, HostField, Real, ScalarField};
use ppstencil_tests::{for_each_space, Rng};

stencil! {
    /// One explicit step of the heat equation (radius 1).
    fn heat_step(unew: out, u: in, alpha: real) {
        unew[0, 0] = u[0, 0] + alpha * (u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0]);
    }

    /// Two outputs from one pass: the centred gradient.
    fn gradient(gx: out, gz: out, p: in, inv2h: real) {
        gx[0, 0] = (p[0, 1] - p[0, -1]) * inv2h;
        gz[0, 0] = (p[1, 0] - p[-1, 0]) * inv2h;
    }

    /// In-place update with `let`, sqrt and max (radius 0: every point).
    fn shrink(u: inout, g: in, rate: real) {
        let mag = sqrt(g[0, 0] * g[0, 0] + 1.0);
        u[0, 0] = max(u[0, 0] - rate * mag, 0.0);
    }

    /// Every built-in function, `let` chains, unary minus and an asymmetric radius-2 read.
    fn mixture(o: out, p: in, q: in) {
        let h = 0.5 * (p[0, -1] + p[0, 1]);
        let v = 0.5 * (p[-1, 0] + p[1, 0]);
        let t = min(abs(h), abs(v)) + exp(-p[0, 0]);
        o[0, 0] = t + sin(q[0, 0]) * cos(q[2, 0]) / (1.0 + q[0, -1] * q[0, -1]);
    }

    /// A point stencil with a radius: adds `w` times the vertical neighbours at (iz, ix).
    #[at(iz, ix)]
    fn kick(q: inout, p: in, w: real, iz: index, ix: index) {
        q[0, 0] = q[0, 0] + w * (p[-1, 0] + p[1, 0]);
    }
}

fn random<T: Real>(rng: &mut Rng, nz: usize, nx: usize, lo: f64, hi: f64) -> HostField<T> {
    HostField::from_vec(nz, nx, rng.vec(nz * nx, lo, hi, T::lit)).expect("field")
}

fn f64s<T: Real>(h: &HostField<T>) -> Vec<f64> {
    h.as_slice().iter().map(|v| v.to_f64()).collect()
}

fn dev<E: ExecutionSpace, T: Real>(h: &HostField<T>) -> ScalarField<E::Memory, T> {
    ScalarField::from_host(h).expect("copy")
}

fn host_of<E: ExecutionSpace, T: Real>(f: &ScalarField<E::Memory, T>) -> Vec<f64> {
    f64s(&f.to_host().expect("copy back"))
}

/// Relative tolerance for element type `T` (a few roundings of the formula).
fn tol<T: Real>() -> f64 {
    if T::NAME == "f32" {
        4e-6
    } else {
        1e-13
    }
}

fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rel * w.abs().max(1.0),
            "{what}: cell {k}: got {g}, want {w}"
        );
    }
}

fn heat<E: ExecutionSpace, T: Real>(space: &E, nz: usize, nx: usize) {
    let mut rng = Rng::new(1);
    let u: HostField<T> = random(&mut rng, nz, nx, -1.0, 1.0);
    let init: HostField<T> = random(&mut rng, nz, nx, 5.0, 6.0);
    let alpha = 0.2;
    let mut unew = dev::<E, T>(&init);
    heat_step(space, &mut unew, &dev::<E, T>(&u), T::lit(alpha)).expect("heat_step");
    let (uh, mut want) = (f64s(&u), f64s(&init));
    for iz in 1..nz - 1 {
        for ix in 1..nx - 1 {
            let c = uh[iz * nx + ix];
            let s = uh[(iz - 1) * nx + ix]
                + uh[(iz + 1) * nx + ix]
                + uh[iz * nx + ix - 1]
                + uh[iz * nx + ix + 1];
            want[iz * nx + ix] = c + alpha * (s - 4.0 * c);
        }
    }
    assert_close(
        &host_of::<E, T>(&unew),
        &want,
        tol::<T>(),
        &format!("heat_step {} {nz}x{nx}", T::NAME),
    );
}

/// The heat step: interior from the formula, border untouched; f32 and f64; a single-point
/// peak spreads with the textbook weights (1 - 4α at the centre, α beside it).
fn heat_step_matches_hand_loop<E: ExecutionSpace>(space: E) {
    for (nz, nx) in [(3, 3), (9, 14), (31, 5)] {
        heat::<E, f64>(&space, nz, nx);
        heat::<E, f32>(&space, nz, nx);
    }
    let mut u: HostField<f64> = ScalarField::new(7, 7).expect("field");
    u[(3, 3)] = 1.0;
    let mut out = ScalarField::<E::Memory, f64>::new(7, 7).expect("field");
    heat_step(&space, &mut out, &dev::<E, f64>(&u), 0.1).expect("runs");
    let out = out.to_host().expect("copy");
    assert!((out[(3, 3)] - 0.6).abs() < 1e-15 && (out[(2, 3)] - 0.1).abs() < 1e-15);
    assert_eq!(out[(1, 1)], 0.0);
}

/// Two outputs written in one pass, both equal to their hand loops.
fn two_outputs_match_hand_loops<E: ExecutionSpace>(space: E) {
    let (nz, nx) = (11, 17);
    let mut rng = Rng::new(2);
    let p: HostField<f64> = random(&mut rng, nz, nx, -3.0, 3.0);
    let mut gx = ScalarField::<E::Memory, f64>::new(nz, nx).expect("field");
    let mut gz = ScalarField::<E::Memory, f64>::new(nz, nx).expect("field");
    gradient(&space, &mut gx, &mut gz, &dev::<E, f64>(&p), 0.25).expect("gradient");
    let ph = f64s(&p);
    let (mut wx, mut wz) = (vec![0.0; nz * nx], vec![0.0; nz * nx]);
    for iz in 1..nz - 1 {
        for ix in 1..nx - 1 {
            wx[iz * nx + ix] = (ph[iz * nx + ix + 1] - ph[iz * nx + ix - 1]) * 0.25;
            wz[iz * nx + ix] = (ph[(iz + 1) * nx + ix] - ph[(iz - 1) * nx + ix]) * 0.25;
        }
    }
    assert_close(&host_of::<E, f64>(&gx), &wx, tol::<f64>(), "gx");
    assert_close(&host_of::<E, f64>(&gz), &wz, tol::<f64>(), "gz");
}

/// `inout` with `let`, sqrt and max, every point, f32 and f64.
fn inout_let_and_functions<E: ExecutionSpace>(space: E) {
    fn one<E: ExecutionSpace, T: Real>(space: &E) {
        let (nz, nx) = (6, 10);
        let mut rng = Rng::new(3);
        let u0: HostField<T> = random(&mut rng, nz, nx, -1.0, 4.0);
        let g: HostField<T> = random(&mut rng, nz, nx, -2.0, 2.0);
        let mut u = dev::<E, T>(&u0);
        shrink(space, &mut u, &dev::<E, T>(&g), T::lit(0.5)).expect("shrink");
        let want: Vec<f64> = f64s(&u0)
            .iter()
            .zip(f64s(&g))
            .map(|(u, g)| (u - 0.5 * (g * g + 1.0).sqrt()).max(0.0))
            .collect();
        let got = host_of::<E, T>(&u);
        assert_close(&got, &want, tol::<T>(), &format!("shrink {}", T::NAME));
        assert!(
            got.contains(&0.0) && got.iter().any(|&v| v > 0.0),
            "max clamps some cells"
        );
    }
    one::<E, f64>(&space);
    one::<E, f32>(&space);
}

/// min, abs, exp, sin, cos, unary minus and `let` chains; radius 2 from a single read.
fn every_builtin_function<E: ExecutionSpace>(space: E) {
    let (nz, nx) = (9, 8);
    let mut rng = Rng::new(4);
    let p: HostField<f64> = random(&mut rng, nz, nx, -2.0, 2.0);
    let q: HostField<f64> = random(&mut rng, nz, nx, -2.0, 2.0);
    let mut o = ScalarField::<E::Memory, f64>::new(nz, nx).expect("field");
    mixture(&space, &mut o, &dev::<E, f64>(&p), &dev::<E, f64>(&q)).expect("mixture");
    let (ph, qh) = (f64s(&p), f64s(&q));
    let at = |iz: usize, ix: usize| iz * nx + ix;
    let mut want = vec![0.0; nz * nx];
    // The largest offset is 2 (q[2, 0]), so the domain is rows and columns 2..n-2.
    for iz in 2..nz - 2 {
        for ix in 2..nx - 2 {
            let h = 0.5 * (ph[at(iz, ix - 1)] + ph[at(iz, ix + 1)]);
            let v = 0.5 * (ph[at(iz - 1, ix)] + ph[at(iz + 1, ix)]);
            let t = h.abs().min(v.abs()) + (-ph[at(iz, ix)]).exp();
            let d = 1.0 + qh[at(iz, ix - 1)] * qh[at(iz, ix - 1)];
            want[at(iz, ix)] = t + qh[at(iz, ix)].sin() * qh[at(iz + 2, ix)].cos() / d;
        }
    }
    assert_close(&host_of::<E, f64>(&o), &want, 1e-12, "mixture");
}

/// `#[at(iz, ix)]`: only that point changes; a point closer to the border than the radius,
/// or outside the grid, is an error naming the valid ranges, and writes nothing.
fn point_stencil_at_one_cell<E: ExecutionSpace>(space: E) {
    let (nz, nx) = (6, 7);
    let mut rng = Rng::new(5);
    let q0: HostField<f32> = random(&mut rng, nz, nx, -1.0, 1.0);
    let p: HostField<f32> = random(&mut rng, nz, nx, -1.0, 1.0);
    let (pd, mut q) = (dev::<E, f32>(&p), dev::<E, f32>(&q0));
    kick(&space, &mut q, &pd, 2.0, 3, 5).expect("one cell inside the border");
    let mut want = f64s(&q0);
    let ph = f64s(&p);
    want[3 * nx + 5] += 2.0 * (ph[2 * nx + 5] + ph[4 * nx + 5]);
    assert_close(&host_of::<E, f32>(&q), &want, tol::<f32>(), "kick");

    // The radius (1) applies in both directions, although the reads are vertical only.
    for (iz, ix) in [
        (0, 3),
        (5, 3),
        (6, 3),
        (3, 0),
        (3, 6),
        (2, 7),
        (usize::MAX, 3),
        (3, usize::MAX),
    ] {
        let e = kick(&space, &mut q, &pd, 2.0, iz, ix).expect_err("out of range");
        assert!(
            matches!(
                e,
                Error::PointOutOfRange {
                    kernel: "kick",
                    radius: 1,
                    ..
                }
            ),
            "({iz}, {ix}): {e:?}"
        );
        assert!(e.to_string().contains(&format!("({iz}, {ix})")), "{e}");
    }
    assert_close(
        &host_of::<E, f32>(&q),
        &want,
        tol::<f32>(),
        "rejected launches write nothing",
    );
}

for_each_space!(
    heat_step_matches_hand_loop,
    two_outputs_match_hand_loops,
    inout_let_and_functions,
    every_builtin_function,
    point_stencil_at_one_cell,
);

/// The metadata derived from the IR: radius, point domain, inputs and outputs in order.
#[test]
fn stencil_info_describes_user_stencils() {
    use ppstencil::launch::Stencil;
    assert_eq!(HeatStep::INFO.radius, 1);
    assert_eq!(HeatStep::INFO.outputs, ["unew"]);
    assert_eq!(HeatStep::INFO.inputs, ["u"]);
    assert_eq!(HeatStep::INFO.reals, ["alpha"]);
    assert_eq!(Gradient::INFO.outputs, ["gx", "gz"]);
    assert_eq!(Mixture::INFO.radius, 2);
    assert_eq!(Shrink::INFO.radius, 0);
    assert_eq!((Kick::INFO.point, HeatStep::INFO.point), (true, false));
    assert_eq!(Kick::INFO.indices, ["iz", "ix"]);
    assert!(HeatStep::INFO
        .source("serial")
        .is_some_and(|s| s.contains("fn row")));
}
