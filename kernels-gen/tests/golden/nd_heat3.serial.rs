impl NdHeat3 {
    /// One row of `nd_heat3`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: the launch's fields fit the last-level cache) the row is one loop over plain slices. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
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
        unew: &mut [T],
        u: &[T],
        unew__win: &::ppstencil::__private::Window,
        u__win: &::ppstencil::__private::Window,
        r: T,
    ) {
        let n = grid.cols().len();
        let u__m1_0_m1 = &u[u__win.tap(grid, row, [-1, 0, -1])..][..n];
        let u__m1_0_0 = &u[u__win.tap(grid, row, [-1, 0, 0])..][..n];
        let u__m1_0_1 = &u[u__win.tap(grid, row, [-1, 0, 1])..][..n];
        let u__0_m1_0 = &u[u__win.tap(grid, row, [0, -1, 0])..][..n];
        let u__0_0_m1 = &u[u__win.tap(grid, row, [0, 0, -1])..][..n];
        let u__0_0_0 = &u[u__win.tap(grid, row, [0, 0, 0])..][..n];
        let u__0_0_1 = &u[u__win.tap(grid, row, [0, 0, 1])..][..n];
        let u__0_1_0 = &u[u__win.tap(grid, row, [0, 1, 0])..][..n];
        let u__1_0_m1 = &u[u__win.tap(grid, row, [1, 0, -1])..][..n];
        let u__1_0_0 = &u[u__win.tap(grid, row, [1, 0, 0])..][..n];
        let u__1_0_1 = &u[u__win.tap(grid, row, [1, 0, 1])..][..n];
        if mode.plain() {
            let unew = &mut unew[unew__win.cols(grid)][..n];
            if mode.fused() {
                for i in 0..n {
                    unew[i] = T::lit(0.25)
                        .mul_add(
                            u__m1_0_m1[i] - u__m1_0_1[i] - u__1_0_m1[i] + u__1_0_1[i],
                            r
                                .mul_add(
                                    T::lit(-6.0).mul_add(u__0_0_0[i], u__0_0_m1[i])
                                        + u__0_0_1[i] + u__0_m1_0[i] + u__0_1_0[i] + u__m1_0_0[i]
                                        + u__1_0_0[i],
                                    u__0_0_0[i],
                                ),
                        );
                }
            } else {
                for i in 0..n {
                    unew[i] = u__0_0_0[i]
                        + r
                            * (u__0_0_m1[i] - T::lit(6.0) * u__0_0_0[i] + u__0_0_1[i]
                                + u__0_m1_0[i] + u__0_1_0[i] + u__m1_0_0[i] + u__1_0_0[i])
                        + T::lit(0.25)
                            * (u__m1_0_m1[i] - u__m1_0_1[i] - u__1_0_m1[i]
                                + u__1_0_1[i]);
                }
            }
            return;
        }
        let mut unew = mode.output(&mut unew[unew__win.cols(grid)], unew__win.nx());
        for cols in unew.blocks() {
            if mode.prefetch() {
                mode.fetch(u__1_0_1, cols.start, u__win.nx());
                unew.prefetch(cols.start);
            }
            let u__m1_0_m1 = &u__m1_0_m1[cols.clone()];
            let u__m1_0_0 = &u__m1_0_0[cols.clone()];
            let u__m1_0_1 = &u__m1_0_1[cols.clone()];
            let u__0_m1_0 = &u__0_m1_0[cols.clone()];
            let u__0_0_m1 = &u__0_0_m1[cols.clone()];
            let u__0_0_0 = &u__0_0_0[cols.clone()];
            let u__0_0_1 = &u__0_0_1[cols.clone()];
            let u__0_1_0 = &u__0_1_0[cols.clone()];
            let u__1_0_m1 = &u__1_0_m1[cols.clone()];
            let u__1_0_0 = &u__1_0_0[cols.clone()];
            let u__1_0_1 = &u__1_0_1[cols.clone()];
            let mut unew = unew.block(cols);
            if mode.fused() {
                for i in 0..unew.len() {
                    unew[i] = T::lit(0.25)
                        .mul_add(
                            u__m1_0_m1[i] - u__m1_0_1[i] - u__1_0_m1[i] + u__1_0_1[i],
                            r
                                .mul_add(
                                    T::lit(-6.0).mul_add(u__0_0_0[i], u__0_0_m1[i])
                                        + u__0_0_1[i] + u__0_m1_0[i] + u__0_1_0[i] + u__m1_0_0[i]
                                        + u__1_0_0[i],
                                    u__0_0_0[i],
                                ),
                        );
                }
            } else {
                for i in 0..unew.len() {
                    unew[i] = u__0_0_0[i]
                        + r
                            * (u__0_0_m1[i] - T::lit(6.0) * u__0_0_0[i] + u__0_0_1[i]
                                + u__0_m1_0[i] + u__0_1_0[i] + u__m1_0_0[i] + u__1_0_0[i])
                        + T::lit(0.25)
                            * (u__m1_0_m1[i] - u__m1_0_1[i] - u__1_0_m1[i]
                                + u__1_0_1[i]);
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
        unew: &mut [T],
        u: &[T],
        unew__win: &::ppstencil::__private::Window,
        u__win: &::ppstencil::__private::Window,
        r: T,
    ) {
        let mut row = grid.row_at(first_row);
        for unew in unew.chunks_mut(unew__win.nx()) {
            Self::row(grid, row, mode, unew, u, unew__win, u__win, r);
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
        let [unew] = outs else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("nd_heat3", "output fields"),
            );
        };
        let [u] = ins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("nd_heat3", "input fields"),
            );
        };
        let &[r] = reals else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("nd_heat3", "real scalars"),
            );
        };
        let [unew__win, u__win] = wins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("nd_heat3", "field windows"),
            );
        };
        let runs = ::ppstencil::__private::row_runs::<
            T,
        >(grid, grid.lo[0]..grid.hi[0], 1, 2);
        ::ppstencil::__private::run_rows(
            plan,
            #[inline(always)]
            |mode| {
                for run in &runs {
                    Self::rows(
                        grid,
                        run.start,
                        mode,
                        &mut unew[unew__win.rows(grid, run.clone())],
                        u,
                        unew__win,
                        u__win,
                        r,
                    );
                }
            },
        );
        ::std::result::Result::Ok(())
    }
}
