//! With the `cuda` / `hip` feature: generates CUDA-C / HIP-C for the acoustic kernels in
//! `src/kernels.rs` and compiles it (PTX; one code object per gfx arch) into `OUT_DIR`.
//!
//! Knobs (see `kernels_gen::build`): `PPSTENCIL_CUDA_COMPILER`, `PPSTENCIL_CUDA_ARCH`,
//! `PPSTENCIL_HIP_COMPILER`, `PPSTENCIL_HIP_ARCHS`. Without a compiler the build still
//! succeeds with a warning, and `Cuda::new()` / `Hip::new()` report why there are no kernels.

use kernels_gen::build::compile_file;
use kernels_gen::emit::c::Dialect;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        panic!("OUT_DIR is not set: run this build script through cargo");
    };
    for (feature, dialect) in [
        ("CARGO_FEATURE_CUDA", Dialect::Cuda),
        ("CARGO_FEATURE_HIP", Dialect::Hip),
    ] {
        if std::env::var_os(feature).is_none() {
            continue;
        }
        let stem = out.join("kernels");
        let status = match compile_file("src/kernels.rs", dialect, &stem) {
            Ok(_) => String::new(),
            Err(e) => {
                let first = e.lines().next().unwrap_or_default();
                println!(
                    "cargo:warning=ppstencil: the {} kernels were not compiled: {first}",
                    dialect.language()
                );
                // Empty images: the backend reports the reason at run time.
                let placeholder = match dialect {
                    Dialect::Cuda => ("kernels.ptx", ""),
                    Dialect::Hip => ("kernels.hip.rs", "&[]"),
                };
                write(&out.join(placeholder.0), placeholder.1);
                e
            }
        };
        write(
            &out.join(format!("kernels.{}.status", dialect.key())),
            &status,
        );
    }
}

fn write(path: &std::path::Path, text: &str) {
    if let Err(e) = std::fs::write(path, text) {
        panic!("cannot write {}: {e}", path.display());
    }
}
