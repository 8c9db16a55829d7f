impl FdStep8 {
    /// One row of `fd_step_8`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: the launch's fields fit the last-level cache) the row is one loop over plain slices. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
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
        kv2: &[T],
        pnew__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
        pold__win: &::ppstencil::__private::Window,
        kv2__win: &::ppstencil::__private::Window,
    ) {
        let n = grid.cols().len();
        let p__m4_0 = &p[p__win.tap(grid, row, [-4, 0, 0])..][..n];
        let p__m3_0 = &p[p__win.tap(grid, row, [-3, 0, 0])..][..n];
        let p__m2_0 = &p[p__win.tap(grid, row, [-2, 0, 0])..][..n];
        let p__m1_0 = &p[p__win.tap(grid, row, [-1, 0, 0])..][..n];
        let p__0_m4 = &p[p__win.tap(grid, row, [0, 0, -4])..][..n];
        let p__0_m3 = &p[p__win.tap(grid, row, [0, 0, -3])..][..n];
        let p__0_m2 = &p[p__win.tap(grid, row, [0, 0, -2])..][..n];
        let p__0_m1 = &p[p__win.tap(grid, row, [0, 0, -1])..][..n];
        let p__0_0 = &p[p__win.tap(grid, row, [0, 0, 0])..][..n];
        let p__0_1 = &p[p__win.tap(grid, row, [0, 0, 1])..][..n];
        let p__0_2 = &p[p__win.tap(grid, row, [0, 0, 2])..][..n];
        let p__0_3 = &p[p__win.tap(grid, row, [0, 0, 3])..][..n];
        let p__0_4 = &p[p__win.tap(grid, row, [0, 0, 4])..][..n];
        let p__1_0 = &p[p__win.tap(grid, row, [1, 0, 0])..][..n];
        let p__2_0 = &p[p__win.tap(grid, row, [2, 0, 0])..][..n];
        let p__3_0 = &p[p__win.tap(grid, row, [3, 0, 0])..][..n];
        let p__4_0 = &p[p__win.tap(grid, row, [4, 0, 0])..][..n];
        let pold__0_0 = &pold[pold__win.tap(grid, row, [0, 0, 0])..][..n];
        let kv2__0_0 = &kv2[kv2__win.tap(grid, row, [0, 0, 0])..][..n];
        if mode.plain() {
            let pnew = &mut pnew[pnew__win.cols(grid)][..n];
            if mode.fused() {
                for i in 0..n {
                    pnew[i] = kv2__0_0[i]
                        .mul_add(
                            T::lit(-5.694444444444445)
                                .mul_add(
                                    p__0_0[i],
                                    T::lit(1.6)
                                        .mul_add(
                                            p__0_m1[i] + p__0_1[i] + p__m1_0[i] + p__1_0[i],
                                            T::lit(-0.2)
                                                .mul_add(
                                                    p__0_m2[i] + p__0_2[i] + p__m2_0[i] + p__2_0[i],
                                                    T::lit(0.025396825396825397)
                                                        .mul_add(
                                                            p__0_m3[i] + p__0_3[i] + p__m3_0[i] + p__3_0[i],
                                                            T::lit(-0.0017857142857142857)
                                                                * (p__0_m4[i] + p__0_4[i] + p__m4_0[i] + p__4_0[i]),
                                                        ),
                                                ),
                                        ),
                                ),
                            T::lit(2.0).mul_add(p__0_0[i], -pold__0_0[i]),
                        );
                }
            } else {
                for i in 0..n {
                    pnew[i] = T::lit(2.0) * p__0_0[i] - pold__0_0[i]
                        + kv2__0_0[i]
                            * (T::lit(-0.0017857142857142857)
                                * (p__0_m4[i] + p__0_4[i] + p__m4_0[i] + p__4_0[i])
                                + T::lit(0.025396825396825397)
                                    * (p__0_m3[i] + p__0_3[i] + p__m3_0[i] + p__3_0[i])
                                - T::lit(0.2)
                                    * (p__0_m2[i] + p__0_2[i] + p__m2_0[i] + p__2_0[i])
                                + T::lit(1.6)
                                    * (p__0_m1[i] + p__0_1[i] + p__m1_0[i] + p__1_0[i])
                                - T::lit(5.694444444444445) * p__0_0[i]);
                }
            }
            return;
        }
        let mut pnew = mode.output(&mut pnew[pnew__win.cols(grid)], pnew__win.nx());
        for cols in pnew.blocks() {
            if mode.prefetch() {
                mode.fetch(p__4_0, cols.start, p__win.nx());
                mode.fetch(pold__0_0, cols.start, pold__win.nx());
                mode.fetch(kv2__0_0, cols.start, kv2__win.nx());
                pnew.prefetch(cols.start);
            }
            let p__m4_0 = &p__m4_0[cols.clone()];
            let p__m3_0 = &p__m3_0[cols.clone()];
            let p__m2_0 = &p__m2_0[cols.clone()];
            let p__m1_0 = &p__m1_0[cols.clone()];
            let p__0_m4 = &p__0_m4[cols.clone()];
            let p__0_m3 = &p__0_m3[cols.clone()];
            let p__0_m2 = &p__0_m2[cols.clone()];
            let p__0_m1 = &p__0_m1[cols.clone()];
            let p__0_0 = &p__0_0[cols.clone()];
            let p__0_1 = &p__0_1[cols.clone()];
            let p__0_2 = &p__0_2[cols.clone()];
            let p__0_3 = &p__0_3[cols.clone()];
            let p__0_4 = &p__0_4[cols.clone()];
            let p__1_0 = &p__1_0[cols.clone()];
            let p__2_0 = &p__2_0[cols.clone()];
            let p__3_0 = &p__3_0[cols.clone()];
            let p__4_0 = &p__4_0[cols.clone()];
            let pold__0_0 = &pold__0_0[cols.clone()];
            let kv2__0_0 = &kv2__0_0[cols.clone()];
            let mut pnew = pnew.block(cols);
            if mode.fused() {
                for i in 0..pnew.len() {
                    pnew[i] = kv2__0_0[i]
                        .mul_add(
                            T::lit(-5.694444444444445)
                                .mul_add(
                                    p__0_0[i],
                                    T::lit(1.6)
                                        .mul_add(
                                            p__0_m1[i] + p__0_1[i] + p__m1_0[i] + p__1_0[i],
                                            T::lit(-0.2)
                                                .mul_add(
                                                    p__0_m2[i] + p__0_2[i] + p__m2_0[i] + p__2_0[i],
                                                    T::lit(0.025396825396825397)
                                                        .mul_add(
                                                            p__0_m3[i] + p__0_3[i] + p__m3_0[i] + p__3_0[i],
                                                            T::lit(-0.0017857142857142857)
                                                                * (p__0_m4[i] + p__0_4[i] + p__m4_0[i] + p__4_0[i]),
                                                        ),
                                                ),
                                        ),
                                ),
                            T::lit(2.0).mul_add(p__0_0[i], -pold__0_0[i]),
                        );
                }
            } else {
                for i in 0..pnew.len() {
                    pnew[i] = T::lit(2.0) * p__0_0[i] - pold__0_0[i]
                        + kv2__0_0[i]
                            * (T::lit(-0.0017857142857142857)
                                * (p__0_m4[i] + p__0_4[i] + p__m4_0[i] + p__4_0[i])
                                + T::lit(0.025396825396825397)
                                    * (p__0_m3[i] + p__0_3[i] + p__m3_0[i] + p__3_0[i])
                                - T::lit(0.2)
                                    * (p__0_m2[i] + p__0_2[i] + p__m2_0[i] + p__2_0[i])
                                + T::lit(1.6)
                                    * (p__0_m1[i] + p__0_1[i] + p__m1_0[i] + p__1_0[i])
                                - T::lit(5.694444444444445) * p__0_0[i]);
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
        kv2: &[T],
        pnew__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
        pold__win: &::ppstencil::__private::Window,
        kv2__win: &::ppstencil::__private::Window,
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
                kv2,
                pnew__win,
                p__win,
                pold__win,
                kv2__win,
            );
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
                ::ppstencil::__private::Error::arity("fd_step_8", "output fields"),
            );
        };
        let [p, pold, kv2] = ins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_step_8", "input fields"),
            );
        };
        let &[] = reals else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_step_8", "real scalars"),
            );
        };
        let [pnew__win, p__win, pold__win, kv2__win] = wins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("fd_step_8", "field windows"),
            );
        };
        let chunk_rows = chunk_rows.max(1);
        let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, 4);
        pnew[pnew__win.planes(grid.lo[0]..grid.hi[0])]
            .par_chunks_mut(chunk_rows * pnew__win.plane())
            .enumerate()
            .for_each(|(task, pnew)| {
                let z_first = grid.lo[0] + task * chunk_rows;
                let z_end = (z_first + chunk_rows).min(grid.hi[0]);
                let runs = ::ppstencil::__private::row_runs::<
                    T,
                >(grid, z_first..z_end, 4, 4);
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
                                p,
                                pold,
                                kv2,
                                pnew__win,
                                p__win,
                                pold__win,
                                kv2__win,
                            );
                        }
                    },
                );
            });
        ::std::result::Result::Ok(())
    }
}
