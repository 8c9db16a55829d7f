impl AddSource {
    /// One row of `add_source`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: the launch's fields fit the last-level cache) the row is one loop over plain slices. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
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
        p: &mut [T],
        p__win: &::ppstencil::__private::Window,
        value: T,
    ) {
        let n = grid.cols().len();
        if mode.plain() {
            let p = &mut p[p__win.cols(grid)][..n];
            for i in 0..n {
                p[i] = value;
            }
            return;
        }
        let mut p = mode.output(&mut p[p__win.cols(grid)], p__win.nx());
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
    /// Rows `first_row..` (as many as the outputs hold): the row kernel, row after row.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn rows<T: ::ppstencil::__private::Real>(
        grid: &::ppstencil::__private::Region,
        first_row: usize,
        mode: ::ppstencil::__private::RowMode<'_>,
        p: &mut [T],
        p__win: &::ppstencil::__private::Window,
        value: T,
    ) {
        let mut row = grid.row_at(first_row);
        for p in p.chunks_mut(p__win.nx()) {
            Self::row(grid, row, mode, p, p__win, value);
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
        let [p__win] = wins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("add_source", "field windows"),
            );
        };
        let chunk_rows = chunk_rows.max(1);
        let plan = ::ppstencil::__private::RowPlan::for_launch::<T>(grid, 1);
        p[p__win.planes(grid.lo[0]..grid.hi[0])]
            .par_chunks_mut(chunk_rows * p__win.plane())
            .enumerate()
            .for_each(|(task, p)| {
                let z_first = grid.lo[0] + task * chunk_rows;
                let z_end = (z_first + chunk_rows).min(grid.hi[0]);
                let runs = ::ppstencil::__private::row_runs::<
                    T,
                >(grid, z_first..z_end, 0, 1);
                ::ppstencil::__private::run_rows(
                    plan,
                    #[inline(always)]
                    |mode| {
                        for run in &runs {
                            Self::rows(
                                grid,
                                run.start,
                                mode,
                                &mut p[p__win.rows_from(grid, run.clone(), z_first)],
                                p__win,
                                value,
                            );
                        }
                    },
                );
            });
        ::std::result::Result::Ok(())
    }
}
