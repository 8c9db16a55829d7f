impl FdTime {
    /// One row of `fd_time`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: the launch's fields fit the last-level cache) the row is one loop over plain slices. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
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
        p: &[T],
        pold: &[T],
        v: &[T],
        pxx: &[T],
        pzz: &[T],
        pnew__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
        pold__win: &::ppstencil::__private::Window,
        v__win: &::ppstencil::__private::Window,
        pxx__win: &::ppstencil::__private::Window,
        pzz__win: &::ppstencil::__private::Window,
        dtdh2: T,
    ) {
        let n = grid.cols().len();
        let p__0_0 = &p[p__win.tap(grid, row, [0, 0, 0])..][..n];
        let pold__0_0 = &pold[pold__win.tap(grid, row, [0, 0, 0])..][..n];
        let v__0_0 = &v[v__win.tap(grid, row, [0, 0, 0])..][..n];
        let pxx__0_0 = &pxx[pxx__win.tap(grid, row, [0, 0, 0])..][..n];
        let pzz__0_0 = &pzz[pzz__win.tap(grid, row, [0, 0, 0])..][..n];
        if mode.plain() {
            let pnew = &mut pnew[pnew__win.cols(grid)][..n];
            if mode.fused() {
                for i in 0..n {
                    pnew[i] = (dtdh2 * v__0_0[i] * v__0_0[i])
                        .mul_add(
                            pxx__0_0[i] + pzz__0_0[i],
                            T::lit(2.0).mul_add(p__0_0[i], -pold__0_0[i]),
                        );
                }
            } else {
                for i in 0..n {
                    pnew[i] = T::lit(2.0) * p__0_0[i] - pold__0_0[i]
                        + dtdh2 * v__0_0[i] * v__0_0[i] * (pxx__0_0[i] + pzz__0_0[i]);
                }
            }
            return;
        }
        let mut pnew = mode.output(&mut pnew[pnew__win.cols(grid)], pnew__win.nx());
        for cols in pnew.blocks() {
            if mode.prefetch() {
                mode.fetch(p__0_0, cols.start, p__win.nx());
                mode.fetch(pold__0_0, cols.start, pold__win.nx());
                mode.fetch(v__0_0, cols.start, v__win.nx());
                mode.fetch(pxx__0_0, cols.start, pxx__win.nx());
                mode.fetch(pzz__0_0, cols.start, pzz__win.nx());
                pnew.prefetch(cols.start);
            }
            let p__0_0 = &p__0_0[cols.clone()];
            let pold__0_0 = &pold__0_0[cols.clone()];
            let v__0_0 = &v__0_0[cols.clone()];
            let pxx__0_0 = &pxx__0_0[cols.clone()];
            let pzz__0_0 = &pzz__0_0[cols.clone()];
            let mut pnew = pnew.block(cols);
            if mode.fused() {
                for i in 0..pnew.len() {
                    pnew[i] = (dtdh2 * v__0_0[i] * v__0_0[i])
                        .mul_add(
                            pxx__0_0[i] + pzz__0_0[i],
                            T::lit(2.0).mul_add(p__0_0[i], -pold__0_0[i]),
                        );
                }
            } else {
                for i in 0..pnew.len() {
                    pnew[i] = T::lit(2.0) * p__0_0[i] - pold__0_0[i]
                        + dtdh2 * v__0_0[i] * v__0_0[i] * (pxx__0_0[i] + pzz__0_0[i]);
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
        p: &[T],
        pold: &[T],
        v: &[T],
        pxx: &[T],
        pzz: &[T],
        pnew__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
        pold__win: &::ppstencil::__private::Window,
        v__win: &::ppstencil::__private::Window,
        pxx__win: &::ppstencil::__private::Window,
        pzz__win: &::ppstencil::__private::Window,
        dtdh2: T,
    ) {
        let mut row = grid.row_at(first_row);
        for pnew in pnew.chunks_mut(pnew__win.nx()) {
            Self::row(
                grid,
                row,
                mode,
                pnew,
                p,
                pold,
                v,
                pxx,
                pzz,
                pnew__win,
                p__win,
                pold__win,
                v__win,
                pxx__win,
                pzz__win,
                dtdh2,
            );
            row = row.next(grid);
        }
    }
    fn serial_with<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        wins: &[::ppstencil::__private::Window],
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
        plan: ::ppstencil::__private::RowPlan,
    ) -> ::std::result::Result<(), ::ppstencil::__private::Error> {
        let [pnew] = outs else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_time", "output fields"),
            );
        };
        let [p, pold, v, pxx, pzz] = ins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_time", "input fields"),
            );
        };
        let &[dtdh2] = reals else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_time", "real scalars"),
            );
        };
        let [pnew__win, p__win, pold__win, v__win, pxx__win, pzz__win] = wins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_time", "field windows"),
            );
        };
        let runs = ::ppstencil::__private::row_runs::<
            T,
        >(grid, grid.lo[0]..grid.hi[0], 0, 6);
        ::ppstencil::__private::run_rows(
            plan,
            #[inline(always)]
            |mode| {
                for run in &runs {
                    Self::rows(
                        grid,
                        run.start,
                        mode,
                        &mut pnew[pnew__win.rows(grid, run.clone())],
                        p,
                        pold,
                        v,
                        pxx,
                        pzz,
                        pnew__win,
                        p__win,
                        pold__win,
                        v__win,
                        pxx__win,
                        pzz__win,
                        dtdh2,
                    );
                }
            },
        );
        ::std::result::Result::Ok(())
    }
}
