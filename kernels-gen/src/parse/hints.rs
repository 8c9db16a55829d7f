//! Diagnostics shared by the grammar: hints for Rust habits the DSL does not accept, and the
//! small formatters (offsets, per-axis lists) that error messages use.

use crate::ir::Func;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Token};

/// An error for tokens the DSL does not accept where `expected` was due, with the fix for
/// the usual ones (Rust habits such as `x.sqrt()`, `x ^ 2`, `%`, `if`, comparisons).
pub(super) fn unexpected(input: ParseStream, expected: &str) -> syn::Error {
    let hint = if input.peek(Token![.]) && !input.peek(Token![..]) {
        let ahead = input.fork();
        let _ = ahead.parse::<Token![.]>();
        let name = ahead.call(Ident::parse_any).map(|i| i.to_string()).ok();
        match name.as_deref().and_then(Func::from_name) {
            Some(f) => format!(
                "method calls are not part of the DSL: write `{0}(x)` instead of `x.{0}()`",
                f.name()
            ),
            None => format!(
                "method calls are not part of the DSL: call a function instead, e.g. \
                 `sqrt(x)` (functions: {})",
                func_names()
            ),
        }
    } else if input.peek(Token![^]) {
        "`^` is not a power (in Rust it is a bitwise xor): write `x * x` for a square, \
         `x * x * x` for a cube, `sqrt(x)` for a square root"
            .to_string()
    } else if input.peek(Token![%]) {
        "`%` (remainder) is not supported on the reals of a stencil: compute the value \
         outside and pass it as a `real` or an `in` field"
            .to_string()
    } else if input.peek(Token![==])
        || input.peek(Token![!=])
        || input.peek(Token![<])
        || input.peek(Token![>])
        || input.peek(Token![&&])
        || input.peek(Token![||])
    {
        "comparisons and conditions are not supported (a stencil computes the same formula \
         at every point): use `min(a, b)`, `max(a, b)` or `abs(x)`, or blend with a mask field \
         `m` of 0s and 1s: `m[0, 0] * a + (1.0 - m[0, 0]) * b`"
            .to_string()
    } else {
        return input.error(expected);
    };
    input.error(hint)
}

fn func_names() -> String {
    let known: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
    known.join(", ")
}

/// The hint for Rust control flow (`if`, `match`, loops) in a stencil.
pub(super) fn control_flow(id: &Ident) -> Option<syn::Error> {
    let name = id.to_string();
    let what = match name.as_str() {
        "if" | "else" | "match" => "branches",
        "for" | "while" | "loop" => "loops",
        "return" | "break" | "continue" => "jumps",
        _ => return None,
    };
    Some(syn::Error::new(
        id.span(),
        format!(
            "`{name}`: the stencil DSL has no {what}; a stencil is one formula evaluated at every \
             point. For a choice use `min(a, b)`, `max(a, b)`, `abs(x)`, or blend with a mask \
             field `m` of 0s and 1s: `m[0, 0] * a + (1.0 - m[0, 0]) * b`"
        ),
    ))
}

pub(super) fn expect_semi(input: ParseStream) -> syn::Result<()> {
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
        Ok(())
    } else {
        Err(unexpected(
            input,
            "expected `;` at the end of the statement",
        ))
    }
}

pub(super) fn fmt_offset(offset: &[i32]) -> String {
    let parts: Vec<String> = offset.iter().map(|o| o.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `"0, 0"` for 2D: the centre offset of a `dims`-dimensional stencil.
pub(super) fn zeros(dims: usize) -> String {
    vec!["0"; dims].join(", ")
}

/// `"iz, iy, ix"` for prefix `"i"` in 3D, `"dz, dx"` for `"d"` in 2D: one name per axis.
pub(super) fn axis_list(dims: usize, prefix: &str) -> String {
    crate::ir::axes(dims)
        .iter()
        .map(|&a| format!("{prefix}{}", crate::ir::AXIS_NAMES[a]))
        .collect::<Vec<_>>()
        .join(", ")
}
