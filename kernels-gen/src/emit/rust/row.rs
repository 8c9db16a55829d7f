//! The row kernel `row`: the generated function computing one grid row, its parts written
//! by one function each (the tap slices, the statements, the prefetches, the output rows
//! and blocks, the point loop, the doc text), put together by [`emit_row`].

use super::{
    expr, ident, in_names, is_scalar_tap, out_names, real_names, tap_name, win_name, win_names,
};
use crate::ir::{zyx, Access, ParamKind, Stencil, Stmt, Tap};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

/// The row kernel: an associated function computing columns `grid.cols()` of row `row` (the
/// row's number `z * ny + y`; `z` in 2D).
pub fn emit_row(s: &Stencil) -> TokenStream {
    let outs = out_names(s);
    let ins = in_names(s);
    let reals = real_names(s);
    let taps = input_taps(s);
    let tap_lets = tap_lets(s, &taps);
    let prefetch_reads = prefetch_reads(s, &taps);
    let out_rows = out_rows(s);
    let first = &outs[0];
    let (plain_loop, block_loop) = point_loops(s, first);
    let tap_blocks = tap_blocks(s, &taps);
    let out_blocks = out_blocks(&outs);
    let doc = row_doc(s);
    let out_wins = win_names(&outs);
    let in_wins = win_names(&ins);
    quote! {
        #[doc = #doc]
        #[inline(always)]
        #[allow(clippy::too_many_arguments, clippy::needless_range_loop, unused_variables, unused_mut)]
        fn row<T: ::ppstencil::__private::Real>(
            grid: &::ppstencil::__private::Region,
            row: ::ppstencil::__private::RowAt,
            mode: ::ppstencil::__private::RowMode<'_>,
            #(#outs: &mut [T],)*
            #(#ins: &[T],)*
            #(#out_wins: &::ppstencil::__private::Window,)*
            #(#in_wins: &::ppstencil::__private::Window,)*
            #(#reals: T,)*
        ) {
            let n = grid.cols().len();
            #(#tap_lets)*
            if mode.plain() {
                #(let #outs = &mut #outs[#out_wins.cols(grid)][..n];)*
                #plain_loop
                return;
            }
            #(#out_rows)*
            for cols in #first.blocks() {
                if mode.prefetch() {
                    #(#prefetch_reads)*
                    #(#outs.prefetch(cols.start);)*
                }
                #(#tap_blocks)*
                #(#out_blocks)*
                #block_loop
            }
        }
    }
}

/// The distinct taps of the input fields, in the stencil's order.
fn input_taps(s: &Stencil) -> Vec<Tap> {
    let inputs = s.inputs();
    s.taps()
        .into_iter()
        .filter(|t| inputs.contains(&t.field))
        .collect()
}

/// Row slices of every tap; a profile along x is the same slice on every row, one along
/// z or y a scalar per row.
fn tap_lets(s: &Stencil, taps: &[Tap]) -> Vec<TokenStream> {
    taps.iter()
        .map(|t| {
            let name = ident(&tap_name(s, t));
            let field = ident(&s.params[t.field].name);
            let start = match s.profile_axis(t.field) {
                Some(axis) => profile_start(s, t, axis),
                None => tap_start(s, t),
            };
            if is_scalar_tap(s, t.field) {
                quote!(let #name = #field[#start];)
            } else {
                quote!(let #name = &#field[#start..][..n];)
            }
        })
        .collect()
}

/// Where a tap's row starts in its field: `p__win.tap(grid, row, [dz, dy, dx])`, the field's
/// element at offset `[dz, dy, dx]` from the row's first computed point, through the
/// field's window (its own strides).
fn tap_start(s: &Stencil, tap: &Tap) -> TokenStream {
    let win = win_name(&s.params[tap.field].name);
    let [dz, dy, dx] = zyx(&tap.offset).map(offset_lit);
    quote!(#win.tap(grid, row, [#dz, #dy, #dx]))
}

/// An offset as an unsuffixed literal: `-2`, `0`, `1`.
fn offset_lit(d: i32) -> TokenStream {
    let lit = Literal::isize_unsuffixed(d.unsigned_abs() as isize);
    if d < 0 {
        quote!(-#lit)
    } else {
        quote!(#lit)
    }
}

/// A profile's tap: its element at the row's first computed point, offset along the
/// profile's axis (`a__win.profile(grid, row, 2, -1)`).
fn profile_start(s: &Stencil, tap: &Tap, axis: usize) -> TokenStream {
    let win = win_name(&s.params[tap.field].name);
    let d = offset_lit(zyx(&tap.offset)[axis]);
    let axis = Literal::usize_unsuffixed(axis);
    quote!(#win.profile(grid, row, #axis, #d))
}

/// The statements of one point, in the exact or the fused arithmetic.
fn body(s: &Stencil, fused: bool) -> Vec<TokenStream> {
    s.body
        .iter()
        .map(|st| match st {
            Stmt::Let { local, value } => {
                let name = ident(&s.locals[*local]);
                let v = expr(s, value, fused);
                quote!(let #name = #v;)
            }
            Stmt::Assign { field, value } => {
                let name = ident(&s.params[*field].name);
                let v = expr(s, value, fused);
                quote!(#name[i] = #v;)
            }
        })
        .collect()
}

/// The prefetch of each input field's leading tap (the last row this row reads: the one
/// not yet in cache); the outputs are prefetched by [`emit_row`] itself.
fn prefetch_reads(s: &Stencil, taps: &[Tap]) -> Vec<TokenStream> {
    let mut leading: Vec<&Tap> = Vec::new();
    for t in taps.iter().filter(|t| s.profile_axis(t.field).is_none()) {
        match leading.iter_mut().find(|l| l.field == t.field) {
            Some(l) if t.offset > l.offset => *l = t,
            Some(_) => {}
            None => leading.push(t),
        }
    }
    leading
        .iter()
        .map(|t| {
            let name = ident(&tap_name(s, t));
            let win = win_name(&s.params[t.field].name);
            quote!(mode.fetch(#name, cols.start, #win.nx());)
        })
        .collect()
}

/// Every output row becomes a `RowOutput` (same name): `out` fields may be streamed,
/// `inout` fields are read where they are written, so never.
fn out_rows(s: &Stencil) -> Vec<TokenStream> {
    s.outputs()
        .into_iter()
        .map(|p| {
            let name = ident(&s.params[p].name);
            let win = win_name(&s.params[p].name);
            if s.params[p].kind == ParamKind::Field(Access::InOut) {
                quote!(let mut #name = mode.inout(&mut #name[#win.cols(grid)], #win.nx());)
            } else {
                quote!(let mut #name = mode.output(&mut #name[#win.cols(grid)], #win.nx());)
            }
        })
        .collect()
}

/// The point loop over plain slices (`n` points) and over one block (`first.len()` points):
/// the exact arithmetic, and where it differs the fused one (`mode.fused()`, a constant of
/// each vectorised copy).
fn point_loops(s: &Stencil, first: &Ident) -> (TokenStream, TokenStream) {
    let (exact, fused) = (body(s, false), body(s, true));
    let same = exact
        .iter()
        .map(ToString::to_string)
        .eq(fused.iter().map(ToString::to_string));
    let point_loop = |len: TokenStream| {
        if same {
            quote! {
                for i in 0..#len {
                    #(#exact)*
                }
            }
        } else {
            quote! {
                if mode.fused() {
                    for i in 0..#len {
                        #(#fused)*
                    }
                } else {
                    for i in 0..#len {
                        #(#exact)*
                    }
                }
            }
        }
    };
    (point_loop(quote!(n)), point_loop(quote!(#first.len())))
}

/// Each row-slice tap narrowed to the block's columns (scalar taps stay as they are).
fn tap_blocks(s: &Stencil, taps: &[Tap]) -> Vec<TokenStream> {
    taps.iter()
        .filter(|t| !is_scalar_tap(s, t.field))
        .map(|t| {
            let name = ident(&tap_name(s, t));
            quote!(let #name = &#name[cols.clone()];)
        })
        .collect()
}

/// Each output's block of columns `cols` (the last output takes `cols` itself).
fn out_blocks(outs: &[Ident]) -> Vec<TokenStream> {
    outs.iter()
        .enumerate()
        .map(|(k, o)| {
            if k + 1 == outs.len() {
                quote!(let mut #o = #o.block(cols);)
            } else {
                quote!(let mut #o = #o.block(cols.clone());)
            }
        })
        .collect()
}

/// The doc text of the generated row kernel.
fn row_doc(s: &Stencil) -> String {
    format!(
        " One row of `{}`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's \
         slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the \
         grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: \
         the launch's fields fit the last-level cache) the row is one loop over plain slices. \
         With blocking (`mode`: fields larger than the \
         last-level cache), the row is computed a few cache lines at a time: before each \
         block the data a few KiB ahead is prefetched (the leading row of each input, and \
         the outputs; further along the row, or some rows further when the launch covers \
         a narrow strip of columns), and `out` fields may be written through a small \
         buffer with streaming stores that skip the cache. The arithmetic is the same either way.",
        s.name
    )
}
