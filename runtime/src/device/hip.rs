//! The HIP backend: the [`Driver`] interface on the HIP module API (`libamdhip64.so`, opened
//! at run time by `dl.rs`). Every call selects device 0 on the calling thread and restores the
//! thread's previous device after.

use super::core::{add_module, call_error, device_space, Driver, Registry};
use super::dl::driver_api;
use super::image::{self, Image};
use super::LaunchDims;
use crate::{Error, Result};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

/// The acoustic kernels as one code object per gfx architecture, compiled by build.rs (empty
/// if no compiler was found).
static BUILTIN: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/kernels.hip.rs"));
/// Why `BUILTIN` is empty (empty when it is not).
static BUILD_STATUS: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.hip.status"));

/// How the built-in module is named in errors.
const BUILTIN_ORIGIN: &str = "the built-in acoustic kernels (ppstencil's kernels.hip.rs)";

device_space!(
    MemSpaceHip,
    Hip,
    HipDriver,
    "HIP",
    "HIP (AMD) device memory. Fields in this space can only be used by the [`Hip`] execution space and have no host element access.",
    "The HIP execution space: runs generated HIP-C kernels on [`MemSpaceHip`] data (device 0 of the process; choose it with `HIP_VISIBLE_DEVICES`)."
);

impl Hip {
    /// Opens device 0 and loads the acoustic kernels. Fails with
    /// [`Error::BackendUnavailable`] ("no HIP device ...") on a machine without one, and with
    /// [`Error::Device`] when no code object is for this GPU (naming the architectures and
    /// the fix).
    pub fn new() -> Result<Self> {
        HipDriver::ready()?;
        if BUILTIN.is_empty() {
            return Err(Error::BackendUnavailable {
                backend: "HIP",
                reason: format!(
                    "the acoustic HIP kernels were not compiled when ppstencil was built: {}",
                    BUILD_STATUS.trim()
                ),
            });
        }
        add_module::<HipDriver>(BUILTIN, BUILTIN_ORIGIN)?;
        Ok(Hip::opened())
    }

    /// Loads the code object for this GPU from `(gfx arch, code object)` pairs (e.g. your own
    /// stencils: `include!(concat!(env!("OUT_DIR"), "/stencils.hip.rs"))` after
    /// `kernels_gen::build::compile_file` in build.rs); its kernels can then be launched.
    /// The bytes are copied and kept for the module's life. Loading the same bytes again does
    /// nothing; a kernel name another loaded module defines is an error.
    pub fn load_code_objects(&self, objects: &[(&str, &[u8])]) -> Result<()> {
        let n = HipDriver::registry().lock().map_or(0, |r| r.len());
        add_module::<HipDriver>(objects, &format!("user HIP module {n}"))
    }
}

driver_api! {
    // Some entry points only serve the device tests (runtime/src/device/tests.rs).
    #[allow(dead_code)]
    struct Api from ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"] {
        fn hipInit(flags: u32) -> i32;
        fn hipGetDeviceCount(count: *mut i32) -> i32;
        fn hipGetDevice(device: *mut i32) -> i32;
        fn hipSetDevice(device: i32) -> i32;
        fn hipMalloc(ptr: *mut *mut c_void, bytes: usize) -> i32;
        fn hipFree(ptr: *mut c_void) -> i32;
        fn hipMemset(ptr: *mut c_void, value: i32, bytes: usize) -> i32;
        fn hipMemcpyHtoD(dst: *mut c_void, src: *mut c_void, bytes: usize) -> i32;
        fn hipMemcpyDtoH(dst: *mut c_void, src: *mut c_void, bytes: usize) -> i32;
        fn hipMemcpyDtoD(dst: *mut c_void, src: *mut c_void, bytes: usize) -> i32;
        fn hipModuleLoadData(module: *mut *mut c_void, image: *const c_void) -> i32;
        fn hipModuleGetFunction(f: *mut *mut c_void, module: *mut c_void, name: *const c_char) -> i32;
        fn hipFuncGetAttribute(value: *mut i32, attribute: i32, f: *mut c_void) -> i32;
        fn hipModuleLaunchKernel(
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
        fn hipDeviceSynchronize() -> i32;
        fn hipGetErrorName(code: i32) -> *const c_char;
        fn hipGetErrorString(code: i32) -> *const c_char;
    }
}

pub(crate) struct HipDriver;

const HIP_SUCCESS: i32 = 0;
const HIP_ERROR_OUT_OF_MEMORY: i32 = 2;
const HIP_ERROR_NO_DEVICE: i32 = 100;
/// hipErrorInvalidImage, hipErrorNoBinaryForGpu, hipErrorInvalidKernelFile,
/// hipErrorSharedObjectInitFailed: the code object is not for this device.
const NOT_FOR_DEVICE: [i32; 4] = [200, 209, 218, 303];
/// `HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
const FUNC_MAX_THREADS: i32 = 0;

fn describe(api: &Api, code: i32) -> (String, String) {
    let read = |p: *const c_char| {
        // SAFETY: the runtime returns NUL-terminated static strings (or null).
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    // SAFETY: pure lookups of static strings; any integer is accepted.
    let (name, text) = unsafe { ((api.hipGetErrorName)(code), (api.hipGetErrorString)(code)) };
    (
        read(name).unwrap_or_else(|| format!("hipError_t {code}")),
        read(text).unwrap_or_else(|| "no description from the runtime".into()),
    )
}

fn check(api: &Api, r: i32, call: impl FnOnce() -> String) -> Result<()> {
    if r == HIP_SUCCESS {
        return Ok(());
    }
    let (name, text) = describe(api, r);
    Err(call_error::<HipDriver>(call(), r, &name, &text))
}

fn init() -> std::result::Result<Api, String> {
    let hint = "run on a host with an AMD GPU and ROCm (check HIP_VISIBLE_DEVICES and access to \
                /dev/kfd), or use the Serial or Rayon execution space";
    let api = Api::load().map_err(|e| format!("no HIP device available: {e}; {hint}"))?;
    // SAFETY: plain runtime calls writing to local out-parameters.
    unsafe {
        let r = (api.hipInit)(0);
        if r != HIP_SUCCESS {
            let (name, text) = describe(&api, r);
            return Err(format!(
                "no HIP device available: hipInit failed with {name} ({r}): {text}; {hint}"
            ));
        }
        let mut n = 0;
        let r = (api.hipGetDeviceCount)(&mut n);
        if r == HIP_ERROR_NO_DEVICE || (r == HIP_SUCCESS && n < 1) {
            return Err(format!("no HIP device: the runtime reports none; {hint}"));
        }
        check(&api, r, || "hipGetDeviceCount".into()).map_err(|e| e.to_string())?;
    }
    Ok(api)
}

fn api() -> Result<&'static Api> {
    static STATE: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    STATE
        .get_or_init(init)
        .as_ref()
        .map_err(|reason| Error::BackendUnavailable {
            backend: "HIP",
            reason: reason.clone(),
        })
}

/// Device 0 selected on this thread until dropped (then the thread's previous device is
/// selected again).
struct Current {
    api: &'static Api,
    previous: i32,
}

impl Current {
    fn select() -> Result<Current> {
        let api = api()?;
        let mut previous = 0;
        // SAFETY: writes one int.
        check(api, unsafe { (api.hipGetDevice)(&mut previous) }, || {
            "hipGetDevice".into()
        })?;
        if previous != 0 {
            // SAFETY: device 0 exists (checked at initialisation).
            check(api, unsafe { (api.hipSetDevice)(0) }, || {
                "hipSetDevice(0)".into()
            })?;
        }
        Ok(Current { api, previous })
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        if self.previous != 0 {
            // SAFETY: restores the device this thread had selected.
            let _ = unsafe { (self.api.hipSetDevice)(self.previous) };
        }
    }
}

/// Runs `f` with device 0 selected, then restores the thread's device.
fn on_device0<R>(f: impl FnOnce(&'static Api) -> Result<R>) -> Result<R> {
    let cur = Current::select()?;
    f(cur.api)
}

impl Driver for HipDriver {
    const BACKEND: &'static str = "HIP";

    fn ready() -> Result<()> {
        api().map(|_| ())
    }

    fn malloc(bytes: usize) -> Result<u64> {
        on_device0(|api| {
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: writes the new allocation's address to `p`.
            let r = unsafe { (api.hipMalloc)(&mut p, bytes) };
            if r == HIP_ERROR_OUT_OF_MEMORY {
                return Err(Error::OutOfMemory {
                    space: "HIP",
                    bytes,
                });
            }
            check(api, r, || format!("hipMalloc({bytes} bytes)"))?;
            Ok(p as u64)
        })
    }

    unsafe fn free(ptr: u64) -> Result<()> {
        on_device0(|api| {
            // SAFETY: the caller passes a live allocation.
            check(api, unsafe { (api.hipFree)(ptr as *mut c_void) }, || {
                format!("hipFree({ptr:#x})")
            })
        })
    }

    unsafe fn memset0(ptr: u64, bytes: usize) -> Result<()> {
        on_device0(|api| {
            // SAFETY: the caller guarantees `bytes` bytes at `ptr`.
            check(
                api,
                unsafe { (api.hipMemset)(ptr as *mut c_void, 0, bytes) },
                || format!("hipMemset({bytes} bytes)"),
            )
        })
    }

    unsafe fn htod(dst: u64, src: *const c_void, bytes: usize) -> Result<()> {
        on_device0(|api| {
            // SAFETY: the caller guarantees both ranges; the runtime only reads `src`.
            let r = unsafe { (api.hipMemcpyHtoD)(dst as *mut c_void, src as *mut c_void, bytes) };
            check(api, r, || format!("hipMemcpyHtoD({bytes} bytes)"))
        })
    }

    unsafe fn dtoh(dst: *mut c_void, src: u64, bytes: usize) -> Result<()> {
        on_device0(|api| {
            // SAFETY: the caller guarantees both ranges.
            let r = unsafe { (api.hipMemcpyDtoH)(dst, src as *mut c_void, bytes) };
            check(api, r, || format!("hipMemcpyDtoH({bytes} bytes)"))
        })
    }

    unsafe fn dtod(dst: u64, src: u64, bytes: usize) -> Result<()> {
        on_device0(|api| {
            // SAFETY: the caller guarantees both ranges.
            let r = unsafe { (api.hipMemcpyDtoD)(dst as *mut c_void, src as *mut c_void, bytes) };
            check(api, r, || format!("hipMemcpyDtoD({bytes} bytes)"))
        })
    }

    fn inspect(image: &[u8]) -> Result<Image> {
        image::code_object(image)
    }

    fn load_module(image: &[u8], _checked: &Image, origin: &str) -> Result<Option<usize>> {
        on_device0(|api| {
            let mut m = std::ptr::null_mut();
            // SAFETY: `image` is a whole code object (checked) that the registry keeps alive
            // and unchanged for the module's life.
            let r = unsafe { (api.hipModuleLoadData)(&mut m, image.as_ptr().cast()) };
            if NOT_FOR_DEVICE.contains(&r) {
                return Ok(None);
            }
            check(api, r, || {
                format!("hipModuleLoadData({origin}, {} bytes)", image.len())
            })?;
            Ok(Some(m as usize))
        })
    }

    fn no_image_for_device(origin: &str, archs: &[&str]) -> Error {
        Error::Device {
            call: format!("loading {origin} on HIP device 0 with hipModuleLoadData"),
            code: format!(
                "no code object is for this GPU: there are code objects for [{}] only; rebuild \
                 with PPSTENCIL_HIP_ARCHS listing the GPU's gfx architecture (`rocminfo | grep \
                 gfx` shows it, e.g. gfx942 or gfx1100)",
                archs.join(", ")
            ),
        }
    }

    fn get_function(module: usize, name: &str) -> Result<usize> {
        let cname =
            CString::new(name).map_err(|_| Error::invalid("kernel", name, "no NUL bytes"))?;
        on_device0(|api| {
            let mut f = std::ptr::null_mut();
            // SAFETY: `module` is a loaded module; `cname` outlives the call.
            let r = unsafe {
                (api.hipModuleGetFunction)(&mut f, module as *mut c_void, cname.as_ptr())
            };
            check(api, r, || format!("hipModuleGetFunction({name})"))?;
            Ok(f as usize)
        })
    }

    fn max_threads(function: usize) -> Result<u32> {
        on_device0(|api| {
            let mut v = 0;
            // SAFETY: `function` is a live function handle; writes one int.
            let r = unsafe {
                (api.hipFuncGetAttribute)(&mut v, FUNC_MAX_THREADS, function as *mut c_void)
            };
            check(api, r, || {
                "hipFuncGetAttribute(MAX_THREADS_PER_BLOCK)".into()
            })?;
            Ok(v.max(1) as u32)
        })
    }

    unsafe fn launch(function: usize, d: &LaunchDims, params: &mut [*mut c_void]) -> Result<()> {
        on_device0(|api| {
            // SAFETY: the caller guarantees `params` match the kernel's parameters.
            let r = unsafe {
                (api.hipModuleLaunchKernel)(
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
                format!(
                    "hipModuleLaunchKernel(grid {:?}, block {:?})",
                    d.grid, d.block
                )
            })
        })
    }

    fn synchronize() -> Result<()> {
        on_device0(|api| {
            // SAFETY: no arguments.
            check(api, unsafe { (api.hipDeviceSynchronize)() }, || {
                "hipDeviceSynchronize".into()
            })
        })
    }

    fn registry() -> &'static Mutex<Registry> {
        static R: OnceLock<Mutex<Registry>> = OnceLock::new();
        R.get_or_init(Default::default)
    }
}

/// The runtime's entry points, for the device tests.
#[cfg(all(test, feature = "cuda", feature = "hip"))]
pub(crate) fn test_api() -> Result<&'static Api> {
    api()
}
