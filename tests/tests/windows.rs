//! Field windows on every execution space (host → space → run → host → assert), in 1D, 2D
//! and 3D: a launch whose fields cover different boxes of the grid (an output and an inout
//! window over the launch's box only, an input window over the box widened by the stencil's
//! reach, and a field covering the whole grid) computes, at every point of the box, what a
//! hand loop over whole-grid arrays computes, and touches nothing else of its windows. Bad
//! windows (too small by one point on any side, for an output and for an input; no field
//! covering the grid) are errors naming the window, the points it holds and the points the
//! launch needs.

use ppstencil::launch::{launch_in_region, Stencil};
use ppstencil::{stencil, Error, ExecutionSpace, HostField, Real, ScalarField};
use ppstencil_tests::grid::{assert_value, at, points, random};
use ppstencil_tests::{for_each_space, Rng};
use std::ops::Range;

stencil! {
    /// 1D: taps of a whole field and of a window.
    fn win1(o: out, u: inout, p: in, q: in, k: real) {
        o[0] = k * p[-2] + p[2] - q[-1] * q[1];
        u[0] = u[0] * k + q[0];
    }

    /// 2D: taps along both axes.
    fn win2(o: out, u: inout, p: in, q: in, k: real) {
        o[0, 0] = k * p[0, -2] + p[1, 0] - q[-1, 0] * q[0, 2];
        u[0, 0] = u[0, 0] * k + q[0, 0];
    }

    /// 3D: taps along all three axes.
    fn win3(o: out, u: inout, p: in, q: in, k: real) {
        o[0, 0, 0] = k * p[0, -1, 2] + p[-2, 0, 0] - q[0, 1, 0] * q[0, 0, -1];
        u[0, 0, 0] = u[0, 0, 0] * k + q[1, 0, 0];
    }
}

const K: f64 = 0.375;

fn to_space<E: ExecutionSpace, const D: usize>(
    h: &HostField<f64, D>,
) -> ScalarField<E::Memory, f64, D> {
    ScalarField::from_host(h).expect("copy")
}

/// The hand loop's `o` and `u` at one point: `o(p, q)` from whole-grid reads, `u` from the
/// old `u` and `q`.
type Want<'a, const D: usize> = &'a dyn Fn(&dyn Fn(char, [isize; D]) -> f64, f64) -> (f64, f64);

/// Runs stencil `S` on `region` of a grid of `shape` with `o`, `u` windows over the region,
/// `q` a window over the region widened by `reach` (the stencil's radius per axis), `p` the
/// whole grid; checks every point of both windows against `want`.
fn check<E: ExecutionSpace, S: Stencil, const D: usize>(
    space: &E,
    shape: [usize; D],
    region: [Range<usize>; D],
    reach: [usize; D],
    want: Want<'_, D>,
) {
    let mut rng = Rng::new(5 + D as u64);
    let lo: [usize; D] = std::array::from_fn(|a| region[a].start);
    let len: [usize; D] = std::array::from_fn(|a| region[a].len());
    let qlo: [usize; D] = std::array::from_fn(|a| lo[a] - reach[a]);
    let qlen: [usize; D] = std::array::from_fn(|a| len[a] + 2 * reach[a]);
    let p = random(&mut rng, shape, None);
    let q = random(&mut rng, qlen, Some(qlo));
    let o0 = random(&mut rng, len, Some(lo));
    let u0 = random(&mut rng, len, Some(lo));
    let (dp, dq) = (to_space::<E, D>(&p), to_space::<E, D>(&q));
    let (mut o, mut u) = (to_space::<E, D>(&o0), to_space::<E, D>(&u0));
    launch_in_region::<S, E, f64, D>(
        space,
        region.clone(),
        &mut [&mut o, &mut u],
        &[&dp, &dq],
        &[K],
    )
    .expect("windowed launch");
    let (o, u) = (o.to_host().expect("o"), u.to_host().expect("u"));
    assert_eq!(
        (o.origin(), u.origin()),
        (lo, lo),
        "windows keep their origin"
    );
    for idx in points(&region) {
        let read = |f: char, off: [isize; D]| match f {
            'p' => at(&p, idx, off),
            _ => at(&q, idx, off),
        };
        let (wo, wu) = want(&read, at(&u0, idx, [0; D]));
        let (go, gu) = (at(&o, idx, [0; D]), at(&u, idx, [0; D]));
        for (name, g, w) in [("o", go, wo), ("u", gu, wu)] {
            assert_value::<E>(&format!("{name} at {idx:?}"), g, w, 1e-12);
        }
    }
}

/// 1D, 2D and 3D launches over windows compute what the hand loop does, on boxes at the
/// grid's low and high sides and in its middle.
fn windows_compute_the_hand_loop<E: ExecutionSpace>(space: E) {
    let w1: Want<'_, 1> = &|r, u| {
        (
            K * r('p', [-2]) + r('p', [2]) - r('q', [-1]) * r('q', [1]),
            u * K + r('q', [0]),
        )
    };
    for region in [2..5, 7..11, 3..4] {
        check::<E, Win1, 1>(&space, [13], [region], [2], w1);
    }
    let w2: Want<'_, 2> = &|r, u| {
        let o = K * r('p', [0, -2]) + r('p', [1, 0]) - r('q', [-1, 0]) * r('q', [0, 2]);
        (o, u * K + r('q', [0, 0]))
    };
    // A strip along the right side (the PML's use), one along the top, a box in the middle.
    for region in [[2..15, 30..38], [2..5, 2..38], [6..9, 11..20]] {
        check::<E, Win2, 2>(&space, [17, 40], region, [1, 2], w2);
    }
    let w3: Want<'_, 3> = &|r, u| {
        let o =
            K * r('p', [0, -1, 2]) + r('p', [-2, 0, 0]) - r('q', [0, 1, 0]) * r('q', [0, 0, -1]);
        (o, u * K + r('q', [1, 0, 0]))
    };
    for region in [
        [2..9, 2..8, 2..5],
        [3..5, 2..8, 2..19],
        [2..9, 5..8, 14..19],
    ] {
        check::<E, Win3, 3>(&space, [11, 10, 21], region, [2, 1, 2], w3);
    }
}

/// A window one point too small on any side, for an output or for an input, is an error that
/// names the window, the points it holds and the points the launch needs; so is a launch of
/// windows only.
fn bad_windows_are_errors_naming_the_points<E: ExecutionSpace>(space: E) {
    let shape = [17, 40];
    let region = [2..15, 30..38];
    let p = ScalarField::<E::Memory, f64, 2>::zeros(shape).expect("p");
    let field = |shape: [usize; 2], origin: [usize; 2]| {
        ScalarField::<E::Memory, f64, 2>::zeros(shape)
            .expect("window")
            .with_origin(origin)
    };
    let (good_o, good_q) = (([13, 8], [2, 30]), ([15, 12], [1, 28]));
    let run = |o: ([usize; 2], [usize; 2]), q: ([usize; 2], [usize; 2])| {
        let (mut o, mut u) = (field(o.0, o.1), field(good_o.0, good_o.1));
        launch_in_region::<Win2, E, f64, 2>(
            &space,
            region.clone(),
            &mut [&mut o, &mut u],
            &[&p, &field(q.0, q.1)],
            &[K],
        )
    };
    run(good_o, good_q).expect("the minimal windows are enough");
    // Each side of each window in turn: shrink it by one point there.
    for (name, (shape, origin)) in [("o", good_o), ("q", good_q)] {
        for axis in 0..2 {
            for low in [true, false] {
                let mut s = shape;
                let mut at = origin;
                s[axis] -= 1;
                if low {
                    at[axis] += 1;
                }
                let e = if name == "o" {
                    run((s, at), good_q)
                } else {
                    run(good_o, (s, at))
                }
                .expect_err("a window one point short");
                assert!(matches!(e, Error::InvalidParameter { .. }), "{e:?}");
                let msg = e.to_string();
                let needs = if name == "o" {
                    "writes it at rows 2..15, columns 30..38"
                } else {
                    "reads it at rows 1..16, columns 28..40"
                };
                for needle in [
                    format!("window `{name}` of kernel `win2`"),
                    needs.to_string(),
                ] {
                    assert!(msg.contains(&needle), "`{msg}` should contain `{needle}`");
                }
            }
        }
    }
    // No field covering the grid: the grid is unknown.
    let (mut o, mut u) = (field(good_o.0, good_o.1), field(good_o.0, good_o.1));
    let e = launch_in_region::<Win2, E, f64, 2>(
        &space,
        region.clone(),
        &mut [&mut o, &mut u],
        &[&field(shape, [0, 0]), &field(good_q.0, good_q.1)],
        &[K],
    )
    .expect_err("windows only");
    assert!(
        e.to_string()
            .contains("at least one field covering the whole grid"),
        "{e}"
    );
}

for_each_space!(
    windows_compute_the_hand_loop,
    bad_windows_are_errors_naming_the_points
);

/// Element access and copies keep a window's place in the grid.
#[test]
fn windows_keep_their_origin_through_copies() {
    let w: HostField<f32, 3> = ScalarField::new_3d(2, 3, 4)
        .expect("w")
        .with_origin([1, 2, 3]);
    assert!(w.is_window());
    assert_eq!(w.origin(), [1, 2, 3]);
    let back = ScalarField::<ppstencil::MemSpaceHost, f32, 3>::from_host(&w)
        .expect("copy")
        .to_host()
        .expect("back");
    assert_eq!((back.origin(), back.is_window()), ([1, 2, 3], true));
    let plain: HostField<f32, 3> = ScalarField::new_3d(2, 3, 4).expect("plain");
    assert!(!plain.is_window());
    assert_eq!(f32::NAME, "f32");
}
