//! Shot-parallel gradients, images and misfits over MPI ranks (feature `mpi`). Shot `i`
//! runs on rank `i mod P`, one shot per rank per batch; after each batch every rank learns
//! whether any failed, then each shot's part is broadcast from its rank and every rank adds
//! the parts in shot order ([`ShotSum`]), so every rank holds what one process computes,
//! bit for bit, whatever `P`. Parts travel as f64 (exact for f32 and f64 values).

use super::gradient::{Condition, Shot, Storage};
use super::shots::{Part, ShotSum};
use super::{HostFieldN, MisfitGradient, WaveOperator};
use crate::solver::dims::{Dims, WaveKernels};
use crate::{Error, ExecutionSpace, Real, Result};
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};
use std::sync::atomic::AtomicUsize;

impl<E: ExecutionSpace, T: Real, const D: usize> WaveOperator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// [`misfit_gradient_shots`](Self::misfit_gradient_shots) with the shots shared out
    /// over the ranks of `comm` (shot `i` on rank `i mod P`): every rank passes the same
    /// shots and receives the same result, equal bit for bit to the single-process sum. An
    /// error on one rank is an error on every rank ([`Error::OtherRank`] on the others).
    pub fn misfit_gradient_ranks(
        &self,
        shots: &[Shot<'_, T, D>],
        storage: Storage,
        comm: &impl Communicator,
    ) -> Result<MisfitGradient<T, D>> {
        self.over_ranks(shots, storage, Some(Condition::Gradient), comm)
    }

    /// [`image_shots`](Self::image_shots) with the shots shared out over the ranks of
    /// `comm`, as [`misfit_gradient_ranks`](Self::misfit_gradient_ranks) shares them.
    pub fn image_ranks(
        &self,
        shots: &[Shot<'_, T, D>],
        storage: Storage,
        comm: &impl Communicator,
    ) -> Result<MisfitGradient<T, D>> {
        self.over_ranks(shots, storage, Some(Condition::Image), comm)
    }

    /// [`misfit_shots`](Self::misfit_shots) with the shots shared out over the ranks of
    /// `comm`, as [`misfit_gradient_ranks`](Self::misfit_gradient_ranks) shares them.
    pub fn misfit_ranks(&self, shots: &[Shot<'_, T, D>], comm: &impl Communicator) -> Result<f64> {
        Ok(self.over_ranks(shots, Storage::Full, None, comm)?.misfit)
    }

    /// The batches of the module docs for `condition` (`None`: the misfit alone).
    fn over_ranks(
        &self,
        shots: &[Shot<'_, T, D>],
        storage: Storage,
        condition: Option<Condition>,
        comm: &impl Communicator,
    ) -> Result<MisfitGradient<T, D>> {
        let checkpoints = self.check_shots(shots, storage)?;
        let (size, rank) = (comm.size() as usize, comm.rank() as usize);
        let mut sum = ShotSum::new(self.shape)?;
        let mut kept = Vec::new();
        let done = AtomicUsize::new(0);
        for first in (0..shots.len()).step_by(size) {
            let mine = shots
                .get(first + rank)
                .map(|s| self.one_shot(s, checkpoints, condition, &mut kept, &done));
            let mut mine = agree(comm, mine)?;
            for i in first..(first + size).min(shots.len()) {
                let owner = i - first;
                let part =
                    self.share(comm, owner, if owner == rank { mine.take() } else { None })?;
                sum.add(&part);
            }
        }
        Ok(sum.finish(checkpoints))
    }

    /// `part` (on rank `owner`) on every rank of `comm`.
    fn share(
        &self,
        comm: &impl Communicator,
        owner: usize,
        part: Option<Part<T, D>>,
    ) -> Result<Part<T, D>> {
        let root = comm.process_at_rank(owner as i32);
        // misfit, recomputed steps, trace values, whether a field follows.
        let mut head = [0.0f64; 4];
        let mut body = Vec::new();
        if let Some(p) = &part {
            head = [
                p.misfit,
                p.recomputed as f64,
                p.traces.len() as f64,
                f64::from(u8::from(p.field.is_some())),
            ];
            body.extend(p.traces.iter().map(|v| v.to_f64()));
            if let Some(f) = &p.field {
                body.extend(f.as_slice().iter().map(|v| v.to_f64()));
            }
        }
        root.broadcast_into(&mut head[..]);
        if let Some(p) = part {
            root.broadcast_into(&mut body[..]);
            return Ok(p);
        }
        let (ntraces, has_field) = (head[2] as usize, head[3] != 0.0);
        let cells: usize = self.shape.iter().product();
        body.resize(ntraces + if has_field { cells } else { 0 }, 0.0);
        root.broadcast_into(&mut body[..]);
        let back = |v: &[f64]| v.iter().map(|&x| T::lit(x)).collect::<Vec<T>>();
        let field = match has_field {
            true => Some(HostFieldN::<T, D>::from_vec_shape(
                self.shape,
                back(&body[ntraces..]),
            )?),
            false => None,
        };
        Ok(Part {
            misfit: head[0],
            traces: back(&body[..ntraces]),
            field,
            recomputed: head[1] as usize,
        })
    }
}

/// This rank's result of a batch (`None`: no shot in this batch) once every rank of `comm`
/// knows whether any failed: this rank's own error, or [`Error::OtherRank`] naming the
/// lowest rank that failed.
fn agree<P>(comm: &impl Communicator, mine: Option<Result<P>>) -> Result<Option<P>> {
    // Ranks as i32, MPI's own type: MPICH's min-reduction of u64::MAX and 1 gives u64::MAX
    // (it compares them as signed).
    let failed = match &mine {
        Some(Err(_)) => comm.rank(),
        _ => i32::MAX,
    };
    let mut lowest = i32::MAX;
    comm.all_reduce_into(&failed, &mut lowest, SystemOperation::min());
    match mine {
        Some(Err(e)) => Err(e),
        Some(Ok(p)) if lowest == i32::MAX => Ok(Some(p)),
        None if lowest == i32::MAX => Ok(None),
        _ => Err(Error::OtherRank {
            rank: lowest as usize,
        }),
    }
}
