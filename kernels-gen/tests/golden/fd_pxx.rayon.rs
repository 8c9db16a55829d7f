impl FdPxx {
    /// One row of `fd_pxx`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: the launch's fields fit the last-level cache) the row is one loop over plain slices. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
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
        pxx: &mut [T],
        p: &[T],
        pxx__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
    ) {
        let n = grid.cols().len();
        let p__0_m2 = &p[p__win.tap(grid, row, [0, 0, -2])..][..n];
        let p__0_m1 = &p[p__win.tap(grid, row, [0, 0, -1])..][..n];
        let p__0_0 = &p[p__win.tap(grid, row, [0, 0, 0])..][..n];
        let p__0_1 = &p[p__win.tap(grid, row, [0, 0, 1])..][..n];
        let p__0_2 = &p[p__win.tap(grid, row, [0, 0, 2])..][..n];
        if mode.plain() {
            let pxx = &mut pxx[pxx__win.cols(grid)][..n];
            if mode.fused() {
                for i in 0..n {
                    pxx[i] = T::lit(-2.5)
                        .mul_add(
                            p__0_0[i],
                            T::lit(1.3333333333333333)
                                .mul_add(
                                    p__0_m1[i] + p__0_1[i],
                                    T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i]),
                                ),
                        );
                }
            } else {
                for i in 0..n {
                    pxx[i] = T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i])
                        + T::lit(1.3333333333333333) * (p__0_m1[i] + p__0_1[i])
                        - T::lit(2.5) * p__0_0[i];
                }
            }
            return;
        }
        let mut pxx = mode.output(&mut pxx[pxx__win.cols(grid)], pxx__win.nx());
        for cols in pxx.blocks() {
            if mode.prefetch() {
                mode.fetch(p__0_2, cols.start, p__win.nx());
                pxx.prefetch(cols.start);
            }
            let p__0_m2 = &p__0_m2[cols.clone()];
            let p__0_m1 = &p__0_m1[cols.clone()];
            let p__0_0 = &p__0_0[cols.clone()];
            let p__0_1 = &p__0_1[cols.clone()];
            let p__0_2 = &p__0_2[cols.clone()];
            let mut pxx = pxx.block(cols);
            if mode.fused() {
                for i in 0..pxx.len() {
                    pxx[i] = T::lit(-2.5)
                        .mul_add(
                            p__0_0[i],
                            T::lit(1.3333333333333333)
                                .mul_add(
                                    p__0_m1[i] + p__0_1[i],
                                    T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i]),
                                ),
                        );
                }
            } else {
                for i in 0..pxx.len() {
                    pxx[i] = T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i])
                        + T::lit(1.3333333333333333) * (p__0_m1[i] + p__0_1[i])
                        - T::lit(2.5) * p__0_0[i];
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
        pxx: &mut [T],
        p: &[T],
        pxx__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
    ) {
        let mut row = grid.row_at(first_row);
        for pxx in pxx.chunks_mut(pxx__win.nx()) {
            Self::row(grid, row, mode, pxx, p, pxx__win, p__win);
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
        let [pxx] = outs else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_pxx", "output fields"),
            );
        };
        let [p] = ins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_pxx", "input fields"),
            );
        };
        let &[] = reals else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_pxx", "real scalars"),
            );
        };
        let [pxx__win, p__win] = wins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_pxx", "field windows"),
            );
        };
        let chunk_rows = chunk_rows.max(1);
        let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, 2);
        pxx[pxx__win.planes(grid.lo[0]..grid.hi[0])]
            .par_chunks_mut(chunk_rows * pxx__win.plane())
            .enumerate()
            .for_each(|(task, pxx)| {
                let z_first = grid.lo[0] + task * chunk_rows;
                let z_end = (z_first + chunk_rows).min(grid.hi[0]);
                let runs = ::ppstencil::__private::row_runs::<
                    T,
                >(grid, z_first..z_end, 0, 2);
                ::ppstencil::__private::run_rows(
                    plan,
                    #[inline(always)]
                    |mode| {
                        for run in &runs {
                            Self::rows(
                                grid,
                                run.start,
                                mode,
                                &mut pxx[pxx__win.rows_from(grid, run.clone(), z_first)],
                                p,
                                pxx__win,
                                p__win,
                            );
                        }
                    },
                );
            });
        ::std::result::Result::Ok(())
    }
}
