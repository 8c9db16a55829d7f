//! The band of an `auto` blocked run, chosen by timing the run's first blocks.
//!
//! [`BlockPlan::auto`] sizes the wavefront from the cache sizes, but which band is fastest,
//! and whether blocking pays at all, also depends on what the sizes do not say: how fast the
//! last-level cache is next to the core's L2, and what else shares it. So [`BandTuner`]
//! measures: the run's first full block is a warm-up, then each candidate runs
//! [`TUNE_ROUNDS`] full blocks in turns, and the rest of the run keeps the candidate with the
//! least time per step (the best of its rounds, so that a block slowed by another process
//! does not decide). The candidates are the plan's band, a half and a quarter of it
//! ([`TUNE_BANDS`]; a tiled plan keeps its band), and always the unblocked step
//! ([`BlockPlan::is_unblocked`]), so `auto` never keeps a plan slower than no blocking.
//! Every candidate gives the same bits (the wavefront's order changes, no point's
//! arithmetic), so tuning moves only the time; runs too short to repay it
//! ([`BandTuner::new`]) keep the plan as it is, and `--time-block K:B` fixes a band.

use super::blocking::{BlockPlan, StepShape, AUTO_MIN_BAND};
use std::time::Duration;

/// The bands [`BandTuner`] tries, as divisors of the `auto` plan's band (1: the plan's own,
/// first; then a half and a quarter), each at least [`AUTO_MIN_BAND`] and the stencil's
/// radius.
pub const TUNE_BANDS: [usize; 3] = [1, 2, 4];

/// Full blocks each candidate band runs before the choice: the best of them counts.
pub const TUNE_ROUNDS: usize = 2;

/// Full blocks run before timing starts (first touches of the blocked loop's caches and
/// pages).
pub const TUNE_WARM_UP: usize = 1;

/// The most full blocks tuning takes: the warm-up, then every band of [`TUNE_BANDS`] and
/// the unblocked step [`TUNE_ROUNDS`] times (fewer where a band is too short to be a
/// candidate).
pub const TUNE_BLOCKS: usize = TUNE_WARM_UP + (TUNE_BANDS.len() + 1) * TUNE_ROUNDS;

/// The share of a run's blocks tuning may take at most: runs shorter than
/// `TUNE_SHARE_INVERSE ×` the tuning blocks are not tuned.
pub const TUNE_SHARE_INVERSE: usize = 4;

/// One candidate band and its best time per step so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandTrial {
    /// The plan tried (the `auto` plan with another band).
    pub plan: BlockPlan,
    /// The least time per step of its timed blocks (`None` before the first).
    pub per_step: Option<Duration>,
    /// Its timed blocks so far.
    pub blocks: usize,
}

/// Chooses the band of an `auto` blocked run by timing its first blocks (see the module's
/// doc).
///
/// ```
/// use ppstencil::launch::Stencil;
/// use ppstencil::solver::blocking::{BlockPlan, StepShape};
/// use ppstencil::solver::tuning::{BandTuner, TUNE_ROUNDS, TUNE_WARM_UP};
/// use std::time::Duration;
/// let shape = StepShape::for_stencil(&ppstencil::kernels::FdStep4::INFO, 3, 4096, 1 << 16)?;
/// let plan = BlockPlan::new(&shape, 16, 64)?;
/// let mut tuner = BandTuner::new(plan, &shape, 4000).expect("a long run is tuned");
/// // The warm-up block, then rounds of 64, 32 and 16 rows and of the unblocked step;
/// // 32 rows is fastest here.
/// for _ in 0..TUNE_WARM_UP + 4 * TUNE_ROUNDS {
///     let plan = tuner.next_plan();
///     let ms = match plan.band { 64 => 50, 32 => 40, _ => 45 };
///     tuner.record(plan, 16, Duration::from_millis(ms));
/// }
/// assert_eq!(tuner.chosen().map(|p| p.band), Some(32));
/// assert_eq!(tuner.next_plan().band, 32);
/// # Ok::<(), ppstencil::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BandTuner {
    /// The candidates in the order they are tried.
    trials: Vec<BandTrial>,
    /// Full blocks recorded so far (warm-up included).
    recorded: usize,
    /// The band kept, once every candidate ran its rounds.
    chosen: Option<BlockPlan>,
}

impl BandTuner {
    /// A tuner for `plan` (an `auto` plan) in a run of `nt` steps, or `None` when it does
    /// not pay: a plan of one step, or a run shorter than [`TUNE_SHARE_INVERSE`] times the
    /// tuning's blocks. The candidates: the plan, its band halved and quartered while at
    /// least [`AUTO_MIN_BAND`] and the radius (whole rows only; a tiled plan keeps its band),
    /// and the unblocked step.
    pub fn new(plan: BlockPlan, shape: &StepShape, nt: usize) -> Option<BandTuner> {
        if plan.depth < 2 {
            return None;
        }
        let min = AUTO_MIN_BAND.max(shape.radius).max(1);
        let trial = |plan| BandTrial {
            plan,
            per_step: None,
            blocks: 0,
        };
        let mut trials = vec![trial(plan)];
        if plan.tile.is_none() {
            for divisor in TUNE_BANDS {
                let band = plan.band / divisor;
                if band >= min && trials.iter().all(|t| t.plan.band != band) {
                    trials.push(trial(BlockPlan::new(shape, plan.depth, band).ok()?));
                }
            }
        }
        trials.push(trial(BlockPlan::unblocked()));
        let blocks = TUNE_WARM_UP + trials.len() * TUNE_ROUNDS;
        let long_enough = nt / plan.depth >= TUNE_SHARE_INVERSE * blocks;
        (trials.len() >= 2 && long_enough).then_some(BandTuner {
            trials,
            recorded: 0,
            chosen: None,
        })
    }

    /// The plan for the next full block: the warm-up's and then each candidate's in turn
    /// while tuning, the chosen one after.
    pub fn next_plan(&self) -> BlockPlan {
        if let Some(plan) = self.chosen {
            return plan;
        }
        let timed = self.recorded.saturating_sub(TUNE_WARM_UP);
        self.trials[timed % self.trials.len()].plan
    }

    /// Records that a full block of `steps` steps ran with `plan` (the last
    /// [`next_plan`](Self::next_plan)) in `elapsed`; returns the chosen plan when this block
    /// completed the tuning. Blocks after that, or of another plan, change nothing.
    pub fn record(
        &mut self,
        plan: BlockPlan,
        steps: usize,
        elapsed: Duration,
    ) -> Option<BlockPlan> {
        if self.chosen.is_some() || plan != self.next_plan() || steps == 0 {
            return None;
        }
        self.recorded += 1;
        if self.recorded <= TUNE_WARM_UP {
            return None;
        }
        let per_step = elapsed / steps as u32;
        let trial = self
            .trials
            .iter_mut()
            .find(|t| t.plan == plan)
            .expect("next_plan is a candidate");
        trial.per_step = Some(trial.per_step.map_or(per_step, |best| best.min(per_step)));
        trial.blocks += 1;
        if self.trials.iter().any(|t| t.blocks < TUNE_ROUNDS) {
            return None;
        }
        // The least time per step; on a tie the earlier candidate (the larger band).
        let best = self
            .trials
            .iter()
            .min_by_key(|t| t.per_step)
            .expect("the plan and the unblocked step");
        self.chosen = Some(best.plan);
        self.chosen
    }

    /// The plan kept, once tuning is over.
    pub fn chosen(&self) -> Option<BlockPlan> {
        self.chosen
    }

    /// The candidates with their times so far, in the order they are tried.
    pub fn trials(&self) -> &[BandTrial] {
        &self.trials
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::Stencil;

    fn shape(radius_rows: usize) -> StepShape {
        let info = if radius_rows == 8 {
            &crate::kernels::FdStep16::INFO
        } else {
            &crate::kernels::FdStep4::INFO
        };
        StepShape::for_stencil(info, 3, 4096, 1 << 16).unwrap()
    }

    /// Feeds `tuner` blocks whose time per step `ms(band)` gives, until it chooses.
    fn tune(tuner: &mut BandTuner, ms: impl Fn(usize) -> u64) -> (Vec<usize>, BlockPlan) {
        let mut bands = Vec::new();
        loop {
            let plan = tuner.next_plan();
            bands.push(plan.band);
            // Every block runs the auto plan's 16 steps, blocked or one by one.
            if let Some(chosen) = tuner.record(plan, 16, Duration::from_millis(ms(plan.band) * 16))
            {
                return (bands, chosen);
            }
            assert!(bands.len() < 100, "tuning ends");
        }
    }

    #[test]
    fn each_band_runs_its_rounds_in_turn_after_the_warm_up_and_the_fastest_is_kept() {
        let s = shape(2);
        let plan = BlockPlan::new(&s, 16, 64).unwrap();
        for (fastest, ms) in [(64, [3, 4, 5]), (32, [4, 3, 5]), (16, [5, 4, 3])] {
            let mut tuner = BandTuner::new(plan, &s, 4001).unwrap();
            let (bands, chosen) = tune(&mut tuner, |band| match band {
                64 => ms[0],
                32 => ms[1],
                16 => ms[2],
                _ => 9,
            });
            // Band 1: the unblocked step, slower here.
            assert_eq!(bands, [64, 64, 32, 16, 1, 64, 32, 16, 1]);
            assert_eq!(chosen.band, fastest);
            assert_eq!((chosen.depth, chosen.tile), (16, None));
            assert_eq!(tuner.next_plan(), chosen);
            let times: Vec<_> = tuner.trials().iter().map(|t| t.per_step).collect();
            assert_eq!(times[0], Some(Duration::from_millis(ms[0])));
        }
    }

    #[test]
    fn the_best_round_counts_so_one_slow_block_does_not_decide() {
        let s = shape(2);
        let plan = BlockPlan::new(&s, 16, 64).unwrap();
        let mut tuner = BandTuner::new(plan, &s, 4001).unwrap();
        // 64 rows: 10 ms, then 3 ms per step (a slow first round); 32 and 16 rows: 4 ms;
        // unblocked 9 ms.
        let times = [100, 10, 4, 4, 9, 3, 4, 4, 9];
        let mut chosen = None;
        for t in times {
            let plan = tuner.next_plan();
            chosen = tuner.record(plan, 16, Duration::from_millis(t * 16));
        }
        assert_eq!(chosen.map(|p| p.band), Some(64));
        // Equal times: the larger band, tried first.
        let mut tuner = BandTuner::new(plan, &s, 4001).unwrap();
        assert_eq!(tune(&mut tuner, |_| 4).1.band, 64);
    }

    #[test]
    fn other_blocks_and_plans_change_nothing() {
        let s = shape(2);
        let plan = BlockPlan::new(&s, 16, 64).unwrap();
        let mut tuner = BandTuner::new(plan, &s, 4001).unwrap();
        let before = tuner.clone();
        // Not the plan asked for, or an empty block: ignored.
        let other = BlockPlan::new(&s, 16, 48).unwrap();
        assert_eq!(tuner.record(other, 16, Duration::from_millis(1)), None);
        assert_eq!(tuner.record(plan, 0, Duration::from_millis(1)), None);
        assert_eq!(tuner, before);
        let (_, chosen) = tune(&mut tuner, |band| if band == 16 { 1 } else { 2 });
        assert_eq!(chosen.band, 16);
        // Once chosen, later blocks do not move it.
        let after = tuner.clone();
        assert_eq!(tuner.record(chosen, 16, Duration::from_millis(1000)), None);
        assert_eq!(tuner, after);
    }

    #[test]
    fn nothing_to_choose_or_too_short_a_run_is_not_tuned() {
        let s = shape(2);
        let plan = BlockPlan::new(&s, 16, 64).unwrap();
        // Tuning takes 1 + 4 x 2 = 9 blocks of 16 steps: runs of 4 x 9 blocks and more.
        assert_eq!(TUNE_BLOCKS, 9);
        assert!(BandTuner::new(plan, &s, 16 * 36).is_some());
        assert!(BandTuner::new(plan, &s, 16 * 36 - 1).is_none());
        let bands = |plan, shape: &StepShape| -> Vec<usize> {
            let tuner = BandTuner::new(plan, shape, 4001).expect("tuned");
            tuner.trials().iter().map(|t| t.plan.band).collect()
        };
        // Tiled plans keep their band and tile, against the unblocked step (band 1).
        let tiled = plan
            .with_tile(&s.clone().with_axis1(4096).unwrap(), 256)
            .unwrap();
        assert_eq!(bands(tiled, &s), [64, 1]);
        let tuner = BandTuner::new(tiled, &s, 4001).unwrap();
        assert_eq!(tuner.trials()[0].plan, tiled);
        // A band of 4 rows (AUTO_MIN_BAND) has no shorter candidate.
        assert_eq!(bands(BlockPlan::new(&s, 16, 4).unwrap(), &s), [4, 1]);
        // 8 rows: 8 and 4.
        assert_eq!(bands(BlockPlan::new(&s, 16, 8).unwrap(), &s), [8, 4, 1]);
        // Order 16 (radius 8): no band below the radius; 16 rows leaves 16 and 8.
        let s16 = shape(8);
        assert_eq!(
            bands(BlockPlan::new(&s16, 16, 16).unwrap(), &s16),
            [16, 8, 1]
        );
        // One step per block: nothing to block.
        let one = BlockPlan::new(&s, 1, 64).unwrap();
        assert!(BandTuner::new(one, &s, 4001).is_none());
    }

    /// Where no band beats one step per pass, `auto` keeps the unblocked step.
    #[test]
    fn the_unblocked_step_is_kept_when_blocking_does_not_pay() {
        let s = shape(2);
        let plan = BlockPlan::new(&s, 16, 64).unwrap();
        let mut tuner = BandTuner::new(plan, &s, 4001).unwrap();
        let (_, chosen) = tune(&mut tuner, |band| if band == 1 { 3 } else { 4 });
        assert!(chosen.is_unblocked());
        assert_eq!(chosen, BlockPlan::unblocked());
    }
}
