//! Device memory and execution spaces: CUDA and HIP.
//!
//! The marker types exist in every build, so code generic over spaces (and the compile-fail
//! tests) works without a GPU toolkit. Device buffers never implement
//! [`HostAccessible`](crate::HostAccessible): device data is only copied, never indexed.
//!
//! - Without the `cuda` / `hip` feature every operation returns
//!   [`Error::BackendUnavailable`] saying how to enable it; such a space can never hold data,
//!   because its buffers cannot be constructed.
//! - With the feature, [`MemSpaceCuda`] calls the CUDA driver API (`libcuda.so.1`) and
//!   [`MemSpaceHip`] the HIP module API (`libamdhip64.so`), both opened at run time
//!   (`device/dl.rs`), so building needs neither a toolkit nor a driver. Both share one
//!   implementation (`device/core.rs`) over a small internal driver interface
//!   (`device/cuda.rs`, `device/hip.rs`); module images are checked in `device/image.rs`.
//!   Without the library or a device at run time every operation returns
//!   [`Error::BackendUnavailable`] naming "no CUDA device" / "no HIP device"; a module the
//!   device cannot load (wrong architecture, PTX too new) is an [`Error::Device`] naming the
//!   module, the architectures and the fix; a failed driver call is an [`Error::Device`] with
//!   the call and the error code's name; an allocation the device cannot satisfy is
//!   [`Error::OutOfMemory`].
//!
//! [`Cuda`] and [`Hip`] launch the kernels kernels-gen generates (see
//! `kernels_gen::emit::c` for the parameter convention) on a 2D grid of [`BlockSize`] blocks
//! (default 32 × 8): one thread per point of the launch [`Region`], `x` along columns. The
//! acoustic kernels are compiled at build time; stencils of your own are compiled by
//! `kernels_gen::build::compile_file` in your `build.rs` and loaded with
//! `Cuda::load_module` / `Hip::load_code_objects`.

use crate::launch::Region;
use crate::{Error, Result};

#[cfg(any(feature = "cuda", feature = "hip"))]
mod core;
#[cfg(feature = "cuda")]
mod cuda;
#[cfg(any(feature = "cuda", feature = "hip"))]
mod dl;
#[cfg(feature = "hip")]
mod hip;
#[cfg(any(feature = "cuda", feature = "hip"))]
mod image;
#[cfg(all(test, feature = "cuda", feature = "hip"))]
mod tests;
#[cfg(not(all(feature = "cuda", feature = "hip")))]
mod unavailable;

#[cfg(any(feature = "cuda", feature = "hip"))]
pub use self::core::DeviceBuffer;
#[cfg(feature = "cuda")]
pub use self::cuda::{Cuda, MemSpaceCuda};
#[cfg(feature = "hip")]
pub use self::hip::{Hip, MemSpaceHip};
#[cfg(not(all(feature = "cuda", feature = "hip")))]
pub use self::unavailable::Unavailable;
#[cfg(not(feature = "cuda"))]
pub use self::unavailable::{Cuda, MemSpaceCuda};
#[cfg(not(feature = "hip"))]
pub use self::unavailable::{Hip, MemSpaceHip};

/// Threads per block of a device launch: `x` along columns, `y` along rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSize {
    /// Threads along columns (the contiguous dimension).
    pub x: u32,
    /// Threads along rows.
    pub y: u32,
}

impl Default for BlockSize {
    /// 32 × 8 = 256 threads: one warp (or half a wavefront) per row of a block.
    fn default() -> Self {
        BlockSize { x: 32, y: 8 }
    }
}

impl BlockSize {
    /// Most threads a block may have on current NVIDIA and AMD GPUs.
    pub const MAX_THREADS: u32 = 1024;

    /// A block of `x × y` threads; both at least 1 and at most 1024 threads in all.
    ///
    /// ```
    /// use ppstencil::device::BlockSize;
    /// assert_eq!(BlockSize::new(64, 4)?.x, 64);
    /// assert!(BlockSize::new(0, 8).is_err());
    /// assert!(BlockSize::new(64, 32).is_err());
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn new(x: u32, y: u32) -> Result<Self> {
        if x == 0 || y == 0 || x.saturating_mul(y) > Self::MAX_THREADS {
            return Err(Error::invalid(
                "block size",
                format!("{x} x {y}"),
                format!(
                    "each dimension must be at least 1 and x * y at most {} threads (default 32 x 8)",
                    Self::MAX_THREADS
                ),
            ));
        }
        Ok(BlockSize { x, y })
    }
}

/// Most blocks one launch may have along y (rows), on NVIDIA and AMD GPUs alike. Taller
/// domains are launched as several bands of rows.
pub const MAX_GRID_Y: u32 = 65535;

/// Grid and block dimensions of one device launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks along x (columns), y (rows) and z.
    pub grid: [u32; 3],
    /// Threads per block along x, y and z.
    pub block: [u32; 3],
}

/// The launch covering `grid` with blocks of `block`: enough blocks to give every point of
/// columns `x0..x1` and rows (the `(z, y)` pairs of the region) one thread; the kernels'
/// guards idle the rest.
///
/// ```
/// use ppstencil::device::{launch_dims, BlockSize};
/// use ppstencil::launch::Region;
/// let g = Region { shape: [100, 1, 70], lo: [2, 0, 2], hi: [98, 1, 68] };
/// let d = launch_dims(&g, BlockSize::default())?;
/// assert_eq!(d.grid, [3, 12, 1]); // ceil(66 / 32), ceil(96 / 8)
/// assert_eq!(d.block, [32, 8, 1]);
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub fn launch_dims(grid: &Region, block: BlockSize) -> Result<LaunchDims> {
    let cols = grid.cols().len();
    let rows = grid.rows();
    let bx = cols.div_ceil(block.x as usize).max(1);
    let by = rows.div_ceil(block.y as usize).max(1);
    // CUDA and HIP allow 2^31 - 1 blocks along x and MAX_GRID_Y along y.
    let (gx, gy) = match (u32::try_from(bx), u32::try_from(by)) {
        (Ok(gx), Ok(gy)) if gx < (1 << 31) && gy <= MAX_GRID_Y => (gx, gy),
        _ => {
            return Err(Error::invalid(
                "grid",
                format!("{:?}", grid.shape),
                format!(
                    "needs {bx} x {by} blocks of {} x {}; one launch has at most {MAX_GRID_Y} \
                     blocks along rows (the execution spaces launch taller domains in bands)",
                    block.x, block.y
                ),
            ))
        }
    };
    Ok(LaunchDims {
        grid: [gx, gy, 1],
        block: [block.x, block.y, 1],
    })
}

/// The name of the generated device kernel of stencil `stencil` for element type `T`:
/// `fd_pxx_f32`.
pub fn kernel_name<T: crate::Real>(stencil: &str) -> String {
    format!("{stencil}_{}", T::NAME)
}
