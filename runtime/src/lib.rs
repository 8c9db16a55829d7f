//! # ppstencil — performance-portable finite-difference stencils
//!
//! A Rust rebuild of the design of *"An approach to performance portability through generic
//! programming"* (pp-template): *what* an algorithm does is separated from *where its data
//! lives* and *how it runs*.
//!
//! - **Memory spaces** ([`MemorySpace`]: [`MemSpaceHost`], [`MemSpaceCuda`], [`MemSpaceHip`])
//!   say where data lives: allocate, release (drop), copy, copy_from_host, copy_to_host.
//! - **Execution spaces** ([`ExecutionSpace`]: [`Serial`], [`Rayon`], [`Cuda`], [`Hip`]) say
//!   how code runs, and each names the one memory space it can access. Kernels take
//!   `ScalarField<E::Memory, T>`, so data in the wrong space does not compile.
//! - **Stencils** are written once with [`stencil!`]; kernels-gen generates every backend.
//!
//! ## Writing a stencil
//!
//! ```
//! use ppstencil::{stencil, HostField, Rayon, ScalarField, Serial};
//!
//! stencil! {
//!     /// One explicit step of the heat equation.
//!     pub fn heat_step(unew: out, u: in, alpha: real) {
//!         unew[0, 0] = u[0, 0] + alpha * (u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0]);
//!     }
//! }
//!
//! let mut u: HostField<f64> = ScalarField::new(9, 9)?;
//! u[(4, 4)] = 1.0;
//! let mut a: HostField<f64> = ScalarField::new(9, 9)?;
//! let mut b: HostField<f64> = ScalarField::new(9, 9)?;
//! heat_step(&Serial, &mut a, &u, 0.1)?;
//! heat_step(&Rayon::new(), &mut b, &u, 0.1)?;
//! assert_eq!(a.as_slice(), b.as_slice());
//! assert!((a[(4, 4)] - 0.6).abs() < 1e-12 && (a[(3, 4)] - 0.1).abs() < 1e-12);
//! # Ok::<(), ppstencil::Error>(())
//! ```
//!
//! Syntax: parameters are fields (`in`: read at constant offsets `f[dz, dx]`; `out`: written
//! at `[0, 0]`; `inout`: updated in place, read only at `[0, 0]`), scalars (`real`) and grid
//! indices (`index`, with `#[at(iz, ix)]` to run at one point). The body is `let` bindings and
//! one assignment per output, with `+ - * /`, parentheses, and `sqrt abs exp sin cos min max`.
//! The domain follows from the radius `r` (largest offset): rows and columns `r..n-r`; radius
//! 0 means every point. Mistakes are compile errors that say what to write instead.
//!
//! For each stencil `name`, `stencil!` generates a generic function
//! `name<E: ExecutionSpace, T: Real>(space: &E, fields..., scalars...) -> Result<()>` and a
//! marker type (`Name`) implementing [`launch::Stencil`], whose `INFO` holds the metadata
//! derived from the IR (radius, bytes and flops per point) and the generated source of every
//! backend.
#![warn(missing_docs)]

extern crate self as ppstencil;

pub mod device;
mod error;
pub mod exec;
mod field;
pub mod io;
pub mod kernels;
pub mod launch;
pub mod memory;
pub mod model;
mod real;
pub mod receivers;
pub mod wave;

pub use device::{Cuda, Hip, MemSpaceCuda, MemSpaceHip};
pub use error::{Error, Result};
pub use exec::{ExecutionSpace, Rayon, Serial};
pub use field::{HostField, ScalarField};
pub use memory::{HostAccessible, MemSpaceHost, MemorySpace};
pub use real::Real;
pub use stencil_macros::stencil;
pub use wave::{Kernels, WaveConfig, WaveSimulator};

/// The version of this crate (`ppstencil`), as recorded by tools in their outputs.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[doc(hidden)]
pub mod __private {
    pub use rayon;
}
