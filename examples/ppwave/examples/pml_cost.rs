//! What the PML costs per time step: the paper's problem (1751 x 5001, f32, rayon) stepped
//! with a rigid border and with a PML of `ABSORB` cells, both prepared once in this process
//! and advanced block by block in turns (one block of 16 steps of each, then the next), so
//! that both see the same memory bandwidth; with the temporal blocking `TIME_BLOCK` (as
//! `ppwave run --time-block` takes it: the default `auto` is a run's, `off` one step per
//! sweep).
//!
//! `cargo run --release -p ppwave --example pml_cost -- [BLOCKS=24] [ABSORB=20] [THREADS=2]
//! [TIME_BLOCK=auto] [ORDER=both]`
//!
//! With `auto` each simulator chooses its band by timing its first blocks, as a run does
//! (`ppstencil::solver::tuning`); both are stepped until that is over before timing starts,
//! and the bands kept are printed.
//!
//! Prints the time per step of each and their ratio (the PML's step over the rigid one),
//! over all blocks and as the median of the per-block ratios, and the STREAM triad of the
//! same threads measured before and after (`ppwave bench`'s), the bandwidth of the moment.
//!
//! `ORDER` says which simulator is prepared (allocated) and stepped first: `rigid-first`,
//! `pml-first`, `both` (the default: one pass of `BLOCKS` blocks in each order, each with its
//! own pair of simulators, and the geometric mean of the two passes' medians), or `aa`, a
//! control of `both`: the PML simulator against an identical second one, in both orders as
//! `both` runs them, which should give 1. Why both orders: where the pages of a simulator's
//! fields land moves its step by a few percent from process to process (`aa` in one order
//! only gave 1.01–1.12), and averaging both orders keeps the order out of the ratio (method
//! and figures: `docs/performance.md`, "The cost of the PML").

use ppstencil::solver::tuning::{TUNE_BLOCKS, TUNE_SHARE_INVERSE};
use ppstencil::solver::{Blocking, Boundary, TimeBlock, WaveConfig, WaveSimulator};
use ppstencil::Rayon;
use std::time::Instant;

/// Steps per block, and the steps run before timing (a multiple of the block; longer while
/// the band is being tuned).
const BLOCK: usize = 16;
const WARM_UP: usize = 64;

fn simulator(
    absorb: usize,
    nt: usize,
    space: &Rayon,
    time_block: TimeBlock,
) -> anyhow::Result<WaveSimulator<Rayon>> {
    let config = WaveConfig {
        nt,
        absorb,
        time_block,
        boundary: if absorb > 0 {
            Boundary::Pml
        } else {
            Boundary::Rigid
        },
        ..WaveConfig::paper()
    };
    let mut sim = WaveSimulator::with_config(space.clone(), config);
    sim.prepare()?;
    let tuning =
        |sim: &WaveSimulator<Rayon>| sim.band_tuner().is_some_and(|t| t.chosen().is_none());
    while sim.step_block(BLOCK)? + 1 < WARM_UP || tuning(&sim) {}
    Ok(sim)
}

/// The band a simulator runs, and whether it was tuned.
fn band(sim: &WaveSimulator<Rayon>) -> String {
    match sim.blocking() {
        Some(Blocking::On(plan)) => {
            let how = if sim.band_tuner().is_some() {
                "tuned"
            } else {
                "fixed"
            };
            format!("{} rows ({how})", plan.band)
        }
        _ => "unblocked".into(),
    }
}

fn main() -> anyhow::Result<()> {
    let arg = |k: usize, default: usize| -> anyhow::Result<usize> {
        Ok(match std::env::args().nth(k) {
            Some(s) => s.parse()?,
            None => default,
        })
    };
    let (blocks, absorb, threads) = (arg(1, 24)?, arg(2, 20)?, arg(3, 2)?);
    let time_block: TimeBlock = match std::env::args().nth(4) {
        Some(s) => s.parse()?,
        None => TimeBlock::Auto,
    };
    let order = std::env::args().nth(5).unwrap_or_else(|| "both".into());
    // Each pass: what it is, the absorbing widths of the reference simulator (0: rigid) and
    // of the measured one, and which of the two (0 or 1) is prepared and stepped first.
    let pml_first = ("pml first", [0, absorb], 1);
    let rigid_first = ("rigid first", [0, absorb], 0);
    let passes: &[(&str, [usize; 2], usize)] = match order.as_str() {
        "both" => &[rigid_first, pml_first],
        "rigid-first" => &[rigid_first],
        "pml-first" => &[pml_first],
        "aa" => &[
            ("pml against pml (aa), reference first", [absorb, absorb], 0),
            ("pml against pml (aa), measured first", [absorb, absorb], 1),
        ],
        _ => anyhow::bail!("ORDER must be both, rigid-first, pml-first or aa, not {order:?}"),
    };
    anyhow::ensure!(
        blocks > 0 && absorb > 0,
        "BLOCKS and ABSORB must be at least 1"
    );
    let triad_before = ppwave::bench::triad_gbs(threads, 5)?;
    // Long enough for the band's tuning to run (a quarter of the run at most) and end
    // before the timed blocks.
    let nt =
        (WARM_UP + BLOCK * (TUNE_BLOCKS + blocks)).max(BLOCK * TUNE_SHARE_INVERSE * TUNE_BLOCKS);
    // One pool for both: with a pool each, four workers share the cores, and the idle pool's
    // spinning workers were seen to double the PML run's step time in some runs.
    let space = Rayon::with_threads(threads)?;
    let mut medians = Vec::new();
    for &(what, absorbs, first) in passes {
        let turns = [first, 1 - first];
        // Prepared in turn, then put back in place (reference, measured).
        let mut sims = [
            simulator(absorbs[turns[0]], nt, &space, time_block)?,
            simulator(absorbs[turns[1]], nt, &space, time_block)?,
        ];
        sims.swap(0, first);
        let (mut ratios, mut t) = (Vec::new(), [0.0f64; 2]);
        for _ in 0..blocks {
            let mut block = [0.0; 2];
            for k in turns {
                let start = Instant::now();
                sims[k].step_block(BLOCK)?;
                block[k] = start.elapsed().as_secs_f64();
            }
            ratios.push(block[1] / block[0]);
            t[0] += block[0];
            t[1] += block[1];
        }
        ratios.sort_by(f64::total_cmp);
        let median = ratios[ratios.len() / 2];
        medians.push(median);
        let steps = (BLOCK * blocks) as f64;
        println!(
            "{what}: rigid {:.3} ms/step, pml ({absorb} cells) {:.3} ms/step; pml / rigid {:.3} \
             (all blocks), {median:.3} (median of blocks); bands {} and {}",
            t[0] / steps * 1e3,
            t[1] / steps * 1e3,
            t[1] / t[0],
            band(&sims[0]),
            band(&sims[1]),
        );
    }
    let triad_after = ppwave::bench::triad_gbs(threads, 5)?;
    let mean = medians.iter().map(|m| m.ln()).sum::<f64>() / medians.len() as f64;
    println!(
        "paper grid, {threads} threads, time block {}, {blocks} blocks of {BLOCK} steps per \
         pass, order {order}: pml / rigid {:.3} (geometric mean of the passes' medians); triad \
         {triad_before:.1} GB/s before, {triad_after:.1} after",
        time_block.name(),
        mean.exp()
    );
    Ok(())
}
