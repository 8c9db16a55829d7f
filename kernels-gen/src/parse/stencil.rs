//! The stencil grammar: attributes, the signature (`fn name(p: in, ...)`), statements, and
//! the whole-stencil checks (an output exists and is written once, every parameter is used,
//! `#[at]` names one index per axis).

use super::expr::{parse_offsets, parse_statement_expr};
use super::hints::{axis_list, control_flow, expect_semi, fmt_offset, zeros};
use super::names::{check_name, Role};
use super::MAX_DIMS;
use crate::ir::{axes, Access, Domain, Param, ParamKind, Stencil, Stmt, AXIS_NAMES};
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{bracketed, parenthesized, Ident, Token};

/// A parameter as declared, with its span for error messages.
pub(super) struct Declared {
    pub(super) param: Param,
    span: Span,
    pub(super) used: bool,
    written: bool,
}

/// Parsing state of one stencil.
pub(super) struct Scope {
    pub(super) params: Vec<Declared>,
    locals: Vec<String>,
    /// Current expression nesting (see [`super::MAX_NESTING`]).
    pub(super) depth: usize,
    /// The stencil's dimensionality, fixed by its first field access.
    pub(super) dims: usize,
    /// That first access, as written (`p[0, 0]`), for error messages.
    pub(super) first_access: String,
}

impl Scope {
    /// The index of parameter `name`, if declared.
    pub(super) fn param(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|d| d.param.name == name)
    }

    /// The index of `let` local `name`, if defined.
    pub(super) fn local(&self, name: &str) -> Option<usize> {
        self.locals.iter().position(|l| l == name)
    }
}

/// `#[at(iz, ix)]` as written: the index names and the span of the parentheses.
type At = Option<(Vec<Ident>, Span)>;

/// One stencil, `attr* pub? fn NAME(params) { stmt* }`, with the span of its name.
pub(super) fn parse_stencil(input: ParseStream) -> syn::Result<(Stencil, Span)> {
    let (doc, at) = parse_attrs(input)?;
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

    let mut scope = Scope {
        params: Vec::new(),
        locals: Vec::new(),
        depth: 0,
        dims: 2,
        first_access: String::new(),
    };
    parse_params(input, &mut scope)?;

    let body_content;
    syn::braced!(body_content in input);
    fix_dims(&body_content, &mut scope)?;
    let mut body = Vec::new();
    while !body_content.is_empty() {
        body.push(parse_stmt(&body_content, &mut scope)?);
    }

    let domain = domain(&at, &scope)?;
    check_params(&scope, &name, &domain)?;
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

/// The attributes before a stencil: doc comments (one entry per line) and `#[at(...)]`.
fn parse_attrs(input: ParseStream) -> syn::Result<(Vec<String>, At)> {
    let mut doc = Vec::new();
    let mut at: At = None;
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
    Ok((doc, at))
}

/// The parameter list `(name: kind, ...)` into `scope.params`.
fn parse_params(input: ParseStream, scope: &mut Scope) -> syn::Result<()> {
    let params_content;
    parenthesized!(params_content in input);
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
        let kind = parse_param_kind(&params_content, &pname)?;
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
    Ok(())
}

/// The kind after `pname:`: `in`, `in(AXIS)`, `out`, `inout`, `real` or `index`.
fn parse_param_kind(input: ParseStream, pname: &Ident) -> syn::Result<ParamKind> {
    let kind_ident = input.call(Ident::parse_any)?;
    Ok(match kind_ident.to_string().as_str() {
        "in" if input.peek(syn::token::Paren) => {
            ParamKind::Profile(parse_profile_axis(input, pname)?)
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
    })
}

/// Fixes the stencil's dimensionality from the first field access of `body`, and checks
/// that every profile runs along one of its axes.
fn fix_dims(body: ParseStream, scope: &mut Scope) -> syn::Result<()> {
    if let Some((dims, text, span)) = first_access(body, scope) {
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
    Ok(())
}

/// Where the stencil runs: the interior, or the point `#[at(...)]` names with one `index`
/// parameter per axis.
fn domain(at: &At, scope: &Scope) -> syn::Result<Domain> {
    let Some((ids, span)) = at else {
        return Ok(Domain::Interior);
    };
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
    Ok(Domain::Point(
        ids.iter().map(find).collect::<syn::Result<_>>()?,
    ))
}

/// Whole-stencil checks of the parameters: an output exists and every output is written,
/// every index parameter places the stencil, and every input and scalar is used.
fn check_params(scope: &Scope, name: &Ident, domain: &Domain) -> syn::Result<()> {
    let zeros = zeros(scope.dims);
    if !scope
        .params
        .iter()
        .any(|d| matches!(d.param.kind, ParamKind::Field(a) if a.is_written()))
    {
        return Err(syn::Error::new(
            name.span(),
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
                let placed = matches!(domain, Domain::Point(idx) if idx.contains(&i));
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
    Ok(())
}

/// One statement: `let NAME = expr;` or `FIELD[0, 0] = expr;`.
fn parse_stmt(input: ParseStream, scope: &mut Scope) -> syn::Result<Stmt> {
    if input.peek(Token![let]) {
        return parse_let(input, scope);
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
    let field = assign_target(scope, &target)?;
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

/// `let NAME = expr;`, defining a new local.
fn parse_let(input: ParseStream, scope: &mut Scope) -> syn::Result<Stmt> {
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
    Ok(Stmt::Let {
        local: scope.locals.len() - 1,
        value,
    })
}

/// The parameter an assignment writes: a declared `out` or `inout` field.
fn assign_target(scope: &Scope, target: &Ident) -> syn::Result<usize> {
    let tname = target.to_string();
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
            Err(syn::Error::new(
                target.span(),
                format!("`{tname}` is declared `in` and cannot be written; declare it `{tname}: out` (or `inout` to update it in place)"),
            ))
        }
        ParamKind::Field(_) => Ok(field),
        ParamKind::Real | ParamKind::Index => {
            Err(syn::Error::new(
                target.span(),
                format!("`{tname}` is a scalar parameter and cannot be assigned; only output fields are written, as `out[0, 0] = ...;`"),
            ))
        }
    }
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
