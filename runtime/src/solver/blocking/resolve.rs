//! The one resolution of the time-block option: [`TimeBlock::resolve`] turns `off`, `auto`,
//! a depth or a plan into what a time loop of a given step does ([`Blocking`]). The wave
//! solver's `prepare` and `ppwave bench` both call it.

use super::{BlockPlan, Blocking, StepShape, TimeBlock};
use crate::Result;

impl TimeBlock {
    /// What this option asks of a step of `shape` over `outer` rows (planes in 3D) on a host
    /// whose last-level cache holds `llc` bytes: `off` is unblocked, `auto` the plan of
    /// [`BlockPlan::auto_or_why`] (or unblocked, saying why), a depth `K` blocks of `K` steps
    /// in bands of [`BlockPlan::band_for`], and `K:B[xW]` that plan checked against the
    /// shape. An error when a depth, band or tile asked for cannot serve the shape.
    pub fn resolve(self, shape: &StepShape, outer: usize, llc: usize) -> Result<Blocking> {
        Ok(match self {
            TimeBlock::Off => Blocking::Off("off was asked for".into()),
            TimeBlock::Auto => match BlockPlan::auto_or_why(shape, outer, llc) {
                Ok(plan) => Blocking::On(plan),
                Err(why) => Blocking::Off(format!("auto: {why}")),
            },
            TimeBlock::Depth(k) => Blocking::On(BlockPlan::new(
                shape,
                k,
                BlockPlan::band_for(shape, k, llc),
            )?),
            TimeBlock::Fixed(plan) => Blocking::On(plan.checked(shape)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step of radius 2 over 1000 rows of 1 KiB (every field), tileable along 500 points.
    fn shape() -> StepShape {
        StepShape {
            radius: 2,
            levels: 3,
            domain: 2..998,
            row_bytes: 1024,
            axis1: Some(2..498),
            axis1_len: 500,
            ends: 0,
        }
    }

    #[test]
    fn off_is_unblocked_whatever_the_cache() {
        let b = TimeBlock::Off.resolve(&shape(), 1000, 1).unwrap();
        assert_eq!(b, Blocking::Off("off was asked for".into()));
    }

    /// A depth takes the band the cache allows, by hand: a quarter of a 1 MiB cache is 256
    /// rows of 1 KiB, less the skew (4 + 1) · 2 = 10 rows, capped at 64 rows.
    #[test]
    fn a_depth_takes_the_band_the_cache_allows() {
        let b = TimeBlock::Depth(4)
            .resolve(&shape(), 1000, 1 << 20)
            .unwrap();
        let plan = BlockPlan {
            depth: 4,
            band: 64,
            tile: None,
        };
        assert_eq!(b, Blocking::On(plan));
        // A 64 KiB cache: 16 rows, less 10 of skew, leaves 6.
        let b = TimeBlock::Depth(4)
            .resolve(&shape(), 1000, 64 << 10)
            .unwrap();
        assert_eq!(b, Blocking::On(BlockPlan { band: 6, ..plan }));
    }

    /// A plan given is checked against the shape: a band below the radius is refused.
    #[test]
    fn a_plan_given_is_checked() {
        let ok = BlockPlan {
            depth: 3,
            band: 8,
            tile: Some(40),
        };
        assert_eq!(
            TimeBlock::Fixed(ok).resolve(&shape(), 1000, 1).unwrap(),
            Blocking::On(ok)
        );
        let thin = BlockPlan { band: 1, ..ok };
        assert!(TimeBlock::Fixed(thin).resolve(&shape(), 1000, 1).is_err());
    }

    /// `auto` on a grid whose fields fit in the cache (1000 KiB in a 64 MiB cache) stays
    /// unblocked and says so.
    #[test]
    fn auto_on_a_grid_in_cache_is_unblocked() {
        match TimeBlock::Auto.resolve(&shape(), 1000, 64 << 20).unwrap() {
            Blocking::Off(why) => assert!(why.starts_with("auto: "), "{why}"),
            on => panic!("expected unblocked, got {on}"),
        }
    }
}
