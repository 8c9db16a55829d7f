//! The `stencil!` front end: tokens → validated IR ([`crate::ir::Stencil`]).
//!
//! Grammar (one or more stencils per invocation):
//!
//! ```text
//! stencil   := attr* "pub"? "fn" NAME "(" param ("," param)* ","? ")" "{" stmt* "}"
//! attr      := "///" doc comment | "#[at(" INDEX ("," INDEX)* ")]"   (one index per axis)
//! param     := NAME ":" ("in" | "in" "(" AXIS ")" | "out" | "inout" | "real" | "index")
//! AXIS      := "x" | "y" | "z"   (a profile: one value per coordinate along that axis)
//! stmt      := "let" NAME "=" expr ";"
//!            | FIELD "[" 0 ("," 0)* "]" "=" expr ";"
//! expr      := term (("+" | "-") term)*
//! term      := unary (("*" | "/") unary)*
//! unary     := "-" unary | primary
//! primary   := NUMBER | NAME | FIELD "[" INT ("," INT)* "]" | FUNC "(" expr ("," expr)* ")"
//!            | DERIV "(" FIELD "," INT ")" | "(" expr ")"
//! DERIV     := "d2x" | "d2y" | "d2z" | "laplacian" | "d1x" | "d1y" | "d1z"
//!            | "d2xz" | "d2xy" | "d2yz"
//! ```
//!
//! # Dimensions
//!
//! A stencil's dimensionality is the number of offsets of its field accesses: `u[dx]` (1D),
//! `p[dz, dx]` (2D), `p[dz, dy, dx]` (3D); axes z (slowest), y, x (fastest, contiguous),
//! row-major. The first field access in the body (read or write) fixes it; every other access
//! must have as many offsets, and `#[at(...)]` names one index per axis. Operators along an
//! axis the stencil lacks (`d2y` in 2D, `d2z` in 1D) are errors at their span.
//!
//! # Profiles
//!
//! `a: in(x)` declares a read-only field that varies along x only (`in(z)`, and `in(y)` in
//! 3D, likewise): a damping profile, a depth-dependent coefficient. It is read like a field
//! (`a[0, 0]`, `a[0, 1]`), at offset 0 along every other axis; derivative operators do not
//! take it. The runtime passes a field whose shape is 1 along the other axes.
//!
//! # Derivative operators
//!
//! `d2x(p, N)`, `d2y`, `d2z` (second derivatives), `laplacian(p, N)` (their sum over the axes
//! present, x then y then z), `d1x`, `d1y`, `d1z` (centred first derivatives) and `d2xz`,
//! `d2xy`, `d2yz` (mixed second derivatives: the products of the centred first-derivative
//! weights along both axes, radius N/2 in each), for `N` one of [`crate::fd::SPACE_ORDERS`],
//! expand here into weighted sums of taps of `p`, with Fornberg's exact weights from
//! [`crate::fd`], unscaled by the grid spacing; the IR has no derivative node, so radius,
//! halo, domain, bytes and flops follow from the taps.
//!
//! Every mistake is reported as a [`syn::Error`] at the span of the offending token, with a
//! message that says what to write instead; the parser never panics.
//!
//! # Limits and names
//!
//! - Expressions may nest (parentheses, unary minus, function and derivative calls) at most
//!   [`MAX_NESTING`] levels deep; deeper input is an error, never a stack overflow. Sums and
//!   products in a row (`a + b + c + ...`) are not nesting: they may be arbitrarily long and
//!   every stage handles them in time linear in their length.
//! - Constants must stay finite after folding (`1.0 / 0.0` is an error at the `/`) and fit
//!   in `f32`, since every stencil is also generated for `f32`.
//! - Names ([`check_name`]): ASCII, starting with a lowercase letter or `_`, no `__`, not a Rust
//!   keyword, not a raw identifier (`r#type`), and not a name the generated Rust code uses
//!   ([`crate::emit::rust::RESERVED`]). Stencil names are snake_case (`fd_pxx`), and the
//!   stencils of one `stencil!` must give distinct marker types (`fd_step4` and `fd_step_4`
//!   both give `FdStep4`). Doc comments are split into lines.

mod derivative;
mod expr;
mod hints;
mod names;
mod stencil;
#[cfg(test)]
mod tests;

pub use derivative::DERIVATIVES;
pub use expr::{binary, neg};
pub use names::{check_name, Role, RUST_KEYWORDS};

use crate::ir::Stencil;
use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream, Parser};

/// The most dimensions a stencil may have (axes z, y, x).
pub const MAX_DIMS: usize = 3;

/// How deeply expressions may nest: parentheses, unary minus, and function or derivative
/// calls each add a level. Real stencils use a handful; the limit keeps every recursive
/// stage (this parser, the emitters, rustc and the C compilers) far from its stack limit.
pub const MAX_NESTING: usize = 64;

/// Parses the body of a `stencil!` invocation into stencils.
pub fn parse_stencils(tokens: TokenStream) -> syn::Result<Vec<Stencil>> {
    Ok(parse_stencils_spanned(tokens)?
        .into_iter()
        .map(|(s, _)| s)
        .collect())
}

/// Like [`parse_stencils`], with the span of each stencil's name, so generated items can
/// point compiler messages (e.g. "function defined here") at the user's source.
/// Every stencil has been through [`crate::simplify`], as every emitter expects.
pub fn parse_stencils_spanned(tokens: TokenStream) -> syn::Result<Vec<(Stencil, Span)>> {
    let mut file = StencilFile::parse.parse2(tokens)?;
    for (s, _) in &mut file.0 {
        crate::simplify::simplify(s);
    }
    Ok(file.0)
}

/// Parses stencil source text (as found between the braces of `stencil! { ... }`).
pub fn parse_str(src: &str) -> syn::Result<Vec<Stencil>> {
    let tokens: TokenStream = src.parse().map_err(|e: proc_macro2::LexError| {
        syn::Error::new(e.span(), format!("cannot tokenize stencil source: {e}"))
    })?;
    parse_stencils(tokens)
}

struct StencilFile(Vec<(Stencil, Span)>);

impl Parse for StencilFile {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut stencils: Vec<(Stencil, Span)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        if input.is_empty() {
            return Err(input.error(
                "`stencil!` is empty: write at least one stencil, e.g. \
                 `fn copy(dst: out, src: in) { dst[0, 0] = src[0, 0]; }`",
            ));
        }
        while !input.is_empty() {
            let (stencil, span) = stencil::parse_stencil(input)?;
            if names.contains(&stencil.name) {
                return Err(syn::Error::new(
                    span,
                    format!(
                        "stencil `{}` is defined twice in this `stencil!`; rename one",
                        stencil.name
                    ),
                ));
            }
            if let Some((other, _)) = stencils
                .iter()
                .find(|(o, _)| o.type_name() == stencil.type_name())
            {
                return Err(syn::Error::new(
                    span,
                    format!(
                        "stencils `{}` and `{}` would both generate the marker type `{}`; rename one",
                        other.name,
                        stencil.name,
                        stencil.type_name()
                    ),
                ));
            }
            names.push(stencil.name.clone());
            stencils.push((stencil, span));
        }
        Ok(StencilFile(stencils))
    }
}
