//! The perfectly matched layer (PML): its parameters ([`PmlParams`]), its damping profiles
//! ([`pml_profile`]), the boxes of a layer ([`layer_boxes`]: faces, edges and corners of a
//! box in any number of dimensions, each point once) and its fields and per-step work
//! (`Pml`, crate-private, run by `simulator.rs` after the interior step).
//!
//! The formulation is the convolutional PML (Komatitsch & Martin 2007) for the second-order
//! acoustic equation, in the form of Pasalic & McGarry (2010): in the layer each derivative
//! is stretched, `∂x̃ = ∂x / s_x`, `s_x = 1 + d_x / (α + iω)`, and
//!
//! ```text
//! ∂x̃² p = ∂x² p + ∂x ψx + ζx,   ψx = b ψx + a ∂x p,   ζx = b ζx + a (∂x² p + ∂x ψx)
//! b = exp(-(d + α) dt),   a = d / (d + α) (b - 1)
//! ```
//!
//! (the same along z, and in 3D along y). The interior kernel is unchanged: it computes the
//! whole field, and the PML's two kernels (`pml_psi`, `pml_update` in [`crate::kernels`], or
//! `pml_psi_3d`, `pml_update_3d` in 3D, chosen by [`WaveKernels`](super::WaveKernels)) then
//! update the memory variables and add `kv2 (∂x ψx + ζx + ∂z ψz + ζz)` (plus the y terms) to
//! the new pressure, on the layer's boxes only. Profiles: `d(q) = d0 q^N` with `q` the depth into the layer (0 at its inner edge, 1
//! at the grid's edge), `d0 = -(N + 1) v ln(R) / (2 L)` for a layer `L = width · dh` thick,
//! `v` the largest velocity in that side's slab of the layer ([`side_velocities`]), `R` the
//! target reflection coefficient; `α(q) = α_max (1 - q)`. So `a` and `b` depend on the depth
//! into the layer alone: they are 1D profiles per axis and side (`in(x)`, `in(z)` in the
//! DSL), one value per column or row, not fields. Where the slab's medium is slower than `v`
//! the layer damps more than `R` asks (in theory its reflection is `R^(v/v_local)` there).
//!
//! What is not here: the sponge layer (`physics.rs`, `fd_absorb`), the time loop
//! (`simulator.rs`), the parameters' place in [`WaveConfig`](super::WaveConfig) and their
//! validation (`config.rs`).

use super::dims::{Dims, WaveKernels};
use crate::launch::{Arg, GroupPlan};
use crate::{Error, ExecutionSpace, Param, Real, Result, ScalarField};
use smallvec::{smallvec, SmallVec};
use std::ops::Range;

/// Default target reflection coefficient `R` of the PML (amplitude, normal incidence).
pub const DEFAULT_PML_R: f64 = 1e-4;
/// Default polynomial degree `N` of the PML's damping profile.
pub const DEFAULT_PML_DEGREE: f64 = 2.0;
/// Default CPML frequency term at the layer's inner edge, as a multiple of `π fpeak`
/// (Komatitsch & Martin 2007): `α_max = π fpeak`.
pub const DEFAULT_PML_ALPHA_OVER_PI_FPEAK: f64 = 1.0;
/// Largest accepted polynomial degree of the profile.
pub const MAX_PML_DEGREE: f64 = 8.0;
/// The PML kernels' radius: their derivatives are 4th order, whatever the interior's order.
pub(crate) const PML_RADIUS: usize = 2;

/// The PML's profile parameters (see the module docs for the formulas).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PmlParams {
    /// Target reflection coefficient `R`, in (0, 1). Default [`DEFAULT_PML_R`].
    pub reflection: f64,
    /// Polynomial degree `N` of `d(q) = d0 q^N`, in [1, [`MAX_PML_DEGREE`]]. Default
    /// [`DEFAULT_PML_DEGREE`].
    pub degree: f64,
    /// CPML frequency term `α_max` at the inner edge in 1/s, 0 or more; `None`: `π fpeak`.
    pub alpha: Option<f64>,
}

impl Default for PmlParams {
    fn default() -> Self {
        PmlParams {
            reflection: DEFAULT_PML_R,
            degree: DEFAULT_PML_DEGREE,
            alpha: None,
        }
    }
}

impl PmlParams {
    /// `α_max` for a wavelet of peak frequency `fpeak`: [`alpha`](Self::alpha) or `π fpeak`.
    pub fn alpha_max(&self, fpeak: f64) -> f64 {
        self.alpha
            .unwrap_or(DEFAULT_PML_ALPHA_OVER_PI_FPEAK * std::f64::consts::PI * fpeak)
    }

    /// Checks the parameters; the error names the value, its range and the default.
    pub fn validate(&self) -> Result<()> {
        let r = self.reflection;
        if !(r.is_finite() && r > 0.0 && r < 1.0) {
            return Err(Error::invalid(
                Param::PmlReflection,
                r,
                format!("the target reflection coefficient must lie strictly between 0 and 1 (default {DEFAULT_PML_R:e}; 1e-3 to 1e-5 are usual)"),
            ));
        }
        let n = self.degree;
        if !(n.is_finite() && (1.0..=MAX_PML_DEGREE).contains(&n)) {
            return Err(Error::invalid(
                Param::PmlDegree,
                n,
                format!("the damping profile's polynomial degree must be a number from 1 to {MAX_PML_DEGREE} (default {DEFAULT_PML_DEGREE}; 2 or 3 are usual)"),
            ));
        }
        if let Some(a) = self.alpha {
            if !(a.is_finite() && a >= 0.0) {
                return Err(Error::invalid(
                    Param::PmlAlpha,
                    a,
                    "the CPML frequency term must be a finite number of 1/s, 0 or more (default π fpeak)",
                ));
            }
        }
        Ok(())
    }
}

/// The PML's coefficients `(a, b)` of the recursive convolution at depth `depth` cells into
/// a layer of `width` cells (`depth` 0: outside the layer, `(0, 1)`), for the reference
/// velocity `v` (the solver passes the largest of the side's slab):
/// `d = d0 q^N`, `α = α_max (1 - q)`, `q = depth / width`, `b = exp(-(d + α) dt)`,
/// `a = d (b - 1) / (d + α)`.
///
/// ```
/// use ppstencil::solver::{pml_profile, PmlParams};
/// let params = PmlParams { reflection: 1e-3, degree: 2.0, alpha: Some(0.0) };
/// assert_eq!(pml_profile(&params, 0, 20, 2000.0, 5.0, 1e-3, 15.0), (0.0, 1.0));
/// // At the outer edge: d0 = -(2 + 1) 2000 ln(1e-3) / (2 · 100 m) = 207.2 / s.
/// let (a, b) = pml_profile(&params, 20, 20, 2000.0, 5.0, 1e-3, 15.0);
/// let d0 = -3.0 * 2000.0 * 1e-3f64.ln() / 200.0;
/// assert!((b - (-d0 * 1e-3f64).exp()).abs() < 1e-15 && (a - (b - 1.0)).abs() < 1e-15);
/// ```
pub fn pml_profile(
    params: &PmlParams,
    depth: usize,
    width: usize,
    v: f64,
    dh: f64,
    dt: f64,
    fpeak: f64,
) -> (f64, f64) {
    if depth == 0 || width == 0 {
        return (0.0, 1.0);
    }
    let q = depth as f64 / width as f64;
    let n = params.degree;
    let d0 = -(n + 1.0) * v * params.reflection.ln() / (2.0 * width as f64 * dh);
    let d = d0 * q.powf(n);
    let alpha = params.alpha_max(fpeak) * (1.0 - q);
    let b = (-(d + alpha) * dt).exp();
    let a = if d + alpha > 0.0 {
        d * (b - 1.0) / (d + alpha)
    } else {
        0.0
    };
    (a, b)
}

/// The boxes of a layer `width` cells thick inside a grid of `shape` (any number of
/// dimensions), without the outer `edge` cells of every side (the border the kernels do not
/// write): every point at least `edge` from every side and less than `width` from some side,
/// each exactly once, in `2 D` boxes (none empty when `edge < width`). Axis `k` contributes
/// a low and a high slab, spanning the layer's inner part along the axes before `k` and the
/// whole range along the axes after it, so the faces, edges and corners of the box are
/// covered once: in 2D, the top and bottom strips with the corners, then the left and right
/// strips between them; in 3D, six slabs.
pub(crate) fn layer_boxes<const D: usize>(
    shape: [usize; D],
    width: usize,
    edge: usize,
) -> Vec<[Range<usize>; D]> {
    let mut boxes = Vec::new();
    if width <= edge || shape.iter().any(|&n| n < 2 * width) {
        return boxes;
    }
    for k in 0..D {
        for side in [edge..width, shape[k] - width..shape[k] - edge] {
            let b: [Range<usize>; D] = std::array::from_fn(|j| match j.cmp(&k) {
                std::cmp::Ordering::Less => width..shape[j] - width,
                std::cmp::Ordering::Equal => side.clone(),
                std::cmp::Ordering::Greater => edge..shape[j] - edge,
            });
            if b.iter().all(|r| !r.is_empty()) {
                boxes.push(b);
            }
        }
    }
    boxes
}

/// One box of the PML's layer ([`pml_boxes`]): its ranges, and the axes along which its
/// points lie in the layer (one on a face, two on an edge of a 3D box, all on a corner).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PmlBox<const D: usize> {
    /// The box's ranges, outermost axis first.
    pub region: [Range<usize>; D],
    /// The axes along which the box is in the layer, outermost first (`[0]`: the top and
    /// bottom faces, `[0, 1]`: a 2D corner).
    pub axes: Vec<usize>,
}

/// The layer of [`layer_boxes`] (the same points, each once) cut where the layer's kind of
/// point changes: along every axis the low layer `edge..width`, the middle
/// `width..n - width` and the high layer `n - width..n - edge`; every combination but all
/// middles is a box, `3^D - 1` of them (8 in 2D, 26 in 3D), in row-major order of those
/// segments. A box in the layer along one axis is a face, where the PML runs its one-axis
/// kernels (`pml_psi_x`, ...): they move half the bytes of the full ones in 2D, a third in
/// 3D; on an edge of a 3D box (two axes) it runs the two-axis kernels (`pml_psi_3d_xy`, ...),
/// two thirds; the full kernels only on the corners.
pub(crate) fn pml_boxes<const D: usize>(
    shape: [usize; D],
    width: usize,
    edge: usize,
) -> Vec<PmlBox<D>> {
    let mut boxes = Vec::new();
    if width <= edge || shape.iter().any(|&n| n < 2 * width) {
        return boxes;
    }
    // Segment `s` (0 low layer, 1 middle, 2 high layer) of axis `k`.
    let segment = |k: usize, s: usize| match s {
        0 => edge..width,
        1 => width..shape[k] - width,
        _ => shape[k] - width..shape[k] - edge,
    };
    for combo in 0..3usize.pow(D as u32) {
        // The segment of axis k is the k-th digit in base 3, axis 0 the most significant.
        let digit = |k: usize| combo / 3usize.pow((D - 1 - k) as u32) % 3;
        let region: [Range<usize>; D] = std::array::from_fn(|k| segment(k, digit(k)));
        let axes: Vec<usize> = (0..D).filter(|&k| digit(k) != 1).collect();
        if axes.is_empty() || region.iter().any(|r| r.is_empty()) {
            continue;
        }
        boxes.push(PmlBox { region, axes });
    }
    boxes
}

/// The reference velocity of each side of a layer `width` cells wide in a grid of `shape`
/// (index `2 k + side`, side 0 the low one, axis `k` outermost first): the largest
/// `velocity` in that side's slab of the layer (its `width` cells along `k`, the whole grid
/// along the other axes). The profiles of that side take `d0` from it: where the slab's
/// velocity is uniform (a face of a layered model, every face of a homogeneous one) that is
/// the local velocity; where it is not, the slower parts are damped more than `R` asks, as
/// in every CPML with one profile per axis (`docs/design/0012-pml-storage-and-profiles.md`).
pub(crate) fn side_velocities<const D: usize>(
    shape: [usize; D],
    width: usize,
    velocity: impl Fn([usize; D]) -> f64,
) -> Vec<f64> {
    let mut out = Vec::with_capacity(2 * D);
    for axis in 0..D {
        let w = width.min(shape[axis]);
        for slab in [0..w, shape[axis] - w..shape[axis]] {
            let mut ranges: [Range<usize>; D] = shape.map(|n| 0..n);
            ranges[axis] = slab;
            out.push(box_points(&ranges).map(&velocity).fold(0.0, f64::max));
        }
    }
    out
}

/// The points of box `b`, each as its index per axis, in row-major order.
fn box_points<const D: usize>(b: &[Range<usize>; D]) -> impl Iterator<Item = [usize; D]> + '_ {
    let n: usize = b.iter().map(|r| r.len()).product();
    (0..n).map(move |mut k| {
        let mut idx = [0usize; D];
        for j in (0..D).rev() {
            idx[j] = b[j].start + k % b[j].len();
            k /= b[j].len();
        }
        idx
    })
}

/// Depth of index `i` into a layer of `width` cells at both ends of `0..n`: `width` at the
/// outermost cell, 1 at the innermost layer cell, 0 in the interior (the sponge's rule).
fn depth(i: usize, n: usize, width: usize) -> usize {
    super::physics::layer_depth(i, n, width)
}

/// A prepared PML in memory space `M`, `D` dimensions: the profiles, the memory variables
/// and the boxes it runs on. Per axis `k` (outermost first: z, (y), x) and side of the grid
/// (low, high) the memory variables `psi`, `zeta`, each a [window](ScalarField#windows)
/// holding only that side's slab of the layer along `k` (plus the [`PML_RADIUS`] cells the
/// kernels read beyond it), the whole grid along the other axes (2.4 MB on the paper grid,
/// against 280 MB for whole-grid fields), and the profiles `a`, `b` along `k` over the same
/// slab (shape 1 along the other axes: `width + 2` values each); plus `kv2` with the split
/// kernels, which have no `kv2` of their own. A side's slab is also what one row of the
/// kernels reads from them: one contiguous stream per field rather than a few points of every
/// grid row (the x faces cost half as much). The 1D profiles spare the faces streaming `a`
/// and `b` at every point of the slab, about 2.5 % of the rigid step on the paper grid
/// (`docs/design/0012-pml-storage-and-profiles.md`).
pub(crate) struct Pml<E: ExecutionSpace, T: Real, const D: usize> {
    /// Index `2 k + side` (side 0 low, 1 high); `None` where a part of the grid (a rank's
    /// fields in a distributed run) does not reach that side's slab.
    layer: Vec<Option<LayerFields<E::Memory, T, D>>>,
    /// `(dt/dh)² v²` for the split kernels (the fused step brings its own).
    kv2: Option<ScalarField<E::Memory, T, D>>,
    /// Where `psi` is computed: the boxes of the layer ([`pml_boxes`]), or for a part of
    /// the grid the layer's boxes cut to the part's points and the [`PML_RADIUS`] cells
    /// around them.
    psi_boxes: Vec<PmlBox<D>>,
    /// Where `zeta` and the pressure are updated: the boxes of the layer, inside the
    /// interior's zero border (for a part of the grid, cut to its points).
    boxes: Vec<PmlBox<D>>,
    /// The checked launches of [`step`](Self::step), per range of the second axis and interior step it was called
    /// with: one serves every band of a 2D blocked run (each band launches it on its rows),
    /// one per tile in 3D. Checking the groups at every call costs 3-4 % of the step on
    /// two threads, and a plan per band, each cold by the time its band comes round again,
    /// about 2 % more (`docs/design/0012-pml-storage-and-profiles.md`). At most
    /// [`MAX_PLANS`] are kept.
    plans: Vec<(PlanKey<D>, Plans<E, T, D>)>,
}

/// The two groups of one call of [`Pml::step`], checked.
type Plans<E, T, const D: usize> = [GroupPlan<E, T, D>; 2];

/// What [`Pml::step`]'s groups depend on besides the fields' shapes: the range of the second
/// axis (`PmlRows`' columns, or rows in 3D) and the interior step's space order and box, the
/// box over every plane the step's radius allows (the step runs it cut to the call's planes).
#[derive(Clone, Debug, PartialEq, Eq)]
struct PlanKey<const D: usize> {
    cols: Range<usize>,
    interior: Option<(usize, [Range<usize>; D])>,
}

/// A short list of fields, on the stack: [`Pml::step`] runs band after band.
type Fields<X> = SmallVec<[X; 16]>;

/// The most group plans a [`Pml`] keeps (then it starts over), found by a linear search: a
/// blocked run needs one per tile (3D) and interior box: on the paper grid one, and one more
/// without the interior step for the band of an additive source inside the layer; a few tens
/// in 3D. A plan is a few kB to a few tens of kB (a 3D group has a few tens of members), so
/// the cap also bounds the memory.
const MAX_PLANS: usize = 256;

/// The fields of one side of the layer along one axis, over the same slab: the profiles `a`,
/// `b` along the axis and the memory variables `psi`, `zeta` (windows).
struct LayerFields<M: crate::MemorySpace, T: Real, const D: usize> {
    a: ScalarField<M, T, D>,
    b: ScalarField<M, T, D>,
    psi: ScalarField<M, T, D>,
    zeta: ScalarField<M, T, D>,
}

/// The part of its boxes one call of `Pml::step` updates, as ranges along the two outer axes
/// (rows and columns in 2D, planes and rows in 3D): `psi`, then `zeta` and the new pressure,
/// there. The unblocked step updates all ([`PmlRows::ALL`]); a blocked run
/// (`simulator/blocked.rs`) goes band by band and tile by tile, none of which stops inside the
/// layer's slab across its axis (`StepShape::ends`), so every `psi` an update reads along
/// that axis is computed in the same call, and along the other axes in the same rows.
#[derive(Clone, Debug)]
pub(crate) struct PmlRows(pub(crate) [Range<usize>; 2]);

impl PmlRows {
    /// Every point: the whole layer.
    pub(crate) const ALL: PmlRows = PmlRows([0..usize::MAX, 0..usize::MAX]);
}

/// The halo a part of the grid needs for its PML (distributed runs): the update of a point
/// reads `psi` [`PML_RADIUS`] cells away, and each `psi` reads the pressure [`PML_RADIUS`]
/// cells further; a part computes those `psi` itself rather than exchanging them.
pub(crate) const PML_HALO: usize = 2 * PML_RADIUS;

impl<E: ExecutionSpace, T: Real, const D: usize> Pml<E, T, D> {
    /// The PML of `c` (`c.absorb` cells, `c.pml` parameters) for the velocity model `v` (host)
    /// with the interior's zero border `edge` cells wide; `own_kv2` with the split kernels.
    pub(crate) fn prepare(
        c: &super::WaveConfig,
        v: &ScalarField<crate::MemSpaceHost, T, D>,
        edge: usize,
        own_kv2: bool,
    ) -> Result<Self> {
        let boxes = pml_boxes(v.shape(), c.absorb, edge.max(PML_RADIUS));
        let v_ref = side_velocities(v.shape(), c.absorb, |i| v[i].to_f64());
        Self::prepare_part(
            c,
            v,
            &v_ref,
            [0; D],
            v.shape(),
            boxes.clone(),
            boxes,
            own_kv2,
        )
    }

    /// The PML of a part of a grid of shape `global` (a rank's local fields in a distributed
    /// run): `v` is the part's velocity (for `kv2`), its point 0 being the grid's point
    /// `origin`, so the profiles are those of the whole grid's layer at the same points, from
    /// `v_ref`, the whole grid's [`side_velocities`]; `psi_boxes` and `boxes` are where the part
    /// computes `psi` and the update, in its own indices.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare_part(
        c: &super::WaveConfig,
        v: &ScalarField<crate::MemSpaceHost, T, D>,
        v_ref: &[f64],
        origin: [usize; D],
        global: [usize; D],
        psi_boxes: Vec<PmlBox<D>>,
        boxes: Vec<PmlBox<D>>,
        own_kv2: bool,
    ) -> Result<Self> {
        let (shape, w) = (v.shape(), c.absorb);
        type HostN<T, const D: usize> = ScalarField<crate::MemSpaceHost, T, D>;
        let dtdh2 = (c.dt / c.dh) * (c.dt / c.dh);
        let kv2 = if own_kv2 {
            let mut host = HostN::<T, D>::zeros(shape)?;
            for (e, vel) in host.as_mut_slice().iter_mut().zip(v.as_slice()) {
                let vel = vel.to_f64();
                *e = T::lit(dtdh2 * vel * vel);
            }
            Some(ScalarField::from_host(&host)?)
        } else {
            None
        };
        // Per axis and side, the window of the part's fields that holds the side's slab of the
        // layer plus PML_RADIUS cells (in the part's indices), and its profiles: `pml_profile`
        // at each point's depth along the axis, `(0, 1)` (depth 0) on the extra cells.
        let mut layer = Vec::with_capacity(2 * D);
        for axis in 0..D {
            let reach = w + PML_RADIUS;
            let slabs = [0..reach, global[axis].saturating_sub(reach)..global[axis]];
            for (side, slab) in slabs.into_iter().enumerate() {
                let v_ref = v_ref[2 * axis + side];
                let (from, to) = (origin[axis], origin[axis] + shape[axis]);
                let (lo, hi) = (
                    slab.start.max(from) - from,
                    slab.end.min(to).max(from) - from,
                );
                if lo >= hi {
                    layer.push(None);
                    continue;
                }
                let mut wshape = shape;
                wshape[axis] = hi - lo;
                let mut at = [0; D];
                at[axis] = lo;
                // The profiles `a`, `b` along `axis`: one value per index along it (shape 1
                // along the other axes), at the depth of that index into the layer.
                let mut pshape = [1; D];
                pshape[axis] = hi - lo;
                let (mut ha, mut hb) =
                    (HostN::<T, D>::zeros(pshape)?, HostN::<T, D>::zeros(pshape)?);
                let values = ha.as_mut_slice().iter_mut().zip(hb.as_mut_slice());
                for (along, (ea, eb)) in (lo..hi).zip(values) {
                    let d = depth(origin[axis] + along, global[axis], w);
                    let (pa, pb) = pml_profile(&c.pml, d, w, v_ref, c.dh, c.dt, c.fpeak);
                    (*ea, *eb) = (T::lit(pa), T::lit(pb));
                }
                let window = |h: &HostN<T, D>| -> Result<ScalarField<E::Memory, T, D>> {
                    Ok(ScalarField::from_host(h)?.with_origin(at))
                };
                layer.push(Some(LayerFields {
                    a: window(&ha)?,
                    b: window(&hb)?,
                    psi: ScalarField::zeros(wshape)?.with_origin(at),
                    zeta: ScalarField::zeros(wshape)?.with_origin(at),
                }));
            }
        }
        Ok(Pml {
            layer,
            kv2,
            psi_boxes,
            boxes,
            plans: Vec::new(),
        })
    }

    /// The PML's part of one time step, after the interior step wrote `pnew` from `p` (or
    /// with it: `interior`): updates `psi` on every box, then `zeta` and `pnew` (two passes,
    /// because the update reads `psi` at neighbours), with the kernels of
    /// [`WaveKernels`](super::WaveKernels) (`pml_psi`, `pml_update`; `_3d` in 3D). `kv2`: the
    /// fused step's `(dt/dh)² v²` (`None` with the split kernels: the PML's own). Only the
    /// boxes' parts in `rows` (a band and a tile of a blocked run); the interior step's rows
    /// (planes) must be all of those its radius allows in `rows`' planes, as a band's are.
    ///
    /// The groups are planned once per tile (`rows`' second range) and interior step, and
    /// launched on the band's planes ([`GroupPlan::launch_planes`]): one plan serves every
    /// band, so its metadata stay in cache.
    ///
    /// The launches are two [groups](crate::launch::launch_group), so that the host's rayon
    /// forks and joins its pool twice per call rather than twice per box. The first: the
    /// interior step (when given), `psi` on every box, and the update of the boxes that
    /// read `psi` along the inner axes only (not in the layer along the outermost axis: the
    /// side strips in 2D; the x and y faces and the edges between them in 3D), which read
    /// it in their own rows (planes). The second: the update of the other boxes, which lie
    /// in the layer's slabs across the outermost axis and read `psi` rows away. Every
    /// update thus reads `psi` of this step, and the result is that of the two passes over
    /// all boxes, bit for bit.
    pub(crate) fn step(
        &mut self,
        space: &E,
        pnew: &mut ScalarField<E::Memory, T, D>,
        p: &ScalarField<E::Memory, T, D>,
        kv2: Option<&ScalarField<E::Memory, T, D>>,
        rows: &PmlRows,
        interior: Option<Interior<'_, E::Memory, T, D>>,
    ) -> Result<()>
    where
        Dims<D>: WaveKernels<D>,
    {
        let Some(kv2) = kv2.or(self.kv2.as_ref()) else {
            return Err(Error::invalid(
                Param::Velocity,
                "none",
                "the PML needs (dt/dh)² v²",
            ));
        };
        // The groups' fields: written `pnew`, then per side of the layer `psi`, `zeta`;
        // read `p`, `kv2`, the interior's `pold`, then per side `a`, `b`. `at[i]`: where
        // side `i`'s fields are, as (psi, zeta, a, b) indices.
        let pnew_shape = pnew.shape();
        let mut outs: Fields<&mut ScalarField<E::Memory, T, D>> = smallvec![pnew];
        let mut ins: Fields<&ScalarField<E::Memory, T, D>> = smallvec![p, kv2];
        if let Some(i) = &interior {
            ins.push(i.pold);
        }
        let mut at: Fields<Option<(usize, usize, usize, usize)>> =
            smallvec![None; self.layer.len()];
        for (i, side) in self.layer.iter_mut().enumerate() {
            if let Some(LayerFields { a, b, psi, zeta }) = side {
                at[i] = Some((outs.len(), outs.len() + 1, ins.len(), ins.len() + 1));
                outs.extend([psi, zeta]);
                ins.extend([&*a, &*b]);
            }
        }
        // The planes the call runs, and the interior step's box over every plane its radius
        // allows, which cut to those planes must be the call's box.
        let planes = rows.0[0].clone();
        let interior = match interior {
            Some(i) => {
                let mut all = i.region.clone();
                all[0] = i.order / 2..pnew_shape[0].saturating_sub(i.order / 2);
                let cut = all[0].start.max(planes.start)..all[0].end.min(planes.end);
                if cut != i.region[0] {
                    return Err(Error::invalid(
                        "PML step",
                        format!("interior rows {:?} on planes {planes:?}", i.region[0]),
                        "the interior step runs on every plane of the call that its radius allows",
                    ));
                }
                Some(Interior { region: all, ..i })
            }
            None => None,
        };
        let key = PlanKey {
            cols: rows.0[1].clone(),
            interior: interior.as_ref().map(|i| (i.order, i.region.clone())),
        };
        let found = (self.plans.iter()).position(|(k, _)| *k == key);
        let i = match found {
            Some(i) => i,
            None => {
                let plans = Self::plan(
                    &self.psi_boxes,
                    &self.boxes,
                    &outs,
                    &ins,
                    &at,
                    &rows.0[1],
                    &interior,
                )?;
                if self.plans.len() >= MAX_PLANS {
                    self.plans.clear();
                }
                self.plans.push((key, plans));
                self.plans.len() - 1
            }
        };
        let plans = &self.plans[i].1;
        plans[0].launch_planes(space, &mut outs, &ins, planes.clone())?;
        plans[1].launch_planes(space, &mut outs, &ins, planes)?;
        Ok(())
    }

    /// The two groups of [`step`](Self::step) on the columns `cols` of the layer (rows in 3D;
    /// the launches cut them to their planes), checked against its fields `outs` and `ins`
    /// (`at`: where each side's fields are in them).
    #[allow(clippy::too_many_arguments)]
    fn plan(
        psi_boxes: &[PmlBox<D>],
        boxes: &[PmlBox<D>],
        outs: &[&mut ScalarField<E::Memory, T, D>],
        ins: &[&ScalarField<E::Memory, T, D>],
        at: &[Option<(usize, usize, usize, usize)>],
        cols: &Range<usize>,
        interior: &Option<Interior<'_, E::Memory, T, D>>,
    ) -> Result<[GroupPlan<E, T, D>; 2]>
    where
        Dims<D>: WaveKernels<D>,
    {
        // A box cut to `cols` along the second axis (`None`: nothing left); the launches cut
        // it to their planes.
        let cut = |b: &[Range<usize>; D]| {
            let mut b = b.clone();
            b[1] = b[1].start.max(cols.start)..b[1].end.min(cols.end);
            (!b[1].is_empty()).then_some(b)
        };
        // Per axis of a box, the first side whose window holds it along that axis (on a
        // grid narrower than two slabs, the sides' windows overlap), x first (the axes in
        // reverse order).
        let sides = |b: &PmlBox<D>| -> Result<Vec<(usize, usize, usize, usize)>> {
            let holds = |i: usize| {
                let Some((k, ..)) = at[i] else { return false };
                let f = &outs[k];
                let axis = i / 2;
                let (from, len) = (f.origin()[axis], f.shape()[axis]);
                from <= b.region[axis].start && b.region[axis].end <= from + len
            };
            b.axes
                .iter()
                .rev()
                .map(|&k| (2 * k..2 * k + 2).find(|&i| holds(i)).and_then(|i| at[i]))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    Error::invalid(
                        "PML box",
                        format!("{:?}", b.region),
                        "it must lie in one side of the layer along each of its axes",
                    )
                })
        };
        // The kernels: `psi` per box (fields `psi` per axis; `p`, `a`, `b` per axis), the
        // update per box (`pnew`, `zeta` per axis; `p`, `psi` per axis, `kv2`, `a`, `b` per
        // axis).
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        if let Some(i) = interior {
            let reads = [Arg::In(0), Arg::In(2), Arg::In(1)];
            first.push(crate::kernels::fd_step_member(
                i.order,
                i.region.clone(),
                &[0],
                &reads,
            )?);
        }
        for (update, boxes) in [(false, psi_boxes), (true, boxes)] {
            for b in boxes {
                let Some(region) = cut(&b.region) else {
                    continue;
                };
                let fields = sides(b)?;
                let ab = fields
                    .iter()
                    .flat_map(|&(.., a, b)| [Arg::In(a), Arg::In(b)]);
                if !update {
                    let outs: Vec<usize> = fields.iter().map(|f| f.0).collect();
                    let ins: Vec<Arg> = std::iter::once(Arg::In(0)).chain(ab).collect();
                    first.push(Dims::<D>::pml_member(&b.axes, false, region, &outs, &ins));
                    continue;
                }
                let outs: Vec<usize> = std::iter::once(0)
                    .chain(fields.iter().map(|f| f.1))
                    .collect();
                let ins: Vec<Arg> = std::iter::once(Arg::In(0))
                    .chain(fields.iter().map(|f| Arg::Out(f.0)))
                    .chain([Arg::In(1)])
                    .chain(ab)
                    .collect();
                let member = Dims::<D>::pml_member(&b.axes, true, region, &outs, &ins);
                // Along the outermost axis, an update reads `psi` rows away from its own.
                if b.axes.contains(&0) {
                    rest.push(member);
                } else {
                    first.push(member);
                }
            }
        }
        let outs = crate::launch::shared(outs);
        Ok([
            GroupPlan::new(&outs, ins, &first)?,
            GroupPlan::new(&outs, ins, &rest)?,
        ])
    }

    /// Whether the PML updates the pressure at `point` (it lies in one of its boxes): an
    /// additive source there must be added before the PML's update, so the interior step
    /// does not join the PML's group then.
    pub(crate) fn updates(&self, point: [usize; D]) -> bool {
        self.boxes
            .iter()
            .any(|b| (0..D).all(|a| b.region[a].contains(&point[a])))
    }
}

/// The interior step when it runs with the PML's kernels ([`Pml::step`]): the fused step of
/// space order `order` on `region`, from `p` (the step's level) and `pold`.
pub(crate) struct Interior<'f, M: crate::MemorySpace, T: Real, const D: usize> {
    /// The fused step's space order.
    pub(crate) order: usize,
    /// Its box (the whole domain, or a band and tile of a blocked run).
    pub(crate) region: [Range<usize>; D],
    /// The level before `p`.
    pub(crate) pold: &'f ScalarField<M, T, D>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layer's slabs of a 10 x 12 grid, 3 cells wide without the 1-cell border, by hand.
    #[test]
    fn layer_boxes_cover_the_layer_in_slabs() {
        let b = layer_boxes([10, 12], 3, 1);
        assert_eq!(
            b,
            vec![[1..3, 1..11], [7..9, 1..11], [3..7, 1..3], [3..7, 9..11]]
        );
        assert!(layer_boxes([10, 12], 1, 1).is_empty());
    }

    /// Corners, faces and a 3D edge of the PML's boxes, by hand.
    #[test]
    fn pml_boxes_are_corners_faces_and_edges() {
        let b = pml_boxes([10, 12], 3, 1);
        assert_eq!(b.len(), 8);
        assert_eq!(
            (b[0].region.clone(), b[0].axes.clone()),
            ([1..3, 1..3], vec![0, 1])
        ); // a corner
        assert_eq!(
            (b[1].region.clone(), b[1].axes.clone()),
            ([1..3, 3..9], vec![0])
        ); // the top face
        assert_eq!(
            (b[3].region.clone(), b[3].axes.clone()),
            ([3..7, 1..3], vec![1])
        ); // the left face
        let edge = &pml_boxes([10, 10, 12], 3, 1)[1]; // planes and rows in the layer, columns not
        assert_eq!(
            (edge.region.clone(), edge.axes.clone()),
            ([1..3, 1..3, 3..9], vec![0, 1])
        );
    }

    /// Each side's reference velocity is the largest in its slab of the layer, by hand: a
    /// 3 x 4 grid (width 1) with one fast point at (0, 3), and a 3D grid (width 2) with one
    /// at (4, 0, 1).
    #[test]
    fn side_velocities_are_the_slabs_largest() {
        let v2 = |[z, x]: [usize; 2]| if (z, x) == (0, 3) { 5.0 } else { 1.0 };
        assert_eq!(side_velocities([3, 4], 1, v2), vec![5.0, 1.0, 1.0, 5.0]);
        let v3 = |[z, y, x]: [usize; 3]| if (z, y, x) == (4, 0, 1) { 7.0 } else { 2.0 };
        // z: rows 0..2 low, 3..5 high; y: 0..2 low; x: 0..2 low.
        assert_eq!(
            side_velocities([5, 6, 7], 2, v3),
            vec![2.0, 7.0, 7.0, 2.0, 7.0, 2.0]
        );
    }

    /// Every point of the layer (inside the edge) in exactly one box, no other point, in
    /// 1D, 2D and 3D, counted against the definition point by point.
    #[test]
    fn layer_boxes_cover_the_layer_once() {
        fn check<const D: usize>(shape: [usize; D], width: usize, edge: usize) {
            let total: usize = shape.iter().product();
            let mut hits = vec![0u8; total];
            for b in layer_boxes(shape, width, edge) {
                for idx in box_points(&b) {
                    let flat = idx.iter().zip(&shape).fold(0, |f, (&i, &s)| f * s + i);
                    hits[flat] += 1;
                }
            }
            // Every point of the grid, in flat (row-major) order.
            for (idx, &h) in box_points(&shape.map(|n| 0..n)).zip(&hits) {
                let inside = idx
                    .iter()
                    .zip(&shape)
                    .all(|(&i, &s)| i >= edge && i < s - edge);
                let in_layer = idx
                    .iter()
                    .zip(&shape)
                    .any(|(&i, &s)| i < width || i >= s - width);
                let want = u8::from(inside && in_layer);
                assert_eq!(h, want, "{shape:?} width {width} edge {edge} at {idx:?}");
            }
        }
        check([9], 3, 1);
        check([10, 12], 3, 1);
        check([11, 7], 3, 2);
        check([10, 12], 5, 0);
        check([8, 9, 10], 3, 1);
        check([7, 7, 7], 3, 2);
        assert_eq!(layer_boxes([8, 9, 10], 3, 1).len(), 6);
    }

    /// `pml_boxes` covers the points of `layer_boxes`, each once, and marks a box a face of
    /// axis `k` exactly when its points are in the layer along `k` only: checked point by
    /// point against the definition, in 1D, 2D and 3D.
    #[test]
    fn pml_boxes_split_the_layer_into_faces_edges_and_corners() {
        fn check<const D: usize>(shape: [usize; D], width: usize, edge: usize) {
            let total: usize = shape.iter().product();
            let mut hits = vec![0u8; total];
            let flat = |idx: &[usize; D]| idx.iter().zip(&shape).fold(0, |f, (&i, &s)| f * s + i);
            for b in pml_boxes(shape, width, edge) {
                for idx in box_points(&b.region) {
                    let in_layer: Vec<usize> = (0..D)
                        .filter(|&a| idx[a] < width || idx[a] >= shape[a] - width)
                        .collect();
                    assert_eq!(b.axes, in_layer, "{shape:?} at {idx:?}");
                    hits[flat(&idx)] += 1;
                }
            }
            let mut want = vec![0u8; total];
            for b in layer_boxes(shape, width, edge) {
                for idx in box_points(&b) {
                    want[flat(&idx)] += 1;
                }
            }
            assert_eq!(hits, want, "{shape:?} width {width} edge {edge}");
        }
        check([9], 3, 1);
        check([10, 12], 3, 1);
        check([11, 7], 3, 2);
        check([8, 9, 10], 3, 1);
        check([7, 7, 7], 3, 2);
        assert_eq!(pml_boxes([8, 9, 10], 3, 1).len(), 26);
        assert!(pml_boxes([10, 12], 1, 1).is_empty());
    }

    /// On a face of the layer the one-axis kernels, and on an edge of a 3D layer the two-axis
    /// kernels, give what the full kernels give there (the other axes' `a = 0`, `b = 1` and
    /// memory variables 0), for every such set of axes in 2D and 3D: two implementations of
    /// the same update, on random fields (different ones per axis).
    #[test]
    fn face_and_edge_kernels_equal_the_full_kernels_there() {
        use crate::{MemSpaceHost, Serial};
        type F<const D: usize> = ScalarField<MemSpaceHost, f64, D>;
        fn random<const D: usize>(shape: [usize; D], seed: u64) -> F<D> {
            let mut f = F::zeros(shape).unwrap();
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for e in f.as_mut_slice() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *e = (x % 2001) as f64 / 1000.0 - 1.0;
            }
            f
        }
        fn check<const D: usize>(shape: [usize; D])
        where
            Dims<D>: WaveKernels<D>,
        {
            let region: [Range<usize>; D] = std::array::from_fn(|a| 2..shape[a] - 2);
            // Every set of axes but none and all, as a bit mask (bit k: axis k).
            for mask in 1..(1u64 << D) - 1 {
                let axes: Vec<usize> = (0..D).filter(|&k| mask >> k & 1 == 1).collect();
                let (p, kv2, pnew0) = (random(shape, 1), random(shape, 2), random(shape, 3));
                let zero = F::<D>::zeros(shape).unwrap();
                // Per axis k (outermost first) its a, b (profiles along k), psi, zeta: random
                // on `axes`, else 0, 1, 0, 0.
                let field = |k: usize, what: u64, other: &F<D>| {
                    if axes.contains(&k) {
                        random(shape, 10 * k as u64 + what)
                    } else {
                        F::from_host(other).unwrap()
                    }
                };
                let profile = |k: usize, what: u64, other: f64| {
                    let mut along = [1; D];
                    along[k] = shape[k];
                    if axes.contains(&k) {
                        random(along, 10 * k as u64 + what)
                    } else {
                        let mut f = F::<D>::zeros(along).unwrap();
                        f.as_mut_slice().fill(other);
                        f
                    }
                };
                let a: Vec<F<D>> = (0..D).map(|k| profile(k, 4, 0.0)).collect();
                let b: Vec<F<D>> = (0..D).map(|k| profile(k, 5, 1.0)).collect();
                let psi0: Vec<F<D>> = (0..D).map(|k| field(k, 6, &zero)).collect();
                let zeta0: Vec<F<D>> = (0..D).map(|k| field(k, 7, &zero)).collect();
                let dup = |fs: &[F<D>]| -> Vec<F<D>> {
                    fs.iter().map(|f| F::from_host(f).unwrap()).collect()
                };
                // One kernel launched on its own, with its fields in its order.
                let kernel = |axes: &[usize], update, outs: &mut [&mut F<D>], ins: &[&F<D>]| {
                    let o: Vec<usize> = (0..outs.len()).collect();
                    let i: Vec<Arg> = (0..ins.len()).map(Arg::In).collect();
                    let m = Dims::<D>::pml_member(axes, update, region.clone(), &o, &i);
                    crate::launch::launch_group(&Serial, outs, ins, &[m]).unwrap();
                };
                // The kernels' field order: per axis, x first.
                let run = |axes: &[usize], psi: &mut Vec<F<D>>, zeta: &mut Vec<F<D>>| {
                    let rev: Vec<usize> = axes.iter().rev().copied().collect();
                    let ab = rev.iter().flat_map(|&k| [&a[k], &b[k]]);
                    let ins: Vec<&F<D>> = std::iter::once(&p).chain(ab.clone()).collect();
                    let mut outs: Vec<&mut F<D>> = psi.iter_mut().rev().collect();
                    kernel(axes, false, &mut outs, &ins);
                    let mut pnew = F::from_host(&pnew0).unwrap();
                    let ins: Vec<&F<D>> = std::iter::once(&p)
                        .chain(psi.iter().rev())
                        .chain([&kv2])
                        .chain(ab)
                        .collect();
                    let mut outs = vec![&mut pnew];
                    outs.extend(zeta.iter_mut().rev());
                    kernel(axes, true, &mut outs, &ins);
                    pnew
                };
                // The full kernels on every axis, and the box's own kernels on `axes` (its
                // fields only: `psi`, `zeta` of the other axes are not passed).
                let all: Vec<usize> = (0..D).collect();
                let (mut psi, mut zeta) = (dup(&psi0), dup(&zeta0));
                let pnew = run(&all, &mut psi, &mut zeta);
                let pick = |fs: &[F<D>]| -> Vec<F<D>> {
                    axes.iter()
                        .map(|&k| F::from_host(&fs[k]).unwrap())
                        .collect()
                };
                let (mut own_psi, mut own_zeta) = (pick(&psi0), pick(&zeta0));
                let own_pnew = run(&axes, &mut own_psi, &mut own_zeta);
                for (n, &k) in axes.iter().enumerate() {
                    let at = format!("{D}D axes {axes:?}, axis {k}");
                    assert_eq!(own_psi[n].as_slice(), psi[k].as_slice(), "psi, {at}");
                    assert_eq!(own_zeta[n].as_slice(), zeta[k].as_slice(), "zeta, {at}");
                    assert_ne!(psi[k].as_slice(), psi0[k].as_slice(), "psi changed, {at}");
                }
                assert_eq!(
                    own_pnew.as_slice(),
                    pnew.as_slice(),
                    "pnew, {D}D axes {axes:?}"
                );
                assert_ne!(
                    own_pnew.as_slice(),
                    pnew0.as_slice(),
                    "the update changed pnew"
                );
            }
        }
        check([9, 11]);
        check([7, 8, 9]);
    }

    #[test]
    fn profile_grows_from_the_inner_edge() {
        let p = PmlParams::default();
        let mut last = 0.0;
        for d in 1..=20 {
            let (a, b) = pml_profile(&p, d, 20, 2000.0, 5.0, 1e-3, 15.0);
            assert!(a < 0.0 && a > -1.0 && b > 0.0 && b < 1.0);
            assert!(-a > last, "|a| grows with depth");
            last = -a;
        }
    }

    /// A source or receivers in the layer are warnings (the run is valid, its data damped);
    /// a PML no wider than the zero border, or bad profile parameters, are errors.
    #[test]
    fn sources_and_receivers_in_the_layer_are_warned() {
        use crate::solver::{Boundary, WaveConfig};
        let c = WaveConfig {
            nz: 80,
            nx: 90,
            src_z: 40,
            src_x: 45,
            absorb: 10,
            receivers: vec![(40, 5), (40, 50), (79, 89)],
            layers: vec![],
            ..WaveConfig::paper()
        };
        assert!(c.validate().is_ok());
        let w = c.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0]
            .1
            .contains("2 of 3 receivers lie inside the 10-cell pml layer"));
        let c2 = WaveConfig {
            src_z: 9,
            ..c.clone()
        };
        assert!(c2.warnings()[0]
            .1
            .contains("the source (9, 45) lies inside"));
        assert_eq!(c2.warnings()[0].0, Param::SourceZ);
        let near_x = WaveConfig {
            src_x: 85,
            ..c.clone()
        };
        assert_eq!(near_x.warnings()[0].0, Param::SourceX, "named by its axis");
        // 3D: the y axis counts, and the 3D receivers (the 2D list is not used there).
        let c3 = WaveConfig {
            ny: 30,
            src_y: 15,
            receivers: vec![],
            receivers_3d: vec![(40, 15, 45), (40, 29, 45), (40, 3, 45), (2, 15, 45)],
            ..c.clone()
        };
        assert!(c3.warnings()[0]
            .1
            .contains("3 of 4 receivers lie inside the 10-cell pml layer"));
        let c3 = WaveConfig { src_y: 25, ..c3 };
        let w = c3.warnings();
        assert_eq!(w[0].0, Param::SourceY, "{w:?}");
        assert!(
            w[0].1.contains("the source (40, 25, 45) lies inside"),
            "{w:?}"
        );
        let rigid = WaveConfig {
            boundary: Boundary::Rigid,
            ..c2.clone()
        };
        assert!(rigid.warnings().is_empty(), "no layer, no warning");
        let thin = WaveConfig {
            absorb: 4,
            space_order: 8,
            ..c.clone()
        };
        let e = thin
            .validate()
            .expect_err("thinner than the border")
            .to_string();
        assert!(e.contains("absorb >= 5"), "{e}");
        let sponge = WaveConfig {
            boundary: Boundary::Sponge,
            pml: PmlParams {
                reflection: 2.0,
                ..PmlParams::default()
            },
            ..thin
        };
        assert!(
            sponge.validate().is_ok(),
            "a sponge ignores the PML's parameters"
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        let check = |p: PmlParams, want: Param| match p.validate() {
            Err(Error::InvalidParameter { param, .. }) => assert_eq!(param, want),
            other => panic!("{p:?}: {other:?}"),
        };
        for r in [0.0, 1.0, -0.1, f64::NAN, 2.0] {
            check(
                PmlParams {
                    reflection: r,
                    ..PmlParams::default()
                },
                Param::PmlReflection,
            );
        }
        for n in [0.0, -1.0, f64::NAN, 9.0, f64::INFINITY] {
            check(
                PmlParams {
                    degree: n,
                    ..PmlParams::default()
                },
                Param::PmlDegree,
            );
        }
        for a in [-1.0, f64::NAN, f64::INFINITY] {
            check(
                PmlParams {
                    alpha: Some(a),
                    ..PmlParams::default()
                },
                Param::PmlAlpha,
            );
        }
        assert!(PmlParams::default().validate().is_ok());
    }
}
