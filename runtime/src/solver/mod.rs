//! The proof-of-concept algorithm: an acoustic wave simulator in 2D (`nz × nx`) and 3D
//! (`nz × ny × nx`, [`WaveSimulator`]`<E, T, 3>` with [`WaveConfig::ny`] > 1), generic over
//! the execution space (the paper's `WaveSimulator<ExecSpace>`). A 3D run has the same
//! options and step API; it takes `(z, y, x)` receivers ([`WaveConfig::receivers_3d`],
//! [`WaveSimulator::add_receiver_3d`], or a receiver line with a plane `Z:Y:X0:X1:STEP`) and
//! its grid and source are set with [`WaveSimulator::set_dimensions_3d`] and
//! [`WaveSimulator::set_source_position_3d`].
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
//! - [`WaveConfig::absorb`]: an absorbing layer of that many cells on every side, of the kind
//!   [`WaveConfig::boundary`] says: a convolutional PML (the default, `pml.rs`, see
//!   [`PmlParams`]) or a sponge, a damping term `η p_t` whose strength grows quadratically
//!   into the layer (`physics.rs`).
//! - [`WaveConfig::source_mode`]: [`SourceMode::Set`] (the paper) or [`SourceMode::Add`], a
//!   delayed Ricker wavelet injected as a point source of the discretised equation.
//! - [`WaveConfig::receivers`]: traces recorded every step, read back with
//!   [`WaveSimulator::seismogram`].
//! - [`WaveConfig::velocity`]: a velocity model given as data; layers apply on top.
//! - [`WaveConfig::snapshot_every`]: a host copy of the wavefield handed to a hook every K
//!   steps ([`WaveSimulator::run_with`]).
//! - [`WaveConfig::time_block`]: temporal blocking ([`blocking`]): `run` advances several
//!   steps per sweep over the grid ([`WaveSimulator::step_block`]) where the fields exceed
//!   the last-level cache, bit-identical to one step at a time.
//! - [`adjoint`]: [`WaveOperator`], the run as a linear map of the source wavelet with its
//!   exact discrete adjoint, and the misfit's gradient by the adjoint-state method.
//!
//! A user's own time loop (imaging, inversion, coupling) calls
//! [`WaveSimulator::prepare`], then [`WaveSimulator::step`] once per time step (receivers are
//! recorded there; snapshots and progress attach between steps), and [`WaveSimulator::finish`];
//! [`WaveSimulator::run`] is that loop.
//!
//! Where things live (all re-exported here): `physics.rs` (the numbers of the scheme: FD
//! weights and the CFL limit, the Ricker wavelets, the absorbing layer's damping),
//! `config.rs` ([`WaveConfig`] and its validation, [`Layer`], [`SourceMode`],
//! [`StepKernels`], [`Boundary`]), `pml.rs` (the PML: parameters, profiles, the layer's
//! boxes, its fields and step), `simulator.rs` ([`WaveSimulator`]: preparing a run, one time
//! step, the time loop, results; its blocked steps in `simulator/blocked.rs`), `dims.rs` (what
//! differs between 2D and 3D), [`blocking`] (the temporal-blocking schedule, generic over
//! the step) and [`tuning`] (the band of an `auto` blocked run, timed in its first blocks). The stencils the solver runs live in [`crate::kernels`];
//! receivers and velocity models in [`crate::receivers`] and [`crate::model`].

pub mod adjoint;
pub mod blocking;
mod config;
mod dims;
mod physics;
mod pml;
mod simulator;
pub mod tuning;

pub use adjoint::{
    MisfitGradient, OffGridOperator, Shot, Storage, WaveOperator, HICKS_KAISER_B, HICKS_RADIUS,
};
pub use blocking::{BlockPlan, Blocking, TimeBlock};
pub use config::{Boundary, Layer, SourceMode, StepKernels, WaveConfig};
pub use dims::{Dims, WaveKernels};
pub use physics::{
    cfl_limit, cfl_limit_for, cfl_limit_in, check_space_order, ricker, ricker_delayed,
    DEFAULT_SPACE_ORDER, MAX_SPACE_ORDER, MIN_SPACE_ORDER,
};
pub use pml::{
    pml_profile, PmlParams, DEFAULT_PML_ALPHA_OVER_PI_FPEAK, DEFAULT_PML_DEGREE, DEFAULT_PML_R,
    MAX_PML_DEGREE,
};
pub use simulator::{RunStats, WaveSimulator, FINITE_CHECK_EVERY};
#[cfg(feature = "mpi")]
pub(crate) use {
    pml::{layer_boxes, pml_boxes, side_velocities, Pml, PmlBox, PmlRows, PML_HALO, PML_RADIUS},
    simulator::{non_finite, position_words, sponge_eta_at},
};
