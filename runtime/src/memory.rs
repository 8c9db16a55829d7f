//! Memory spaces: *where* data lives.
//!
//! A memory space provides the paper's five operations: allocate, release (on `Drop` of the
//! buffer), copy, copy_from_host and copy_to_host. [`MemSpaceHost`] is host memory;
//! [`MemSpaceCuda`](crate::MemSpaceCuda) and [`MemSpaceHip`](crate::MemSpaceHip) are device
//! memory. Only spaces implementing [`HostAccessible`] let the host read or write elements.

use crate::{Error, Real, Result};

/// A place where field data can live.
///
/// Every operation is fallible and reports a typed [`Error`]; nothing panics.
///
/// ```
/// use ppstencil::{MemSpaceHost, MemorySpace};
/// let mut buf = MemSpaceHost::allocate::<f32>(4)?;
/// MemSpaceHost::copy_from_host(&mut buf, &[1.0, 2.0, 3.0, 4.0])?;
/// let mut back = [0.0f32; 4];
/// MemSpaceHost::copy_to_host(&mut back, &buf)?;
/// assert_eq!(back, [1.0, 2.0, 3.0, 4.0]);
/// assert!(MemSpaceHost::copy_from_host(&mut buf, &[1.0]).is_err()); // wrong length
/// # Ok::<(), ppstencil::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a memory space",
    label = "this type does not implement `MemorySpace`",
    note = "an execution space's `type Memory` must be a memory space such as `MemSpaceHost`, `MemSpaceCuda` or `MemSpaceHip`"
)]
pub trait MemorySpace: Sized + Send + Sync + 'static {
    /// Human-readable name, e.g. `"host"`.
    const NAME: &'static str;
    /// An owned allocation of `len` elements in this space; dropping it releases the memory.
    type Buffer<T: Real>: Send + Sync;

    /// Allocates `len` zero-initialised elements.
    fn allocate<T: Real>(len: usize) -> Result<Self::Buffer<T>>;
    /// Number of elements in a buffer.
    fn len<T: Real>(buf: &Self::Buffer<T>) -> usize;
    /// Copies `src` into `dst` within this space; lengths must match.
    fn copy<T: Real>(dst: &mut Self::Buffer<T>, src: &Self::Buffer<T>) -> Result<()>;
    /// Copies host data into a buffer of this space; lengths must match.
    fn copy_from_host<T: Real>(dst: &mut Self::Buffer<T>, src: &[T]) -> Result<()>;
    /// Copies a buffer of this space into host memory; lengths must match.
    fn copy_to_host<T: Real>(dst: &mut [T], src: &Self::Buffer<T>) -> Result<()>;

    /// Whether the host addresses this space's buffers directly: true exactly for the
    /// [`HostAccessible`] spaces, and then [`host_slice`](Self::host_slice) is `Some`.
    const HOST: bool;
    /// The buffer's elements when this space is host memory, `None` for device memory: code
    /// generic over the space reads host data in place and copies device data
    /// ([`copy_to_host`](Self::copy_to_host)) only where it must.
    fn host_slice<T: Real>(buf: &Self::Buffer<T>) -> Option<&[T]>;
}

/// Memory spaces whose data the host can address directly (only [`MemSpaceHost`]).
///
/// Element access, slicing and indexing of fields require this trait, so device data can
/// never be touched from the host by mistake: it does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is device memory: its elements cannot be read or written on the host",
    label = "not host memory",
    note = "copy the field to the host first (`field.to_host()?` or `field.copy_to_host(&mut buf)?`) and work on the host copy"
)]
pub trait HostAccessible: MemorySpace {
    /// The buffer's elements.
    fn as_slice<T: Real>(buf: &Self::Buffer<T>) -> &[T];
    /// The buffer's elements, mutably.
    fn as_mut_slice<T: Real>(buf: &mut Self::Buffer<T>) -> &mut [T];
}

/// Host (CPU) memory: the default space, accessible by [`Serial`](crate::Serial) and
/// [`Rayon`](crate::Rayon). The three copies are plain memory copies.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemSpaceHost;

/// An owned host allocation.
#[derive(Clone, Debug, PartialEq)]
pub struct HostBuffer<T>(Vec<T>);

impl<T> HostBuffer<T> {
    /// Wraps an existing vector.
    pub fn from_vec(v: Vec<T>) -> Self {
        HostBuffer(v)
    }

    /// Unwraps into the vector.
    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

pub(crate) fn check_copy_len(what: &str, expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::SizeMismatch {
            what: what.to_string(),
            expected,
            found,
        })
    }
}

impl MemorySpace for MemSpaceHost {
    const NAME: &'static str = "host";
    const HOST: bool = true;
    type Buffer<T: Real> = HostBuffer<T>;

    fn host_slice<T: Real>(buf: &HostBuffer<T>) -> Option<&[T]> {
        Some(&buf.0)
    }

    fn allocate<T: Real>(len: usize) -> Result<HostBuffer<T>> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let mut v = Vec::new();
        v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory {
            space: Self::NAME,
            bytes,
        })?;
        v.resize(len, T::ZERO);
        Ok(HostBuffer(v))
    }

    fn len<T: Real>(buf: &HostBuffer<T>) -> usize {
        buf.0.len()
    }

    fn copy<T: Real>(dst: &mut HostBuffer<T>, src: &HostBuffer<T>) -> Result<()> {
        check_copy_len("copy within host memory", dst.0.len(), src.0.len())?;
        dst.0.copy_from_slice(&src.0);
        Ok(())
    }

    fn copy_from_host<T: Real>(dst: &mut HostBuffer<T>, src: &[T]) -> Result<()> {
        check_copy_len("copy_from_host", dst.0.len(), src.len())?;
        dst.0.copy_from_slice(src);
        Ok(())
    }

    fn copy_to_host<T: Real>(dst: &mut [T], src: &HostBuffer<T>) -> Result<()> {
        check_copy_len("copy_to_host", src.0.len(), dst.len())?;
        dst.copy_from_slice(&src.0);
        Ok(())
    }
}

impl HostAccessible for MemSpaceHost {
    fn as_slice<T: Real>(buf: &HostBuffer<T>) -> &[T] {
        &buf.0
    }

    fn as_mut_slice<T: Real>(buf: &mut HostBuffer<T>) -> &mut [T] {
        &mut buf.0
    }
}

#[cfg(test)]
mod tests {
    use crate::{MemSpaceCuda, MemSpaceHip, MemSpaceHost, MemorySpace, ScalarField};

    #[test]
    fn only_host_memory_gives_its_elements_in_place() {
        let host = [MemSpaceHost::HOST, MemSpaceCuda::HOST, MemSpaceHip::HOST];
        assert_eq!(host, [true, false, false]);
        let f = ScalarField::<MemSpaceHost, f32, 2>::from_vec(2, 3, vec![1., 2., 3., 4., 5., 6.])
            .unwrap();
        let values = f.host_values().expect("a host field is read in place");
        assert_eq!(values, &[1., 2., 3., 4., 5., 6.]);
        // The very elements, not a copy.
        assert!(std::ptr::eq(values, f.as_slice()));
    }
}
