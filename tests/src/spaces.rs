//! One constructor per execution space the generic tests run on.
//!
//! Host spaces always exist. A device space whose backend or device is missing at run time
//! returns `None` after printing one clear skip line (straight to stderr, so it shows even
//! when the test harness captures output); set `PPSTENCIL_REQUIRE_GPU=1` to make that a
//! failure instead, on machines that must have the device.

use ppstencil::{Rayon, Serial};

/// The sequential reference backend.
pub fn serial() -> Option<Serial> {
    Some(Serial)
}

/// Rayon on its global pool with the default chunking.
pub fn rayon() -> Option<Rayon> {
    Some(Rayon::new())
}

/// Rayon on a private 2-thread pool, one row per task.
pub fn rayon_rows_of_1() -> Option<Rayon> {
    Some(Rayon::with_threads(2).expect("2-thread pool").chunk_rows(1))
}

/// Rayon on a private 3-thread pool, four rows per task (domains whose row count is not a
/// multiple of 4 end in a short chunk).
pub fn rayon_rows_of_4() -> Option<Rayon> {
    Some(Rayon::with_threads(3).expect("3-thread pool").chunk_rows(4))
}

/// Turns a device constructor's result into a space, or a skip.
///
/// Only [`ppstencil::Error::BackendUnavailable`] (no driver, no device) skips; any other
/// error is a bug and fails the test.
pub fn device_or_skip<E>(name: &str, made: ppstencil::Result<E>) -> Option<E> {
    use std::io::Write;
    use std::sync::Mutex;
    static REPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    match made {
        Ok(space) => Some(space),
        Err(e @ ppstencil::Error::BackendUnavailable { .. }) => {
            if std::env::var_os("PPSTENCIL_REQUIRE_GPU").is_some_and(|v| v == "1") {
                panic!("PPSTENCIL_REQUIRE_GPU=1 but {name} is unavailable: {e}");
            }
            let mut seen = REPORTED.lock().unwrap_or_else(|p| p.into_inner());
            if !seen.iter().any(|s| s == name) {
                seen.push(name.to_string());
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED: {name} tests pass vacuously in this process: {e}"
                );
            }
            None
        }
        Err(e) => panic!("opening the {name} execution space failed: {e}"),
    }
}

/// The CUDA execution space, or `None` (with a skip line) without a device.
#[cfg(feature = "cuda")]
pub fn cuda() -> Option<ppstencil::Cuda> {
    device_or_skip("CUDA", ppstencil::Cuda::new())
}

/// The HIP execution space, or `None` (with a skip line) without a device.
#[cfg(feature = "hip")]
pub fn hip() -> Option<ppstencil::Hip> {
    device_or_skip("HIP", ppstencil::Hip::new())
}
