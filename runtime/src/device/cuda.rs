//! The CUDA backend: the [`Driver`] interface on the CUDA driver API (`libcuda.so.1`, opened
//! at run time by `dl.rs`). Every call pushes device 0's primary context and pops it after,
//! so the calling thread's own current context is left as it was.

use super::core::{add_module, call_error, device_space, Driver, Registry};
use super::dl::driver_api;
use super::image::{self, Image};
use super::LaunchDims;
use crate::{Error, Result};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

/// The acoustic kernels as PTX, compiled by build.rs (empty if no compiler was found).
static BUILTIN_PTX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.ptx"));
/// Why `BUILTIN_PTX` is empty (empty when it is not).
static BUILD_STATUS: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.cuda.status"));

/// How the built-in module is named in errors.
const BUILTIN_ORIGIN: &str = "the built-in acoustic kernels (ppstencil's kernels.ptx)";

device_space!(
    MemSpaceCuda,
    Cuda,
    CudaDriver,
    "CUDA",
    "CUDA device memory. Fields in this space can only be used by the [`Cuda`] execution space and have no host element access.",
    "The CUDA execution space: runs generated CUDA-C kernels on [`MemSpaceCuda`] data (device 0 of the process; choose it with `CUDA_VISIBLE_DEVICES`)."
);

impl Cuda {
    /// Opens device 0 and loads the acoustic kernels. Fails with
    /// [`Error::BackendUnavailable`] ("no CUDA device ...") on a machine without one, and with
    /// [`Error::Device`] when the device cannot load the kernels (naming why and the fix).
    pub fn new() -> Result<Self> {
        CudaDriver::ready()?;
        if BUILTIN_PTX.is_empty() {
            return Err(Error::BackendUnavailable {
                backend: "CUDA",
                reason: format!(
                    "the acoustic CUDA kernels were not compiled when ppstencil was built: {}",
                    BUILD_STATUS.trim()
                ),
            });
        }
        add_module::<CudaDriver>(&[("PTX", BUILTIN_PTX)], BUILTIN_ORIGIN)?;
        Ok(Cuda::opened())
    }

    /// Loads a PTX module (e.g. your own stencils, compiled by
    /// `kernels_gen::build::compile_file` in build.rs); its kernels can then be launched.
    /// Loading the same bytes again does nothing; a kernel name another loaded module defines
    /// is an error.
    pub fn load_module(&self, ptx: &[u8]) -> Result<()> {
        let n = CudaDriver::registry().lock().map_or(0, |r| r.len());
        let origin = format!("user CUDA module {n} ({} bytes)", ptx.len());
        add_module::<CudaDriver>(&[("PTX", ptx)], &origin)
    }
}

driver_api! {
    // Some entry points only serve the device tests (runtime/src/device/tests.rs).
    #[allow(dead_code)]
    struct Api from ["libcuda.so.1", "libcuda.so"] {
        fn cuInit(flags: u32) -> i32;
        fn cuDeviceGetCount(count: *mut i32) -> i32;
        fn cuDeviceGet(device: *mut i32, ordinal: i32) -> i32;
        fn cuDeviceGetAttribute(value: *mut i32, attribute: i32, device: i32) -> i32;
        fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, device: i32) -> i32;
        fn cuCtxPushCurrent_v2(ctx: *mut c_void) -> i32;
        fn cuCtxPopCurrent_v2(ctx: *mut *mut c_void) -> i32;
        fn cuCtxGetCurrent(ctx: *mut *mut c_void) -> i32;
        fn cuCtxSetCurrent(ctx: *mut c_void) -> i32;
        fn cuCtxSynchronize() -> i32;
        fn cuMemAlloc_v2(ptr: *mut u64, bytes: usize) -> i32;
        fn cuMemFree_v2(ptr: u64) -> i32;
        fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> i32;
        fn cuMemsetD8_v2(ptr: u64, value: u8, bytes: usize) -> i32;
        fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, bytes: usize) -> i32;
        fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, bytes: usize) -> i32;
        fn cuMemcpyDtoD_v2(dst: u64, src: u64, bytes: usize) -> i32;
        fn cuModuleLoadData(module: *mut *mut c_void, image: *const c_void) -> i32;
        fn cuModuleGetFunction(f: *mut *mut c_void, module: *mut c_void, name: *const c_char) -> i32;
        fn cuFuncGetAttribute(value: *mut i32, attribute: i32, f: *mut c_void) -> i32;
        fn cuLaunchKernel(
            f: *mut c_void,
            gx: u32,
            gy: u32,
            gz: u32,
            bx: u32,
            by: u32,
            bz: u32,
            shared: u32,
            stream: *mut c_void,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> i32;
        fn cuGetErrorName(code: i32, name: *mut *const c_char) -> i32;
        fn cuGetErrorString(code: i32, text: *mut *const c_char) -> i32;
    }
}

/// The driver, device 0's primary context and its compute capability (e.g. 80).
struct State {
    api: Api,
    ctx: usize,
    sm: i32,
}

// SAFETY: the function pointers and the context handle may be used from any thread (the
// driver API is thread-safe); nothing here is mutated after initialisation.
unsafe impl Send for State {}
// SAFETY: as above.
unsafe impl Sync for State {}

pub(crate) struct CudaDriver;

const CUDA_SUCCESS: i32 = 0;
const CUDA_ERROR_OUT_OF_MEMORY: i32 = 2;
const CUDA_ERROR_NO_DEVICE: i32 = 100;
/// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
const FUNC_MAX_THREADS: i32 = 0;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` and `_MINOR`.
const DEV_CC_MAJOR: i32 = 75;
const DEV_CC_MINOR: i32 = 76;

/// The code's name and description from the driver; codes it does not know (newer than the
/// driver, or than this crate) are named by number.
fn describe(api: &Api, code: i32) -> (String, String) {
    let mut name: *const c_char = std::ptr::null();
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: both calls only write a pointer to a static string (or fail and write nothing).
    let (rn, rt) = unsafe {
        (
            (api.cuGetErrorName)(code, &mut name),
            (api.cuGetErrorString)(code, &mut text),
        )
    };
    let read = |ok: bool, p: *const c_char| {
        // SAFETY: on success the driver returned a NUL-terminated static string.
        (ok && !p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    (
        read(rn == CUDA_SUCCESS, name).unwrap_or_else(|| format!("CUresult {code}")),
        read(rt == CUDA_SUCCESS, text)
            .unwrap_or_else(|| "a code this driver does not describe".to_string()),
    )
}

fn check(api: &Api, r: i32, call: impl FnOnce() -> String) -> Result<()> {
    if r == CUDA_SUCCESS {
        return Ok(());
    }
    let (name, text) = describe(api, r);
    Err(call_error::<CudaDriver>(call(), r, &name, &text))
}

fn init() -> std::result::Result<State, String> {
    let hint = "run on a host with an NVIDIA GPU and its driver (check CUDA_VISIBLE_DEVICES), or \
                use the Serial or Rayon execution space";
    let api = Api::load().map_err(|e| format!("no CUDA device available: {e}; {hint}"))?;
    // SAFETY: plain driver calls writing to local out-parameters.
    unsafe {
        let r = (api.cuInit)(0);
        if r != CUDA_SUCCESS {
            let (name, text) = describe(&api, r);
            return Err(format!(
                "no CUDA device available: cuInit failed with {name} ({r}): {text}; {hint}"
            ));
        }
        let mut n = 0;
        let r = (api.cuDeviceGetCount)(&mut n);
        if r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && n < 1) {
            return Err(format!("no CUDA device: the driver reports none; {hint}"));
        }
        let err = |e: Error| e.to_string();
        check(&api, r, || "cuDeviceGetCount".into()).map_err(err)?;
        let mut dev = 0;
        check(&api, (api.cuDeviceGet)(&mut dev, 0), || {
            "cuDeviceGet(0)".into()
        })
        .map_err(err)?;
        let (mut major, mut minor) = (0, 0);
        check(
            &api,
            (api.cuDeviceGetAttribute)(&mut major, DEV_CC_MAJOR, dev),
            || "cuDeviceGetAttribute(compute capability)".into(),
        )
        .map_err(err)?;
        check(
            &api,
            (api.cuDeviceGetAttribute)(&mut minor, DEV_CC_MINOR, dev),
            || "cuDeviceGetAttribute(compute capability)".into(),
        )
        .map_err(err)?;
        let mut ctx = std::ptr::null_mut();
        check(&api, (api.cuDevicePrimaryCtxRetain)(&mut ctx, dev), || {
            "cuDevicePrimaryCtxRetain(device 0)".into()
        })
        .map_err(err)?;
        Ok(State {
            api,
            ctx: ctx as usize,
            sm: major * 10 + minor,
        })
    }
}

fn state() -> Result<&'static State> {
    static STATE: OnceLock<std::result::Result<State, String>> = OnceLock::new();
    STATE
        .get_or_init(init)
        .as_ref()
        .map_err(|reason| Error::BackendUnavailable {
            backend: "CUDA",
            reason: reason.clone(),
        })
}

/// Device 0's primary context, current on this thread until dropped (then the thread's
/// previous context is current again).
struct Current(&'static Api);

impl Current {
    fn push() -> Result<Current> {
        let st = state()?;
        // SAFETY: `ctx` is the retained primary context, valid for the whole process.
        check(
            &st.api,
            unsafe { (st.api.cuCtxPushCurrent_v2)(st.ctx as *mut c_void) },
            || "cuCtxPushCurrent".into(),
        )?;
        Ok(Current(&st.api))
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let mut popped = std::ptr::null_mut();
        // SAFETY: pops the context `push` pushed on this thread.
        let _ = unsafe { (self.0.cuCtxPopCurrent_v2)(&mut popped) };
    }
}

/// Runs `f` with device 0's context current, then restores the thread's.
fn with_ctx<R>(f: impl FnOnce(&'static Api) -> Result<R>) -> Result<R> {
    let cur = Current::push()?;
    f(cur.0)
}

impl Driver for CudaDriver {
    const BACKEND: &'static str = "CUDA";

    fn ready() -> Result<()> {
        state().map(|_| ())
    }

    fn malloc(bytes: usize) -> Result<u64> {
        with_ctx(|api| {
            let mut p = 0u64;
            // SAFETY: writes the new allocation's address to `p`.
            let r = unsafe { (api.cuMemAlloc_v2)(&mut p, bytes) };
            if r == CUDA_ERROR_OUT_OF_MEMORY {
                return Err(Error::OutOfMemory {
                    space: "CUDA",
                    bytes,
                });
            }
            check(api, r, || format!("cuMemAlloc({bytes} bytes)"))?;
            Ok(p)
        })
    }

    unsafe fn free(ptr: u64) -> Result<()> {
        with_ctx(|api| {
            // SAFETY: the caller passes a live allocation.
            check(api, unsafe { (api.cuMemFree_v2)(ptr) }, || {
                format!("cuMemFree({ptr:#x})")
            })
        })
    }

    unsafe fn memset0(ptr: u64, bytes: usize) -> Result<()> {
        with_ctx(|api| {
            // SAFETY: the caller guarantees `bytes` bytes at `ptr`.
            check(api, unsafe { (api.cuMemsetD8_v2)(ptr, 0, bytes) }, || {
                format!("cuMemsetD8({bytes} bytes)")
            })
        })
    }

    unsafe fn htod(dst: u64, src: *const c_void, bytes: usize) -> Result<()> {
        with_ctx(|api| {
            // SAFETY: the caller guarantees both ranges.
            check(
                api,
                unsafe { (api.cuMemcpyHtoD_v2)(dst, src, bytes) },
                || format!("cuMemcpyHtoD({bytes} bytes)"),
            )
        })
    }

    unsafe fn dtoh(dst: *mut c_void, src: u64, bytes: usize) -> Result<()> {
        with_ctx(|api| {
            // SAFETY: the caller guarantees both ranges.
            check(
                api,
                unsafe { (api.cuMemcpyDtoH_v2)(dst, src, bytes) },
                || format!("cuMemcpyDtoH({bytes} bytes)"),
            )
        })
    }

    unsafe fn dtod(dst: u64, src: u64, bytes: usize) -> Result<()> {
        with_ctx(|api| {
            // SAFETY: the caller guarantees both ranges.
            check(
                api,
                unsafe { (api.cuMemcpyDtoD_v2)(dst, src, bytes) },
                || format!("cuMemcpyDtoD({bytes} bytes)"),
            )
        })
    }

    fn inspect(image: &[u8]) -> Result<Image> {
        image::ptx(image)
    }

    fn load_module(image: &[u8], checked: &Image, origin: &str) -> Result<Option<usize>> {
        // The driver reads PTX up to a NUL: `image::ptx` checked there is none inside.
        let text = image.split(|&b| b == 0).next().unwrap_or_default();
        let ptx = CString::new(text).map_err(|_| Error::invalid("PTX", origin, "not text"))?;
        let sm = state()?.sm;
        with_ctx(|api| {
            let mut m = std::ptr::null_mut();
            // SAFETY: `ptx` is a NUL-terminated image that outlives the call.
            let r = unsafe { (api.cuModuleLoadData)(&mut m, ptx.as_ptr().cast()) };
            if r != CUDA_SUCCESS {
                let (name, text) = describe(api, r);
                return Err(Error::Device {
                    call: format!(
                        "loading {origin} (PTX for {}) on CUDA device 0 (sm_{sm}) with \
                         cuModuleLoadData",
                        checked.arch
                    ),
                    code: format!(
                        "{name} ({r}): {text}; the driver cannot compile this PTX for the device: \
                         PTX from an nvcc newer than the driver does not load (build with \
                         PPSTENCIL_CUDA_COMPILER=clang++-16), and PTX for a newer GPU than \
                         sm_{sm} does not either (build with PPSTENCIL_CUDA_ARCH=sm_{sm} or lower)"
                    ),
                });
            }
            Ok(Some(m as usize))
        })
    }

    fn no_image_for_device(origin: &str, archs: &[&str]) -> Error {
        Error::Device {
            call: format!("loading {origin} on CUDA device 0"),
            code: format!("no image for this device among [{}]", archs.join(", ")),
        }
    }

    fn get_function(module: usize, name: &str) -> Result<usize> {
        let cname =
            CString::new(name).map_err(|_| Error::invalid("kernel", name, "no NUL bytes"))?;
        with_ctx(|api| {
            let mut f = std::ptr::null_mut();
            // SAFETY: `module` is a loaded module; `cname` outlives the call.
            let r =
                unsafe { (api.cuModuleGetFunction)(&mut f, module as *mut c_void, cname.as_ptr()) };
            check(api, r, || format!("cuModuleGetFunction({name})"))?;
            Ok(f as usize)
        })
    }

    fn max_threads(function: usize) -> Result<u32> {
        with_ctx(|api| {
            let mut v = 0;
            // SAFETY: `function` is a live function handle; writes one int.
            let r = unsafe {
                (api.cuFuncGetAttribute)(&mut v, FUNC_MAX_THREADS, function as *mut c_void)
            };
            check(api, r, || {
                "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)".into()
            })?;
            Ok(v.max(1) as u32)
        })
    }

    unsafe fn launch(function: usize, d: &LaunchDims, params: &mut [*mut c_void]) -> Result<()> {
        with_ctx(|api| {
            // SAFETY: the caller guarantees `params` match the kernel's parameters.
            let r = unsafe {
                (api.cuLaunchKernel)(
                    function as *mut c_void,
                    d.grid[0],
                    d.grid[1],
                    d.grid[2],
                    d.block[0],
                    d.block[1],
                    d.block[2],
                    0,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            check(api, r, || {
                format!("cuLaunchKernel(grid {:?}, block {:?})", d.grid, d.block)
            })
        })
    }

    fn synchronize() -> Result<()> {
        with_ctx(|api| {
            // SAFETY: no arguments; the context is current.
            check(api, unsafe { (api.cuCtxSynchronize)() }, || {
                "cuCtxSynchronize".into()
            })
        })
    }

    fn registry() -> &'static Mutex<Registry> {
        static R: OnceLock<Mutex<Registry>> = OnceLock::new();
        R.get_or_init(Default::default)
    }
}

/// The driver table and device 0's primary context, for the device tests.
#[cfg(all(test, feature = "cuda", feature = "hip"))]
pub(crate) fn test_api() -> Result<(&'static Api, usize)> {
    state().map(|s| (&s.api, s.ctx))
}
