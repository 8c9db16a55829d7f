//! # kernels-gen — the ppstencil DSL
//!
//! The front end, IR and code generators behind the `stencil!` macro. This is a normal
//! library (no proc-macro API), so every part is unit-tested here and usable from build
//! scripts and tools such as `ppwave gen`:
//!
//! ```text
//! tokens ──parse──► ir::Stencil ──simplify──► ir::Stencil ──emit::rust──► serial / rayon Rust
//!                                                          └─emit::…────► other backends
//! ```
//!
//! ```
//! let stencils = kernels_gen::parse_str(
//!     "fn fd_pxx(pxx: out, p: in) {
//!          pxx[0, 0] = -1.0/12.0*p[0,-2] + 4.0/3.0*p[0,-1] - 5.0/2.0*p[0,0]
//!                    + 4.0/3.0*p[0,1] - 1.0/12.0*p[0,2];
//!      }",
//! ).unwrap();
//! let s = &stencils[0];
//! assert_eq!(s.radius(), 2);
//! assert_eq!(s.bytes_per_point(4), 8); // read p, write pxx
//! // Each weight once per symmetric pair: c2 (p[-2] + p[2]) + c1 (p[-1] + p[1]) - c0 p.
//! assert_eq!(s.flops_per_point(), 7);
//! ```
#![warn(missing_docs)]

pub mod build;
pub mod emit;
pub mod fd;
pub mod ir;
pub mod parse;
pub mod simplify;

pub use parse::{parse_stencils, parse_str};

use proc_macro2::TokenStream;

/// Expands the body of a `stencil!` invocation: parses, validates, and emits every backend.
/// This is the whole of the proc macro; errors carry the span of the offending token.
pub fn expand(tokens: TokenStream) -> syn::Result<TokenStream> {
    let stencils = parse::parse_stencils_spanned(tokens)?;
    let mut out = TokenStream::new();
    for (s, span) in &stencils {
        let dsl = emit::dsl::print(s);
        out.extend(emit::rust::emit_stencil_at(
            s,
            &dsl,
            &extra_sources(s),
            *span,
        ));
    }
    Ok(out)
}

/// Sources of the non-Rust backends to embed in a stencil's metadata: the CUDA-C (`"cuda"`)
/// and HIP-C (`"hip"`) text, each holding the `f32` and `f64` kernels.
pub fn extra_sources(s: &ir::Stencil) -> Vec<(String, String)> {
    emit::c::Dialect::ALL
        .iter()
        .map(|&d| (d.key().to_string(), emit::c::emit(s, d)))
        .collect()
}
