//! Generic backend tests, the paper's pattern: initialise on the host, copy into the execution
//! space's memory (`ScalarField::from_host` / `copy_from_host`), run, copy back (`to_host` /
//! `copy_to_host`), assert on the host. Each test is written once over `E: ExecutionSpace`
//! and instantiated for every space compiled in by `for_each_space!` at the bottom.
//!
//! Expected values come from hand calculation, from the formulas evaluated in `f64`, or from
//! the `Serial` backend (for the equivalence tests).

use ppstencil::kernels::{add_source, fd_kv2, fd_pxx, fd_pzz, fd_step_4, fd_time};
use ppstencil::{Error, ExecutionSpace, HostField, Real, ScalarField, Serial};
use ppstencil_tests::{for_each_space, is_host, Rng};

/// A value the kernels never write: cells outside a kernel's domain must keep it.
const SENTINEL: f64 = 9.0;

fn host<T: Real>(nz: usize, nx: usize, f: impl Fn(usize, usize) -> f64) -> HostField<T> {
    HostField::<T>::from_fn(nz, nx, |iz, ix| T::lit(f(iz, ix))).expect("host field")
}

fn random<T: Real>(rng: &mut Rng, nz: usize, nx: usize, lo: f64, hi: f64) -> HostField<T> {
    let data = rng.vec(nz * nx, lo, hi, T::lit);
    HostField::from_vec(nz, nx, data).expect("host field")
}

/// Copies a host field into `E`'s memory space (the paper's copyFromHost).
fn to_space<E: ExecutionSpace, T: Real>(h: &HostField<T>) -> ScalarField<E::Memory, T> {
    ScalarField::from_host(h).expect("copy to the space")
}

/// Copies a field of `E` back into a host vector (the paper's copyToHost).
fn back<E: ExecutionSpace, T: Real>(f: &ScalarField<E::Memory, T>) -> Vec<f64> {
    let mut v = vec![T::ZERO; f.len()];
    f.copy_to_host(&mut v).expect("copy to the host");
    v.into_iter().map(Real::to_f64).collect()
}

/// Exact on host backends; within `rel` of `want`'s magnitude (at least 1) on devices.
fn assert_value<E: ExecutionSpace>(got: f64, want: f64, what: &str) {
    if is_host::<E>() {
        assert_eq!(got, want, "{what} on {}", E::NAME);
    } else {
        let tol = 1e-6 * want.abs().max(1.0);
        assert!(
            (got - want).abs() <= tol,
            "{what} on {}: {got} vs {want}",
            E::NAME
        );
    }
}

/// The paper's unit-test input: a 5 × 6 field with ones at flat indices 2, 14, 17, 18, 21,
/// i.e. at (0, 2), (2, 2), (2, 5), (3, 0), (3, 3).
fn paper_field() -> HostField<f32> {
    let mut p: HostField<f32> = ScalarField::new(5, 6).expect("field");
    for k in [2, 14, 17, 18, 21] {
        p.as_mut_slice()[k] = 1.0;
    }
    p
}

fn transpose(p: &HostField<f32>) -> HostField<f32> {
    HostField::from_fn(p.nx(), p.nz(), |iz, ix| p[(ix, iz)]).expect("field")
}

/// `fd_pxx` or `fd_pzz` on execution space `E`.
type Derivative<E> = fn(
    &E,
    &mut ScalarField<<E as ExecutionSpace>::Memory, f32>,
    &ScalarField<<E as ExecutionSpace>::Memory, f32>,
) -> ppstencil::Result<()>;

/// Runs a derivative kernel on `p` with a sentinel-filled output and checks every cell:
/// `expected` lists the domain's values, every other cell must still hold the sentinel.
fn check_derivative<E: ExecutionSpace>(
    space: &E,
    kernel: Derivative<E>,
    p: &HostField<f32>,
    expected: &[((usize, usize), f64)],
    what: &str,
) {
    let [nz, nx] = p.shape();
    let p_dev = to_space::<E, f32>(p);
    let mut out = to_space::<E, f32>(&host(nz, nx, |_, _| SENTINEL));
    kernel(space, &mut out, &p_dev).expect("kernel runs");
    let got = out.to_host().expect("copy back");
    for iz in 0..nz {
        for ix in 0..nx {
            let want = expected
                .iter()
                .find(|(at, _)| *at == (iz, ix))
                .map_or(SENTINEL, |(_, v)| *v);
            assert_value::<E>(
                got[(iz, ix)] as f64,
                want,
                &format!("{what} at ({iz}, {ix})"),
            );
        }
    }
}

// c2·p[-2] + c1·p[-1] + c0·p[0] + c1·p[1] + c2·p[2] with c0 = -5/2, c1 = 4/3, c2 = -1/12,
// evaluated by hand on the paper's field (rows 2..3, columns 2..4 are the whole domain).
const FOUR_THIRDS_MINUS_TWELFTH: f64 = (4.0f32 / 3.0 - 1.0f32 / 12.0) as f64;

/// The paper's fd_pxx unit test: -2.5 at flat index 14, 4/3 - 1/12 at 15, nothing else.
/// Row 2 is [0, 0, 1, 0, 0, 1]: at (2,2) only the centre is 1 → -5/2; at (2,3) the left
/// neighbour (4/3) and the +2 neighbour (-1/12) are 1.
fn fd_pxx_paper_unit_test<E: ExecutionSpace>(space: E) {
    check_derivative(
        &space,
        fd_pxx::<E, f32>,
        &paper_field(),
        &[((2, 2), -2.5), ((2, 3), FOUR_THIRDS_MINUS_TWELFTH)],
        "fd_pxx",
    );
}

/// fd_pzz on the paper's field: at (2,2) the column is [1, 0, 1, 0, 0] → -1/12 - 5/2;
/// at (2,3) the column is [0, 0, 0, 1, 0] → 4/3.
fn fd_pzz_on_the_paper_field<E: ExecutionSpace>(space: E) {
    check_derivative(
        &space,
        fd_pzz::<E, f32>,
        &paper_field(),
        &[
            ((2, 2), (-1.0f32 / 12.0 - 2.5) as f64),
            ((2, 3), (4.0f32 / 3.0) as f64),
        ],
        "fd_pzz",
    );
}

/// The transposed unit test: on the 6 × 5 transpose, fd_pzz gives what fd_pxx gave
/// (-2.5 at (2,2), 4/3 - 1/12 at (3,2)) and fd_pxx what fd_pzz gave.
fn transposed_paper_unit_tests<E: ExecutionSpace>(space: E) {
    let t = transpose(&paper_field());
    check_derivative(
        &space,
        fd_pzz::<E, f32>,
        &t,
        &[((2, 2), -2.5), ((3, 2), FOUR_THIRDS_MINUS_TWELFTH)],
        "fd_pzz (transposed)",
    );
    check_derivative(
        &space,
        fd_pxx::<E, f32>,
        &t,
        &[
            ((2, 2), (-1.0f32 / 12.0 - 2.5) as f64),
            ((3, 2), (4.0f32 / 3.0) as f64),
        ],
        "fd_pxx (transposed)",
    );
}

/// The 4th-order second difference is exact for polynomials of degree <= 5 (its error term
/// is h⁴/90 · f⁽⁶⁾): p = x⁵ + x²z² + z⁴ - 3x³ gives pxx = 20x³ + 2z² - 18x and
/// pzz = 2x² + 12z² (grid spacing 1), up to rounding.
fn derivatives_are_exact_on_polynomials<E: ExecutionSpace>(space: E) {
    polynomial::<E, f64>(&space);
    polynomial::<E, f32>(&space);
}

fn polynomial<E: ExecutionSpace, T: Real>(space: &E) {
    let (nz, nx) = (9, 11);
    let p = |z: f64, x: f64| x.powi(5) + x * x * z * z + z.powi(4) - 3.0 * x.powi(3);
    let pxx_exact = |z: f64, x: f64| 20.0 * x.powi(3) + 2.0 * z * z - 18.0 * x;
    let pzz_exact = |z: f64, x: f64| 2.0 * x * x + 12.0 * z * z;
    let h = host::<T>(nz, nx, |iz, ix| p(iz as f64, ix as f64));
    let scale = h
        .as_slice()
        .iter()
        .map(|v| v.to_f64().abs())
        .fold(0.0, f64::max);
    let eps = if T::NAME == "f32" {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let tol = 16.0 * eps * scale;
    let d = to_space::<E, T>(&h);
    let mut pxx = ScalarField::<E::Memory, T>::new(nz, nx).expect("field");
    let mut pzz = ScalarField::<E::Memory, T>::new(nz, nx).expect("field");
    fd_pxx(space, &mut pxx, &d).expect("fd_pxx");
    fd_pzz(space, &mut pzz, &d).expect("fd_pzz");
    let (gx, gz) = (back::<E, T>(&pxx), back::<E, T>(&pzz));
    for iz in 2..nz - 2 {
        for ix in 2..nx - 2 {
            let (z, x) = (iz as f64, ix as f64);
            let k = iz * nx + ix;
            assert!(
                (gx[k] - pxx_exact(z, x)).abs() <= tol,
                "{} pxx({iz},{ix}) = {} vs {}",
                T::NAME,
                gx[k],
                pxx_exact(z, x)
            );
            assert!(
                (gz[k] - pzz_exact(z, x)).abs() <= tol,
                "{} pzz({iz},{ix}) = {} vs {}",
                T::NAME,
                gz[k],
                pzz_exact(z, x)
            );
        }
    }
}

/// fd_time over every point (border included): pnew = 2p - pold + dtdh2 v² (pxx + pzz),
/// evaluated in f64 from the same inputs; plus one value by hand.
fn fd_time_follows_the_leapfrog_formula<E: ExecutionSpace>(space: E) {
    // By hand: 2·1 - 0.5 + 0.1·2²·(0.25 + 0.5) = 1.8.
    let one = |v: f64| to_space::<E, f64>(&host(1, 1, |_, _| v));
    let mut pnew = one(0.0);
    fd_time(
        &space,
        &mut pnew,
        &one(1.0),
        &one(0.5),
        &one(2.0),
        &one(0.25),
        &one(0.5),
        0.1,
    )
    .expect("fd_time on 1 x 1");
    assert!((back::<E, f64>(&pnew)[0] - 1.8).abs() < 1e-15);

    let mut rng = Rng::new(7);
    let (nz, nx) = (6, 9);
    let fields: Vec<HostField<f32>> = (0..5)
        .map(|i| {
            if i == 2 {
                random(&mut rng, nz, nx, 1500.0, 4500.0)
            } else {
                random(&mut rng, nz, nx, -1.0, 1.0)
            }
        })
        .collect();
    let [p, pold, v, pxx, pzz] = [0, 1, 2, 3, 4].map(|i| to_space::<E, f32>(&fields[i]));
    let dtdh2 = 1.1e-8f32;
    let mut pnew = to_space::<E, f32>(&host(nz, nx, |_, _| SENTINEL));
    fd_time(&space, &mut pnew, &p, &pold, &v, &pxx, &pzz, dtdh2).expect("fd_time");
    let got = back::<E, f32>(&pnew);
    let h: Vec<&[f32]> = fields.iter().map(|f| f.as_slice()).collect();
    for k in 0..nz * nx {
        let [p, pold, v, pxx, pzz] = [0, 1, 2, 3, 4].map(|i| h[i][k] as f64);
        let lap = dtdh2 as f64 * v * v * (pxx + pzz);
        let want = 2.0 * p - pold + lap;
        let scale = 2.0 * p.abs() + pold.abs() + lap.abs();
        assert!(
            (got[k] - want).abs() <= 4.0 * f32::EPSILON as f64 * scale,
            "point {k}: {} vs {want}",
            got[k]
        );
    }
}

/// fd_kv2 over every point: kv2 = dtdh2 · v².
fn fd_kv2_is_dtdh2_v_squared<E: ExecutionSpace>(space: E) {
    let mut rng = Rng::new(11);
    let vh: HostField<f32> = random(&mut rng, 5, 7, 1500.0, 4800.0);
    let mut kv2 = to_space::<E, f32>(&host(5, 7, |_, _| SENTINEL));
    let dtdh2 = (0.0002f32 / 3.0) * (0.0002f32 / 3.0);
    fd_kv2(&space, &mut kv2, &to_space::<E, f32>(&vh), dtdh2).expect("fd_kv2");
    for (got, v) in back::<E, f32>(&kv2).into_iter().zip(vh.as_slice()) {
        let want = dtdh2 as f64 * (*v as f64) * (*v as f64);
        assert!(
            (got - want).abs() <= 3.0 * f32::EPSILON as f64 * want,
            "{got} vs {want}"
        );
    }
}

/// add_source sets (not adds) one value and touches nothing else, on any point of the grid
/// (its radius is 0, so corners are valid too).
fn add_source_sets_one_point_only<E: ExecutionSpace>(space: E) {
    let mut rng = Rng::new(3);
    let (nz, nx) = (7, 8);
    let before: HostField<f32> = random(&mut rng, nz, nx, -1.0, 1.0);
    let mut p = to_space::<E, f32>(&before);
    let mut expect = before.as_slice().to_vec();
    for (iz, ix, value) in [
        (3, 4, 0.75f32),
        (3, 4, -0.25),
        (0, 0, 2.0),
        (nz - 1, nx - 1, 3.0),
    ] {
        add_source(&space, &mut p, value, iz, ix).expect("point inside the grid");
        expect[iz * nx + ix] = value;
        let got = back::<E, f32>(&p);
        for (k, (g, w)) in got.iter().zip(&expect).enumerate() {
            assert_eq!(
                *g, *w as f64,
                "cell {k} after setting ({iz}, {ix}) = {value}"
            );
        }
    }
}

/// fd_kv2 + fd_step_4 equals fd_pzz, fd_pxx, fd_time in sequence bit for bit on the domain;
/// with a zero border (as in the simulation) on the whole field.
fn fused_step_equals_split_kernels_bitwise<E: ExecutionSpace>(space: E) {
    for (nz, nx, zero_border) in [
        (5, 5, false),
        (23, 31, false),
        (23, 31, true),
        (40, 9, true),
    ] {
        let mut rng = Rng::new((nz * 1000 + nx) as u64);
        let mut p: HostField<f32> = random(&mut rng, nz, nx, -1.0, 1.0);
        let mut pold: HostField<f32> = random(&mut rng, nz, nx, -1.0, 1.0);
        let v: HostField<f32> = random(&mut rng, nz, nx, 1500.0, 4800.0);
        if zero_border {
            for f in [&mut p, &mut pold] {
                for iz in 0..nz {
                    for ix in 0..nx {
                        if iz < 2 || ix < 2 || iz >= nz - 2 || ix >= nx - 2 {
                            f[(iz, ix)] = 0.0;
                        }
                    }
                }
            }
        }
        let (p, pold, v) = (
            to_space::<E, f32>(&p),
            to_space::<E, f32>(&pold),
            to_space::<E, f32>(&v),
        );
        let dtdh2 = (0.0005f32 / 5.0) * (0.0005f32 / 5.0);
        let zeros = || ScalarField::<E::Memory, f32>::new(nz, nx).expect("field");
        let (mut pxx, mut pzz, mut split, mut kv2, mut fused) =
            (zeros(), zeros(), zeros(), zeros(), zeros());
        fd_pzz(&space, &mut pzz, &p).expect("fd_pzz");
        fd_pxx(&space, &mut pxx, &p).expect("fd_pxx");
        fd_time(&space, &mut split, &p, &pold, &v, &pxx, &pzz, dtdh2).expect("fd_time");
        fd_kv2(&space, &mut kv2, &v, dtdh2).expect("fd_kv2");
        fd_step_4(&space, &mut fused, &p, &pold, &kv2).expect("fd_step_4");
        let (s, f) = (back::<E, f32>(&split), back::<E, f32>(&fused));
        for iz in 0..nz {
            for ix in 0..nx {
                let inside = iz >= 2 && ix >= 2 && iz < nz - 2 && ix < nx - 2;
                if inside || zero_border {
                    let k = iz * nx + ix;
                    assert_eq!(
                        s[k].to_bits(),
                        f[k].to_bits(),
                        "{nz} x {nx} at ({iz}, {ix}): split {} fused {}",
                        s[k],
                        f[k]
                    );
                }
            }
        }
    }
}

/// Every acoustic kernel on `E` equals `Serial` on random data, for grids whose rows and
/// columns do not divide into chunks evenly: bit for bit on the host, within rounding on a
/// device. Output fields start random, so cells outside the domain are compared too.
fn kernels_match_serial_on_uneven_grids<E: ExecutionSpace>(space: E) {
    for (nz, nx) in [(5, 5), (7, 13), (37, 101), (130, 7)] {
        match_serial::<E, f32>(&space, nz, nx);
        match_serial::<E, f64>(&space, nz, nx);
    }
}

fn match_serial<E: ExecutionSpace, T: Real>(space: &E, nz: usize, nx: usize) {
    let mut rng = Rng::new((nz * 7919 + nx) as u64);
    let hosts: Vec<HostField<T>> = (0..6)
        .map(|i| {
            if i == 2 {
                random(&mut rng, nz, nx, 1500.0, 4800.0)
            } else {
                random(&mut rng, nz, nx, -1.0, 1.0)
            }
        })
        .collect();
    let out0: HostField<T> = random(&mut rng, nz, nx, -5.0, 5.0);
    let dtdh2 = T::lit(1.7e-8);
    let value = T::lit(0.625);
    let (sz, sx) = (nz / 2, nx / 3);

    // Runs one kernel on any space: inputs are `hosts` (p, pold, v, pxx, pzz, kv2), the
    // output starts as `out0`; returns the output on the host.
    fn run_on<F: ExecutionSpace, T: Real>(
        space: &F,
        which: &str,
        hosts: &[HostField<T>],
        out0: &HostField<T>,
        (dtdh2, value, sz, sx): (T, T, usize, usize),
    ) -> Vec<T> {
        let d: Vec<ScalarField<F::Memory, T>> = hosts
            .iter()
            .map(|h| ScalarField::from_host(h).expect("copy"))
            .collect();
        let mut out: ScalarField<F::Memory, T> = ScalarField::from_host(out0).expect("copy");
        let r = match which {
            "add_source" => add_source(space, &mut out, value, sz, sx),
            "fd_pxx" => fd_pxx(space, &mut out, &d[0]),
            "fd_pzz" => fd_pzz(space, &mut out, &d[0]),
            "fd_time" => fd_time(space, &mut out, &d[0], &d[1], &d[2], &d[3], &d[4], dtdh2),
            "fd_kv2" => fd_kv2(space, &mut out, &d[2], dtdh2),
            "fd_step_4" => fd_step_4(space, &mut out, &d[0], &d[1], &d[5]),
            other => panic!("unknown kernel {other}"),
        };
        r.unwrap_or_else(|e| panic!("{which} on {}: {e}", F::NAME));
        let mut v = vec![T::ZERO; out.len()];
        out.copy_to_host(&mut v).expect("copy back");
        v
    }

    let args = (dtdh2, value, sz, sx);
    for which in [
        "add_source",
        "fd_pxx",
        "fd_pzz",
        "fd_time",
        "fd_kv2",
        "fd_step_4",
    ] {
        let want = run_on(&Serial, which, &hosts, &out0, args);
        let got = run_on(space, which, &hosts, &out0, args);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let (g, w) = (g.to_f64(), w.to_f64());
            if is_host::<E>() {
                assert!(
                    g.to_bits() == w.to_bits(),
                    "{which} {} {nz} x {nx} cell {k}: {} gives {g}, serial {w}",
                    T::NAME,
                    E::NAME
                );
            } else {
                assert!(
                    (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                    "{which} {} {nz} x {nx} cell {k}: {} gives {g}, serial {w}",
                    T::NAME,
                    E::NAME
                );
            }
        }
    }
}

/// Memory-space operations: host → space → host is the identity, `copy_from` copies within
/// the space, `swap` exchanges contents, `copy_from_host` overwrites.
fn memory_round_trips<E: ExecutionSpace>(space: E) {
    let _ = space;
    let mut rng = Rng::new(5);
    let a: HostField<f64> = random(&mut rng, 4, 9, -1e6, 1e6);
    let b: HostField<f64> = random(&mut rng, 4, 9, -1.0, 1.0);
    let mut da = to_space::<E, f64>(&a);
    let mut db = to_space::<E, f64>(&b);
    assert_eq!(da.to_host().expect("to_host").as_slice(), a.as_slice());
    assert_eq!(da.shape(), [4, 9]);
    da.swap(&mut db);
    assert_eq!(back::<E, f64>(&da), b.as_slice());
    assert_eq!(back::<E, f64>(&db), a.as_slice());
    da.copy_from(&db).expect("same shape");
    assert_eq!(back::<E, f64>(&da), a.as_slice());
    da.copy_from_host(b.as_slice()).expect("right length");
    assert_eq!(back::<E, f64>(&da), b.as_slice());
    let fresh = ScalarField::<E::Memory, f32>::new(3, 3).expect("field");
    assert_eq!(
        back::<E, f32>(&fresh),
        vec![0.0; 9],
        "new fields are zero-filled"
    );
}

/// Fields of different shapes in one launch: the error names both fields and both shapes.
fn shape_mismatch_names_both_fields<E: ExecutionSpace>(space: E) {
    let f = |nz, nx| ScalarField::<E::Memory, f32>::new(nz, nx).expect("field");
    let mut pnew = f(6, 6);
    let e = fd_time(
        &space,
        &mut pnew,
        &f(6, 6),
        &f(6, 6),
        &f(6, 7),
        &f(6, 6),
        &f(6, 6),
        1e-8,
    )
    .expect_err("v has another shape");
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                kernel: "fd_time",
                first: "pnew",
                field: "v",
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    for needle in ["fd_time", "`v` is 6 x 7", "`pnew` is 6 x 6", "same shape"] {
        assert!(msg.contains(needle), "`{msg}` should contain `{needle}`");
    }
    let e = fd_pxx(&space, &mut pnew, &f(7, 6)).expect_err("p has another shape");
    assert!(
        e.to_string().contains("`p` is 7 x 6 but `pxx` is 6 x 6"),
        "{e}"
    );
}

/// A grid smaller than 2·radius + 1 in either dimension is an error naming the radius and
/// the minimum; radius-0 kernels accept a 1 × 1 grid.
fn grid_too_small_for_the_radius<E: ExecutionSpace>(space: E) {
    let f = |nz, nx| ScalarField::<E::Memory, f32>::new(nz, nx).expect("field");
    for (nz, nx) in [(4, 9), (9, 4), (1, 1)] {
        let mut out = f(nz, nx);
        let e = fd_pxx(&space, &mut out, &f(nz, nx)).expect_err("too small for radius 2");
        assert!(
            matches!(
                e,
                Error::GridTooSmall {
                    radius: 2,
                    min: 5,
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        for needle in ["fd_pxx", "radius 2", &format!("{nz} x {nx}"), "at least 5"] {
            assert!(msg.contains(needle), "`{msg}` should contain `{needle}`");
        }
        let e = fd_step_4(&space, &mut out, &f(nz, nx), &f(nz, nx), &f(nz, nx))
            .expect_err("fd_step_4 too");
        assert!(matches!(e, Error::GridTooSmall { .. }), "{e:?}");
    }
    let mut pnew = f(5, 5);
    fd_pzz(&space, &mut pnew, &f(5, 5)).expect("5 x 5 is the smallest grid for radius 2");
    let mut one = f(1, 1);
    fd_kv2(&space, &mut one, &f(1, 1), 1.0).expect("radius 0 runs on 1 x 1");
}

/// add_source outside the grid is an error naming the point and the valid ranges (no panic,
/// no write); inside, border cells included, it succeeds.
fn add_source_point_out_of_range<E: ExecutionSpace>(space: E) {
    let (nz, nx) = (5, 6);
    let mut p = to_space::<E, f32>(&host(nz, nx, |_, _| 1.0));
    for (iz, ix) in [(5, 0), (0, 6), (5, 6), (usize::MAX, 0), (0, usize::MAX)] {
        let e = add_source(&space, &mut p, 4.0, iz, ix).expect_err("outside the grid");
        assert!(
            matches!(
                e,
                Error::PointOutOfRange {
                    kernel: "add_source",
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        for needle in [
            format!("({iz}, {ix})"),
            "rows 0..5".into(),
            "columns 0..6".into(),
        ] {
            assert!(msg.contains(&needle), "`{msg}` should contain `{needle}`");
        }
    }
    assert!(
        back::<E, f32>(&p).iter().all(|&v| v == 1.0),
        "a rejected launch writes nothing"
    );
    for (iz, ix) in [(0, 0), (4, 5), (0, 5), (2, 3)] {
        add_source(&space, &mut p, 4.0, iz, ix).expect("inside the grid, border included");
    }
}

/// Copies with a host buffer of the wrong length are errors naming both lengths.
fn copies_with_the_wrong_length<E: ExecutionSpace>(space: E) {
    let _ = space;
    let mut f = ScalarField::<E::Memory, f32>::new(3, 4).expect("field");
    let e = f
        .copy_from_host(&[1.0; 11])
        .expect_err("11 elements for 12");
    assert!(
        matches!(
            e,
            Error::SizeMismatch {
                expected: 12,
                found: 11,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("copy_from_host: expected 12 elements, found 11"),
        "{e}"
    );
    let mut big = [0.0f32; 13];
    let e = f.copy_to_host(&mut big).expect_err("13 elements for 12");
    assert!(
        e.to_string()
            .contains("copy_to_host: expected 12 elements, found 13"),
        "{e}"
    );
    let other = ScalarField::<E::Memory, f32>::new(4, 3).expect("field");
    let e = f.copy_from(&other).expect_err("4 x 3 into 3 x 4");
    assert!(
        e.to_string().contains("4 x 3") && e.to_string().contains("3 x 4"),
        "{e}"
    );
    let e = ScalarField::<E::Memory, f32>::new(0, 4).expect_err("empty field");
    assert!(
        e.to_string().contains("0 x 4") && e.to_string().contains("at least 1"),
        "{e}"
    );
}

/// `launch_in` computes exactly the full launch's values inside the rectangle and leaves every
/// other cell alone; a rectangle outside the domain is an error.
fn launch_in_computes_only_the_rectangle<E: ExecutionSpace>(space: E) {
    use ppstencil::kernels::FdPxx;
    use ppstencil::launch::launch_in;
    let (nz, nx) = (37, 101);
    let mut rng = Rng::new(7);
    let p: HostField<f32> = random(&mut rng, nz, nx, -1.0, 1.0);
    let mut full: HostField<f32> = ScalarField::new(nz, nx).expect("field");
    fd_pxx(&Serial, &mut full, &p).expect("serial fd_pxx");

    let dp = to_space::<E, f32>(&p);
    let mut out = to_space::<E, f32>(&host(nz, nx, |_, _| SENTINEL));
    let (rows, cols) = (5..20, 3..50);
    launch_in::<FdPxx, E, f32>(
        &space,
        rows.clone(),
        cols.clone(),
        &mut [&mut out],
        &[&dp],
        &[],
    )
    .expect("launch_in");
    let got = back::<E, f32>(&out);
    for iz in 0..nz {
        for ix in 0..nx {
            let want = if rows.contains(&iz) && cols.contains(&ix) {
                full[(iz, ix)].to_f64()
            } else {
                SENTINEL
            };
            assert_value::<E>(got[iz * nx + ix], want, &format!("fd_pxx at ({iz}, {ix})"));
        }
    }
    // Columns 0..2 are outside fd_pxx's domain (radius 2).
    let e = launch_in::<FdPxx, E, f32>(&space, 5..20, 0..50, &mut [&mut out], &[&dp], &[])
        .expect_err("outside the domain")
        .to_string();
    assert!(
        e.contains("inside the stencil's domain") && e.contains("columns 2..99"),
        "{e}"
    );
}

for_each_space!(
    launch_in_computes_only_the_rectangle,
    fd_pxx_paper_unit_test,
    fd_pzz_on_the_paper_field,
    transposed_paper_unit_tests,
    derivatives_are_exact_on_polynomials,
    fd_time_follows_the_leapfrog_formula,
    fd_kv2_is_dtdh2_v_squared,
    add_source_sets_one_point_only,
    fused_step_equals_split_kernels_bitwise,
    kernels_match_serial_on_uneven_grids,
    memory_round_trips,
    shape_mismatch_names_both_fields,
    grid_too_small_for_the_radius,
    add_source_point_out_of_range,
    copies_with_the_wrong_length,
);
