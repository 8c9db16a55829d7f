//! Compiles the user stencils of `stencils/heat.rs` for the GPU backends that are enabled, for
//! the `heat_gpu` example: the path a user's own crate takes (see `kernels_gen::build`).
//!
//! A missing GPU compiler is not fatal here: the example then reports, at run time, why it has
//! no GPU code (`HEAT_GPU_ERROR`), and the rest of the package builds as usual.

use kernels_gen::emit::c::Dialect;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out_dir) = std::env::var_os("OUT_DIR") else {
        return;
    };
    let out = PathBuf::from(out_dir).join("heat_stencils");
    let mut errors = Vec::new();
    for (feature, dialect) in [
        ("CARGO_FEATURE_CUDA", Dialect::Cuda),
        ("CARGO_FEATURE_HIP", Dialect::Hip),
    ] {
        if std::env::var_os(feature).is_none() {
            continue;
        }
        if let Err(e) = kernels_gen::build::compile_file("stencils/heat.rs", dialect, &out) {
            println!("cargo:warning=heat_gpu example: {e}");
            errors.push(e.replace('\n', " "));
        }
    }
    println!("cargo:rustc-env=HEAT_GPU_STEM={}", out.display());
    println!("cargo:rustc-env=HEAT_GPU_ERROR={}", errors.join("; "));
}
