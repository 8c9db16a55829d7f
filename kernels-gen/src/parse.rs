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

use crate::emit::rust::{LAUNCH_RESERVED, RESERVED};
use crate::fd::{MAX_ORDER, MIN_ORDER};
use crate::ir::{
    axes, Access, BinOp, Domain, Expr, Func, Param, ParamKind, Stencil, Stmt, AXIS_NAMES,
};
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::{bracketed, parenthesized, Ident, LitFloat, LitInt, Token};

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
            let (stencil, span) = parse_stencil(input)?;
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

/// A parameter as declared, with its span for error messages.
struct Declared {
    param: Param,
    span: Span,
    used: bool,
    written: bool,
}

/// Parsing state of one stencil.
struct Scope {
    params: Vec<Declared>,
    locals: Vec<String>,
    /// Current expression nesting (see [`MAX_NESTING`]).
    depth: usize,
    /// The stencil's dimensionality, fixed by its first field access.
    dims: usize,
    /// That first access, as written (`p[0, 0]`), for error messages.
    first_access: String,
}

impl Scope {
    fn param(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|d| d.param.name == name)
    }

    fn local(&self, name: &str) -> Option<usize> {
        self.locals.iter().position(|l| l == name)
    }
}

fn parse_stencil(input: ParseStream) -> syn::Result<(Stencil, Span)> {
    let mut doc = Vec::new();
    let mut at: Option<(Vec<Ident>, Span)> = None;
    while input.peek(Token![#]) {
        input.parse::<Token![#]>()?;
        let content;
        bracketed!(content in input);
        let name = content.call(Ident::parse_any)?;
        if name == "doc" {
            content.parse::<Token![=]>()?;
            let text: syn::LitStr = content.parse()?;
            // One entry per line: no emitter's comment can be escaped by a line break.
            doc.extend(text.value().split(['\n', '\r']).map(str::to_string));
        } else if name == "at" {
            let args;
            let paren = parenthesized!(args in content);
            let names = args.parse_terminated(Ident::parse_any, Token![,])?;
            if names.is_empty() || names.len() > MAX_DIMS {
                return Err(syn::Error::new(
                    paren.span.join(),
                    "`#[at(...)]` takes one index parameter per axis: `#[at(ix)]` (1D), \
                     `#[at(iz, ix)]` (2D) or `#[at(iz, iy, ix)]` (3D)",
                ));
            }
            at = Some((names.into_iter().collect(), paren.span.join()));
        } else {
            return Err(syn::Error::new(
                name.span(),
                format!(
                    "unknown stencil attribute `{name}`; stencils accept doc comments and \
                     `#[at(iz, ix)]` (run at one point given by one `index` parameter per axis)"
                ),
            ));
        }
    }
    let public = if input.peek(Token![pub]) {
        input.parse::<Token![pub]>()?;
        true
    } else {
        false
    };
    if !input.peek(Token![fn]) {
        return Err(input.error("expected `fn name(params) { ... }` to start a stencil"));
    }
    input.parse::<Token![fn]>()?;
    let name: Ident = input.call(Ident::parse_any)?;
    let name_span = name.span();
    check_name(&name, Role::Stencil)?;

    let params_content;
    parenthesized!(params_content in input);
    let mut scope = Scope {
        params: Vec::new(),
        locals: Vec::new(),
        depth: 0,
        dims: 2,
        first_access: String::new(),
    };
    while !params_content.is_empty() {
        let pname = params_content.call(Ident::parse_any)?;
        params_content.parse::<Token![:]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "expected `:` after parameter `{pname}`; write `{pname}: in`, `out`, `inout`, `real` or `index`"
                ),
            )
        })?;
        let kind_ident = params_content.call(Ident::parse_any)?;
        let kind = match kind_ident.to_string().as_str() {
            "in" if params_content.peek(syn::token::Paren) => {
                ParamKind::Profile(parse_profile_axis(&params_content, &pname)?)
            }
            "in" => ParamKind::Field(Access::In),
            "out" => ParamKind::Field(Access::Out),
            "inout" => ParamKind::Field(Access::InOut),
            "real" => ParamKind::Real,
            "index" => ParamKind::Index,
            other => {
                return Err(syn::Error::new(
                    kind_ident.span(),
                    format!(
                        "unknown parameter kind `{other}`; use `in` (field read), `in(x)` (a \
                         profile along x, z or y), `out` (field written), `inout` (field updated \
                         in place), `real` (scalar) or `index` (grid index for `#[at]`)"
                    ),
                ))
            }
        };
        check_name(&pname, Role::Param(kind))?;
        if scope.param(&pname.to_string()).is_some() {
            return Err(syn::Error::new(
                pname.span(),
                format!("parameter `{pname}` is declared twice; give each parameter its own name"),
            ));
        }
        scope.params.push(Declared {
            param: Param {
                name: pname.to_string(),
                kind,
            },
            span: pname.span(),
            used: false,
            written: false,
        });
        if params_content.is_empty() {
            break;
        }
        params_content.parse::<Token![,]>()?;
    }

    let body_content;
    syn::braced!(body_content in input);
    if let Some((dims, text, span)) = first_access(&body_content, &scope) {
        if dims == 0 || dims > MAX_DIMS {
            return Err(syn::Error::new(
                span,
                format!(
                    "`{text}` has {dims} offsets: fields have 1, 2 or 3 dimensions; write \
                     `u[dx]` (1D), `p[dz, dx]` (2D) or `p[dz, dy, dx]` (3D)"
                ),
            ));
        }
        scope.dims = dims;
        scope.first_access = text;
    }
    for d in &scope.params {
        if let ParamKind::Profile(axis) = d.param.kind {
            if !axes(scope.dims).contains(&axis) {
                return Err(syn::Error::new(
                    d.span,
                    format!(
                        "`{}: in({})`: this stencil is {}D, its axes are {}; a profile varies along one of them",
                        d.param.name,
                        AXIS_NAMES[axis],
                        scope.dims,
                        axes(scope.dims).iter().map(|&a| AXIS_NAMES[a]).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
    }
    let mut body = Vec::new();
    while !body_content.is_empty() {
        body.push(parse_stmt(&body_content, &mut scope)?);
    }

    // Whole-stencil checks.
    let domain = match &at {
        None => Domain::Interior,
        Some((ids, span)) => {
            if ids.len() != scope.dims {
                return Err(syn::Error::new(
                    *span,
                    format!(
                        "this stencil is {d}D (`{first}` has {d} offsets): `#[at(...)]` takes {d} \
                         index parameter{s}, one per axis: `#[at({example})]`",
                        d = scope.dims,
                        first = scope.first_access,
                        s = if scope.dims == 1 { "" } else { "s" },
                        example = axis_list(scope.dims, "i"),
                    ),
                ));
            }
            let find = |id: &Ident| -> syn::Result<usize> {
                match scope.param(&id.to_string()) {
                    Some(i) if scope.params[i].param.kind == ParamKind::Index => Ok(i),
                    _ => Err(syn::Error::new(
                        id.span(),
                        format!("`#[at]` needs index parameters: declare `{id}: index`"),
                    )),
                }
            };
            Domain::Point(ids.iter().map(find).collect::<syn::Result<_>>()?)
        }
    };
    let zeros = zeros(scope.dims);
    if !scope
        .params
        .iter()
        .any(|d| matches!(d.param.kind, ParamKind::Field(a) if a.is_written()))
    {
        return Err(syn::Error::new(
            name_span,
            format!(
                "stencil `{name}` has no output field; declare one as `name: out` and assign it"
            ),
        ));
    }
    for (i, d) in scope.params.iter().enumerate() {
        let Param { name: pname, kind } = &d.param;
        match kind {
            ParamKind::Field(a) if a.is_written() && !d.written => {
                return Err(syn::Error::new(
                    d.span,
                    format!(
                        "output field `{pname}` is never written; assign it with `{pname}[{zeros}] = ...;` or declare it `in`"
                    ),
                ))
            }
            ParamKind::Index => {
                let placed = matches!(&domain, Domain::Point(idx) if idx.contains(&i));
                if !placed {
                    return Err(syn::Error::new(
                        d.span,
                        format!(
                            "index parameter `{pname}` is not used; name it in `#[at(...)]` to run the stencil at that point, or remove it"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    if let Some(d) = scope.params.iter().find(|d| {
        !d.used
            && matches!(
                d.param.kind,
                ParamKind::Field(Access::In) | ParamKind::Profile(_) | ParamKind::Real
            )
    }) {
        return Err(syn::Error::new(
            d.span,
            format!(
                "parameter `{}` is never used; remove it or use it in the body",
                d.param.name
            ),
        ));
    }

    let stencil = Stencil {
        name: name.to_string(),
        public,
        doc,
        params: scope.params.into_iter().map(|d| d.param).collect(),
        locals: scope.locals,
        body,
        domain,
        dims: scope.dims,
    };
    Ok((stencil, name_span))
}

fn parse_stmt(input: ParseStream, scope: &mut Scope) -> syn::Result<Stmt> {
    if input.peek(Token![let]) {
        input.parse::<Token![let]>()?;
        let name: Ident = input.call(Ident::parse_any)?;
        let sname = name.to_string();
        check_name(&name, Role::Local)?;
        if scope.param(&sname).is_some() || scope.local(&sname).is_some() {
            return Err(syn::Error::new(
                name.span(),
                format!("`{sname}` is already defined; give this `let` a new name"),
            ));
        }
        input.parse::<Token![=]>()?;
        let value = parse_statement_expr(input, scope)?;
        expect_semi(input)?;
        scope.locals.push(sname);
        return Ok(Stmt::Let {
            local: scope.locals.len() - 1,
            value,
        });
    }

    let target = input.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected a statement: `let name = expr;` or `out_field[0, 0] = expr;`",
        )
    })?;
    let tname = target.to_string();
    if let Some(e) = control_flow(&target) {
        return Err(e);
    }
    let field = match scope.param(&tname) {
        Some(i) => i,
        None if scope.local(&tname).is_some() => {
            return Err(syn::Error::new(
                target.span(),
                format!("`{tname}` is a `let` local and cannot be assigned again; only output fields are assigned, as `out[0, 0] = ...;`"),
            ))
        }
        None => {
            return Err(syn::Error::new(
                target.span(),
                format!("cannot assign to `{tname}`: it is not declared; add `{tname}: out` to the parameters"),
            ))
        }
    };
    match scope.params[field].param.kind {
        ParamKind::Field(Access::In) | ParamKind::Profile(_) => {
            return Err(syn::Error::new(
                target.span(),
                format!("`{tname}` is declared `in` and cannot be written; declare it `{tname}: out` (or `inout` to update it in place)"),
            ))
        }
        ParamKind::Field(_) => {}
        ParamKind::Real | ParamKind::Index => {
            return Err(syn::Error::new(
                target.span(),
                format!("`{tname}` is a scalar parameter and cannot be assigned; only output fields are written, as `out[0, 0] = ...;`"),
            ))
        }
    }
    if !input.peek(syn::token::Bracket) {
        return Err(syn::Error::new(
            target.span(),
            format!(
                "write the output at the current point: `{tname}[{}] = ...;`",
                zeros(scope.dims)
            ),
        ));
    }
    let (offset, span) = parse_offsets(input, &tname, scope)?;
    if offset.iter().any(|&o| o != 0) {
        return Err(syn::Error::new(
            span,
            format!(
                "a stencil writes only the point it is at: write `{tname}[{}]`, not `{tname}{}`; shift the reads instead",
                zeros(scope.dims),
                fmt_offset(&offset)
            ),
        ));
    }
    if scope.params[field].written {
        return Err(syn::Error::new(
            target.span(),
            format!("`{tname}` is assigned twice; compute the value with `let` and assign once"),
        ));
    }
    if !input.peek(Token![=]) || input.peek(Token![==]) {
        return Err(input.error(format!(
            "expected `=` after `{tname}[{}]`",
            zeros(scope.dims)
        )));
    }
    input.parse::<Token![=]>()?;
    let value = parse_statement_expr(input, scope)?;
    expect_semi(input)?;
    scope.params[field].written = true;
    Ok(Stmt::Assign { field, value })
}

/// Rust's strict and reserved keywords (2015–2024 editions): names the generated Rust code
/// could not use.
pub const RUST_KEYWORDS: &[&str] = &[
    "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
    "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
    "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// What a checked name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The stencil's name (a Rust function, a marker type, a GPU kernel symbol).
    Stencil,
    /// A parameter of the given kind.
    Param(ParamKind),
    /// A `let` local.
    Local,
}

/// Checks a user name for `role`; the error says why the name cannot be used and what to
/// write instead. See the module documentation for the rules.
pub fn check_name(id: &Ident, role: Role) -> syn::Result<()> {
    let name = id.to_string();
    let fail = |why: String| Err(syn::Error::new(id.span(), why));
    if let Some(bare) = name.strip_prefix("r#") {
        return fail(format!(
            "raw identifiers are not supported in stencils: `{name}` is emitted to C and CUDA \
             too; choose a name that is not a keyword, e.g. `{bare}_`"
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return fail(format!(
            "`{name}`: stencil names are ASCII (letters, digits, `_`), as the C backends need"
        ));
    }
    if name == "_" {
        return fail("`_` cannot name a value; choose a name".to_string());
    }
    if RUST_KEYWORDS.contains(&name.as_str()) {
        return fail(format!(
            "`{name}` is a Rust keyword and cannot be a name; write e.g. `{name}_`"
        ));
    }
    if name.contains("__") {
        return fail(format!(
            "`{name}`: names with `__` are reserved for generated code; use single underscores"
        ));
    }
    let lower = name.to_ascii_lowercase();
    if role == Role::Stencil {
        if name != lower || name.starts_with('_') || name.ends_with('_') {
            return fail(format!(
                "stencil names are snake_case like Rust functions (lowercase, single `_` \
                 between words, none at either end): write `{}`",
                snake_case(&name)
            ));
        }
        return Ok(());
    }
    let first = name.trim_start_matches('_').chars().next();
    if first.is_some_and(|c| c.is_ascii_uppercase()) {
        return fail(format!(
            "`{name}`: names start with a lowercase letter (write `{lower}`): in the generated \
             Rust an uppercase name could mean a constant, unit struct or enum variant in scope \
             (`None`, `Ok`, a stencil's marker type) instead of a new variable"
        ));
    }
    let reserved: Vec<&str> = match role {
        Role::Param(ParamKind::Index) => LAUNCH_RESERVED.to_vec(),
        Role::Param(_) => RESERVED.iter().chain(LAUNCH_RESERVED).copied().collect(),
        _ => RESERVED.to_vec(),
    };
    if reserved.contains(&name.as_str()) {
        return fail(format!(
            "`{name}` is used by the generated code; choose another name (reserved: {})",
            reserved.join(", ")
        ));
    }
    Ok(())
}

/// `FooBar` → `foo_bar`, `foo__bar_` → `foo_bar` (for the hint of a stencil name).
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (k, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && k > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out.split('_')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// An error for tokens the DSL does not accept where `expected` was due, with the fix for
/// the usual ones (Rust habits such as `x.sqrt()`, `x ^ 2`, `%`, `if`, comparisons).
fn unexpected(input: ParseStream, expected: &str) -> syn::Error {
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
fn control_flow(id: &Ident) -> Option<syn::Error> {
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

fn expect_semi(input: ParseStream) -> syn::Result<()> {
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

fn fmt_offset(offset: &[i32]) -> String {
    let parts: Vec<String> = offset.iter().map(|o| o.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `"0, 0"` for 2D: the centre offset of a `dims`-dimensional stencil.
fn zeros(dims: usize) -> String {
    vec!["0"; dims].join(", ")
}

/// `"iz, iy, ix"` for prefix `"i"` in 3D, `"dz, dx"` for `"d"` in 2D: one name per axis.
fn axis_list(dims: usize, prefix: &str) -> String {
    crate::ir::axes(dims)
        .iter()
        .map(|&a| format!("{prefix}{}", crate::ir::AXIS_NAMES[a]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first field access `name[...]` in a stencil body (searched through every group, in
/// source order), as (number of offsets, its text, its span): it fixes the dimensionality.
fn first_access(body: ParseStream, scope: &Scope) -> Option<(usize, String, Span)> {
    use proc_macro2::{Delimiter, TokenTree};
    fn search(ts: TokenStream, scope: &Scope) -> Option<(usize, String, Span)> {
        let mut prev: Option<Ident> = None;
        for tt in ts {
            match &tt {
                TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
                    if let Some(id) = prev.take() {
                        let name = id.to_string();
                        let is_field = scope.param(&name).is_some_and(|i| {
                            matches!(
                                scope.params[i].param.kind,
                                ParamKind::Field(_) | ParamKind::Profile(_)
                            )
                        });
                        if is_field {
                            let mut n = 0;
                            let mut pending = false;
                            for t in g.stream() {
                                match t {
                                    TokenTree::Punct(p) if p.as_char() == ',' => {
                                        n += 1;
                                        pending = false;
                                    }
                                    _ => pending = true,
                                }
                            }
                            let dims = n + usize::from(pending);
                            let text = format!("{name}[{}]", g.stream())
                                .replace(" ,", ",")
                                .replace("- ", "-");
                            return Some((dims, text, g.span()));
                        }
                    }
                    if let Some(found) = search(g.stream(), scope) {
                        return Some(found);
                    }
                }
                TokenTree::Group(g) => {
                    prev = None;
                    if let Some(found) = search(g.stream(), scope) {
                        return Some(found);
                    }
                }
                TokenTree::Ident(id) => prev = Some(id.clone()),
                _ => prev = None,
            }
        }
        None
    }
    let tokens: TokenStream = body.fork().parse().ok()?;
    search(tokens, scope)
}

/// The axis of a profile parameter, `in(x)`: `(x)`, `(y)` or `(z)` after `in`, as
/// `0 = z, 1 = y, 2 = x`.
fn parse_profile_axis(input: ParseStream, pname: &Ident) -> syn::Result<usize> {
    let content;
    let paren = parenthesized!(content in input);
    let hint = format!(
        "a profile is declared with its axis: `{pname}: in(x)`, `in(z)` or, in 3D, `in(y)`"
    );
    let Ok(axis) = content.call(Ident::parse_any) else {
        return Err(syn::Error::new(paren.span.join(), hint));
    };
    match AXIS_NAMES.iter().position(|a| axis == a) {
        Some(a) if content.is_empty() => Ok(a),
        _ => Err(syn::Error::new(axis.span(), hint)),
    }
}

/// Parses `[a, b]` with integer-constant offsets; there must be as many as the stencil has
/// dimensions.
fn parse_offsets(input: ParseStream, field: &str, scope: &Scope) -> syn::Result<(Vec<i32>, Span)> {
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
fn parse_statement_expr(input: ParseStream, scope: &mut Scope) -> syn::Result<Expr> {
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
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        if !lit.suffix().is_empty() {
            return Err(syn::Error::new(
                lit.span(),
                "write constants without a type suffix (`2`, not `2u32`)",
            ));
        }
        return finite(lit.base10_parse::<f64>()?, lit.span(), &format!("`{lit}`"));
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
        return match scope.params[pi].param.kind {
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
            ParamKind::Profile(axis) => {
                if !input.peek(syn::token::Bracket) {
                    return Err(syn::Error::new(
                        id.span(),
                        format!("`{name}` is a profile: read it at an offset, e.g. `{name}[{}]`", zeros(scope.dims)),
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
            ParamKind::Field(access) => {
                if !input.peek(syn::token::Bracket) {
                    return Err(syn::Error::new(
                        id.span(),
                        format!("`{name}` is a field: read it at an offset, e.g. `{name}[{}]`", zeros(scope.dims)),
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
        };
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

/// A derivative operator of field `p` of even order `N` ([`crate::fd::SPACE_ORDERS`]),
/// unscaled by the grid spacing, as a weighted sum of taps with Fornberg's weights
/// ([`crate::fd`]); see the module documentation for the list. `d2x` runs along x
/// (`p[0, k]` in 2D), `d2z` along z (`p[k, 0]`), `laplacian` is `d2x + d2z` in 2D and
/// `d2x + d2y + d2z` in 3D. Taps go from `-N/2` to `N/2` (see [`weighted_sum`]).
fn parse_derivative(input: ParseStream, scope: &mut Scope, id: &Ident) -> syn::Result<Expr> {
    let name = id.to_string();
    let usage = format!("write `{name}(field, order)` with an `in` field and an even integer order from {MIN_ORDER} to {MAX_ORDER}, e.g. `{name}(p, 8)`");
    let content;
    parenthesized!(content in input);
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
    match scope.params[pi].param.kind {
        ParamKind::Field(Access::In) => {}
        ParamKind::Field(Access::InOut) => {
            return Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is `inout`: a derivative reads it at offsets, which would race with its own writes; pass the data as an `in` field"),
            ))
        }
        ParamKind::Field(Access::Out) => {
            return Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is declared `out` and cannot be read; take the derivative of an `in` field"),
            ))
        }
        ParamKind::Real | ParamKind::Index => {
            return Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is a scalar, not a field: {usage}"),
            ))
        }
        ParamKind::Profile(_) => {
            return Err(syn::Error::new(
                field.span(),
                format!("`{fname}` is a profile: derivative operators take `in` fields; write the differences of its taps, e.g. `{fname}[1] - {fname}[-1]` along its axis"),
            ))
        }
    }
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
    let order_err = |e: String| syn::Error::new(lit.span(), format!("`{name}`: {e}"));
    crate::fd::check_order(value).map_err(order_err)?;
    if content.peek(Token![,]) {
        content.parse::<Token![,]>()?;
    }
    if !content.is_empty() {
        return Err(content.error(format!(
            "`{name}` takes two arguments, a field and an integer-literal order: {usage}"
        )));
    }
    let dims = scope.dims;
    let present = crate::ir::axes(dims);
    if let Some(&missing) = operator_axes(&name).iter().find(|a| !present.contains(a)) {
        return Err(syn::Error::new(
            id.span(),
            format!(
                "`{name}` differentiates along {}, but this stencil is {dims}D (axes {}, as in \
                 `{}`): use operators along those axes, or index every field of a 3D stencil \
                 as `p[dz, dy, dx]`",
                crate::ir::AXIS_NAMES[missing],
                present
                    .iter()
                    .map(|&a| crate::ir::AXIS_NAMES[a])
                    .collect::<Vec<_>>()
                    .join(", "),
                scope.first_access,
            ),
        ));
    }
    scope.params[pi].used = true;
    // A tap of `p` at the offset `zyx` (`[dz, dy, dx]`), in this stencil's dimensions.
    let read = |zyx: [i32; 3]| Expr::Read {
        field: pi,
        offset: present.iter().map(|&a| zyx[a]).collect(),
    };
    let at = |axis: usize, k: i32| {
        let mut o = [0; 3];
        o[axis] = k;
        o
    };
    let second = |axis: usize| -> syn::Result<Expr> {
        let w = crate::fd::central_second_derivative_f64(value).map_err(order_err)?;
        let m = (w.len() - 1) as i32;
        Ok(weighted_sum((-m..=m).map(|k| {
            (w[k.unsigned_abs() as usize], read(at(axis, k)))
        })))
    };
    let first = |axis: usize| -> syn::Result<Expr> {
        let w = crate::fd::central_first_derivative(value).map_err(order_err)?;
        let m = (w.len() / 2) as i32;
        Ok(weighted_sum((-m..=m).map(|k| {
            (w[(k + m) as usize].to_f64(), read(at(axis, k)))
        })))
    };
    // Mixed: `slow` is the outer (slower) axis of the pair, `fast` the inner one.
    let mixed = |slow: usize, fast: usize| -> syn::Result<Expr> {
        let w = crate::fd::central_mixed_derivative(value).map_err(order_err)?;
        let m = (w.len() / 2) as i32;
        let mut terms = Vec::new();
        for j in -m..=m {
            for k in -m..=m {
                let mut o = [0; 3];
                o[slow] = j;
                o[fast] = k;
                terms.push((w[(j + m) as usize][(k + m) as usize].to_f64(), read(o)));
            }
        }
        Ok(weighted_sum(terms))
    };
    let (z, y, x) = (0, 1, 2);
    Ok(match name.as_str() {
        "d2x" => second(x)?,
        "d2y" => second(y)?,
        "d2z" => second(z)?,
        "d1x" => first(x)?,
        "d1y" => first(y)?,
        "d1z" => first(z)?,
        "d2xz" => mixed(z, x)?,
        "d2xy" => mixed(y, x)?,
        "d2yz" => mixed(z, y)?,
        _ => {
            // laplacian: x, then y, then z, left to right (2D: d2x + d2z).
            let mut sum = second(x)?;
            for &a in present.iter().rev().skip(1) {
                sum = binary(BinOp::Add, sum, second(a)?);
            }
            sum
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The IR as the parser lowers it, before the arithmetic pass (`crate::simplify`).
    fn as_written(src: &str) -> syn::Result<Vec<Stencil>> {
        let tokens: TokenStream = src.parse().expect("lexes");
        Ok(StencilFile::parse
            .parse2(tokens)?
            .0
            .into_iter()
            .map(|(s, _)| s)
            .collect())
    }

    fn one(src: &str) -> Stencil {
        let mut v = as_written(src).expect("parses");
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    fn err(src: &str) -> String {
        as_written(src).expect_err("must fail").to_string()
    }

    const PXX: &str = "pub fn fd_pxx(pxx: out, p: in) {
        pxx[0, 0] = -1.0/12.0*p[0,-2] + 4.0/3.0*p[0,-1] - 5.0/2.0*p[0,0] + 4.0/3.0*p[0,1] - 1.0/12.0*p[0,2];
    }";

    #[test]
    fn parses_fd_pxx_with_folded_coefficients() {
        let s = one(PXX);
        assert_eq!(s.name, "fd_pxx");
        assert_eq!(s.type_name(), "FdPxx");
        assert!(s.public);
        assert_eq!(s.radius(), 2);
        assert_eq!(s.halo(), vec![0, 2]);
        assert_eq!(s.outputs(), vec![0]);
        assert_eq!(s.inputs(), vec![1]);
        assert_eq!(s.taps().len(), 5);
        // 5 multiplications and 4 additions/subtractions; divisions of constants are folded.
        assert_eq!(s.flops_per_point(), 9);
        assert_eq!(s.bytes_per_point(4), 8);
        let Stmt::Assign { value, .. } = &s.body[0] else {
            panic!("expected an assignment")
        };
        let mut lits = Vec::new();
        value.walk(&mut |e| {
            if let Expr::Lit(v) = e {
                lits.push(*v)
            }
        });
        assert_eq!(
            lits,
            vec![-1.0 / 12.0, 4.0 / 3.0, 2.5, 4.0 / 3.0, 1.0 / 12.0]
        );
    }

    #[test]
    fn precedence_and_associativity() {
        let s = one(
            "fn f(o: out, a: in, b: in, c: real) { o[0,0] = a[0,0] - b[0,0] - c * a[0,0] / c; }",
        );
        // ((a - b) - ((c * a) / c))
        let Stmt::Assign { value, .. } = &s.body[0] else {
            panic!()
        };
        match value {
            Expr::Binary(BinOp::Sub, l, r) => {
                assert!(matches!(**l, Expr::Binary(BinOp::Sub, _, _)));
                assert!(matches!(**r, Expr::Binary(BinOp::Div, _, _)));
            }
            other => panic!("unexpected tree {other:?}"),
        }
        assert_eq!(s.flops_per_point(), 4);
        assert_eq!(s.radius(), 0);
        assert_eq!(s.bytes_per_point(8), 24);
    }

    #[test]
    fn lets_point_domain_and_functions() {
        let s = one(
            "#[at(iz, ix)] fn src(p: inout, v: real, iz: index, ix: index) {
            let a = sqrt(4.0) * v;
            p[0, 0] = p[0, 0] + max(a, 0.0);
        }",
        );
        assert_eq!(s.domain, Domain::Point(vec![2, 3]));
        assert_eq!(s.locals, vec!["a".to_string()]);
        let Stmt::Let { value, .. } = &s.body[0] else {
            panic!()
        };
        assert_eq!(
            *value,
            Expr::Binary(
                BinOp::Mul,
                Box::new(Expr::Lit(2.0)),
                Box::new(Expr::Scalar(1))
            )
        );
        assert_eq!(s.fields_read(), 1);
        assert_eq!(s.fields_written(), 1);
    }

    #[test]
    fn several_stencils_and_docs() {
        let v = parse_str("/// Copies.\nfn a(o: out, q: in) { o[0,0] = q[0,0]; } fn b(o: out, q: in) { o[0,0] = q[1,-1]; }")
            .expect("parses");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].doc, vec![" Copies.".to_string()]);
        assert_eq!(v[1].radius(), 1);
    }

    /// A profile (`in(x)`, `in(z)`, `in(y)`): its axis in the IR, among the inputs in
    /// declaration order, read at offsets along its axis, and no compulsory bytes per point.
    #[test]
    fn parses_profiles_along_each_axis() {
        let s = one("fn f(o: out, ax: in(x), p: in, az: in(z)) { o[0, 0] = ax[0, -1] * p[0, 0] + az[2, 0]; }");
        assert_eq!(s.params[1].kind, ParamKind::Profile(2));
        assert_eq!(s.params[3].kind, ParamKind::Profile(0));
        assert_eq!(s.inputs(), vec![1, 2, 3]);
        assert_eq!((s.profile_axis(1), s.profile_axis(2)), (Some(2), None));
        assert_eq!(s.radii(), [2, 0, 1]);
        // o written, p read: 8 bytes in f32; the profiles are not per-point traffic.
        assert_eq!(s.bytes_per_point(4), 8);
        let s3 = one("fn g(o: out, ay: in(y)) { o[0, 0, 0] = ay[0, 1, 0]; }");
        assert_eq!(s3.params[1].kind, ParamKind::Profile(1));
        let s1 = one("fn h(o: out, ax: in(x)) { o[0] = ax[-1]; }");
        assert_eq!(s1.params[1].kind, ParamKind::Profile(2));
    }

    /// Every misuse of a profile is an error naming the fix.
    #[test]
    fn rejects_misused_profiles() {
        let cases = [
            // Unknown axis, or none.
            ("fn f(o: out, a: in(w)) { o[0, 0] = a[0, 0]; }", "in(x)"),
            ("fn f(o: out, a: in()) { o[0, 0] = a[0, 0]; }", "in(x)"),
            ("fn f(o: out, a: in(x z)) { o[0, 0] = a[0, 0]; }", "in(x)"),
            // An axis the stencil does not have.
            (
                "fn f(o: out, a: in(y)) { o[0, 0] = a[0, 0]; }",
                "this stencil is 2D",
            ),
            (
                "fn f(o: out, a: in(z)) { o[0] = a[0]; }",
                "this stencil is 1D",
            ),
            // Read across its axis.
            (
                "fn f(o: out, a: in(x)) { o[0, 0] = a[1, 0]; }",
                "profile along x",
            ),
            (
                "fn f(o: out, a: in(z)) { o[0, 0, 0] = a[0, -1, 0]; }",
                "profile along z",
            ),
            // Written, read without an offset, differentiated, never used.
            (
                "fn f(o: out, a: in(x)) { o[0, 0] = 1.0; a[0, 0] = 2.0; }",
                "declared `in`",
            ),
            (
                "fn f(o: out, a: in(x)) { o[0, 0] = a; }",
                "read it at an offset",
            ),
            (
                "fn f(o: out, a: in(x)) { o[0, 0] = d2x(a, 2); }",
                "derivative operators take `in` fields",
            ),
            (
                "fn f(o: out, a: in(x), p: in) { o[0, 0] = p[0, 0]; }",
                "never used",
            ),
        ];
        for (src, want) in cases {
            let e = err(src);
            assert!(e.contains(want), "{src}: {e}");
        }
    }

    #[test]
    fn rejects_writing_an_input() {
        let e = err("fn f(a: in, o: out) { o[0,0] = 1.0; a[0,0] = 2.0; }");
        assert!(e.contains("declared `in`"), "{e}");
    }

    #[test]
    fn rejects_undeclared_name() {
        let e = err("fn f(o: out) { o[0,0] = q[0,0]; }");
        assert!(e.contains("`q` is not declared"), "{e}");
    }

    #[test]
    fn rejects_non_constant_offset() {
        let e = err("fn f(o: out, p: in) { o[0,0] = p[0, i]; }");
        assert!(e.contains("offsets must be integer constants"), "{e}");
    }

    #[test]
    fn rejects_assignment_off_centre_or_to_scalars() {
        assert!(err("fn f(o: out, p: in) { o[0,1] = p[0,0]; }").contains("only the point it is at"));
        assert!(
            err("fn f(o: out, s: real) { s = 1.0; o[0,0] = 1.0; }").contains("scalar parameter")
        );
        assert!(err("fn f(o: out) { o = 1.0; }").contains("o[0, 0]"));
    }

    #[test]
    fn rejects_unknown_function() {
        let e = err("fn f(o: out, p: in) { o[0,0] = tanh(p[0,0]); }");
        assert!(
            e.contains("unknown function `tanh`") && e.contains("sqrt"),
            "{e}"
        );
    }

    #[test]
    fn rejects_reading_outputs_and_racy_inout() {
        assert!(err("fn f(o: out) { o[0,0] = o[0,0]; }").contains("declared `out`"));
        assert!(err("fn f(o: inout) { o[0,0] = o[0,1]; }").contains("race"));
    }

    #[test]
    fn d2x_of_order_4_is_the_papers_fd_pxx() {
        let hand = one(PXX);
        let op = one("pub fn fd_pxx(pxx: out, p: in) { pxx[0, 0] = d2x(p, 4); }");
        assert_eq!(op, hand);
        let hand_z = one("fn f(o: out, p: in) { o[0, 0] = -1.0/12.0*p[-2,0] + 4.0/3.0*p[-1,0] - 5.0/2.0*p[0,0] + 4.0/3.0*p[1,0] - 1.0/12.0*p[2,0]; }");
        assert_eq!(one("fn f(o: out, p: in) { o[0, 0] = d2z(p, 4); }"), hand_z);
    }

    #[test]
    fn laplacian_is_d2x_plus_d2z() {
        let lap = one("fn f(o: out, p: in) { o[0, 0] = laplacian(p, 6); }");
        let sum = one("fn f(o: out, p: in) { o[0, 0] = d2x(p, 6) + d2z(p, 6); }");
        assert_eq!(lap, sum);
        assert_eq!(lap.radius(), 3);
        assert_eq!(lap.halo(), vec![3, 3]);
        // 2 × (7 taps: 7 multiplications + 6 additions) + 1 addition.
        assert_eq!(lap.flops_per_point(), 27);
        // Distinct taps: 7 along x and 7 along z sharing the centre.
        assert_eq!(lap.taps().len(), 13);
        assert_eq!(lap.bytes_per_point(4), 8);
    }

    #[test]
    fn derivative_radius_flops_follow_the_order() {
        for order in crate::fd::SPACE_ORDERS.map(|o| o as usize) {
            let s = one(&format!(
                "fn f(o: out, p: in, q: in, k: real) {{ o[0, 0] = 2.0 * p[0, 0] - q[0, 0] + k * d2x(p, {order}); }}"
            ));
            assert_eq!(s.radius(), order / 2, "order {order}");
            assert_eq!(s.halo(), vec![0, order / 2]);
            // (order + 1) taps: order + 1 multiplications and order additions, plus 4.
            assert_eq!(s.flops_per_point(), 2 * order + 1 + 4);
            assert_eq!(s.taps().len(), order + 2);
        }
        // The weights are Fornberg's: order 8's outermost tap is -1/560.
        let s = one("fn f(o: out, p: in) { o[0, 0] = d2x(p, 8); }");
        let Stmt::Assign { value, .. } = &s.body[0] else {
            panic!()
        };
        let mut lits = Vec::new();
        value.walk(&mut |e| {
            if let Expr::Lit(v) = e {
                lits.push(*v)
            }
        });
        assert_eq!(lits.first(), Some(&(-1.0 / 560.0)));
        assert_eq!(lits.last(), Some(&(1.0 / 560.0))); // subtracted
        assert_eq!(lits.len(), 9);
    }

    #[test]
    fn rejects_bad_derivative_calls() {
        let f = |body: &str| {
            err(&format!(
                "fn f(o: out, p: in, u: inout, k: real) {{ u[0, 0] = k; o[0, 0] = {body}; }}"
            ))
        };
        for bad in ["0", "1", "3", "15", "17", "18"] {
            let e = f(&format!("d2x(p, {bad})"));
            assert!(
                e.contains(&format!("space order {bad} is not supported"))
                    && e.contains("even order from 2 to 16"),
                "{e}"
            );
        }
        assert!(f("d2z(p, k)").contains("integer literal"));
        assert!(f("d2z(p, 4.0)").contains("integer literal"));
        assert!(f("d2z(p, 2 + 2)").contains("two arguments"));
        assert!(f("d2x(p, 4u8)").contains("suffix"));
        assert!(f("d2x(p)").contains("needs the space order"));
        assert!(f("d2x(p, 4, 6)").contains("two arguments"));
        assert!(f("laplacian(q, 4)").contains("`q` is not a declared field"));
        assert!(f("laplacian(o, 4)").contains("declared `out`"));
        assert!(f("laplacian(u, 4)").contains("race"));
        assert!(f("laplacian(k, 4)").contains("scalar, not a field"));
        assert!(f("laplacian(p[0, 1], 4)").contains("without an offset"));
        assert!(f("lapl(p, 4)").contains("derivative operators d2x, d2y, d2z, laplacian, d1x"));
    }

    #[test]
    fn rejects_structural_mistakes() {
        assert!(err("fn f(o: out, p: in) { }").contains("never written"));
        assert!(err("fn f(p: in) { }").contains("no output field"));
        assert!(err("fn f(o: out, p: in) { o[0,0] = p; }").contains("read it at an offset"));
        assert!(err("fn f(o: out, p: in) { o[0,0] = p[0]; }").contains("2 offsets"));
        assert!(err("fn f(o: out, p: floaty) { o[0,0] = 1.0; }").contains("unknown parameter kind"));
        assert!(err("fn f(o: out) { o[0,0] = 1.0; o[0,0] = 2.0; }").contains("assigned twice"));
        assert!(err("fn f(o: out, i: index) { o[0,0] = 1.0; }").contains("not used"));
        assert!(err("fn f(o: out) { o[0,0] = 1.0 }").contains("`;`"));
        assert!(err("fn f(o: out) { o[0,0] = 1.0f32; }").contains("suffix"));
        assert!(err("fn f(o: out, o: in) { o[0,0] = 1.0; }").contains("twice"));
        assert!(err("").contains("empty"));
    }

    /// The (line, column) of an error's span, for checking where it points.
    fn at(src: &str) -> (usize, usize) {
        let e = parse_str(src).expect_err("must fail");
        let start = e.span().start();
        (start.line, start.column)
    }

    #[test]
    fn constants_folding_to_inf_or_nan_are_errors_at_their_span() {
        let src = "fn f(o: out, p: in) { o[0, 0] = 1.0 / 0.0 * p[0, 0]; }";
        let e = err(src);
        assert!(e.contains("gives inf") && e.contains("division"), "{e}");
        assert_eq!(at(src), (1, src.find('/').unwrap()));
        let src = "fn f(o: out, p: in) { o[0, 0] = p[0, 0] * sqrt(-1.0); }";
        assert!(err(src).contains("gives NaN"), "{}", err(src));
        assert_eq!(at(src), (1, src.find("sqrt").unwrap()));
        assert!(err("fn f(o: out) { o[0, 0] = 1e400; }").contains("`1e400` gives inf"));
        assert!(err("fn f(o: out) { o[0, 0] = 0.0 - 1e308 * 10.0; }").contains("`*` gives inf"));
        // Finite in f64 but not in f32, for which every stencil is also generated.
        let e = err("fn f(o: out, p: in) { o[0, 0] = 1e300 * p[0, 0]; }");
        assert!(e.contains("does not fit in f32"), "{e}");
        // Large intermediate values that fold back into range are fine.
        let s = one("fn f(o: out, p: in) { o[0, 0] = 1e300 / 1e299 * p[0, 0]; }");
        assert!(
            matches!(&s.body[0], Stmt::Assign { value: Expr::Binary(_, l, _), .. } if **l == Expr::Lit(10.0))
        );
    }

    #[test]
    fn raw_identifiers_keywords_and_unsafe_names_are_refused_with_the_reason() {
        let e = err("fn f(r#type: out) { r#type[0, 0] = 1.0; }");
        assert!(
            e.contains("raw identifiers are not supported") && e.contains("`type_`"),
            "{e}"
        );
        assert!(err("fn f(o: out) { let r#fn = 1.0; o[0, 0] = r#fn; }").contains("raw identifiers"));
        assert!(err("fn f(self: out) { self[0, 0] = 1.0; }").contains("Rust keyword"));
        assert!(err("fn f(o: out, in: in) { o[0, 0] = in[0, 0]; }").contains("Rust keyword"));
        assert!(err("fn r#type(o: out) { o[0, 0] = 1.0; }").contains("raw identifiers"));
        for name in ["Ok", "None", "NULL", "FdPxx", "_Ok"] {
            let e = err(&format!(
                "fn f(o: out) {{ let {name} = 1.0; o[0, 0] = {name}; }}"
            ));
            assert!(e.contains("start with a lowercase letter"), "{name}: {e}");
        }
        assert!(err("fn f(o: out, space: real) { o[0, 0] = space; }").contains("generated code"));
        assert!(err("fn f(o: out, grid: in) { o[0, 0] = grid[0, 0]; }").contains("generated code"));
        assert!(err("fn f(o: out, p__q: in) { o[0, 0] = p__q[0, 0]; }").contains("`__`"));
        assert!(err("fn f(_: out) { }").contains("`_` cannot name"));
        // C words, CUDA built-ins and C macros are fine: the C backends rename every user name.
        one("fn f(sqrt: out, blockDim: in, null: real) { let int = blockDim[0, 0]; sqrt[0, 0] = int * null; }");
        // Index parameters only meet the launch function's names.
        one("#[at(iz, ix)] fn f(p: inout, v: real, iz: index, ix: index) { p[0, 0] = v; }");
    }

    #[test]
    fn stencil_names_are_snake_case_and_give_distinct_marker_types() {
        let e = err("fn FooBar(o: out) { o[0, 0] = 1.0; }");
        assert!(e.contains("snake_case") && e.contains("`foo_bar`"), "{e}");
        assert!(err("fn foo_(o: out) { o[0, 0] = 1.0; }").contains("snake_case"));
        let e =
            err("fn fd_step4(o: out) { o[0, 0] = 1.0; } fn fd_step_4(o: out) { o[0, 0] = 2.0; }");
        assert!(
            e.contains("`fd_step4` and `fd_step_4` would both generate the marker type `FdStep4`"),
            "{e}"
        );
    }

    #[test]
    fn doc_comments_are_split_into_lines() {
        let s = one("#[doc = \"first\\n#define x 1\\rthird\"] fn f(o: out) { o[0, 0] = 1.0; }");
        assert_eq!(s.doc, ["first", "#define x 1", "third"]);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = |open: &str, close: &str| {
            format!(
                "fn f(o: out, p: in) {{ o[0, 0] = {}p[0, 0]{}; }}",
                open.repeat(2000),
                close.repeat(2000)
            )
        };
        for src in [
            deep("(", ")"),
            deep("-", ""),
            deep("sqrt(", ")"),
            deep("- (", ")"),
        ] {
            let e = err(&src);
            assert!(e.contains(&format!("at most {MAX_NESTING} levels")), "{e}");
        }
        // At the limit it still works.
        let ok = format!(
            "fn f(o: out, p: in) {{ o[0, 0] = {}p[0, 0]{}; }}",
            "(".repeat(MAX_NESTING),
            ")".repeat(MAX_NESTING)
        );
        one(&ok);
    }

    #[test]
    fn a_flat_sum_of_20000_terms_is_parsed_and_emitted_in_linear_time() {
        // On a thread with a small, fixed stack (2 MiB; rustc runs proc macros with more):
        // every stage walks the 20,000-deep left-nested chain without deep recursion.
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(flat_sum_of_20000_terms)
            .expect("spawn")
            .join()
            .expect("no panic and no stack overflow");
    }

    fn flat_sum_of_20000_terms() {
        let terms: Vec<String> = (0..20_000)
            .map(|k| format!("{}.0 * p[0, {}]", k % 7 + 1, k % 5))
            .collect();
        let src = format!("fn f(o: out, p: in) {{ o[0, 0] = {}; }}", terms.join(" + "));
        let start = std::time::Instant::now();
        let s = one(&src);
        assert_eq!(s.flops_per_point(), 2 * 20_000 - 1);
        let c = crate::emit::c::emit(&s, crate::emit::c::Dialect::Cuda);
        let dsl = crate::emit::dsl::print(&s);
        let rust = crate::emit::rust::host_source(&s, "serial");
        let tokens = crate::emit::rust::emit_stencil(&s, &dsl, &[]);
        // Each output grows linearly: a few dozen bytes per term.
        for (what, len) in [("C", c.len()), ("DSL", dsl.len()), ("Rust", rust.len())] {
            assert!(len < 2 * 40 * 20_000 + 20_000, "{what}: {len} bytes");
        }
        assert!(!tokens.is_empty());
        drop(s);
        // Quadratic work took 11 s for 10,000 terms (44 s for these 20,000); linear work
        // takes about a second in a debug build. The bound is generous for shared machines.
        let took = start.elapsed();
        assert!(took.as_secs() < 15, "took {took:?}");
    }

    #[test]
    fn rust_habits_get_the_dsl_way_to_write_them() {
        let f = |body: &str| err(&format!("fn f(o: out, p: in) {{ o[0, 0] = {body}; }}"));
        let e = f("d2x(d2x(p, 2), 2)");
        assert!(
            e.contains("derivatives do not nest") && e.contains("second"),
            "{e}"
        );
        assert!(!e.contains("add `d2x: in`"), "{e}");
        let e = f("p[0, 0].sqrt()");
        assert!(e.contains("write `sqrt(x)` instead of `x.sqrt()`"), "{e}");
        let e = f("(p[0, 0] + 1.0).exp()");
        assert!(e.contains("write `exp(x)`"), "{e}");
        let e = f("p[0, 0].tanh()");
        assert!(
            e.contains("method calls are not part of the DSL") && e.contains("sqrt, abs"),
            "{e}"
        );
        let e = f("p[0, 0] ^ 2");
        assert!(
            e.contains("`^` is not a power") && e.contains("`x * x`"),
            "{e}"
        );
        let e = f("p[0, 0] ** 2.0");
        assert!(e.contains("`**` is not a power"), "{e}");
        let e = f("p[0, 0] % 2.0");
        assert!(e.contains("`%` (remainder) is not supported"), "{e}");
        let e = f("max(p[0, 0] % 2.0, 1.0)");
        assert!(e.contains("`%` (remainder)"), "{e}");
        let e = f("if p[0, 0] > 0.0 { 1.0 } else { 2.0 }");
        assert!(e.contains("no branches") && e.contains("max(a, b)"), "{e}");
        let e = err("fn f(o: out, p: in) { if true { o[0, 0] = 1.0; } }");
        assert!(
            e.contains("no branches") && !e.contains("add `if: out`"),
            "{e}"
        );
        let e = f("p[0, 0] > 0.0");
        assert!(e.contains("comparisons"), "{e}");
    }
}
