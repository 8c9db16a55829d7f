//! The one implementation of device memory and kernel launch, shared by CUDA and HIP through
//! the small [`Driver`] interface (each backend implements it in a few dozen lines).
//!
//! Rules every backend follows (each guards against a bug):
//! - every driver entry point makes the device current for the call and restores what the
//!   calling thread had before (push/pop of the CUDA context, the HIP device), `free` included,
//!   so a buffer dropped on any thread is released and other GPU code on the thread is
//!   unaffected;
//! - module images are checked (`image.rs`), passed whole, and kept alive for the module's
//!   life (HIP may read them after loading);
//! - kernels are registered by module: a kernel name two modules define is an error;
//! - launches respect the grid limits (rows beyond 65,535 blocks go in several launches) and
//!   the kernel's maximum threads per block; checked launches synchronise and name the kernel.

use super::image::Image;
use super::{kernel_name, launch_dims, BlockSize, LaunchDims};
use crate::launch::{Region, Stencil, Window};
use crate::{Error, Real, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Mutex;

/// The driver calls the shared implementation needs. Device pointers, modules and functions
/// are passed as integers so that the state holding them is `Send + Sync`. Every call makes
/// the device current for its duration (see the module docs).
pub(crate) trait Driver: 'static {
    /// `"CUDA"` or `"HIP"`.
    const BACKEND: &'static str;
    /// Initialises the driver once per process. Fails with [`Error::BackendUnavailable`]
    /// ("no CUDA device ...") when there is none.
    fn ready() -> Result<()>;
    /// Allocates `bytes` (> 0) bytes.
    fn malloc(bytes: usize) -> Result<u64>;
    /// Releases an allocation.
    ///
    /// # Safety
    /// `ptr` came from [`Driver::malloc`] and is not used afterwards.
    unsafe fn free(ptr: u64) -> Result<()>;
    /// Sets `bytes` bytes at `ptr` to zero.
    ///
    /// # Safety
    /// `ptr` points to at least `bytes` bytes of device memory.
    unsafe fn memset0(ptr: u64, bytes: usize) -> Result<()>;
    /// Host → device copy.
    ///
    /// # Safety
    /// `src` is readable and `dst` writable for `bytes` bytes.
    unsafe fn htod(dst: u64, src: *const c_void, bytes: usize) -> Result<()>;
    /// Device → host copy.
    ///
    /// # Safety
    /// `src` is readable and `dst` writable for `bytes` bytes.
    unsafe fn dtoh(dst: *mut c_void, src: u64, bytes: usize) -> Result<()>;
    /// Device → device copy.
    ///
    /// # Safety
    /// `src` is readable and `dst` writable for `bytes` bytes.
    unsafe fn dtod(dst: u64, src: u64, bytes: usize) -> Result<()>;
    /// Checks a module image and reads its kernel names (no driver call).
    fn inspect(image: &[u8]) -> Result<Image>;
    /// Loads a checked module image; `Ok(None)` when it is for another GPU architecture. The
    /// image stays alive and unchanged for the module's life (the registry owns it). Errors
    /// name the module (`origin`), the architectures and the fix.
    fn load_module(image: &[u8], checked: &Image, origin: &str) -> Result<Option<usize>>;
    /// The error when none of a module's images (for `archs`) is for this device.
    fn no_image_for_device(origin: &str, archs: &[&str]) -> Error;
    /// Looks a kernel up in a module.
    fn get_function(module: usize, name: &str) -> Result<usize>;
    /// The most threads per block `function` can be launched with on this device.
    fn max_threads(function: usize) -> Result<u32>;
    /// Launches `function` with the driver's `kernelParams` array.
    ///
    /// # Safety
    /// `params` point to values of the kernel's parameter types, in order; device pointers
    /// among them are live allocations large enough for the kernel's accesses.
    unsafe fn launch(function: usize, dims: &LaunchDims, params: &mut [*mut c_void]) -> Result<()>;
    /// Waits for all work on the device.
    fn synchronize() -> Result<()>;
    /// The modules loaded so far and the kernels found in them (one per process).
    fn registry() -> &'static Mutex<Registry>;
}

/// One loaded module: the driver's handle and the image, kept alive as long as the module.
struct Module {
    handle: usize,
    origin: String,
    image: Box<[u8]>,
}

/// A kernel: the module defining it, and (once looked up) its function and thread limit.
struct Kernel {
    module: usize,
    function: Option<(usize, u32)>,
}

/// Loaded modules and the kernels they define, by name (unique across modules).
#[derive(Default)]
pub(crate) struct Registry {
    modules: Vec<Module>,
    kernels: HashMap<String, Kernel>,
    /// The kernel launched last, named when a later call reports an earlier kernel's fault.
    last_launch: String,
}

impl Registry {
    /// Number of modules loaded.
    pub(crate) fn len(&self) -> usize {
        self.modules.len()
    }
}

fn lock<D: Driver>() -> Result<std::sync::MutexGuard<'static, Registry>> {
    D::registry().lock().map_err(|_| Error::Device {
        call: format!("{} kernel registry", D::BACKEND),
        code: "poisoned by a panic in another thread".into(),
    })
}

/// The kernel launched last on backend `D` (empty before the first launch), for error
/// messages about faults reported by later calls.
pub(crate) fn last_launch<D: Driver>() -> String {
    D::registry()
        .try_lock()
        .map(|r| r.last_launch.clone())
        .unwrap_or_default()
}

/// Whether a driver code says an earlier kernel faulted (a sticky error every later call
/// returns): illegal address, launch failure, hardware stack error, illegal instruction,
/// misaligned address, invalid PC, exception.
pub(crate) fn is_kernel_fault(code: i32) -> bool {
    matches!(code, 700 | 714..=719)
}

/// Loads the first of `images` (`(architecture, bytes)` pairs; CUDA passes one PTX) that
/// the device accepts, after checking it, and registers its kernels; `origin` names the
/// module in errors. Loading an image already loaded does nothing; a kernel name that another
/// loaded module defines is an error; no image for this device is an error naming the
/// architectures and the fix.
pub(crate) fn add_module<D: Driver>(images: &[(&str, &[u8])], origin: &str) -> Result<()> {
    D::ready()?;
    let mut reg = lock::<D>()?;
    if images
        .iter()
        .any(|(_, img)| reg.modules.iter().any(|m| *m.image == **img))
    {
        return Ok(());
    }
    let mut refused = Vec::new();
    for (arch, image) in images {
        let checked = D::inspect(image)?;
        for k in &checked.kernels {
            if let Some(other) = reg.kernels.get(k) {
                return Err(Error::invalid(
                    format!("{} kernel in {origin}", D::BACKEND),
                    k,
                    format!(
                        "{} already defines it; kernels are found by name, so every stencil \
                         loaded on a device needs its own name (a changed module cannot replace \
                         a loaded one): rename the stencil",
                        reg.modules[other.module].origin
                    ),
                ));
            }
        }
        // The registry owns the image for the module's life: HIP may read it after loading.
        let image: Box<[u8]> = (*image).into();
        let Some(handle) = D::load_module(&image, &checked, origin)? else {
            refused.push(*arch);
            continue;
        };
        let index = reg.modules.len();
        reg.modules.push(Module {
            handle,
            origin: origin.to_string(),
            image,
        });
        for k in checked.kernels {
            reg.kernels.insert(
                k,
                Kernel {
                    module: index,
                    function: None,
                },
            );
        }
        return Ok(());
    }
    Err(D::no_image_for_device(origin, &refused))
}

/// Kernel `name` (looked up once) and its maximum threads per block.
fn function<D: Driver>(name: &str) -> Result<(usize, u32)> {
    let mut reg = lock::<D>()?;
    let reg = &mut *reg;
    let Some(k) = reg.kernels.get_mut(name) else {
        return Err(Error::invalid(
            "kernel",
            name,
            format!(
                "no loaded {} module contains it: the acoustic kernels are built in; compile \
                 your own stencils with `kernels_gen::build::compile_file` in build.rs and load \
                 them with `{}` before launching",
                D::BACKEND,
                if D::BACKEND == "CUDA" {
                    "Cuda::load_module"
                } else {
                    "Hip::load_code_objects"
                }
            ),
        ));
    };
    if let Some(f) = k.function {
        return Ok(f);
    }
    let f = D::get_function(reg.modules[k.module].handle, name)?;
    let found = (f, D::max_threads(f)?);
    k.function = Some(found);
    Ok(found)
}

/// Device memory of one backend holding `len` elements of `T`. Released on drop. It has no
/// host view: copy it with the memory space's operations.
///
/// `S` is the memory space, so buffers of different backends are different types.
pub struct DeviceBuffer<S, T> {
    ptr: u64,
    len: usize,
    free: unsafe fn(u64) -> Result<()>,
    _space: PhantomData<(S, T)>,
}

impl<S, T> std::fmt::Debug for DeviceBuffer<S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer({} elements at {:#x})", self.len, self.ptr)
    }
}

// SAFETY: the buffer owns a device allocation, which any host thread may use through the
// driver (the driver calls are thread-safe); it holds no host references.
unsafe impl<S, T: Send> Send for DeviceBuffer<S, T> {}
// SAFETY: shared access only reads the pointer value; device-side writes go through `&mut`.
unsafe impl<S, T: Sync> Sync for DeviceBuffer<S, T> {}

impl<S, T> Drop for DeviceBuffer<S, T> {
    fn drop(&mut self) {
        if self.ptr != 0 {
            // SAFETY: `ptr` came from the backend's malloc and is dropped exactly once.
            if let Err(e) = unsafe { (self.free)(self.ptr) } {
                // Drop cannot return the error; a failed free is a leak worth seeing.
                eprintln!("ppstencil: releasing {self:?} failed: {e}");
            }
        }
    }
}

impl<S, T: Real> DeviceBuffer<S, T> {
    fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The device address (0 for an empty buffer), for hand-written launches.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

pub(crate) fn allocate<D: Driver, S, T: Real>(
    space: &'static str,
    len: usize,
) -> Result<DeviceBuffer<S, T>> {
    D::ready()?;
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(Error::OutOfMemory {
            space,
            bytes: usize::MAX,
        })?;
    let ptr = if bytes == 0 { 0 } else { D::malloc(bytes)? };
    let buf = DeviceBuffer {
        ptr,
        len,
        free: D::free,
        _space: PhantomData,
    };
    if bytes > 0 {
        // SAFETY: `buf` owns `bytes` bytes at `ptr`.
        unsafe { D::memset0(ptr, bytes)? };
    }
    Ok(buf)
}

pub(crate) fn copy<D: Driver, S, T: Real>(
    dst: &mut DeviceBuffer<S, T>,
    src: &DeviceBuffer<S, T>,
) -> Result<()> {
    crate::memory::check_copy_len(
        &format!("copy within {} memory", D::BACKEND),
        dst.len,
        src.len,
    )?;
    if dst.len == 0 {
        return Ok(());
    }
    D::ready()?;
    // SAFETY: both buffers hold `bytes()` bytes (lengths checked above); `&mut dst` and `&src`
    // are distinct allocations.
    unsafe { D::dtod(dst.ptr, src.ptr, dst.bytes()) }
}

pub(crate) fn copy_from_host<D: Driver, S, T: Real>(
    dst: &mut DeviceBuffer<S, T>,
    src: &[T],
) -> Result<()> {
    crate::memory::check_copy_len("copy_from_host", dst.len, src.len())?;
    if dst.len == 0 {
        return Ok(());
    }
    D::ready()?;
    // SAFETY: `src` is a live slice of exactly `dst.len` elements.
    unsafe { D::htod(dst.ptr, src.as_ptr().cast(), dst.bytes()) }
}

pub(crate) fn copy_to_host<D: Driver, S, T: Real>(
    dst: &mut [T],
    src: &DeviceBuffer<S, T>,
) -> Result<()> {
    crate::memory::check_copy_len("copy_to_host", src.len, dst.len())?;
    if src.len == 0 {
        return Ok(());
    }
    D::ready()?;
    // SAFETY: `dst` is a live, writable slice of exactly `src.len` elements of a plain
    // floating-point type.
    unsafe { D::dtoh(dst.as_mut_ptr().cast(), src.ptr, src.bytes()) }
}

/// Launches the generated kernel of stencil `S` for `T` over `grid` (the shapes were checked
/// by [`crate::launch::launch`]; the argument counts are checked here). Rows beyond what one
/// launch can cover (65,535 blocks along y) go in several launches over bands of rows. With
/// `checked`, each launch is followed by a synchronisation whose error names the kernel.
pub(crate) fn launch<D: Driver, St: Stencil, S, T: Real>(
    block: BlockSize,
    checked: bool,
    grid: &Region,
    wins: &[Window],
    outs: &mut [&mut DeviceBuffer<S, T>],
    ins: &[&DeviceBuffer<S, T>],
    reals: &[T],
) -> Result<()> {
    let info = &St::INFO;
    info.check_arity(outs.len(), ins.len(), reals.len())?;
    if !matches!(T::NAME, "f32" | "f64") {
        return Err(Error::invalid(
            "element type",
            T::NAME,
            "device kernels exist for f32 and f64",
        ));
    }
    // Every field must hold its window (which the launch layer checked against the points
    // the kernel touches).
    if wins.len() != outs.len() + ins.len() {
        return Err(Error::arity(info.name, "field windows"));
    }
    let lens = outs.iter().map(|b| b.len).chain(ins.iter().map(|b| b.len));
    let names = info.outputs.iter().chain(info.inputs.iter());
    for ((len, name), w) in lens.zip(names).zip(wins) {
        crate::memory::check_copy_len(
            &format!("kernel `{}` field `{name}`", info.name),
            w.shape.iter().fold(1usize, |n, &d| n.saturating_mul(d)),
            len,
        )?;
    }
    if grid.points() == 0 {
        return Ok(());
    }
    D::ready()?;
    let name = kernel_name::<T>(info.name);
    let (f, max_threads) = function::<D>(&name)?;
    if block.x * block.y > max_threads {
        return Err(Error::invalid(
            "block size",
            format!("{} x {}", block.x, block.y),
            format!(
                "kernel `{name}` can run at most {max_threads} threads per block on this {} \
                 device (its register use limits it): choose a block with x * y <= \
                 {max_threads}, e.g. {} x {}",
                D::BACKEND,
                block.x.min(max_threads),
                (max_threads / block.x.min(max_threads)).max(1)
            ),
        ));
    }
    // Bands of whole z-planes: a launch covers the rows (z, y) of its band along grid.y, at
    // most MAX_GRID_Y blocks of `block.y` rows (in 2D a plane is one row).
    let rows_per_plane = (grid.hi[1] - grid.lo[1]).max(1);
    let band = (super::MAX_GRID_Y as usize * block.y as usize / rows_per_plane).max(1);
    let mut z0 = grid.lo[0];
    while z0 < grid.hi[0] {
        let mut part = *grid;
        part.lo[0] = z0;
        part.hi[0] = grid.hi[0].min(z0 + band);
        launch_one::<D, S, T>(f, &name, block, &part, wins, outs, ins, reals)?;
        if checked {
            D::synchronize().map_err(|e| match e {
                Error::Device { code, .. } => Error::Device {
                    call: format!(
                        "{} kernel `{name}` (checked launch over z {}..{}, y {}..{}, x {}..{})",
                        D::BACKEND,
                        part.lo[0],
                        part.hi[0],
                        part.lo[1],
                        part.hi[1],
                        part.lo[2],
                        part.hi[2]
                    ),
                    code,
                },
                other => other,
            })?;
        }
        z0 = part.hi[0];
    }
    Ok(())
}

/// One launch of kernel `f` over `grid` (which fits the grid limits).
#[allow(clippy::too_many_arguments)]
fn launch_one<D: Driver, S, T: Real>(
    f: usize,
    name: &str,
    block: BlockSize,
    grid: &Region,
    wins: &[Window],
    outs: &[&mut DeviceBuffer<S, T>],
    ins: &[&DeviceBuffer<S, T>],
    reals: &[T],
) -> Result<()> {
    let dims = launch_dims(grid, block)?;
    // The kernel's arguments (the ABI of kernels_gen::emit::abi: nine 64-bit integers
    // nz, ny, nx, z0, z1, y0, y1, x0, x1, one pointer per output then input, the reals as
    // `T`, then per field five 64-bit integers oz, oy, ox, ny, nx: its window), stored
    // where they stay put until the launch returns (the driver copies them).
    let (n, lo, hi) = (grid.shape, grid.lo, grid.hi);
    let mut ints: Vec<i64> = [n[0], n[1], n[2], lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]]
        .iter()
        .map(|&v| v as i64)
        .collect();
    let mut ptrs: Vec<u64> = outs
        .iter()
        .map(|b| b.ptr)
        .chain(ins.iter().map(|b| b.ptr))
        .collect();
    let mut scalars: Vec<T> = reals.to_vec();
    let mut windows: Vec<i64> = wins
        .iter()
        .flat_map(|w| {
            let [oz, oy, ox] = w.origin;
            [oz, oy, ox, w.shape[1], w.shape[2]]
        })
        .map(|v| v as i64)
        .collect();
    let mut params: Vec<*mut c_void> = Vec::new();
    params.extend(ints.iter_mut().map(|v| (v as *mut i64).cast::<c_void>()));
    params.extend(ptrs.iter_mut().map(|v| (v as *mut u64).cast::<c_void>()));
    params.extend(scalars.iter_mut().map(|v| (v as *mut T).cast::<c_void>()));
    params.extend(windows.iter_mut().map(|v| (v as *mut i64).cast::<c_void>()));
    if let Ok(mut reg) = lock::<D>() {
        reg.last_launch.clear();
        reg.last_launch.push_str(name);
    }
    // SAFETY: the parameters follow the kernel's signature (above); every pointer is a live
    // allocation of its window's elements (checked by `launch`), and every point the kernel
    // touches in a field lies in its window (checked by the launch layer).
    unsafe { D::launch(f, &dims, &mut params) }
}

/// Defines a device memory space and its execution space over driver `$driver`.
macro_rules! device_space {
    ($mem:ident, $exec:ident, $driver:ty, $name:literal, $doc_mem:literal, $doc_exec:literal) => {
        #[doc = $doc_mem]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $mem;

        impl $crate::MemorySpace for $mem {
            const NAME: &'static str = $name;
            const HOST: bool = false;
            type Buffer<T: $crate::Real> = $crate::device::DeviceBuffer<$mem, T>;

            fn host_slice<T: $crate::Real>(_buf: &Self::Buffer<T>) -> Option<&[T]> {
                None
            }

            fn allocate<T: $crate::Real>(len: usize) -> $crate::Result<Self::Buffer<T>> {
                $crate::device::core::allocate::<$driver, $mem, T>($name, len)
            }
            fn len<T: $crate::Real>(buf: &Self::Buffer<T>) -> usize {
                buf.len()
            }
            fn copy<T: $crate::Real>(
                dst: &mut Self::Buffer<T>,
                src: &Self::Buffer<T>,
            ) -> $crate::Result<()> {
                $crate::device::core::copy::<$driver, $mem, T>(dst, src)
            }
            fn copy_from_host<T: $crate::Real>(
                dst: &mut Self::Buffer<T>,
                src: &[T],
            ) -> $crate::Result<()> {
                $crate::device::core::copy_from_host::<$driver, $mem, T>(dst, src)
            }
            fn copy_to_host<T: $crate::Real>(
                dst: &mut [T],
                src: &Self::Buffer<T>,
            ) -> $crate::Result<()> {
                $crate::device::core::copy_to_host::<$driver, $mem, T>(dst, src)
            }
        }

        #[doc = $doc_exec]
        #[derive(Clone, Copy, Debug)]
        pub struct $exec {
            block: $crate::device::BlockSize,
            checked: bool,
        }

        impl $exec {
            /// The block size kernels are launched with (default 32 × 8).
            pub fn block_size(&self) -> $crate::device::BlockSize {
                self.block
            }

            /// Launches with blocks of `block` threads (see [`BlockSize::new`](crate::device::BlockSize::new)).
            pub fn with_block_size(self, block: $crate::device::BlockSize) -> Self {
                $exec { block, ..self }
            }

            /// Checked launches: every launch is followed by a synchronisation, and a kernel
            /// that faults is reported under its own name (otherwise a fault surfaces at a
            /// later call). Slower; for debugging. The default is taken from the environment
            /// variable `PPSTENCIL_CHECKED_LAUNCHES=1`.
            pub fn with_checked_launches(self, checked: bool) -> Self {
                $exec { checked, ..self }
            }

            /// Whether launches are checked (see [`Self::with_checked_launches`]).
            pub fn checked_launches(&self) -> bool {
                self.checked
            }

            fn opened() -> Self {
                $exec {
                    block: Default::default(),
                    checked: std::env::var_os("PPSTENCIL_CHECKED_LAUNCHES")
                        .is_some_and(|v| v == "1"),
                }
            }
        }

        impl $crate::ExecutionSpace for $exec {
            type Memory = $mem;
            const NAME: &'static str = $name;

            fn launch<S: $crate::launch::Stencil, T: $crate::Real>(
                &self,
                grid: &$crate::launch::Region,
                wins: &[$crate::launch::Window],
                outs: &mut [&mut $crate::device::DeviceBuffer<$mem, T>],
                ins: &[&$crate::device::DeviceBuffer<$mem, T>],
                reals: &[T],
            ) -> $crate::Result<()> {
                $crate::device::core::launch::<$driver, S, $mem, T>(
                    self.block,
                    self.checked,
                    grid,
                    wins,
                    outs,
                    ins,
                    reals,
                )
            }

            fn synchronize(&self) -> $crate::Result<()> {
                <$driver as $crate::device::core::Driver>::synchronize()
            }
        }
    };
}
pub(crate) use device_space;

/// The error for a failed driver call: the call and the code's name and description. A
/// kernel fault reported by a later call says so and names the kernel launched last.
pub(crate) fn call_error<D: Driver>(
    call: impl Into<String>,
    code: i32,
    name: &str,
    text: &str,
) -> Error {
    let mut code_text = format!("{name} ({code}): {text}");
    if is_kernel_fault(code) {
        let last = last_launch::<D>();
        code_text.push_str(&format!(
            "; a kernel launched earlier failed (the last one launched was `{last}`), and the \
             device reports it at every later call: rerun with PPSTENCIL_CHECKED_LAUNCHES=1 \
             (or `with_checked_launches(true)`) to stop at the kernel that faults"
        ));
    }
    Error::Device {
        call: call.into(),
        code: code_text,
    }
}
