//! One constructor per execution space the generic tests run on.
//!
//! Host spaces always exist. A device space whose backend or device is missing at run time
//! returns `None` after printing one clear skip line (straight to stderr, so it shows even
//! when the test harness captures output); set `PPSTENCIL_REQUIRE_GPU=1` to make that a
//! failure instead, on machines that must have the device. `.ci/soft-gpu-tests` sets it and
//! runs every generic test on the Cuda and Hip spaces against the software GPU
//! (tests/softgpu), and fails if any test was skipped.

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

/// The test files whose own `stencil!`s the generic tests launch on every space: a device
/// space gets them compiled (as a user's build.rs would) and loaded when it is opened.
#[cfg(any(feature = "cuda", feature = "hip"))]
const TEST_STENCIL_FILES: &[&str] = &[
    "tests/user_stencils.rs",
    "tests/nd_stencils.rs",
    "tests/windows.rs",
    "tests/groups.rs",
];

/// One compiled module: `(arch, image)` pairs.
#[cfg(any(feature = "cuda", feature = "hip"))]
type Module = Vec<(String, Vec<u8>)>;

/// The test files' stencils compiled for `dialect`, as modules: one module with all of them,
/// or, when that does not compile (plain clang has no `exp`/`sin`/`cos` for CUDA without the
/// SDK's libdevice), one module per stencil that compiles, with a line naming each that does
/// not (its tests then fail on this space with "no loaded module contains it"). Cached on disk
/// beside the test binaries, where the software GPU also finds the generated source.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn test_stencil_modules(dialect: kernels_gen::emit::c::Dialect) -> Result<Vec<Module>, String> {
    use kernels_gen::build::stencils_in_file;
    // One compilation at a time: the tests of a binary open spaces concurrently.
    static COMPILING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = COMPILING.lock().unwrap_or_else(|p| p.into_inner());
    let mut stencils = Vec::new();
    for file in TEST_STENCIL_FILES {
        stencils.extend(stencils_in_file(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file),
        )?);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let root = exe
        .parent()
        .ok_or("test binary has no directory")?
        .join(format!("test-stencils-{}", dialect.key()));
    if let Ok(all) = compile_cached(&stencils, dialect, &root.join("all")) {
        return Ok(vec![all]);
    }
    let mut modules = Vec::new();
    for s in &stencils {
        match compile_cached(std::slice::from_ref(s), dialect, &root.join(&s.name)) {
            Ok(m) => modules.push(m),
            Err(e) => {
                let first = e.lines().find(|l| l.contains("error")).unwrap_or_default();
                eprintln!(
                    "NOT COMPILED for {}: stencil `{}` ({first})",
                    dialect.language(),
                    s.name
                );
            }
        }
    }
    Ok(modules)
}

/// Compiles `stencils` for `dialect` into `work`, or reads the images compiled there before
/// from the same source.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn compile_cached(
    stencils: &[kernels_gen::ir::Stencil],
    dialect: kernels_gen::emit::c::Dialect,
    work: &std::path::Path,
) -> Result<Module, String> {
    use kernels_gen::build::{source_for, target_archs, Toolchain};
    let source = source_for(stencils, dialect);
    let archs = target_archs(dialect);
    let (src_ext, image_ext) = match dialect {
        kernels_gen::emit::c::Dialect::Cuda => ("cu", "ptx"),
        kernels_gen::emit::c::Dialect::Hip => ("hip", "co"),
    };
    let same_source = std::fs::read_to_string(work.join(format!("kernels.{src_ext}")))
        .is_ok_and(|old| old == source);
    if same_source {
        let cached: Option<Module> = archs
            .iter()
            .map(|a| {
                let image = std::fs::read(work.join(format!("kernels.{a}.{image_ext}"))).ok()?;
                Some((a.clone(), image))
            })
            .collect();
        if let Some(images) = cached {
            return Ok(images);
        }
    }
    let images = Toolchain::find(dialect)?.compile(&source, &archs, work);
    if images.is_err() {
        // A failed compilation is not a cache entry.
        let _ = std::fs::remove_file(work.join(format!("kernels.{src_ext}")));
    }
    images
}

/// Opens a device space and loads the test files' stencils into it.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn device_with_test_stencils<E>(
    name: &str,
    made: ppstencil::Result<E>,
    dialect: kernels_gen::emit::c::Dialect,
    load: impl Fn(&E, &[(String, Vec<u8>)]) -> ppstencil::Result<()>,
) -> Option<E> {
    let space = device_or_skip(name, made)?;
    let modules = test_stencil_modules(dialect)
        .unwrap_or_else(|e| panic!("compiling the test stencils for {name}: {e}"));
    for images in &modules {
        load(&space, images).unwrap_or_else(|e| panic!("loading the test stencils on {name}: {e}"));
    }
    Some(space)
}

/// The CUDA execution space (with the test files' stencils loaded), or `None` (with a skip
/// line) without a device.
#[cfg(feature = "cuda")]
pub fn cuda() -> Option<ppstencil::Cuda> {
    device_with_test_stencils(
        "CUDA",
        ppstencil::Cuda::new(),
        kernels_gen::emit::c::Dialect::Cuda,
        |cuda, images| cuda.load_module(&images[0].1),
    )
}

/// The HIP execution space (with the test files' stencils loaded), or `None` (with a skip
/// line) without a device.
#[cfg(feature = "hip")]
pub fn hip() -> Option<ppstencil::Hip> {
    device_with_test_stencils(
        "HIP",
        ppstencil::Hip::new(),
        kernels_gen::emit::c::Dialect::Hip,
        |hip, images| {
            let pairs: Vec<(&str, &[u8])> = images
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_slice()))
                .collect();
            hip.load_code_objects(&pairs)
        },
    )
}
