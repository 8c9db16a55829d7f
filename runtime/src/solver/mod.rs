//! The proof-of-concept algorithm: a 2D acoustic wave simulator, generic over the execution
//! space (the paper's `WaveSimulator<ExecSpace>`).
//!
//! Second order in time, fourth order in space by default (any even order from 2 to 16 with
//! [`WaveConfig::space_order`]). Each step runs `add_source → fd_pzz → fd_pxx → fd_time` (the
//! paper's split kernels, order 4 only) or `add_source → fd_step_4` (fused, the default), then
//! the optional absorbing layer's `fd_absorb`, and rotates `pold ← p ← pnew`. The algorithm is
//! written once; where its fields live and how its kernels run follow from `E`.
//!
//! Beyond the paper (each option defaults to the paper's behaviour):
//! - [`WaveConfig::space_order`]: the fused step of that order (`laplacian(p, N)` in the DSL);
//!   the border that stays zero is its radius `N / 2`; the CFL limit is [`cfl_limit_for`].
//! - [`WaveConfig::absorb`]: an absorbing layer of that many cells on every side, a damping
//!   term `η p_t` whose strength grows quadratically into the layer (see [`absorbing_eta`]).
//! - [`WaveConfig::source_mode`]: [`SourceMode::Set`] (the paper) or [`SourceMode::Add`], a
//!   delayed Ricker wavelet injected as a point source of the discretised equation.
//! - [`WaveConfig::receivers`]: traces recorded every step, read back with
//!   [`WaveSimulator::seismogram`].
//! - [`WaveConfig::velocity`]: a velocity model given as data; layers apply on top.
//! - [`WaveConfig::snapshot_every`]: a host copy of the wavefield handed to a hook every K
//!   steps ([`WaveSimulator::run_with`]).
//!
//! A user's own time loop (imaging, inversion, coupling) calls
//! [`WaveSimulator::prepare`], then [`WaveSimulator::step`] once per time step (receivers are
//! recorded there; snapshots, progress and, later, halo exchanges attach between steps), and
//! [`WaveSimulator::finish`]; [`WaveSimulator::run`] is that loop.
//!
//! Where things live (all re-exported here): `physics.rs` (the numbers of the scheme: FD
//! weights and the CFL limit, the Ricker wavelets, the absorbing layer's damping),
//! `config.rs` ([`WaveConfig`] and its validation, [`Layer`], [`SourceMode`],
//! [`StepKernels`]) and `simulator.rs` ([`WaveSimulator`]: preparing a run, one time step,
//! the time loop, results). The stencils the solver runs live in [`crate::kernels`];
//! receivers and velocity models in [`crate::receivers`] and [`crate::model`].

mod config;
mod physics;
mod simulator;

pub use config::{Layer, SourceMode, StepKernels, WaveConfig};
pub use physics::{
    absorbing_eta, cfl_limit, cfl_limit_for, check_space_order, ricker, ricker_delayed,
    second_derivative_weights, ABSORB_STRENGTH, DEFAULT_SPACE_ORDER, MAX_SPACE_ORDER,
    MIN_SPACE_ORDER,
};
pub use simulator::{RunStats, WaveSimulator, FINITE_CHECK_EVERY};
#[cfg(feature = "mpi")]
pub(crate) use {
    physics::{layer_depth, source_sample},
    simulator::non_finite,
};
