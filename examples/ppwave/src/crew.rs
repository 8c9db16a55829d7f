//! Where the shots of `ppwave migrate` and `ppwave invert` run ([`Crew`]): in this process,
//! or, under `mpiexec -n P` with feature `mpi`, shared out over the ranks (shot `i` on rank
//! `i mod P`) with the library's `*_ranks` sums, which give every rank the single-process
//! result bit for bit. Rank 0 writes the outputs.

use ppstencil::solver::{MisfitGradient, Shot, Storage, WaveOperator};
use ppstencil::{ExecutionSpace, Real, Result};

/// The processes that share a survey's shots.
pub struct Crew {
    /// MPI, initialised when ppwave runs under `mpiexec`.
    #[cfg(feature = "mpi")]
    universe: Option<ppstencil::dist::mpi::environment::Universe>,
}

#[cfg(feature = "mpi")]
use ppstencil::dist::mpi::traits::Communicator;

impl Crew {
    /// The ranks of `mpiexec` when ppwave (built with feature `mpi`) runs under it; else
    /// this process alone.
    pub fn start() -> anyhow::Result<Crew> {
        #[cfg(feature = "mpi")]
        if crate::dist::under_mpiexec() {
            let Some(universe) = ppstencil::dist::mpi::initialize() else {
                anyhow::bail!("MPI was already initialised in this process");
            };
            return Ok(Crew {
                universe: Some(universe),
            });
        }
        Ok(Crew {
            #[cfg(feature = "mpi")]
            universe: None,
        })
    }

    /// This process's rank and the number of processes.
    pub fn rank_and_size(&self) -> (usize, usize) {
        #[cfg(feature = "mpi")]
        if let Some(u) = &self.universe {
            let world = u.world();
            return (world.rank() as usize, world.size() as usize);
        }
        (0, 1)
    }

    /// Whether this process writes the outputs and messages: rank 0, or the only process.
    pub fn writes(&self) -> bool {
        self.rank_and_size().0 == 0
    }

    /// The RTM image of `shots` on `op` ([`WaveOperator::image_shots`]).
    pub fn image<E: ExecutionSpace, T: Real>(
        &self,
        op: &WaveOperator<E, T>,
        shots: &[Shot<'_, T>],
        storage: Storage,
    ) -> Result<MisfitGradient<T>> {
        #[cfg(feature = "mpi")]
        if let Some(u) = &self.universe {
            return op.image_ranks(shots, storage, &u.world());
        }
        op.image_shots(shots, storage)
    }

    /// The misfit and its gradient over `shots` on `op`
    /// ([`WaveOperator::misfit_gradient_shots`]).
    pub fn gradient<E: ExecutionSpace, T: Real>(
        &self,
        op: &WaveOperator<E, T>,
        shots: &[Shot<'_, T>],
        storage: Storage,
    ) -> Result<MisfitGradient<T>> {
        #[cfg(feature = "mpi")]
        if let Some(u) = &self.universe {
            return op.misfit_gradient_ranks(shots, storage, &u.world());
        }
        op.misfit_gradient_shots(shots, storage)
    }

    /// The misfit of `shots` on `op`, forward runs only ([`WaveOperator::misfit_shots`]).
    pub fn misfit<E: ExecutionSpace, T: Real>(
        &self,
        op: &WaveOperator<E, T>,
        shots: &[Shot<'_, T>],
    ) -> Result<f64> {
        #[cfg(feature = "mpi")]
        if let Some(u) = &self.universe {
            return op.misfit_ranks(shots, &u.world());
        }
        op.misfit_shots(shots)
    }
}
