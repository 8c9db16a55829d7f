//! One emitter per backend, all reading the same [`crate::ir::Stencil`].
//!
//! - [`rust`]: serial and rayon Rust (tokens, returned by the `stencil!` macro).
//! - [`c`]: CUDA-C and HIP-C (one emitter, two dialects).
//! - [`dsl`]: the stencil printed back as DSL text.
//! - [`infix`]: the one expression printer the three share.
//! - [`abi`]: the GPU kernel ABI (symbol names, argument order), used by [`c`] and the runtime.

pub mod abi;
pub mod c;
pub mod dsl;
pub mod infix;
pub mod rust;
