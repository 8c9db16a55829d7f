//! 1D and 3D user stencils on every execution space (host → space → run → host → assert):
//! a 3D heat step against a hand loop, a 1D heat stencil against the analytic decay of a sine
//! mode, 3D host backends bit-identical to `Serial` on a grid whose y-blocks are smaller than
//! the domain, point stencils, sub-regions, and shape errors that name every axis.

use ppstencil::launch::launch_in_region;
use ppstencil::{stencil, Error, ExecutionSpace, HostField, Real, ScalarField, Serial};
use ppstencil_tests::grid::assert_value;
use ppstencil_tests::{for_each_space, Rng};

stencil! {
    /// One explicit heat step in 3D (radius 1).
    fn heat3(unew: out, u: in, alpha: real) {
        unew[0, 0, 0] = u[0, 0, 0] + alpha * laplacian(u, 2);
    }

    /// One explicit heat step in 1D.
    fn heat1(unew: out, u: in, r: real) {
        unew[0] = u[0] + r * d2x(u, 2);
    }

    /// A high-order 3D stencil with different radii per axis and mixed derivatives.
    fn wide3(o: out, p: in, q: in, k: real) {
        o[0, 0, 0] = k * laplacian(p, 8) + d2xz(q, 4) - d1y(q, 6) * p[0, 0, 0];
    }

    /// Scales one point of a 3D field.
    #[at(iz, iy, ix)]
    fn scale3(u: inout, a: real, iz: index, iy: index, ix: index) {
        u[0, 0, 0] = u[0, 0, 0] * a;
    }

    /// Adds to one point of a 1D field.
    #[at(ix)]
    fn bump1(u: inout, a: real, ix: index) {
        u[0] = u[0] + a;
    }

    /// A per-column and a per-row coefficient (profiles along x and z) in 2D.
    fn prof2(o: out, p: in, ax: in(x), az: in(z)) {
        o[0, 0] = ax[0, -1] * p[0, 0] + az[1, 0] * p[0, 1];
    }

    /// A profile along each axis in 3D.
    fn prof3(o: out, p: in, ax: in(x), ay: in(y), az: in(z)) {
        o[0, 0, 0] = p[0, 0, 0] * ay[0, 1, 0] + ax[0, 0, 1] - az[-1, 0, 0];
    }

    /// A profile in 1D.
    fn prof1(o: out, ax: in(x), u: in) {
        o[0] = ax[1] * u[0] - ax[-1];
    }
}

fn random3<T: Real>(rng: &mut Rng, [nz, ny, nx]: [usize; 3]) -> HostField<T, 3> {
    let data = rng.vec(nz * ny * nx, -1.0, 1.0, T::lit);
    HostField::from_vec_shape([nz, ny, nx], data).expect("field")
}

fn to_space<E: ExecutionSpace, T: Real, const D: usize>(
    h: &HostField<T, D>,
) -> ScalarField<E::Memory, T, D> {
    ScalarField::from_host(h).expect("copy")
}

fn f64s<E: ExecutionSpace, T: Real, const D: usize>(f: &ScalarField<E::Memory, T, D>) -> Vec<f64> {
    let h = f.to_host().expect("copy back");
    h.as_slice().iter().map(|v| v.to_f64()).collect()
}

/// The 3D heat step against a hand loop in f64 (interior), border untouched.
fn heat_3d_matches_hand_loop<E: ExecutionSpace>(space: E) {
    for shape in [[3, 3, 3], [5, 9, 14], [11, 4, 33]] {
        let [nz, ny, nx] = shape;
        let mut rng = Rng::new(3);
        let u: HostField<f64, 3> = random3(&mut rng, shape);
        let init: HostField<f64, 3> = random3(&mut rng, shape);
        let alpha = 0.1;
        let mut unew = to_space::<E, f64, 3>(&init);
        heat3(&space, &mut unew, &to_space::<E, f64, 3>(&u), alpha).expect("heat3");
        let mut want: Vec<f64> = init.as_slice().to_vec();
        for iz in 1..nz - 1 {
            for iy in 1..ny - 1 {
                for ix in 1..nx - 1 {
                    let c = u[(iz, iy, ix)];
                    let s = u[(iz, iy, ix - 1)]
                        + u[(iz, iy, ix + 1)]
                        + u[(iz, iy - 1, ix)]
                        + u[(iz, iy + 1, ix)]
                        + u[(iz - 1, iy, ix)]
                        + u[(iz + 1, iy, ix)];
                    want[(iz * ny + iy) * nx + ix] = c + alpha * (s - 6.0 * c);
                }
            }
        }
        let got = f64s::<E, f64, 3>(&unew);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-13, "{shape:?} point {k}: {g} vs {w}");
        }
    }
}

/// A sine mode `sin(k π j / (n - 1))` under the explicit 1D heat step with fixed ends decays
/// by exactly `1 - 4 r sin²(k π / (2 (n - 1)))` per step (the discrete decay factor), which
/// tends to the analytic `exp(-k² π² α t)` as the grid is refined.
fn heat_1d_decays_like_the_analytic_sine_mode<E: ExecutionSpace>(space: E) {
    let (n, k, r, steps) = (65usize, 2.0f64, 0.25f64, 400usize);
    let pi = std::f64::consts::PI;
    let mode = |j: usize| (k * pi * j as f64 / (n - 1) as f64).sin();
    let mut u = HostField::<f64, 1>::from_shape_fn([n], |[j]| mode(j)).expect("field");
    u[0] = 0.0;
    u[n - 1] = 0.0;
    let mut a = to_space::<E, f64, 1>(&u);
    let mut b = to_space::<E, f64, 1>(&u);
    for _ in 0..steps {
        heat1(&space, &mut b, &a, r).expect("heat1");
        a.swap(&mut b);
    }
    let got = f64s::<E, f64, 1>(&a);
    let factor = 1.0 - 4.0 * r * (k * pi / (2.0 * (n - 1) as f64)).sin().powi(2);
    let decay = factor.powi(steps as i32);
    for (j, g) in got.iter().enumerate().take(n - 1).skip(1) {
        let want = decay * mode(j);
        assert!((g - want).abs() <= 1e-12, "j = {j}: {g} vs {want}");
    }
    // The continuous solution: dh = 1 / (n - 1), dt = r dh² / α, t = steps dt (α = 1).
    let dh = 1.0 / (n - 1) as f64;
    let t = steps as f64 * r * dh * dh;
    let analytic = (-(k * pi).powi(2) * t).exp();
    assert!(
        (decay - analytic).abs() <= 2e-3 * analytic,
        "discrete {decay} vs analytic {analytic}"
    );
    assert!(analytic < 0.5, "the mode decayed visibly: {analytic}");
}

/// A radius-4 3D stencil with different radii per axis: host backends equal `Serial` bit for
/// bit on a grid whose rows are long enough that the y-blocks are smaller than the domain;
/// device backends agree within rounding.
fn wide_3d_matches_serial<E: ExecutionSpace>(space: E) {
    let shape = blocked_shape();
    let mut rng = Rng::new(7);
    let p: HostField<f32, 3> = random3(&mut rng, shape);
    let q: HostField<f32, 3> = random3(&mut rng, shape);
    let init: HostField<f32, 3> = random3(&mut rng, shape);
    let mut want = HostField::from_vec_shape(shape, init.as_slice().to_vec()).expect("copy");
    wide3(&Serial, &mut want, &p, &q, 0.3).expect("serial");
    let mut got = to_space::<E, f32, 3>(&init);
    wide3(
        &space,
        &mut got,
        &to_space::<E, f32, 3>(&p),
        &to_space::<E, f32, 3>(&q),
        0.3,
    )
    .expect("wide3");
    let got = f64s::<E, f32, 3>(&got);
    for (k, (g, w)) in got.iter().zip(want.as_slice()).enumerate() {
        assert_value::<E>(&format!("point {k}"), *g, f64::from(*w), 1e-4);
    }
}

/// Point stencils in 1D and 3D touch exactly their point; out of range is an error naming
/// every axis.
fn point_stencils_in_1d_and_3d<E: ExecutionSpace>(space: E) {
    let ones = HostField::<f64, 3>::from_shape_fn([4, 5, 6], |_| 1.0).expect("field");
    let mut u = to_space::<E, f64, 3>(&ones);
    scale3(&space, &mut u, 3.0, 1, 2, 3).expect("scale3");
    let got = f64s::<E, f64, 3>(&u);
    for (k, g) in got.iter().enumerate() {
        let want = if k == (5 + 2) * 6 + 3 { 3.0 } else { 1.0 };
        assert_eq!(*g, want, "point {k}");
    }
    let e = scale3(&space, &mut u, 3.0, 1, 5, 3).expect_err("y out of range");
    assert!(matches!(e, Error::PointOutOfRange { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("(1, 5, 3)") && msg.contains("4 x 5 x 6") && msg.contains("planes 0..4"),
        "{msg}"
    );
    let mut v = ScalarField::<E::Memory, f32, 1>::new_1d(9).expect("field");
    bump1(&space, &mut v, 2.5, 8).expect("bump1");
    let got = f64s::<E, f32, 1>(&v);
    assert_eq!(got[8], 2.5);
    assert!(got[..8].iter().all(|&g| g == 0.0));
    assert!(bump1(&space, &mut v, 1.0, 9).is_err());
}

/// `launch_in_region` in 3D computes exactly the full launch's values inside the box and
/// leaves the rest; a box outside the domain is an error naming every axis.
fn region_3d_computes_only_the_box<E: ExecutionSpace>(space: E) {
    let shape = [6, 7, 9];
    let mut rng = Rng::new(11);
    let u: HostField<f64, 3> = random3(&mut rng, shape);
    let mut full = ScalarField::<E::Memory, f64, 3>::zeros(shape).expect("field");
    let du = to_space::<E, f64, 3>(&u);
    heat3(&space, &mut full, &du, 0.1).expect("full");
    let full = f64s::<E, f64, 3>(&full);
    let mut part = ScalarField::<E::Memory, f64, 3>::zeros(shape).expect("field");
    launch_in_region::<Heat3, E, f64, 3>(
        &space,
        [2..4, 1..3, 3..8],
        &mut [&mut part],
        &[&du],
        &[0.1],
    )
    .expect("region");
    let got = f64s::<E, f64, 3>(&part);
    for iz in 0..6 {
        for iy in 0..7 {
            for ix in 0..9 {
                let k = (iz * 7 + iy) * 9 + ix;
                let inside = (2..4).contains(&iz) && (1..3).contains(&iy) && (3..8).contains(&ix);
                let want = if inside { full[k] } else { 0.0 };
                assert_eq!(got[k].to_bits(), want.to_bits(), "({iz}, {iy}, {ix})");
            }
        }
    }
    let e = launch_in_region::<Heat3, E, f64, 3>(
        &space,
        [0..4, 1..3, 3..8],
        &mut [&mut part],
        &[&du],
        &[0.1],
    )
    .expect_err("z starts in the border");
    let msg = e.to_string();
    assert!(
        msg.contains("planes 1..5, rows 1..6, columns 1..8"),
        "{msg}"
    );
}

/// Fields of different 3D shapes: the error names all three axes.
fn shape_mismatch_names_every_axis<E: ExecutionSpace>(space: E) {
    let mut o = ScalarField::<E::Memory, f32, 3>::new_3d(4, 5, 6).expect("field");
    let u = ScalarField::<E::Memory, f32, 3>::new_3d(4, 6, 6).expect("field");
    let e = heat3(&space, &mut o, &u, 0.1).expect_err("mismatch");
    assert!(
        e.to_string()
            .contains("`u` is 4 x 6 x 6 but `unew` is 4 x 5 x 6"),
        "{e}"
    );
    let small = ScalarField::<E::Memory, f32, 3>::new_3d(4, 2, 6).expect("field");
    let mut o2 = ScalarField::<E::Memory, f32, 3>::new_3d(4, 2, 6).expect("field");
    let e = heat3(&space, &mut o2, &small, 0.1).expect_err("too small");
    assert!(e.to_string().contains("4 x 2 x 6 grid is too small"), "{e}");
}

/// Random host data of `shape`.
fn random<const D: usize>(rng: &mut Rng, shape: [usize; D]) -> HostField<f64, D> {
    let n = shape.iter().product();
    HostField::from_vec_shape(shape, rng.vec(n, -1.0, 1.0, |v| v)).expect("field")
}

/// Profiles (`in(x)`, `in(z)`, `in(y)`) in 1D, 2D and 3D against hand loops that index them
/// by the point's coordinate along their axis: on the whole interior, on a box with profiles
/// that are windows of their axis, and the errors for a profile of the wrong shape or too
/// short.
fn profiles_match_hand_loops<E: ExecutionSpace>(space: E) {
    let mut rng = Rng::new(11);
    profiles_on_2d_interiors(&space, &mut rng);
    profile_windows_on_a_2d_box(&space, &mut rng);
    profiles_in_3d(&space, &mut rng);
    profiles_in_1d(&space, &mut rng);
}

/// 2D profiles along x and z on the whole interior (radius 1) of grids of several shapes.
fn profiles_on_2d_interiors<E: ExecutionSpace>(space: &E, rng: &mut Rng) {
    for [nz, nx] in [[3, 3], [6, 13], [17, 40]] {
        let p = random(rng, [nz, nx]);
        let (ax, az) = (random(rng, [1, nx]), random(rng, [nz, 1]));
        let init = random(rng, [nz, nx]);
        let mut o = to_space::<E, f64, 2>(&init);
        let (pd, axd, azd) = (
            to_space::<E, f64, 2>(&p),
            to_space::<E, f64, _>(&ax),
            to_space::<E, f64, _>(&az),
        );
        prof2(space, &mut o, &pd, &axd, &azd).expect("prof2");
        let got = f64s::<E, f64, 2>(&o);
        for iz in 0..nz {
            for ix in 0..nx {
                let inside = (1..nz - 1).contains(&iz) && (1..nx - 1).contains(&ix);
                let want = if inside {
                    ax[(0, ix - 1)] * p[(iz, ix)] + az[(iz + 1, 0)] * p[(iz, ix + 1)]
                } else {
                    init[(iz, ix)]
                };
                let what = format!("2D {nz} x {nx} at ({iz}, {ix})");
                assert_value::<E>(&what, got[iz * nx + ix], want, 1e-13);
            }
        }
    }
}

/// 2D profiles that are windows of their axis, on a box; and the errors for a window too
/// short and for a profile of the wrong shape.
fn profile_windows_on_a_2d_box<E: ExecutionSpace>(space: &E, rng: &mut Rng) {
    // 2D, a box, with profiles that hold only the columns and rows it reads (its box
    // widened by the radius along their axis): columns 2..10 and rows 1..5.
    let (nz, nx) = (7, 12);
    let p = random(rng, [nz, nx]);
    let (ax, az) = (random(rng, [1, 8]), random(rng, [4, 1]));
    let init = random(rng, [nz, nx]);
    let mut o = to_space::<E, f64, 2>(&init);
    let pd = to_space::<E, f64, 2>(&p);
    let axw = to_space::<E, f64, 2>(&ax).with_origin([0, 2]);
    let azw = to_space::<E, f64, 2>(&az).with_origin([1, 0]);
    launch_in_region::<Prof2, E, f64, 2>(
        space,
        [2..4, 3..9],
        &mut [&mut o],
        &[&pd, &axw, &azw],
        &[],
    )
    .expect("prof2 on a box");
    let got = f64s::<E, f64, 2>(&o);
    for iz in 0..nz {
        for ix in 0..nx {
            let want = if (2..4).contains(&iz) && (3..9).contains(&ix) {
                ax[(0, ix - 1 - 2)] * p[(iz, ix)] + az[(iz + 1 - 1, 0)] * p[(iz, ix + 1)]
            } else {
                init[(iz, ix)]
            };
            assert_value::<E>(
                &format!("box at ({iz}, {ix})"),
                got[iz * nx + ix],
                want,
                1e-13,
            );
        }
    }
    // The profile windows one column or row short: the launch names the profile.
    let short = to_space::<E, f64, 2>(&random(rng, [1, 7])).with_origin([0, 3]);
    let e = launch_in_region::<Prof2, E, f64, 2>(
        space,
        [2..4, 3..9],
        &mut [&mut o],
        &[&pd, &short, &azw],
        &[],
    )
    .expect_err("too short");
    assert!(
        e.to_string().contains("window `ax` of kernel `prof2`"),
        "{e}"
    );
    // A whole field, or a profile along the other axis, where a profile along x is declared.
    for wrong in [[nz, nx], [nz, 1]] {
        let f = to_space::<E, f64, 2>(&random(rng, wrong));
        let e = prof2(
            space,
            &mut o,
            &pd,
            &f,
            &to_space::<E, f64, _>(&random(rng, [nz, 1])),
        )
        .expect_err("a profile along x has one row");
        let s = e.to_string();
        assert!(
            s.contains("profile `ax` of kernel `prof2`") && s.contains("must be 1 along z"),
            "{s}"
        );
    }
}

/// 3D profiles along x, y and z on the whole interior.
fn profiles_in_3d<E: ExecutionSpace>(space: &E, rng: &mut Rng) {
    let [nz, ny, nx] = [5, 6, 9];
    let p = random(rng, [nz, ny, nx]);
    let ax = random(rng, [1, 1, nx]);
    let ay = random(rng, [1, ny, 1]);
    let az = random(rng, [nz, 1, 1]);
    let init = random(rng, [nz, ny, nx]);
    let mut o = to_space::<E, f64, 3>(&init);
    let args = (
        to_space::<E, f64, 3>(&p),
        to_space::<E, f64, _>(&ax),
        to_space::<E, f64, _>(&ay),
        to_space::<E, f64, _>(&az),
    );
    prof3(space, &mut o, &args.0, &args.1, &args.2, &args.3).expect("prof3");
    let got = f64s::<E, f64, 3>(&o);
    for iz in 0..nz {
        for iy in 0..ny {
            for ix in 0..nx {
                let inside = (1..nz - 1).contains(&iz)
                    && (1..ny - 1).contains(&iy)
                    && (1..nx - 1).contains(&ix);
                let want = if inside {
                    p[(iz, iy, ix)] * ay[(0, iy + 1, 0)] + ax[(0, 0, ix + 1)] - az[(iz - 1, 0, 0)]
                } else {
                    init[(iz, iy, ix)]
                };
                let what = format!("3D at ({iz}, {iy}, {ix})");
                assert_value::<E>(&what, got[(iz * ny + iy) * nx + ix], want, 1e-13);
            }
        }
    }
}

/// A 1D profile along x on the whole interior.
fn profiles_in_1d<E: ExecutionSpace>(space: &E, rng: &mut Rng) {
    let n = 9;
    let (ax, u, init) = (random(rng, [n]), random(rng, [n]), random(rng, [n]));
    let mut o = to_space::<E, f64, 1>(&init);
    prof1(
        space,
        &mut o,
        &to_space::<E, f64, _>(&ax),
        &to_space::<E, f64, _>(&u),
    )
    .expect("prof1");
    let got = f64s::<E, f64, 1>(&o);
    for j in 0..n {
        let want = if (1..n - 1).contains(&j) {
            ax[j + 1] * u[j] - ax[j - 1]
        } else {
            init[j]
        };
        assert_value::<E>(&format!("1D at {j}"), got[j], want, 1e-13);
    }
}

for_each_space!(
    profiles_match_hand_loops,
    heat_3d_matches_hand_loop,
    heat_1d_decays_like_the_analytic_sine_mode,
    wide_3d_matches_serial,
    point_stencils_in_1d_and_3d,
    region_3d_computes_only_the_box,
    shape_mismatch_names_every_axis,
);

/// A shape for [`Wide3`] whose domain holds about one and a half y-blocks on this machine
/// (the block size follows the cache sizes), so the bit-identity test crosses block edges.
/// At most 400 rows of y: where the last-level cache is so large that a block of 1001-point
/// rows would need more (an H200 host's 300 MiB: 728 rows), the rows are made longer, which
/// shrinks the block.
fn blocked_shape() -> [usize; 3] {
    use ppstencil::launch::{Region, Stencil};
    let mut nx = 1001;
    loop {
        let probe = Region::for_stencil(&Wide3::INFO, [11, 9, nx], &[]).expect("grid");
        let block = ppstencil::__private::y_block::<f32>(&probe, Wide3::INFO.radii[0], 3);
        let ny = block + block / 2 + 9;
        if ny <= 400 {
            return [11, ny, nx];
        }
        nx *= 2;
    }
}

/// The 3D test grid is blocked along y on this machine (otherwise the bit-identity test
/// would not exercise blocking): more row runs than z-planes, covering every row once.
#[test]
fn the_wide_3d_grid_is_blocked_along_y() {
    use ppstencil::launch::{Region, Stencil};
    let info = Wide3::INFO;
    let shape = blocked_shape();
    let grid = Region::for_stencil(&info, shape, &[]).expect("grid");
    let runs =
        ppstencil::__private::row_runs::<f32>(&grid, grid.lo[0]..grid.hi[0], info.radii[0], 3);
    assert!(runs.len() > grid.hi[0] - grid.lo[0], "{} runs", runs.len());
    let mut rows: Vec<usize> = runs.iter().flat_map(|r| r.clone()).collect();
    rows.sort_unstable();
    let want: Vec<usize> = (grid.lo[0]..grid.hi[0])
        .flat_map(|z| (grid.lo[1]..grid.hi[1]).map(move |y| z * shape[1] + y))
        .collect();
    assert_eq!(rows, want);
}
