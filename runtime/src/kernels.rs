//! The acoustic solver's kernels, written once with `stencil!`.
//!
//! These are the paper's four routines with its reference semantics (float32 by default,
//! row-major, 4th order in space):
//!
//! | kernel | domain | update |
//! |---|---|---|
//! | `add_source` | the source point | `p = value` (sets, as the paper does) |
//! | `fd_pxx` | rows/cols `2..n-2` | `pxx = c2 p[x-2] + c1 p[x-1] + c0 p + c1 p[x+1] + c2 p[x+2]` |
//! | `fd_pzz` | rows/cols `2..n-2` | the same along z |
//! | `fd_time` | every point | `pnew = 2p - pold + (dt/dh)² v² (pxx + pzz)` |
//!
//! with `c0 = -5/2`, `c1 = 4/3`, `c2 = -1/12`. `fd_step_4` fuses the last three into one
//! pass (with `kv2 = (dt/dh)² v²` from `fd_kv2`, computed once). Each call is a generic function of the
//! execution space; see [`fd_pxx`] for an example.
//!
//! Beyond the paper: the fused step exists for every even space order from 2 to 16
//! (`fd_step_2`, `fd_step_4` (4), `fd_step_6`, ..., `fd_step_16`, written with the DSL's
//! `laplacian(p, N)`, whose Fornberg weights kernels-gen computes; dispatch with
//! [`fd_step_of_order`]); `inject_source` adds to the source point instead of setting it;
//! `fd_absorb` damps the absorbing layer. The border that stays zero is the order's radius
//! `N / 2`.

use crate::{stencil, Error, ExecutionSpace, Param, Real, Result, ScalarField};

stencil! {
    /// Sets the pressure at the source point to `value` (the paper's `add_source`).
    #[at(iz, ix)]
    pub fn add_source(p: out, value: real, iz: index, ix: index) {
        p[0, 0] = value;
    }

    /// Fourth-order second derivative of `p` along x (columns), unscaled by `dh²`.
    ///
    /// ```
    /// use ppstencil::{kernels::fd_pxx, HostField, ScalarField, Serial};
    /// // The paper's unit test: a 5 x 6 field with ones at flat indices 2, 14, 17, 18, 21.
    /// let mut p: HostField = ScalarField::new(5, 6)?;
    /// for k in [2, 14, 17, 18, 21] { p.as_mut_slice()[k] = 1.0; }
    /// let mut pxx: HostField = ScalarField::new(5, 6)?;
    /// fd_pxx(&Serial, &mut pxx, &p)?;
    /// assert_eq!(pxx.as_slice()[14], -2.5);
    /// assert_eq!(pxx.as_slice()[15], 4.0 / 3.0 - 1.0 / 12.0);
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn fd_pxx(pxx: out, p: in) {
        pxx[0, 0] = -1.0 / 12.0 * p[0, -2] + 4.0 / 3.0 * p[0, -1] - 5.0 / 2.0 * p[0, 0]
            + 4.0 / 3.0 * p[0, 1] - 1.0 / 12.0 * p[0, 2];
    }

    /// Fourth-order second derivative of `p` along z (rows), unscaled by `dh²`.
    pub fn fd_pzz(pzz: out, p: in) {
        pzz[0, 0] = -1.0 / 12.0 * p[-2, 0] + 4.0 / 3.0 * p[-1, 0] - 5.0 / 2.0 * p[0, 0]
            + 4.0 / 3.0 * p[1, 0] - 1.0 / 12.0 * p[2, 0];
    }

    /// Leapfrog time update: `pnew = 2 p - pold + dtdh2 v² (pxx + pzz)`, `dtdh2 = (dt/dh)²`.
    pub fn fd_time(pnew: out, p: in, pold: in, v: in, pxx: in, pzz: in, dtdh2: real) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + dtdh2 * v[0, 0] * v[0, 0] * (pxx[0, 0] + pzz[0, 0]);
    }

    /// `kv2 = dtdh2 v²`, computed once per model for [`fd_step_4`] (same operation order as
    /// [`fd_time`], so the fused and split steps round identically).
    pub fn fd_kv2(kv2: out, v: in, dtdh2: real) {
        kv2[0, 0] = dtdh2 * v[0, 0] * v[0, 0];
    }

    /// The whole time step fused into one pass (16 compulsory bytes per point instead of the
    /// split kernels' 40): `pnew = 2 p - pold + kv2 (d²p/dx² + d²p/dz²)`, with `kv2` from
    /// [`fd_kv2`]. 4th order in space: `d2x(p, 4)` and `d2z(p, 4)` expand to exactly the
    /// taps and arithmetic order of `fd_pxx` and `fd_pzz`, and the update is `fd_time`'s, so
    /// the fused and split steps are bit-identical.
    pub fn fd_step_4(pnew: out, p: in, pold: in, kv2: in) {
        let pxx = d2x(p, 4);
        let pzz = d2z(p, 4);
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * (pxx + pzz);
    }

    /// The fused step of [`fd_step_4`] at space order 2 (radius 1).
    pub fn fd_step_2(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * laplacian(p, 2);
    }

    /// The fused step of [`fd_step_4`] at space order 6 (radius 3).
    pub fn fd_step_6(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * laplacian(p, 6);
    }

    /// The fused step of [`fd_step_4`] at space order 8 (radius 4).
    pub fn fd_step_8(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * laplacian(p, 8);
    }

    /// The fused step of [`fd_step_4`] at space order 10 (radius 5).
    pub fn fd_step_10(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * laplacian(p, 10);
    }

    /// The fused step of [`fd_step_4`] at space order 12 (radius 6).
    pub fn fd_step_12(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * laplacian(p, 12);
    }

    /// The fused step of [`fd_step_4`] at space order 14 (radius 7).
    pub fn fd_step_14(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * laplacian(p, 14);
    }

    /// The fused step of [`fd_step_4`] at space order 16 (radius 8).
    pub fn fd_step_16(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * laplacian(p, 16);
    }

    /// Adds `value` to the pressure at the source point (the additive source of
    /// `--source-mode add`; the paper's [`add_source`] sets it instead).
    #[at(iz, ix)]
    pub fn inject_source(p: inout, value: real, iz: index, ix: index) {
        p[0, 0] = p[0, 0] + value;
    }

    /// Damping of the absorbing layer, applied to the new field after the undamped step:
    /// `pnew = (pnew + eta pold) / (1 + eta)`, with `eta = η dt / 2` (0 outside the layer,
    /// where it leaves `pnew` unchanged). Together with the step this is the leapfrog
    /// discretisation of `p_tt + η p_t = v² ∇²p` with a centred `p_t`.
    pub fn fd_absorb(pnew: inout, pold: in, eta: in) {
        pnew[0, 0] = (pnew[0, 0] + eta[0, 0] * pold[0, 0]) / (1.0 + eta[0, 0]);
    }
}

/// Defines, from one list of `order => kernel`, the fused step's orders ([`SPACE_ORDERS`])
/// and its dispatch by order ([`fd_step_of_order`]).
macro_rules! fused_steps {
    ($($order:literal => $kernel:ident / $marker:ident),* $(,)?) => {
        /// The space orders with a fused step kernel: every even order from
        /// [`MIN_SPACE_ORDER`](crate::solver::MIN_SPACE_ORDER) to
        /// [`MAX_SPACE_ORDER`](crate::solver::MAX_SPACE_ORDER).
        pub const SPACE_ORDERS: [usize; [$($order),*].len()] = [$($order),*];

        /// Runs the fused step of space order `order` (`fd_step_<order>`). An order without
        /// a kernel is an error naming the valid orders.
        pub fn fd_step_of_order<E: ExecutionSpace, T: Real>(
            space: &E,
            order: usize,
            pnew: &mut ScalarField<E::Memory, T>,
            p: &ScalarField<E::Memory, T>,
            pold: &ScalarField<E::Memory, T>,
            kv2: &ScalarField<E::Memory, T>,
        ) -> Result<()> {
            match order {
                $($order => $kernel(space, pnew, p, pold, kv2),)*
                _ => Err(no_fused_kernel(order)),
            }
        }

        /// [`fd_step_of_order`] on the box `region` only (rows, columns), inside the
        /// domain: see [`launch_in_region`](crate::launch::launch_in_region).
        pub fn fd_step_of_order_in<E: ExecutionSpace, T: Real>(
            space: &E,
            order: usize,
            region: [std::ops::Range<usize>; 2],
            pnew: &mut ScalarField<E::Memory, T>,
            p: &ScalarField<E::Memory, T>,
            pold: &ScalarField<E::Memory, T>,
            kv2: &ScalarField<E::Memory, T>,
        ) -> Result<()> {
            match order {
                $($order => crate::launch::launch_in_region::<$marker, E, T, 2>(
                    space, region, &mut [pnew], &[p, pold, kv2], &[]),)*
                _ => Err(no_fused_kernel(order)),
            }
        }
    };
}

fused_steps! {
    2 => fd_step_2 / FdStep2,
    4 => fd_step_4 / FdStep4,
    6 => fd_step_6 / FdStep6,
    8 => fd_step_8 / FdStep8,
    10 => fd_step_10 / FdStep10,
    12 => fd_step_12 / FdStep12,
    14 => fd_step_14 / FdStep14,
    16 => fd_step_16 / FdStep16,
}

/// The error for a valid space order without a fused kernel (or the order's own error).
fn no_fused_kernel(order: usize) -> Error {
    match crate::solver::check_space_order(order) {
        Err(e) => e,
        Ok(()) => Error::invalid(
            Param::SpaceOrder,
            order,
            "is supported but has no fused kernel: add its fd_step_N to kernels.rs",
        ),
    }
}

/// Metadata of every acoustic kernel, for tools (`ppwave gen`, benchmarks).
pub const ALL: &[crate::launch::StencilInfo] = {
    use crate::launch::Stencil;
    &[
        AddSource::INFO,
        FdPxx::INFO,
        FdPzz::INFO,
        FdTime::INFO,
        FdKv2::INFO,
        FdStep4::INFO,
        InjectSource::INFO,
        FdAbsorb::INFO,
        FdStep2::INFO,
        FdStep6::INFO,
        FdStep8::INFO,
        FdStep10::INFO,
        FdStep12::INFO,
        FdStep14::INFO,
        FdStep16::INFO,
    ]
};

#[cfg(test)]
mod tests {
    use crate::solver::{check_space_order, MAX_SPACE_ORDER, MIN_SPACE_ORDER};

    /// Every order kernels-gen supports has a fused kernel, and no other.
    #[test]
    fn every_supported_order_has_a_fused_kernel() {
        let supported: Vec<usize> = (0..=MAX_SPACE_ORDER + 2)
            .filter(|&o| check_space_order(o).is_ok())
            .collect();
        assert_eq!(super::SPACE_ORDERS.to_vec(), supported);
        assert_eq!((MIN_SPACE_ORDER, MAX_SPACE_ORDER), (2, 16));
    }
}
