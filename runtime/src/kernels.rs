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
//! `fd_absorb` damps the sponge layer; `pml_psi` and `pml_update` are the perfectly matched
//! layer's two kernels (run by `solver::pml` on the layer's boxes). The border that stays zero is the order's radius
//! `N / 2`.
//!
//! 3D: `add_source_3d`, `inject_source_3d`, `fd_kv2_3d`, `fd_absorb_3d` and the fused steps
//! `fd_step_3d_2` ... `fd_step_3d_16` (dispatch with [`fd_step_3d_of_order`]) are the same
//! updates on `(nz, ny, nx)` fields, with `laplacian(p, N)` summing the three axes;
//! `pml_psi_3d` and `pml_update_3d` are the PML's kernels with the y axis added.
//!
//! On a face of the PML's layer (a point in the layer along one axis only), `solver::pml`
//! runs the one-axis kernels `pml_psi_x`, `pml_update_x`, ... (`pml_psi_3d_x`, ... in 3D),
//! which read and write a third (in 3D) or half (in 2D) of the fields of the full ones; on an
//! edge of a 3D layer (two axes) the two-axis kernels `pml_psi_3d_xy`, `pml_update_3d_xy`,
//! ... (`xz`, `yz`); the full kernels only on the corners.
//!
//! [`adjoint`]: the transposed step `qnew = 2 q - qold + L (kv2 q)` of every order, for the
//! discrete adjoint and gradient of `solver::adjoint`.

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

    /// [`add_source`] in 3D: sets the pressure at the source point `(iz, iy, ix)`.
    #[at(iz, iy, ix)]
    pub fn add_source_3d(p: out, value: real, iz: index, iy: index, ix: index) {
        p[0, 0, 0] = value;
    }

    /// [`inject_source`] in 3D: adds `value` to the pressure at `(iz, iy, ix)`.
    #[at(iz, iy, ix)]
    pub fn inject_source_3d(p: inout, value: real, iz: index, iy: index, ix: index) {
        p[0, 0, 0] = p[0, 0, 0] + value;
    }

    /// [`fd_kv2`] in 3D: `kv2 = dtdh2 v²`.
    pub fn fd_kv2_3d(kv2: out, v: in, dtdh2: real) {
        kv2[0, 0, 0] = dtdh2 * v[0, 0, 0] * v[0, 0, 0];
    }

    /// [`fd_absorb`] in 3D, run on the six faces' strips of the absorbing layer.
    pub fn fd_absorb_3d(pnew: inout, pold: in, eta: in) {
        pnew[0, 0, 0] = (pnew[0, 0, 0] + eta[0, 0, 0] * pold[0, 0, 0]) / (1.0 + eta[0, 0, 0]);
    }

    /// The fused 3D step at space order 2 (radius 1):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_2(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 2);
    }

    /// The fused 3D step at space order 4 (radius 2):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_4(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 4);
    }

    /// The fused 3D step at space order 6 (radius 3):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_6(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 6);
    }

    /// The fused 3D step at space order 8 (radius 4):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_8(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 8);
    }

    /// The fused 3D step at space order 10 (radius 5):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_10(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 10);
    }

    /// The fused 3D step at space order 12 (radius 6):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_12(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 12);
    }

    /// The fused 3D step at space order 14 (radius 7):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_14(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 14);
    }

    /// The fused 3D step at space order 16 (radius 8):
    /// `pnew = 2 p - pold + kv2 (d²p/dz² + d²p/dy² + d²p/dx²)`.
    pub fn fd_step_3d_16(pnew: out, p: in, pold: in, kv2: in) {
        pnew[0, 0, 0] = 2.0 * p[0, 0, 0] - pold[0, 0, 0] + kv2[0, 0, 0] * laplacian(p, 16);
    }

    /// PML, first half of its step: the memory variables of the first derivatives,
    /// `psi = b psi + a D1(p)` along x and z (CPML convolution, recursive form), with `D1` the
    /// centred 4th-order first derivative unscaled by `dh` (`2/3 (f[1] - f[-1]) - 1/12 (f[2] -
    /// f[-2])`). `a`, `b` are the profiles of `solver::pml` (`a = 0` outside the layer, where
    /// `psi` stays 0). Run on the layer's boxes only; see `solver::pml`.
    pub fn pml_psi(psix: inout, psiz: inout, p: in, ax: in(x), bx: in(x), az: in(z), bz: in(z)) {
        psix[0, 0] = bx[0, 0] * psix[0, 0]
            + ax[0, 0] * (2.0 / 3.0 * (p[0, 1] - p[0, -1]) - 1.0 / 12.0 * (p[0, 2] - p[0, -2]));
        psiz[0, 0] = bz[0, 0] * psiz[0, 0]
            + az[0, 0] * (2.0 / 3.0 * (p[1, 0] - p[-1, 0]) - 1.0 / 12.0 * (p[2, 0] - p[-2, 0]));
    }

    /// PML, second half of its step (after [`pml_psi`] and the interior step): the memory
    /// variables of the second derivatives, `zeta = b zeta + a (D2(p) + D1(psi))`, and the
    /// correction of the new pressure, `pnew += kv2 (D1(psix) + zetax + D1(psiz) + zetaz)`, so
    /// that in the layer `pnew` is the leapfrog step of `p_tt = v² (∂x̃² p + ∂z̃² p)` with the
    /// stretched derivatives `∂x̃ = ∂x / s_x(ω)` of the convolutional PML.
    pub fn pml_update(
        pnew: inout,
        zetax: inout,
        zetaz: inout,
        p: in,
        psix: in,
        psiz: in,
        kv2: in,
        ax: in(x),
        bx: in(x),
        az: in(z),
        bz: in(z),
    ) {
        let dpsix = 2.0 / 3.0 * (psix[0, 1] - psix[0, -1]) - 1.0 / 12.0 * (psix[0, 2] - psix[0, -2]);
        let dpsiz = 2.0 / 3.0 * (psiz[1, 0] - psiz[-1, 0]) - 1.0 / 12.0 * (psiz[2, 0] - psiz[-2, 0]);
        let zx = bx[0, 0] * zetax[0, 0] + ax[0, 0] * (d2x(p, 4) + dpsix);
        let zz = bz[0, 0] * zetaz[0, 0] + az[0, 0] * (d2z(p, 4) + dpsiz);
        zetax[0, 0] = zx;
        zetaz[0, 0] = zz;
        pnew[0, 0] = pnew[0, 0] + kv2[0, 0] * (dpsix + zx + dpsiz + zz);
    }

    /// [`pml_psi`] in 3D: the memory variables of the first derivatives along x, y and z
    /// (the same formula, one more axis).
    pub fn pml_psi_3d(
        psix: inout,
        psiy: inout,
        psiz: inout,
        p: in,
        ax: in(x),
        bx: in(x),
        ay: in(y),
        by: in(y),
        az: in(z),
        bz: in(z),
    ) {
        psix[0, 0, 0] = bx[0, 0, 0] * psix[0, 0, 0]
            + ax[0, 0, 0] * (2.0 / 3.0 * (p[0, 0, 1] - p[0, 0, -1]) - 1.0 / 12.0 * (p[0, 0, 2] - p[0, 0, -2]));
        psiy[0, 0, 0] = by[0, 0, 0] * psiy[0, 0, 0]
            + ay[0, 0, 0] * (2.0 / 3.0 * (p[0, 1, 0] - p[0, -1, 0]) - 1.0 / 12.0 * (p[0, 2, 0] - p[0, -2, 0]));
        psiz[0, 0, 0] = bz[0, 0, 0] * psiz[0, 0, 0]
            + az[0, 0, 0] * (2.0 / 3.0 * (p[1, 0, 0] - p[-1, 0, 0]) - 1.0 / 12.0 * (p[2, 0, 0] - p[-2, 0, 0]));
    }

    /// [`pml_update`] in 3D: `zeta = b zeta + a (D2(p) + D1(psi))` along x, y and z, and
    /// `pnew += kv2 (D1(psix) + zetax + D1(psiy) + zetay + D1(psiz) + zetaz)`.
    pub fn pml_update_3d(
        pnew: inout,
        zetax: inout,
        zetay: inout,
        zetaz: inout,
        p: in,
        psix: in,
        psiy: in,
        psiz: in,
        kv2: in,
        ax: in(x),
        bx: in(x),
        ay: in(y),
        by: in(y),
        az: in(z),
        bz: in(z),
    ) {
        let dpsix = 2.0 / 3.0 * (psix[0, 0, 1] - psix[0, 0, -1]) - 1.0 / 12.0 * (psix[0, 0, 2] - psix[0, 0, -2]);
        let dpsiy = 2.0 / 3.0 * (psiy[0, 1, 0] - psiy[0, -1, 0]) - 1.0 / 12.0 * (psiy[0, 2, 0] - psiy[0, -2, 0]);
        let dpsiz = 2.0 / 3.0 * (psiz[1, 0, 0] - psiz[-1, 0, 0]) - 1.0 / 12.0 * (psiz[2, 0, 0] - psiz[-2, 0, 0]);
        let zx = bx[0, 0, 0] * zetax[0, 0, 0] + ax[0, 0, 0] * (d2x(p, 4) + dpsix);
        let zy = by[0, 0, 0] * zetay[0, 0, 0] + ay[0, 0, 0] * (d2y(p, 4) + dpsiy);
        let zz = bz[0, 0, 0] * zetaz[0, 0, 0] + az[0, 0, 0] * (d2z(p, 4) + dpsiz);
        zetax[0, 0, 0] = zx;
        zetay[0, 0, 0] = zy;
        zetaz[0, 0, 0] = zz;
        pnew[0, 0, 0] = pnew[0, 0, 0] + kv2[0, 0, 0] * (dpsix + zx + dpsiy + zy + dpsiz + zz);
    }

    // The PML on a face of its layer, where a point lies in the layer along one axis only:
    // the kernels above with the other axes' terms left out, one pair per axis. There the
    // other axes' `a = 0` and `b = 1`, so their `zeta` stays 0 and their `psi` is 0 except
    // within 2 cells of the edge where a face meets a corner or edge box: that `D1(psi)`,
    // which the interior next to the layer leaves out as well, is left out here too (where
    // `psi` is 0 the results are the full kernels' bit for bit, as `solver::pml` tests).
    // `solver::pml` runs them on the faces and the kernels above on the edges and corners.

    /// [`pml_psi`] on a face of the layer along x: `psi = b psi + a D1x(p)`.
    pub fn pml_psi_x(psi: inout, p: in, a: in(x), b: in(x)) {
        psi[0, 0] = b[0, 0] * psi[0, 0]
            + a[0, 0] * (2.0 / 3.0 * (p[0, 1] - p[0, -1]) - 1.0 / 12.0 * (p[0, 2] - p[0, -2]));
    }

    /// [`pml_psi`] on a face of the layer along z: `psi = b psi + a D1z(p)`.
    pub fn pml_psi_z(psi: inout, p: in, a: in(z), b: in(z)) {
        psi[0, 0] = b[0, 0] * psi[0, 0]
            + a[0, 0] * (2.0 / 3.0 * (p[1, 0] - p[-1, 0]) - 1.0 / 12.0 * (p[2, 0] - p[-2, 0]));
    }

    /// [`pml_update`] on a face of the layer along x: `zeta = b zeta + a (D2x(p) +
    /// D1x(psi))`, `pnew += kv2 (D1x(psi) + zeta)`.
    pub fn pml_update_x(pnew: inout, zeta: inout, p: in, psi: in, kv2: in, a: in(x), b: in(x)) {
        let dpsi = 2.0 / 3.0 * (psi[0, 1] - psi[0, -1]) - 1.0 / 12.0 * (psi[0, 2] - psi[0, -2]);
        let z = b[0, 0] * zeta[0, 0] + a[0, 0] * (d2x(p, 4) + dpsi);
        zeta[0, 0] = z;
        pnew[0, 0] = pnew[0, 0] + kv2[0, 0] * (dpsi + z);
    }

    /// [`pml_update`] on a face of the layer along z.
    pub fn pml_update_z(pnew: inout, zeta: inout, p: in, psi: in, kv2: in, a: in(z), b: in(z)) {
        let dpsi = 2.0 / 3.0 * (psi[1, 0] - psi[-1, 0]) - 1.0 / 12.0 * (psi[2, 0] - psi[-2, 0]);
        let z = b[0, 0] * zeta[0, 0] + a[0, 0] * (d2z(p, 4) + dpsi);
        zeta[0, 0] = z;
        pnew[0, 0] = pnew[0, 0] + kv2[0, 0] * (dpsi + z);
    }

    /// [`pml_psi_3d`] on a face of the layer along x.
    pub fn pml_psi_3d_x(psi: inout, p: in, a: in(x), b: in(x)) {
        psi[0, 0, 0] = b[0, 0, 0] * psi[0, 0, 0]
            + a[0, 0, 0] * (2.0 / 3.0 * (p[0, 0, 1] - p[0, 0, -1]) - 1.0 / 12.0 * (p[0, 0, 2] - p[0, 0, -2]));
    }

    /// [`pml_psi_3d`] on a face of the layer along y.
    pub fn pml_psi_3d_y(psi: inout, p: in, a: in(y), b: in(y)) {
        psi[0, 0, 0] = b[0, 0, 0] * psi[0, 0, 0]
            + a[0, 0, 0] * (2.0 / 3.0 * (p[0, 1, 0] - p[0, -1, 0]) - 1.0 / 12.0 * (p[0, 2, 0] - p[0, -2, 0]));
    }

    /// [`pml_psi_3d`] on a face of the layer along z.
    pub fn pml_psi_3d_z(psi: inout, p: in, a: in(z), b: in(z)) {
        psi[0, 0, 0] = b[0, 0, 0] * psi[0, 0, 0]
            + a[0, 0, 0] * (2.0 / 3.0 * (p[1, 0, 0] - p[-1, 0, 0]) - 1.0 / 12.0 * (p[2, 0, 0] - p[-2, 0, 0]));
    }

    /// [`pml_update_3d`] on a face of the layer along x.
    pub fn pml_update_3d_x(pnew: inout, zeta: inout, p: in, psi: in, kv2: in, a: in(x), b: in(x)) {
        let dpsi = 2.0 / 3.0 * (psi[0, 0, 1] - psi[0, 0, -1]) - 1.0 / 12.0 * (psi[0, 0, 2] - psi[0, 0, -2]);
        let z = b[0, 0, 0] * zeta[0, 0, 0] + a[0, 0, 0] * (d2x(p, 4) + dpsi);
        zeta[0, 0, 0] = z;
        pnew[0, 0, 0] = pnew[0, 0, 0] + kv2[0, 0, 0] * (dpsi + z);
    }

    /// [`pml_update_3d`] on a face of the layer along y.
    pub fn pml_update_3d_y(pnew: inout, zeta: inout, p: in, psi: in, kv2: in, a: in(y), b: in(y)) {
        let dpsi = 2.0 / 3.0 * (psi[0, 1, 0] - psi[0, -1, 0]) - 1.0 / 12.0 * (psi[0, 2, 0] - psi[0, -2, 0]);
        let z = b[0, 0, 0] * zeta[0, 0, 0] + a[0, 0, 0] * (d2y(p, 4) + dpsi);
        zeta[0, 0, 0] = z;
        pnew[0, 0, 0] = pnew[0, 0, 0] + kv2[0, 0, 0] * (dpsi + z);
    }

    /// [`pml_update_3d`] on a face of the layer along z.
    pub fn pml_update_3d_z(pnew: inout, zeta: inout, p: in, psi: in, kv2: in, a: in(z), b: in(z)) {
        let dpsi = 2.0 / 3.0 * (psi[1, 0, 0] - psi[-1, 0, 0]) - 1.0 / 12.0 * (psi[2, 0, 0] - psi[-2, 0, 0]);
        let z = b[0, 0, 0] * zeta[0, 0, 0] + a[0, 0, 0] * (d2z(p, 4) + dpsi);
        zeta[0, 0, 0] = z;
        pnew[0, 0, 0] = pnew[0, 0, 0] + kv2[0, 0, 0] * (dpsi + z);
    }

    // The PML on an edge of a 3D layer, where a point lies in the layer along two axes: the
    // full kernels with the third axis's terms left out, as on the faces (its `a = 0`,
    // `b = 1` there; its `psi` is nonzero only within 2 cells of a corner box). Named by the
    // two axes, x first, and taking their fields in that order.

    /// [`pml_psi_3d`] on an edge of the layer along z (in the layer along x and y).
    pub fn pml_psi_3d_xy(psix: inout, psiy: inout, p: in, ax: in(x), bx: in(x), ay: in(y), by: in(y)) {
        psix[0, 0, 0] = bx[0, 0, 0] * psix[0, 0, 0]
            + ax[0, 0, 0] * (2.0 / 3.0 * (p[0, 0, 1] - p[0, 0, -1]) - 1.0 / 12.0 * (p[0, 0, 2] - p[0, 0, -2]));
        psiy[0, 0, 0] = by[0, 0, 0] * psiy[0, 0, 0]
            + ay[0, 0, 0] * (2.0 / 3.0 * (p[0, 1, 0] - p[0, -1, 0]) - 1.0 / 12.0 * (p[0, 2, 0] - p[0, -2, 0]));
    }

    /// [`pml_psi_3d`] on an edge of the layer along y (in the layer along x and z).
    pub fn pml_psi_3d_xz(psix: inout, psiz: inout, p: in, ax: in(x), bx: in(x), az: in(z), bz: in(z)) {
        psix[0, 0, 0] = bx[0, 0, 0] * psix[0, 0, 0]
            + ax[0, 0, 0] * (2.0 / 3.0 * (p[0, 0, 1] - p[0, 0, -1]) - 1.0 / 12.0 * (p[0, 0, 2] - p[0, 0, -2]));
        psiz[0, 0, 0] = bz[0, 0, 0] * psiz[0, 0, 0]
            + az[0, 0, 0] * (2.0 / 3.0 * (p[1, 0, 0] - p[-1, 0, 0]) - 1.0 / 12.0 * (p[2, 0, 0] - p[-2, 0, 0]));
    }

    /// [`pml_psi_3d`] on an edge of the layer along x (in the layer along y and z).
    pub fn pml_psi_3d_yz(psiy: inout, psiz: inout, p: in, ay: in(y), by: in(y), az: in(z), bz: in(z)) {
        psiy[0, 0, 0] = by[0, 0, 0] * psiy[0, 0, 0]
            + ay[0, 0, 0] * (2.0 / 3.0 * (p[0, 1, 0] - p[0, -1, 0]) - 1.0 / 12.0 * (p[0, 2, 0] - p[0, -2, 0]));
        psiz[0, 0, 0] = bz[0, 0, 0] * psiz[0, 0, 0]
            + az[0, 0, 0] * (2.0 / 3.0 * (p[1, 0, 0] - p[-1, 0, 0]) - 1.0 / 12.0 * (p[2, 0, 0] - p[-2, 0, 0]));
    }

    /// [`pml_update_3d`] on an edge of the layer along z (in the layer along x and y).
    pub fn pml_update_3d_xy(
        pnew: inout,
        zetax: inout,
        zetay: inout,
        p: in,
        psix: in,
        psiy: in,
        kv2: in,
        ax: in(x),
        bx: in(x),
        ay: in(y),
        by: in(y),
    ) {
        let dpsix = 2.0 / 3.0 * (psix[0, 0, 1] - psix[0, 0, -1]) - 1.0 / 12.0 * (psix[0, 0, 2] - psix[0, 0, -2]);
        let dpsiy = 2.0 / 3.0 * (psiy[0, 1, 0] - psiy[0, -1, 0]) - 1.0 / 12.0 * (psiy[0, 2, 0] - psiy[0, -2, 0]);
        let zx = bx[0, 0, 0] * zetax[0, 0, 0] + ax[0, 0, 0] * (d2x(p, 4) + dpsix);
        let zy = by[0, 0, 0] * zetay[0, 0, 0] + ay[0, 0, 0] * (d2y(p, 4) + dpsiy);
        zetax[0, 0, 0] = zx;
        zetay[0, 0, 0] = zy;
        pnew[0, 0, 0] = pnew[0, 0, 0] + kv2[0, 0, 0] * (dpsix + zx + dpsiy + zy);
    }

    /// [`pml_update_3d`] on an edge of the layer along y (in the layer along x and z).
    pub fn pml_update_3d_xz(
        pnew: inout,
        zetax: inout,
        zetaz: inout,
        p: in,
        psix: in,
        psiz: in,
        kv2: in,
        ax: in(x),
        bx: in(x),
        az: in(z),
        bz: in(z),
    ) {
        let dpsix = 2.0 / 3.0 * (psix[0, 0, 1] - psix[0, 0, -1]) - 1.0 / 12.0 * (psix[0, 0, 2] - psix[0, 0, -2]);
        let dpsiz = 2.0 / 3.0 * (psiz[1, 0, 0] - psiz[-1, 0, 0]) - 1.0 / 12.0 * (psiz[2, 0, 0] - psiz[-2, 0, 0]);
        let zx = bx[0, 0, 0] * zetax[0, 0, 0] + ax[0, 0, 0] * (d2x(p, 4) + dpsix);
        let zz = bz[0, 0, 0] * zetaz[0, 0, 0] + az[0, 0, 0] * (d2z(p, 4) + dpsiz);
        zetax[0, 0, 0] = zx;
        zetaz[0, 0, 0] = zz;
        pnew[0, 0, 0] = pnew[0, 0, 0] + kv2[0, 0, 0] * (dpsix + zx + dpsiz + zz);
    }

    /// [`pml_update_3d`] on an edge of the layer along x (in the layer along y and z).
    pub fn pml_update_3d_yz(
        pnew: inout,
        zetay: inout,
        zetaz: inout,
        p: in,
        psiy: in,
        psiz: in,
        kv2: in,
        ay: in(y),
        by: in(y),
        az: in(z),
        bz: in(z),
    ) {
        let dpsiy = 2.0 / 3.0 * (psiy[0, 1, 0] - psiy[0, -1, 0]) - 1.0 / 12.0 * (psiy[0, 2, 0] - psiy[0, -2, 0]);
        let dpsiz = 2.0 / 3.0 * (psiz[1, 0, 0] - psiz[-1, 0, 0]) - 1.0 / 12.0 * (psiz[2, 0, 0] - psiz[-2, 0, 0]);
        let zy = by[0, 0, 0] * zetay[0, 0, 0] + ay[0, 0, 0] * (d2y(p, 4) + dpsiy);
        let zz = bz[0, 0, 0] * zetaz[0, 0, 0] + az[0, 0, 0] * (d2z(p, 4) + dpsiz);
        zetay[0, 0, 0] = zy;
        zetaz[0, 0, 0] = zz;
        pnew[0, 0, 0] = pnew[0, 0, 0] + kv2[0, 0, 0] * (dpsiy + zy + dpsiz + zz);
    }
}

/// Defines, from one list of `order => kernel / Marker`, the fused step's orders
/// ([`SPACE_ORDERS`]) and its dispatch by order ([`fd_step_of_order`], [`fd_step_in`],
/// [`fd_step_info`], [`fd_step_member`], and the 3D [`fd_step_3d_of_order`], [`fd_step_3d_in`],
/// [`fd_step_3d_info`]).
macro_rules! fused_steps {
    ($($order:literal => $kernel:ident / $marker:ident, $kernel3:ident / $marker3:ident);* $(;)?) => {
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

        /// Runs the fused step of space order `order` on rows `rows` and columns `cols` of
        /// its domain only ([`launch_in`](crate::launch::launch_in)); the temporal blocking
        /// of `solver::blocking` runs the step band by band with it.
        #[allow(clippy::too_many_arguments)]
        pub fn fd_step_in<E: ExecutionSpace, T: Real>(
            space: &E,
            order: usize,
            rows: std::ops::Range<usize>,
            cols: std::ops::Range<usize>,
            pnew: &mut ScalarField<E::Memory, T>,
            p: &ScalarField<E::Memory, T>,
            pold: &ScalarField<E::Memory, T>,
            kv2: &ScalarField<E::Memory, T>,
        ) -> Result<()> {
            match order {
                $($order => crate::launch::launch_in::<$marker, E, T>(
                    space, rows, cols, &mut [pnew], &[p, pold, kv2], &[],
                ),)*
                _ => Err(no_fused_kernel(order)),
            }
        }

        /// The IR's metadata (radius, fields, bytes per point) of the fused step of space
        /// order `order`.
        pub fn fd_step_info(order: usize) -> Result<&'static crate::launch::StencilInfo> {
            use crate::launch::Stencil;
            match order {
                $($order => Ok(&$marker::INFO),)*
                _ => Err(no_fused_kernel(order)),
            }
        }

        /// The 3D [`fd_step_of_order`]: runs `fd_step_3d_<order>`.
        pub fn fd_step_3d_of_order<E: ExecutionSpace, T: Real>(
            space: &E,
            order: usize,
            pnew: &mut ScalarField<E::Memory, T, 3>,
            p: &ScalarField<E::Memory, T, 3>,
            pold: &ScalarField<E::Memory, T, 3>,
            kv2: &ScalarField<E::Memory, T, 3>,
        ) -> Result<()> {
            match order {
                $($order => $kernel3(space, pnew, p, pold, kv2),)*
                _ => Err(no_fused_kernel(order)),
            }
        }

        /// The 3D [`fd_step_in`]: runs `fd_step_3d_<order>` on the box `region` (planes,
        /// rows, columns) of its domain only
        /// ([`launch_in_region`](crate::launch::launch_in_region)); the temporal blocking of
        /// `solver::blocking` runs the 3D step slab by slab with it.
        pub fn fd_step_3d_in<E: ExecutionSpace, T: Real>(
            space: &E,
            order: usize,
            region: [std::ops::Range<usize>; 3],
            pnew: &mut ScalarField<E::Memory, T, 3>,
            p: &ScalarField<E::Memory, T, 3>,
            pold: &ScalarField<E::Memory, T, 3>,
            kv2: &ScalarField<E::Memory, T, 3>,
        ) -> Result<()> {
            match order {
                $($order => crate::launch::launch_in_region::<$marker3, E, T, 3>(
                    space, region, &mut [pnew], &[p, pold, kv2], &[],
                ),)*
                _ => Err(no_fused_kernel(order)),
            }
        }

        /// The fused step of space order `order` in `D` dimensions (`fd_step_<order>`, or
        /// `fd_step_3d_<order>` for `D` = 3) on `region` as a member of a
        /// [group launch](crate::launch::launch_group), writing the group's field `outs` and
        /// reading `ins` (`pnew`; `p`, `pold`, `kv2`).
        pub fn fd_step_member<E: ExecutionSpace, T: Real, const D: usize>(
            order: usize,
            region: [std::ops::Range<usize>; D],
            outs: &[usize],
            ins: &[crate::launch::Arg],
        ) -> Result<crate::launch::Member<E, T, D>> {
            use crate::launch::Member;
            match (D, order) {
                $((2, $order) => Ok(Member::new::<$marker>(region, outs, ins, &[])),)*
                $((3, $order) => Ok(Member::new::<$marker3>(region, outs, ins, &[])),)*
                _ => Err(no_fused_kernel(order)),
            }
        }

        /// The 3D [`fd_step_info`]: the IR's metadata of `fd_step_3d_<order>`.
        pub fn fd_step_3d_info(order: usize) -> Result<&'static crate::launch::StencilInfo> {
            use crate::launch::Stencil;
            match order {
                $($order => Ok(&$marker3::INFO),)*
                _ => Err(no_fused_kernel(order)),
            }
        }
    };
}

/// The error for a space order without a fused kernel (unsupported, or supported but
/// missing from [`SPACE_ORDERS`]).
fn no_fused_kernel(order: usize) -> Error {
    match crate::solver::check_space_order(order) {
        Err(e) => e,
        Ok(()) => Error::invalid(
            Param::SpaceOrder,
            order,
            "is supported but has no fused kernel: add its fd_step_N and fd_step_3d_N to kernels.rs",
        ),
    }
}

fused_steps! {
    2 => fd_step_2 / FdStep2, fd_step_3d_2 / FdStep3d2;
    4 => fd_step_4 / FdStep4, fd_step_3d_4 / FdStep3d4;
    6 => fd_step_6 / FdStep6, fd_step_3d_6 / FdStep3d6;
    8 => fd_step_8 / FdStep8, fd_step_3d_8 / FdStep3d8;
    10 => fd_step_10 / FdStep10, fd_step_3d_10 / FdStep3d10;
    12 => fd_step_12 / FdStep12, fd_step_3d_12 / FdStep3d12;
    14 => fd_step_14 / FdStep14, fd_step_3d_14 / FdStep3d14;
    16 => fd_step_16 / FdStep16, fd_step_3d_16 / FdStep3d16;
}

/// Metadata of every built-in kernel: the acoustic ones ([`ALL`]), then the adjoint's
/// ([`adjoint::ALL`]); what `ppwave gen` and the Python package's `gen` print.
pub fn builtin() -> impl Iterator<Item = &'static crate::launch::StencilInfo> {
    ALL.iter().chain(adjoint::ALL)
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
        AddSource3d::INFO,
        InjectSource3d::INFO,
        FdKv23d::INFO,
        FdAbsorb3d::INFO,
        FdStep3d2::INFO,
        FdStep3d4::INFO,
        FdStep3d6::INFO,
        FdStep3d8::INFO,
        FdStep3d10::INFO,
        FdStep3d12::INFO,
        FdStep3d14::INFO,
        FdStep3d16::INFO,
        PmlPsi::INFO,
        PmlUpdate::INFO,
        PmlPsi3d::INFO,
        PmlUpdate3d::INFO,
        PmlPsiX::INFO,
        PmlPsiZ::INFO,
        PmlUpdateX::INFO,
        PmlUpdateZ::INFO,
        PmlPsi3dX::INFO,
        PmlPsi3dY::INFO,
        PmlPsi3dZ::INFO,
        PmlUpdate3dX::INFO,
        PmlUpdate3dY::INFO,
        PmlUpdate3dZ::INFO,
        PmlPsi3dXy::INFO,
        PmlPsi3dXz::INFO,
        PmlPsi3dYz::INFO,
        PmlUpdate3dXy::INFO,
        PmlUpdate3dXz::INFO,
        PmlUpdate3dYz::INFO,
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

// ---------------------------------------------------------------------------------------
// The adjoint of the time step. Its stencils live here, in kernels.rs, so that the device
// builds (runtime/build.rs compiles the stencils of this file) carry them as well.
// ---------------------------------------------------------------------------------------

pub mod adjoint {
    //! The kernels the adjoint-state method adds to the forward step, written once with
    //! `stencil!` so that every backend runs them (used by [`solver::adjoint`](crate::solver::adjoint)).
    //!
    //! The adjoint sweep itself is the forward fused step run on the scaled adjoint field
    //! `s = kv2 q` (derived in the docs of `solver::adjoint`), so it needs no kernel of its
    //! own. What it adds: the gradient's imaging condition `g += s L p`
    //! (`fd_adjoint_grad_<N>`, `fd_adjoint_grad_3d_<N>` in 3D; dispatch by order with
    //! [`fd_adjoint_grad_nd`]), the cross-correlation [`fd_adjoint_image`] of the image, the
    //! pointwise product [`fd_scale`] that turns `s` back into `q`, and [`fd_copy`] for the
    //! stored levels and checkpoints.

    use crate::launch::{launch, Stencil, StencilInfo};
    use crate::{stencil, Error, ExecutionSpace, Param, Real, Result, ScalarField};

    stencil! {
        /// `r = w q` at every point: the scaled adjoint field turned back into `q`
        /// (`w = 1 / kv2`).
        pub fn fd_scale(r: out, q: in, w: in) {
            r[0, 0] = w[0, 0] * q[0, 0];
        }

        /// [`fd_scale`] in 3D.
        pub fn fd_scale_3d(r: out, q: in, w: in) {
            r[0, 0, 0] = w[0, 0, 0] * q[0, 0, 0];
        }

        /// The zero-lag cross-correlation `g = g + s a` at every point (the image `Σ q p` is
        /// `Σ s p / kv2`, `kv2` divided out once at the end).
        pub fn fd_adjoint_image(g: inout, s: in, a: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * a[0, 0];
        }

        /// [`fd_adjoint_image`] in 3D.
        pub fn fd_adjoint_image_3d(g: inout, s: in, a: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * a[0, 0, 0];
        }

        /// `dst = src` at every point: the gradient's stored levels and checkpoints, copied
        /// by the space's threads rather than one.
        pub fn fd_copy(dst: out, src: in) {
            dst[0, 0] = src[0, 0];
        }

        /// [`fd_copy`] in 3D.
        pub fn fd_copy_3d(dst: out, src: in) {
            dst[0, 0, 0] = src[0, 0, 0];
        }

        /// The gradient's imaging condition at space order 2: `g = g + s L p` on the interior
        /// (radius 1), `s = kv2 q` the scaled adjoint field and `p` the forward level.
        pub fn fd_adjoint_grad_2(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 2);
        }

        /// [`fd_adjoint_grad_2`] at space order 4 (radius 2).
        pub fn fd_adjoint_grad_4(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 4);
        }

        /// [`fd_adjoint_grad_2`] at space order 6 (radius 3).
        pub fn fd_adjoint_grad_6(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 6);
        }

        /// [`fd_adjoint_grad_2`] at space order 8 (radius 4).
        pub fn fd_adjoint_grad_8(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 8);
        }

        /// [`fd_adjoint_grad_2`] at space order 10 (radius 5).
        pub fn fd_adjoint_grad_10(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 10);
        }

        /// [`fd_adjoint_grad_2`] at space order 12 (radius 6).
        pub fn fd_adjoint_grad_12(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 12);
        }

        /// [`fd_adjoint_grad_2`] at space order 14 (radius 7).
        pub fn fd_adjoint_grad_14(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 14);
        }

        /// [`fd_adjoint_grad_2`] at space order 16 (radius 8).
        pub fn fd_adjoint_grad_16(g: inout, s: in, p: in) {
            g[0, 0] = g[0, 0] + s[0, 0] * laplacian(p, 16);
        }

        /// [`fd_adjoint_grad_2`] in 3D, `L` summing the three axes (radius 1).
        pub fn fd_adjoint_grad_3d_2(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 2);
        }

        /// [`fd_adjoint_grad_3d_2`] at space order 4 (radius 2).
        pub fn fd_adjoint_grad_3d_4(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 4);
        }

        /// [`fd_adjoint_grad_3d_2`] at space order 6 (radius 3).
        pub fn fd_adjoint_grad_3d_6(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 6);
        }

        /// [`fd_adjoint_grad_3d_2`] at space order 8 (radius 4).
        pub fn fd_adjoint_grad_3d_8(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 8);
        }

        /// [`fd_adjoint_grad_3d_2`] at space order 10 (radius 5).
        pub fn fd_adjoint_grad_3d_10(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 10);
        }

        /// [`fd_adjoint_grad_3d_2`] at space order 12 (radius 6).
        pub fn fd_adjoint_grad_3d_12(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 12);
        }

        /// [`fd_adjoint_grad_3d_2`] at space order 14 (radius 7).
        pub fn fd_adjoint_grad_3d_14(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 14);
        }

        /// [`fd_adjoint_grad_3d_2`] at space order 16 (radius 8).
        pub fn fd_adjoint_grad_3d_16(g: inout, s: in, p: in) {
            g[0, 0, 0] = g[0, 0, 0] + s[0, 0, 0] * laplacian(p, 16);
        }
    }

    /// Defines, from one list of `order => 2D marker, 3D marker`, the dispatch of the
    /// gradient's imaging condition by order and dimensionality ([`fd_adjoint_grad_nd`],
    /// [`fd_adjoint_grad_info`]).
    macro_rules! adjoint_grads {
        ($($order:literal => $marker:ident, $marker3:ident);* $(;)?) => {
            /// Runs the gradient's imaging condition of space order `order` in `D` dimensions
            /// (`fd_adjoint_grad_<order>`, or `fd_adjoint_grad_3d_<order>` for `D` = 3) on its
            /// whole domain: `g = g + s L p` on the interior. An unsupported order is an error
            /// naming the valid orders.
            pub fn fd_adjoint_grad_nd<E: ExecutionSpace, T: Real, const D: usize>(
                space: &E,
                order: usize,
                g: &mut ScalarField<E::Memory, T, D>,
                s: &ScalarField<E::Memory, T, D>,
                p: &ScalarField<E::Memory, T, D>,
            ) -> Result<()> {
                let (outs, ins) = (&mut [g], &[s, p]);
                match (D, order) {
                    $((2, $order) => launch::<$marker, E, T, D>(space, outs, ins, &[], &[]),)*
                    $((3, $order) => launch::<$marker3, E, T, D>(space, outs, ins, &[], &[]),)*
                    _ => Err(unsupported(order, D)),
                }
            }

            /// The IR's metadata (radius, fields, bytes per point) of the gradient's imaging
            /// condition of space order `order` in `D` dimensions.
            pub fn fd_adjoint_grad_info(order: usize, dims: usize) -> Result<&'static StencilInfo> {
                match (dims, order) {
                    $((2, $order) => Ok(&$marker::INFO),)*
                    $((3, $order) => Ok(&$marker3::INFO),)*
                    _ => Err(unsupported(order, dims)),
                }
            }
        };
    }

    adjoint_grads! {
        2 => FdAdjointGrad2, FdAdjointGrad3d2;
        4 => FdAdjointGrad4, FdAdjointGrad3d4;
        6 => FdAdjointGrad6, FdAdjointGrad3d6;
        8 => FdAdjointGrad8, FdAdjointGrad3d8;
        10 => FdAdjointGrad10, FdAdjointGrad3d10;
        12 => FdAdjointGrad12, FdAdjointGrad3d12;
        14 => FdAdjointGrad14, FdAdjointGrad3d14;
        16 => FdAdjointGrad16, FdAdjointGrad3d16;
    }

    /// The error for an order or dimensionality without a gradient kernel.
    fn unsupported(order: usize, dims: usize) -> Error {
        if dims != 2 && dims != 3 {
            return Error::invalid(Param::Ny, dims, "the gradient exists in 2D and 3D only");
        }
        match crate::solver::check_space_order(order) {
            Err(e) => e,
            Ok(()) => Error::invalid(
                Param::SpaceOrder,
                order,
                "is supported but has no gradient kernel: add its fd_adjoint_grad_N to the adjoint section of kernels.rs",
            ),
        }
    }

    /// `r = w q` at every point in `D` dimensions ([`fd_scale`] or [`fd_scale_3d`]).
    pub fn fd_scale_nd<E: ExecutionSpace, T: Real, const D: usize>(
        space: &E,
        r: &mut ScalarField<E::Memory, T, D>,
        q: &ScalarField<E::Memory, T, D>,
        w: &ScalarField<E::Memory, T, D>,
    ) -> Result<()> {
        let (outs, ins) = (&mut [r], &[q, w]);
        match D {
            3 => launch::<FdScale3d, E, T, D>(space, outs, ins, &[], &[]),
            _ => launch::<FdScale, E, T, D>(space, outs, ins, &[], &[]),
        }
    }

    /// `g = g + s a` at every point in `D` dimensions ([`fd_adjoint_image`] or
    /// [`fd_adjoint_image_3d`]).
    pub fn fd_adjoint_image_nd<E: ExecutionSpace, T: Real, const D: usize>(
        space: &E,
        g: &mut ScalarField<E::Memory, T, D>,
        s: &ScalarField<E::Memory, T, D>,
        a: &ScalarField<E::Memory, T, D>,
    ) -> Result<()> {
        let (outs, ins) = (&mut [g], &[s, a]);
        match D {
            3 => launch::<FdAdjointImage3d, E, T, D>(space, outs, ins, &[], &[]),
            _ => launch::<FdAdjointImage, E, T, D>(space, outs, ins, &[], &[]),
        }
    }

    /// `dst = src` at every point in `D` dimensions ([`fd_copy`] or [`fd_copy_3d`]).
    pub fn fd_copy_nd<E: ExecutionSpace, T: Real, const D: usize>(
        space: &E,
        dst: &mut ScalarField<E::Memory, T, D>,
        src: &ScalarField<E::Memory, T, D>,
    ) -> Result<()> {
        let (outs, ins) = (&mut [dst], &[src]);
        match D {
            3 => launch::<FdCopy3d, E, T, D>(space, outs, ins, &[], &[]),
            _ => launch::<FdCopy, E, T, D>(space, outs, ins, &[], &[]),
        }
    }

    /// Metadata of every adjoint kernel, for tools (`ppwave gen`, benchmarks).
    pub const ALL: &[StencilInfo] = &[
        FdScale::INFO,
        FdScale3d::INFO,
        FdAdjointImage::INFO,
        FdAdjointImage3d::INFO,
        FdCopy::INFO,
        FdCopy3d::INFO,
        FdAdjointGrad2::INFO,
        FdAdjointGrad4::INFO,
        FdAdjointGrad6::INFO,
        FdAdjointGrad8::INFO,
        FdAdjointGrad10::INFO,
        FdAdjointGrad12::INFO,
        FdAdjointGrad14::INFO,
        FdAdjointGrad16::INFO,
        FdAdjointGrad3d2::INFO,
        FdAdjointGrad3d4::INFO,
        FdAdjointGrad3d6::INFO,
        FdAdjointGrad3d8::INFO,
        FdAdjointGrad3d10::INFO,
        FdAdjointGrad3d12::INFO,
        FdAdjointGrad3d14::INFO,
        FdAdjointGrad3d16::INFO,
    ];

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::kernels::SPACE_ORDERS;

        /// Every order with a forward fused step has a gradient kernel of the same radius, in
        /// 2D and 3D, and an unsupported order is refused naming the order.
        #[test]
        fn every_forward_order_has_a_gradient_kernel_of_its_radius() {
            for order in SPACE_ORDERS {
                for dims in [2, 3] {
                    let info = fd_adjoint_grad_info(order, dims).expect("gradient kernel");
                    assert_eq!(info.radius, order / 2, "order {order}, {dims}D");
                }
            }
            let e = fd_adjoint_grad_info(5, 2)
                .expect_err("odd order")
                .to_string();
            assert!(e.contains("space order = 5"), "{e}");
        }
    }
}
