//! What the PML costs per time step: the paper's problem (1751 x 5001, f32, rayon) stepped
//! with a rigid border and with a PML of `ABSORB` cells, both prepared once in this process
//! and advanced block by block in turns (one block of 16 steps of each, then the next), so
//! that both see the same memory bandwidth; with the temporal blocking `TIME_BLOCK` (as
//! `ppwave run --time-block` takes it: the default `auto` is a run's, `off` one step per
//! sweep).
//!
//! `cargo run --release -p ppwave --example pml_cost -- [BLOCKS=24] [ABSORB=20] [THREADS=2]
//! [TIME_BLOCK=auto]`
//!
//! Prints the time per step of each and their ratio (the PML's step over the rigid one),
//! over all blocks and as the median of the per-block ratios, and the STREAM triad of the
//! same threads measured before and after (`ppwave bench`'s), the bandwidth of the moment.

use ppstencil::solver::{Boundary, TimeBlock, WaveConfig, WaveSimulator};
use ppstencil::Rayon;
use std::time::Instant;

/// Steps per block, and the steps run before timing (a multiple of the block).
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
    while sim.step_block(BLOCK)? + 1 < WARM_UP {}
    Ok(sim)
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
    anyhow::ensure!(
        blocks > 0 && absorb > 0,
        "BLOCKS and ABSORB must be at least 1"
    );
    let triad_before = ppwave::bench::triad_gbs(threads, 5)?;
    let nt = WARM_UP + BLOCK * blocks;
    // One pool for both: with a pool each, four workers share the cores, and the idle pool's
    // spinning workers were seen to double the PML run's step time in some runs.
    let space = Rayon::with_threads(threads)?;
    let mut rigid = simulator(0, nt, &space, time_block)?;
    let mut pml = simulator(absorb, nt, &space, time_block)?;
    let (mut ratios, mut t_rigid, mut t_pml) = (Vec::new(), 0.0, 0.0);
    for _ in 0..blocks {
        let t = Instant::now();
        rigid.step_block(BLOCK)?;
        let a = t.elapsed().as_secs_f64();
        let t = Instant::now();
        pml.step_block(BLOCK)?;
        let b = t.elapsed().as_secs_f64();
        ratios.push(b / a);
        t_rigid += a;
        t_pml += b;
    }
    let triad_after = ppwave::bench::triad_gbs(threads, 5)?;
    ratios.sort_by(f64::total_cmp);
    let steps = (BLOCK * blocks) as f64;
    println!(
        "paper grid, {threads} threads, time block {}, {blocks} blocks of {BLOCK} steps: rigid {:.3} ms/step, \
         pml ({absorb} cells) {:.3} ms/step; pml / rigid {:.3} (all blocks), {:.3} (median of \
         blocks); triad {triad_before:.1} GB/s before, {triad_after:.1} after",
        time_block.name(),
        t_rigid / steps * 1e3,
        t_pml / steps * 1e3,
        t_pml / t_rigid,
        ratios[ratios.len() / 2]
    );
    Ok(())
}
