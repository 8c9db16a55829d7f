impl FdTime {
    /// One row of `fd_time`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
    #[inline(always)]
    #[allow(
        clippy::too_many_arguments,
        clippy::needless_range_loop,
        unused_variables,
        unused_mut
    )]
    fn row<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        row: usize,
        mode: ::ppstencil::__private::RowMode<'_>,
        pnew: &mut [T],
        p: &[T],
        pold: &[T],
        v: &[T],
        pxx: &[T],
        pzz: &[T],
        dtdh2: T,
    ) {
        let nx = grid.nx();
        let n = grid.cols().len();
        let base = row * nx + grid.cols().start;
        let mut pnew = mode.output(&mut pnew[grid.cols()]);
        let p__0_0 = &p[base..][..n];
        let pold__0_0 = &pold[base..][..n];
        let v__0_0 = &v[base..][..n];
        let pxx__0_0 = &pxx[base..][..n];
        let pzz__0_0 = &pzz[base..][..n];
        for cols in pnew.blocks() {
            if mode.prefetch() {
                mode.fetch(p__0_0, cols.start);
                mode.fetch(pold__0_0, cols.start);
                mode.fetch(v__0_0, cols.start);
                mode.fetch(pxx__0_0, cols.start);
                mode.fetch(pzz__0_0, cols.start);
                pnew.prefetch(cols.start);
            }
            let p__0_0 = &p__0_0[cols.clone()];
            let pold__0_0 = &pold__0_0[cols.clone()];
            let v__0_0 = &v__0_0[cols.clone()];
            let pxx__0_0 = &pxx__0_0[cols.clone()];
            let pzz__0_0 = &pzz__0_0[cols.clone()];
            let mut pnew = pnew.block(cols);
            for i in 0..pnew.len() {
                pnew[i] = T::lit(2.0) * p__0_0[i] - pold__0_0[i]
                    + dtdh2 * v__0_0[i] * v__0_0[i] * (pxx__0_0[i] + pzz__0_0[i]);
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
        dtdh2: T,
    ) {
        for (nth, pnew) in pnew.chunks_mut(grid.nx()).enumerate() {
            Self::row(grid, first_row + nth, mode, pnew, p, pold, v, pxx, pzz, dtdh2);
        }
    }
    fn rayon<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
        chunk_rows: usize,
    ) -> ::std::result::Result<(), ::ppstencil::__private::Error> {
        use ::ppstencil::__private::rayon::prelude::*;
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
        let chunk_rows = chunk_rows.max(1);
        let task_len = chunk_rows * grid.plane();
        let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, 6);
        pnew[grid.lo[0] * grid.plane()..grid.hi[0] * grid.plane()]
            .par_chunks_mut(task_len)
            .enumerate()
            .for_each(|(task, pnew)| {
                let z_first = grid.lo[0] + task * chunk_rows;
                let z_end = (z_first + chunk_rows).min(grid.hi[0]);
                let base = z_first * grid.shape[1];
                let runs = ::ppstencil::__private::row_runs::<
                    T,
                >(grid, z_first..z_end, 0, 6);
                ::ppstencil::__private::run_rows(
                    plan,
                    #[inline(always)]
                    |mode| {
                        for run in &runs {
                            let span = (run.start - base)
                                * grid.nx()..(run.end - base) * grid.nx();
                            Self::rows(
                                grid,
                                run.start,
                                mode,
                                &mut pnew[span.clone()],
                                p,
                                pold,
                                v,
                                pxx,
                                pzz,
                                dtdh2,
                            );
                        }
                    },
                );
            });
        ::std::result::Result::Ok(())
    }
}
