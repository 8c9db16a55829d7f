//! The launch layer between generated kernels and execution spaces.
//!
//! `stencil!` generates, for each stencil, a marker type implementing [`Stencil`] (metadata
//! from the IR plus the host kernels) and a generic function that calls [`launch`]. `launch`
//! checks shapes, computes the iteration [`Region`] from the radius, and hands raw buffers to
//! [`ExecutionSpace::launch`].

use crate::{Error, ExecutionSpace, Real, Result, ScalarField};

/// The rectangle of points a launch computes: rows `z0..z1`, columns `x0..x1` of an
/// `nz × nx` row-major field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Rows of the field.
    pub nz: usize,
    /// Columns of the field.
    pub nx: usize,
    /// First row computed.
    pub z0: usize,
    /// One past the last row computed.
    pub z1: usize,
    /// First column computed.
    pub x0: usize,
    /// One past the last column computed.
    pub x1: usize,
}

impl Region {
    /// The domain of stencil `info` on an `nz × nx` field: the interior at distance `radius`
    /// from every border, or the single point given by `indices` for `#[at]` stencils.
    ///
    /// ```
    /// use ppstencil::launch::{Region, Stencil};
    /// use ppstencil::kernels::FdPxx;
    /// let g = Region::for_stencil(&FdPxx::INFO, 5, 6, &[])?;
    /// assert_eq!((g.z0, g.z1, g.x0, g.x1), (2, 3, 2, 4));
    /// assert!(Region::for_stencil(&FdPxx::INFO, 4, 6, &[]).is_err());
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn for_stencil(
        info: &StencilInfo,
        nz: usize,
        nx: usize,
        indices: &[usize],
    ) -> Result<Region> {
        let r = info.radius;
        if info.point {
            let (iz, ix) = match indices {
                [iz, ix] => (*iz, *ix),
                _ => return Err(Error::arity(info.name, "index arguments")),
            };
            if iz < r || ix < r || iz >= nz.saturating_sub(r) || ix >= nx.saturating_sub(r) {
                return Err(Error::PointOutOfRange {
                    kernel: info.name,
                    iz,
                    ix,
                    radius: r,
                    nz,
                    nx,
                });
            }
            return Ok(Region {
                nz,
                nx,
                z0: iz,
                z1: iz + 1,
                x0: ix,
                x1: ix + 1,
            });
        }
        let min = 2 * r + 1;
        if nz < min || nx < min {
            return Err(Error::GridTooSmall {
                kernel: info.name,
                radius: r,
                nz,
                nx,
                min,
            });
        }
        Ok(Region {
            nz,
            nx,
            z0: r,
            z1: nz - r,
            x0: r,
            x1: nx - r,
        })
    }

    /// Number of points computed.
    pub fn points(&self) -> usize {
        (self.z1 - self.z0) * (self.x1 - self.x0)
    }
}

/// What kernels-gen derived from a stencil's IR, embedded in the generated code.
#[derive(Clone, Copy, Debug)]
pub struct StencilInfo {
    /// Stencil name.
    pub name: &'static str,
    /// Largest |offset| of any read.
    pub radius: usize,
    /// Whether the stencil runs at one point (`#[at]`) rather than over the interior.
    pub point: bool,
    /// Written fields, in launch order.
    pub outputs: &'static [&'static str],
    /// Read-only fields, in launch order.
    pub inputs: &'static [&'static str],
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
    /// `ins` whole input fields, `reals` the scalars, each in declaration order.
    fn serial<T: Real>(
        grid: &Region,
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
    ) -> Result<()>;

    /// Runs the stencil over `grid` on the current rayon pool, in chunks of `chunk_rows` rows.
    fn rayon<T: Real>(
        grid: &Region,
        outs: &mut [&mut [T]],
        ins: &[&[T]],
        reals: &[T],
        chunk_rows: usize,
    ) -> Result<()>;
}

/// Checks a launch and runs it on `space`. Generated stencil functions call this.
///
/// Errors: fields of different shapes ([`Error::ShapeMismatch`]), a grid too small for the
/// radius ([`Error::GridTooSmall`]), a point outside the valid range
/// ([`Error::PointOutOfRange`]), and whatever the execution space reports.
pub fn launch<S: Stencil, E: ExecutionSpace, T: Real>(
    space: &E,
    outs: &mut [&mut ScalarField<E::Memory, T>],
    ins: &[&ScalarField<E::Memory, T>],
    reals: &[T],
    indices: &[usize],
) -> Result<()> {
    let (nz, nx) = check_fields::<S, _, T>(outs, ins, reals)?;
    let grid = Region::for_stencil(&S::INFO, nz, nx, indices)?;
    run_on::<S, E, T>(space, &grid, outs, ins, reals)
}

/// Runs stencil `S` on the rectangle `rows × cols` only, a part of its domain (for example
/// the strips of an absorbing layer, or the halo rows of a sub-domain), with the checks of
/// [`launch`]. The rectangle must lie inside the stencil's domain (the interior at distance
/// `radius` from every border); `#[at]` stencils use [`launch`].
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
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    outs: &mut [&mut ScalarField<E::Memory, T>],
    ins: &[&ScalarField<E::Memory, T>],
    reals: &[T],
) -> Result<()> {
    let info = &S::INFO;
    let (nz, nx) = check_fields::<S, _, T>(outs, ins, reals)?;
    if info.point {
        return Err(Error::invalid(
            "launch_in",
            info.name,
            "a point (#[at]) stencil runs at its point: use its generated function",
        ));
    }
    let domain = Region::for_stencil(info, nz, nx, &[])?;
    let inside = domain.z0 <= rows.start
        && rows.start <= rows.end
        && rows.end <= domain.z1
        && domain.x0 <= cols.start
        && cols.start <= cols.end
        && cols.end <= domain.x1;
    if !inside {
        return Err(Error::invalid(
            format!("region of kernel `{}`", info.name),
            format!("rows {rows:?}, columns {cols:?}"),
            format!(
                "it must lie inside the stencil's domain: rows {}..{}, columns {}..{} (radius {})",
                domain.z0, domain.z1, domain.x0, domain.x1, info.radius
            ),
        ));
    }
    if rows.is_empty() || cols.is_empty() {
        return Ok(());
    }
    let grid = Region {
        z0: rows.start,
        z1: rows.end,
        x0: cols.start,
        x1: cols.end,
        ..domain
    };
    run_on::<S, E, T>(space, &grid, outs, ins, reals)
}

/// Checks argument counts and that every field has the first output's shape; returns it.
fn check_fields<S: Stencil, M: crate::MemorySpace, T: Real>(
    outs: &[&mut ScalarField<M, T>],
    ins: &[&ScalarField<M, T>],
    reals: &[T],
) -> Result<(usize, usize)> {
    let info = &S::INFO;
    info.check_arity(outs.len(), ins.len(), reals.len())?;
    let Some(first) = outs.first() else {
        return Err(Error::arity(info.name, "output fields"));
    };
    let (nz, nx) = first.shape();
    let named = outs
        .iter()
        .map(|f| f.shape())
        .zip(info.outputs.iter())
        .chain(ins.iter().map(|f| f.shape()).zip(info.inputs.iter()));
    for ((fz, fx), name) in named {
        if (fz, fx) != (nz, nx) {
            return Err(Error::ShapeMismatch {
                kernel: info.name,
                first: info.outputs[0],
                field: name,
                nz,
                nx,
                found_nz: fz,
                found_nx: fx,
            });
        }
    }
    Ok((nz, nx))
}

/// Hands the fields' buffers to the execution space.
fn run_on<S: Stencil, E: ExecutionSpace, T: Real>(
    space: &E,
    grid: &Region,
    outs: &mut [&mut ScalarField<E::Memory, T>],
    ins: &[&ScalarField<E::Memory, T>],
    reals: &[T],
) -> Result<()> {
    let mut out_bufs: Vec<_> = outs.iter_mut().map(|f| f.buffer_mut()).collect();
    let in_bufs: Vec<_> = ins.iter().map(|f| f.buffer()).collect();
    space.launch::<S, T>(grid, &mut out_bufs, &in_bufs, reals)
}
