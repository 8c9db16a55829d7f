//! One emitter per backend, all reading the same [`crate::ir::Stencil`].
//!
//! - [`rust`]: serial and rayon Rust (tokens, returned by the `stencil!` macro).
//! - [`c`]: CUDA-C and HIP-C (one emitter, two dialects).
//! - [`dsl`]: the stencil printed back as DSL text.

pub mod c;
pub mod dsl;
pub mod rust;
