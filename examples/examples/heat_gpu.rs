//! A user-authored stencil on every backend compiled in, GPUs included: `stencils/heat.rs`
//! holds the `stencil!`; this package's `build.rs` compiles it to PTX / HIP code objects with
//! `kernels_gen::build::compile_file`, and here the code is loaded into the device space and
//! run by the same generic function as on the host (the paper's pattern: initialise on the
//! host, copy into the space, run, copy back, compare on the host).
//!
//! `cargo run --release -p ppstencil-examples --features cuda --example heat_gpu` (or `hip`).
//! Without a GPU feature it runs Serial and Rayon only and says how to add the GPUs.

use ppstencil::{ExecutionSpace, HostField, Rayon, ScalarField, Serial};
use std::process::ExitCode;

include!("../stencils/heat.rs");

const N: usize = 97;
const STEPS: usize = 100;
const ALPHA: f64 = 0.2;

/// Generic over the execution space: the fields live in `E::Memory`.
fn run<E: ExecutionSpace>(space: &E) -> ppstencil::Result<HostField<f64>> {
    let u0 = HostField::<f64>::from_fn(N, N, |z, x| {
        let r2 = (z as f64 - 48.0).powi(2) + (x as f64 - 48.0).powi(2);
        (-r2 / 18.0).exp()
    })?;
    let mut u = ScalarField::<E::Memory, f64>::from_host(&u0)?;
    let mut unew = ScalarField::<E::Memory, f64>::new(N, N)?;
    for _ in 0..STEPS {
        heat_step(space, &mut unew, &u, ALPHA)?;
        u.swap(&mut unew);
    }
    space.synchronize()?;
    u.to_host()
}

/// Largest |a - b| relative to max |a|.
fn rel_diff(a: &HostField<f64>, b: &HostField<f64>) -> f64 {
    let scale = a.max_abs().max(f64::MIN_POSITIVE);
    let diff = a
        .as_slice()
        .iter()
        .zip(b.as_slice())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    diff / scale
}

#[cfg(any(feature = "cuda", feature = "hip"))]
fn gpu_code_missing() -> Option<&'static str> {
    let e = env!("HEAT_GPU_ERROR");
    (!e.is_empty()).then_some(e)
}

#[cfg(feature = "cuda")]
fn cuda() -> ppstencil::Result<ppstencil::Cuda> {
    let cuda = ppstencil::Cuda::new()?;
    let path = format!("{}.ptx", env!("HEAT_GPU_STEM"));
    let ptx = std::fs::read(&path).map_err(|e| {
        ppstencil::Error::invalid(
            "heat_gpu PTX",
            &path,
            format!(
                "not built ({e}): {}",
                gpu_code_missing().unwrap_or("rebuild with a CUDA compiler")
            ),
        )
    })?;
    cuda.load_module(&ptx)?;
    Ok(cuda)
}

#[cfg(feature = "hip")]
fn hip() -> ppstencil::Result<ppstencil::Hip> {
    let hip = ppstencil::Hip::new()?;
    if let Some(e) = gpu_code_missing() {
        return Err(ppstencil::Error::invalid(
            "heat_gpu code objects",
            "missing",
            e,
        ));
    }
    let stem = env!("HEAT_GPU_STEM");
    let archs =
        std::env::var("PPSTENCIL_HIP_ARCHS").unwrap_or_else(|_| "gfx908,gfx90a,gfx1030".into());
    let mut images = Vec::new();
    for arch in archs.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        if let Ok(bytes) = std::fs::read(format!("{stem}.{arch}.co")) {
            images.push((arch.to_string(), bytes));
        }
    }
    let objects: Vec<(&str, &[u8])> = images
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_slice()))
        .collect();
    hip.load_code_objects(&objects)?;
    Ok(hip)
}

fn main() -> ExitCode {
    let reference = match run(&Serial) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("error: serial run failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut ok = true;
    let mut report =
        |name: &str, result: ppstencil::Result<HostField<f64>>, tolerance: f64| match result {
            Ok(u) => {
                let d = rel_diff(&reference, &u);
                let pass = d <= tolerance;
                ok &= pass;
                println!(
                    "{name:>6}: max |diff| / max |u| = {d:.1e} vs serial ({})",
                    if pass { "ok" } else { "MISMATCH" }
                );
            }
            Err(e) => println!("{name:>6}: skipped: {e}"),
        };
    report("rayon", run(&Rayon::new()), 0.0);
    #[cfg(feature = "cuda")]
    report("cuda", cuda().and_then(|c| run(&c)), 1e-12);
    #[cfg(feature = "hip")]
    report("hip", hip().and_then(|h| run(&h)), 1e-12);
    #[cfg(not(any(feature = "cuda", feature = "hip")))]
    println!("  (GPUs: rebuild with `--features cuda` or `--features hip`)");
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
