//! Host Rust emitters: the serial and the rayon backend.
//!
//! Both share one generated *row kernel*: for one grid row (one `(z, y)` pair, numbered
//! `z * ny + y`, x contiguous; the same code for 1D, 2D and 3D stencils, whose fields the
//! runtime sees as `[nz, ny, nx]` with absent axes of size 1) it slices every distinct field
//! tap (`p[0, -2]`, `p[-1, 0, 2]`, ...) to exactly the row's `n` points, where the field's
//! window (`p__win`: where the field lies in the grid, its own row and plane lengths; a field
//! covering the grid or a smaller window of it) puts the tap's point
//! (`p__win.tap(grid, row, [0, 0, -2])`), then runs a plain `for i in 0..n` loop. Every slice has the same length, so the compiler removes the bounds
//! checks and vectorises the loop. The loop body is written twice: once over plain slices of
//! the outputs (the launch's fields fit the cache: `mode.plain()`), once inside the blocks
//! of the modes that prefetch ahead or stream their outputs; the arithmetic is the same. `rows` runs it over consecutive rows. The drivers hand out
//! runs of consecutive rows from the runtime's `row_runs` (in 2D one run of all rows; in 3D
//! y-blocks, then z, so the planes a stencil reads stay in cache): serial all at once, rayon
//! in chunks of the outermost axis (rows in 2D, z-planes in 3D); both wrap the call in the
//! runtime's `run_rows`, which runs it compiled for AVX2 where the CPU has it (runtime
//! detection; bit-identical, as Rust never contracts into FMA).
//!
//! The generated code names the runtime crate only through `::ppstencil::__private`, the
//! one interface between generated code and the runtime.
//!
//! # Names
//!
//! User names (fields, scalars, locals) are written as the user wrote them, so the code reads
//! like the stencil. Generated names never meet them: a tap slice is named from its field and
//! offset with `__` (`p[0, -2]` → `p__0_m2`), which user names may not contain; the
//! generator's own locals ([`RESERVED`]) and the launch function's ([`LAUNCH_RESERVED`]) are
//! refused as user names by the parser; and user names start with a lowercase letter or `_`
//! and are not Rust keywords, so they cannot name a keyword, an enum variant (`None`, `Ok`), a
//! unit struct (the stencils' own marker types) or a constant written in the usual case.

mod row;

pub use row::emit_row;

use super::infix::{self, CallStyle, Syntax};
use crate::ir::{Access, Domain, Expr, Func, ParamKind, Stencil, Tap};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// The locals, parameters and closure arguments the generated row kernel, `rows` and drivers
/// introduce: a field, scalar or local may not be called so (the parser refuses it). A test
/// derives the generated names from the emitted code and checks they are all listed here.
pub const RESERVED: &[&str] = &[
    "chunk_rows",
    "cols",
    "first_row",
    "grid",
    "i",
    "ins",
    "mode",
    "n",
    "outs",
    "plan",
    "reals",
    "row",
    "run",
    "runs",
    "task",
    "wins",
    "z_end",
    "z_first",
];

/// The parameters the generated launch function adds before the user's: no parameter of any
/// kind (including `index`) may be called so.
pub const LAUNCH_RESERVED: &[&str] = &["space"];

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// Name of the slice holding one tap: `p[0, -2]` → `p__0_m2`. The `__` keeps it apart from
/// every user name.
pub fn tap_name(stencil: &Stencil, tap: &Tap) -> String {
    let mut name = stencil.params[tap.field].name.clone();
    name.push('_');
    for o in &tap.offset {
        if *o < 0 {
            name.push_str(&format!("_m{}", -o));
        } else {
            name.push_str(&format!("_{o}"));
        }
    }
    name
}

/// The Rust spelling: `T::lit(0.5)`, taps as their row slices `p__0_m1[i]` (an `inout` field
/// as its own output row `u[i]`), functions as methods of `Real` (`x.sqrt()`); with `fused`,
/// sums with products as `Real::mul_add` chains (the fast arithmetic).
struct Rust<'a> {
    s: &'a Stencil,
    fused: bool,
}

impl Syntax for Rust<'_> {
    fn fused(&self) -> bool {
        self.fused
    }
    fn lit(&self, out: &mut String, v: f64) {
        out.push_str("T::lit(");
        out.push_str(&infix::decimal(v, false));
        out.push(')');
    }
    fn scalar(&self, out: &mut String, param: usize) {
        out.push_str(&self.s.params[param].name);
    }
    fn local(&self, out: &mut String, local: usize) {
        out.push_str(&self.s.locals[local]);
    }
    fn read(&self, out: &mut String, field: usize, offset: &[i32]) {
        let s = self.s;
        if s.params[field].kind == ParamKind::Field(Access::InOut) {
            // Its own output row, read at the current point before (or after) writing.
            out.push_str(&s.params[field].name);
        } else {
            let tap = Tap {
                field,
                offset: offset.to_vec(),
            };
            out.push_str(&tap_name(s, &tap));
        }
        // A profile along z or y is one value per row, a scalar of the row kernel.
        if !is_scalar_tap(s, field) {
            out.push_str("[i]");
        }
    }
    fn func(&self, f: Func) -> String {
        f.name().to_string()
    }
    fn call_style(&self) -> CallStyle {
        CallStyle::Method
    }
}

/// Emits an expression as tokens (printed as text by the shared printer, then lexed), in
/// the exact or the fused arithmetic.
fn expr(s: &Stencil, e: &Expr, fused: bool) -> TokenStream {
    let text = infix::to_string(&Rust { s, fused }, e);
    text.parse().unwrap_or_else(|err| {
        let msg = format!("kernels-gen emitted an expression rustc cannot lex ({err}): {text}");
        quote!(::core::compile_error!(#msg))
    })
}

/// Whether field `field`'s taps are scalars of the row kernel rather than row slices: a
/// profile along an outer axis (`in(z)`, `in(y)`) has one value per row.
fn is_scalar_tap(s: &Stencil, field: usize) -> bool {
    matches!(s.profile_axis(field), Some(axis) if axis != 2)
}

/// The name of a field's window in generated code: `p__win` (`__`: no user name).
fn win_name(field: &str) -> Ident {
    format_ident!("{field}__win")
}

fn win_names(names: &[Ident]) -> Vec<Ident> {
    names.iter().map(|n| win_name(&n.to_string())).collect()
}

/// Generic parameters and bounds shared by generated functions.
fn out_names(s: &Stencil) -> Vec<Ident> {
    s.outputs()
        .iter()
        .map(|&p| ident(&s.params[p].name))
        .collect()
}

fn in_names(s: &Stencil) -> Vec<Ident> {
    s.inputs()
        .iter()
        .map(|&p| ident(&s.params[p].name))
        .collect()
}

fn real_names(s: &Stencil) -> Vec<Ident> {
    s.reals()
        .iter()
        .map(|&p| ident(&s.params[p].name))
        .collect()
}

/// `let [a, b] = outs else { ... };` destructuring shared by both drivers.
fn unpack(s: &Stencil) -> TokenStream {
    let outs = out_names(s);
    let ins = in_names(s);
    let reals = real_names(s);
    let wins: Vec<Ident> = win_names(&outs)
        .into_iter()
        .chain(win_names(&ins))
        .collect();
    let name = &s.name;
    quote! {
        let [#(#outs),*] = outs else {
            return ::std::result::Result::Err(::ppstencil::__private::Error::arity(#name, "output fields"));
        };
        let [#(#ins),*] = ins else {
            return ::std::result::Result::Err(::ppstencil::__private::Error::arity(#name, "input fields"));
        };
        let &[#(#reals),*] = reals else {
            return ::std::result::Result::Err(::ppstencil::__private::Error::arity(#name, "real scalars"));
        };
        let [#(#wins),*] = wins else {
            return ::std::result::Result::Err(::ppstencil::__private::Error::arity(#name, "field windows"));
        };
    }
}

/// Nested tuple pattern `(a, (b, c))` and matching zip chain for several outputs.
fn zip_pattern(names: &[Ident]) -> TokenStream {
    match names {
        [] => quote!(()),
        [one] => quote!(#one),
        [first, rest @ ..] => {
            let r = zip_pattern(rest);
            quote!((#first, #r))
        }
    }
}

/// Right-nested zip of one iterator per output, matching [`zip_pattern`]:
/// `a.f().zip(b.f().zip(c.f()))`.
fn zip_chain(names: &[Ident], each: &dyn Fn(&Ident) -> TokenStream) -> TokenStream {
    match names {
        [] => quote!(),
        [one] => each(one),
        [first, rest @ ..] => {
            let head = each(first);
            let tail = zip_chain(rest, each);
            quote!(#head.zip(#tail))
        }
    }
}

/// `rows`: the row kernel over consecutive rows. The outputs are the rows' full-width slices
/// (`k` rows of each output's window), the first of them row `first_row` (numbered
/// `z * ny + y` in the grid).
pub fn emit_rows(s: &Stencil) -> TokenStream {
    let outs = out_names(s);
    let ins = in_names(s);
    let reals = real_names(s);
    let out_wins = win_names(&outs);
    let in_wins = win_names(&ins);
    let pat = zip_pattern(&outs);
    let chain = zip_chain(&outs, &|o| {
        let w = win_name(&o.to_string());
        quote!(#o.chunks_mut(#w.nx()))
    });
    quote! {
        /// Rows `first_row..` (as many as the outputs hold): the row kernel, row after row.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        fn rows<T: ::ppstencil::__private::Real>(
            grid: &::ppstencil::__private::Region,
            first_row: usize,
            mode: ::ppstencil::__private::RowMode<'_>,
            #(#outs: &mut [T],)*
            #(#ins: &[T],)*
            #(#out_wins: &::ppstencil::__private::Window,)*
            #(#in_wins: &::ppstencil::__private::Window,)*
            #(#reals: T,)*
        ) {
            let mut row = grid.row_at(first_row);
            for #pat in #chain {
                Self::row(grid, row, mode, #(#outs,)* #(#ins,)* #(#out_wins,)* #(#in_wins,)* #(#reals,)*);
                row = row.next(grid);
            }
        }
    }
}

/// The serial driver, `serial_with`: every row of the domain, run by run (the runtime's
/// `row_runs`: one run in 2D; y-blocks, then z, in 3D), compiled for the widest vector unit
/// the CPU has (`ppstencil::exec::vectorized`, through `run_rows`), with the row plan it is
/// handed (the trait's `serial` hands it the launch's own).
pub fn emit_serial(s: &Stencil) -> TokenStream {
    let outs = out_names(s);
    let ins = in_names(s);
    let reals = real_names(s);
    let unpack = unpack(s);
    let out_wins = win_names(&outs);
    let in_wins = win_names(&ins);
    let nfields = Literal::usize_unsuffixed(outs.len() + ins.len());
    let rz = Literal::usize_unsuffixed(s.radii()[0]);
    quote! {
        fn serial_with<T: ::ppstencil::__private::Real>(
            grid: &::ppstencil::__private::Region,
            wins: &[::ppstencil::__private::Window],
            outs: &mut [&mut [T]],
            ins: &[&[T]],
            reals: &[T],
            plan: ::ppstencil::__private::RowPlan,
        ) -> ::std::result::Result<(), ::ppstencil::__private::Error> {
            #unpack
            let runs = ::ppstencil::__private::row_runs::<T>(grid, grid.lo[0]..grid.hi[0], #rz, #nfields);
            // `inline(always)`: inlined into run_rows' AVX2 copy, else compiled for the baseline.
            ::ppstencil::__private::run_rows(plan, #[inline(always)] |mode| {
                for run in &runs {
                    Self::rows(grid, run.start, mode, #(&mut #outs[#out_wins.rows(grid, run.clone())],)* #(#ins,)* #(#out_wins,)* #(#in_wins,)* #(#reals,)*);
                }
            });
            ::std::result::Result::Ok(())
        }
    }
}

/// The rayon driver: the outermost axis (rows in 2D, z-planes in 3D) in chunks of
/// `chunk_rows` slices, each a parallel task running its row runs compiled for the widest vector unit.
pub fn emit_rayon(s: &Stencil) -> TokenStream {
    let outs = out_names(s);
    let ins = in_names(s);
    let reals = real_names(s);
    let unpack = unpack(s);
    let out_wins = win_names(&outs);
    let in_wins = win_names(&ins);
    let nfields = Literal::usize_unsuffixed(outs.len() + ins.len());
    let rz = Literal::usize_unsuffixed(s.radii()[0]);
    let pat = zip_pattern(&outs);
    let par = zip_chain(&outs, &|o| {
        let w = win_name(&o.to_string());
        quote!(#o[#w.planes(grid.lo[0]..grid.hi[0])].par_chunks_mut(chunk_rows * #w.plane()))
    });
    quote! {
        fn rayon<T: ::ppstencil::__private::Real>(
            grid: &::ppstencil::__private::Region,
            wins: &[::ppstencil::__private::Window],
            outs: &mut [&mut [T]],
            ins: &[&[T]],
            reals: &[T],
            chunk_rows: usize,
        ) -> ::std::result::Result<(), ::ppstencil::__private::Error> {
            use ::ppstencil::__private::rayon::prelude::*;
            #unpack
            let chunk_rows = chunk_rows.max(1);
            let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, #nfields);
            #par.enumerate().for_each(|(task, #pat)| {
                let z_first = grid.lo[0] + task * chunk_rows;
                let z_end = (z_first + chunk_rows).min(grid.hi[0]);
                let runs = ::ppstencil::__private::row_runs::<T>(grid, z_first..z_end, #rz, #nfields);
                ::ppstencil::__private::run_rows(plan, #[inline(always)] |mode| {
                    for run in &runs {
                        Self::rows(grid, run.start, mode, #(&mut #outs[#out_wins.rows_from(grid, run.clone(), z_first)],)* #(#ins,)* #(#out_wins,)* #(#in_wins,)* #(#reals,)*);
                    }
                });
            });
            ::std::result::Result::Ok(())
        }
    }
}

fn str_list(items: &[String]) -> TokenStream {
    quote!(&[#(#items),*])
}

/// Above this many top-level tokens, [`pretty`] leaves the code unformatted.
const PRETTY_MAX_TOKENS: usize = 20_000;

/// Pretty-prints a token stream of items (for `ppwave gen` and the embedded sources).
pub fn pretty(items: TokenStream) -> String {
    // prettyplease recurses along nested expressions: very long ones are shown unformatted.
    let mut tokens = 0;
    let mut groups = vec![items.clone()];
    while let Some(g) = groups.pop() {
        for tt in g {
            tokens += 1;
            if let proc_macro2::TokenTree::Group(inner) = tt {
                groups.push(inner.stream());
            }
        }
    }
    if tokens > PRETTY_MAX_TOKENS {
        return items.to_string();
    }
    match syn::parse2::<syn::File>(items.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => items.to_string(),
    }
}

/// Readable source of one host backend (`"serial"` or `"rayon"`): the row kernel and driver.
pub fn host_source(s: &Stencil, backend: &str) -> String {
    let ty = format_ident!("{}", s.type_name());
    let row = emit_row(s);
    let rows = emit_rows(s);
    let driver = if backend == "rayon" {
        emit_rayon(s)
    } else {
        emit_serial(s)
    };
    pretty(quote! {
        impl #ty {
            #row
            #rows
            #driver
        }
    })
}

/// Everything `stencil!` expands to for one stencil: the marker type implementing
/// `ppstencil::launch::Stencil`, and the generic launch function named after the stencil.
///
/// `sources` are extra `(backend, text)` pairs to embed (e.g. generated CUDA-C), so that
/// `ppwave gen` and the GPU backends can read them at run time.
pub fn emit_stencil(s: &Stencil, dsl_text: &str, sources: &[(String, String)]) -> TokenStream {
    emit_stencil_at(s, dsl_text, sources, Span::call_site())
}

/// [`emit_stencil`], with the generated function and marker type named at `span` (the user's
/// stencil name), so compiler messages about a call point at the right stencil.
pub fn emit_stencil_at(
    s: &Stencil,
    dsl_text: &str,
    sources: &[(String, String)],
    span: Span,
) -> TokenStream {
    let ty = Ident::new(&s.type_name(), span);
    let fname = Ident::new(&s.name, span);
    let vis = if s.public { quote!(pub) } else { quote!() };
    let info = stencil_info(s, dsl_text, sources);
    let row = emit_row(s);
    let rows = emit_rows(s);
    let serial = emit_serial(s);
    let rayon = emit_rayon(s);
    let launch = launch_fn(s, &ty, &fname, &vis);
    let type_doc = format!(
        " Marker type of the `{}` stencil: its metadata and host kernels.",
        s.name
    );
    quote! {
        #[doc = #type_doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ty;

        impl #ty {
            #row
            #rows
        }

        impl ::ppstencil::__private::Stencil for #ty {
            const INFO: ::ppstencil::__private::StencilInfo = #info;
            #serial
            #rayon
        }

        #launch
    }
}

/// The marker type's `StencilInfo` value: the stencil's shape, parameters and costs, its DSL
/// text, and the sources it embeds (serial and rayon Rust, then `sources`).
fn stencil_info(s: &Stencil, dsl_text: &str, sources: &[(String, String)]) -> TokenStream {
    let name = &s.name;
    let radius = s.radius();
    let dims_lit = Literal::usize_unsuffixed(s.dims);
    let [rz, ry, rx] = s.radii().map(Literal::usize_unsuffixed);
    let point = matches!(s.domain, Domain::Point(_));
    let names = |idx: Vec<usize>| -> Vec<String> {
        idx.into_iter().map(|p| s.params[p].name.clone()).collect()
    };
    let outputs = str_list(&names(s.outputs()));
    let inputs = str_list(&names(s.inputs()));
    let profiles = profile_axes(s);
    let reals_l = str_list(&names(s.reals()));
    let indices_l = str_list(&names(s.indices()));
    let fields_read = s.fields_read();
    let fields_written = s.fields_written();
    let flops = s.flops_per_point();
    let (bytes_f32, bytes_f64) = (s.bytes_per_point(4), s.bytes_per_point(8));
    let mut all_sources = vec![
        ("serial".to_string(), host_source(s, "serial")),
        ("rayon".to_string(), host_source(s, "rayon")),
    ];
    all_sources.extend(sources.iter().cloned());
    let src_keys: Vec<&String> = all_sources.iter().map(|(k, _)| k).collect();
    let src_vals: Vec<&String> = all_sources.iter().map(|(_, v)| v).collect();
    let dsl = dsl_text.to_string();
    quote! {
        ::ppstencil::__private::StencilInfo {
            name: #name,
            radius: #radius,
            dims: #dims_lit,
            radii: [#rz, #ry, #rx],
            point: #point,
            outputs: #outputs,
            inputs: #inputs,
            profiles: &[#(#profiles),*],
            reals: #reals_l,
            indices: #indices_l,
            fields_read: #fields_read,
            fields_written: #fields_written,
            flops_per_point: #flops,
            bytes_per_point_f32: #bytes_f32,
            bytes_per_point_f64: #bytes_f64,
            dsl: #dsl,
            sources: &[#((#src_keys, #src_vals)),*],
        }
    }
}

/// Per input field, the axis it is a profile along (`Some(axis)`), or `None` for a field.
fn profile_axes(s: &Stencil) -> Vec<TokenStream> {
    s.inputs()
        .into_iter()
        .map(|p| match s.profile_axis(p) {
            Some(axis) => {
                let axis = Literal::usize_unsuffixed(axis);
                quote!(::std::option::Option::Some(#axis))
            }
            None => quote!(::std::option::Option::None),
        })
        .collect()
}

/// The generic launch function `fname` (the user's docs, then [`launch_doc`]): it hands the
/// fields, reals and indices to the runtime's `launch` for marker type `ty`.
fn launch_fn(s: &Stencil, ty: &Ident, fname: &Ident, vis: &TokenStream) -> TokenStream {
    let docs = &s.doc;
    let dims_lit = Literal::usize_unsuffixed(s.dims);
    let fn_params = launch_params(s);
    let outs = out_names(s);
    let ins = in_names(s);
    let reals = real_names(s);
    let idx: Vec<Ident> = s
        .indices()
        .iter()
        .map(|&p| ident(&s.params[p].name))
        .collect();
    let fn_doc = launch_doc(s);
    quote! {
        #(#[doc = #docs])*
        #[doc = ""]
        #[doc = #fn_doc]
        #[allow(clippy::too_many_arguments)]
        #vis fn #fname<E: ::ppstencil::__private::ExecutionSpace, T: ::ppstencil::__private::Real>(
            space: &E,
            #(#fn_params),*
        ) -> ::std::result::Result<(), ::ppstencil::__private::Error> {
            ::ppstencil::__private::launch::<#ty, E, T, #dims_lit>(
                space,
                &mut [#(&mut *#outs),*],
                &[#(#ins),*],
                &[#(#reals),*],
                &[#(#idx),*],
            )
        }
    }
}

/// The launch function's parameters, in the stencil's order: fields typed by the execution
/// space's memory space (`&` for inputs and profiles, `&mut` for outputs), reals as `T`,
/// indices as `usize`.
fn launch_params(s: &Stencil) -> Vec<TokenStream> {
    let dims_lit = Literal::usize_unsuffixed(s.dims);
    s.params
        .iter()
        .map(|p| {
            let id = ident(&p.name);
            match p.kind {
                ParamKind::Field(Access::In) | ParamKind::Profile(_) => {
                    quote!(#id: &::ppstencil::__private::ScalarField<E::Memory, T, #dims_lit>)
                }
                ParamKind::Field(_) => {
                    quote!(#id: &mut ::ppstencil::__private::ScalarField<E::Memory, T, #dims_lit>)
                }
                ParamKind::Real => quote!(#id: T),
                ParamKind::Index => quote!(#id: usize),
            }
        })
        .collect()
}

/// The launch function's doc text: what it runs, on which points, and how it fails.
fn launch_doc(s: &Stencil) -> String {
    let (name, radius, dims) = (&s.name, s.radius(), s.dims);
    format!(
        " Runs the `{name}` stencil on execution space `E` (generated by `stencil!`).\n\n \
         Every field must live in `E`'s memory space and have the same shape (or be a window \
         of the grid holding the points the kernel touches in it); the domain is \
         {}. Returns an error (never panics) on a shape mismatch, a window too small or a grid \
         too small.",
        if matches!(s.domain, Domain::Point(_)) {
            "the single point given by the index arguments".to_string()
        } else if radius == 0 {
            "every point".to_string()
        } else {
            let what = ["points", "rows and columns", "planes, rows and columns"][dims - 1];
            format!("{what} `{radius}..n-{radius}` (radius {radius})")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_str;

    fn stencil(src: &str) -> Stencil {
        parse_str(src).expect("parses").remove(0)
    }

    #[test]
    fn row_kernel_slices_every_tap_once() {
        let s = stencil(
            "fn fd_pzz(pzz: out, p: in) { pzz[0,0] = -1.0/12.0*p[-2,0] + 4.0/3.0*p[-1,0] - 2.5*p[0,0] + 4.0/3.0*p[1,0] - 1.0/12.0*p[2,0]; }",
        );
        let src = host_source(&s, "serial");
        for line in [
            "let p__m2_0 = &p[p__win.tap(grid, row, [-2, 0, 0])..][..n];",
            "let p__m1_0 = &p[p__win.tap(grid, row, [-1, 0, 0])..][..n];",
            "let p__0_0 = &p[p__win.tap(grid, row, [0, 0, 0])..][..n];",
            "let p__2_0 = &p[p__win.tap(grid, row, [2, 0, 0])..][..n];",
            "let mut pzz = mode.output(&mut pzz[pzz__win.cols(grid)], pzz__win.nx());",
            "for cols in pzz.blocks() {",
            "if mode.prefetch() {",
            "mode.fetch(p__2_0, cols.start, p__win.nx());",
            "pzz.prefetch(cols.start);",
            "let p__m2_0 = &p__m2_0[cols.clone()];",
            "let mut pzz = pzz.block(cols);",
            "for i in 0..pzz.len() {",
            "pzz[i] = T::lit(-0.08333333333333333) * (p__m2_0[i] + p__2_0[i])",
            "for pzz in pzz.chunks_mut(pzz__win.nx()) {",
            "fn serial_with<T: ::ppstencil::__private::Real>(",
            "plan: ::ppstencil::__private::RowPlan,",
            "&mut pzz[pzz__win.rows(grid, run.clone())],",
        ] {
            assert!(src.contains(line), "missing `{line}` in:\n{src}");
        }
    }

    #[test]
    fn parentheses_are_minimal_but_correct() {
        let s = stencil("fn f(o: out, a: in, b: in, c: real) { o[0,0] = c * (a[0,0] + b[0,0]) - (a[0,0] - b[0,0]) - -a[0,1] / (b[0,0] * c); }");
        let src = host_source(&s, "serial")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            src.contains("o[i] = c * (a__0_0[i] + b__0_0[i]) - (a__0_0[i] - b__0_0[i]) - -a__0_1[i] / (b__0_0[i] * c);"),
            "{src}"
        );
    }

    #[test]
    fn rayon_driver_zips_several_outputs() {
        let s = stencil(
            "fn two(a: out, b: inout, p: in) { a[0,0] = p[0,0]; b[0,0] = b[0,0] + p[0,1]; }",
        );
        let src = host_source(&s, "rayon");
        let flat = src.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("par_chunks_mut(chunk_rows * a__win.plane())"),
            "{src}"
        );
        assert!(
            flat.contains(
                "&mut a[a__win.rows_from(grid, run.clone(), z_first)], \
                 &mut b[b__win.rows_from(grid, run.clone(), z_first)], p, a__win, b__win, p__win,"
            ),
            "{src}"
        );
        // `a` (out) may be streamed, `b` (inout) is read where it is written: never.
        assert!(
            flat.contains("let mut a = mode.output(&mut a[a__win.cols(grid)], a__win.nx());"),
            "{src}"
        );
        assert!(
            flat.contains("let mut b = mode.inout(&mut b[b__win.cols(grid)], b__win.nx());"),
            "{src}"
        );
        assert!(src.contains("let mut a = a.block(cols.clone());"), "{src}");
        assert!(src.contains("let mut b = b.block(cols);"), "{src}");
        assert!(src.contains(".zip("), "{src}");
        assert!(src.contains("b[i] = b[i] + p__0_1[i];"), "{src}");
    }

    #[test]
    fn full_expansion_parses_as_rust() {
        let s = stencil("#[at(iz, ix)] pub fn add_source(p: inout, value: real, iz: index, ix: index) { p[0,0] = value; }");
        let ts = emit_stencil(&s, "…", &[]);
        let file: syn::File = syn::parse2(ts).expect("valid Rust");
        assert!(file.items.len() >= 4);
        let text = pretty(emit_stencil(&s, "…", &[]));
        assert!(text.contains("pub fn add_source<"), "{text}");
        assert!(
            text.contains("E: ::ppstencil::__private::ExecutionSpace,"),
            "{text}"
        );
        assert!(text.contains("point: true"), "{text}");
    }
}
