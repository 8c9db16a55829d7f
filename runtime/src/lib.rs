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
//!   `ScalarField<E::Memory, T, D>`, so data in the wrong space (or of the wrong
//!   dimensionality) does not compile.
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
//! Stencils have 1, 2 or 3 dimensions, given by the number of offsets (`u[dx]`, `p[dz, dx]`,
//! `p[dz, dy, dx]`; x is contiguous). Fields carry their dimensionality in their type,
//! `ScalarField<M, T, D>` (`D = 2` by default), so a 3D stencil called with 2D fields does not
//! compile:
//!
//! ```
//! use ppstencil::{stencil, HostField, Rayon, ScalarField, Serial};
//!
//! stencil! {
//!     /// One explicit heat step in 3D: fields are indexed `u[dz, dy, dx]`.
//!     pub fn heat3d(unew: out, u: in, alpha: real) {
//!         unew[0, 0, 0] = u[0, 0, 0] + alpha * laplacian(u, 2);
//!     }
//! }
//!
//! let mut u: HostField<f64, 3> = ScalarField::new_3d(9, 10, 11)?;
//! u[(4, 5, 5)] = 1.0;
//! let mut a: HostField<f64, 3> = ScalarField::new_3d(9, 10, 11)?;
//! let mut b: HostField<f64, 3> = ScalarField::new_3d(9, 10, 11)?;
//! heat3d(&Serial, &mut a, &u, 0.1)?;
//! heat3d(&Rayon::new(), &mut b, &u, 0.1)?;
//! assert_eq!(a.as_slice(), b.as_slice());
//! assert!((a[(4, 5, 5)] - 0.4).abs() < 1e-12 && (a[(3, 5, 5)] - 0.1).abs() < 1e-12);
//! assert_eq!(a.shape(), [9, 10, 11]);
//! # Ok::<(), ppstencil::Error>(())
//! ```
//!
//! Syntax: parameters are fields (`in`: read at constant offsets `f[dz, dx]`; `out`: written
//! at `[0, 0]`; `inout`: updated in place, read only at `[0, 0]`), scalars (`real`) and grid
//! indices (`index`, with `#[at(iz, ix)]` to run at one point; one index per axis). The body is
//! `let` bindings and one assignment per output, with `+ - * /`, parentheses,
//! `sqrt abs exp sin cos min max` and the derivative operators (`d2x d2y d2z laplacian d1x d1y
//! d1z d2xz d2xy d2yz`). The domain follows from the radius `r` (largest offset): `r..n-r`
//! along every axis; radius 0 means every point. Mistakes are compile errors that say what to
//! write instead.
//!
//! For each stencil `name`, `stencil!` generates a generic function
//! `name<E: ExecutionSpace, T: Real>(space: &E, fields..., scalars...) -> Result<()>` (fields
//! of type `ScalarField<E::Memory, T, D>`, `D` the stencil's dimensionality) and a
//! marker type (`Name`) implementing [`launch::Stencil`], whose `INFO` holds the metadata
//! derived from the IR (radius, bytes and flops per point) and the generated source of every
//! backend.
#![warn(missing_docs)]

extern crate self as ppstencil;

pub mod device;
pub mod dist;
mod error;
pub mod exec;
mod field;
mod geometry;
pub mod io;
pub mod kernels;
pub mod launch;
mod levels;
pub mod memory;
pub mod model;
mod real;
pub mod receivers;
pub mod solver;

pub use device::{Cuda, Hip, MemSpaceCuda, MemSpaceHip};
pub use error::{fmt_num, fmt_num_to, Error, Mention, Param, Result, Valid};
pub use exec::{
    numerics, with_numerics, Arithmetic, ExecutionSpace, Numerics, Rayon, Serial, Subnormals,
};
pub use field::{FieldIndex, HostField, ScalarField};
pub use levels::TimeLevels;
pub use memory::{HostAccessible, MemSpaceHost, MemorySpace};
pub use real::Real;
pub use solver::{RunStats, StepKernels, WaveConfig, WaveSimulator};
/// Defines stencils: each `fn` becomes a generic function `name(&space, fields..., reals...)`
/// that runs on every execution space (serial, rayon, CUDA, HIP), and a marker type for
/// [`launch`]. The full guide is `docs/guide/stencils.md`.
///
/// ```
/// use ppstencil::{stencil, HostField, Serial};
/// stencil! {
///     /// One explicit heat step: `alpha` times the 5-point Laplacian.
///     pub fn heat_step(unew: out, u: in, alpha: real) {
///         unew[0, 0] = u[0, 0] + alpha * laplacian(u, 2);
///     }
/// }
/// let mut u = HostField::<f64>::zeros([5, 5])?;
/// u[(2, 2)] = 1.0;
/// let mut next = HostField::<f64>::zeros([5, 5])?;
/// heat_step(&Serial, &mut next, &u, 0.1)?;
/// assert!((next[(2, 2)] - 0.6).abs() < 1e-15 && (next[(1, 2)] - 0.1).abs() < 1e-15);
/// assert_eq!(next[(0, 2)], 0.0); // outside the domain (radius 1): never written
/// # Ok::<(), ppstencil::Error>(())
/// ```
///
/// # The language
///
/// - **Signature**: `pub? fn name(param: kind, ...) { body }`, several per `stencil!`, each
///   with doc comments. Kinds: `in` (a field read at constant offsets), `out` (written at
///   the centre), `inout` (updated in place, read only at the centre), `real` (a scalar),
///   `index` (a grid index for `#[at(iz, ix)]`, which runs the stencil at one point), and
///   profiles `in(x)`, `in(z)`, `in(y)` (one value per column, row or plane).
/// - **Dimensions**: the number of offsets: `u[dx]` (1D), `p[dz, dx]` (2D), `p[dz, dy, dx]`
///   (3D); z slowest, x contiguous. Every access of one stencil has as many; the generated
///   function takes `ScalarField<E::Memory, T, D>` of that `D`.
/// - **Body**: `let name = expr;` and one `out[0, 0] = expr;` per output. Expressions:
///   numbers, `+ - * /`, unary minus, parentheses, field reads, scalars, lets, `sqrt abs exp
///   sin cos min max`, and the derivative operators `d2x d2y d2z laplacian d1x d1y d1z d2xz
///   d2xy d2yz` of an `in` field and an even literal order from 2 to 16 (`d2x(p, 8)`),
///   expanded into Fornberg-weighted taps, unscaled by the grid spacing.
/// - **Domain**: every point at distance ≥ the radius (the largest offset read) from each
///   border along each axis present; the other points are never written. `launch_in_region`
///   runs a box inside it; fields may be windows of the grid (`with_origin`).
/// - **Errors**: every mistake is a compile error at the offending token saying what to
///   write instead (`x.sqrt()`, `x ^ 2`, `if`, comparisons, an `out` field read, a
///   non-constant offset, a name the generated code uses, ...).
pub use stencil_macros::stencil;

/// The version of this crate (`ppstencil`), as recorded by tools in their outputs.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The one interface between code generated by `stencil!` and this crate: generated code
/// names only `::ppstencil::__private::...` paths. Not part of the public API (no stability
/// promise); users call the generated functions and the public modules instead.
#[doc(hidden)]
pub mod __private {
    pub use crate::exec::rows::{row_runs, run_rows, y_block, RowMode, RowPlan, RowRuns};
    pub use crate::launch::{launch, Region, RowAt, Stencil, StencilInfo, Window};
    pub use crate::{Error, ExecutionSpace, Real, ScalarField};
    pub use rayon;
}
