//! Sums over the shots of a survey: what one shot adds ([`Part`]) and the running sum
//! ([`ShotSum`]), added in shot order so that the same parts give the same bits wherever
//! they were computed (one process, or the ranks of `ranks.rs`).

use super::{HostFieldN, MisfitGradient};
use crate::{Real, Result};

/// One shot's share of a sum over shots.
pub(super) struct Part<T: Real, const D: usize> {
    /// `½ ‖F m − d_obs‖²` of the shot, in f64.
    pub(super) misfit: f64,
    /// The predicted traces `F m` (`nt × nrec`).
    pub(super) traces: Vec<T>,
    /// The accumulated field on the host; `None` for a misfit alone.
    pub(super) field: Option<HostFieldN<T, D>>,
    /// Forward steps run again from checkpoints.
    pub(super) recomputed: usize,
}

/// The sum of the parts added so far: the misfit in f64, the traces one shot after another,
/// the fields point by point from zero, the recomputed steps.
pub(super) struct ShotSum<T: Real, const D: usize> {
    misfit: f64,
    traces: Vec<T>,
    total: HostFieldN<T, D>,
    recomputed: usize,
}

impl<T: Real, const D: usize> ShotSum<T, D> {
    /// The empty sum over fields of `shape`.
    pub(super) fn new(shape: [usize; D]) -> Result<Self> {
        Ok(ShotSum {
            misfit: 0.0,
            traces: Vec::new(),
            total: HostFieldN::<T, D>::zeros(shape)?,
            recomputed: 0,
        })
    }

    /// Adds the next shot's `part`.
    pub(super) fn add(&mut self, part: &Part<T, D>) {
        self.misfit += part.misfit;
        self.traces.extend_from_slice(&part.traces);
        self.recomputed += part.recomputed;
        if let Some(field) = &part.field {
            for (a, &b) in self.total.as_mut_slice().iter_mut().zip(field.as_slice()) {
                *a = *a + b;
            }
        }
    }

    /// The sum as a result, `checkpoints` the storage every shot used.
    pub(super) fn finish(self, checkpoints: Option<usize>) -> MisfitGradient<T, D> {
        MisfitGradient {
            misfit: self.misfit,
            traces: self.traces,
            gradient: self.total,
            recomputed_steps: self.recomputed,
            checkpoints,
        }
    }
}
