impl PmlUpdateX {
    /// One row of `pml_update_x`: columns `grid.cols()` of row `row` (numbered `z * ny + y`). Outputs are this row's slices; inputs are whole fields; each field's window (`p__win`) says where it lies in the grid, so each tap is sliced in its field's own strides. Without blocking (`mode.plain()`: the launch's fields fit the last-level cache) the row is one loop over plain slices. With blocking (`mode`: fields larger than the last-level cache), the row is computed a few cache lines at a time: before each block the data a few KiB ahead is prefetched (the leading row of each input, and the outputs; further along the row, or some rows further when the launch covers a narrow strip of columns), and `out` fields may be written through a small buffer with streaming stores that skip the cache. The arithmetic is the same either way.
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
        zeta: &mut [T],
        p: &[T],
        psi: &[T],
        kv2: &[T],
        a: &[T],
        b: &[T],
        pnew__win: &::ppstencil::__private::Window,
        zeta__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
        psi__win: &::ppstencil::__private::Window,
        kv2__win: &::ppstencil::__private::Window,
        a__win: &::ppstencil::__private::Window,
        b__win: &::ppstencil::__private::Window,
    ) {
        let n = grid.cols().len();
        let p__0_m2 = &p[p__win.tap(grid, row, [0, 0, -2])..][..n];
        let p__0_m1 = &p[p__win.tap(grid, row, [0, 0, -1])..][..n];
        let p__0_0 = &p[p__win.tap(grid, row, [0, 0, 0])..][..n];
        let p__0_1 = &p[p__win.tap(grid, row, [0, 0, 1])..][..n];
        let p__0_2 = &p[p__win.tap(grid, row, [0, 0, 2])..][..n];
        let psi__0_m2 = &psi[psi__win.tap(grid, row, [0, 0, -2])..][..n];
        let psi__0_m1 = &psi[psi__win.tap(grid, row, [0, 0, -1])..][..n];
        let psi__0_1 = &psi[psi__win.tap(grid, row, [0, 0, 1])..][..n];
        let psi__0_2 = &psi[psi__win.tap(grid, row, [0, 0, 2])..][..n];
        let kv2__0_0 = &kv2[kv2__win.tap(grid, row, [0, 0, 0])..][..n];
        let a__0_0 = &a[a__win.profile(grid, row, 2, 0)..][..n];
        let b__0_0 = &b[b__win.profile(grid, row, 2, 0)..][..n];
        if mode.plain() {
            let pnew = &mut pnew[pnew__win.cols(grid)][..n];
            let zeta = &mut zeta[zeta__win.cols(grid)][..n];
            if mode.fused() {
                for i in 0..n {
                    let dpsi = T::lit(-0.08333333333333333)
                        .mul_add(
                            psi__0_2[i] - psi__0_m2[i],
                            T::lit(0.6666666666666666) * (psi__0_1[i] - psi__0_m1[i]),
                        );
                    let z = a__0_0[i]
                        .mul_add(
                            T::lit(-2.5)
                                .mul_add(
                                    p__0_0[i],
                                    T::lit(1.3333333333333333)
                                        .mul_add(
                                            p__0_m1[i] + p__0_1[i],
                                            T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i]),
                                        ),
                                ) + dpsi,
                            b__0_0[i] * zeta[i],
                        );
                    zeta[i] = z;
                    pnew[i] = kv2__0_0[i].mul_add(dpsi + z, pnew[i]);
                }
            } else {
                for i in 0..n {
                    let dpsi = T::lit(0.6666666666666666) * (psi__0_1[i] - psi__0_m1[i])
                        - T::lit(0.08333333333333333) * (psi__0_2[i] - psi__0_m2[i]);
                    let z = b__0_0[i] * zeta[i]
                        + a__0_0[i]
                            * (T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i])
                                + T::lit(1.3333333333333333) * (p__0_m1[i] + p__0_1[i])
                                - T::lit(2.5) * p__0_0[i] + dpsi);
                    zeta[i] = z;
                    pnew[i] = pnew[i] + kv2__0_0[i] * (dpsi + z);
                }
            }
            return;
        }
        let mut pnew = mode.inout(&mut pnew[pnew__win.cols(grid)], pnew__win.nx());
        let mut zeta = mode.inout(&mut zeta[zeta__win.cols(grid)], zeta__win.nx());
        for cols in pnew.blocks() {
            if mode.prefetch() {
                mode.fetch(p__0_2, cols.start, p__win.nx());
                mode.fetch(psi__0_2, cols.start, psi__win.nx());
                mode.fetch(kv2__0_0, cols.start, kv2__win.nx());
                pnew.prefetch(cols.start);
                zeta.prefetch(cols.start);
            }
            let p__0_m2 = &p__0_m2[cols.clone()];
            let p__0_m1 = &p__0_m1[cols.clone()];
            let p__0_0 = &p__0_0[cols.clone()];
            let p__0_1 = &p__0_1[cols.clone()];
            let p__0_2 = &p__0_2[cols.clone()];
            let psi__0_m2 = &psi__0_m2[cols.clone()];
            let psi__0_m1 = &psi__0_m1[cols.clone()];
            let psi__0_1 = &psi__0_1[cols.clone()];
            let psi__0_2 = &psi__0_2[cols.clone()];
            let kv2__0_0 = &kv2__0_0[cols.clone()];
            let a__0_0 = &a__0_0[cols.clone()];
            let b__0_0 = &b__0_0[cols.clone()];
            let mut pnew = pnew.block(cols.clone());
            let mut zeta = zeta.block(cols);
            if mode.fused() {
                for i in 0..pnew.len() {
                    let dpsi = T::lit(-0.08333333333333333)
                        .mul_add(
                            psi__0_2[i] - psi__0_m2[i],
                            T::lit(0.6666666666666666) * (psi__0_1[i] - psi__0_m1[i]),
                        );
                    let z = a__0_0[i]
                        .mul_add(
                            T::lit(-2.5)
                                .mul_add(
                                    p__0_0[i],
                                    T::lit(1.3333333333333333)
                                        .mul_add(
                                            p__0_m1[i] + p__0_1[i],
                                            T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i]),
                                        ),
                                ) + dpsi,
                            b__0_0[i] * zeta[i],
                        );
                    zeta[i] = z;
                    pnew[i] = kv2__0_0[i].mul_add(dpsi + z, pnew[i]);
                }
            } else {
                for i in 0..pnew.len() {
                    let dpsi = T::lit(0.6666666666666666) * (psi__0_1[i] - psi__0_m1[i])
                        - T::lit(0.08333333333333333) * (psi__0_2[i] - psi__0_m2[i]);
                    let z = b__0_0[i] * zeta[i]
                        + a__0_0[i]
                            * (T::lit(-0.08333333333333333) * (p__0_m2[i] + p__0_2[i])
                                + T::lit(1.3333333333333333) * (p__0_m1[i] + p__0_1[i])
                                - T::lit(2.5) * p__0_0[i] + dpsi);
                    zeta[i] = z;
                    pnew[i] = pnew[i] + kv2__0_0[i] * (dpsi + z);
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
        zeta: &mut [T],
        p: &[T],
        psi: &[T],
        kv2: &[T],
        a: &[T],
        b: &[T],
        pnew__win: &::ppstencil::__private::Window,
        zeta__win: &::ppstencil::__private::Window,
        p__win: &::ppstencil::__private::Window,
        psi__win: &::ppstencil::__private::Window,
        kv2__win: &::ppstencil::__private::Window,
        a__win: &::ppstencil::__private::Window,
        b__win: &::ppstencil::__private::Window,
    ) {
        let mut row = grid.row_at(first_row);
        for (pnew, zeta) in pnew
            .chunks_mut(pnew__win.nx())
            .zip(zeta.chunks_mut(zeta__win.nx()))
        {
            Self::row(
                grid,
                row,
                mode,
                pnew,
                zeta,
                p,
                psi,
                kv2,
                a,
                b,
                pnew__win,
                zeta__win,
                p__win,
                psi__win,
                kv2__win,
                a__win,
                b__win,
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
        let [pnew, zeta] = outs else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("pml_update_x", "output fields"),
            );
        };
        let [p, psi, kv2, a, b] = ins else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("pml_update_x", "input fields"),
            );
        };
        let &[] = reals else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("pml_update_x", "real scalars"),
            );
        };
        let [pnew__win, zeta__win, p__win, psi__win, kv2__win, a__win, b__win] = wins
        else {
            return ::std::result::Result::Err(
                ::ppstencil::__private::Error::arity("pml_update_x", "field windows"),
            );
        };
        let runs = ::ppstencil::__private::row_runs::<
            T,
        >(grid, grid.lo[0]..grid.hi[0], 0, 7);
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
                        &mut zeta[zeta__win.rows(grid, run.clone())],
                        p,
                        psi,
                        kv2,
                        a,
                        b,
                        pnew__win,
                        zeta__win,
                        p__win,
                        psi__win,
                        kv2__win,
                        a__win,
                        b__win,
                    );
                }
            },
        );
        ::std::result::Result::Ok(())
    }
}
