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
//! with `c0 = -5/2`, `c1 = 4/3`, `c2 = -1/12`. `fd_step` fuses the last three into one
//! pass (with `kv2 = (dt/dh)² v²` from `fd_kv2`, computed once). Each call is a generic function of the
//! execution space; see [`fd_pxx`] for an example.

use crate::stencil;

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

    /// `kv2 = dtdh2 v²`, computed once per model for [`fd_step`] (same operation order as
    /// [`fd_time`], so the fused and split steps round identically).
    pub fn fd_kv2(kv2: out, v: in, dtdh2: real) {
        kv2[0, 0] = dtdh2 * v[0, 0] * v[0, 0];
    }

    /// The whole time step fused into one pass (16 compulsory bytes per point instead of the
    /// split kernels' 40): `pnew = 2 p - pold + kv2 (d²p/dx² + d²p/dz²)`, with `kv2` from
    /// [`fd_kv2`]. Same arithmetic as `fd_pxx`, `fd_pzz` and `fd_time` in sequence.
    pub fn fd_step(pnew: out, p: in, pold: in, kv2: in) {
        let pxx = -1.0 / 12.0 * p[0, -2] + 4.0 / 3.0 * p[0, -1] - 5.0 / 2.0 * p[0, 0]
            + 4.0 / 3.0 * p[0, 1] - 1.0 / 12.0 * p[0, 2];
        let pzz = -1.0 / 12.0 * p[-2, 0] + 4.0 / 3.0 * p[-1, 0] - 5.0 / 2.0 * p[0, 0]
            + 4.0 / 3.0 * p[1, 0] - 1.0 / 12.0 * p[2, 0];
        pnew[0, 0] = 2.0 * p[0, 0] - pold[0, 0] + kv2[0, 0] * (pxx + pzz);
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
        FdStep::INFO,
    ]
};
