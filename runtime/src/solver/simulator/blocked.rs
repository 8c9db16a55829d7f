//! The wave solver's blocked time loop: [`WaveSimulator::step_block`], which advances several
//! time steps in one wavefront sweep ([`wavefront`]) with the source, the receivers and the
//! absorbing layer applied on each band exactly as the unblocked [`WaveSimulator::step`]
//! applies them to the whole field; and the choice, when a run is prepared, of whether and
//! how to block ([`Blocking`]). The schedule itself is generic and lives in
//! `solver/blocking.rs`; the kernels in [`crate::kernels`]. One sweep serves 2D and 3D: a
//! band is a range of the outermost axis z (rows of `nx` points in 2D, planes of `ny × nx`
//! points in 3D), launched with the whole of the inner axes' domain
//! ([`WaveKernels::fused_step_in`]).
//!
//! Per band of step `it` (level `it + 1`), in the unblocked step's order: the fused step on
//! the band, the additive source if the band holds the source row, the absorbing layer on
//! the band's part of its boxes (the PML: `psi`, then `zeta` and the pressure, on the band;
//! no band stops inside the layer's slab across its axis, so the band holds every `psi` its
//! update reads), the receivers in the band, the source value for the
//! step-boundary check, then the set source of step `it + 1` (inside the block only: the
//! block's first set happens before the sweep, as in `step`). Everything a band applies is
//! pointwise, and the wavefront reads a level only after its band was finished, so the
//! blocked run is the unblocked one bit for bit.
//!
//! An `auto` plan's band is then chosen by timing the run's first full blocks
//! ([`BandTuner`]; `solver/tuning.rs`): `step_block` runs each full block with the tuner's
//! plan and reports its time, and the run keeps the fastest band.
//!
//! Blocks never cross a multiple of [`FINITE_CHECK_EVERY`] (the whole-field check) nor a
//! snapshot; errors found on a level (a non-finite receiver or source value) are reported
//! for the earliest level, in the unblocked order, after the sweep.

use super::super::blocking::{
    ring_split, wavefront_tiled, BlockPlan, Blocking, StepShape, TimeBlock,
};
use super::{
    check_finite, fused_source_pml, non_finite, position_words, StepFields, WaveSimulator,
    FINITE_CHECK_EVERY,
};
use crate::launch::launch_in_region;
use crate::solver::config::{Boundary, SourceMode, StepKernels, WaveConfig};
use crate::solver::dims::{trailing, Dims, WaveKernels};
use crate::solver::pml::{layer_boxes, PmlRows, PML_HALO};
use crate::solver::tuning::BandTuner;
use crate::{Error, ExecutionSpace, Param, Real, Result, ScalarField};
use std::time::Instant;

/// The host slice of a field of a blocked run (blocking runs on host memory only).
fn host_values<M: crate::MemorySpace, T: Real, const D: usize>(
    f: &ScalarField<M, T, D>,
) -> Result<&[T]> {
    match f.host_values() {
        Some(values) => Ok(values),
        None => Err(Error::invalid(
            Param::TimeBlock,
            "a device field",
            "temporal blocking runs on host memory only",
        )),
    }
}

impl<E: ExecutionSpace, T: Real, const D: usize> WaveSimulator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// What the time loop of the last prepared run does about temporal blocking (set by
    /// [`prepare`](Self::prepare) from [`WaveConfig::time_block`]); `None` before.
    pub fn blocking(&self) -> Option<&Blocking> {
        self.blocking.as_ref()
    }

    /// The tuner choosing the band of the last prepared `auto` blocked run in its first
    /// blocks: its bands with the least time per step of each ([`BandTuner::trials`]) and,
    /// once every band has run its rounds, the one kept ([`BandTuner::chosen`], then also
    /// [`blocking`](Self::blocking)'s plan). `None` when the run does not tune (not blocked,
    /// a depth or band given, a tiled plan, or too short a run).
    pub fn band_tuner(&self) -> Option<&BandTuner> {
        self.tuner.as_ref()
    }

    /// Decides, for [`prepare`](Self::prepare), whether the run is blocked and how, and for
    /// an `auto` plan whether its band is tuned ([`BandTuner::new`]). Errors:
    /// a depth asked for on a GPU backend or with the split kernels, a band that cannot
    /// hold the stencil's radius, or a [`LLC_ENV`](crate::exec::LLC_ENV) that is not a size.
    pub(super) fn plan_blocking(&self, c: &WaveConfig) -> Result<(Blocking, Option<BandTuner>)> {
        let blocking = self.choose_blocking(c)?;
        let tuner = match (&blocking, c.time_block) {
            (Blocking::On(plan), TimeBlock::Auto) => {
                BandTuner::new(*plan, &Self::step_shape(c)?, c.nt)
            }
            _ => None,
        };
        // A tiled plan re-reads its skewed halo and wins or loses against the unblocked step
        // by a few per cent either way: `auto` keeps it only in a run long enough to time both.
        match (&blocking, &tuner, c.time_block) {
            (Blocking::On(plan), None, TimeBlock::Auto) if plan.tile.is_some() => Ok((
                Blocking::Off(
                    "auto: a tiled plan is kept only where the run is long enough to time it \
                     against one step per pass"
                        .into(),
                ),
                None,
            )),
            _ => Ok((blocking, tuner)),
        }
    }

    /// [`plan_blocking`](Self::plan_blocking)'s plan, before tuning: what
    /// [`TimeBlock::resolve`] makes of the option for this run's step, once this backend
    /// and these kernels can block (else unblocked for `auto`, an error for a depth or
    /// plan), with the depth at most the run's `nt`.
    fn choose_blocking(&self, c: &WaveConfig) -> Result<Blocking> {
        let asked = c.time_block;
        // The host backends' kernels and `auto` read the cache sizes: a bad override is
        // refused here rather than ignored there.
        crate::exec::llc_from_env()?;
        if asked != TimeBlock::Off {
            if let Some((why, fix)) = Self::cannot_block(c) {
                return match asked {
                    TimeBlock::Auto => Ok(Blocking::Off(why)),
                    _ => Err(Error::invalid(
                        Param::TimeBlock,
                        asked.name(),
                        format!("{why}: {fix}"),
                    )),
                };
            }
        }
        let blocking =
            asked.resolve(&Self::step_shape(c)?, c.nz, crate::exec::cache_sizes().llc)?;
        Ok(match blocking {
            Blocking::On(plan) => Blocking::On(BlockPlan {
                depth: plan.depth.min(c.nt),
                ..plan
            }),
            off => off,
        })
    }

    /// Why run `c` cannot be blocked on this backend with its kernels, and the fix; `None`
    /// when it can (a host backend and the fused step).
    fn cannot_block(c: &WaveConfig) -> Option<(String, &'static str)> {
        if !<E::Memory as crate::MemorySpace>::HOST {
            return Some((
                format!(
                    "the {} backend runs one time step per launch (temporal blocking is for the host backends)",
                    E::NAME
                ),
                "use off or auto, or a host backend (serial, rayon)",
            ));
        }
        if c.kernels == StepKernels::Split {
            return Some((
                "the split kernels run one time step per pass".into(),
                "use the fused step, or off",
            ));
        }
        None
    }

    /// The fused step of run `c` as the schedule sees it: its radius, a ring of 3 levels,
    /// the rows (planes in 3D) it updates, the bytes of a row (plane) of its 4 fields, and
    /// its second axis (y in 3D, x in 2D) for tiles.
    /// With the PML no band or tile stops within the layer and [`PML_HALO`] points of either
    /// end of the grid ([`StepShape::ends`]): a step updates the layer's slab across the
    /// band (or tile) axis in one call, where `pml_update` reads `psi`
    /// [`PML_RADIUS`](crate::solver::pml::PML_RADIUS) rows away and each `psi` the level as far
    /// again, and elsewhere the PML's kernels read `psi` and the level only along the other
    /// axes, in the rows being updated. So `psi` is computed on exactly the band's rows and
    /// the steps lag only the fused step's radius (lagging [`PML_HALO`] rows, with `psi` 2
    /// rows ahead of each band, makes the wavefront 1.5 times as tall at order 4 and costs
    /// about 2 % of the PML run's step; `docs/design/0011-temporal-blocking.md`).
    fn step_shape(c: &WaveConfig) -> Result<StepShape> {
        let info = Dims::<D>::fused_step_info(c.space_order)?;
        let plane = if D == 3 { c.ny * c.nx } else { c.nx };
        let shape = StepShape::for_stencil(info, 3, c.nz, plane * info.bytes_per_point::<T>())?
            .with_axis1(if D == 3 { c.ny } else { c.nx })?;
        Ok(match c.layer() {
            // The domain starts `radius` points in: fronts stop at `absorb + PML_HALO` or
            // beyond (and as far from the other end).
            Some(Boundary::Pml) => {
                let ends = (c.absorb + PML_HALO).saturating_sub(shape.radius);
                shape.with_ends(ends)
            }
            _ => shape,
        })
    }

    /// Steps the next block of [`run_with`](Self::run_with) holds: the plan's depth, ending
    /// at the next snapshot (1 when the run is not blocked or none is prepared).
    pub(super) fn block_steps(&self) -> usize {
        let (Some(run), Some(blocking)) = (&self.run, &self.blocking) else {
            return 1;
        };
        match (blocking, run.config.snapshot_every) {
            (Blocking::On(plan), Some(every)) => plan.depth.min(every - run.done % every),
            (Blocking::On(plan), None) => plan.depth,
            (Blocking::Off(_), _) => 1,
        }
    }

    /// Runs up to `k` time steps as one block and returns the index of the last step run
    /// (as [`step`](Self::step) does for one). The block ends early at the last step (`nt`)
    /// and at the next multiple of [`FINITE_CHECK_EVERY`] (the whole-field check). When the
    /// run is blocked ([`blocking`](Self::blocking)), the steps run in one wavefront sweep in
    /// bands of the plan's rows; otherwise they are `k` calls of `step`. Either way the
    /// fields and traces afterwards are those of `k` calls of `step`, bit for bit; snapshots
    /// and a user's reads happen between blocks.
    ///
    /// An error ([`Error::OutOfOrder`]) before [`prepare`](Self::prepare), once all steps
    /// have run, or for `k = 0`.
    pub fn step_block(&mut self, k: usize) -> Result<usize> {
        crate::with_numerics(self.numerics(), || self.step_block_in_place(k))
    }

    /// [`step_block`](Self::step_block) with the thread's numerics as they are.
    fn step_block_in_place(&mut self, k: usize) -> Result<usize> {
        let (done, nt, plan, tuner) = match &self.run {
            Some(run) => (
                run.done,
                run.config.nt,
                match self.blocking {
                    Some(Blocking::On(plan)) => Some(plan),
                    _ => None,
                },
                self.tuner.as_ref().filter(|t| t.chosen().is_none()),
            ),
            None => return self.step(),
        };
        if k == 0 {
            return Err(Error::OutOfOrder {
                call: "WaveSimulator::step_block",
                problem: "a block of 0 steps".into(),
                fix: "ask for at least 1 step",
            });
        }
        let to_check = FINITE_CHECK_EVERY - done % FINITE_CHECK_EVERY;
        let k = k.min(nt.saturating_sub(done)).min(to_check);
        match (plan, tuner) {
            // A full block of a run whose band is being tuned: the tuner's band, timed.
            (Some(plan), Some(tuner)) if k > 1 && k == plan.depth => {
                let plan = tuner.next_plan();
                let start = Instant::now();
                let last = self.on_pacer_width(|s| match plan.is_unblocked() {
                    true => s.steps(k),
                    false => s.sweep(k, plan),
                })?;
                let elapsed = start.elapsed();
                let tuner = self.tuner.as_mut().expect("a tuned run");
                if let Some(chosen) = tuner.record(plan, k, elapsed) {
                    let blocking = if chosen.is_unblocked() {
                        Blocking::Off("auto: one step per pass timed fastest".into())
                    } else {
                        Blocking::On(chosen)
                    };
                    self.blocking = Some(blocking);
                }
                Ok(last)
            }
            (Some(plan), _) if k > 1 => self.paced(|s| s.sweep(k, plan)),
            _ => self.paced(|s| s.steps(k)),
        }
    }

    /// `k >= 1` steps as [`step`](Self::step) runs them, under the numerics
    /// [`step_block`](Self::step_block) set; the index of the last.
    fn steps(&mut self, k: usize) -> Result<usize> {
        let mut last = self.step_in_place()?;
        for _ in 1..k {
            last = self.step_in_place()?;
        }
        Ok(last)
    }

    /// `k >= 2` steps of a blocked run in one wavefront sweep of bands of `plan.band` rows
    /// (2D) or planes (3D), in tiles of `plan.tile` points of the second axis if any.
    fn sweep(&mut self, k: usize, plan: BlockPlan) -> Result<usize> {
        let space = &self.space;
        let run = self.run.as_mut().expect("step_block checked the run");
        let super::Run {
            config: c,
            done,
            p,
            pold,
            pnew,
            work,
            eta,
            pml,
            wavelet,
            receivers,
            traces,
            ..
        } = run;
        let StepFields::Fused { kv2 } = &*work else {
            return Err(Error::invalid(
                Param::TimeBlock,
                "split kernels",
                "only the fused step is blocked",
            ));
        };
        let t = *done;
        let grid = p.shape();
        let shape = Self::step_shape(c)?;
        let plan = BlockPlan { depth: k, ..plan };
        // The inner axes of the step's domain: the stencil's radius from each border.
        let r = c.radius();
        let inner: [std::ops::Range<usize>; D] = std::array::from_fn(|a| r..grid[a] - r);
        let at = trailing::<D>([c.src_z, c.src_y, c.src_x]);
        let plane: usize = grid[1..].iter().product();
        // A flat index's coordinate along the second axis (the tiled one).
        let line: usize = grid[2..].iter().product();
        let axis1 = |flat: usize| flat / line % grid[1];
        let src = (c.src_z * c.ny + c.src_y) * c.nx + c.src_x;
        let nrec = receivers.len();
        if c.source_mode == SourceMode::Set {
            Dims::<D>::set_source(space, p, wavelet[t], at)?;
        }
        // The value at the source after each step, for the step-boundary check.
        let mut at_source = vec![T::ZERO; k];
        // Ring slots: level t - 1 (pold), t (p), t + 1 (pnew), t + 2 (pold's buffer), ...
        let mut ring = [&mut *pold, &mut *p, &mut *pnew];
        // One pool for the whole sweep: its many small launches start without a wake-up.
        let at_source_ref = &mut at_source;
        let boxes = layer_boxes(grid, c.absorb, 0);
        space.install(|| {
            wavefront_tiled(&shape, &plan, k, |j, rows, cols| {
                let it = t + j;
                let (out, ins) = ring_split(&mut ring, (j + 2) % 3);
                let (level, before) = (&**ins[0], &**ins[1]);
                let out: &mut ScalarField<E::Memory, T, D> = out;
                let mut region = inner.clone();
                region[0] = rows.clone();
                region[1] = cols.clone();
                let has_source = rows.contains(&c.src_z) && cols.contains(&at[1]);
                let add =
                    (has_source && c.source_mode == SourceMode::Add).then(|| (wavelet[it], at));
                // The PML on the band and the tile: the layer's slabs across their axes lie
                // in one band or tile (`step_shape`).
                let band = PmlRows([rows.clone(), cols.clone()]);
                let fields = [level, before, kv2];
                fused_source_pml(
                    space,
                    c.space_order,
                    region,
                    out,
                    fields,
                    add,
                    pml.as_mut(),
                    &band,
                )?;
                if let Some(eta) = eta {
                    // The layer's boxes as the unblocked step launches them, cut to the band
                    // and the tile.
                    for mut region in boxes.iter().cloned() {
                        region[0] = region[0].start.max(rows.start)..region[0].end.min(rows.end);
                        region[1] = region[1].start.max(cols.start)..region[1].end.min(cols.end);
                        if !region[0].is_empty() && !region[1].is_empty() {
                            launch_in_region::<<Dims<D> as WaveKernels<D>>::Absorb, E, T, D>(
                                space,
                                region,
                                &mut [&mut *out],
                                &[before, eta],
                                &[],
                            )?;
                        }
                    }
                }
                let values = host_values(out)?;
                for (q, &flat) in receivers.iter().enumerate() {
                    if rows.contains(&(flat / plane)) && cols.contains(&axis1(flat)) {
                        traces[it * nrec + q] = values[flat];
                    }
                }
                if has_source {
                    at_source_ref[j] = values[src];
                    if c.source_mode == SourceMode::Set && j + 1 < k {
                        Dims::<D>::set_source(space, out, wavelet[it + 1], at)?;
                    }
                }
                Ok(())
            })
        })?;
        // The ring after k steps is the unblocked loop's after k rotations.
        for _ in 0..k {
            pold.swap(p);
            p.swap(pnew);
        }
        if let Err((it, e)) = block_checks(c, t, &at_source, traces, receivers, src) {
            *done = it;
            return Err(e);
        }
        check_finite(p, c, t + k).inspect_err(|_| *done = t + k - 1)?;
        *done = t + k;
        Ok(t + k - 1)
    }
}

/// The unblocked step's checks on a block of `at_source.len()` steps from step `t`, level by
/// level: the receivers' samples in `traces`, then the value at the source point `src`
/// (whose last level the whole-field check covers). On a non-finite value, the step index at
/// which the run stops and the error naming the step and the place.
fn block_checks<T: Real>(
    c: &WaveConfig,
    t: usize,
    at_source: &[T],
    traces: &[T],
    receivers: &[usize],
    src: usize,
) -> std::result::Result<(), (usize, Error)> {
    let (k, nrec) = (at_source.len(), receivers.len());
    let words = |flat: usize| position_words(flat, [c.nz, c.ny, c.nx], c.dims());
    for (j, &value) in at_source.iter().enumerate() {
        let it = t + j;
        let row = &traces[it * nrec..(it + 1) * nrec];
        if let Some(q) = row.iter().position(|v| !v.to_f64().is_finite()) {
            let pos = words(receivers[q]);
            return Err((it, non_finite::<T>(it + 1, row[q], &pos, "at receiver")));
        }
        if j + 1 < k && !value.to_f64().is_finite() {
            let e = non_finite::<T>(it + 1, value, &words(src), "at the source,");
            return Err((it, e));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::config::Layer;
    use crate::Serial;

    /// A NaN put into the field stops a blocked run at the same step, with the same words, as
    /// the unblocked one: near the source (the source check of an inner level of a block),
    /// at a receiver, and far away (the whole-field check at step 64, a block boundary).
    #[test]
    fn a_non_finite_value_stops_a_blocked_run_at_the_unblocked_step() {
        // (grid rows, NaN row, NaN column, receivers, the error's words): 4 and 7 are inner
        // levels of the blocks of 7 that start at step 3; (197, 197) is 339 cells from the
        // source, so only the whole-field check at step 64 finds it.
        for (n, z, x, receivers, want) in [
            (
                60,
                20,
                36,
                vec![],
                "at the source, row 20, column 35) after time step 4:",
            ),
            (
                60,
                40,
                10,
                vec![(5, 5), (45, 12)],
                "at receiver row 45, column 12) after time step 7:",
            ),
            (200, 197, 197, vec![], "after time step 64:"),
        ] {
            let errors: Vec<String> = [
                TimeBlock::Off,
                TimeBlock::Fixed(BlockPlan {
                    depth: 7,
                    band: 3,
                    tile: None,
                }),
            ]
            .into_iter()
            .map(|time_block| {
                let config = WaveConfig {
                    nz: n,
                    nx: n.max(70),
                    nt: 120,
                    dt: 0.0005,
                    dh: 5.0,
                    src_z: 20,
                    src_x: 35,
                    fpeak: 25.0,
                    vmin: 2000.0,
                    layers: vec![Layer {
                        z0: 40,
                        z1: 60,
                        velocity: 3500.0,
                    }],
                    receivers: receivers.clone(),
                    time_block,
                    ..WaveConfig::paper()
                };
                let mut sim = WaveSimulator::<Serial>::with_config(Serial, config);
                sim.prepare().unwrap();
                for _ in 0..3 {
                    sim.step().unwrap();
                }
                sim.run.as_mut().unwrap().p[(z, x)] = f32::NAN;
                loop {
                    if let Err(e) = sim.step_block(sim.block_steps()) {
                        assert!(matches!(e, Error::NonFinite { .. }), "{e}");
                        break e.to_string();
                    }
                }
            })
            .collect();
            assert_eq!(errors[0], errors[1], "NaN at ({z}, {x})");
            assert!(errors[0].contains(want), "{}", errors[0]);
        }
    }

    /// 3D: a NaN stops a blocked run (bands of z-planes) at the unblocked run's step with
    /// the same words (plane, row, column): next to the source, at a receiver, and far away
    /// (29 cells from the source, 2 a step: only the whole-field check after the last step,
    /// 12, finds it).
    #[test]
    fn a_non_finite_value_stops_a_blocked_3d_run_at_the_unblocked_step() {
        for ((z, y, x), receivers, want) in [
            (
                (12, 9, 11),
                vec![],
                "at the source, plane 12, row 9, column 10) after time step 4:",
            ),
            (
                (20, 4, 4),
                vec![(22, 5, 5)],
                "at receiver plane 22, row 5, column 5) after time step",
            ),
            ((27, 15, 18), vec![], "after time step 12:"),
        ] {
            let errors: Vec<String> = [
                TimeBlock::Off,
                TimeBlock::Fixed(BlockPlan {
                    depth: 7,
                    band: 3,
                    tile: None,
                }),
            ]
            .into_iter()
            .map(|time_block| {
                let config = WaveConfig {
                    nz: 30,
                    ny: 18,
                    nx: 21,
                    nt: 12,
                    dt: 0.0005,
                    dh: 5.0,
                    src_z: 12,
                    src_y: 9,
                    src_x: 10,
                    fpeak: 25.0,
                    vmin: 2000.0,
                    layers: vec![],
                    receivers_3d: receivers.clone(),
                    time_block,
                    ..WaveConfig::paper()
                };
                let mut sim = WaveSimulator::<Serial, f32, 3>::with_config(Serial, config);
                sim.prepare().unwrap();
                for _ in 0..3 {
                    sim.step().unwrap();
                }
                sim.run.as_mut().unwrap().p[(z, y, x)] = f32::NAN;
                loop {
                    if let Err(e) = sim.step_block(sim.block_steps()) {
                        assert!(matches!(e, Error::NonFinite { .. }), "{e}");
                        break e.to_string();
                    }
                }
            })
            .collect();
            assert_eq!(errors[0], errors[1], "NaN at ({z}, {y}, {x})");
            assert!(errors[0].contains(want), "{}", errors[0]);
        }
    }
}
