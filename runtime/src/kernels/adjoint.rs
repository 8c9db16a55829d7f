//! The kernels of the discrete adjoint of the acoustic time step, written once with
//! `stencil!` so that every backend runs them (used by [`solver::adjoint`](crate::solver::adjoint)).
//!
//! The forward fused step is `pnew = 2 p - pold + K L p` on the interior, with `K = diag(kv2)`
//! and `L` the order-`N` Laplacian, whose matrix restricted to the interior is symmetric. Its
//! transpose is therefore `qnew = 2 q - qold + L (K q)`: [`fd_adjoint_kq`] forms `r = kv2 q`
//! at every point, then `fd_adjoint_step_<N>` (`fd_adjoint_step_3d_<N>` in 3D) applies
//! `laplacian(r, N)` on the interior (dispatch by order with [`fd_adjoint_step_nd`]). The
//! source injection and the sponge's `fd_absorb` are their own adjoints (see the module docs
//! of `solver::adjoint` for the derivation), so they are reused as they are.
//! [`fd_adjoint_image`] accumulates the gradient's imaging condition `g += kv2 q a`.

use crate::launch::{launch, Stencil, StencilInfo};
use crate::{stencil, Error, ExecutionSpace, Param, Real, Result, ScalarField};

stencil! {
    /// `r = kv2 q` at every point: the diagonal `K` applied before the adjoint step's
    /// Laplacian.
    pub fn fd_adjoint_kq(r: out, q: in, kv2: in) {
        r[0, 0] = kv2[0, 0] * q[0, 0];
    }

    /// [`fd_adjoint_kq`] in 3D.
    pub fn fd_adjoint_kq_3d(r: out, q: in, kv2: in) {
        r[0, 0, 0] = kv2[0, 0, 0] * q[0, 0, 0];
    }

    /// The imaging condition of the gradient: `g = g + kv2 q a` at every point (`q` the
    /// adjoint field, `a` the forward field's Laplacian).
    pub fn fd_adjoint_image(g: inout, q: in, a: in, kv2: in) {
        g[0, 0] = g[0, 0] + kv2[0, 0] * q[0, 0] * a[0, 0];
    }

    /// [`fd_adjoint_image`] in 3D.
    pub fn fd_adjoint_image_3d(g: inout, q: in, a: in, kv2: in) {
        g[0, 0, 0] = g[0, 0, 0] + kv2[0, 0, 0] * q[0, 0, 0] * a[0, 0, 0];
    }

    /// The adjoint of the fused step at space order 2: `qnew = 2 q - qold + L r` with
    /// `r = kv2 q` from [`fd_adjoint_kq`], on the interior (radius 1).
    pub fn fd_adjoint_step_2(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 2);
    }

    /// [`fd_adjoint_step_2`] at space order 4 (radius 2).
    pub fn fd_adjoint_step_4(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 4);
    }

    /// [`fd_adjoint_step_2`] at space order 6 (radius 3).
    pub fn fd_adjoint_step_6(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 6);
    }

    /// [`fd_adjoint_step_2`] at space order 8 (radius 4).
    pub fn fd_adjoint_step_8(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 8);
    }

    /// [`fd_adjoint_step_2`] at space order 10 (radius 5).
    pub fn fd_adjoint_step_10(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 10);
    }

    /// [`fd_adjoint_step_2`] at space order 12 (radius 6).
    pub fn fd_adjoint_step_12(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 12);
    }

    /// [`fd_adjoint_step_2`] at space order 14 (radius 7).
    pub fn fd_adjoint_step_14(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 14);
    }

    /// [`fd_adjoint_step_2`] at space order 16 (radius 8).
    pub fn fd_adjoint_step_16(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0] = 2.0 * q[0, 0] - qold[0, 0] + laplacian(r, 16);
    }

    /// The adjoint of the fused 3D step at space order 2: `qnew = 2 q - qold + L r` with
    /// `r = kv2 q` from [`fd_adjoint_kq_3d`], `L` summing the three axes (radius 1).
    pub fn fd_adjoint_step_3d_2(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 2);
    }

    /// [`fd_adjoint_step_3d_2`] at space order 4 (radius 2).
    pub fn fd_adjoint_step_3d_4(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 4);
    }

    /// [`fd_adjoint_step_3d_2`] at space order 6 (radius 3).
    pub fn fd_adjoint_step_3d_6(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 6);
    }

    /// [`fd_adjoint_step_3d_2`] at space order 8 (radius 4).
    pub fn fd_adjoint_step_3d_8(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 8);
    }

    /// [`fd_adjoint_step_3d_2`] at space order 10 (radius 5).
    pub fn fd_adjoint_step_3d_10(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 10);
    }

    /// [`fd_adjoint_step_3d_2`] at space order 12 (radius 6).
    pub fn fd_adjoint_step_3d_12(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 12);
    }

    /// [`fd_adjoint_step_3d_2`] at space order 14 (radius 7).
    pub fn fd_adjoint_step_3d_14(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 14);
    }

    /// [`fd_adjoint_step_3d_2`] at space order 16 (radius 8).
    pub fn fd_adjoint_step_3d_16(qnew: out, q: in, qold: in, r: in) {
        qnew[0, 0, 0] = 2.0 * q[0, 0, 0] - qold[0, 0, 0] + laplacian(r, 16);
    }
}

/// Defines, from one list of `order => 2D marker, 3D marker`, the dispatch of the adjoint
/// step by order and dimensionality ([`fd_adjoint_step_nd`], [`fd_adjoint_step_info`]).
macro_rules! adjoint_steps {
    ($($order:literal => $marker:ident, $marker3:ident);* $(;)?) => {
        /// Runs the adjoint step of space order `order` in `D` dimensions
        /// (`fd_adjoint_step_<order>`, or `fd_adjoint_step_3d_<order>` for `D` = 3) on its
        /// whole domain: `qnew = 2 q - qold + L r`. An unsupported order is an error naming
        /// the valid orders.
        pub fn fd_adjoint_step_nd<E: ExecutionSpace, T: Real, const D: usize>(
            space: &E,
            order: usize,
            qnew: &mut ScalarField<E::Memory, T, D>,
            q: &ScalarField<E::Memory, T, D>,
            qold: &ScalarField<E::Memory, T, D>,
            r: &ScalarField<E::Memory, T, D>,
        ) -> Result<()> {
            let (outs, ins) = (&mut [qnew], &[q, qold, r]);
            match (D, order) {
                $((2, $order) => launch::<$marker, E, T, D>(space, outs, ins, &[], &[]),)*
                $((3, $order) => launch::<$marker3, E, T, D>(space, outs, ins, &[], &[]),)*
                _ => Err(unsupported(order, D)),
            }
        }

        /// The IR's metadata (radius, fields, bytes per point) of the adjoint step of space
        /// order `order` in `D` dimensions.
        pub fn fd_adjoint_step_info(order: usize, dims: usize) -> Result<&'static StencilInfo> {
            match (dims, order) {
                $((2, $order) => Ok(&$marker::INFO),)*
                $((3, $order) => Ok(&$marker3::INFO),)*
                _ => Err(unsupported(order, dims)),
            }
        }
    };
}

adjoint_steps! {
    2 => FdAdjointStep2, FdAdjointStep3d2;
    4 => FdAdjointStep4, FdAdjointStep3d4;
    6 => FdAdjointStep6, FdAdjointStep3d6;
    8 => FdAdjointStep8, FdAdjointStep3d8;
    10 => FdAdjointStep10, FdAdjointStep3d10;
    12 => FdAdjointStep12, FdAdjointStep3d12;
    14 => FdAdjointStep14, FdAdjointStep3d14;
    16 => FdAdjointStep16, FdAdjointStep3d16;
}

/// The error for an order or dimensionality without an adjoint step kernel.
fn unsupported(order: usize, dims: usize) -> Error {
    if dims != 2 && dims != 3 {
        return Error::invalid(Param::Ny, dims, "the adjoint step exists in 2D and 3D only");
    }
    match crate::solver::check_space_order(order) {
        Err(e) => e,
        Ok(()) => Error::invalid(
            Param::SpaceOrder,
            order,
            "is supported but has no adjoint step: add its fd_adjoint_step_N to kernels/adjoint.rs",
        ),
    }
}

/// `r = kv2 q` at every point in `D` dimensions ([`fd_adjoint_kq`] or [`fd_adjoint_kq_3d`]).
pub fn fd_adjoint_kq_nd<E: ExecutionSpace, T: Real, const D: usize>(
    space: &E,
    r: &mut ScalarField<E::Memory, T, D>,
    q: &ScalarField<E::Memory, T, D>,
    kv2: &ScalarField<E::Memory, T, D>,
) -> Result<()> {
    let (outs, ins) = (&mut [r], &[q, kv2]);
    match D {
        3 => launch::<FdAdjointKq3d, E, T, D>(space, outs, ins, &[], &[]),
        _ => launch::<FdAdjointKq, E, T, D>(space, outs, ins, &[], &[]),
    }
}

/// `g = g + kv2 q a` at every point in `D` dimensions ([`fd_adjoint_image`] or
/// [`fd_adjoint_image_3d`]).
pub fn fd_adjoint_image_nd<E: ExecutionSpace, T: Real, const D: usize>(
    space: &E,
    g: &mut ScalarField<E::Memory, T, D>,
    q: &ScalarField<E::Memory, T, D>,
    a: &ScalarField<E::Memory, T, D>,
    kv2: &ScalarField<E::Memory, T, D>,
) -> Result<()> {
    let (outs, ins) = (&mut [g], &[q, a, kv2]);
    match D {
        3 => launch::<FdAdjointImage3d, E, T, D>(space, outs, ins, &[], &[]),
        _ => launch::<FdAdjointImage, E, T, D>(space, outs, ins, &[], &[]),
    }
}

/// Metadata of every adjoint kernel, for tools (`ppwave gen`, benchmarks).
pub const ALL: &[StencilInfo] = &[
    FdAdjointKq::INFO,
    FdAdjointKq3d::INFO,
    FdAdjointImage::INFO,
    FdAdjointImage3d::INFO,
    FdAdjointStep2::INFO,
    FdAdjointStep4::INFO,
    FdAdjointStep6::INFO,
    FdAdjointStep8::INFO,
    FdAdjointStep10::INFO,
    FdAdjointStep12::INFO,
    FdAdjointStep14::INFO,
    FdAdjointStep16::INFO,
    FdAdjointStep3d2::INFO,
    FdAdjointStep3d4::INFO,
    FdAdjointStep3d6::INFO,
    FdAdjointStep3d8::INFO,
    FdAdjointStep3d10::INFO,
    FdAdjointStep3d12::INFO,
    FdAdjointStep3d14::INFO,
    FdAdjointStep3d16::INFO,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::SPACE_ORDERS;

    /// Every order with a forward fused step has an adjoint step of the same radius, in 2D
    /// and 3D, and an unsupported order is refused naming the order.
    #[test]
    fn every_forward_order_has_an_adjoint_step_of_its_radius() {
        for order in SPACE_ORDERS {
            for dims in [2, 3] {
                let info = fd_adjoint_step_info(order, dims).expect("adjoint step");
                assert_eq!(info.radius, order / 2, "order {order}, {dims}D");
            }
        }
        let e = fd_adjoint_step_info(5, 2)
            .expect_err("odd order")
            .to_string();
        assert!(e.contains("space order = 5"), "{e}");
    }
}
