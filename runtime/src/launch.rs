//! The launch layer between generated kernels and execution spaces.
//!
//! `stencil!` generates, for each stencil, a marker type implementing [`Stencil`] (metadata
//! from the IR plus the host kernels) and a generic function that calls [`launch`]. `launch`
//! checks shapes, computes the iteration [`Region`] from the radii, and hands raw buffers to
//! [`ExecutionSpace::launch`]. Every field and region is 3D here (`[nz, ny, nx]`, absent axes
//! of size 1), so the host and device backends have one code path for 1D, 2D and 3D.

use crate::geometry::AXIS_NAMES;
pub use crate::geometry::{axes, axis_words, Region, RowAt, Shape, Window};
use crate::{Error, ExecutionSpace, Real, Result, ScalarField};
use std::ops::Range;

mod group;
pub use group::{launch_group, Arg, Group, GroupPlan, Member};

impl Region {
    /// The domain of stencil `info` on a field of `shape` (`[nz, ny, nx]`): the interior at
    /// distance [`StencilInfo::radius`] (the largest offset over all axes) from the borders
    /// of every axis the stencil has ([`StencilInfo::domain_radii`]), or the single point
    /// given by `indices` (one per axis of the stencil, outermost first) for `#[at]` stencils.
    ///
    /// The margin is the same on every axis, in 2D as in 3D: `fd_pzz` (which reads
    /// only along z) leaves the first and last two columns alone too, which is what keeps the
    /// acoustic solver's border exactly zero.
    ///
    /// ```
    /// use ppstencil::launch::{Region, Stencil};
    /// use ppstencil::kernels::FdPxx;
    /// let g = Region::for_stencil(&FdPxx::INFO, [5, 1, 6], &[])?;
    /// assert_eq!((g.lo, g.hi), ([2, 0, 2], [3, 1, 4]));
    /// assert!(Region::for_stencil(&FdPxx::INFO, [5, 1, 4], &[]).is_err());
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn for_stencil(info: &StencilInfo, shape: [usize; 3], indices: &[usize]) -> Result<Region> {
        let r = info.domain_radii();
        if info.point {
            if indices.len() != info.indices.len() {
                return Err(Error::arity(info.name, "index arguments"));
            }
            let mut lo = [0; 3];
            for (&a, &i) in axes(info.dims).iter().zip(indices) {
                lo[a] = i;
            }
            let inside = (0..3).all(|a| lo[a] >= r[a] && lo[a] < shape[a].saturating_sub(r[a]));
            if !inside {
                return Err(Error::PointOutOfRange {
                    kernel: info.name,
                    point: indices.to_vec(),
                    radius: info.radius,
                    shape: Shape::of(info.dims, shape),
                });
            }
            return Ok(Region {
                shape,
                lo,
                hi: lo.map(|i| i + 1),
            });
        }
        if (0..3).any(|a| shape[a] < 2 * r[a] + 1) {
            return Err(Error::GridTooSmall {
                kernel: info.name,
                radius: info.radius,
                shape: Shape::of(info.dims, shape),
                min: 2 * info.radius + 1,
            });
        }
        Ok(Region {
            shape,
            lo: r,
            hi: [0, 1, 2].map(|a| shape[a] - r[a]),
        })
    }
}

/// What kernels-gen derived from a stencil's IR, embedded in the generated code.
#[derive(Clone, Copy, Debug)]
pub struct StencilInfo {
    /// Stencil name.
    pub name: &'static str,
    /// Largest |offset| of any read.
    pub radius: usize,
    /// Number of dimensions (1 to 3).
    pub dims: usize,
    /// Largest |offset| per axis, `[rz, ry, rx]` (absent axes 0): the halo a field needs per
    /// axis, and what the host backends size their y-blocks from. (The domain's margin is
    /// [`radius`](Self::radius) on every axis: see [`Region::for_stencil`].)
    pub radii: [usize; 3],
    /// Whether the stencil runs at one point (`#[at]`) rather than over the interior.
    pub point: bool,
    /// Written fields, in launch order.
    pub outputs: &'static [&'static str],
    /// Read-only fields, in launch order.
    pub inputs: &'static [&'static str],
    /// Per input, the axis (`0 = z, 1 = y, 2 = x`) it varies along when it is a profile
    /// (`a: in(x)`: a field of shape 1 along every other axis), `None` for a field.
    pub profiles: &'static [Option<usize>],
    /// Real scalar parameters, in launch order.
    pub reals: &'static [&'static str],
    /// Index parameters (`#[at]` position).
    pub indices: &'static [&'static str],
    /// Distinct fields read per point.
    pub fields_read: usize,
    /// Fields written per point.
    pub fields_written: usize,
    /// Floating-point operations per point.
    pub flops_per_point: usize,
    /// Compulsory bytes moved per point for `f32` elements, as the IR computed them (the
    /// roofline model's count: every field read once plus every field written once).
    pub bytes_per_point_f32: usize,
    /// The same for `f64` elements.
    pub bytes_per_point_f64: usize,
    /// The stencil printed back as DSL source.
    pub dsl: &'static str,
    /// Generated source per backend (`"serial"`, `"rayon"`, and GPU dialects when emitted).
    pub sources: &'static [(&'static str, &'static str)],
}

impl StencilInfo {
    /// The margin of the interior domain per axis `[z, y, x]`: [`radius`](Self::radius) on
    /// every axis the stencil has, 0 on the others (whose size is 1).
    pub fn domain_radii(&self) -> [usize; 3] {
        let mut r = [0; 3];
        for &a in axes(self.dims) {
            r[a] = self.radius;
        }
        r
    }

    /// Compulsory bytes moved per point for elements of type `T` (computed by kernels-gen
    /// from the IR; see [`bytes_per_point_f32`](Self::bytes_per_point_f32)).
    ///
    /// ```
    /// use ppstencil::launch::Stencil;
    /// use ppstencil::kernels::FdTime;
    /// // pnew = f(p, pold, v, pxx, pzz): five fields read, one written.
    /// assert_eq!(FdTime::INFO.bytes_per_point::<f32>(), 6 * 4);
    /// assert_eq!(FdTime::INFO.bytes_per_point::<f64>(), 6 * 8);
    /// ```
    pub fn bytes_per_point<T: Real>(&self) -> usize {
        match std::mem::size_of::<T>() {
            4 => self.bytes_per_point_f32,
            _ => self.bytes_per_point_f64,
        }
    }

    /// Flops per compulsory byte for elements of type `T`.
    pub fn arithmetic_intensity<T: Real>(&self) -> f64 {
        self.flops_per_point as f64 / self.bytes_per_point::<T>().max(1) as f64
    }

    /// Checks the numbers of output fields, input fields and real scalars of a launch against
    /// the stencil's declaration ([`Error::Arity`] otherwise).
    pub fn check_arity(&self, outs: usize, ins: usize, reals: usize) -> Result<()> {
        for (found, declared, what) in [
            (outs, self.outputs.len(), "output fields"),
            (ins, self.inputs.len(), "input fields"),
            (reals, self.reals.len(), "real scalars"),
        ] {
            if found != declared {
                return Err(Error::arity(self.name, what));
            }
        }
        Ok(())
    }

    /// The generated source for `backend`, if emitted.
    pub fn source(&self, backend: &str) -> Option<&'static str> {
        self.sources
            .iter()
            .find(|(b, _)| *b == backend)
            .map(|(_, s)| *s)
    }
}

/// Implemented by `stencil!` for each stencil's marker type: metadata and host kernels.
pub trait Stencil {
    /// Metadata derived from the IR.
    const INFO: StencilInfo;

    /// Runs the stencil over `grid`, one row after another. `outs` are whole output fields,
    /// `ins` whole input fields, `reals` the scalars, each in declaration order; `wins` where
    /// each field (outputs, then inputs) lies in the grid. The row loops prefetch and stream
    /// as the launch's [`RowPlan`](crate::__private::RowPlan) says for `grid`
    /// ([`serial_with`](Self::serial_with) with that plan).
    fn serial<T: Real>(
        grid: &Region,
        wins: &[Window],
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
    ) -> Result<()> {
        let fields = Self::INFO.outputs.len() + Self::INFO.inputs.len();
        let plan = crate::exec::rows::RowPlan::for_launch::<T>(grid, fields);
        Self::serial_with(grid, wins, outs, ins, reals, plan)
    }

    /// [`serial`](Self::serial) with the row loops run as `plan` says (prefetching,
    /// streaming stores) rather than as `grid` alone would choose: a
    /// [group launch](crate::launch::launch_group) runs each of its kernels on one task's
    /// rows at a time, with the plan of the kernel's whole box.
    fn serial_with<T: Real>(
        grid: &Region,
        wins: &[Window],
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
        plan: crate::exec::rows::RowPlan,
    ) -> Result<()>;

    /// Runs the stencil over `grid` on the current rayon pool: the outermost axis is split
    /// into tasks of `chunk_rows` slices each (rows in 2D, z-planes in 3D; a 1D stencil has
    /// one slice, so it runs as one task). `wins` as for [`serial`](Self::serial).
    fn rayon<T: Real>(
        grid: &Region,
        wins: &[Window],
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
        chunk_rows: usize,
    ) -> Result<()>;
}

/// Checks a launch and runs it on `space`. Generated stencil functions call this.
///
/// The grid is the shape of the fields that are not windows; a window
/// ([`ScalarField::with_origin`]) must hold every point the launch writes or reads in it.
///
/// Errors: fields (other than windows) of different shapes ([`Error::ShapeMismatch`]), a
/// window too small or no field covering the grid ([`Error::InvalidParameter`]), fields whose number of
/// dimensions `D` is not the stencil's ([`Error::InvalidParameter`]; the generated functions
/// make this a compile error), a grid too small for the radius ([`Error::GridTooSmall`]), a
/// point outside the valid range ([`Error::PointOutOfRange`]), and whatever the execution
/// space reports.
pub fn launch<S: Stencil, E: ExecutionSpace, T: Real, const D: usize>(
    space: &E,
    outs: &mut [&mut ScalarField<E::Memory, T, D>],
    ins: &[&ScalarField<E::Memory, T, D>],
    reals: &[T],
    indices: &[usize],
) -> Result<()> {
    let o = shared(outs);
    let shape = check_fields(&S::INFO, &o, ins, reals.len())?;
    let grid = Region::for_stencil(&S::INFO, shape, indices)?;
    let wins = check_windows(&S::INFO, &grid, &o, ins)?;
    run_on::<S, E, T, D>(space, &grid, &wins, outs, ins, reals)
}

/// Runs 2D stencil `S` on the rectangle `rows × cols` only: [`launch_in_region`] with
/// `[rows, cols]`, kept for 2D callers.
///
/// ```
/// use ppstencil::kernels::FdKv2;
/// use ppstencil::launch::launch_in;
/// use ppstencil::{HostField, ScalarField, Serial};
/// let v = HostField::<f32>::from_fn(6, 8, |_, _| 2.0)?;
/// let mut kv2: HostField<f32> = ScalarField::new(6, 8)?;
/// launch_in::<FdKv2, _, f32>(&Serial, 0..2, 1..8, &mut [&mut kv2], &[&v], &[0.25])?;
/// assert_eq!((kv2[(1, 1)], kv2[(1, 0)], kv2[(2, 1)]), (1.0, 0.0, 0.0));
/// assert!(launch_in::<FdKv2, _, f32>(&Serial, 0..7, 0..8, &mut [&mut kv2], &[&v], &[0.25]).is_err());
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub fn launch_in<S: Stencil, E: ExecutionSpace, T: Real>(
    space: &E,
    rows: Range<usize>,
    cols: Range<usize>,
    outs: &mut [&mut ScalarField<E::Memory, T>],
    ins: &[&ScalarField<E::Memory, T>],
    reals: &[T],
) -> Result<()> {
    launch_in_region::<S, E, T, 2>(space, [rows, cols], outs, ins, reals)
}

/// Runs stencil `S` on the box `region` only (one index range per axis, outermost first:
/// `[rows, cols]` in 2D, `[planes, rows, cols]` in 3D), a part of its domain (for example the
/// strips of an absorbing layer, or the halo of a sub-domain), with the checks of
/// [`launch`]. The box must lie inside the stencil's domain (the interior at each axis's
/// radius from its borders); `#[at]` stencils use [`launch`].
pub fn launch_in_region<S: Stencil, E: ExecutionSpace, T: Real, const D: usize>(
    space: &E,
    region: [Range<usize>; D],
    outs: &mut [&mut ScalarField<E::Memory, T, D>],
    ins: &[&ScalarField<E::Memory, T, D>],
    reals: &[T],
) -> Result<()> {
    let info = &S::INFO;
    let o = shared(outs);
    let shape = check_fields(info, &o, ins, reals.len())?;
    let Some(grid) = region_of(info, shape, &region)? else {
        return Ok(());
    };
    let wins = check_windows(info, &grid, &o, ins)?;
    run_on::<S, E, T, D>(space, &grid, &wins, outs, ins, reals)
}

/// The grid of a launch of the stencil `info` on the box `region` of fields of `shape`
/// (`[nz, ny, nx]`), after checking that the box lies inside the stencil's domain; `None`
/// when the box is empty. Shared by [`launch_in_region`] and group launches.
pub(crate) fn region_of<const D: usize>(
    info: &StencilInfo,
    shape: [usize; 3],
    region: &[Range<usize>; D],
) -> Result<Option<Region>> {
    if info.point {
        return Err(Error::invalid(
            "launch_in",
            info.name,
            "a point (#[at]) stencil runs at its point: use its generated function",
        ));
    }
    let domain = Region::for_stencil(info, shape, &[])?;
    let mut grid = domain;
    for (&a, r) in axes(D).iter().zip(region) {
        grid.lo[a] = r.start;
        grid.hi[a] = r.end;
    }
    let inside = (0..3).all(|a| {
        domain.lo[a] <= grid.lo[a] && grid.lo[a] <= grid.hi[a] && grid.hi[a] <= domain.hi[a]
    });
    if !inside {
        let show = |g: &Region| {
            axes(D)
                .iter()
                .zip(axis_words(D))
                .map(|(&a, word)| format!("{word} {}..{}", g.lo[a], g.hi[a]))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Error::invalid(
            format!("region of kernel `{}`", info.name),
            show(&grid),
            format!(
                "it must lie inside the stencil's domain: {} (radius {})",
                show(&domain),
                info.radius
            ),
        ));
    }
    Ok((grid.points() > 0).then_some(grid))
}

/// Checks argument counts, the fields' dimensionality, and that every field that is not a
/// window has the first such field's shape; returns it, the grid, as `[nz, ny, nx]`.
pub(crate) fn check_fields<M: crate::MemorySpace, T: Real, const D: usize>(
    info: &StencilInfo,
    outs: &[&ScalarField<M, T, D>],
    ins: &[&ScalarField<M, T, D>],
    reals: usize,
) -> Result<[usize; 3]> {
    info.check_arity(outs.len(), ins.len(), reals)?;
    if D != info.dims {
        return Err(Error::invalid(
            format!("fields of kernel `{}`", info.name),
            format!("{D}D"),
            format!("the stencil is {}D: pass {}D fields", info.dims, info.dims),
        ));
    }
    if outs.is_empty() {
        return Err(Error::arity(info.name, "output fields"));
    }
    // The grid's fields: every output and every input but the profiles (checked against
    // the grid by `check_windows`).
    let fields_in = ins
        .iter()
        .copied()
        .zip(info.inputs.iter().copied())
        .zip(info.profiles)
        .filter(|(_, axis)| axis.is_none())
        .map(|(f, _)| f);
    let named: Vec<(&ScalarField<M, T, D>, &'static str)> = outs
        .iter()
        .copied()
        .zip(info.outputs.iter().copied())
        .chain(fields_in)
        .collect();
    let Some(&(first, first_name)) = named.iter().find(|(f, _)| !f.is_window()) else {
        return Err(Error::invalid(
            format!("fields of kernel `{}`", info.name),
            "windows only",
            "the grid of a launch is the shape of its fields that are not windows: pass at \
             least one field covering the whole grid",
        ));
    };
    let shape = first.shape();
    for &(f, name) in &named {
        if !f.is_window() && f.shape() != shape {
            return Err(Error::ShapeMismatch {
                kernel: info.name,
                first: first_name,
                field: name,
                shape: Shape(shape.to_vec()),
                found: Shape(f.shape().to_vec()),
            });
        }
    }
    Ok(first.zyx())
}

/// Every field's [`Window`] (outputs, then inputs), after checking that each window holds
/// the points the launch over `grid` touches in it: the box for an output, the box widened
/// by the stencil's radius along each axis for an input, that range along its axis for a
/// profile (whose shape must be 1 along the others).
pub(crate) fn check_windows<M: crate::MemorySpace, T: Real, const D: usize>(
    info: &StencilInfo,
    grid: &Region,
    outs: &[&ScalarField<M, T, D>],
    ins: &[&ScalarField<M, T, D>],
) -> Result<Vec<Window>> {
    let reads = |a: usize| grid.lo[a].saturating_sub(info.radii[a])..grid.hi[a] + info.radii[a];
    let fields = outs.iter().map(|f| (*f, false, None)).chain(
        ins.iter()
            .zip(info.profiles)
            .map(|(f, &axis)| (*f, true, axis)),
    );
    let names = info.outputs.iter().chain(info.inputs.iter());
    let mut wins = Vec::with_capacity(outs.len() + ins.len());
    for ((f, input, profile), name) in fields.zip(names) {
        let w = f.window();
        let (mut lo, mut hi) = if input {
            (
                [0, 1, 2].map(|a| reads(a).start),
                [0, 1, 2].map(|a| reads(a).end),
            )
        } else {
            (grid.lo, grid.hi)
        };
        if let Some(axis) = profile {
            if let Some(&across) = axes(D).iter().find(|&&a| a != axis && w.shape[a] != 1) {
                let word = |a: usize| AXIS_NAMES[a];
                return Err(Error::invalid(
                    format!("profile `{name}` of kernel `{}`", info.name),
                    Shape::of(D, w.shape),
                    format!(
                        "it is declared `in({})`, one value per {} and the same along the \
                         other axes, so its shape must be 1 along {}: pass a field of one \
                         value per {} only",
                        word(axis),
                        word(axis),
                        word(across),
                        word(axis)
                    ),
                ));
            }
            // Only its axis is read; along the others the profile's one value serves all.
            for a in (0..3).filter(|&a| a != axis) {
                (lo[a], hi[a]) = (w.origin[a], w.origin[a] + 1);
            }
        }
        if !w.holds(lo, hi) {
            let show = |lo: [usize; 3], hi: [usize; 3]| {
                axes(D)
                    .iter()
                    .zip(axis_words(D))
                    .map(|(&a, word)| format!("{word} {}..{}", lo[a], hi[a]))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let end = [0, 1, 2].map(|a| w.origin[a] + w.shape[a]);
            return Err(Error::invalid(
                format!("window `{name}` of kernel `{}`", info.name),
                format!(
                    "{} at {}",
                    Shape::of(D, w.shape),
                    Shape::tuple(&Shape::of(D, w.origin).0)
                ),
                format!(
                    "it holds {} but the launch {} it at {}: make the window cover those \
                     points",
                    show(w.origin, end),
                    if input { "reads" } else { "writes" },
                    show(lo, hi)
                ),
            ));
        }
        wins.push(w);
    }
    Ok(wins)
}

/// The output fields of a launch as shared references, for the checks.
pub(crate) fn shared<'a, M: crate::MemorySpace, T: Real, const D: usize>(
    outs: &'a [&mut ScalarField<M, T, D>],
) -> Vec<&'a ScalarField<M, T, D>> {
    outs.iter().map(|f| &**f).collect()
}

/// Hands the fields' buffers to the execution space.
fn run_on<S: Stencil, E: ExecutionSpace, T: Real, const D: usize>(
    space: &E,
    grid: &Region,
    wins: &[Window],
    outs: &mut [&mut ScalarField<E::Memory, T, D>],
    ins: &[&ScalarField<E::Memory, T, D>],
    reals: &[T],
) -> Result<()> {
    let mut out_bufs: Vec<_> = outs.iter_mut().map(|f| f.buffer_mut()).collect();
    let in_bufs: Vec<_> = ins.iter().map(|f| f.buffer()).collect();
    space.launch::<S, T>(grid, wins, &mut out_bufs, &in_bufs, reals)
}
