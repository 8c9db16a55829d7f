//! One emitter per backend, all reading the same [`crate::ir::Stencil`].
//!
//! - [`rust`]: serial and rayon Rust (tokens, returned by the `stencil!` macro).
//! - [`dsl`]: the stencil printed back as DSL text.

pub mod dsl;
pub mod rust;
