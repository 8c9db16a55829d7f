//! Temporal blocking: several time steps per pass over the grid, so that each point crosses
//! the memory bus once per block of steps instead of once per step.
//!
//! This module holds the schedule, generic over the step: [`TimeBlock`] (the option: `off`,
//! `auto` or a depth), [`StepShape`] (a step as data: its stencil's radius from the IR, how
//! many time levels rotate, the rows it updates), [`BlockPlan`] (depth and band height, chosen
//! from the cache sizes or given), [`wavefront`] (the order in which bands of rows are
//! updated) and [`ring_split`] (which buffer of the ring holds which time level). It runs no
//! kernel itself: the caller's closure launches its stencils on each band with
//! [`launch_in`](crate::launch::launch_in), so every backend's generated kernel is reused
//! unchanged. The wave solver's blocked step (sources, receivers, absorbing layer on each
//! band) lives in `simulator/blocked.rs`; a user's own step (for example a heat step,
//! `unew = f(u)`) runs blocked through the same two functions.
//!
//! **Why a wavefront.** The step is skewed along the outer axis (rows in 2D, planes in 3D):
//! in one sweep over the rows, step `j` of the block updates a band of rows lagging
//! `j · radius` rows behind step 0's band, so the rows a step reads from the step before were
//! computed moments ago and are still in cache. Compared with trapezoids or diamonds it
//! computes every point exactly once per step (no redundant halo work, no extra buffers),
//! works with the ring of time levels the unblocked loop already has (see [`wavefront`] for
//! why no level is overwritten while still needed), and keeps every launch a plain
//! `launch_in` on whole rows, which the rayon backend splits among its threads as it does
//! any launch: parallel tiles are disjoint row chunks of one launch and never race. Its
//! limit: the wavefront's rows of all fields must fit in the cache, so very wide rows (or
//! large 3D planes) are tiled along the second axis as well ([`wavefront_tiled`]: each tile
//! of y in 3D, or x in 2D, runs the whole row wavefront, its steps skewed by the radius along
//! that axis too).
//!
//! Every point update is the generated kernel's, with the same operands in the same order:
//! a blocked run is bit-identical to the unblocked loop; only the order of independent point
//! updates changes.

use crate::exec::cache_sizes;
use crate::launch::StencilInfo;
use crate::{Error, Param, Result};
use std::ops::Range;

mod resolve;

/// How many time steps a block fuses: the option `--time-block off|auto|K`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeBlock {
    /// One step per pass over the grid (the unblocked loop).
    Off,
    /// Blocked where it pays (the fields of a step exceed the last-level cache, on a host
    /// backend), with a depth and band chosen from the cache sizes ([`BlockPlan::auto`]),
    /// the band then timed against shorter ones in a long run's first blocks
    /// ([`BandTuner`](crate::solver::tuning::BandTuner)); unblocked otherwise.
    #[default]
    Auto,
    /// Blocks of this many steps (at least 1), with the band from the cache sizes
    /// ([`BlockPlan::band_for`]); host backends only (an error on GPU backends).
    Depth(usize),
    /// Blocks of `depth` steps in bands of `band` rows (`--time-block K:B`), for
    /// experiments and tests; host backends only.
    Fixed(BlockPlan),
}

impl TimeBlock {
    /// `"off"`, `"auto"` or the depth.
    pub fn name(self) -> String {
        match self {
            TimeBlock::Off => "off".into(),
            TimeBlock::Auto => "auto".into(),
            TimeBlock::Depth(k) => k.to_string(),
            TimeBlock::Fixed(p) => match p.tile {
                None => format!("{}:{}", p.depth, p.band),
                Some(w) => format!("{}:{}x{w}", p.depth, p.band),
            },
        }
    }
}

impl std::str::FromStr for TimeBlock {
    type Err = Error;

    /// Parses `off`, `auto`, a depth `K >= 1`, `K:B` (depth and band rows, both >= 1), or
    /// `K:BxW` (and tiles of `W >= 1` points along the second axis: y in 3D, x in 2D).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::invalid(
                Param::TimeBlock,
                s,
                "use `off`, `auto` (blocked where the grid exceeds the last-level cache), a number of steps per block K >= 1, K:B (B rows per band), or K:BxW (and tiles W points wide along the second axis: y in 3D, x in 2D)",
            )
        };
        let positive = |t: &str| t.parse::<usize>().ok().filter(|&k| k >= 1);
        match s {
            "off" => Ok(TimeBlock::Off),
            "auto" => Ok(TimeBlock::Auto),
            _ => match s.split_once(':') {
                None => positive(s).map(TimeBlock::Depth).ok_or_else(bad),
                Some((k, b)) => {
                    let (b, w) = match b.split_once('x') {
                        Some((b, w)) => (b, Some(positive(w).ok_or_else(bad)?)),
                        None => (b, None),
                    };
                    match (positive(k), positive(b)) {
                        (Some(depth), Some(band)) => Ok(TimeBlock::Fixed(BlockPlan {
                            depth,
                            band,
                            tile: w,
                        })),
                        _ => Err(bad()),
                    }
                }
            },
        }
    }
}

/// A time step as data, for the schedule: what it reads and at which radius, how many time
/// levels rotate, and which rows (of the outer axis) it updates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepShape {
    /// The largest offset the step's stencil reads along the outer axis (the IR's radius).
    pub radius: usize,
    /// Time levels in the ring, `L >= 2`: the step writes level `n` into the buffer of level
    /// `n - L` and reads levels `n - 1 .. n - L + 1` (2 for `unew = f(u)`, 3 for the
    /// leapfrog `pnew = f(p, pold)`).
    pub levels: usize,
    /// The rows of the outer axis the step updates (its domain).
    pub domain: Range<usize>,
    /// Bytes of one row (all inner axes: a row in 2D, a plane of `ny × nx` points in 3D) of
    /// every field the step touches: ring and read-only coefficients. Sizes the band for the
    /// cache.
    pub row_bytes: usize,
    /// The points of the second axis (y in 3D, x in 2D) the step updates, when the step may
    /// be tiled along it ([`with_axis1`](Self::with_axis1)); `None`: bands of whole rows only.
    pub axis1: Option<Range<usize>>,
    /// Points along the second axis in the grid (its domain plus both borders; 0 without
    /// [`axis1`](Self::axis1)): a row's bytes over this are the bytes of one of its lines.
    pub axis1_len: usize,
    /// Rows (and points of the second axis, in tiles) at either end of the domain where no
    /// band or tile stops: a front that would stop there goes on to the domain's end (at the
    /// start: waits at the start), so that each step updates its first and last `ends` rows
    /// in one call. 0: fronts stop anywhere. The wave solver's PML sets it to its layer and
    /// the reach of its kernels: the layer's work along an axis (whose memory variables are
    /// read at neighbours along that axis) then never straddles two bands or tiles, and the
    /// steps lag only the interior stencil's radius (see [`wavefront`]).
    pub ends: usize,
}

impl StepShape {
    /// The shape of a step that runs stencil `info` over a ring of `levels` fields of
    /// `outer` rows, each row of `row_bytes` bytes over all fields the step touches. The
    /// domain is the stencil's: rows `radius..outer - radius`.
    pub fn for_stencil(
        info: &StencilInfo,
        levels: usize,
        outer: usize,
        row_bytes: usize,
    ) -> Result<StepShape> {
        if info.point {
            return Err(Error::invalid(
                Param::TimeBlock,
                info.name,
                "a point (#[at]) stencil is not a time step: block the step that updates the domain, and apply point updates on the band holding the point",
            ));
        }
        if levels < 2 {
            return Err(Error::invalid(
                Param::TimeBlock,
                format!("{levels} time levels"),
                "a time step needs a ring of at least 2 levels (the new one and the one it reads)",
            ));
        }
        let r = info.radius;
        if outer < 2 * r + 1 {
            return Err(Error::invalid(
                Param::TimeBlock,
                format!("{outer} rows for `{}`", info.name),
                format!(
                    "the outer axis needs at least {} rows for the stencil's radius {r}",
                    2 * r + 1
                ),
            ));
        }
        Ok(StepShape {
            radius: r,
            levels,
            domain: r..outer - r,
            row_bytes,
            axis1: None,
            axis1_len: 0,
            ends: 0,
        })
    }

    /// This shape, tileable along a second axis of `n` points (y in 3D, x in 2D) whose
    /// domain is the stencil's, `radius..n - radius` (an error when `n < 2 radius + 1`).
    pub fn with_axis1(self, n: usize) -> Result<StepShape> {
        let r = self.radius;
        if n < 2 * r + 1 {
            return Err(Error::invalid(
                Param::TimeBlock,
                format!("{n} points along the second axis"),
                format!("tiling needs at least {} for the radius {r}", 2 * r + 1),
            ));
        }
        Ok(StepShape {
            axis1: Some(r..n - r),
            axis1_len: n,
            ..self
        })
    }

    /// This shape with [`ends`](Self::ends) `ends`.
    pub fn with_ends(self, ends: usize) -> StepShape {
        StepShape { ends, ..self }
    }

    /// Where a front computed as `f` stops in the domain `lo..hi` (`f` already clamped to
    /// it): `f`, or `lo` when it lies in the first [`ends`](Self::ends) points after `lo`,
    /// or `hi` when in the last `ends` before `hi` (the first rule first, so a domain of at
    /// most `2 ends` points goes from `lo` to `hi` in one jump). Non-decreasing in `f`, and
    /// for fronts `g >= f + r`, `snap(g) >= snap(f) + r` unless `snap(f)` is `lo` (that step
    /// has done nothing) or `snap(g)` is `hi` (that one has done everything): what the
    /// schedules' proofs need of the fronts (see [`wavefront`]).
    ///
    /// ```
    /// use ppstencil::solver::blocking::StepShape;
    /// let s = StepShape {
    ///     radius: 2,
    ///     levels: 3,
    ///     domain: 2..98,
    ///     row_bytes: 1,
    ///     axis1: None,
    ///     axis1_len: 0,
    ///     ends: 10,
    /// };
    /// assert_eq!([s.snap(2, 2, 98), s.snap(11, 2, 98), s.snap(12, 2, 98)], [2, 2, 12]);
    /// assert_eq!([s.snap(88, 2, 98), s.snap(89, 2, 98), s.snap(98, 2, 98)], [88, 98, 98]);
    /// ```
    pub fn snap(&self, f: usize, lo: usize, hi: usize) -> usize {
        if f <= lo || f >= hi {
            f
        } else if f < lo.saturating_add(self.ends) {
            lo
        } else if f.saturating_add(self.ends) > hi {
            hi
        } else {
            f
        }
    }

    /// Bytes of one line of a row (all fields, one point of the second axis): the unit a
    /// tile's cache footprint is counted in.
    pub fn line_bytes(&self) -> usize {
        self.row_bytes / self.axis1_len.max(1)
    }
}

/// The shape of a blocked time loop: steps per block, rows per band and, optionally, the
/// width of tiles along the second axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockPlan {
    /// Time steps per block (per sweep over the rows).
    pub depth: usize,
    /// Rows each step updates per launch; step `j` of a block lags `j · radius` rows behind
    /// step 0.
    pub band: usize,
    /// Points of the second axis (y in 3D, x in 2D) per tile, or `None` for whole rows: each
    /// tile runs the whole wavefront of rows on its columns, step `j` of a tile lagging
    /// `j · radius` columns behind step 0 ([`wavefront_tiled`]).
    pub tile: Option<usize>,
}

/// Steps per block chosen by [`BlockPlan::auto`] when the cache holds their wavefront:
/// enough to divide the memory traffic by 16, while the wavefront's rows stay a small part of
/// the cache even at order 16 (fewer steps when the rows are too large for that).
pub const AUTO_DEPTH: usize = 16;

/// The fewest rows per band [`BlockPlan::auto`] accepts: below, a launch's fork-join and the
/// band's halo cost more than the blocking saves, and the run stays unblocked.
pub const AUTO_MIN_BAND: usize = 4;

/// Rows per band chosen by [`BlockPlan::auto`] when the cache allows it: large enough that a
/// launch's fork-join costs little next to its work and the band's halo (`2 r` rows) is
/// re-read rarely. Every launch of a band is forked over the threads and joined, and a PML
/// adds four small ones per band (its side strips' two kernels); taller bands halve them. At
/// 64 a 20-cell PML costs 1.15–1.23 × the rigid step on the paper grid against 1.26–1.38 × at
/// 32, and the rigid blocked step itself runs 1.83–2.33 × the fused step against 1.51–1.74 ×
/// (two threads on an AMD EPYC; one thread: no change; `docs/design/0011-temporal-blocking.md`).
/// On a host with a large L2 and a slow L3, 32 rows ran 1.3 × faster than 64, so a long run
/// times this band against a half and a quarter of it and keeps the fastest
/// ([`BandTuner`](crate::solver::tuning::BandTuner)).
pub const AUTO_BAND: usize = 64;

/// The narrowest tile (points of the second axis) [`BlockPlan::auto`] accepts when rows are
/// too large for a wavefront of whole rows: below, the skewed tile's halo (`(depth + 2) r`
/// columns re-read per tile) costs more than the blocking saves.
pub const AUTO_MIN_TILE: usize = 16;

impl BlockPlan {
    /// A plan of `depth` steps per block and bands of `band` rows, checked against `shape`:
    /// `depth >= 1`, and a band that holds the stencil's radius (`band >= radius`, at least
    /// 1).
    pub fn new(shape: &StepShape, depth: usize, band: usize) -> Result<BlockPlan> {
        if depth == 0 {
            return Err(Error::invalid(
                Param::TimeBlock,
                depth,
                "a block needs at least 1 time step; use `off` for the unblocked loop",
            ));
        }
        let min = shape.radius.max(1);
        if band < min {
            return Err(Error::invalid(
                Param::TimeBlock,
                format!("band of {band} rows"),
                format!(
                    "a band must hold the lag between steps (the stencil's radius, at least 4 \
                     with a PML): use at least {min} rows (lag {})",
                    shape.radius
                ),
            ));
        }
        Ok(BlockPlan {
            depth,
            band,
            tile: None,
        })
    }

    /// The unblocked step as a plan: one step per pass over the grid (depth 1), the
    /// candidate that lets the band tuner keep no blocking where blocking does not pay.
    pub fn unblocked() -> BlockPlan {
        BlockPlan {
            depth: 1,
            band: 1,
            tile: None,
        }
    }

    /// Whether this is [`unblocked`](Self::unblocked)'s plan (or any plan of one step per
    /// block, which is the same schedule).
    pub fn is_unblocked(&self) -> bool {
        self.depth == 1
    }

    /// This plan (as given, e.g. by `--time-block K:B[xW]`) checked against `shape`:
    /// [`new`](Self::new), then [`with_tile`](Self::with_tile) if it has a tile.
    pub fn checked(self, shape: &StepShape) -> Result<BlockPlan> {
        let rows = BlockPlan::new(shape, self.depth, self.band)?;
        match self.tile {
            Some(w) => rows.with_tile(shape, w),
            None => Ok(rows),
        }
    }

    /// This plan with tiles of `tile` points along the shape's second axis: an error when
    /// the shape has none (`StepShape::axis1`) or a tile cannot hold the stencil's radius
    /// (`tile >= radius`, at least 1, as for bands).
    pub fn with_tile(self, shape: &StepShape, tile: usize) -> Result<BlockPlan> {
        if shape.axis1.is_none() {
            return Err(Error::invalid(
                Param::TimeBlock,
                format!("tiles of {tile} points"),
                "this step is blocked in bands of whole rows only: drop the tile width (K:B)",
            ));
        }
        let min = shape.radius.max(1);
        if tile < min {
            return Err(Error::invalid(
                Param::TimeBlock,
                format!("tiles of {tile} points"),
                format!(
                    "a tile must hold the stencil's radius: use at least {min} points (radius {})",
                    shape.radius
                ),
            ));
        }
        Ok(BlockPlan {
            tile: Some(tile),
            ..self
        })
    }

    /// The plan `auto` runs for `shape` on a host with last-level cache `llc` bytes, or
    /// `None` when blocking does not pay ([`auto_or_why`](Self::auto_or_why) says why).
    pub fn auto(shape: &StepShape, outer: usize, llc: usize) -> Option<BlockPlan> {
        Self::auto_or_why(shape, outer, llc).ok()
    }

    /// The plan `auto` runs for `shape` (a grid of `outer` rows, or planes in 3D) on a host
    /// with last-level cache `llc` bytes, or why it does not block: when every field of the
    /// step fits in half the cache (an unblocked step is then served from the cache
    /// already), or when a row (plane) is so large that even a wavefront of 2 steps in bands
    /// of [`AUTO_MIN_BAND`] rows exceeds a quarter of the cache and no tile fits either.
    /// Otherwise the depth is the largest up to [`AUTO_DEPTH`] (the caller clamps it to `nt`)
    /// whose wavefront, in bands of [`band_for`](Self::band_for) rows (at least
    /// [`AUTO_MIN_BAND`]), fits in a quarter of the cache; unless tiles along the second
    /// axis allow a deeper block that moves fewer bytes per step (`auto_tiled`'s measure;
    /// whole rows move `1 / depth`): at 200³ (order 4) whole planes allow 3 steps, tiles of
    /// 47 lines 14.
    pub fn auto_or_why(
        shape: &StepShape,
        outer: usize,
        llc: usize,
    ) -> std::result::Result<BlockPlan, String> {
        let mib = |bytes: usize| bytes as f64 / f64::from(1 << 20);
        let grid_bytes = outer.saturating_mul(shape.row_bytes);
        if grid_bytes <= llc / 2 {
            return Err(format!(
                "the step's fields ({:.1} MiB) fit in half the last-level cache ({:.1} MiB): an unblocked step is served from the cache",
                mib(grid_bytes),
                mib(llc)
            ));
        }
        let whole_rows = (2..=AUTO_DEPTH).rev().find_map(|depth| {
            let plan = BlockPlan {
                depth,
                band: Self::band_for(shape, depth, llc),
                tile: None,
            };
            let fits = plan.rows_in_flight(shape).saturating_mul(shape.row_bytes) <= llc / 4;
            (fits && plan.band >= AUTO_MIN_BAND).then_some(plan)
        });
        let band = AUTO_MIN_BAND.max(shape.radius);
        // Bytes moved per step, relative to an unblocked step: 1 / depth for whole rows; a
        // tiled plan re-reads its skewed halo (`auto_tiled`), so it is taken only where its
        // greater depth moves fewer bytes.
        match (whole_rows, Self::auto_tiled(shape, band, llc)) {
            (Some(plan), Some((cost, tiled))) if cost < 1.0 / plan.depth as f64 => {
                return Ok(tiled)
            }
            (Some(plan), _) | (None, Some((_, plan))) => return Ok(plan),
            (None, None) => {}
        }
        let least = BlockPlan {
            depth: 2,
            band,
            tile: None,
        }
        .rows_in_flight(shape);
        Err(format!(
            "a row (a plane in 3D) of the step's fields takes {:.2} MiB: even a wavefront of 2 steps in bands of {band} needs {least} of them ({:.1} MiB), more than a quarter of the last-level cache of {:.1} MiB, and {}",
            mib(shape.row_bytes),
            mib(least.saturating_mul(shape.row_bytes)),
            mib(llc),
            if shape.axis1.is_some() {
                format!("no tile of at least {AUTO_MIN_TILE} points along the second axis fits either")
            } else {
                "this step cannot be tiled along its second axis".to_string()
            }
        ))
    }

    /// The tiled plan `auto` runs when whole rows are too large, or too large for more than
    /// a shallow block: bands of `band` rows, and for each depth `2..=`[`AUTO_DEPTH`] the
    /// widest tile (at most the axis) whose wavefront, `(band + (depth + 1) r)` rows ×
    /// `(tile + (depth + 1) r)` lines, fits in a quarter of the cache and is at least
    /// [`AUTO_MIN_TILE`] wide; of those the depth that moves the fewest bytes per step,
    /// `(tile + (depth + 2) r) / (tile · depth)` of an unblocked step's (each tile re-reads
    /// its skewed halo), returned with the plan. `None` when the step has no second axis or
    /// no depth has such a tile.
    fn auto_tiled(shape: &StepShape, band: usize, llc: usize) -> Option<(f64, BlockPlan)> {
        let axis = shape.axis1.as_ref()?;
        let r = shape.radius;
        let line = shape.line_bytes().max(1);
        let mut best: Option<(f64, BlockPlan)> = None;
        for depth in 2..=AUTO_DEPTH {
            let plan = BlockPlan {
                depth,
                band,
                tile: None,
            };
            let lines = llc / 4 / line / plan.rows_in_flight(shape).max(1);
            let tile = lines.saturating_sub((depth + 1) * r).min(axis.len().max(1));
            if tile < AUTO_MIN_TILE.max(r) {
                continue;
            }
            let cost = (tile + (depth + 2) * r) as f64 / (tile * depth) as f64;
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((
                    cost,
                    BlockPlan {
                        tile: Some(tile),
                        ..plan
                    },
                ));
            }
        }
        best
    }

    /// The band for blocks of `depth` steps: [`AUTO_BAND`] rows, fewer when the wavefront's
    /// rows of all fields ([`rows_in_flight`](Self::rows_in_flight)) would exceed a quarter
    /// of the cache `llc`, never fewer than the radius (at least 1).
    pub fn band_for(shape: &StepShape, depth: usize, llc: usize) -> usize {
        let budget_rows = llc / 4 / shape.row_bytes.max(1);
        let skew = (depth + 1) * shape.radius;
        budget_rows
            .saturating_sub(skew)
            .min(AUTO_BAND)
            .max(shape.radius.max(1))
    }

    /// [`auto`](Self::auto) with this host's last-level cache ([`cache_sizes`]).
    pub fn auto_for_host(shape: &StepShape, outer: usize) -> Option<BlockPlan> {
        Self::auto(shape, outer, cache_sizes().llc)
    }

    /// Rows of all fields the wavefront keeps in flight: the band, the skew of its steps
    /// and the halo.
    pub fn rows_in_flight(&self, shape: &StepShape) -> usize {
        self.band + (self.depth + 1) * shape.radius
    }
}

/// What a prepared time loop does about temporal blocking (recorded in run.json by
/// `ppwave`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocking {
    /// Blocks of `depth` steps, bands of `band` rows (z-planes in 3D), tiles of `tile`
    /// points along the second axis if any.
    On(BlockPlan),
    /// One step per pass over the grid, and why.
    Off(String),
}

impl std::fmt::Display for Blocking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Blocking::On(p) => {
                write!(
                    f,
                    "blocked: {} steps per block, bands of {} rows (z-planes in 3D)",
                    p.depth, p.band
                )?;
                match p.tile {
                    Some(w) => write!(f, ", tiles of {w} points along y (x in 2D)"),
                    None => Ok(()),
                }
            }
            Blocking::Off(why) => write!(f, "unblocked: {why}"),
        }
    }
}

/// Calls `update(j, rows)` for every step `j` in `0..steps` of a block and every band of
/// rows of `shape.domain`, in wavefront order: each `(j, rows)` comes after every update it
/// depends on, and no update overwrites a value still needed.
///
/// `update(j, rows)` must compute time level `n0 + j + 1` (the block's step `j`) on `rows`
/// only, from levels `n0 + j` (read up to `radius` rows away) and older, into the buffer of
/// level `n0 + j + 1 - L` (see [`ring_split`]); it may also apply pointwise updates to level
/// `n0 + j + 1` inside `rows` (a source, a damping layer) and read it (receivers).
///
/// Step `j`'s front after sweep position `s` is `F_j(s) = clamp(d0 + (s + 1) band - j r, d0,
/// d1)` for the domain `d0..d1`, kept out of the domain's [`ends`](StepShape::ends)
/// ([`StepShape::snap`]); position `s` updates `F_j(s-1)..F_j(s)` for `j = 0, 1, …` in this
/// order. Why this is the unblocked result (a front moved to `d0` updates nothing, one moved
/// to `d1` follows fronts that are all at `d1`; otherwise consecutive fronts stay `r` apart):
/// - *reads are ready*: level `j + 1` on rows `< F_j(s)` reads level `j` on rows
///   `< F_j(s) + r <= F_{j-1}(s)` (done earlier in position `s`; beyond `d1` the border,
///   never written) and older levels, further ahead;
/// - *nothing needed is overwritten*: writing level `m` on row `z` overwrites level
///   `m - L`, whose readers (levels `m - L + 1 .. m - 1` on rows `z ± r`) all lie behind
///   fronts at least `F_j(s) + r > z + r`; and a level read by the band of position `s` is
///   overwritten only by levels at least one step later, whose front at that time lies `r`
///   rows or more behind the rows read.
pub fn wavefront(
    shape: &StepShape,
    plan: &BlockPlan,
    steps: usize,
    mut update: impl FnMut(usize, Range<usize>) -> Result<()>,
) -> Result<()> {
    let (d0, d1) = (shape.domain.start, shape.domain.end);
    if steps == 0 || d0 >= d1 {
        return Ok(());
    }
    let r = shape.radius;
    let front = |j: usize, s: usize| -> usize {
        // d0 + (s + 1) band - j r, clamped to d0..=d1, without underflow; then kept out of
        // the domain's ends.
        let ahead = d0 + (s + 1) * plan.band;
        shape.snap(ahead.saturating_sub(j * r).clamp(d0, d1), d0, d1)
    };
    let mut done = vec![d0; steps];
    let mut s = 0;
    while done[steps - 1] < d1 {
        for (j, from) in done.iter_mut().enumerate() {
            let to = front(j, s);
            if to > *from {
                update(j, *from..to)?;
                *from = to;
            }
        }
        s += 1;
    }
    Ok(())
}

/// [`wavefront`] with tiles along the second axis: calls `update(j, rows, cols)` for every
/// step `j` of a block, band of rows and tile of columns (points of `shape.axis1`), in an
/// order that respects every dependency and overwrites nothing still needed. Without
/// `plan.tile` it is [`wavefront`] with `cols` the whole `shape.axis1` (`0..0` when the
/// shape has none). `update` has [`wavefront`]'s contract, on `rows × cols`.
///
/// Tiles run in increasing order of the second axis; tile `t` runs a whole [`wavefront`]
/// of rows, in which step `j` updates the columns `G_j(t-1)..G_j(t)`, with `G_j(t) =
/// clamp(c0 + (t + 1) tile - j r, c0, c1)` for the domain `c0..c1`: the same skew as the
/// rows'. Why this is the unblocked result (write `t_j(y)` for the tile in which step `j`
/// updates column `y`; it grows with `j` since `G_j` shrinks with `j`):
/// - *reads are ready*: step `j` on column `y < G_j(t)` reads step `j - 1`'s level on
///   columns `y' <= y + r < G_j(t) + r = G_{j-1}(t)` (or `y'` is a border column, never
///   written), so `t_{j-1}(y') <= t`: an earlier tile, or the same tile, where the row
///   wavefront orders it first;
/// - *nothing needed is overwritten*: step `j` on `(z, y)` overwrites the level read by
///   steps `j - L + 1 .. j - 1` on columns within `r`; those run in tiles `<= t` as above
///   (their fronts lie `r` or more ahead), ordered first by the row wavefront inside tile
///   `t`; and the levels step `j` reads on `y' >= y - r >= G_j(t-1) - r` are overwritten
///   only by steps `j + 1 ..`, whose columns `y'` lie in tiles `>= t`
///   (`G_{j+m}(t-1) <= G_j(t-1) - m r`), after it or, in tile `t`, behind it in the rows.
///
/// Pairs of updates inside one tile are ordered by that tile's row wavefront, whose proof
/// ([`wavefront`]) does not depend on the columns. A tile narrower than the skew is legal
/// (some steps then update no column in some tiles; [`BlockPlan::with_tile`] still asks for
/// `tile >= radius`, as for bands).
pub fn wavefront_tiled(
    shape: &StepShape,
    plan: &BlockPlan,
    steps: usize,
    mut update: impl FnMut(usize, Range<usize>, Range<usize>) -> Result<()>,
) -> Result<()> {
    let axis = shape.axis1.clone().unwrap_or(0..0);
    let Some(width) = plan.tile else {
        return wavefront(shape, plan, steps, |j, rows| update(j, rows, axis.clone()));
    };
    let (c0, c1) = (axis.start, axis.end);
    if steps == 0 || c0 >= c1 {
        return Ok(());
    }
    let r = shape.radius;
    let front = |j: usize, t: usize| {
        shape.snap(
            (c0 + (t + 1) * width).saturating_sub(j * r).clamp(c0, c1),
            c0,
            c1,
        )
    };
    let mut done = vec![c0; steps];
    let mut t = 0;
    while done[steps - 1] < c1 {
        let cols: Vec<Range<usize>> = (0..steps).map(|j| done[j]..front(j, t)).collect();
        wavefront(shape, plan, steps, |j, rows| {
            if cols[j].is_empty() {
                Ok(())
            } else {
                update(j, rows, cols[j].clone())
            }
        })?;
        for (j, d) in done.iter_mut().enumerate() {
            *d = front(j, t);
        }
        t += 1;
    }
    Ok(())
}

/// Splits a ring of `L` time-level buffers for the update that writes slot `out`: the buffer
/// written (`&mut`) and the others newest first (`ins[0]` is the level just before, slot
/// `out - 1 mod L`; `ins[L - 2]` the oldest, slot `out + 1 mod L`).
///
/// With the levels of a run in slots `level mod L`, the update of level `n` is
/// `ring_split(ring, n % L)`.
///
/// ```
/// use ppstencil::solver::blocking::ring_split;
/// let mut ring = ['a', 'b', 'c'];
/// let (out, ins) = ring_split(&mut ring, 0);
/// assert_eq!((*out, ins), ('a', vec![&'c', &'b']));
/// ```
pub fn ring_split<F>(ring: &mut [F], out: usize) -> (&mut F, Vec<&F>) {
    let l = ring.len();
    assert!(out < l, "slot {out} of a ring of {l}");
    let (before, rest) = ring.split_at_mut(out);
    let (written, after) = rest.split_first_mut().expect("out < len");
    let (before, after): (&[F], &[F]) = (before, after);
    let ins = (1..l)
        .map(|m| {
            let slot = (out + l - m) % l;
            if slot < out {
                &before[slot]
            } else {
                &after[slot - out - 1]
            }
        })
        .collect();
    (written, ins)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(radius: usize, levels: usize, domain: Range<usize>) -> StepShape {
        StepShape {
            radius,
            levels,
            domain,
            row_bytes: 1,
            axis1: None,
            axis1_len: 0,
            ends: 0,
        }
    }

    /// [`wavefront_tiled`] replayed on a ring of abstract levels over rows × columns, as in
    /// `wavefront_respects_every_dependency`: every point of every level computed exactly
    /// once, after the points it reads (within `r` along both axes, every level of the ring)
    /// hold exactly the levels it needs; for tiles wider and narrower than the skew, widths
    /// that do not divide the axis, and without tiles.
    #[test]
    fn tiled_wavefront_respects_every_dependency() {
        for (r, levels, rows, cols, band, tile, steps, ends) in [
            (1, 2, 1..9, 1..12, 1, Some(1), 5, 0),
            (2, 3, 2..30, 2..23, 3, Some(5), 7, 0),
            (2, 3, 2..30, 2..23, 2, Some(2), 6, 0),
            (4, 3, 4..20, 4..31, 4, Some(7), 9, 0),
            (4, 3, 4..20, 4..31, 5, Some(1), 4, 0),
            (3, 4, 3..25, 3..19, 5, Some(4), 6, 0),
            (2, 3, 2..14, 2..40, 3, Some(100), 5, 0),
            (2, 3, 2..14, 2..17, 3, None, 5, 0),
            (2, 3, 2..30, 2..33, 3, Some(5), 7, 8),
            (1, 3, 1..25, 1..40, 2, Some(3), 9, 11),
            (2, 3, 2..14, 2..17, 3, None, 5, 4),
        ] {
            let s = shape(r, levels, rows.clone())
                .with_axis1(cols.end + r)
                .unwrap()
                .with_ends(ends);
            let mut plan = BlockPlan::new(&s, steps, band).unwrap();
            plan.tile = tile; // also below the radius: the schedule must hold there too
            let (n, m) = (rows.end + r, cols.end + r);
            let mut slots: Vec<Vec<i64>> = (0..levels).map(|l| vec![l as i64; n * m]).collect();
            let mut count = vec![vec![0; n * m]; steps];
            wavefront_tiled(&s, &plan, steps, |j, band_rows, tile_cols| {
                // No band or tile starts or stops within `ends` of the domain's ends.
                for (f, d) in [
                    (band_rows.start, &rows),
                    (band_rows.end, &rows),
                    (tile_cols.start, &cols),
                    (tile_cols.end, &cols),
                ] {
                    let inner = d.start + ends <= f && f + ends <= d.end;
                    assert!(
                        f == d.start || f == d.end || inner,
                        "ends {ends}: step {j} {band_rows:?} x {tile_cols:?} stops in the ends"
                    );
                }
                let level = (levels - 1 + j + 1) as i64;
                for z in band_rows {
                    for y in tile_cols.clone() {
                        for k in 1..levels as i64 {
                            let want = level - k;
                            let slot = (want as usize) % levels;
                            for zz in z - r..=z + r {
                                for yy in y - r..=y + r {
                                    let have = slots[slot][zz * m + yy];
                                    let inside = rows.contains(&zz) && cols.contains(&yy);
                                    assert!(
                                        !inside || have == want,
                                        "r={r} tile={tile:?}: level {level} at ({z}, {y}) reads ({zz}, {yy}) of level {want}, finds {have}"
                                    );
                                }
                            }
                        }
                        slots[level as usize % levels][z * m + y] = level;
                        count[j][z * m + y] += 1;
                    }
                }
                Ok(())
            })
            .unwrap();
            for (j, c) in count.iter().enumerate() {
                for (i, &times) in c.iter().enumerate() {
                    let inside = rows.contains(&(i / m)) && cols.contains(&(i % m));
                    assert_eq!(times, usize::from(inside), "step {j} point {i}");
                }
            }
        }
    }

    #[test]
    fn tiles_parse_and_are_checked() {
        let s = shape(4, 3, 4..100);
        let e = BlockPlan::new(&s, 4, 8)
            .unwrap()
            .with_tile(&s, 16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bands of whole rows only"), "{e}");
        let s = s.with_axis1(50).unwrap();
        let e = BlockPlan::new(&s, 4, 8)
            .unwrap()
            .with_tile(&s, 3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 4 points (radius 4)"), "{e}");
        let t: TimeBlock = "6:4x24".parse().unwrap();
        assert_eq!(
            t,
            TimeBlock::Fixed(BlockPlan {
                depth: 6,
                band: 4,
                tile: Some(24)
            })
        );
        assert_eq!(t.name(), "6:4x24");
        for bad in ["6:4x0", "6:4x", "6:x4", "6:4x4x4"] {
            assert!(bad.parse::<TimeBlock>().is_err(), "{bad}");
        }
    }

    /// The schedule checked against its contract by replaying it on a ring of abstract
    /// levels: every row of every level is computed exactly once, after the rows it reads
    /// (level `n - 1` within `r` rows, every older level of the ring within `r` rows) hold
    /// exactly the levels it needs, i.e. were neither missing nor already overwritten.
    #[test]
    fn wavefront_respects_every_dependency() {
        for (r, levels, rows, band, steps, ends) in [
            (1, 2, 1..9, 1, 5, 0),
            (2, 3, 2..40, 3, 7, 0),
            (2, 3, 2..40, 2, 1, 0),
            (4, 3, 4..20, 4, 9, 0),
            (8, 3, 8..57, 8, 3, 0),
            (3, 4, 3..30, 5, 6, 0),
            (1, 2, 1..3, 7, 4, 0),
            (2, 3, 2..40, 3, 7, 9),
            (1, 3, 1..60, 4, 12, 21),
            (2, 3, 2..40, 2, 5, 1),
            (2, 3, 2..30, 3, 6, 14),
            (2, 3, 2..30, 3, 6, 40),
        ] {
            let s = shape(r, levels, rows.clone()).with_ends(ends);
            let plan = BlockPlan::new(&s, steps, band).unwrap();
            let n = rows.end + r;
            // slots[slot][row] = level held (levels 0 .. L-1 are there before the block).
            let mut slots: Vec<Vec<i64>> = (0..levels).map(|l| vec![l as i64; n]).collect();
            let mut count = vec![vec![0; n]; steps];
            wavefront(&s, &plan, steps, |j, band_rows| {
                // No band starts or stops within `ends` rows of the domain's ends.
                let (lo, hi) = (rows.start + ends, rows.end.saturating_sub(ends));
                for f in [band_rows.start, band_rows.end] {
                    assert!(
                        f == rows.start || f == rows.end || (lo <= f && f <= hi),
                        "ends {ends}: step {j} band {band_rows:?} stops in the ends"
                    );
                }
                let level = (levels - 1 + j + 1) as i64; // written
                for z in band_rows {
                    for m in 1..levels as i64 {
                        let want = level - m;
                        let slot = (want as usize) % levels;
                        for (zz, &have) in slots[slot].iter().enumerate().take(z + r + 1).skip(z - r) {
                            let inside = rows.contains(&zz);
                            // Border rows are never written: any level is "there".
                            assert!(
                                !inside || have == want,
                                "r={r} L={levels} ends={ends}: level {level} row {z} reads row {zz} of level {want}, finds {have}"
                            );
                        }
                    }
                    slots[level as usize % levels][z] = level;
                    count[j][z] += 1;
                }
                Ok(())
            })
            .unwrap();
            for (j, c) in count.iter().enumerate() {
                for (z, &times) in c.iter().enumerate() {
                    assert_eq!(times, usize::from(rows.contains(&z)), "step {j} row {z}");
                }
            }
        }
    }

    #[test]
    fn bad_plans_are_errors_naming_the_fix() {
        let s = shape(4, 3, 4..100);
        let e = BlockPlan::new(&s, 0, 8).unwrap_err().to_string();
        assert!(e.contains("at least 1 time step"), "{e}");
        let e = BlockPlan::new(&s, 4, 3).unwrap_err().to_string();
        assert!(e.contains("at least 4 rows (lag 4)"), "{e}");
        assert!("0".parse::<TimeBlock>().is_err());
        assert!("fast".parse::<TimeBlock>().is_err());
        assert_eq!("auto".parse::<TimeBlock>().unwrap(), TimeBlock::Auto);
        assert_eq!("12".parse::<TimeBlock>().unwrap(), TimeBlock::Depth(12));
    }

    /// Auto: no blocking when the fields fit in half the cache; when they do not, a band
    /// whose wavefront fits in a quarter of it.
    #[test]
    fn auto_blocks_only_grids_beyond_the_cache() {
        let llc = 32 << 20;
        // 1001 x 1001 f32, 4 fields: 16 MB <= 16 MiB.
        let small = StepShape {
            row_bytes: 1001 * 4 * 4,
            ..shape(2, 3, 2..999)
        };
        assert_eq!(BlockPlan::auto(&small, 1001, llc), None);
        let paper = StepShape {
            row_bytes: 5001 * 4 * 4,
            ..shape(2, 3, 2..1749)
        };
        let plan = BlockPlan::auto(&paper, 1751, llc).unwrap();
        assert_eq!(
            plan,
            BlockPlan {
                depth: 16,
                band: 64,
                tile: None
            }
        );
        assert!(plan.rows_in_flight(&paper) * paper.row_bytes <= llc / 4);
        // Rows so wide that even a minimal wavefront exceeds the cache: unblocked.
        let wide = StepShape {
            row_bytes: llc / 16,
            ..shape(8, 3, 8..1000)
        };
        assert_eq!(BlockPlan::auto(&wide, 1008, llc), None);
        let why = BlockPlan::auto_or_why(&wide, 1008, llc).unwrap_err();
        assert!(
            why.contains("cannot be tiled along its second axis"),
            "{why}"
        );
        let why = BlockPlan::auto_or_why(&small, 1001, llc).unwrap_err();
        assert!(why.contains("fit in half the last-level cache"), "{why}");
    }

    /// 3D, planes as the rows: large planes get a shallower block whose wavefront still fits
    /// in a quarter of the cache; planes too large for any are refused, saying why.
    #[test]
    fn auto_chooses_the_depth_for_3d_planes() {
        let llc = 32 << 20;
        // 400 x 400 x 400 f32 at order 8 (radius 4): a plane of 4 fields is 2.44 MiB, a
        // quarter of the cache holds 3 planes; the least wavefront (2 steps, bands of 4)
        // needs 4 + 3 x 4 = 16.
        let big = StepShape {
            row_bytes: 400 * 400 * 16,
            ..shape(4, 3, 4..396)
        };
        let why = BlockPlan::auto_or_why(&big, 400, llc).unwrap_err();
        assert!(
            why.contains("a plane in 3D") && why.contains("16 of them"),
            "{why}"
        );
        // Tileable along y: auto tiles instead, a wavefront of (4 + (d + 1) 4) planes ×
        // (tile + (d + 1) 4) lines of 400 points of 4 fields within a quarter of the cache.
        let big = big.with_axis1(400).unwrap();
        let plan = BlockPlan::auto(&big, 400, llc).unwrap();
        let tile = plan.tile.unwrap();
        assert!(
            tile >= AUTO_MIN_TILE && plan.depth >= 2 && plan.band == 4,
            "{plan:?}"
        );
        let lines = tile + (plan.depth + 1) * 4;
        assert!(
            plan.rows_in_flight(&big) * lines * 400 * 16 <= llc / 4,
            "{plan:?}"
        );
        // Lines too long even for the narrowest tile: unblocked, saying so.
        let huge = StepShape {
            row_bytes: 400 * 40_000 * 16,
            ..shape(4, 3, 4..396)
        }
        .with_axis1(400)
        .unwrap();
        let why = BlockPlan::auto_or_why(&huge, 400, llc).unwrap_err();
        assert!(why.contains("no tile of at least 16 points"), "{why}");
        // 1000 x 100 x 100: a plane is 156 KiB, a quarter of the cache 52 planes; depth 16
        // would need 68 planes of skew, so the deepest block that fits: (d + 1) 4 + band
        // <= 52 with band >= 4, i.e. depth 11 in bands of 4 planes.
        let slim = StepShape {
            row_bytes: 100 * 100 * 16,
            ..shape(4, 3, 4..996)
        };
        let plan = BlockPlan::auto(&slim, 1000, llc).unwrap();
        assert_eq!(
            plan,
            BlockPlan {
                depth: 11,
                band: 4,
                tile: None
            }
        );
        assert!(plan.rows_in_flight(&slim) * slim.row_bytes <= llc / 4);
        // 200³ at order 4 (radius 2): whole planes of 625 KiB allow a wavefront of 3 steps
        // ((3 + 1) 2 + 4 = 12 planes); tiles of y allow a deeper block that moves fewer bytes
        // per step (cost below 1/3), so a tileable step takes the tiles.
        let cube = StepShape {
            row_bytes: 200 * 200 * 16,
            ..shape(2, 3, 2..198)
        };
        let rows = BlockPlan::auto(&cube, 200, llc).unwrap();
        assert_eq!((rows.depth, rows.tile), (3, None), "{rows:?}");
        let tiled = BlockPlan::auto(&cube.clone().with_axis1(200).unwrap(), 200, llc).unwrap();
        let w = tiled.tile.expect("tiles") as f64;
        let cost = (w + (tiled.depth + 2) as f64 * 2.0) / (w * tiled.depth as f64);
        assert!(tiled.depth > 3 && cost < 1.0 / 3.0, "{tiled:?}");
        // The paper grid keeps whole rows: tiles would move (W + 36) / (16 W) > 1/16.
        let paper = StepShape {
            row_bytes: 5001 * 16,
            ..shape(2, 3, 2..1749)
        }
        .with_axis1(5001)
        .unwrap();
        assert_eq!(BlockPlan::auto(&paper, 1751, llc).unwrap().tile, None);
    }
}
