impl AddSource {
    /// One row of `add_source`: columns `grid.x0..grid.x1` of row `iz`. Outputs are this row's slices; inputs are whole fields. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
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
        p: &mut [T],
        value: T,
    ) {
        let n = grid.x1 - grid.x0;
        let mut p = mode.output(&mut p[grid.x0..grid.x1]);
        for cols in p.blocks() {
            if mode.prefetch() {
                p.prefetch(cols.start);
            }
            let mut p = p.block(cols);
            for i in 0..p.len() {
                p[i] = value;
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
        p: &mut [T],
        value: T,
    ) {
        for (row, p) in p.chunks_mut(grid.nx).enumerate() {
            Self::row(grid, z_first + row, mode, p, value);
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
        let [p] = outs else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("add_source", "output fields"),
            );
        };
        let [] = ins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("add_source", "input fields"),
            );
        };
        let &[value] = reals else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("add_source", "real scalars"),
            );
        };
        let chunk_rows = chunk_rows.max(1);
        let task_len = chunk_rows * grid.nx;
        let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, 1);
        p[grid.z0 * grid.nx..grid.z1 * grid.nx]
            .par_chunks_mut(task_len)
            .enumerate()
            .for_each(|(task, p)| {
                let z_first = grid.z0 + task * chunk_rows;
                ::ppstencil::__private::run_rows(
                    plan,
                    |mode| { Self::rows(grid, z_first, mode, p, value) },
                );
            });
        ::std::result::Result::Ok(())
    }
}
