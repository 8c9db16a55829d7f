//! The numbers of the scheme: finite-difference weights and the CFL stability limit, the
//! Ricker source wavelets and the absorbing layer's damping profile. Pure functions of their
//! arguments; nothing here allocates fields or runs kernels (see `simulator.rs`).

use crate::{Error, Param, Real, Result};

/// The default space order (the paper's).
pub const DEFAULT_SPACE_ORDER: usize = 4;

/// Strength of the absorbing layer: the damping at the outer edge is
/// `η_max = ABSORB_STRENGTH · v / (N · dh)` for a layer of `N` cells (see [`absorbing_eta`]).
/// Chosen by measurement (tests/tests/solver_absorb.rs): among 3, 6, 10, 20 and 30 it
/// reflects least for layers 2 to 3 peak wavelengths wide.
pub(crate) const ABSORB_STRENGTH: f64 = 20.0;

include!(concat!(env!("OUT_DIR"), "/fd_weights.rs"));

/// Stability limit of the 2D leapfrog scheme of the default (4th) order on
/// CFL = vmax·dt/dh: [`cfl_limit_for`]`(4)`, about 0.612.
///
/// ```
/// assert!((ppstencil::solver::cfl_limit() - 0.6124).abs() < 1e-4);
/// ```
pub fn cfl_limit() -> f64 {
    match cfl_limit_for(DEFAULT_SPACE_ORDER) {
        Ok(limit) => limit,
        Err(_) => unreachable!("the default space order is supported"),
    }
}

/// Checks a space order: even, from [`MIN_SPACE_ORDER`] to [`MAX_SPACE_ORDER`] (2 to 16;
/// the rule is kernels-gen's, `kernels_gen::fd::check_order`).
pub fn check_space_order(order: usize) -> Result<()> {
    second_derivative_weights(order).map(|_| ())
}

/// Central second-derivative weights `[w0, w1, ..., wm]` of an even `order` (`m = order/2`):
/// the weights the kernels are generated with (Fornberg's algorithm in kernels-gen, exact
/// fractions rounded once to `f64`), read from a table the build script writes.
pub(crate) fn second_derivative_weights(order: usize) -> Result<&'static [f64]> {
    match FD_WEIGHTS.iter().find(|(o, _)| *o == order) {
        Some((_, w)) => Ok(w),
        None => Err(Error::invalid(
            Param::SpaceOrder,
            order,
            format!(
                "use an even order from {MIN_SPACE_ORDER} to {MAX_SPACE_ORDER} (2, 4, 6, ..., 16; the paper's is 4)"
            ),
        )),
    }
}

/// Stability limit `2 / sqrt(2 Σ|w|)` of the 2D leapfrog scheme at space order `order`
/// (0.7071 at order 2, 0.6124 at order 4, decreasing towards `√2/π ≈ 0.450` as the order
/// grows, since `Σ|w|` tends to the spectral `π²`).
///
/// ```
/// use ppstencil::solver::cfl_limit_for;
/// assert!((cfl_limit_for(2)? - 0.5f64.sqrt()).abs() < 1e-12);
/// assert_eq!(cfl_limit_for(4)?, ppstencil::solver::cfl_limit());
/// assert!(cfl_limit_for(5).is_err());
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub fn cfl_limit_for(order: usize) -> Result<f64> {
    cfl_limit_in(order, 2)
}

/// Stability limit `2 / sqrt(dims Σ|w|)` of the leapfrog scheme at space order `order` in
/// `dims` dimensions (von Neumann: the mode `(-1)^(iz + iy + ix)` makes each axis's second
/// difference `-Σ|w| / dh²`, since the weights alternate in sign, so the Laplacian's largest
/// eigenvalue is `dims Σ|w| / dh²`, and leapfrog is stable while `(v dt)²` times it is at most
/// 4). In 3D: `1/sqrt(3)` ≈ 0.5774 at order 2 (`Σ|w| = 4`), 0.5 at order 4 (`Σ|w| = 16/3`).
///
/// ```
/// use ppstencil::solver::cfl_limit_in;
/// assert!((cfl_limit_in(2, 3)? - 1.0 / 3f64.sqrt()).abs() < 1e-12);
/// assert!((cfl_limit_in(4, 3)? - 0.5).abs() < 1e-12);
/// assert_eq!(cfl_limit_in(4, 2)?, ppstencil::solver::cfl_limit());
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub fn cfl_limit_in(order: usize, dims: usize) -> Result<f64> {
    let w = second_derivative_weights(order)?;
    let sum: f64 = w[0].abs() + 2.0 * w[1..].iter().map(|x| x.abs()).sum::<f64>();
    Ok(2.0 / (dims as f64 * sum).sqrt())
}

/// A Ricker wavelet of peak frequency `fpeak` delayed by `delay` seconds, sampled at
/// `it · dt`: `s(t) = (1 - 2a) e^(-a)`, `a = (π fpeak (t - delay))²`, in f64.
///
/// ```
/// let s = ppstencil::solver::ricker_delayed(101, 0.001, 10.0, 0.05);
/// assert_eq!(s[50], 1.0); // the peak at t = delay
/// assert!((s[0] - (1.0 - 2.0 * 0.25 * std::f64::consts::PI.powi(2)) * (-0.25 * std::f64::consts::PI.powi(2)).exp()).abs() < 1e-15);
/// ```
pub fn ricker_delayed(nt: usize, dt: f64, fpeak: f64, delay: f64) -> Vec<f64> {
    (0..nt)
        .map(|it| ricker_delayed_sample(it, dt, fpeak, delay))
        .collect()
}

/// Sample `it` of [`ricker_delayed`].
pub(super) fn ricker_delayed_sample(it: usize, dt: f64, fpeak: f64, delay: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let t = it as f64 * dt - delay;
    let a = (pi * fpeak * t).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// The absorbing layer's damping, as the factor `eta = η dt / 2` of [`fd_absorb`](crate::kernels::fd_absorb), for a
/// point `d` cells deep into a layer of `width` cells (`1 <= d <= width`; 0 outside):
/// `η = ABSORB_STRENGTH · v / (width · dh) · (d / width)²`. At a corner, the depths along z
/// and x add their contributions.
///
/// The quadratic profile grows smoothly from 0, so the layer's inner edge reflects little;
/// a wave crossing the layer at normal incidence is attenuated by about
/// `exp(-ABSORB_STRENGTH / 6)` in amplitude (`∫ η / 2v dx`), so `exp(-ABSORB_STRENGTH / 3)`
/// out and back (when `η` is small against the wave's angular frequency).
pub(crate) fn absorbing_eta(d: usize, width: usize, v: f64, dh: f64, dt: f64) -> f64 {
    if d == 0 || width == 0 {
        return 0.0;
    }
    let q = d as f64 / width as f64;
    let eta = ABSORB_STRENGTH * v / (width as f64 * dh) * q * q;
    eta * dt / 2.0
}

/// Depth of index `i` into a layer of `width` cells at both ends of `0..n`: `width` at the
/// outermost cell, 1 at the innermost layer cell, 0 in the interior.
pub(crate) fn layer_depth(i: usize, n: usize, width: usize) -> usize {
    if i < width {
        width - i
    } else if i + width >= n {
        i + width + 1 - n
    } else {
        0
    }
}

/// The source wavelet as the paper computes it: `r[it] = (1 - 2a) e^(-a)`, `a = (π f t)²`,
/// `t = it · dt` (a zero-phase Ricker starting at its peak, `r[0] = 1`). `t` is rounded to the
/// element type first and `a` evaluated in `f64`, as in the reference C++ code.
///
/// ```
/// let r = ppstencil::solver::ricker::<f64>(3, 0.001, 10.0);
/// assert_eq!(r[0], 1.0);
/// let a = (std::f64::consts::PI * 10.0 * 0.001f64).powi(2);
/// assert!((r[1] - (1.0 - 2.0 * a) * (-a).exp()).abs() < 1e-15);
/// ```
pub fn ricker<T: Real>(nt: usize, dt: f64, fpeak: f64) -> Vec<T> {
    (0..nt).map(|it| ricker_sample(it, dt, fpeak)).collect()
}

/// Sample `it` of [`ricker`].
pub(super) fn ricker_sample<T: Real>(it: usize, dt: f64, fpeak: f64) -> T {
    let pi = std::f64::consts::PI;
    let t = (T::lit(it as f64) * T::lit(dt)).to_f64();
    let a = T::lit(pi * pi * fpeak * fpeak * t * t);
    (T::lit(1.0) - T::lit(2.0) * a) * (-a).exp()
}

/// The numbers a run's source term depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SourceTerm {
    /// Whether the wavelet is added as a point source (`SourceMode::Add`) rather than set.
    pub(crate) add: bool,
    /// Time step, s.
    pub(crate) dt: f64,
    /// Grid spacing, m.
    pub(crate) dh: f64,
    /// Peak frequency of the Ricker wavelet, Hz.
    pub(crate) fpeak: f64,
    /// Delay of the added wavelet, s.
    pub(crate) delay: f64,
    /// Dimensions of the grid (2 or 3).
    pub(crate) dims: usize,
}

/// Sample `it` of the source term `s` in `T`: [`ricker`] when the wavelet is set, the
/// delayed wavelet scaled by `dt² v_src² / dh²` (2D) or `dt² v_src² / dh³` (3D) when it is
/// added (`v_src`: the velocity at the source; the point source's delta is `1 / dh^dims` on
/// the grid).
pub(crate) fn source_sample<T: Real>(s: &SourceTerm, v_src: f64, it: usize) -> T {
    if !s.add {
        return ricker_sample::<T>(it, s.dt, s.fpeak);
    }
    let cell = if s.dims == 3 {
        s.dh * s.dh * s.dh
    } else {
        s.dh * s.dh
    };
    let scale = s.dt * s.dt * v_src * v_src / cell;
    T::lit(scale * ricker_delayed_sample(it, s.dt, s.fpeak, s.delay))
}

/// The smallest positive normal number of `T` (as f64): values below it lose precision
/// (subnormal) or vanish.
pub(super) fn min_normal<T: Real>() -> f64 {
    if std::mem::size_of::<T>() == 4 {
        f32::MIN_POSITIVE as f64
    } else {
        f64::MIN_POSITIVE
    }
}

/// `x` rounded to `T` is a normal, finite number (not 0, subnormal or infinite).
pub(super) fn is_normal_in<T: Real>(x: f64) -> bool {
    let r = T::lit(x).to_f64().abs();
    r.is_finite() && r >= min_normal::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's order-4 weights are the paper's `c0, c1, c2`; an odd order is refused.
    #[test]
    fn order_4_weights_are_the_papers() {
        let w = second_derivative_weights(4).unwrap();
        assert_eq!(w, [-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0]);
        assert!(second_derivative_weights(5).is_err());
    }

    /// The damping at the layer's outer cell is `ABSORB_STRENGTH v / (width dh) · dt / 2`
    /// (by hand: 20 · 2000 / (10 · 5) · 1e-3 / 2 = 0.4), a quarter of it halfway, 0 outside.
    #[test]
    fn absorbing_eta_is_quadratic_in_depth() {
        assert!((absorbing_eta(10, 10, 2000.0, 5.0, 1e-3) - 0.4).abs() < 1e-15);
        assert!((absorbing_eta(5, 10, 2000.0, 5.0, 1e-3) - 0.1).abs() < 1e-15);
        assert_eq!(absorbing_eta(0, 10, 2000.0, 5.0, 1e-3), 0.0);
    }
}
