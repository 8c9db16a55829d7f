//! The device spaces of a build without their feature: every operation returns
//! [`Error::BackendUnavailable`] saying how to enable it; such a space can never hold data,
//! because its buffers cannot be constructed.

use crate::launch::{Region, Stencil};
use crate::{Error, ExecutionSpace, MemorySpace, Real, Result};
use std::convert::Infallible;
use std::marker::PhantomData;

/// A device buffer of a backend that is not compiled in: it cannot exist.
#[derive(Debug)]
pub struct Unavailable<T> {
    never: Infallible,
    _t: PhantomData<T>,
}

macro_rules! unavailable_space {
    ($mem:ident, $exec:ident, $name:literal, $feature:literal, $doc_mem:literal, $doc_exec:literal) => {
        #[doc = $doc_mem]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $mem;

        impl $mem {
            fn unavailable() -> Error {
                Error::BackendUnavailable {
                    backend: $name,
                    reason: concat!(
                        "ppstencil was built without it; rebuild with `--features ",
                        $feature,
                        "`"
                    )
                    .to_string(),
                }
            }
        }

        impl MemorySpace for $mem {
            const NAME: &'static str = $name;
            const HOST: bool = false;
            type Buffer<T: Real> = Unavailable<T>;

            fn host_slice<T: Real>(buf: &Unavailable<T>) -> Option<&[T]> {
                match buf.never {}
            }

            fn allocate<T: Real>(_len: usize) -> Result<Unavailable<T>> {
                Err(Self::unavailable())
            }
            fn len<T: Real>(buf: &Unavailable<T>) -> usize {
                match buf.never {}
            }
            fn copy<T: Real>(dst: &mut Unavailable<T>, _src: &Unavailable<T>) -> Result<()> {
                match dst.never {}
            }
            fn copy_from_host<T: Real>(dst: &mut Unavailable<T>, _src: &[T]) -> Result<()> {
                match dst.never {}
            }
            fn copy_to_host<T: Real>(_dst: &mut [T], src: &Unavailable<T>) -> Result<()> {
                match src.never {}
            }
        }

        #[doc = $doc_exec]
        #[derive(Debug)]
        pub struct $exec {
            never: Infallible,
        }

        impl $exec {
            /// Opens the first device. Without the feature this always fails with a message
            /// saying how to enable the backend.
            pub fn new() -> Result<Self> {
                Err($mem::unavailable())
            }

            /// The block size kernels are launched with (never called: no value exists).
            pub fn block_size(&self) -> crate::device::BlockSize {
                match self.never {}
            }

            /// Sets the block size (never called: no value exists).
            pub fn with_block_size(self, _block: crate::device::BlockSize) -> Self {
                match self.never {}
            }
        }

        impl ExecutionSpace for $exec {
            type Memory = $mem;
            const NAME: &'static str = $name;

            fn launch<S: Stencil, T: Real>(
                &self,
                _grid: &Region,
                _wins: &[crate::launch::Window],
                _outs: &mut [&mut Unavailable<T>],
                _ins: &[&Unavailable<T>],
                _reals: &[T],
            ) -> Result<()> {
                match self.never {}
            }
        }
    };
}

#[cfg(not(feature = "cuda"))]
unavailable_space!(
    MemSpaceCuda,
    Cuda,
    "CUDA",
    "cuda",
    "CUDA device memory. Fields in this space can only be used by the [`Cuda`] execution space and have no host element access.",
    "The CUDA execution space: runs generated CUDA-C kernels on [`MemSpaceCuda`] data."
);
#[cfg(not(feature = "hip"))]
unavailable_space!(
    MemSpaceHip,
    Hip,
    "HIP",
    "hip",
    "HIP (AMD) device memory. Fields in this space can only be used by the [`Hip`] execution space and have no host element access.",
    "The HIP execution space: runs generated HIP-C kernels on [`MemSpaceHip`] data."
);
