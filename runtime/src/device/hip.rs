//! The HIP backend: the [`Driver`] interface on the HIP module API (hip-sys).

use super::core::{add_module, call_error, device_space, Driver, Registry};
use super::LaunchDims;
use crate::{Error, Result};
use hip::hipError_t as E;
use hip_sys::hiprt as hip;
use std::ffi::{c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

/// The acoustic kernels as one code object per gfx architecture, compiled by build.rs (empty
/// if no compiler was found).
static BUILTIN: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/kernels.hip.rs"));
/// Why `BUILTIN` is empty (empty when it is not).
static BUILD_STATUS: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.hip.status"));

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
    /// [`Error::BackendUnavailable`] ("no HIP device ...") on a machine without one.
    pub fn new() -> Result<Self> {
        HipDriver::ready()?;
        static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
        LOADED
            .get_or_init(|| {
                if BUILTIN.is_empty() {
                    return Err(format!(
                        "the acoustic HIP kernels were not compiled when ppstencil was built: {}",
                        BUILD_STATUS.trim()
                    ));
                }
                load_code_objects(BUILTIN).map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|reason| Error::BackendUnavailable {
                backend: "HIP",
                reason,
            })?;
        Ok(Hip {
            block: Default::default(),
        })
    }

    /// Loads the code object for this GPU from `(gfx arch, code object)` pairs (e.g. your own
    /// stencils: `include!(concat!(env!("OUT_DIR"), "/stencils.hip.rs"))` after
    /// `kernels_gen::build::compile_file` in build.rs); its kernels can then be launched.
    pub fn load_code_objects(&self, objects: &[(&str, &[u8])]) -> Result<()> {
        load_code_objects(objects)
    }
}

fn load_code_objects(objects: &[(&str, &[u8])]) -> Result<()> {
    for (_, image) in objects {
        if add_module::<HipDriver>(image)? {
            return Ok(());
        }
    }
    let archs: Vec<&str> = objects.iter().map(|(a, _)| *a).collect();
    Err(Error::invalid(
        "HIP code objects",
        archs.join(","),
        "none is for this GPU: rebuild with PPSTENCIL_HIP_ARCHS listing its gfx architecture \
         (`rocminfo | grep gfx` shows it)",
    ))
}

pub(crate) struct HipDriver;

fn describe(e: E) -> (i32, String, String) {
    let read = |p: *const std::os::raw::c_char| {
        // SAFETY: the runtime returns NUL-terminated static strings (or null).
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    // SAFETY: pure lookups of static strings.
    let (name, text) = unsafe { (hip::hipGetErrorName(e), hip::hipGetErrorString(e)) };
    (
        e as i32,
        read(name).unwrap_or_else(|| "hipError_t".into()),
        read(text).unwrap_or_else(|| "no description from the runtime".into()),
    )
}

fn check(e: E, call: impl FnOnce() -> String) -> Result<()> {
    if e == E::hipSuccess {
        return Ok(());
    }
    let (code, name, text) = describe(e);
    Err(call_error(call(), code, &name, &text))
}

fn init() -> std::result::Result<(), String> {
    let hint = "run on a host with an AMD GPU and ROCm (check HIP_VISIBLE_DEVICES and access to \
                /dev/kfd), or use the Serial or Rayon execution space";
    // SAFETY: plain runtime calls writing to local out-parameters.
    unsafe {
        let r = hip::hipInit(0);
        if r != E::hipSuccess {
            let (code, name, text) = describe(r);
            return Err(format!(
                "no HIP device available: hipInit failed with {name} ({code}): {text}; {hint}"
            ));
        }
        let mut n = 0;
        let r = hip::hipGetDeviceCount(&mut n);
        if r != E::hipSuccess || n < 1 {
            return Err(format!("no HIP device: the runtime reports none; {hint}"));
        }
        check(hip::hipSetDevice(0), || "hipSetDevice(0)".into()).map_err(|e| e.to_string())
    }
}

impl Driver for HipDriver {
    const BACKEND: &'static str = "HIP";

    fn ready() -> Result<()> {
        static STATE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
        STATE
            .get_or_init(init)
            .clone()
            .map_err(|reason| Error::BackendUnavailable {
                backend: "HIP",
                reason,
            })
    }

    fn malloc(bytes: usize) -> Result<u64> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes the new allocation's address to `p`.
        let r = unsafe { hip::hipMalloc(&mut p, bytes) };
        if r == E::hipErrorOutOfMemory {
            return Err(Error::OutOfMemory {
                space: "HIP",
                bytes,
            });
        }
        check(r, || format!("hipMalloc({bytes} bytes)"))?;
        Ok(p as u64)
    }

    unsafe fn free(ptr: u64) {
        // SAFETY: the caller passes a live allocation; a failure cannot be reported from drop.
        let _ = unsafe { hip::hipFree(ptr as *mut c_void) };
    }

    unsafe fn memset0(ptr: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees `bytes` bytes at `ptr`.
        check(
            unsafe { hip::hipMemset(ptr as *mut c_void, 0, bytes) },
            || format!("hipMemset({bytes} bytes)"),
        )
    }

    unsafe fn htod(dst: u64, src: *const c_void, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges; the runtime only reads `src`.
        check(
            unsafe { hip::hipMemcpyHtoD(dst as *mut c_void, src as *mut c_void, bytes) },
            || format!("hipMemcpyHtoD({bytes} bytes)"),
        )
    }

    unsafe fn dtoh(dst: *mut c_void, src: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges.
        check(
            unsafe { hip::hipMemcpyDtoH(dst, src as *mut c_void, bytes) },
            || format!("hipMemcpyDtoH({bytes} bytes)"),
        )
    }

    unsafe fn dtod(dst: u64, src: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges.
        check(
            unsafe { hip::hipMemcpyDtoD(dst as *mut c_void, src as *mut c_void, bytes) },
            || format!("hipMemcpyDtoD({bytes} bytes)"),
        )
    }

    fn load_module(image: &[u8]) -> Result<Option<usize>> {
        let mut m = std::ptr::null_mut();
        // SAFETY: `image` is a code object that outlives the call (the runtime copies it).
        let r = unsafe { hip::hipModuleLoadData(&mut m, image.as_ptr().cast()) };
        if matches!(
            r,
            E::hipErrorNoBinaryForGpu
                | E::hipErrorInvalidImage
                | E::hipErrorInvalidKernelFile
                | E::hipErrorSharedObjectInitFailed
        ) {
            return Ok(None);
        }
        check(r, || format!("hipModuleLoadData({} bytes)", image.len()))?;
        Ok(Some(m as usize))
    }

    fn get_function(module: usize, name: &str) -> Result<Option<usize>> {
        let cname =
            CString::new(name).map_err(|_| Error::invalid("kernel", name, "no NUL bytes"))?;
        let mut f = std::ptr::null_mut();
        // SAFETY: `module` is a loaded module; `cname` outlives the call.
        let r = unsafe {
            hip::hipModuleGetFunction(&mut f, module as hip::hipModule_t, cname.as_ptr())
        };
        if r == E::hipErrorNotFound {
            return Ok(None);
        }
        check(r, || format!("hipModuleGetFunction({name})"))?;
        Ok(Some(f as usize))
    }

    unsafe fn launch(function: usize, d: &LaunchDims, params: &mut [*mut c_void]) -> Result<()> {
        // SAFETY: the caller guarantees `params` match the kernel's parameters.
        let r = unsafe {
            hip::hipModuleLaunchKernel(
                function as hip::hipFunction_t,
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
        check(r, || {
            format!(
                "hipModuleLaunchKernel(grid {:?}, block {:?})",
                d.grid, d.block
            )
        })
    }

    fn synchronize() -> Result<()> {
        Self::ready()?;
        // SAFETY: no arguments.
        check(unsafe { hip::hipDeviceSynchronize() }, || {
            "hipDeviceSynchronize".into()
        })
    }

    fn registry() -> &'static Mutex<Registry> {
        static R: OnceLock<Mutex<Registry>> = OnceLock::new();
        R.get_or_init(Default::default)
    }
}
