//! The CUDA backend: the [`Driver`] interface on the CUDA driver API (cust's `cust::sys`).

use super::core::{add_module, call_error, device_space, Driver, Registry};
use super::LaunchDims;
use crate::{Error, Result};
use cust::sys as cu;
use std::ffi::{c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

/// The acoustic kernels as PTX, compiled by build.rs (empty if no compiler was found).
static BUILTIN_PTX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.ptx"));
/// Why `BUILTIN_PTX` is empty (empty when it is not).
static BUILD_STATUS: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.cuda.status"));

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
    /// [`Error::BackendUnavailable`] ("no CUDA device ...") on a machine without one.
    pub fn new() -> Result<Self> {
        CudaDriver::ready()?;
        static BUILTIN: OnceLock<std::result::Result<(), String>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                if BUILTIN_PTX.is_empty() {
                    return Err(format!(
                        "the acoustic CUDA kernels were not compiled when ppstencil was built: {}",
                        BUILD_STATUS.trim()
                    ));
                }
                add_module::<CudaDriver>(BUILTIN_PTX)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|reason| Error::BackendUnavailable {
                backend: "CUDA",
                reason,
            })?;
        Ok(Cuda {
            block: Default::default(),
        })
    }

    /// Loads a PTX module (e.g. your own stencils, compiled by
    /// `kernels_gen::build::compile_file` in build.rs); its kernels can then be launched.
    pub fn load_module(&self, ptx: &[u8]) -> Result<()> {
        add_module::<CudaDriver>(ptx).map(|_| ())
    }
}

pub(crate) struct CudaDriver;

fn describe(r: cu::CUresult) -> (i32, String, String) {
    let code = r as i32;
    let mut name: *const std::os::raw::c_char = std::ptr::null();
    let mut text: *const std::os::raw::c_char = std::ptr::null();
    // SAFETY: both calls only write a pointer to a static string (or fail and write nothing).
    let (rn, rt) = unsafe {
        (
            cu::cuGetErrorName(r, &mut name),
            cu::cuGetErrorString(r, &mut text),
        )
    };
    let read = |ok: bool, p: *const std::os::raw::c_char| {
        // SAFETY: on success the driver returned a NUL-terminated static string.
        (ok && !p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    let name = read(rn == cu::CUresult::CUDA_SUCCESS, name).unwrap_or_else(|| {
        match code {
            2 => "CUDA_ERROR_OUT_OF_MEMORY",
            3 => "CUDA_ERROR_NOT_INITIALIZED",
            35 => "CUDA_ERROR_INSUFFICIENT_DRIVER",
            100 => "CUDA_ERROR_NO_DEVICE",
            _ => "CUresult",
        }
        .to_string()
    });
    let text = read(rt == cu::CUresult::CUDA_SUCCESS, text).unwrap_or_else(|| match code {
        100 => "no CUDA-capable device is detected".to_string(),
        _ => "no description from the driver".to_string(),
    });
    (code, name, text)
}

fn check(r: cu::CUresult, call: impl FnOnce() -> String) -> Result<()> {
    if r == cu::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let (code, name, text) = describe(r);
    Err(call_error(call(), code, &name, &text))
}

fn init() -> std::result::Result<usize, String> {
    let hint = "run on a host with an NVIDIA GPU and its driver (check CUDA_VISIBLE_DEVICES), or \
                use the Serial or Rayon execution space";
    // SAFETY: plain driver calls writing to local out-parameters.
    unsafe {
        let r = cu::cuInit(0);
        if r != cu::CUresult::CUDA_SUCCESS {
            let (code, name, text) = describe(r);
            return Err(format!(
                "no CUDA device available: cuInit failed with {name} ({code}): {text}; {hint}"
            ));
        }
        let mut n = 0;
        let r = cu::cuDeviceGetCount(&mut n);
        if r != cu::CUresult::CUDA_SUCCESS || n < 1 {
            return Err(format!("no CUDA device: the driver reports none; {hint}"));
        }
        let mut dev = 0;
        check(cu::cuDeviceGet(&mut dev, 0), || "cuDeviceGet(0)".into())
            .map_err(|e| e.to_string())?;
        let mut ctx = std::ptr::null_mut();
        check(cu::cuDevicePrimaryCtxRetain(&mut ctx, dev), || {
            "cuDevicePrimaryCtxRetain(device 0)".into()
        })
        .map_err(|e| e.to_string())?;
        Ok(ctx as usize)
    }
}

impl Driver for CudaDriver {
    const BACKEND: &'static str = "CUDA";

    fn ready() -> Result<()> {
        static STATE: OnceLock<std::result::Result<usize, String>> = OnceLock::new();
        let ctx = STATE
            .get_or_init(init)
            .clone()
            .map_err(|reason| Error::BackendUnavailable {
                backend: "CUDA",
                reason,
            })?;
        // SAFETY: `ctx` is the retained primary context, valid for the whole process.
        check(unsafe { cu::cuCtxSetCurrent(ctx as cu::CUcontext) }, || {
            "cuCtxSetCurrent".into()
        })
    }

    fn malloc(bytes: usize) -> Result<u64> {
        let mut p: cu::CUdeviceptr = 0;
        // SAFETY: writes the new allocation's address to `p`.
        let r = unsafe { cu::cuMemAlloc_v2(&mut p, bytes) };
        if r == cu::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            return Err(Error::OutOfMemory {
                space: "CUDA",
                bytes,
            });
        }
        check(r, || format!("cuMemAlloc({bytes} bytes)"))?;
        Ok(p)
    }

    unsafe fn free(ptr: u64) {
        // SAFETY: the caller passes a live allocation; a failure cannot be reported from drop.
        let _ = unsafe { cu::cuMemFree_v2(ptr) };
    }

    unsafe fn memset0(ptr: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees `bytes` bytes at `ptr`.
        check(unsafe { cu::cuMemsetD8_v2(ptr, 0, bytes) }, || {
            format!("cuMemsetD8({bytes} bytes)")
        })
    }

    unsafe fn htod(dst: u64, src: *const c_void, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges.
        check(unsafe { cu::cuMemcpyHtoD_v2(dst, src, bytes) }, || {
            format!("cuMemcpyHtoD({bytes} bytes)")
        })
    }

    unsafe fn dtoh(dst: *mut c_void, src: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges.
        check(unsafe { cu::cuMemcpyDtoH_v2(dst, src, bytes) }, || {
            format!("cuMemcpyDtoH({bytes} bytes)")
        })
    }

    unsafe fn dtod(dst: u64, src: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges.
        check(unsafe { cu::cuMemcpyDtoD_v2(dst, src, bytes) }, || {
            format!("cuMemcpyDtoD({bytes} bytes)")
        })
    }

    fn load_module(image: &[u8]) -> Result<Option<usize>> {
        // The driver reads PTX up to a NUL byte.
        let text: Vec<u8> = image.iter().copied().take_while(|&b| b != 0).collect();
        let ptx = CString::new(text).map_err(|_| Error::invalid("PTX", "image", "not text"))?;
        let mut m = std::ptr::null_mut();
        // SAFETY: `ptx` is a NUL-terminated image that outlives the call.
        check(
            unsafe { cu::cuModuleLoadData(&mut m, ptx.as_ptr().cast()) },
            || {
                format!(
                "cuModuleLoadData(PTX, {} bytes; PTX from an nvcc newer than the driver does not \
                 load: build with PPSTENCIL_CUDA_COMPILER=clang++-16)",
                image.len()
            )
            },
        )?;
        Ok(Some(m as usize))
    }

    fn get_function(module: usize, name: &str) -> Result<Option<usize>> {
        let cname =
            CString::new(name).map_err(|_| Error::invalid("kernel", name, "no NUL bytes"))?;
        let mut f = std::ptr::null_mut();
        // SAFETY: `module` is a loaded module; `cname` outlives the call.
        let r = unsafe { cu::cuModuleGetFunction(&mut f, module as cu::CUmodule, cname.as_ptr()) };
        if r == cu::CUresult::CUDA_ERROR_NOT_FOUND {
            return Ok(None);
        }
        check(r, || format!("cuModuleGetFunction({name})"))?;
        Ok(Some(f as usize))
    }

    unsafe fn launch(function: usize, d: &LaunchDims, params: &mut [*mut c_void]) -> Result<()> {
        // SAFETY: the caller guarantees `params` match the kernel's parameters.
        let r = unsafe {
            cu::cuLaunchKernel(
                function as cu::CUfunction,
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
            format!("cuLaunchKernel(grid {:?}, block {:?})", d.grid, d.block)
        })
    }

    fn synchronize() -> Result<()> {
        Self::ready()?;
        // SAFETY: no arguments; the context is current.
        check(unsafe { cu::cuCtxSynchronize() }, || {
            "cuCtxSynchronize".into()
        })
    }

    fn registry() -> &'static Mutex<Registry> {
        static R: OnceLock<Mutex<Registry>> = OnceLock::new();
        R.get_or_init(Default::default)
    }
}
