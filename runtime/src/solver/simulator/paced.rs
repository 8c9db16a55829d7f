//! Pacing of the simulator's time loop: each block of [`WaveSimulator::step_block`] runs on
//! the space or on its narrower form as the run's [`Pacer`] says, and is timed for it.

use super::WaveSimulator;
use crate::exec::{pacing_from_env, Pacer};
use crate::solver::dims::{Dims, WaveKernels};
use crate::{ExecutionSpace, Real, Result};
use std::time::Instant;

impl<E: ExecutionSpace, T: Real, const D: usize> WaveSimulator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// The pacer of the last prepared run: how many of its steps ran on one thread fewer
    /// ([`Pacer::narrow_steps`]). `None` where the run is not paced (see
    /// [`PACING_ENV`](crate::exec::PACING_ENV) and [`ExecutionSpace::narrowed`]).
    pub fn pacer(&self) -> Option<&Pacer> {
        self.pacer.as_ref().map(|(pacer, _)| pacer)
    }

    /// Sets up, for [`prepare`](Self::prepare), the pacer of a run on this space under
    /// [`PACING_ENV`](crate::exec::PACING_ENV) (an error for a value it does not take).
    pub(super) fn plan_pacing(&mut self) -> Result<()> {
        self.pacer = Pacer::for_space(&self.space, pacing_from_env()?);
        Ok(())
    }

    /// Runs the block `block` (a sweep or steps; it returns the index of its last step) on
    /// the width the pacer gives, and records its time.
    pub(super) fn paced(
        &mut self,
        block: impl FnOnce(&mut Self) -> Result<usize>,
    ) -> Result<usize> {
        let first = self.steps_done();
        let start = Instant::now();
        let last = self.on_pacer_width(block)?;
        let elapsed = start.elapsed();
        if let Some((pacer, _)) = self.pacer.as_mut() {
            pacer.record(last + 1 - first, elapsed);
        }
        Ok(last)
    }

    /// Runs `block` on the width the pacer gives (the run's space where it is not paced),
    /// without recording it: the band tuner's blocks, timed for the band alone. The narrower
    /// space stands in for the run's space for the block: both give the same fields bit for
    /// bit.
    pub(super) fn on_pacer_width<R>(&mut self, block: impl FnOnce(&mut Self) -> R) -> R {
        let narrow = self.pacer.as_ref().is_some_and(|(p, _)| p.narrow_next());
        if narrow {
            self.swap_spaces();
        }
        let result = block(self);
        if narrow {
            self.swap_spaces();
        }
        result
    }

    /// Exchanges the run's space and the pacer's narrower one.
    fn swap_spaces(&mut self) {
        if let Some((_, narrow)) = self.pacer.as_mut() {
            std::mem::swap(&mut self.space, narrow);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::{Pacer, Pacing};
    use crate::solver::blocking::{BlockPlan, TimeBlock};
    use crate::solver::config::{Boundary, WaveConfig};
    use crate::solver::dims::{Dims, WaveKernels};
    use crate::{ExecutionSpace, Rayon, Serial, WaveSimulator};

    /// A small run with a sponge and receivers, blocked or not, in 2D or 3D.
    fn config(ny: usize, time_block: TimeBlock) -> WaveConfig {
        WaveConfig {
            nz: 40,
            ny,
            nx: 36,
            nt: 47,
            dt: 0.0005,
            dh: 5.0,
            src_z: 18,
            src_y: ny / 2,
            src_x: 17,
            fpeak: 25.0,
            vmin: 2000.0,
            layers: vec![],
            absorb: 6,
            boundary: Boundary::Sponge,
            receivers: vec![(10, 8), (30, 25)],
            time_block,
            ..WaveConfig::paper()
        }
    }

    /// Runs `config` on `space` block by block, switching width at every block where
    /// `alternate`: the wavefield, the traces and the steps run narrow.
    fn run<E: ExecutionSpace, const D: usize>(
        space: E,
        config: WaveConfig,
        alternate: bool,
    ) -> (Vec<u32>, Vec<u32>, usize)
    where
        Dims<D>: WaveKernels<D>,
    {
        let mut sim = WaveSimulator::<E, f32, D>::with_config(space, config);
        sim.prepare().unwrap();
        if alternate {
            sim.pacer = Pacer::for_space(&sim.space, Pacing::Alternate);
            assert!(sim.pacer.is_some(), "a pool of two or more threads narrows");
        }
        while sim.steps_done() < sim.config.nt {
            sim.step_block(sim.block_steps()).unwrap();
        }
        let narrow = sim.pacer().map_or(0, |p| p.narrow_steps());
        sim.finish().unwrap();
        let p = sim.wavefield_host().unwrap();
        let traces = sim.seismogram().unwrap().data.iter().map(|v| v.to_bits());
        let field = p.as_slice().iter().map(|v| v.to_bits()).collect();
        (field, traces.collect(), narrow)
    }

    /// A run whose blocks switch between all of a pool's threads and one fewer (the calling
    /// thread alone for a pool of two, a pool of two for three) is the serial run bit for
    /// bit, blocked and unblocked, in 2D and 3D.
    #[test]
    fn switching_width_every_block_changes_no_bit() {
        let plan = BlockPlan {
            depth: 5,
            band: 6,
            tile: None,
        };
        for time_block in [TimeBlock::Off, TimeBlock::Fixed(plan)] {
            for threads in [2, 3] {
                let space = || Rayon::with_threads(threads).unwrap();
                let c2 = config(1, time_block);
                let want = run::<_, 2>(Serial, c2.clone(), false);
                let got = run::<_, 2>(space(), c2, true);
                assert_eq!(
                    (&got.0, &got.1),
                    (&want.0, &want.1),
                    "2D, {threads} threads"
                );
                assert!(got.2 > 0 && got.2 < 47, "{} narrow steps", got.2);
                let mut c3 = config(14, time_block);
                c3.receivers = vec![];
                c3.receivers_3d = vec![(10, 7, 8), (30, 7, 25)];
                let want = run::<_, 3>(Serial, c3.clone(), false);
                let got = run::<_, 3>(space(), c3, true);
                assert_eq!(
                    (&got.0, &got.1),
                    (&want.0, &want.1),
                    "3D, {threads} threads"
                );
                assert!(got.2 > 0 && got.2 < 47, "{} narrow steps", got.2);
            }
        }
    }
}
