//! The one implementation of device memory and kernel launch, shared by CUDA and HIP through
//! the small [`Driver`] interface (each backend implements it in a few dozen lines).

use super::{kernel_name, launch_dims, BlockSize, LaunchDims};
use crate::launch::{Region, Stencil};
use crate::{Error, Real, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Mutex;

/// The driver calls the shared implementation needs. Device pointers, modules and functions
/// are passed as integers so that the state holding them is `Send + Sync`.
pub(crate) trait Driver: 'static {
    /// `"CUDA"` or `"HIP"`.
    const BACKEND: &'static str;
    /// Initialises the driver once per process and makes the device current on this thread.
    /// Fails with [`Error::BackendUnavailable`] ("no CUDA device ...") when there is none.
    fn ready() -> Result<()>;
    /// Allocates `bytes` (> 0) bytes.
    fn malloc(bytes: usize) -> Result<u64>;
    /// Releases an allocation.
    ///
    /// # Safety
    /// `ptr` came from [`Driver::malloc`] and is not used afterwards.
    unsafe fn free(ptr: u64);
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
    /// Loads a module image (PTX text or a code object); `Ok(None)` when the image is not for
    /// this device (another GPU architecture).
    fn load_module(image: &[u8]) -> Result<Option<usize>>;
    /// Looks a kernel up in a module; `Ok(None)` if the module does not have it.
    fn get_function(module: usize, name: &str) -> Result<Option<usize>>;
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

/// Loaded modules and kernels already looked up.
#[derive(Default)]
pub(crate) struct Registry {
    modules: Vec<usize>,
    functions: HashMap<String, usize>,
}

fn lock<D: Driver>() -> Result<std::sync::MutexGuard<'static, Registry>> {
    D::registry().lock().map_err(|_| Error::Device {
        call: format!("{} kernel registry", D::BACKEND),
        code: "poisoned by a panic in another thread".into(),
    })
}

/// Loads one module image into the registry.
pub(crate) fn add_module<D: Driver>(image: &[u8]) -> Result<bool> {
    D::ready()?;
    match D::load_module(image)? {
        Some(m) => {
            lock::<D>()?.modules.push(m);
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Finds kernel `name` in the loaded modules (cached).
fn function<D: Driver>(name: &str) -> Result<usize> {
    let mut reg = lock::<D>()?;
    if let Some(&f) = reg.functions.get(name) {
        return Ok(f);
    }
    for &m in &reg.modules {
        if let Some(f) = D::get_function(m, name)? {
            reg.functions.insert(name.to_string(), f);
            return Ok(f);
        }
    }
    Err(Error::invalid(
        "kernel",
        name,
        format!(
            "no loaded {} module contains it: the acoustic kernels are built in; compile your \
             own stencils with `kernels_gen::build::compile_file` in build.rs and load them \
             with `{}` before launching",
            D::BACKEND,
            if D::BACKEND == "CUDA" {
                "Cuda::load_module"
            } else {
                "Hip::load_code_objects"
            }
        ),
    ))
}

/// Device memory of one backend holding `len` elements of `T`. Released on drop. It has no
/// host view: copy it with the memory space's operations.
///
/// `S` is the memory space, so buffers of different backends are different types.
pub struct DeviceBuffer<S, T> {
    ptr: u64,
    len: usize,
    free: unsafe fn(u64),
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
            unsafe { (self.free)(self.ptr) }
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
/// by [`crate::launch::launch`]; the argument counts are checked here).
pub(crate) fn launch<D: Driver, St: Stencil, S, T: Real>(
    block: BlockSize,
    grid: &Region,
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
    // Every field must cover the grid the kernel indexes.
    let points = grid.shape.iter().fold(1usize, |n, &d| n.saturating_mul(d));
    let lens = outs.iter().map(|b| b.len).chain(ins.iter().map(|b| b.len));
    for (len, name) in lens.zip(info.outputs.iter().chain(info.inputs.iter())) {
        crate::memory::check_copy_len(
            &format!("kernel `{}` field `{name}`", info.name),
            points,
            len,
        )?;
    }
    if grid.points() == 0 {
        return Ok(());
    }
    D::ready()?;
    let dims = launch_dims(grid, block)?;
    let f = function::<D>(&kernel_name::<T>(info.name))?;
    // The kernel's arguments, stored where they stay put until the launch returns.
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
    let mut params: Vec<*mut c_void> = Vec::new();
    params.extend(ints.iter_mut().map(|v| (v as *mut i64).cast::<c_void>()));
    params.extend(ptrs.iter_mut().map(|v| (v as *mut u64).cast::<c_void>()));
    params.extend(scalars.iter_mut().map(|v| (v as *mut T).cast::<c_void>()));
    // SAFETY: the kernel `{name}_{T}` takes nine 64-bit integers (kernels_gen::emit::abi), then
    // one pointer per output and input, then the reals as `T`; every pointer is a live
    // allocation of nz * ny * nx elements (checked above) and the grid lies inside it.
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
            type Buffer<T: $crate::Real> = $crate::device::DeviceBuffer<$mem, T>;

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
        }

        impl $exec {
            /// The block size kernels are launched with (default 32 × 8).
            pub fn block_size(&self) -> $crate::device::BlockSize {
                self.block
            }

            /// Launches with blocks of `block` threads (see [`BlockSize::new`](crate::device::BlockSize::new)).
            pub fn with_block_size(self, block: $crate::device::BlockSize) -> Self {
                $exec { block }
            }
        }

        impl $crate::ExecutionSpace for $exec {
            type Memory = $mem;
            const NAME: &'static str = $name;

            fn launch<S: $crate::launch::Stencil, T: $crate::Real>(
                &self,
                grid: &$crate::launch::Region,
                outs: &mut [&mut $crate::device::DeviceBuffer<$mem, T>],
                ins: &[&$crate::device::DeviceBuffer<$mem, T>],
                reals: &[T],
            ) -> $crate::Result<()> {
                $crate::device::core::launch::<$driver, S, $mem, T>(
                    self.block, grid, outs, ins, reals,
                )
            }

            fn synchronize(&self) -> $crate::Result<()> {
                <$driver as $crate::device::core::Driver>::synchronize()
            }
        }
    };
}
pub(crate) use device_space;

/// The error for a failed driver call: the call and the code's name and description.
pub(crate) fn call_error(call: impl Into<String>, code: i32, name: &str, text: &str) -> Error {
    Error::Device {
        call: call.into(),
        code: format!("{name} ({code}): {text}"),
    }
}
