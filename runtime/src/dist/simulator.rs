//! [`DistributedSimulator`]: the acoustic solver of [`WaveSimulator`](crate::WaveSimulator),
//! 2D or 3D, run over the ranks of an MPI communicator, each rank on its box of a
//! [`Decomposition`].
//!
//! It reuses [`WaveConfig`], its checks and the physics of `solver` (the velocity of a point,
//! the damping, the wavelet) and the same kernels ([`WaveKernels`] for what differs between
//! 2D and 3D), each launched on the rank's part of the domain, so every point gets the same
//! arithmetic as in one process: the results are bit-identical. One step: the set source (on
//! the rank owning it), the halo exchange of `p` overlapped with the step on the points that
//! read no halo, the step on the strips next to the halo, the additive source, the absorbing
//! layer, the rotation, the receivers.

use super::decomp::{intersect, is_empty, peel, to_local, Decomposition};
use super::halo::{points, runs, zyx, HaloExchange};
use crate::kernels::{FdPxx, FdPzz, FdTime};
use crate::launch::{axes, launch_in_region};
use crate::receivers::Seismogram;
use crate::solver::{
    layer_boxes, non_finite, pml_boxes, position_words, side_velocities, sponge_eta_at, Boundary,
    Dims, Pml, PmlBox, PmlRows, SourceMode, StepKernels, WaveConfig, WaveKernels,
    FINITE_CHECK_EVERY, PML_HALO, PML_RADIUS,
};
use crate::{Error, ExecutionSpace, MemSpaceHost, Param, Real, Result, ScalarField};
use mpi::datatype::Equivalence;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::marker::PhantomData;
use std::ops::Range;
use std::time::{Duration, Instant};

/// A host field of `D` dimensions.
type Field<T, const D: usize> = ScalarField<MemSpaceHost, T, D>;

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
    /// Grid points updated per second, in millions (`nz · (ny ·) nx · nt / wall`).
    pub mpoints_per_s: f64,
}

/// The results, on rank 0 only: the whole final wavefield and the seismogram.
pub struct DistResults<T: Real, const D: usize = 2> {
    /// The pressure after the last step, the whole grid.
    pub wavefield: Field<T, D>,
    /// The receivers' traces.
    pub seismogram: Seismogram<T>,
}

/// The acoustic solver over the ranks of `comm`, in `D` = 2 (the default) or 3 dimensions;
/// every rank calls the same methods with the same configuration. Host execution spaces
/// (serial or rayon inside each rank).
pub struct DistributedSimulator<
    E: ExecutionSpace<Memory = MemSpaceHost>,
    T: Real + Equivalence = f32,
    const D: usize = 2,
> {
    space: E,
    config: WaveConfig,
    comm: SimpleCommunicator,
    decomp: Decomposition<D>,
    element: PhantomData<T>,
}

/// The halo of a rank's fields: the stencil's radius, and with a PML at least [`PML_HALO`]
/// (each rank computes the PML's memory variables next to its points itself).
fn halo_width(c: &WaveConfig) -> usize {
    match c.layer() {
        Some(Boundary::Pml) => c.radius().max(PML_HALO),
        _ => c.radius(),
    }
}

/// The `[z, y, x]` point of a `D`-dimensional index (`y` = 0 in 2D).
fn zyx_point<const D: usize>(g: [usize; D]) -> [usize; 3] {
    let mut out = [0; 3];
    for (&a, &i) in axes(D).iter().zip(&g) {
        out[a] = i;
    }
    out
}

/// The `D`-dimensional index of a `[z, y, x]` point.
fn d_point<const D: usize>(p: [usize; 3]) -> [usize; D] {
    std::array::from_fn(|i| p[axes(D)[i]])
}

/// The flat index of `i` in a field of `shape`.
fn flat<const D: usize>(i: [usize; D], shape: [usize; D]) -> usize {
    (0..D).fold(0, |k, a| k * shape[a] + i[a])
}

/// The local field of `shape` at global `origin` whose point `i` is `f(global index)`.
fn field_from<T: Real, const D: usize>(
    shape: [usize; D],
    origin: [usize; D],
    f: impl Fn([usize; D]) -> T,
) -> Result<Field<T, D>> {
    let mut out = Field::<T, D>::zeros(shape)?;
    for (k, o) in out.as_mut_slice().iter_mut().enumerate() {
        *o = f(global_of(k, shape, origin));
    }
    Ok(out)
}

/// A rank's sponge: its damping `eta` and the layer's boxes in local indices.
type RankSponge<T, const D: usize> = (Field<T, D>, Vec<[Range<usize>; D]>);

/// The sponge on the rank owning `own` (local fields from global `origin`, velocity `v`): its
/// damping `eta` on the rank's field and the layer's boxes as the single-process step
/// launches them, cut to the rank; `None` without a sponge.
fn rank_sponge<T: Real, const D: usize>(
    c: &WaveConfig,
    v: &Field<T, D>,
    own: &[Range<usize>; D],
    origin: [usize; D],
) -> Result<Option<RankSponge<T, D>>> {
    if c.layer() != Some(Boundary::Sponge) {
        return Ok(None);
    }
    let (shape, lshape) = (d_point::<D>([c.nz, c.ny, c.nx]), v.shape());
    let vs = v.as_slice();
    let eta = field_from::<T, D>(lshape, origin, |g| {
        let l: [usize; D] = std::array::from_fn(|a| g[a] - origin[a]);
        T::lit(sponge_eta_at(c, shape, g, vs[flat(l, lshape)].to_f64()))
    })?;
    let layer = layer_boxes(shape, c.absorb, 0)
        .iter()
        .map(|b| to_local(&intersect(b, own), origin))
        .filter(|b| !is_empty(b))
        .collect();
    Ok(Some((eta, layer)))
}

/// The step's fields besides the levels: `kv2`, and `pxx`, `pzz` for the split kernels.
type StepWork<T, const D: usize> = (Field<T, D>, Option<Field<T, D>>, Option<Field<T, D>>);

/// The step's fields besides the levels, on a rank's field of `v`'s shape: `kv2` for the
/// fused step (computed from `v`), or zeroed `pxx`, `pzz` for the split kernels.
fn step_work<E: ExecutionSpace<Memory = MemSpaceHost>, T: Real, const D: usize>(
    space: &E,
    c: &WaveConfig,
    v: &Field<T, D>,
    dtdh2: T,
) -> Result<StepWork<T, D>>
where
    Dims<D>: WaveKernels<D>,
{
    let lshape = v.shape();
    let mut kv2 = Field::<T, D>::zeros(lshape)?;
    Ok(match c.kernels {
        StepKernels::Split => (
            kv2,
            Some(Field::zeros(lshape)?),
            Some(Field::zeros(lshape)?),
        ),
        StepKernels::Fused => {
            Dims::<D>::kv2(space, &mut kv2, v, dtdh2)?;
            (kv2, None, None)
        }
    })
}

/// The receivers this rank owns: each one's index in the configuration's list and its flat
/// index in the rank's local field (of `lshape`, from global `origin`).
fn rank_receivers<const D: usize>(
    c: &WaveConfig,
    own: &[Range<usize>; D],
    origin: [usize; D],
    lshape: [usize; D],
) -> Vec<(usize, usize)> {
    c.receiver_points()
        .iter()
        .enumerate()
        .map(|(k, &p)| (k, d_point::<D>(p)))
        .filter(|&(_, g)| (0..D).all(|a| own[a].contains(&g[a])))
        .map(|(k, g)| (k, flat(std::array::from_fn(|a| g[a] - origin[a]), lshape)))
        .collect()
}

/// Where rank `rank` computes, in local indices: its part of the stencil's domain (radius `r`
/// from every side) as the core, the points that read no halo (at least `r` from every side
/// with a neighbour), and the strips around it.
fn work_parts<const D: usize>(
    d: &Decomposition<D>,
    rank: usize,
    own: &[Range<usize>; D],
    origin: [usize; D],
    r: usize,
) -> ([Range<usize>; D], Vec<[Range<usize>; D]>) {
    let domain: [Range<usize>; D] = d.shape().map(|n| r..n - r);
    let work = to_local(&intersect(own, &domain), origin);
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
    (core, strips)
}

/// The PML on the rank owning `own` (local fields from global `origin`, velocity `v`): its
/// update on the rank's part of the layer's boxes, its memory variables `psi` also
/// [`PML_RADIUS`] cells beyond (from the exchanged halo), as one process computes them there;
/// `None` without a PML.
fn rank_pml<E: ExecutionSpace<Memory = MemSpaceHost>, T: Real, const D: usize>(
    c: &WaveConfig,
    v: &Field<T, D>,
    own: &[Range<usize>; D],
    origin: [usize; D],
) -> Result<Option<Pml<E, T, D>>>
where
    Dims<D>: WaveKernels<D>,
{
    if c.layer() != Some(Boundary::Pml) {
        return Ok(None);
    }
    let shape = d_point::<D>([c.nz, c.ny, c.nx]);
    let boxes = pml_boxes(shape, c.absorb, c.radius().max(PML_RADIUS));
    let beyond: [Range<usize>; D] = std::array::from_fn(|a| {
        own[a].start.saturating_sub(PML_RADIUS)..(own[a].end + PML_RADIUS).min(shape[a])
    });
    let cut = |part: &[Range<usize>; D]| -> Vec<PmlBox<D>> {
        boxes
            .iter()
            .map(|b| PmlBox {
                region: to_local(&intersect(&b.region, part), origin),
                axes: b.axes.clone(),
            })
            .filter(|b| !is_empty(&b.region))
            .collect()
    };
    let sides = side_velocities(shape, c.absorb, |g| {
        T::lit(c.velocity_at_zyx(zyx_point(g))).to_f64()
    });
    let split = c.kernels == StepKernels::Split;
    Pml::<E, T, D>::prepare_part(c, v, &sides, origin, shape, cut(&beyond), cut(own), split)
        .map(Some)
}

/// The unblocked step's checks after step `it` on a rank: its receivers' samples of `p` into
/// `row` (the configuration's `receivers` as `(index, local flat index)`), the source point
/// (`(local, global)` where the rank owns it), and every `FINITE_CHECK_EVERY` steps and after
/// the last the rank's own box (`own`, local fields from global `origin`). An error names the
/// step and the place of the first non-finite value.
fn check_step<T: Real, const D: usize>(
    c: &WaveConfig,
    it: usize,
    p: &Field<T, D>,
    row: &mut [T],
    receivers: &[(usize, usize)],
    src: Option<([usize; D], [usize; D])>,
    (origin, own): ([usize; D], &[Range<usize>; D]),
) -> Result<()> {
    let shape = d_point::<D>([c.nz, c.ny, c.nx]);
    let lshape = p.shape();
    let where_is = |g: [usize; D]| position_words(flat(g, shape), [c.nz, c.ny, c.nx], D);
    let positions = c.receiver_points();
    for (o, &(k, at)) in row.iter_mut().zip(receivers) {
        *o = p.as_slice()[at];
        if !o.to_f64().is_finite() {
            let pos = where_is(d_point::<D>(positions[k]));
            return Err(non_finite::<T>(it + 1, *o, &pos, "at receiver"));
        }
    }
    if let Some((at, global)) = src {
        let s = p.as_slice()[flat(at, lshape)];
        if !s.to_f64().is_finite() {
            return Err(non_finite::<T>(
                it + 1,
                s,
                &where_is(global),
                "at the source,",
            ));
        }
    }
    if (it + 1).is_multiple_of(FINITE_CHECK_EVERY) || it + 1 == c.nt {
        let mut bad = None;
        runs(
            zyx(&lshape.map(|n| 0..n)).map(|a| a.end),
            &zyx(&to_local(own, origin)),
            |at, n| {
                if bad.is_none() {
                    bad = p.as_slice()[at..at + n]
                        .iter()
                        .position(|s| !s.to_f64().is_finite())
                        .map(|i| at + i);
                }
            },
        );
        if let Some(k) = bad {
            let g = global_of(k, lshape, origin);
            return Err(non_finite::<T>(it + 1, p.as_slice()[k], &where_is(g), "at"));
        }
    }
    Ok(())
}

/// The global index of flat index `k` of a local field of `shape` stored from `origin`.
fn global_of<const D: usize>(k: usize, shape: [usize; D], origin: [usize; D]) -> [usize; D] {
    let mut rest = k;
    let mut g = [0; D];
    for a in (0..D).rev() {
        g[a] = origin[a] + rest % shape[a];
        rest /= shape[a];
    }
    g
}

impl<E: ExecutionSpace<Memory = MemSpaceHost>, T: Real + Equivalence, const D: usize>
    DistributedSimulator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// A simulator of `config` over `comm`, split as `parts` (`None`: [`Decomposition::balanced`]).
    /// Every check (the configuration, the decomposition against the number of ranks and the
    /// stencil radius) happens here, identically on every rank, before any message.
    pub fn new(
        space: E,
        config: WaveConfig,
        comm: SimpleCommunicator,
        parts: Option<[usize; D]>,
    ) -> Result<Self> {
        config.validate_for::<T>()?;
        if config.dims() != D {
            return Err(Error::invalid(
                Param::Ny,
                config.ny,
                format!(
                    "a {D}D distributed simulator cannot run the {}D grid {}: use DistributedSimulator<E, T, {}>",
                    config.dims(),
                    config.grid_words(),
                    config.dims()
                ),
            ));
        }
        if D != 2 && config.kernels == StepKernels::Split {
            return Err(Error::invalid(
                Param::Other("kernels".into()),
                "split",
                "the split kernels are the paper's 2D kernels; a 3D run uses the fused step",
            ));
        }
        let ranks = comm.size() as usize;
        let shape = d_point::<D>([config.nz, config.ny, config.nx]);
        let r = halo_width(&config);
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
    pub fn decomposition(&self) -> &Decomposition<D> {
        &self.decomp
    }

    /// This rank's number.
    pub fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    /// Runs all `nt` steps; returns the timing on every rank and the results on rank 0.
    /// An error on one rank (say a value that is not finite) returns on that rank only: the
    /// caller must then stop the others (`comm.abort`), which wait for its messages.
    pub fn run(&mut self) -> Result<(DistStats, Option<DistResults<T, D>>)> {
        self.run_with(|_, _| Ok(()))
    }

    /// [`run`](Self::run), gathering the whole wavefield on rank 0 every
    /// [`snapshot_every`](WaveConfig::snapshot_every) steps and handing it to
    /// `snapshot(steps_done, wavefield)` there (the other ranks never call it). An error from
    /// `snapshot` returns on rank 0 only, like any one-rank error.
    pub fn run_with(
        &mut self,
        snapshot: impl FnMut(usize, &Field<T, D>) -> Result<()>,
    ) -> Result<(DistStats, Option<DistResults<T, D>>)> {
        crate::with_numerics(self.config.numerics, || self.run_in_place(snapshot))
    }

    /// [`run_with`](Self::run_with) with the thread's numerics as they are.
    fn run_in_place(
        &mut self,
        mut snapshot: impl FnMut(usize, &Field<T, D>) -> Result<()>,
    ) -> Result<(DistStats, Option<DistResults<T, D>>)> {
        let start = Instant::now();
        let c = self.config.clone();
        let space = &self.space;
        let rank = self.rank();
        let d = &self.decomp;
        let own = d.owned(rank);
        let local = d.local(rank, halo_width(&c));
        let origin = local.clone().map(|a| a.start);
        let lshape = local.clone().map(|a| a.len());
        let v = field_from::<T, D>(lshape, origin, |g| T::lit(c.velocity_at_zyx(zyx_point(g))))?;
        let sponge = rank_sponge(&c, &v, &own, origin)?;
        let src_global = d_point::<D>([c.src_z, c.src_y, c.src_x]);
        let v_src = T::lit(c.velocity_at_zyx([c.src_z, c.src_y, c.src_x])).to_f64();
        let wavelet: Vec<T> = (0..c.nt)
            .map(|it| c.source_sample::<T>(v_src, it))
            .collect();
        let inside = |g: [usize; D]| (0..D).all(|a| own[a].contains(&g[a]));
        let src = inside(src_global).then(|| std::array::from_fn(|a| src_global[a] - origin[a]));
        let receivers = rank_receivers(&c, &own, origin, lshape);
        let mut traces = vec![T::ZERO; c.nt * receivers.len()];
        let (core, strips) = work_parts(d, rank, &own, origin, c.radius());

        let mut p = Field::<T, D>::zeros(lshape)?;
        let mut pold = Field::<T, D>::zeros(lshape)?;
        let mut pnew = Field::<T, D>::zeros(lshape)?;
        let dtdh2 = T::lit((c.dt / c.dh) * (c.dt / c.dh));
        let (kv2, mut pxx, mut pzz) = step_work(space, &c, &v, dtdh2)?;
        let mut pml = rank_pml::<E, T, D>(&c, &v, &own, origin)?;
        let mut halo = HaloExchange::<T>::new(d, rank, halo_width(&c));
        let mut compute = Duration::ZERO;
        let step_on = |b: &[Range<usize>; D],
                       pnew: &mut Field<T, D>,
                       p: &Field<T, D>,
                       pold: &Field<T, D>,
                       pxx: &mut Option<Field<T, D>>,
                       pzz: &mut Option<Field<T, D>>|
         -> Result<()> {
            if is_empty(b) {
                return Ok(());
            }
            match (pxx, pzz) {
                // The paper's split kernels (2D only, checked in `new`).
                (Some(pxx), Some(pzz)) => {
                    launch_in_region::<FdPzz, E, T, D>(space, b.clone(), &mut [pzz], &[p], &[])?;
                    launch_in_region::<FdPxx, E, T, D>(space, b.clone(), &mut [pxx], &[p], &[])?;
                    launch_in_region::<FdTime, E, T, D>(
                        space,
                        b.clone(),
                        &mut [pnew],
                        &[p, pold, &v, pxx, pzz],
                        &[dtdh2],
                    )
                }
                _ => Dims::<D>::fused_step_in(space, c.space_order, b.clone(), pnew, p, pold, &kv2),
            }
        };

        for (it, &w) in wavelet.iter().enumerate() {
            if let (SourceMode::Set, Some(at)) = (c.source_mode, src) {
                Dims::<D>::set_source(space, &mut p, w, at)?;
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
            if let (SourceMode::Add, Some(at)) = (c.source_mode, src) {
                Dims::<D>::add_source(space, &mut pnew, w, at)?;
            }
            if let Some(pml) = &mut pml {
                let kv2 = (c.kernels == StepKernels::Fused).then_some(&kv2);
                pml.step(space, &mut pnew, &p, kv2, &PmlRows::ALL, None)?;
            }
            if let Some((eta, layer)) = &sponge {
                for b in layer {
                    launch_in_region::<<Dims<D> as WaveKernels<D>>::Absorb, E, T, D>(
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
            check_step(
                &c,
                it,
                &p,
                row,
                &receivers,
                src.map(|at| (at, src_global)),
                (origin, &own),
            )?;
            if c.snapshot_every.is_some_and(|k| (it + 1) % k == 0) {
                if let Some(whole) = self.gather_field(&p, origin)? {
                    snapshot(it + 1, &whole)?;
                }
            }
        }
        self.space.synchronize()?;
        let results = self.results(&p, origin, &traces)?;
        let stats = self.stats(&halo, compute, start.elapsed());
        Ok((stats, results))
    }

    /// Rank 0's results (the whole final wavefield and the seismogram) gathered from every
    /// rank; `None` on the other ranks.
    fn results(
        &self,
        p: &Field<T, D>,
        origin: [usize; D],
        traces: &[T],
    ) -> Result<Option<DistResults<T, D>>> {
        Ok(match self.gather_field(p, origin)? {
            Some(wavefield) => Some(DistResults {
                wavefield,
                seismogram: self.gather_traces(traces)?,
            }),
            None => {
                self.gather_traces(traces)?;
                None
            }
        })
    }

    /// The run's timing: each figure the largest over the ranks.
    fn stats(&self, halo: &HaloExchange<T>, compute: Duration, wall: Duration) -> DistStats {
        let c = &self.config;
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
        let points = self.decomp.shape().iter().product::<usize>() as f64 * c.nt as f64;
        DistStats {
            steps: c.nt,
            wall: Duration::from_secs_f64(most[2]),
            exchange: Duration::from_secs_f64(most[0]),
            compute: Duration::from_secs_f64(most[1]),
            halo_bytes_per_step: most[3] as usize,
            mpoints_per_s: points / most[2].max(1e-12) / 1e6,
        }
    }

    /// Rank 0 receives every rank's owned box of `p` (stored from `origin`) and assembles
    /// the whole field; `None` on the other ranks.
    fn gather_field(&self, p: &Field<T, D>, origin: [usize; D]) -> Result<Option<Field<T, D>>> {
        const FIELD: i32 = 100;
        let d = &self.decomp;
        let rank = self.rank();
        let lshape = p.zyx();
        // The owned box of rank `q`, packed x-run by x-run from a field of `shape`.
        let pack = |own: &[Range<usize>; D], values: &[T]| -> Vec<T> {
            let mut out = Vec::with_capacity(points(&zyx(own)));
            runs(lshape, &zyx(&to_local(own, origin)), |at, n| {
                out.extend_from_slice(&values[at..at + n]);
            });
            out
        };
        if rank != 0 {
            let root = self.comm.process_at_rank(0);
            root.send_with_tag(&pack(&d.owned(rank), p.as_slice())[..], FIELD);
            return Ok(None);
        }
        let mut whole = Field::<T, D>::zeros(d.shape())?;
        let gshape = whole.zyx();
        for q in 0..d.ranks() {
            let own = d.owned(q);
            let block = if q == 0 {
                pack(&own, p.as_slice())
            } else {
                let mut block = vec![T::ZERO; points(&zyx(&own))];
                let from = self.comm.process_at_rank(q as i32);
                from.receive_into_with_tag(&mut block[..], FIELD);
                block
            };
            let values = whole.as_mut_slice();
            let mut k = 0;
            runs(gshape, &zyx(&own), |at, n| {
                values[at..at + n].copy_from_slice(&block[k..k + n]);
                k += n;
            });
        }
        Ok(Some(whole))
    }

    /// Rank 0 receives every rank's traces (`nt ×` its receivers, in trace order) and
    /// assembles the seismogram; the other ranks send theirs and get an empty one.
    fn gather_traces(&self, traces: &[T]) -> Result<Seismogram<T>> {
        const TRACES: i32 = 101;
        let c = &self.config;
        let d = &self.decomp;
        let positions: Vec<[usize; D]> =
            c.receiver_points().into_iter().map(d_point::<D>).collect();
        let nrec = positions.len();
        let mut seismogram = Seismogram {
            nt: c.nt,
            nrec,
            dt: c.dt,
            positions: c.receiver_points(),
            data: vec![],
        };
        if self.rank() != 0 {
            if !traces.is_empty() {
                let root = self.comm.process_at_rank(0);
                root.send_with_tag(traces, TRACES);
            }
            return Ok(seismogram);
        }
        let mut data = vec![T::ZERO; c.nt * nrec];
        for q in 0..d.ranks() {
            let own = d.owned(q);
            let ks: Vec<usize> = (0..nrec)
                .filter(|&k| (0..D).all(|a| own[a].contains(&positions[k][a])))
                .collect();
            let theirs = if q == 0 {
                traces.to_vec()
            } else {
                let mut theirs = vec![T::ZERO; c.nt * ks.len()];
                if !ks.is_empty() {
                    let from = self.comm.process_at_rank(q as i32);
                    from.receive_into_with_tag(&mut theirs[..], TRACES);
                }
                theirs
            };
            for it in 0..c.nt {
                for (j, &k) in ks.iter().enumerate() {
                    data[it * nrec + k] = theirs[it * ks.len() + j];
                }
            }
        }
        seismogram.data = data;
        Ok(seismogram)
    }
}
