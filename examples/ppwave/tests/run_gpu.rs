//! `ppwave run --backend cuda|hip`: without the feature the error names it; with it the run agrees
//! with the library or names the missing device.

mod common;

use common::*;
#[cfg(any(feature = "cuda", feature = "hip"))]
use ppstencil::StepKernels;

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_backend_without_the_feature_names_the_feature() {
    let out = scratch("cuda");
    let o = run_small(&out, &["--backend", "cuda"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a backend not built is bad input: {err}"
    );
    assert!(
        err.contains("CUDA") && err.contains("--features cuda"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "no output");
}

#[cfg(not(feature = "hip"))]
#[test]
fn hip_backend_without_the_feature_names_the_feature() {
    let out = scratch("hip");
    let o = run_small(&out, &["--backend", "hip"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a backend not built is bad input: {err}"
    );
    assert!(err.contains("--features hip"), "{err}");
    assert!(!out.exists(), "no output");
}

/// With a GPU feature on, `--backend cuda|hip` either runs and agrees with the library's
/// serial run, or (no device, as in CI) fails cleanly naming the missing device.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn gpu_backend_runs_or_names_the_missing_device(backend: &str, device: &str) {
    let out = scratch(backend);
    let o = run_small(&out, &["--backend", backend]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if o.status.success() {
        let (_, got) = parse_npy_f32(&out.join("wavefield.npy"));
        let want = library_wavefield(small_config(StepKernels::Fused));
        let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5 * scale, "{backend}: {g} vs {w}");
        }
    } else {
        assert!(err.contains(&format!("no {device} device")), "{err}");
        assert!(!out.exists(), "no output on failure");
    }
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_backend_runs_or_names_the_missing_device() {
    gpu_backend_runs_or_names_the_missing_device("cuda", "CUDA");
}

#[cfg(feature = "hip")]
#[test]
fn hip_backend_runs_or_names_the_missing_device() {
    gpu_backend_runs_or_names_the_missing_device("hip", "HIP");
}
