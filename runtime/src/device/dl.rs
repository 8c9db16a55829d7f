//! The vendor driver libraries, opened at run time (`dlopen`), and the table of driver entry
//! points each backend uses (`driver_api!`).
//!
//! Loading at run time means `--features cuda` / `--features hip` build on any host: no CUDA
//! toolkit, ROCm install, link stub or `HIP_PATH` is needed to compile, and a binary built with
//! them runs on a host without the library (the spaces then report "no CUDA device" / "no HIP
//! device"). Every driver result is read as a plain `i32` at this boundary, so codes newer
//! than this crate (which a Rust enum could not hold) are reported, never undefined behaviour.
//!
//! What does not live here: the meaning of the calls (`cuda.rs`, `hip.rs`) and the shared
//! memory/launch logic (`core.rs`).

use std::ffi::{c_char, c_int, c_void, CStr, CString};

#[link(name = "dl")]
extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

/// `RTLD_NOW | RTLD_LOCAL` on Linux.
const RTLD_NOW_LOCAL: c_int = 2;

/// An opened shared library; never closed (the driver stays loaded for the process).
pub(crate) struct Library(*mut c_void);

fn last_dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message owned by the loader.
    let p = unsafe { dlerror() };
    if p.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (see above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

impl Library {
    /// Opens the first of `names` the dynamic loader finds (`LD_LIBRARY_PATH`, the ld.so
    /// cache, or an absolute path).
    pub(crate) fn open(names: &[&str]) -> Result<Library, String> {
        let mut tried = Vec::new();
        for name in names {
            let c = CString::new(*name).map_err(|_| format!("bad library name {name:?}"))?;
            // SAFETY: `c` is NUL-terminated; dlopen has no other preconditions.
            let h = unsafe { dlopen(c.as_ptr(), RTLD_NOW_LOCAL) };
            if !h.is_null() {
                return Ok(Library(h));
            }
            tried.push(format!("{name}: {}", last_dl_error()));
        }
        Err(format!(
            "cannot load the driver library ({})",
            tried.join("; ")
        ))
    }

    /// The address of symbol `name`.
    pub(crate) fn symbol(&self, name: &str) -> Result<*mut c_void, String> {
        let c = CString::new(name).map_err(|_| format!("bad symbol name {name:?}"))?;
        // SAFETY: `self.0` is a live handle from dlopen; `c` is NUL-terminated.
        let p = unsafe { dlsym(self.0, c.as_ptr()) };
        if p.is_null() {
            return Err(format!("the driver library has no `{name}` (too old?)"));
        }
        Ok(p)
    }
}

/// Declares a struct of driver entry points, loaded by name from the first library found.
macro_rules! driver_api {
    (
        $(#[$meta:meta])*
        struct $api:ident from [$($lib:expr),* $(,)?] {
            $( fn $f:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty; )*
        }
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        pub(crate) struct $api {
            $( pub(crate) $f: unsafe extern "C" fn($($ty),*) -> $ret, )*
        }

        impl $api {
            /// Opens the library and looks every entry point up.
            pub(crate) fn load() -> std::result::Result<Self, String> {
                let lib = $crate::device::dl::Library::open(&[$($lib),*])?;
                Ok($api {
                    $( $f: {
                        let p = lib.symbol(stringify!($f))?;
                        // SAFETY: the symbol is the driver's function of this exact C
                        // signature (declared from the vendor's header).
                        unsafe {
                            std::mem::transmute::<*mut std::ffi::c_void, unsafe extern "C" fn($($ty),*) -> $ret>(p)
                        }
                    }, )*
                })
            }
        }
    };
}
pub(crate) use driver_api;
