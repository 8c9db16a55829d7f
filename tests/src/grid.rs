//! Points, boxes and windows of the generic tests' grids, and the comparison every backend
//! is held to: bit for bit on the host, a few rounding errors on a device.

use crate::{is_host, Rng};
use ppstencil::{ExecutionSpace, HostField};
use std::ops::Range;

/// The value at grid point `idx + off` of a host field whose element 0 is grid point
/// `f.origin()` (a window or a whole field); panics if the window does not hold it.
pub fn at<const D: usize>(f: &HostField<f64, D>, idx: [usize; D], off: [isize; D]) -> f64 {
    let origin = f.origin();
    let local: [usize; D] = std::array::from_fn(|a| {
        (idx[a] as isize + off[a] - origin[a] as isize)
            .try_into()
            .expect("inside the window")
    });
    f.get_at(local).expect("inside the window")
}

/// Every point of a box, outermost axis first.
pub fn points<const D: usize>(b: &[Range<usize>; D]) -> Vec<[usize; D]> {
    let n: usize = b.iter().map(|r| r.len()).product();
    (0..n)
        .map(|mut k| {
            let mut idx = [0; D];
            for a in (0..D).rev() {
                idx[a] = b[a].start + k % b[a].len();
                k /= b[a].len();
            }
            idx
        })
        .collect()
}

/// A host field of `shape` with random values in [-1, 1), as a window at `origin` (or
/// covering the grid).
pub fn random<const D: usize>(
    rng: &mut Rng,
    shape: [usize; D],
    origin: Option<[usize; D]>,
) -> HostField<f64, D> {
    let n = shape.iter().product();
    let f = HostField::from_vec_shape(shape, rng.vec(n, -1.0, 1.0, |v| v)).expect("field");
    match origin {
        Some(o) => f.with_origin(o),
        None => f,
    }
}

/// Asserts that `got`, computed on space `E`, is `want`: bit for bit on a host space, within
/// `tol` relative on a device (other compilers, fused multiply-adds: `1e-12` suits `f64`
/// arithmetic, `1e-4` `f32`). `what` names the value in the failure.
pub fn assert_value<E: ExecutionSpace>(what: &str, got: f64, want: f64, tol: f64) {
    if is_host::<E>() {
        assert_eq!(got.to_bits(), want.to_bits(), "{what}: {got} vs {want}");
    } else {
        assert!(
            (got - want).abs() <= tol * want.abs().max(1.0),
            "{what}: {got} vs {want}"
        );
    }
}
