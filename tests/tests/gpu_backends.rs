//! The CUDA and HIP spaces in every build: without the feature they say how to enable it;
//! with the feature and no device they say "no CUDA device" / "no HIP device" (CI runs this
//! with `--features cuda,hip` and no driver library); with a device (CI: the software GPU of
//! `.ci/soft-gpu-tests`, with `PPSTENCIL_REQUIRE_GPU=1`), the generated kernels agree with the
//! serial backend.

use ppstencil::device::BlockSize;
use ppstencil::kernels::{fd_pxx, fd_step_4};
use ppstencil::{
    Cuda, Error, ExecutionSpace, Hip, HostField, MemSpaceCuda, MemSpaceHip, MemorySpace,
    ScalarField, Serial,
};

fn host_fields(nz: usize, nx: usize) -> (HostField, HostField, HostField) {
    let f = |s: usize| {
        ScalarField::from_fn(nz, nx, move |z, x| {
            ((z * 31 + x * 17 + s) % 23) as f32 / 7.0
        })
        .expect("field")
    };
    (f(1), f(2), f(3))
}

/// On a real device: fd_pxx and fd_step_4 on the device equal the serial result, and bad input
/// is a typed error.
fn on_device<E: ExecutionSpace>(space: &E) {
    let (nz, nx) = (37, 45);
    let (p, pold, kv2) = host_fields(nz, nx);
    let mut want: HostField = ScalarField::new(nz, nx).expect("field");
    fd_pxx(&Serial, &mut want, &p).expect("serial");
    let dp = ScalarField::<E::Memory, f32>::from_host(&p).expect("to device");
    let mut dout = ScalarField::<E::Memory, f32>::new(nz, nx).expect("alloc");
    fd_pxx(space, &mut dout, &dp).expect("device launch");
    assert_eq!(dout.to_host().expect("to host").as_slice(), want.as_slice());

    fd_step_4(&Serial, &mut want, &p, &pold, &kv2).expect("serial");
    let dpold = ScalarField::<E::Memory, f32>::from_host(&pold).expect("to device");
    let dkv2 = ScalarField::<E::Memory, f32>::from_host(&kv2).expect("to device");
    fd_step_4(space, &mut dout, &dp, &dpold, &dkv2).expect("device launch");
    let got = dout.to_host().expect("to host");
    for (g, w) in got.as_slice().iter().zip(want.as_slice()) {
        assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{g} vs {w}");
    }

    let mut short = vec![0.0f32; nz * nx - 1];
    assert!(matches!(
        dout.copy_to_host(&mut short),
        Err(Error::SizeMismatch { .. })
    ));
    let other = ScalarField::<E::Memory, f32>::new(nz, nx + 1).expect("alloc");
    assert!(matches!(
        fd_pxx(space, &mut dout, &other),
        Err(Error::ShapeMismatch { .. })
    ));
    let huge = <E::Memory as MemorySpace>::allocate::<f64>(1 << 50);
    assert!(
        matches!(huge, Err(Error::OutOfMemory { .. })),
        "{:?}",
        huge.err()
    );
}

/// Whether this run must have the devices (`PPSTENCIL_REQUIRE_GPU=1`).
fn require_gpu() -> bool {
    std::env::var_os("PPSTENCIL_REQUIRE_GPU").is_some_and(|v| v == "1")
}

fn expect_unavailable(err: Error, backend: &str, feature: &str, enabled: bool) {
    let text = err.to_string();
    eprintln!("{backend}: {text}");
    assert!(
        matches!(err, Error::BackendUnavailable { .. }),
        "{backend}: {text}"
    );
    if enabled {
        assert!(text.contains(&format!("no {backend} device")), "{text}");
    } else {
        assert!(text.contains(&format!("--features {feature}")), "{text}");
    }
}

#[test]
fn cuda_runs_or_reports_why_not() {
    let enabled = cfg!(feature = "cuda");
    match Cuda::new() {
        Ok(cuda) => {
            on_device(&cuda);
            on_device(&cuda.with_block_size(BlockSize::new(5, 3).expect("block")));
        }
        Err(e) => {
            // PPSTENCIL_REQUIRE_GPU=1 asks every backend compiled in to work; a build without
            // the feature has no device to require.
            assert!(
                !(enabled && require_gpu()),
                "PPSTENCIL_REQUIRE_GPU=1 but: {e}"
            );
            expect_unavailable(e, "CUDA", "cuda", enabled);
            let alloc = ScalarField::<MemSpaceCuda, f32>::new(4, 4).expect_err("no device");
            expect_unavailable(alloc, "CUDA", "cuda", enabled);
        }
    }
}

#[test]
fn hip_runs_or_reports_why_not() {
    let enabled = cfg!(feature = "hip");
    match Hip::new() {
        Ok(hip) => {
            on_device(&hip);
            on_device(&hip.with_block_size(BlockSize::new(64, 1).expect("block")));
        }
        Err(e) => {
            // PPSTENCIL_REQUIRE_GPU=1 asks every backend compiled in to work; a build without
            // the feature has no device to require.
            assert!(
                !(enabled && require_gpu()),
                "PPSTENCIL_REQUIRE_GPU=1 but: {e}"
            );
            expect_unavailable(e, "HIP", "hip", enabled);
            let alloc = ScalarField::<MemSpaceHip, f32>::new(4, 4).expect_err("no device");
            expect_unavailable(alloc, "HIP", "hip", enabled);
        }
    }
}
