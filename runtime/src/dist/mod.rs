//! Distributed runs: a Cartesian domain decomposition of the grid over MPI ranks.
//!
//! - `decomp.rs`: [`Decomposition`] over any number of axes (balanced automatically or
//!   given), global ↔ local boxes; pure index arithmetic, always compiled.
//! - `halo.rs` (feature `mpi`): `HaloExchange`, non-blocking face messages overlapped with
//!   the caller's work.
//! - `simulator.rs` (feature `mpi`): `DistributedSimulator`, the 2D and 3D acoustic solver over
//!   the ranks, bit-identical to [`WaveSimulator`](crate::WaveSimulator) in one process.
//!
//! Not here: MPI start-up and error policy (the program's: `mpi::initialize`, and
//! `abort` when one rank fails), device memory (ranks compute on the host, serial or rayon).

mod decomp;
#[cfg(feature = "mpi")]
mod halo;
#[cfg(feature = "mpi")]
mod simulator;

pub use decomp::{intersect, is_empty, peel, to_local, Decomposition};
#[cfg(feature = "mpi")]
pub use halo::HaloExchange;
/// The `mpi` crate this module is built on (rsmpi), for the program's start-up and errors.
#[cfg(feature = "mpi")]
pub use mpi;
#[cfg(feature = "mpi")]
pub use simulator::{DistResults, DistStats, DistributedSimulator};
