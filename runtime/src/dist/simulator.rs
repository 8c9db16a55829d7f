//! [`DistributedSimulator`]: the 2D acoustic solver of [`WaveSimulator`](crate::WaveSimulator)
//! run over the ranks of an MPI communicator, each rank on its box of a [`Decomposition`].
//!
//! It reuses [`WaveConfig`], its checks and the physics of `solver` (the velocity of a point,
//! the damping, the wavelet) and the same kernels, each launched on the rank's part of the
//! domain, so every point gets the same arithmetic as in one process: the results are
//! bit-identical. One step: the set source (on the rank owning it), the halo exchange of `p`
//! overlapped with the step on the points that read no halo, the step on the strips next to
//! the halo, the additive source, the absorbing layer, the rotation, the receivers.

use super::decomp::{intersect, is_empty, peel, to_local, Decomposition};
use super::halo::HaloExchange;
use crate::kernels::{
    add_source, fd_kv2, fd_step_in, inject_source, FdAbsorb, FdPxx, FdPzz, FdTime,
};
use crate::launch::launch_in_region;
use crate::receivers::Seismogram;
use crate::solver::SourceMode;
use crate::solver::{
    absorbing_eta, layer_depth, non_finite, source_sample, StepKernels, WaveConfig,
    FINITE_CHECK_EVERY,
};
use crate::{Error, ExecutionSpace, HostField, MemSpaceHost, Param, Real, Result, ScalarField};
use mpi::datatype::Equivalence;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::marker::PhantomData;
use std::ops::Range;
use std::time::{Duration, Instant};

type Box2 = [Range<usize>; 2];

/// Timing of one distributed run (the largest over the ranks).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistStats {
    /// Time steps run.
    pub steps: usize,
    /// Wall time of the time loop (preparation and gathering included).
    pub wall: Duration,
    /// Time in the halo exchange (packing, waiting, unpacking), largest over the ranks.
    pub exchange: Duration,
    /// Time in the step's kernels, largest over the ranks.
    pub compute: Duration,
    /// Halo bytes sent per step by the rank sending the most.
    pub halo_bytes_per_step: usize,
    /// Grid points updated per second, in millions (`nz · nx · nt / wall`).
    pub mpoints_per_s: f64,
}

/// The results, on rank 0 only: the whole final wavefield and the seismogram.
pub struct DistResults<T: Real> {
    /// The pressure after the last step, the whole grid.
    pub wavefield: HostField<T>,
    /// The receivers' traces.
    pub seismogram: Seismogram<T>,
}

/// The 2D acoustic solver over the ranks of `comm`; every rank calls the same methods with
/// the same configuration. Host execution spaces (serial or rayon inside each rank).
pub struct DistributedSimulator<
    E: ExecutionSpace<Memory = MemSpaceHost>,
    T: Real + Equivalence = f32,
> {
    space: E,
    config: WaveConfig,
    comm: SimpleCommunicator,
    decomp: Decomposition<2>,
    element: PhantomData<T>,
}

impl<E: ExecutionSpace<Memory = MemSpaceHost>, T: Real + Equivalence> DistributedSimulator<E, T> {
    /// A simulator of `config` over `comm`, split as `parts` (`None`: [`Decomposition::balanced`]).
    /// Every check (the configuration, the decomposition against the number of ranks and the
    /// stencil radius) happens here, identically on every rank, before any message.
    pub fn new(
        space: E,
        config: WaveConfig,
        comm: SimpleCommunicator,
        parts: Option<[usize; 2]>,
    ) -> Result<Self> {
        config.validate_for::<T>()?;
        // What the distributed step does not do yet is refused, never silently replaced.
        if config.dims() != 2 {
            return Err(Error::invalid(
                Param::Ny,
                config.ny,
                "distributed runs are 2D for now: run a 3D model in one process",
            ));
        }
        if config.layer() == Some(crate::solver::Boundary::Pml) {
            return Err(Error::invalid(
                Param::Boundary,
                "pml",
                "distributed runs have the sponge layer only for now: use boundary sponge, or one process",
            ));
        }
        let ranks = comm.size() as usize;
        let (shape, r) = ([config.nz, config.nx], config.radius());
        let decomp = match parts {
            Some(p) => Decomposition::for_ranks(shape, p, ranks, r)?,
            None => Decomposition::balanced(shape, ranks, r)?,
        };
        Ok(DistributedSimulator {
            space,
            config,
            comm,
            decomp,
            element: PhantomData,
        })
    }

    /// The decomposition in use.
    pub fn decomposition(&self) -> &Decomposition<2> {
        &self.decomp
    }

    /// This rank's number.
    pub fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    /// Runs all `nt` steps; returns the timing on every rank and the results on rank 0.
    /// An error on one rank (say a value that is not finite) returns on that rank only: the
    /// caller must then stop the others (`comm.abort`), which wait for its messages.
    pub fn run(&mut self) -> Result<(DistStats, Option<DistResults<T>>)> {
        let start = Instant::now();
        let c = self.config.clone();
        let space = &self.space;
        let rank = self.rank();
        let r = c.radius();
        let d = &self.decomp;
        let own = d.owned(rank);
        let local = d.local(rank, r);
        let origin = [local[0].start, local[1].start];
        let (lnz, lnx) = (local[0].len(), local[1].len());
        let v = HostField::<T>::from_fn(lnz, lnx, |i, j| {
            T::lit(c.velocity_at(origin[0] + i, origin[1] + j))
        })?;
        let eta = if c.absorb > 0 {
            let w = c.absorb;
            Some(HostField::<T>::from_fn(lnz, lnx, |i, j| {
                let (z, x) = (origin[0] + i, origin[1] + j);
                let vel = v.as_slice()[i * lnx + j].to_f64();
                let ez = absorbing_eta(layer_depth(z, c.nz, w), w, vel, c.dh, c.dt);
                let ex = absorbing_eta(layer_depth(x, c.nx, w), w, vel, c.dh, c.dt);
                T::lit(ez + ex)
            })?)
        } else {
            None
        };
        let v_src = T::lit(c.velocity_at(c.src_z, c.src_x)).to_f64();
        let wavelet: Vec<T> = (0..c.nt)
            .map(|it| source_sample::<T>(&c, v_src, it))
            .collect();
        let inside = |z: usize, x: usize| own[0].contains(&z) && own[1].contains(&x);
        let src = inside(c.src_z, c.src_x).then(|| (c.src_z - origin[0], c.src_x - origin[1]));
        let receivers: Vec<(usize, usize)> = c
            .receivers
            .iter()
            .enumerate()
            .filter(|(_, &(z, x))| inside(z, x))
            .map(|(k, &(z, x))| (k, (z - origin[0]) * lnx + (x - origin[1])))
            .collect();
        let mut traces = vec![T::ZERO; c.nt * receivers.len()];

        // Where this rank computes: its part of the stencil's domain; the points that read no
        // halo (at least r from every side with a neighbour) and the strips around them.
        let domain: Box2 = [r..c.nz - r, r..c.nx - r];
        let work = to_local(&intersect(&own, &domain), origin);
        let mut core = work.clone();
        for (a, axis) in core.iter_mut().enumerate() {
            if d.neighbour(rank, a, false).is_some() {
                axis.start = (axis.start + r).min(axis.end);
            }
            if d.neighbour(rank, a, true).is_some() {
                axis.end = axis.end.saturating_sub(r).max(axis.start);
            }
        }
        let strips = if is_empty(&work) {
            vec![]
        } else {
            peel(&work, &core)
        };
        // The layer's boxes as the single-process step launches them, cut to this rank.
        let layer: Vec<Box2> = crate::solver::layer_boxes([c.nz, c.nx], c.absorb, 0)
            .iter()
            .map(|b| to_local(&intersect(b, &own), origin))
            .filter(|b| !is_empty(b))
            .collect();

        let mut p = ScalarField::<MemSpaceHost, T>::new(lnz, lnx)?;
        let mut pold = ScalarField::<MemSpaceHost, T>::new(lnz, lnx)?;
        let mut pnew = ScalarField::<MemSpaceHost, T>::new(lnz, lnx)?;
        let dtdh2 = T::lit((c.dt / c.dh) * (c.dt / c.dh));
        let mut kv2 = ScalarField::<MemSpaceHost, T>::new(lnz, lnx)?;
        let (mut pxx, mut pzz) = match c.kernels {
            StepKernels::Split => (
                Some(ScalarField::new(lnz, lnx)?),
                Some(ScalarField::new(lnz, lnx)?),
            ),
            StepKernels::Fused => {
                fd_kv2(space, &mut kv2, &v, dtdh2)?;
                (None, None)
            }
        };
        let mut halo = HaloExchange::<T>::new(d, rank, r);
        let mut compute = Duration::ZERO;
        let step_on = |b: &Box2,
                       pnew: &mut HostField<T>,
                       p: &HostField<T>,
                       pold: &HostField<T>,
                       pxx: &mut Option<HostField<T>>,
                       pzz: &mut Option<HostField<T>>|
         -> Result<()> {
            if is_empty(b) {
                return Ok(());
            }
            match (pxx, pzz) {
                (Some(pxx), Some(pzz)) => {
                    launch_in_region::<FdPzz, E, T, 2>(space, b.clone(), &mut [pzz], &[p], &[])?;
                    launch_in_region::<FdPxx, E, T, 2>(space, b.clone(), &mut [pxx], &[p], &[])?;
                    launch_in_region::<FdTime, E, T, 2>(
                        space,
                        b.clone(),
                        &mut [pnew],
                        &[p, pold, &v, pxx, pzz],
                        &[dtdh2],
                    )
                }
                _ => {
                    let [rows, cols] = b.clone();
                    fd_step_in(space, c.space_order, rows, cols, pnew, p, pold, &kv2)
                }
            }
        };

        for (it, &w) in wavelet.iter().enumerate() {
            if let (SourceMode::Set, Some((z, x))) = (c.source_mode, src) {
                add_source(space, &mut p, w, z, x)?;
            }
            let mut in_core = Duration::ZERO;
            halo.exchange(&self.comm, &mut p, |p| {
                let t = Instant::now();
                let res = step_on(&core, &mut pnew, p, &pold, &mut pxx, &mut pzz);
                in_core = t.elapsed();
                res
            })?;
            let t_strips = Instant::now();
            for b in &strips {
                step_on(b, &mut pnew, &p, &pold, &mut pxx, &mut pzz)?;
            }
            if let (SourceMode::Add, Some((z, x))) = (c.source_mode, src) {
                inject_source(space, &mut pnew, w, z, x)?;
            }
            if let Some(eta) = &eta {
                for b in &layer {
                    launch_in_region::<FdAbsorb, E, T, 2>(
                        space,
                        b.clone(),
                        &mut [&mut pnew],
                        &[&pold, eta],
                        &[],
                    )?;
                }
            }
            compute += in_core + t_strips.elapsed();
            pold.swap(&mut p);
            p.swap(&mut pnew);
            let nrec = receivers.len();
            let row = &mut traces[it * nrec..(it + 1) * nrec];
            for (o, &(k, at)) in row.iter_mut().zip(&receivers) {
                *o = p.as_slice()[at];
                if !o.to_f64().is_finite() {
                    let (z, x) = c.receivers[k];
                    let pos = format!("row {z}, column {x}");
                    return Err(non_finite::<T>(it + 1, *o, &pos, "at receiver"));
                }
            }
            if let Some((z, x)) = src {
                let s = p.as_slice()[z * lnx + x];
                if !s.to_f64().is_finite() {
                    let pos = format!("row {}, column {}", c.src_z, c.src_x);
                    return Err(non_finite::<T>(it + 1, s, &pos, "at the source,"));
                }
            }
            if (it + 1) % FINITE_CHECK_EVERY == 0 || it + 1 == c.nt {
                let own_local = to_local(&own, origin);
                for z in own_local[0].clone() {
                    for x in own_local[1].clone() {
                        let s = p.as_slice()[z * lnx + x];
                        if !s.to_f64().is_finite() {
                            let pos = format!("row {}, column {}", z + origin[0], x + origin[1]);
                            return Err(non_finite::<T>(it + 1, s, &pos, "at"));
                        }
                    }
                }
            }
        }
        self.space.synchronize()?;
        let results = self.gather(&p, origin, &traces)?;
        let wall = start.elapsed();
        let mine = [
            halo.time().as_secs_f64(),
            compute.as_secs_f64(),
            wall.as_secs_f64(),
            (halo.bytes_sent() / c.nt.max(1)) as f64,
        ];
        let mut most = [0.0f64; 4];
        self.comm.all_reduce_into(
            &mine[..],
            &mut most[..],
            mpi::collective::SystemOperation::max(),
        );
        let points = (c.nz * c.nx) as f64 * c.nt as f64;
        Ok((
            DistStats {
                steps: c.nt,
                wall: Duration::from_secs_f64(most[2]),
                exchange: Duration::from_secs_f64(most[0]),
                compute: Duration::from_secs_f64(most[1]),
                halo_bytes_per_step: most[3] as usize,
                mpoints_per_s: points / most[2].max(1e-12) / 1e6,
            },
            results,
        ))
    }

    /// Rank 0 receives every rank's owned box of `p` and its traces and assembles them.
    fn gather(
        &self,
        p: &HostField<T>,
        origin: [usize; 2],
        traces: &[T],
    ) -> Result<Option<DistResults<T>>> {
        const FIELD: i32 = 100;
        const TRACES: i32 = 101;
        let c = &self.config;
        let d = &self.decomp;
        let rank = self.rank();
        let lnx = p.nx();
        let pack = |own: &Box2, origin: [usize; 2], values: &[T]| -> Vec<T> {
            let mut out = Vec::with_capacity(own[0].len() * own[1].len());
            for z in own[0].clone() {
                let at = (z - origin[0]) * lnx + own[1].start - origin[1];
                out.extend_from_slice(&values[at..at + own[1].len()]);
            }
            out
        };
        if rank != 0 {
            let root = self.comm.process_at_rank(0);
            root.send_with_tag(&pack(&d.owned(rank), origin, p.as_slice())[..], FIELD);
            if !traces.is_empty() {
                root.send_with_tag(traces, TRACES);
            }
            return Ok(None);
        }
        let mut wavefield = HostField::<T>::new(c.nz, c.nx)?;
        let nrec = c.receivers.len();
        let mut data = vec![T::ZERO; c.nt * nrec];
        let inside =
            |own: &Box2, (z, x): (usize, usize)| own[0].contains(&z) && own[1].contains(&x);
        for q in 0..d.ranks() {
            let own = d.owned(q);
            let (block, theirs): (Vec<T>, Vec<T>) = if q == 0 {
                (pack(&own, origin, p.as_slice()), traces.to_vec())
            } else {
                let from = self.comm.process_at_rank(q as i32);
                let mut block = vec![T::ZERO; own[0].len() * own[1].len()];
                from.receive_into_with_tag(&mut block[..], FIELD);
                let n = c.receivers.iter().filter(|&&rc| inside(&own, rc)).count();
                let mut theirs = vec![T::ZERO; c.nt * n];
                if n > 0 {
                    from.receive_into_with_tag(&mut theirs[..], TRACES);
                }
                (block, theirs)
            };
            let w = own[1].len();
            for (i, z) in own[0].clone().enumerate() {
                wavefield.as_mut_slice()[z * c.nx + own[1].start..][..w]
                    .copy_from_slice(&block[i * w..(i + 1) * w]);
            }
            let ks: Vec<usize> = (0..nrec)
                .filter(|&k| inside(&own, c.receivers[k]))
                .collect();
            for it in 0..c.nt {
                for (j, &k) in ks.iter().enumerate() {
                    data[it * nrec + k] = theirs[it * ks.len() + j];
                }
            }
        }
        Ok(Some(DistResults {
            wavefield,
            seismogram: Seismogram {
                nt: c.nt,
                nrec,
                dt: c.dt,
                positions: c.receivers.clone(),
                data,
            },
        }))
    }
}
