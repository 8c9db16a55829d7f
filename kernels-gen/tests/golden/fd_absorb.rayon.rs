impl FdAbsorb {
    /// One row of `fd_absorb`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: the launch's fields fit the last-level cache) the row is one loop over plain slices. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
    #[inline(always)]
    #[allow(
        clippy::too_many_arguments,
        clippy::needless_range_loop,
        unused_variables,
        unused_mut
    )]
    fn row<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        row: ::ppstencil::__private::RowAt,
        mode: ::ppstencil::__private::RowMode<'_>,
        pnew: &mut [T],
        pold: &[T],
        eta: &[T],
        pnew__win: &::ppstencil::__private::Window,
        pold__win: &::ppstencil::__private::Window,
        eta__win: &::ppstencil::__private::Window,
    ) {
        let n = grid.cols().len();
        let pold__0_0 = &pold[pold__win.tap(grid, row, [0, 0, 0])..][..n];
        let eta__0_0 = &eta[eta__win.tap(grid, row, [0, 0, 0])..][..n];
        if mode.plain() {
            let pnew = &mut pnew[pnew__win.cols(grid)][..n];
            if mode.fused() {
                for i in 0..n {
                    pnew[i] = (eta__0_0[i].mul_add(pold__0_0[i], pnew[i]))
                        / (T::lit(1.0) + eta__0_0[i]);
                }
            } else {
                for i in 0..n {
                    pnew[i] = (pnew[i] + eta__0_0[i] * pold__0_0[i])
                        / (T::lit(1.0) + eta__0_0[i]);
                }
            }
            return;
        }
        let mut pnew = mode.inout(&mut pnew[pnew__win.cols(grid)], pnew__win.nx());
        for cols in pnew.blocks() {
            if mode.prefetch() {
                mode.fetch(pold__0_0, cols.start, pold__win.nx());
                mode.fetch(eta__0_0, cols.start, eta__win.nx());
                pnew.prefetch(cols.start);
            }
            let pold__0_0 = &pold__0_0[cols.clone()];
            let eta__0_0 = &eta__0_0[cols.clone()];
            let mut pnew = pnew.block(cols);
            if mode.fused() {
                for i in 0..pnew.len() {
                    pnew[i] = (eta__0_0[i].mul_add(pold__0_0[i], pnew[i]))
                        / (T::lit(1.0) + eta__0_0[i]);
                }
            } else {
                for i in 0..pnew.len() {
                    pnew[i] = (pnew[i] + eta__0_0[i] * pold__0_0[i])
                        / (T::lit(1.0) + eta__0_0[i]);
                }
            }
        }
    }
    /// Rows `first_row..` (as many as the outputs hold): the row kernel, row after row.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn rows<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        first_row: usize,
        mode: ::ppstencil::__private::RowMode<'_>,
        pnew: &mut [T],
        pold: &[T],
        eta: &[T],
        pnew__win: &::ppstencil::__private::Window,
        pold__win: &::ppstencil::__private::Window,
        eta__win: &::ppstencil::__private::Window,
    ) {
        let mut row = grid.row_at(first_row);
        for pnew in pnew.chunks_mut(pnew__win.nx()) {
            Self::row(grid, row, mode, pnew, pold, eta, pnew__win, pold__win, eta__win);
            row = row.next(grid);
        }
    }
    fn rayon<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        wins: &[::ppstencil::__private::Window],
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
        chunk_rows: usize,
    ) -> ::std::result::Result<(), ::ppstencil::__private::Error> {
        use ::ppstencil::__private::rayon::prelude::*;
        let [pnew] = outs else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_absorb", "output fields"),
            );
        };
        let [pold, eta] = ins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_absorb", "input fields"),
            );
        };
        let &[] = reals else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_absorb", "real scalars"),
            );
        };
        let [pnew__win, pold__win, eta__win] = wins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_absorb", "field windows"),
            );
        };
        let chunk_rows = chunk_rows.max(1);
        let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, 3);
        pnew[pnew__win.planes(grid.lo[0]..grid.hi[0])]
            .par_chunks_mut(chunk_rows * pnew__win.plane())
            .enumerate()
            .for_each(|(task, pnew)| {
                let z_first = grid.lo[0] + task * chunk_rows;
                let z_end = (z_first + chunk_rows).min(grid.hi[0]);
                let runs = ::ppstencil::__private::row_runs::<
                    T,
                >(grid, z_first..z_end, 0, 3);
                ::ppstencil::__private::run_rows(
                    plan,
                    #[inline(always)]
                    |mode| {
                        for run in &runs {
                            Self::rows(
                                grid,
                                run.start,
                                mode,
                                &mut pnew[pnew__win.rows_from(grid, run.clone(), z_first)],
                                pold,
                                eta,
                                pnew__win,
                                pold__win,
                                eta__win,
                            );
                        }
                    },
                );
            });
        ::std::result::Result::Ok(())
    }
}
