impl FdPxx {
    /// One row of `fd_pxx`: columns `grid.x0..grid.x1` of row `iz`. Outputs are this row's slices; inputs are whole fields. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
    #[inline(always)]
    #[allow(
        clippy::too_many_arguments,
        clippy::needless_range_loop,
        unused_variables,
        unused_mut
    )]
    fn row<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        iz: usize,
        mode: ::ppstencil::__private::RowMode<'_>,
        pxx: &mut [T],
        p: &[T],
    ) {
        let nx = grid.nx;
        let n = grid.x1 - grid.x0;
        let base = iz * nx + grid.x0;
        let mut pxx = mode.output(&mut pxx[grid.x0..grid.x1]);
        let p__0_m2 = &p[base - 2..][..n];
        let p__0_m1 = &p[base - 1..][..n];
        let p__0_0 = &p[base..][..n];
        let p__0_1 = &p[base + 1..][..n];
        let p__0_2 = &p[base + 2..][..n];
        for cols in pxx.blocks() {
            if mode.prefetch() {
                ::ppstencil::__private::prefetch(p__0_2, cols.start);
                pxx.prefetch(cols.start);
            }
            let p__0_m2 = &p__0_m2[cols.clone()];
            let p__0_m1 = &p__0_m1[cols.clone()];
            let p__0_0 = &p__0_0[cols.clone()];
            let p__0_1 = &p__0_1[cols.clone()];
            let p__0_2 = &p__0_2[cols.clone()];
            let mut pxx = pxx.block(cols);
            for i in 0..pxx.len() {
                pxx[i] = T::lit(-0.08333333333333333) * p__0_m2[i]
                    + T::lit(1.3333333333333333) * p__0_m1[i] - T::lit(2.5) * p__0_0[i]
                    + T::lit(1.3333333333333333) * p__0_1[i]
                    - T::lit(0.08333333333333333) * p__0_2[i];
            }
        }
    }
    /// Rows `z_first..` (as many as the outputs hold): the row kernel, row after row.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn rows<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        z_first: usize,
        mode: ::ppstencil::__private::RowMode<'_>,
        pxx: &mut [T],
        p: &[T],
    ) {
        for (row, pxx) in pxx.chunks_mut(grid.nx).enumerate() {
            Self::row(grid, z_first + row, mode, pxx, p);
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
        let chunk_rows = chunk_rows.max(1);
        let task_len = chunk_rows * grid.nx;
        let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, 2);
        pxx[grid.z0 * grid.nx..grid.z1 * grid.nx]
            .par_chunks_mut(task_len)
            .enumerate()
            .for_each(|(task, pxx)| {
                let z_first = grid.z0 + task * chunk_rows;
                ::ppstencil::__private::run_rows(
                    plan,
                    |mode| { Self::rows(grid, z_first, mode, pxx, p) },
                );
            });
        ::std::result::Result::Ok(())
    }
}
