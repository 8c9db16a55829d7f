//! Lowering of the derivative operators (`d2x(p, N)`, `laplacian`, `d1z`, `d2xz`, …) into
//! weighted sums of taps with Fornberg's weights ([`crate::fd`]): the IR has no derivative
//! node, so radius, halo, domain, bytes and flops follow from the taps.

use super::expr::binary;
use super::stencil::Scope;
use crate::fd::{MAX_ORDER, MIN_ORDER};
use crate::ir::{Access, BinOp, Expr, ParamKind, AXIS_NAMES};
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{parenthesized, Ident, LitInt, Token};

/// The derivative operators, expanded at parse time into weighted sums of taps.
pub const DERIVATIVES: [&str; 10] = [
    "d2x",
    "d2y",
    "d2z",
    "laplacian",
    "d1x",
    "d1y",
    "d1z",
    "d2xz",
    "d2xy",
    "d2yz",
];

/// A derivative operator of field `p` of even order `N` ([`crate::fd::SPACE_ORDERS`]),
/// unscaled by the grid spacing, as a weighted sum of taps with Fornberg's weights
/// ([`crate::fd`]); see the module documentation for the list. `d2x` runs along x
/// (`p[0, k]` in 2D), `d2z` along z (`p[k, 0]`), `laplacian` is `d2x + d2z` in 2D and
/// `d2x + d2y + d2z` in 3D. Taps go from `-N/2` to `N/2` (see [`weighted_sum`]).
pub(super) fn parse_derivative(
    input: ParseStream,
    scope: &mut Scope,
    id: &Ident,
) -> syn::Result<Expr> {
    let name = id.to_string();
    let usage = format!("write `{name}(field, order)` with an `in` field and an even integer order from {MIN_ORDER} to {MAX_ORDER}, e.g. `{name}(p, 8)`");
    let content;
    parenthesized!(content in input);
    let pi = derivative_field(&content, scope, &name, &usage)?;
    let (order, order_span) = derivative_order(&content, &name, &usage)?;
    check_axes(scope, &name, id.span())?;
    scope.params[pi].used = true;
    let lower = Lowering {
        field: pi,
        order,
        present: crate::ir::axes(scope.dims),
        name: &name,
        order_span,
    };
    lower.operator()
}

/// The field argument of a derivative operator (`p` in `d2x(p, 4)`): a declared `in` field
/// given without an offset, followed by `,`, which is consumed.
fn derivative_field(
    content: ParseStream,
    scope: &Scope,
    name: &str,
    usage: &str,
) -> syn::Result<usize> {
    let field = content.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{name}` takes a field name first: {usage}"),
        )
    })?;
    let fname = field.to_string();
    if content.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            field.span(),
            format!(
                "`{name}` applies to a field, not to an expression such as `{fname}(...)`: \
                 derivatives do not nest. For a higher derivative, write the inner one to an \
                 `out` field in one stencil and apply `{name}` to that field in a second \
                 stencil; for more accuracy, raise the order instead: `{name}(p, 8)`"
            ),
        ));
    }
    let pi = match scope.param(&fname) {
        Some(pi) => pi,
        None => {
            return Err(syn::Error::new(
                field.span(),
                format!(
                "`{fname}` is not a declared field; add `{fname}: in` to the parameters ({usage})"
            ),
            ))
        }
    };
    check_field_kind(scope.params[pi].param.kind, &field, usage)?;
    if content.peek(syn::token::Bracket) {
        return Err(syn::Error::new(
            field.span(),
            format!("give the field without an offset: `{name}({fname}, N)` is centred on the current point"),
        ));
    }
    if !content.peek(Token![,]) {
        return Err(syn::Error::new(
            field.span(),
            format!("`{name}` needs the space order after the field: {usage}"),
        ));
    }
    content.parse::<Token![,]>()?;
    Ok(pi)
}

/// Derivative operators take `in` fields only; the error says why another kind cannot be.
fn check_field_kind(kind: ParamKind, field: &Ident, usage: &str) -> syn::Result<()> {
    let fname = field.to_string();
    match kind {
        ParamKind::Field(Access::In) => Ok(()),
        ParamKind::Field(Access::InOut) => {
            Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is `inout`: a derivative reads it at offsets, which would race with its own writes; pass the data as an `in` field"),
            ))
        }
        ParamKind::Field(Access::Out) => {
            Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is declared `out` and cannot be read; take the derivative of an `in` field"),
            ))
        }
        ParamKind::Real | ParamKind::Index => {
            Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is a scalar, not a field: {usage}"),
            ))
        }
        ParamKind::Profile(_) => {
            Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is a profile: derivative operators take `in` fields; write the differences of its taps, e.g. `{fname}[1] - {fname}[-1]` along its axis"),
            ))
        }
    }
}

/// The order argument of a derivative operator: an unsuffixed integer literal that
/// [`crate::fd::check_order`] accepts, and the last argument; with the literal's span.
fn derivative_order(content: ParseStream, name: &str, usage: &str) -> syn::Result<(u64, Span)> {
    let order_span = content.span();
    if !content.peek(LitInt) {
        return Err(syn::Error::new(
            order_span,
            format!("the order of `{name}` must be an integer literal (the stencil radius is fixed at compile time): {usage}"),
        ));
    }
    let lit: LitInt = content.parse()?;
    if !lit.suffix().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            format!("write the order without a type suffix: {usage}"),
        ));
    }
    let value: u64 = lit.base10_parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("the order is not a small integer: {usage}"),
        )
    })?;
    crate::fd::check_order(value).map_err(|e| order_error(name, lit.span(), e))?;
    if content.peek(Token![,]) {
        content.parse::<Token![,]>()?;
    }
    if !content.is_empty() {
        return Err(content.error(format!(
            "`{name}` takes two arguments, a field and an integer-literal order: {usage}"
        )));
    }
    Ok((value, lit.span()))
}

/// An error about the order of operator `name`, at the order literal.
fn order_error(name: &str, span: Span, e: String) -> syn::Error {
    syn::Error::new(span, format!("`{name}`: {e}"))
}

/// An operator along an axis the stencil lacks (`d2y` in 2D) is an error at its span.
fn check_axes(scope: &Scope, name: &str, span: Span) -> syn::Result<()> {
    let dims = scope.dims;
    let present = crate::ir::axes(dims);
    if let Some(&missing) = operator_axes(name).iter().find(|a| !present.contains(a)) {
        return Err(syn::Error::new(
            span,
            format!(
                "`{name}` differentiates along {}, but this stencil is {dims}D (axes {}, as in \
                 `{}`): use operators along those axes, or index every field of a 3D stencil \
                 as `p[dz, dy, dx]`",
                AXIS_NAMES[missing],
                present
                    .iter()
                    .map(|&a| AXIS_NAMES[a])
                    .collect::<Vec<_>>()
                    .join(", "),
                scope.first_access,
            ),
        ));
    }
    Ok(())
}

/// One checked operator call, ready to expand into taps of `field`.
struct Lowering<'a> {
    /// The parameter index of the differentiated field.
    field: usize,
    /// The space order `N`.
    order: u64,
    /// The stencil's axes (0 = z, 1 = y, 2 = x).
    present: &'static [usize],
    /// The operator's name.
    name: &'a str,
    /// The order literal's span, for errors from [`crate::fd`].
    order_span: Span,
}

impl Lowering<'_> {
    /// The operator as a weighted sum of taps.
    fn operator(&self) -> syn::Result<Expr> {
        let (z, y, x) = (0, 1, 2);
        Ok(match self.name {
            "d2x" => self.second(x)?,
            "d2y" => self.second(y)?,
            "d2z" => self.second(z)?,
            "d1x" => self.first(x)?,
            "d1y" => self.first(y)?,
            "d1z" => self.first(z)?,
            "d2xz" => self.mixed(z, x)?,
            "d2xy" => self.mixed(y, x)?,
            "d2yz" => self.mixed(z, y)?,
            _ => {
                // laplacian: x, then y, then z, left to right (2D: d2x + d2z).
                let mut sum = self.second(x)?;
                for &a in self.present.iter().rev().skip(1) {
                    sum = binary(BinOp::Add, sum, self.second(a)?);
                }
                sum
            }
        })
    }

    /// A tap of the field at the offset `zyx` (`[dz, dy, dx]`), in this stencil's dimensions.
    fn read(&self, zyx: [i32; 3]) -> Expr {
        Expr::Read {
            field: self.field,
            offset: self.present.iter().map(|&a| zyx[a]).collect(),
        }
    }

    /// The error of `fd` about this order, at the order literal.
    fn order_err(&self, e: String) -> syn::Error {
        order_error(self.name, self.order_span, e)
    }

    /// The second derivative along `axis`.
    fn second(&self, axis: usize) -> syn::Result<Expr> {
        let w =
            crate::fd::central_second_derivative_f64(self.order).map_err(|e| self.order_err(e))?;
        let m = (w.len() - 1) as i32;
        Ok(weighted_sum((-m..=m).map(|k| {
            (w[k.unsigned_abs() as usize], self.read(at(axis, k)))
        })))
    }

    /// The centred first derivative along `axis`.
    fn first(&self, axis: usize) -> syn::Result<Expr> {
        let w = crate::fd::central_first_derivative(self.order).map_err(|e| self.order_err(e))?;
        let m = (w.len() / 2) as i32;
        Ok(weighted_sum((-m..=m).map(|k| {
            (w[(k + m) as usize].to_f64(), self.read(at(axis, k)))
        })))
    }

    /// The mixed second derivative: `slow` is the outer (slower) axis of the pair, `fast`
    /// the inner one.
    fn mixed(&self, slow: usize, fast: usize) -> syn::Result<Expr> {
        let w = crate::fd::central_mixed_derivative(self.order).map_err(|e| self.order_err(e))?;
        let m = (w.len() / 2) as i32;
        let mut terms = Vec::new();
        for j in -m..=m {
            for k in -m..=m {
                let mut o = [0; 3];
                o[slow] = j;
                o[fast] = k;
                terms.push((w[(j + m) as usize][(k + m) as usize].to_f64(), self.read(o)));
            }
        }
        Ok(weighted_sum(terms))
    }
}

/// The offset `k` along `axis`, zero along the others, as `[dz, dy, dx]`.
fn at(axis: usize, k: i32) -> [i32; 3] {
    let mut o = [0; 3];
    o[axis] = k;
    o
}

/// The axes (0 = z, 1 = y, 2 = x) a derivative operator differentiates along; empty for
/// `laplacian`, which sums over the axes present.
fn operator_axes(name: &str) -> &'static [usize] {
    match name {
        "d2x" | "d1x" => &[2],
        "d2y" | "d1y" => &[1],
        "d2z" | "d1z" => &[0],
        "d2xz" => &[2, 0],
        "d2xy" => &[2, 1],
        "d2yz" => &[1, 0],
        _ => &[],
    }
}

/// `w0 * t0 + w1 * t1 - |w2| * t2 ...`: zero weights are left out, and a negative weight
/// after the first term becomes a subtraction, so `d2x(p, 4)` is exactly the paper's
/// `-1/12 p[0,-2] + 4/3 p[0,-1] - 5/2 p[0,0] + 4/3 p[0,1] - 1/12 p[0,2]`.
fn weighted_sum(terms: impl IntoIterator<Item = (f64, Expr)>) -> Expr {
    let mut sum: Option<Expr> = None;
    for (w, read) in terms {
        if w == 0.0 {
            continue;
        }
        sum = Some(match sum {
            None => binary(BinOp::Mul, Expr::Lit(w), read),
            Some(acc) if w < 0.0 => {
                binary(BinOp::Sub, acc, binary(BinOp::Mul, Expr::Lit(-w), read))
            }
            Some(acc) => binary(BinOp::Add, acc, binary(BinOp::Mul, Expr::Lit(w), read)),
        });
    }
    sum.unwrap_or(Expr::Lit(0.0))
}
