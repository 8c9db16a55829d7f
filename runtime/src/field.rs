//! [`ScalarField`]: an `nz × nx` row-major field living in a memory space.

use crate::memory::{check_copy_len, HostAccessible};
use crate::{Error, MemSpaceHost, MemorySpace, Real, Result};
use std::fmt;
use std::ops::{Index, IndexMut};

/// A 2D field of `nz` rows by `nx` columns, stored row-major (`[iz * nx + ix]`) in memory
/// space `M`.
///
/// Element access (indexing, slices) exists only when `M` is host memory; a device field can
/// only be copied, swapped and passed to kernels of its execution space.
///
/// ```
/// use ppstencil::{HostField, ScalarField, MemSpaceHost};
/// let mut f: HostField<f32> = ScalarField::new(3, 4)?;
/// f[(1, 2)] = 5.0;
/// assert_eq!(f.as_slice()[1 * 4 + 2], 5.0);
/// assert_eq!(f.shape(), (3, 4));
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub struct ScalarField<M: MemorySpace, T: Real = f32> {
    nz: usize,
    nx: usize,
    buf: M::Buffer<T>,
}

/// A field in host memory.
pub type HostField<T = f32> = ScalarField<MemSpaceHost, T>;

impl<M: MemorySpace, T: Real> fmt::Debug for ScalarField<M, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ScalarField<{}, {}>({} x {})",
            M::NAME,
            T::NAME,
            self.nz,
            self.nx
        )
    }
}

fn checked_len(nz: usize, nx: usize) -> Result<usize> {
    if nz == 0 || nx == 0 {
        return Err(Error::invalid(
            "field shape",
            format!("{nz} x {nx}"),
            "both dimensions must be at least 1",
        ));
    }
    nz.checked_mul(nx).ok_or_else(|| {
        Error::invalid(
            "field shape",
            format!("{nz} x {nx}"),
            "the number of points overflows usize",
        )
    })
}

impl<M: MemorySpace, T: Real> ScalarField<M, T> {
    /// Allocates a zero-filled `nz × nx` field in `M`.
    pub fn new(nz: usize, nx: usize) -> Result<Self> {
        let len = checked_len(nz, nx)?;
        Ok(ScalarField {
            nz,
            nx,
            buf: M::allocate(len)?,
        })
    }

    /// Allocates a field in `M` holding a copy of a host field (the paper's copyFromHost).
    pub fn from_host(host: &ScalarField<MemSpaceHost, T>) -> Result<Self> {
        let mut f = Self::new(host.nz, host.nx)?;
        f.copy_from_host(host.as_slice())?;
        Ok(f)
    }

    /// Copies this field into a new host field (the paper's copyToHost).
    pub fn to_host(&self) -> Result<ScalarField<MemSpaceHost, T>> {
        let mut h = ScalarField::<MemSpaceHost, T>::new(self.nz, self.nx)?;
        self.copy_to_host(h.as_mut_slice())?;
        Ok(h)
    }

    /// Overwrites this field with host data of exactly `nz * nx` elements.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        check_copy_len("ScalarField::copy_from_host", self.len(), src.len())?;
        M::copy_from_host(&mut self.buf, src)
    }

    /// Copies this field into a host slice of exactly `nz * nx` elements.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        check_copy_len("ScalarField::copy_to_host", self.len(), dst.len())?;
        M::copy_to_host(dst, &self.buf)
    }

    /// Copies another field of the same shape and space into this one.
    pub fn copy_from(&mut self, src: &Self) -> Result<()> {
        if self.shape() != src.shape() {
            return Err(Error::invalid(
                "ScalarField::copy_from source shape",
                format!("{} x {}", src.nz, src.nx),
                format!(
                    "the destination is {} x {}; shapes must match",
                    self.nz, self.nx
                ),
            ));
        }
        M::copy(&mut self.buf, &src.buf)
    }

    /// Swaps the contents of two fields in O(1) (the time loop's buffer rotation).
    pub fn swap(&mut self, other: &mut Self) {
        std::mem::swap(self, other);
    }

    /// Rows.
    pub fn nz(&self) -> usize {
        self.nz
    }

    /// Columns.
    pub fn nx(&self) -> usize {
        self.nx
    }

    /// `(nz, nx)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.nz, self.nx)
    }

    /// Number of elements, `nz * nx`.
    pub fn len(&self) -> usize {
        self.nz * self.nx
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
}

// Element access: each method carries its own `M: HostAccessible` bound (rather than the
// impl block), so calling one on a device field reports `HostAccessible`'s message saying
// what to do instead of rustc's generic "trait bounds were not satisfied".
impl<M: MemorySpace, T: Real> ScalarField<M, T> {
    /// A host field whose element `(iz, ix)` is `f(iz, ix)`.
    pub fn from_fn(nz: usize, nx: usize, mut f: impl FnMut(usize, usize) -> T) -> Result<Self>
    where
        M: HostAccessible,
    {
        let mut field = Self::new(nz, nx)?;
        for (k, v) in field.as_mut_slice().iter_mut().enumerate() {
            *v = f(k / nx, k % nx);
        }
        Ok(field)
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

    /// Element `(iz, ix)`, or `None` outside the field.
    pub fn get(&self, iz: usize, ix: usize) -> Option<T>
    where
        M: HostAccessible,
    {
        (iz < self.nz && ix < self.nx).then(|| self.as_slice()[iz * self.nx + ix])
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

impl<T: Real> ScalarField<MemSpaceHost, T> {
    /// Wraps row-major host data of `nz * nx` elements (no copy).
    pub fn from_vec(nz: usize, nx: usize, data: Vec<T>) -> Result<Self> {
        let len = checked_len(nz, nx)?;
        check_copy_len("ScalarField::from_vec", len, data.len())?;
        Ok(ScalarField {
            nz,
            nx,
            buf: crate::memory::HostBuffer::from_vec(data),
        })
    }

    /// Unwraps into the row-major data.
    pub fn into_vec(self) -> Vec<T> {
        self.buf.into_vec()
    }
}

impl<M: HostAccessible, T: Real> Index<(usize, usize)> for ScalarField<M, T> {
    type Output = T;
    /// Element `(iz, ix)`; panics outside the field like slice indexing (use
    /// [`ScalarField::get`] for a checked read).
    fn index(&self, (iz, ix): (usize, usize)) -> &T {
        assert!(
            iz < self.nz && ix < self.nx,
            "index ({iz}, {ix}) outside {} x {} field",
            self.nz,
            self.nx
        );
        &self.as_slice()[iz * self.nx + ix]
    }
}

impl<M: HostAccessible, T: Real> IndexMut<(usize, usize)> for ScalarField<M, T> {
    fn index_mut(&mut self, (iz, ix): (usize, usize)) -> &mut T {
        assert!(
            iz < self.nz && ix < self.nx,
            "index ({iz}, {ix}) outside {} x {} field",
            self.nz,
            self.nx
        );
        let nx = self.nx;
        &mut self.as_mut_slice()[iz * nx + ix]
    }
}
