//! The expression grammar: precedence climbing over `+ - * /`, unary minus, literals, names,
//! field reads at constant offsets and function calls, with constants folded as they are
//! parsed and the nesting depth bounded by [`super::MAX_NESTING`].

use super::derivative::{parse_derivative, DERIVATIVES};
use super::hints::{axis_list, control_flow, fmt_offset, unexpected, zeros};
use super::stencil::Scope;
use super::MAX_NESTING;
use crate::ir::{axes, Access, BinOp, Expr, Func, ParamKind, AXIS_NAMES};
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{bracketed, parenthesized, Ident, LitFloat, LitInt, Token};

/// Parses `[a, b]` with integer-constant offsets; there must be as many as the stencil has
/// dimensions.
pub(super) fn parse_offsets(
    input: ParseStream,
    field: &str,
    scope: &Scope,
) -> syn::Result<(Vec<i32>, Span)> {
    let content;
    let bracket = bracketed!(content in input);
    let span = bracket.span.join();
    let mut offset = Vec::new();
    while !content.is_empty() {
        let negative = if content.peek(Token![-]) {
            content.parse::<Token![-]>()?;
            true
        } else {
            false
        };
        if content.peek(LitInt) {
            let lit: LitInt = content.parse()?;
            let v: i32 = lit.base10_parse().map_err(|_| {
                syn::Error::new(lit.span(), "offset too large: offsets are small integers")
            })?;
            offset.push(if negative { -v } else { v });
        } else {
            let bad: TokenStream = content.step(|c| match c.token_tree() {
                Some((tt, rest)) => Ok((tt.into(), rest)),
                None => Err(c.error("expected an offset")),
            })?;
            let shown = bad.to_string();
            let bad_span = bad.into_iter().next().map(|t| t.span()).unwrap_or(span);
            return Err(syn::Error::new(
                bad_span,
                format!(
                    "offsets must be integer constants, such as `{field}[0, -1]`; `{shown}` is not a constant"
                ),
            ));
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    let d = scope.dims;
    if offset.len() != d {
        return Err(syn::Error::new(
            span,
            format!(
                "this stencil is {d}D (its first field access `{}` has {d} offset{}): index \
                 `{field}` with {d} offset{}, `{field}[{}]`, e.g. `{field}[{}]`; every field \
                 access of one stencil has the same number of offsets",
                scope.first_access,
                if d == 1 { "" } else { "s" },
                if d == 1 { "" } else { "s" },
                axis_list(d, "d"),
                zeros(d)
            ),
        ));
    }
    Ok((offset, span))
}

/// The right-hand side of a statement: an expression whose constants all fit in `f32`.
pub(super) fn parse_statement_expr(input: ParseStream, scope: &mut Scope) -> syn::Result<Expr> {
    let span = input.span();
    let e = parse_expr(input, scope)?;
    let mut bad = None;
    e.walk(&mut |x| {
        if let Expr::Lit(v) = x {
            if bad.is_none() && !(*v as f32).is_finite() {
                bad = Some(*v);
            }
        }
    });
    match bad {
        Some(v) => Err(syn::Error::new(
            span,
            format!(
                "the constant {v:e} in this expression does not fit in f32 (largest {:e}): every \
                 stencil is also generated for f32; rescale the formula",
                f32::MAX
            ),
        )),
        None => Ok(e),
    }
}

fn parse_expr(input: ParseStream, scope: &mut Scope) -> syn::Result<Expr> {
    parse_binary(input, scope, 1)
}

/// Runs `f` one nesting level deeper, or fails above [`MAX_NESTING`].
fn nested<R>(
    input: ParseStream,
    scope: &mut Scope,
    f: impl FnOnce(&mut Scope) -> syn::Result<R>,
) -> syn::Result<R> {
    if scope.depth >= MAX_NESTING {
        return Err(input.error(format!(
            "expression nested too deeply: at most {MAX_NESTING} levels of parentheses, unary \
             minus and calls; split it with `let` locals"
        )));
    }
    scope.depth += 1;
    let r = f(scope);
    scope.depth -= 1;
    r
}

/// `v` if finite, else an error at `span` naming the folded expression `what`.
fn finite(v: f64, span: Span, what: &str) -> syn::Result<Expr> {
    if v.is_finite() {
        Ok(Expr::Lit(v))
    } else {
        Err(syn::Error::new(
            span,
            format!(
                "{what} gives {v} when folded: constants must be finite; check for a division \
                 by zero or an overflow"
            ),
        ))
    }
}

fn peek_op(input: ParseStream) -> Option<BinOp> {
    if input.peek(Token![+]) && !input.peek(Token![+=]) {
        Some(BinOp::Add)
    } else if input.peek(Token![-]) && !input.peek(Token![-=]) && !input.peek(Token![->]) {
        Some(BinOp::Sub)
    } else if input.peek(Token![*]) && !input.peek(Token![*=]) {
        Some(BinOp::Mul)
    } else if input.peek(Token![/]) && !input.peek(Token![/=]) {
        Some(BinOp::Div)
    } else {
        None
    }
}

fn parse_binary(input: ParseStream, scope: &mut Scope, min_prec: u8) -> syn::Result<Expr> {
    let mut lhs = parse_unary(input, scope)?;
    while let Some(op) = peek_op(input) {
        if op.precedence() < min_prec {
            break;
        }
        let op_span = input.span();
        match op {
            BinOp::Add => drop(input.parse::<Token![+]>()?),
            BinOp::Sub => drop(input.parse::<Token![-]>()?),
            BinOp::Mul => drop(input.parse::<Token![*]>()?),
            BinOp::Div => drop(input.parse::<Token![/]>()?),
        }
        let rhs = parse_binary(input, scope, op.precedence() + 1)?;
        lhs = binary(op, lhs, rhs);
        if let Expr::Lit(v) = lhs {
            lhs = finite(v, op_span, &format!("this `{}`", op.symbol()))?;
        }
    }
    Ok(lhs)
}

/// Builds a binary node, folding it when both sides are constants.
pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Lit(x), Expr::Lit(y)) => Expr::Lit(op.eval(*x, *y)),
        _ => Expr::Binary(op, Box::new(a), Box::new(b)),
    }
}

/// Builds a negation, folding constants.
pub fn neg(a: Expr) -> Expr {
    match a {
        Expr::Lit(x) => Expr::Lit(-x),
        other => Expr::Neg(Box::new(other)),
    }
}

fn parse_unary(input: ParseStream, scope: &mut Scope) -> syn::Result<Expr> {
    if input.peek(Token![-]) {
        input.parse::<Token![-]>()?;
        return nested(input, scope, |scope| Ok(neg(parse_unary(input, scope)?)));
    }
    parse_primary(input, scope)
}

fn parse_primary(input: ParseStream, scope: &mut Scope) -> syn::Result<Expr> {
    if input.peek(LitFloat) || input.peek(LitInt) {
        return parse_number(input);
    }
    if input.peek(syn::token::Paren) {
        let content;
        parenthesized!(content in input);
        let e = nested(input, scope, |scope| parse_expr(&content, scope))?;
        if !content.is_empty() {
            return Err(unexpected(
                &content,
                "unexpected tokens inside parentheses: expected an operator or `)`",
            ));
        }
        return Ok(e);
    }
    if input.peek(Ident::peek_any) {
        return parse_name(input, scope);
    }
    if input.peek(Token![*]) {
        return Err(input.error(
            "`**` is not a power operator: write `x * x` for a square, `sqrt(x)` for a root",
        ));
    }
    Err(input.error(
        "expected a number, a field read such as `p[0, 0]`, a scalar, a function call or `( ... )`",
    ))
}

/// A numeric literal, unsuffixed and finite.
fn parse_number(input: ParseStream) -> syn::Result<Expr> {
    if input.peek(LitFloat) {
        let lit: LitFloat = input.parse()?;
        if !lit.suffix().is_empty() {
            return Err(syn::Error::new(
                lit.span(),
                "write constants without a type suffix (`2.0`, not `2.0f32`): the element type is chosen at the call",
            ));
        }
        return finite(lit.base10_parse::<f64>()?, lit.span(), &format!("`{lit}`"));
    }
    let lit: LitInt = input.parse()?;
    if !lit.suffix().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            "write constants without a type suffix (`2`, not `2u32`)",
        ));
    }
    finite(lit.base10_parse::<f64>()?, lit.span(), &format!("`{lit}`"))
}

/// A name in an expression: a call, a `let` local, a scalar or a field or profile read.
fn parse_name(input: ParseStream, scope: &mut Scope) -> syn::Result<Expr> {
    let id = input.call(Ident::parse_any)?;
    let name = id.to_string();
    if let Some(e) = control_flow(&id) {
        return Err(e);
    }
    if input.peek(syn::token::Paren) {
        return nested(input, scope, |scope| parse_call(input, scope, &id));
    }
    if let Some(local) = scope.local(&name) {
        if input.peek(syn::token::Bracket) {
            return Err(syn::Error::new(
                id.span(),
                format!("`{name}` is a `let` local, not a field; use it without an offset"),
            ));
        }
        return Ok(Expr::Local(local));
    }
    let Some(pi) = scope.param(&name) else {
        return Err(syn::Error::new(
            id.span(),
            format!(
                "`{name}` is not declared; add it to the parameters as `{name}: in` (a field) or `{name}: real` (a scalar), or define it with `let {name} = ...;`"
            ),
        ));
    };
    scope.params[pi].used = true;
    match scope.params[pi].param.kind {
        ParamKind::Real => {
            if input.peek(syn::token::Bracket) {
                return Err(syn::Error::new(
                    id.span(),
                    format!("`{name}` is a `real` scalar, not a field; use it without an offset, or declare it `{name}: in`"),
                ));
            }
            Ok(Expr::Scalar(pi))
        }
        ParamKind::Index => Err(syn::Error::new(
            id.span(),
            format!("`{name}` is an `index` parameter: it places the stencil with `#[at]` and cannot be used in arithmetic"),
        )),
        ParamKind::Profile(axis) => parse_profile_read(input, scope, &id, pi, axis),
        ParamKind::Field(access) => parse_field_read(input, scope, &id, pi, access),
    }
}

/// A read of profile `pi` along `axis`: at offset 0 along every other axis.
fn parse_profile_read(
    input: ParseStream,
    scope: &Scope,
    id: &Ident,
    pi: usize,
    axis: usize,
) -> syn::Result<Expr> {
    let name = id.to_string();
    if !input.peek(syn::token::Bracket) {
        return Err(syn::Error::new(
            id.span(),
            format!(
                "`{name}` is a profile: read it at an offset, e.g. `{name}[{}]`",
                zeros(scope.dims)
            ),
        ));
    }
    let (offset, span) = parse_offsets(input, &name, scope)?;
    let across = axes(scope.dims)
        .iter()
        .zip(&offset)
        .any(|(&a, &o)| a != axis && o != 0);
    if across {
        return Err(syn::Error::new(
            span,
            format!(
                "`{name}` is a profile along {}: it has one value per {} and is the same along the other axes, so read it at offset 0 along them, not at {}",
                AXIS_NAMES[axis],
                AXIS_NAMES[axis],
                fmt_offset(&offset)
            ),
        ));
    }
    Ok(Expr::Read { field: pi, offset })
}

/// A read of field `pi`: never of an `out` field, and of an `inout` field only at its point.
fn parse_field_read(
    input: ParseStream,
    scope: &Scope,
    id: &Ident,
    pi: usize,
    access: Access,
) -> syn::Result<Expr> {
    let name = id.to_string();
    if !input.peek(syn::token::Bracket) {
        return Err(syn::Error::new(
            id.span(),
            format!(
                "`{name}` is a field: read it at an offset, e.g. `{name}[{}]`",
                zeros(scope.dims)
            ),
        ));
    }
    let (offset, span) = parse_offsets(input, &name, scope)?;
    match access {
        Access::Out => Err(syn::Error::new(
            id.span(),
            format!("`{name}` is declared `out` and cannot be read; declare it `{name}: inout` to read its old value at `[0, 0]`, or pass the data as a separate `in` field"),
        )),
        Access::InOut if offset.iter().any(|&o| o != 0) => Err(syn::Error::new(
            span,
            format!("`{name}` is `inout`: reading it at {} would race with its own writes on parallel backends; read it only at `[0, 0]`, or pass a copy as an `in` field", fmt_offset(&offset)),
        )),
        _ => Ok(Expr::Read { field: pi, offset }),
    }
}

/// A function call (`sqrt(x)`, `min(a, b)`) or a derivative operator, folded when every
/// argument is a constant.
fn parse_call(input: ParseStream, scope: &mut Scope, id: &Ident) -> syn::Result<Expr> {
    let name = id.to_string();
    if DERIVATIVES.contains(&name.as_str()) {
        return parse_derivative(input, scope, id);
    }
    let Some(func) = Func::from_name(&name) else {
        let known: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
        return Err(syn::Error::new(
            id.span(),
            format!(
                "unknown function `{name}`; the stencil DSL knows: {}, and the derivative \
                 operators {}",
                known.join(", "),
                DERIVATIVES.join(", ")
            ),
        ));
    };
    let content;
    parenthesized!(content in input);
    let mut args = Vec::new();
    while !content.is_empty() {
        args.push(parse_expr(&content, scope)?);
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(unexpected(
                &content,
                "expected `,` between arguments or `)` after the last one",
            ));
        }
        content.parse::<Token![,]>()?;
    }
    if args.len() != func.arity() {
        return Err(syn::Error::new(
            id.span(),
            format!(
                "`{name}` takes {} argument{}, found {}",
                func.arity(),
                if func.arity() == 1 { "" } else { "s" },
                args.len()
            ),
        ));
    }
    if let Some(values) = args
        .iter()
        .map(|a| match a {
            Expr::Lit(v) => Some(*v),
            _ => None,
        })
        .collect::<Option<Vec<f64>>>()
    {
        return finite(func.eval(&values), id.span(), &format!("`{name}(...)`"));
    }
    Ok(Expr::Call(func, args))
}
