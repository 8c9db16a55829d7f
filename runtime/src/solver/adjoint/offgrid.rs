//! Sources and receivers off the grid: positions in metres, injected and sampled with
//! Hicks' (2002) Kaiser-windowed sinc over `2 HICKS_RADIUS` points per axis (a tensor
//! product in 2D and 3D), in the forward map and its adjoint alike, so that the adjoint
//! stays the exact transpose. A coordinate on a grid line takes that grid point alone
//! (weight 1), so on-grid positions give the grid-point operator's results bit for bit.

use super::{check_len, Direction, Stepper, WaveOperator};
use crate::solver::dims::{Dims, WaveKernels};
use crate::{Error, ExecutionSpace, Param, Real, Result};

/// Half-width of the windowed sinc, in grid points.
pub const HICKS_RADIUS: usize = 4;
/// The Kaiser window's shape parameter for [`HICKS_RADIUS`] = 4 (Hicks 2002, table 2,
/// monopole).
pub const HICKS_KAISER_B: f64 = 4.14;

/// The modified Bessel function `I0(x)` by its power series (to 1e-16 relative).
fn bessel_i0(x: f64) -> f64 {
    let (mut sum, mut term, mut k) = (1.0, 1.0, 1.0);
    while term > 1e-17 * sum {
        term *= (x / (2.0 * k)) * (x / (2.0 * k));
        sum += term;
        k += 1.0;
    }
    sum
}

/// The 1D weights of a coordinate `c` (in grid units): `[(index, weight)]`, the point
/// alone when `c` is a whole number.
fn weights_1d(c: f64) -> Vec<(usize, f64)> {
    let base = c.floor();
    if c == base {
        return vec![(base as usize, 1.0)];
    }
    let r = HICKS_RADIUS as f64;
    let lo = base as i64 - HICKS_RADIUS as i64 + 1;
    (lo..lo + 2 * HICKS_RADIUS as i64)
        .map(|i| {
            let x = i as f64 - c;
            let sinc = (std::f64::consts::PI * x).sin() / (std::f64::consts::PI * x);
            let window = bessel_i0(HICKS_KAISER_B * (1.0 - (x / r) * (x / r)).max(0.0).sqrt())
                / bessel_i0(HICKS_KAISER_B);
            (i.max(0) as usize, sinc * window)
        })
        .collect()
}

/// The grid points and weights of a position (metres, `[z, x]` or `[z, y, x]`).
type Stencil<const D: usize> = Vec<([usize; D], f64)>;

/// A [`WaveOperator`] whose source and receivers sit at positions in metres.
pub struct OffGridOperator<'a, E: ExecutionSpace, T: Real, const D: usize> {
    op: &'a WaveOperator<E, T, D>,
    source: Stencil<D>,
    receivers: Vec<Stencil<D>>,
}

impl<E: ExecutionSpace, T: Real, const D: usize> WaveOperator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// This operator with the source at `source` and the receivers at `receivers`
    /// (metres from the grid's first point, `[z, x]` or `[z, y, x]`), in place of the
    /// config's points. Error: a position whose window (`HICKS_RADIUS` points each side)
    /// leaves the interior the step updates, naming the position and the room it needs.
    pub fn off_grid(
        &self,
        source: [f64; D],
        receivers: &[[f64; D]],
    ) -> Result<OffGridOperator<'_, E, T, D>> {
        Ok(OffGridOperator {
            op: self,
            source: self.hicks(source, "source")?,
            receivers: receivers
                .iter()
                .enumerate()
                .map(|(i, &r)| self.hicks(r, &format!("receiver {i}")))
                .collect::<Result<_>>()?,
        })
    }

    /// The points and weights of the position `at` (metres), all within the interior.
    fn hicks(&self, at: [f64; D], what: &str) -> Result<Stencil<D>> {
        let r = self.config.radius();
        let dh = self.config.dh;
        let mut axes = Vec::with_capacity(D);
        for (a, &m) in at.iter().enumerate() {
            let c = m / dh;
            let w = if c.is_finite() && c >= 0.0 {
                weights_1d(c)
            } else {
                Vec::new()
            };
            let inside = !w.is_empty() && w.iter().all(|&(i, _)| i >= r && i + r < self.shape[a]);
            if !inside {
                return Err(Error::invalid(
                    Param::Other(format!("{what} position")),
                    format!("{at:?} m"),
                    format!(
                        "its interpolation window ({HICKS_RADIUS} points each side of an off-grid \
                         coordinate) must lie within the interior, {r} points from each side of the grid {}",
                        self.config.grid_words()
                    ),
                ));
            }
            axes.push(w);
        }
        let mut out: Stencil<D> = vec![([0; D], 1.0)];
        for (a, w) in axes.iter().enumerate() {
            out = out
                .iter()
                .flat_map(|&(p, pw)| {
                    w.iter().map(move |&(i, wi)| {
                        let mut q = p;
                        q[a] = i;
                        (q, pw * wi)
                    })
                })
                .collect();
        }
        Ok(out)
    }
}

impl<E: ExecutionSpace, T: Real, const D: usize> OffGridOperator<'_, E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// `F m`: the wavelet `wavelet` (`nt` values) spread over the source's window, the
    /// traces (`nt × nrec`) the weighted sums over each receiver's window.
    pub fn forward(&self, wavelet: &[T]) -> Result<Vec<T>> {
        let op = self.op;
        let nt = op.config.nt;
        check_len("wavelet", wavelet.len(), nt, "nt")?;
        let at: Vec<[usize; D]> = self.source.iter().map(|p| p.0).collect();
        let sw: Vec<T> = self.source.iter().map(|p| T::lit(p.1)).collect();
        let (points, weights, owner) = flatten(&self.receivers);
        let n = points.len();
        let mut raw = vec![T::ZERO; nt * n];
        let mut stepper = Stepper::new(op, Direction::Forward)?;
        let value = |k: usize, j: usize| wavelet[k] * sw[j];
        op.sweep(&mut stepper, &at, value, &points, &mut raw, |_, _| Ok(()))?;
        Ok(gather(&raw, nt, &weights, &owner, self.receivers.len()))
    }

    /// `F* d`: the exact transpose of [`forward`](Self::forward): the traces `d`
    /// (`nt × nrec`) spread over the receivers' windows in reverse time, the result (`nt`
    /// values) the weighted sum over the source's window.
    pub fn adjoint(&self, traces: &[T]) -> Result<Vec<T>> {
        let op = self.op;
        let (nt, nrec) = (op.config.nt, self.receivers.len());
        check_len("traces", traces.len(), nt * nrec, "nt x receivers")?;
        let (points, weights, owner) = flatten(&self.receivers);
        let w: Vec<T> = weights.iter().map(|&x| T::lit(x)).collect();
        let value = |k: usize, j: usize| traces[(nt - 1 - k) * nrec + owner[j]] * w[j];
        let at: Vec<[usize; D]> = self.source.iter().map(|p| p.0).collect();
        let sw: Vec<f64> = self.source.iter().map(|p| p.1).collect();
        let mut raw = vec![T::ZERO; nt * at.len()];
        let mut stepper = Stepper::new(op, Direction::Adjoint)?;
        op.sweep(&mut stepper, &points, value, &at, &mut raw, |_, _| Ok(()))?;
        let mut out = gather(&raw, nt, &sw, &vec![0; at.len()], 1);
        out.reverse();
        Ok(out)
    }
}

/// The receivers' windows one after another: the points, their weights and owners.
fn flatten<const D: usize>(r: &[Stencil<D>]) -> (Vec<[usize; D]>, Vec<f64>, Vec<usize>) {
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    for (i, s) in r.iter().enumerate() {
        for &(p, w) in s {
            out.0.push(p);
            out.1.push(w);
            out.2.push(i);
        }
    }
    out
}

/// Row `k` of `raw` (one value per window point) summed with `weights` into `n` owners.
fn gather<T: Real>(raw: &[T], nt: usize, weights: &[f64], owner: &[usize], n: usize) -> Vec<T> {
    let m = weights.len();
    let w: Vec<T> = weights.iter().map(|&x| T::lit(x)).collect();
    let mut out = vec![T::ZERO; nt * n];
    for k in 0..nt {
        for j in 0..m {
            let o = &mut out[k * n + owner[j]];
            let term = w[j] * raw[k * m + j];
            // An owner's first point sets its value (a weight of 1 keeps the sample's bits).
            *o = if j == 0 || owner[j] != owner[j - 1] {
                term
            } else {
                *o + term
            };
        }
    }
    out
}
