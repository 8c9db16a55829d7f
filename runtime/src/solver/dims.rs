//! What differs between the 2D and the 3D solver: which kernels a time step runs.
//! [`Dims<2>`] and [`Dims<3>`] implement [`WaveKernels`]; [`WaveSimulator`](super::WaveSimulator)
//! is generic over its dimensionality `D` with the bound `Dims<D>: WaveKernels<D>`, and
//! everything else (indices, shapes, damping, receivers) is written once with `[z, y, x]`
//! coordinates, `y` being absent in 2D. The kernels themselves live in [`crate::kernels`].

use crate::kernels::{
    add_source, add_source_3d, fd_kv2, fd_kv2_3d, fd_pxx, fd_pzz, fd_step_3d_in, fd_step_3d_info,
    fd_step_in, fd_step_info, fd_time, inject_source, inject_source_3d, FdAbsorb, FdAbsorb3d,
};
use crate::kernels::{PmlPsi, PmlPsi3d, PmlUpdate, PmlUpdate3d};
use crate::kernels::{
    PmlPsi3dX, PmlPsi3dXy, PmlPsi3dXz, PmlPsi3dY, PmlPsi3dYz, PmlPsi3dZ, PmlPsiX, PmlPsiZ,
    PmlUpdate3dX, PmlUpdate3dXy, PmlUpdate3dXz, PmlUpdate3dY, PmlUpdate3dYz, PmlUpdate3dZ,
    PmlUpdateX, PmlUpdateZ,
};
use crate::launch::{Arg, Member, Stencil, StencilInfo};
use crate::{Error, ExecutionSpace, Param, Real, Result, ScalarField};
use std::ops::Range;

/// The dimensionality marker of the solver: `Dims<2>` (the default) or `Dims<3>`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dims<const D: usize>;

/// A field of `E`'s memory space in `D` dimensions.
type Field<E, T, const D: usize> = ScalarField<<E as ExecutionSpace>::Memory, T, D>;

/// The solver's kernels in `D` dimensions. Implemented for [`Dims<2>`] and [`Dims<3>`].
pub trait WaveKernels<const D: usize> {
    /// The absorbing layer's damping stencil, run on the layer's strips.
    type Absorb: Stencil;

    /// The PML's first kernel (`pml_psi`, `pml_psi_3d`): the memory variables `psi` of the
    /// first derivatives; its fields are `psi` per axis (x first), then `p` and `a`, `b` per
    /// axis (x first).
    type PmlPsi: Stencil;

    /// The PML's second kernel (`pml_update`, `pml_update_3d`): `zeta` and the correction of
    /// `pnew`; its fields are `pnew` and `zeta` per axis, then `p`, `psi` per axis, `kv2` and
    /// `a`, `b` per axis (each x first).
    type PmlUpdate: Stencil;

    /// One of the PML's kernels on `region`, a box of the layer (a face, edge or corner)
    /// in the layer along `axes` (outermost first), as a member of a
    /// [group launch](crate::launch::launch_group) writing the group's fields `outs` and
    /// reading `ins`: the first kernel (`update` false) or the second. On a face (one axis)
    /// the one-axis kernel runs, `pml_psi_<x|z>` (fields `psi`, then `p`, `a`, `b` of that
    /// axis) or `pml_update_<x|z>` (fields `pnew`, `zeta`, then `p`, `psi`, `kv2`, `a`, `b`),
    /// `pml_psi_3d_<x|y|z>` and `pml_update_3d_<x|y|z>` in 3D; on an edge of a 3D layer (two
    /// axes) the two-axis kernel, `pml_psi_3d_<xy|xz|yz>` or `pml_update_3d_<xy|xz|yz>`, with
    /// the fields of [`PmlPsi`](Self::PmlPsi) or [`PmlUpdate`](Self::PmlUpdate) for its two
    /// axes; on a corner (all axes) those two. The per-axis fields come x first. One choice
    /// for 2D and 3D (`D` is 2 or 3: the trait is implemented for those only).
    fn pml_member<E: ExecutionSpace, T: Real>(
        axes: &[usize],
        update: bool,
        region: [Range<usize>; D],
        outs: &[usize],
        ins: &[Arg],
    ) -> Member<E, T, D> {
        let member = match (D, axes, update) {
            (2, [0], false) => Member::new::<PmlPsiZ>,
            (2, [0], true) => Member::new::<PmlUpdateZ>,
            (2, [1], false) => Member::new::<PmlPsiX>,
            (2, [1], true) => Member::new::<PmlUpdateX>,
            (2, _, false) => Member::new::<PmlPsi>,
            (2, _, true) => Member::new::<PmlUpdate>,
            (_, [0], false) => Member::new::<PmlPsi3dZ>,
            (_, [0], true) => Member::new::<PmlUpdate3dZ>,
            (_, [1], false) => Member::new::<PmlPsi3dY>,
            (_, [1], true) => Member::new::<PmlUpdate3dY>,
            (_, [2], false) => Member::new::<PmlPsi3dX>,
            (_, [2], true) => Member::new::<PmlUpdate3dX>,
            (_, [0, 1], false) => Member::new::<PmlPsi3dYz>,
            (_, [0, 1], true) => Member::new::<PmlUpdate3dYz>,
            (_, [0, 2], false) => Member::new::<PmlPsi3dXz>,
            (_, [0, 2], true) => Member::new::<PmlUpdate3dXz>,
            (_, [1, 2], false) => Member::new::<PmlPsi3dXy>,
            (_, [1, 2], true) => Member::new::<PmlUpdate3dXy>,
            (_, _, false) => Member::new::<PmlPsi3d>,
            (_, _, true) => Member::new::<PmlUpdate3d>,
        };
        member(region, outs, ins, &[])
    }

    /// Sets the pressure at `at` to `value` (the paper's source).
    fn set_source<E: ExecutionSpace, T: Real>(
        space: &E,
        p: &mut Field<E, T, D>,
        value: T,
        at: [usize; D],
    ) -> Result<()>;

    /// Adds `value` to the pressure at `at` (the additive source).
    fn add_source<E: ExecutionSpace, T: Real>(
        space: &E,
        p: &mut Field<E, T, D>,
        value: T,
        at: [usize; D],
    ) -> Result<()>;

    /// `kv2 = dtdh2 v²`.
    fn kv2<E: ExecutionSpace, T: Real>(
        space: &E,
        kv2: &mut Field<E, T, D>,
        v: &Field<E, T, D>,
        dtdh2: T,
    ) -> Result<()>;

    /// The paper's split step (`fd_pzz`, `fd_pxx`, `fd_time`; 2D only).
    #[allow(clippy::too_many_arguments)]
    fn split_step<E: ExecutionSpace, T: Real>(
        space: &E,
        pnew: &mut Field<E, T, D>,
        p: &Field<E, T, D>,
        pold: &Field<E, T, D>,
        v: &Field<E, T, D>,
        pxx: &mut Field<E, T, D>,
        pzz: &mut Field<E, T, D>,
        dtdh2: T,
    ) -> Result<()>;

    /// The fused step of space order `order` on the box `region` of its domain only (one
    /// range per axis, outermost first): the temporally blocked run (`simulator/blocked.rs`)
    /// runs it band by band.
    #[allow(clippy::too_many_arguments)]
    fn fused_step_in<E: ExecutionSpace, T: Real>(
        space: &E,
        order: usize,
        region: [Range<usize>; D],
        pnew: &mut Field<E, T, D>,
        p: &Field<E, T, D>,
        pold: &Field<E, T, D>,
        kv2: &Field<E, T, D>,
    ) -> Result<()>;

    /// The IR's metadata (radius, fields, bytes per point) of the fused step of space order
    /// `order`.
    fn fused_step_info(order: usize) -> Result<&'static StencilInfo>;
}

impl WaveKernels<2> for Dims<2> {
    type Absorb = FdAbsorb;

    fn fused_step_in<E: ExecutionSpace, T: Real>(
        space: &E,
        order: usize,
        [rows, cols]: [Range<usize>; 2],
        pnew: &mut Field<E, T, 2>,
        p: &Field<E, T, 2>,
        pold: &Field<E, T, 2>,
        kv2: &Field<E, T, 2>,
    ) -> Result<()> {
        fd_step_in(space, order, rows, cols, pnew, p, pold, kv2)
    }

    type PmlPsi = PmlPsi;
    type PmlUpdate = PmlUpdate;

    fn fused_step_info(order: usize) -> Result<&'static StencilInfo> {
        fd_step_info(order)
    }

    fn set_source<E: ExecutionSpace, T: Real>(
        space: &E,
        p: &mut Field<E, T, 2>,
        value: T,
        [z, x]: [usize; 2],
    ) -> Result<()> {
        add_source(space, p, value, z, x)
    }

    fn add_source<E: ExecutionSpace, T: Real>(
        space: &E,
        p: &mut Field<E, T, 2>,
        value: T,
        [z, x]: [usize; 2],
    ) -> Result<()> {
        inject_source(space, p, value, z, x)
    }

    fn kv2<E: ExecutionSpace, T: Real>(
        space: &E,
        kv2: &mut Field<E, T, 2>,
        v: &Field<E, T, 2>,
        dtdh2: T,
    ) -> Result<()> {
        fd_kv2(space, kv2, v, dtdh2)
    }

    fn split_step<E: ExecutionSpace, T: Real>(
        space: &E,
        pnew: &mut Field<E, T, 2>,
        p: &Field<E, T, 2>,
        pold: &Field<E, T, 2>,
        v: &Field<E, T, 2>,
        pxx: &mut Field<E, T, 2>,
        pzz: &mut Field<E, T, 2>,
        dtdh2: T,
    ) -> Result<()> {
        fd_pzz(space, pzz, p)?;
        fd_pxx(space, pxx, p)?;
        fd_time(space, pnew, p, pold, v, pxx, pzz, dtdh2)
    }
}

impl WaveKernels<3> for Dims<3> {
    type Absorb = FdAbsorb3d;

    fn fused_step_in<E: ExecutionSpace, T: Real>(
        space: &E,
        order: usize,
        region: [Range<usize>; 3],
        pnew: &mut Field<E, T, 3>,
        p: &Field<E, T, 3>,
        pold: &Field<E, T, 3>,
        kv2: &Field<E, T, 3>,
    ) -> Result<()> {
        fd_step_3d_in(space, order, region, pnew, p, pold, kv2)
    }

    type PmlPsi = PmlPsi3d;
    type PmlUpdate = PmlUpdate3d;

    fn fused_step_info(order: usize) -> Result<&'static StencilInfo> {
        fd_step_3d_info(order)
    }

    fn set_source<E: ExecutionSpace, T: Real>(
        space: &E,
        p: &mut Field<E, T, 3>,
        value: T,
        [z, y, x]: [usize; 3],
    ) -> Result<()> {
        add_source_3d(space, p, value, z, y, x)
    }

    fn add_source<E: ExecutionSpace, T: Real>(
        space: &E,
        p: &mut Field<E, T, 3>,
        value: T,
        [z, y, x]: [usize; 3],
    ) -> Result<()> {
        inject_source_3d(space, p, value, z, y, x)
    }

    fn kv2<E: ExecutionSpace, T: Real>(
        space: &E,
        kv2: &mut Field<E, T, 3>,
        v: &Field<E, T, 3>,
        dtdh2: T,
    ) -> Result<()> {
        fd_kv2_3d(space, kv2, v, dtdh2)
    }

    fn split_step<E: ExecutionSpace, T: Real>(
        _: &E,
        _: &mut Field<E, T, 3>,
        _: &Field<E, T, 3>,
        _: &Field<E, T, 3>,
        _: &Field<E, T, 3>,
        _: &mut Field<E, T, 3>,
        _: &mut Field<E, T, 3>,
        _: T,
    ) -> Result<()> {
        Err(Error::invalid(
            Param::Other("kernels".into()),
            "split",
            "the split kernels are the paper's 2D kernels; a 3D run uses the fused step",
        ))
    }
}

/// The `D` trailing entries of `[z, y, x]`: `[z, x]`-style for 2D (the `y` entry dropped),
/// all three in 3D.
pub(super) fn trailing<const D: usize>(zyx: [usize; 3]) -> [usize; D] {
    match D {
        2 => std::array::from_fn(|i| [zyx[0], zyx[2]][i]),
        _ => std::array::from_fn(|i| zyx[3 - D + i]),
    }
}
