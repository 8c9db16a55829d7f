//! [`ScalarField`]: a 1D, 2D or 3D row-major field living in a memory space.

use crate::geometry::Shape;
use crate::memory::{check_copy_len, HostAccessible};
use crate::{Error, MemSpaceHost, MemorySpace, Real, Result};
use std::fmt;
use std::ops::{Index, IndexMut};

/// A `D`-dimensional field (`D` = 1, 2 or 3; 2 by default) stored row-major in memory space
/// `M`, with x (the last axis) contiguous: `[iz * nx + ix]` in 2D, `[(iz * ny + iy) * nx + ix]`
/// in 3D. The dimensionality is part of the type, so a 3D stencil called with 2D fields, or
/// with 2D and 3D fields mixed, does not compile.
///
/// Element access (indexing, slices) exists only when `M` is host memory; a device field can
/// only be copied, swapped and passed to kernels of its execution space.
///
/// ```
/// use ppstencil::{HostField, ScalarField, MemSpaceHost};
/// let mut f: HostField<f32> = ScalarField::new(3, 4)?;
/// f[(1, 2)] = 5.0;
/// assert_eq!(f.as_slice()[1 * 4 + 2], 5.0);
/// assert_eq!(f.shape(), [3, 4]);
/// let mut g: HostField<f64, 3> = ScalarField::new_3d(2, 3, 4)?;
/// g[(1, 2, 3)] = 1.0;
/// assert_eq!(g.as_slice()[(1 * 3 + 2) * 4 + 3], 1.0);
/// let u: HostField<f32, 1> = ScalarField::new_1d(7)?;
/// assert_eq!((u.shape(), u[6]), ([7], 0.0));
/// # Ok::<(), ppstencil::Error>(())
/// ```
///
/// # Windows
///
/// A field normally covers the whole grid of the kernels it is passed to. A *window* covers
/// only a box of that grid: [`with_origin`](Self::with_origin) places its storage at a point
/// of the grid, so that a field of shape `[nz, 24]` at origin `[0, 4976]` holds columns
/// `4976..5000` of a `nz × 5000` grid (one side of an absorbing layer, say, at a 200th of
/// the memory, read as one contiguous stream). Kernels index every field by grid point; the
/// launch checks that each window holds every point its field is read or written at. Element
/// access ([`Index`], [`as_slice`](Self::as_slice), ...) stays the field's own: element `i` is
/// grid point `origin + i`.
///
/// ```
/// use ppstencil::{HostField, ScalarField};
/// let w: HostField<f32> = ScalarField::new(6, 3)?.with_origin([0, 5]);
/// assert_eq!((w.origin(), w.shape()), ([0, 5], [6, 3]));
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub struct ScalarField<M: MemorySpace, T: Real = f32, const D: usize = 2> {
    shape: [usize; D],
    /// `Some` for a window: the grid point of element 0.
    origin: Option<[usize; D]>,
    buf: M::Buffer<T>,
}

/// A field in host memory.
pub type HostField<T = f32, const D: usize = 2> = ScalarField<MemSpaceHost, T, D>;

impl<M: MemorySpace, T: Real, const D: usize> fmt::Debug for ScalarField<M, T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ScalarField<{}, {}, {D}>({})",
            M::NAME,
            T::NAME,
            Shape(self.shape.to_vec())
        )
    }
}

/// The number of points of `shape`, or an error naming every axis.
fn checked_len(shape: &[usize]) -> Result<usize> {
    if !(1..=3).contains(&shape.len()) {
        return Err(Error::invalid(
            "field dimensions",
            shape.len(),
            "fields have 1, 2 or 3 dimensions",
        ));
    }
    if shape.contains(&0) {
        return Err(Error::invalid(
            "field shape",
            Shape(shape.to_vec()),
            "every dimension must be at least 1",
        ));
    }
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            Error::invalid(
                "field shape",
                Shape(shape.to_vec()),
                "the number of points overflows usize",
            )
        })
}

impl<M: MemorySpace, T: Real> ScalarField<M, T, 2> {
    /// Allocates a zero-filled 2D field of `nz` rows by `nx` columns in `M`.
    pub fn new(nz: usize, nx: usize) -> Result<Self> {
        Self::zeros([nz, nx])
    }
}

impl<M: MemorySpace, T: Real> ScalarField<M, T, 1> {
    /// Allocates a zero-filled 1D field of `n` points in `M`.
    pub fn new_1d(n: usize) -> Result<Self> {
        Self::zeros([n])
    }
}

impl<M: MemorySpace, T: Real> ScalarField<M, T, 3> {
    /// Allocates a zero-filled 3D field of `nz` planes, `ny` rows, `nx` columns in `M`.
    pub fn new_3d(nz: usize, ny: usize, nx: usize) -> Result<Self> {
        Self::zeros([nz, ny, nx])
    }
}

impl<M: MemorySpace, T: Real, const D: usize> ScalarField<M, T, D> {
    /// Allocates a zero-filled field of `shape` (outermost axis first) in `M`.
    pub fn zeros(shape: [usize; D]) -> Result<Self> {
        let len = checked_len(&shape)?;
        Ok(ScalarField {
            shape,
            origin: None,
            buf: M::allocate(len)?,
        })
    }

    /// This field as a window of the grid, its element 0 at grid point `origin` (outermost
    /// axis first; see [the type's docs](Self#windows)).
    pub fn with_origin(mut self, origin: [usize; D]) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Whether this field is a window ([`with_origin`](Self::with_origin)) rather than a
    /// field covering the whole grid.
    pub fn is_window(&self) -> bool {
        self.origin.is_some()
    }

    /// The grid point this field's element 0 lies at: 0 unless it is a window.
    pub fn origin(&self) -> [usize; D] {
        self.origin.unwrap_or([0; D])
    }

    /// Where this field's storage lies in the grid, in the runtime's `[z, y, x]` form.
    pub fn window(&self) -> crate::geometry::Window {
        let mut w = crate::geometry::Window::full(self.zyx());
        for (&a, &o) in crate::geometry::axes(D).iter().zip(&self.origin()) {
            w.origin[a] = o;
        }
        w
    }

    /// Same as [`zeros`](Self::zeros).
    pub fn with_shape(shape: [usize; D]) -> Result<Self> {
        Self::zeros(shape)
    }

    /// Allocates a field in `M` holding a copy of a host field (the paper's copyFromHost).
    pub fn from_host(host: &ScalarField<MemSpaceHost, T, D>) -> Result<Self> {
        let mut f = Self::zeros(host.shape)?;
        f.origin = host.origin;
        f.copy_from_host(host.as_slice())?;
        Ok(f)
    }

    /// Copies this field into a new host field (the paper's copyToHost).
    pub fn to_host(&self) -> Result<ScalarField<MemSpaceHost, T, D>> {
        let mut h = ScalarField::<MemSpaceHost, T, D>::zeros(self.shape)?;
        h.origin = self.origin;
        self.copy_to_host(h.as_mut_slice())?;
        Ok(h)
    }

    /// Overwrites this field with host data of exactly [`len`](Self::len) elements.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        check_copy_len("ScalarField::copy_from_host", self.len(), src.len())?;
        M::copy_from_host(&mut self.buf, src)
    }

    /// The elements, row-major, when the field lies in host memory; `None` in device memory
    /// (see [`MemorySpace::host_slice`]). Generic code reads a host field in place this way
    /// and copies only a device field.
    pub fn host_values(&self) -> Option<&[T]> {
        M::host_slice(&self.buf)
    }

    /// Copies this field into a host slice of exactly [`len`](Self::len) elements.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        check_copy_len("ScalarField::copy_to_host", self.len(), dst.len())?;
        M::copy_to_host(dst, &self.buf)
    }

    /// Copies another field of the same shape and space into this one.
    pub fn copy_from(&mut self, src: &Self) -> Result<()> {
        if self.shape != src.shape {
            return Err(Error::invalid(
                "ScalarField::copy_from source shape",
                Shape(src.shape.to_vec()),
                format!(
                    "the destination is {}; shapes must match",
                    Shape(self.shape.to_vec())
                ),
            ));
        }
        M::copy(&mut self.buf, &src.buf)
    }

    /// Swaps the contents of two fields in O(1) (the time loop's buffer rotation).
    pub fn swap(&mut self, other: &mut Self) {
        std::mem::swap(self, other);
    }

    /// Size of the outermost axis: rows in 2D, planes in 3D, 1 in 1D.
    pub fn nz(&self) -> usize {
        self.zyx()[0]
    }

    /// Size of the middle axis in 3D (1 in 1D and 2D).
    pub fn ny(&self) -> usize {
        self.zyx()[1]
    }

    /// Size of the last, contiguous axis: columns.
    pub fn nx(&self) -> usize {
        self.zyx()[2]
    }

    /// The shape, outermost axis first: `[nz, nx]` in 2D.
    pub fn shape(&self) -> [usize; D] {
        self.shape
    }

    /// The shape as the runtime's one internal form `[nz, ny, nx]`, absent axes of size 1
    /// (`[nz, 1, nx]` in 2D, `[1, 1, n]` in 1D).
    pub fn zyx(&self) -> [usize; 3] {
        let mut out = [1; 3];
        for (&a, &n) in crate::geometry::axes(D).iter().zip(&self.shape) {
            out[a] = n;
        }
        out
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Always false: fields have at least one point.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The underlying buffer (for execution-space implementations).
    pub fn buffer(&self) -> &M::Buffer<T> {
        &self.buf
    }

    /// The underlying buffer, mutably (for execution-space implementations).
    pub fn buffer_mut(&mut self) -> &mut M::Buffer<T> {
        &mut self.buf
    }

    /// The flat (row-major) position of `index`, or `None` outside the field.
    pub fn flat_index(&self, index: [usize; D]) -> Option<usize> {
        let mut k = 0;
        for (&i, &n) in index.iter().zip(&self.shape) {
            if i >= n {
                return None;
            }
            k = k * n + i;
        }
        Some(k)
    }

    fn flat_or_panic(&self, index: [usize; D]) -> usize {
        match self.flat_index(index) {
            Some(k) => k,
            None => panic!(
                "index {index:?} outside {} field",
                Shape(self.shape.to_vec())
            ),
        }
    }
}

// Element access: each method carries its own `M: HostAccessible` bound (rather than the
// impl block), so calling one on a device field reports `HostAccessible`'s message saying
// what to do instead of rustc's generic "trait bounds were not satisfied".
impl<M: MemorySpace, T: Real> ScalarField<M, T, 2> {
    /// A host field whose element `(iz, ix)` is `f(iz, ix)`.
    pub fn from_fn(nz: usize, nx: usize, mut f: impl FnMut(usize, usize) -> T) -> Result<Self>
    where
        M: HostAccessible,
    {
        Self::from_shape_fn([nz, nx], |[iz, ix]| f(iz, ix))
    }

    /// Element `(iz, ix)`, or `None` outside the field.
    pub fn get(&self, iz: usize, ix: usize) -> Option<T>
    where
        M: HostAccessible,
    {
        self.get_at([iz, ix])
    }
}

impl<M: MemorySpace, T: Real, const D: usize> ScalarField<M, T, D> {
    /// A host field of `shape` whose element at index `[i0, i1, ...]` (outermost first) is
    /// `f([i0, i1, ...])`.
    pub fn from_shape_fn(shape: [usize; D], mut f: impl FnMut([usize; D]) -> T) -> Result<Self>
    where
        M: HostAccessible,
    {
        let mut field = Self::zeros(shape)?;
        let mut index = [0; D];
        for v in field.as_mut_slice().iter_mut() {
            *v = f(index);
            for a in (0..D).rev() {
                index[a] += 1;
                if index[a] < shape[a] {
                    break;
                }
                index[a] = 0;
            }
        }
        Ok(field)
    }

    /// The element at `index` (outermost axis first), or `None` outside the field.
    pub fn get_at(&self, index: [usize; D]) -> Option<T>
    where
        M: HostAccessible,
    {
        self.flat_index(index).map(|k| self.as_slice()[k])
    }

    /// The elements, row-major.
    pub fn as_slice(&self) -> &[T]
    where
        M: HostAccessible,
    {
        M::as_slice(&self.buf)
    }

    /// The elements, row-major, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T]
    where
        M: HostAccessible,
    {
        M::as_mut_slice(&mut self.buf)
    }

    /// Sets every element to `value`.
    pub fn fill(&mut self, value: T)
    where
        M: HostAccessible,
    {
        self.as_mut_slice().fill(value);
    }

    /// Largest absolute value (0 for an all-zero field).
    pub fn max_abs(&self) -> T
    where
        M: HostAccessible,
    {
        self.as_slice()
            .iter()
            .fold(T::ZERO, |m, &v| if v.abs() > m { v.abs() } else { m })
    }
}

/// A host field clones its elements (and its window's origin); a device field has no
/// `Clone`, since copying it can fail: use [`ScalarField::copy_from`] there.
impl<T: Real, const D: usize> Clone for ScalarField<MemSpaceHost, T, D> {
    fn clone(&self) -> Self {
        ScalarField {
            shape: self.shape,
            origin: self.origin,
            buf: self.buf.clone(),
        }
    }
}

impl<T: Real, const D: usize> ScalarField<MemSpaceHost, T, D> {
    /// Wraps row-major host data of `shape` (no copy).
    pub fn from_vec_shape(shape: [usize; D], data: Vec<T>) -> Result<Self> {
        let len = checked_len(&shape)?;
        check_copy_len("ScalarField::from_vec", len, data.len())?;
        Ok(ScalarField {
            shape,
            origin: None,
            buf: crate::memory::HostBuffer::from_vec(data),
        })
    }

    /// Unwraps into the row-major data.
    pub fn into_vec(self) -> Vec<T> {
        self.buf.into_vec()
    }
}

impl<T: Real> ScalarField<MemSpaceHost, T, 2> {
    /// Wraps row-major host data of `nz * nx` elements (no copy).
    pub fn from_vec(nz: usize, nx: usize, data: Vec<T>) -> Result<Self> {
        Self::from_vec_shape([nz, nx], data)
    }
}

/// An index into a `D`-dimensional field, outermost axis first: `(iz, ix)` for 2D,
/// `(iz, iy, ix)` for 3D, `i` or `(i,)` for 1D, and `[usize; D]` for any `D`.
pub trait FieldIndex<const D: usize> {
    /// The index as an array.
    fn to_array(self) -> [usize; D];
}

impl FieldIndex<1> for usize {
    fn to_array(self) -> [usize; 1] {
        [self]
    }
}

impl FieldIndex<1> for (usize,) {
    fn to_array(self) -> [usize; 1] {
        [self.0]
    }
}

impl FieldIndex<2> for (usize, usize) {
    fn to_array(self) -> [usize; 2] {
        [self.0, self.1]
    }
}

impl FieldIndex<3> for (usize, usize, usize) {
    fn to_array(self) -> [usize; 3] {
        [self.0, self.1, self.2]
    }
}

impl<const D: usize> FieldIndex<D> for [usize; D] {
    fn to_array(self) -> [usize; D] {
        self
    }
}

/// Element access by index ([`FieldIndex`]): `field[(iz, ix)]` (2D), `field[(iz, iy, ix)]`
/// (3D), `field[i]` or `field[(i,)]` (1D), `field[[..; D]]` for any `D`. Panics outside the
/// field like slice indexing (use [`ScalarField::get_at`] for a checked read).
impl<M: HostAccessible, T: Real, const D: usize, I: FieldIndex<D>> Index<I>
    for ScalarField<M, T, D>
{
    type Output = T;
    fn index(&self, index: I) -> &T {
        let k = self.flat_or_panic(index.to_array());
        &self.as_slice()[k]
    }
}

impl<M: HostAccessible, T: Real, const D: usize, I: FieldIndex<D>> IndexMut<I>
    for ScalarField<M, T, D>
{
    fn index_mut(&mut self, index: I) -> &mut T {
        let k = self.flat_or_panic(index.to_array());
        &mut self.as_mut_slice()[k]
    }
}
