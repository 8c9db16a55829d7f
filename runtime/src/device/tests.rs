//! Tests of the device host path (module loading, registry, contexts and devices per thread,
//! frees, launch limits, error codes), each against a bug found there. They need a device:
//! the software GPU (`eval "$(.ci/soft-gpu-env)"`, see tests/softgpu) or a real one. Without
//! one they print a skip line, or fail with `PPSTENCIL_REQUIRE_GPU=1`.
//!
//! Tests that inject failures (`PPSOFT_*` variables of the software GPU) run in a child
//! process of this test binary, so the variables touch nothing else; they only run on the
//! software GPU.

use super::core::Driver;
use super::{cuda, hip, BlockSize};
use crate::kernels::fd_pxx;
use crate::launch::Region;
use crate::{
    Cuda, Error, ExecutionSpace, Hip, MemSpaceCuda, MemSpaceHip, MemorySpace, ScalarField, Serial,
};
use kernels_gen::build::{source_for, stencils_in_source, target_archs, Toolchain};
use kernels_gen::emit::c::Dialect;
use std::ffi::c_void;
use std::path::PathBuf;
use std::process::Command;

fn require() -> bool {
    std::env::var_os("PPSTENCIL_REQUIRE_GPU").is_some_and(|v| v == "1")
}

fn open<E>(name: &str, made: crate::Result<E>) -> Option<E> {
    match made {
        Ok(e) => Some(e),
        Err(e @ Error::BackendUnavailable { .. }) if !require() => {
            eprintln!("SKIPPED: {name}: {e}");
            None
        }
        Err(e) => panic!("{name}: {e}"),
    }
}

fn cuda() -> Option<Cuda> {
    open("CUDA", Cuda::new())
}

fn hip() -> Option<Hip> {
    open("HIP", Hip::new())
}

/// Whether the device is the software GPU (which reads `PPSOFT_*` injections).
fn soft() -> bool {
    std::env::var_os("PPSOFT_SOURCE_DIRS").is_some()
}

/// Runs test `name` of this binary in a child process with `envs` (and `PPSTENCIL_CHILD=1`);
/// returns its combined output after asserting it passed.
fn child(name: &str, envs: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args([&format!("device::tests::{name}"), "--exact", "--nocapture"])
        .env("PPSTENCIL_CHILD", "1")
        .envs(envs.iter().copied())
        .output()
        .expect("run child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child {name} failed:\n{text}");
    assert!(
        text.contains("1 passed"),
        "child {name} did not run:\n{text}"
    );
    text
}

fn in_child() -> bool {
    std::env::var_os("PPSTENCIL_CHILD").is_some()
}

/// A field of `nz × nx` with varied values.
fn field<M: MemorySpace>(nz: usize, nx: usize, seed: usize) -> ScalarField<M, f32> {
    let host = ScalarField::from_fn(nz, nx, |z, x| ((z * 31 + x * 17 + seed) % 23) as f32 / 7.0)
        .expect("host field");
    ScalarField::from_host(&host).expect("to device")
}

/// fd_pxx on `space` equals the serial result, bit for bit.
fn fd_pxx_agrees<E: ExecutionSpace>(space: &E, nz: usize, nx: usize) {
    let p = field::<crate::MemSpaceHost>(nz, nx, 1);
    let mut want = ScalarField::<crate::MemSpaceHost, f32>::new(nz, nx).expect("field");
    fd_pxx(&Serial, &mut want, &p).expect("serial");
    let dp = ScalarField::<E::Memory, f32>::from_host(&p).expect("to device");
    let mut dout = ScalarField::<E::Memory, f32>::new(nz, nx).expect("alloc");
    fd_pxx(space, &mut dout, &dp).expect("device launch");
    assert_eq!(dout.to_host().expect("to host").as_slice(), want.as_slice());
}

// ---- user modules, compiled here from stencil! text -----------------------------------------

crate::stencil! {
    fn user_keep(o: out, p: in, k: real) { o[0, 0] = k * p[0, 0] + 1.0; }
    fn user_twice(o: out, p: in) { o[0, 0] = 2.0 * p[0, 0]; }
}

const USER_KEEP: &str =
    "stencil! { fn user_keep(o: out, p: in, k: real) { o[0, 0] = k * p[0, 0] + 1.0; } }";
const USER_TWICE_A: &str = "stencil! { fn user_twice(o: out, p: in) { o[0, 0] = 2.0 * p[0, 0]; } }";
const USER_TWICE_B: &str = "stencil! { fn user_twice(o: out, p: in) { o[0, 0] = 3.0 * p[0, 0]; } }";
const USER_FD_PXX: &str = "stencil! { fn fd_pxx(o: out, p: in) { o[0, 0] = p[0, 0]; } }";

/// Compiles stencil source `src` for `dialect` (the image files and the generated source
/// land under OUT_DIR, where the software GPU finds them): `(arch, image)` pairs.
fn compile(src: &str, tag: &str, dialect: Dialect) -> Vec<(String, Vec<u8>)> {
    let stencils = stencils_in_source(src).expect("stencil source");
    let work = PathBuf::from(env!("OUT_DIR"))
        .join("device-tests")
        .join(format!("{tag}-{}", dialect.key()));
    Toolchain::find(dialect)
        .expect("a GPU compiler")
        .compile(
            &source_for(&stencils, dialect),
            &target_archs(dialect),
            &work,
        )
        .expect("compiles")
}

fn load_cuda(cuda: &Cuda, src: &str, tag: &str) -> crate::Result<()> {
    cuda.load_module(&compile(src, tag, Dialect::Cuda)[0].1)
}

fn load_hip(hip: &Hip, src: &str, tag: &str) -> crate::Result<()> {
    let objects = compile(src, tag, Dialect::Hip);
    let pairs: Vec<(&str, &[u8])> = objects.iter().map(|(a, b)| (a.as_str(), &b[..])).collect();
    hip.load_code_objects(&pairs)
}

// ---- bug 1: images are validated and passed whole -------------------------------------------

#[test]
fn bug1_cuda_refuses_binary_images_instead_of_cutting_them_at_nul() {
    let Some(cuda) = cuda() else { return };
    let cubin = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\xbe\0";
    let e = cuda.load_module(cubin).expect_err("a cubin is refused");
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    assert!(e.to_string().contains("a cubin (ELF), not PTX"), "{e}");
}

#[test]
fn bug1_hip_refuses_empty_and_truncated_code_objects() {
    let Some(hip) = hip() else { return };
    let e = hip
        .load_code_objects(&[("gfx90a", &[])])
        .expect_err("empty");
    assert!(e.to_string().contains("0 bytes, not a 64-bit ELF"), "{e}");
    let objects = compile(USER_KEEP, "truncated", Dialect::Hip);
    // The software GPU's architecture, so that only the size can be wrong.
    let (arch, whole) = objects
        .iter()
        .find(|(a, _)| *a == std::env::var("PPSOFT_HIP_ARCH").unwrap_or("gfx90a".into()))
        .unwrap_or(&objects[0]);
    let half = whole[..whole.len() / 2].to_vec();
    let e = hip
        .load_code_objects(&[(arch.as_str(), &half)])
        .expect_err("truncated");
    assert!(
        e.to_string().contains("truncated: its headers declare"),
        "{e}"
    );
}

// ---- bug 2: HIP images stay alive for the module's life -------------------------------------

#[test]
fn bug2_hip_image_may_be_freed_after_loading() {
    let Some(hip) = hip() else { return };
    let objects = compile(USER_KEEP, "keep", Dialect::Hip);
    {
        // Copies that die right after loading, and memory reusing their place.
        let copies: Vec<(String, Vec<u8>)> = objects.clone();
        let pairs: Vec<(&str, &[u8])> = copies.iter().map(|(a, b)| (a.as_str(), &b[..])).collect();
        hip.load_code_objects(&pairs).expect("loads");
    }
    let _reuse: Vec<Vec<u8>> = objects.iter().map(|(_, b)| vec![0xee; b.len()]).collect();
    let p = field::<MemSpaceHip>(9, 7, 3);
    let mut o = ScalarField::<MemSpaceHip, f32>::new(9, 7).expect("alloc");
    user_keep(&hip, &mut o, &p, 0.5).expect("launch after the image was freed");
    let got = o.to_host().expect("to host");
    let ph = p.to_host().expect("to host");
    for (g, v) in got.as_slice().iter().zip(ph.as_slice()) {
        assert_eq!(*g, 0.5 * v + 1.0);
    }
}

// ---- bug 3: a buffer dropped on a fresh thread is freed -------------------------------------

fn cuda_free_bytes() -> usize {
    let (api, ctx) = cuda::test_api().expect("driver");
    let (mut free, mut total) = (0, 0);
    // SAFETY: driver calls on the primary context, writing to locals.
    unsafe {
        assert_eq!((api.cuCtxPushCurrent_v2)(ctx as *mut c_void), 0);
        assert_eq!((api.cuMemGetInfo_v2)(&mut free, &mut total), 0);
        let mut popped = std::ptr::null_mut();
        assert_eq!((api.cuCtxPopCurrent_v2)(&mut popped), 0);
    }
    free
}

#[test]
fn bug3_cuda_buffer_dropped_on_another_thread_is_freed() {
    let Some(_cuda) = cuda() else { return };
    // Other tests allocate concurrently: compare in a child with this test alone.
    if !in_child() {
        child("bug3_cuda_buffer_dropped_on_another_thread_is_freed", &[]);
        return;
    }
    let before = cuda_free_bytes();
    let buf = MemSpaceCuda::allocate::<f32>(1 << 20).expect("alloc");
    assert_eq!(cuda_free_bytes(), before - (4 << 20));
    std::thread::spawn(move || drop(buf))
        .join()
        .expect("thread");
    assert_eq!(cuda_free_bytes(), before, "the buffer leaked");
}

// ---- bug 4: kernels are registered by module; collisions are errors ------------------------

#[test]
fn bug4_user_module_may_not_redefine_a_builtin_kernel() {
    let Some(cuda) = cuda() else { return };
    let e = load_cuda(&cuda, USER_FD_PXX, "fd-pxx").expect_err("collision");
    assert!(
        e.to_string().contains("`fd_pxx_f32`") || e.to_string().contains("fd_pxx_f32"),
        "{e}"
    );
    assert!(e.to_string().contains("built-in acoustic kernels"), "{e}");
    assert!(e.to_string().contains("already defines it"), "{e}");
    let Some(hip) = hip() else { return };
    let e = load_hip(&hip, USER_FD_PXX, "fd-pxx").expect_err("collision");
    assert!(e.to_string().contains("built-in acoustic kernels"), "{e}");
    // The built-in fd_pxx still runs.
    fd_pxx_agrees(&cuda, 20, 30);
    fd_pxx_agrees(&hip, 20, 30);
}

#[test]
fn bug4_two_user_modules_may_not_define_one_kernel() {
    let Some(cuda) = cuda() else { return };
    load_cuda(&cuda, USER_TWICE_A, "twice-a").expect("first module");
    load_cuda(&cuda, USER_TWICE_A, "twice-a").expect("the same bytes again: nothing to do");
    let e = load_cuda(&cuda, USER_TWICE_B, "twice-b").expect_err("second definition");
    assert!(e.to_string().contains("user CUDA module"), "{e}");
    assert!(e.to_string().contains("rename the stencil"), "{e}");
    // The first definition is the one that runs.
    let p = field::<MemSpaceCuda>(5, 6, 2);
    let mut o = ScalarField::<MemSpaceCuda, f32>::new(5, 6).expect("alloc");
    user_twice(&cuda, &mut o, &p).expect("launch");
    let (got, ph) = (o.to_host().expect("o"), p.to_host().expect("p"));
    for (g, v) in got.as_slice().iter().zip(ph.as_slice()) {
        assert_eq!(*g, 2.0 * v);
    }
}

// ---- bug 5: a module the device cannot load is an error, not "no device" --------------------

#[test]
fn bug5_cuda_ptx_too_new_for_the_driver_is_an_error() {
    if !soft() {
        return eprintln!("SKIPPED: needs the software GPU's failure injection");
    }
    if !in_child() {
        child(
            "bug5_cuda_ptx_too_new_for_the_driver_is_an_error",
            &[("PPSOFT_CUDA_MAX_PTX", "5.0")],
        );
        return;
    }
    let e = Cuda::new().expect_err("PTX newer than the driver");
    assert!(matches!(e, Error::Device { .. }), "not a skip: {e}");
    let t = e.to_string();
    assert!(
        t.contains("built-in acoustic kernels") && t.contains("PTX for sm_"),
        "{t}"
    );
    assert!(t.contains("PPSTENCIL_CUDA_COMPILER=clang++-16"), "{t}");
}

#[test]
fn bug5_cuda_ptx_for_a_newer_gpu_is_an_error() {
    if !soft() {
        return eprintln!("SKIPPED: needs the software GPU's failure injection");
    }
    if !in_child() {
        child(
            "bug5_cuda_ptx_for_a_newer_gpu_is_an_error",
            &[("PPSOFT_CUDA_CC", "60")],
        );
        return;
    }
    let e = Cuda::new().expect_err("sm_70 PTX on sm_60");
    assert!(matches!(e, Error::Device { .. }), "not a skip: {e}");
    assert!(
        e.to_string().contains("(sm_60)") && e.to_string().contains("PPSTENCIL_CUDA_ARCH"),
        "{e}"
    );
}

#[test]
fn bug5_hip_without_a_code_object_for_the_gpu_is_an_error() {
    if !soft() {
        return eprintln!("SKIPPED: needs the software GPU's failure injection");
    }
    if !in_child() {
        child(
            "bug5_hip_without_a_code_object_for_the_gpu_is_an_error",
            &[("PPSOFT_HIP_ARCH", "gfx942")],
        );
        return;
    }
    let e = Hip::new().expect_err("no gfx942 code object");
    assert!(matches!(e, Error::Device { .. }), "not a skip: {e}");
    let t = e.to_string();
    assert!(
        t.contains("gfx908, gfx90a, gfx1030") && t.contains("PPSTENCIL_HIP_ARCHS"),
        "{t}"
    );
}

#[test]
fn bug5_a_refused_module_load_is_an_error_and_oom_is_typed() {
    if !soft() {
        return eprintln!("SKIPPED: needs the software GPU's failure injection");
    }
    if !in_child() {
        let name = "bug5_a_refused_module_load_is_an_error_and_oom_is_typed";
        child(name, &[("PPSOFT_FAIL_MODULE_LOAD", "218")]);
        child(name, &[("PPSOFT_MEMORY_BYTES", "1048576")]);
        return;
    }
    if std::env::var_os("PPSOFT_FAIL_MODULE_LOAD").is_some() {
        let e = Cuda::new().expect_err("refused");
        assert!(matches!(e, Error::Device { .. }), "not a skip: {e}");
        assert!(
            e.to_string().contains("CUDA_ERROR_INVALID_PTX (218)"),
            "{e}"
        );
        let e = Hip::new().expect_err("refused");
        assert!(matches!(e, Error::Device { .. }), "not a skip: {e}");
        assert!(
            e.to_string().contains("no code object is for this GPU"),
            "{e}"
        );
    } else {
        for e in [
            MemSpaceCuda::allocate::<f32>(1 << 19).map(drop),
            MemSpaceHip::allocate::<f32>(1 << 19).map(drop),
        ] {
            assert!(
                matches!(e, Err(Error::OutOfMemory { bytes: 2097152, .. })),
                "{e:?}"
            );
        }
    }
}

// ---- bug 6: the caller's CUDA context is restored --------------------------------------------

#[test]
fn bug6_cuda_calls_leave_the_threads_context_alone() {
    let Some(cuda) = cuda() else { return };
    let (api, _) = cuda::test_api().expect("driver");
    std::thread::spawn(move || {
        let mut other = std::ptr::null_mut();
        // SAFETY: driver calls writing to locals; device 1 exists on the software GPU (two
        // devices) and on any multi-GPU host.
        unsafe {
            let mut n = 0;
            assert_eq!((api.cuDeviceGetCount)(&mut n), 0);
            let dev = if n > 1 {
                1
            } else {
                return eprintln!("SKIPPED: one device only");
            };
            assert_eq!((api.cuDevicePrimaryCtxRetain)(&mut other, dev), 0);
            assert_eq!((api.cuCtxSetCurrent)(other), 0);
        }
        fd_pxx_agrees(&cuda, 12, 40);
        let mut now = std::ptr::null_mut();
        // SAFETY: writes the current context to a local.
        unsafe { assert_eq!((api.cuCtxGetCurrent)(&mut now), 0) };
        assert_eq!(
            now, other,
            "ppstencil replaced the thread's current context"
        );
    })
    .join()
    .expect("thread");
}

// ---- bug 7: HIP selects its device on every call ---------------------------------------------

#[test]
fn bug7_hip_works_on_a_thread_that_selected_another_device() {
    let Some(hip) = hip() else { return };
    let api = hip::test_api().expect("runtime");
    std::thread::spawn(move || {
        // SAFETY: runtime calls writing to locals.
        unsafe {
            let mut n = 0;
            assert_eq!((api.hipGetDeviceCount)(&mut n), 0);
            if n < 2 {
                return eprintln!("SKIPPED: one device only");
            }
            assert_eq!((api.hipSetDevice)(1), 0);
        }
        fd_pxx_agrees(&hip, 12, 40);
        let mut now = -1;
        // SAFETY: writes one int.
        unsafe { assert_eq!((api.hipGetDevice)(&mut now), 0) };
        assert_eq!(now, 1, "ppstencil changed the thread's device");
    })
    .join()
    .expect("thread");
}

// ---- bug 8: result codes are integers at the boundary ---------------------------------------

#[test]
fn bug8_unknown_result_codes_are_reported_by_number() {
    if !soft() {
        return eprintln!("SKIPPED: needs the software GPU's failure injection");
    }
    if !in_child() {
        child(
            "bug8_unknown_result_codes_are_reported_by_number",
            &[("PPSOFT_RESULT_OVERRIDE", "cuMemAlloc:12345")],
        );
        child(
            "bug8_unknown_result_codes_are_reported_by_number",
            &[("PPSOFT_RESULT_OVERRIDE", "hipMalloc:12345")],
        );
        return;
    }
    let e = if std::env::var("PPSOFT_RESULT_OVERRIDE").is_ok_and(|v| v.starts_with("cu")) {
        let _cuda = Cuda::new().expect("device");
        MemSpaceCuda::allocate::<f32>(16)
            .expect_err("injected code")
            .to_string()
    } else {
        let _hip = Hip::new().expect("device");
        MemSpaceHip::allocate::<f32>(16)
            .expect_err("injected code")
            .to_string()
    };
    assert!(e.contains("(12345)") && e.contains("12345"), "{e}");
}

// ---- bug 9: launch limits, checked launches -------------------------------------------------

#[test]
fn bug9_more_rows_than_one_launch_can_cover() {
    let Some(cuda) = cuda() else { return };
    // 524,300 rows at 32 x 8: 65,537 blocks along y, more than one launch may have.
    fd_pxx_agrees(&cuda, 524_300, 5);
    let Some(hip) = hip() else { return };
    fd_pxx_agrees(
        &hip.with_block_size(BlockSize::new(64, 1).expect("block")),
        70_000,
        5,
    );
}

#[test]
fn bug9_block_larger_than_the_kernel_allows_is_an_error() {
    if !soft() {
        return eprintln!("SKIPPED: needs the software GPU's failure injection");
    }
    if !in_child() {
        child(
            "bug9_block_larger_than_the_kernel_allows_is_an_error",
            &[("PPSOFT_MAX_THREADS_PER_BLOCK", "128")],
        );
        return;
    }
    for e in [
        try_fd_pxx(&cuda().expect("device")),
        try_fd_pxx(&hip().expect("device")),
    ] {
        let e = e.expect_err("256 threads > 128");
        assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
        assert!(
            e.to_string().contains("at most 128 threads per block"),
            "{e}"
        );
    }
    fd_pxx_agrees(
        &cuda()
            .expect("device")
            .with_block_size(BlockSize::new(32, 4).expect("block")),
        20,
        40,
    );
}

fn try_fd_pxx<E: ExecutionSpace>(space: &E) -> crate::Result<()> {
    let p = field::<E::Memory>(20, 40, 1);
    let mut o = ScalarField::<E::Memory, f32>::new(20, 40)?;
    fd_pxx(space, &mut o, &p)
}

#[test]
fn bug9_a_faulting_kernel_is_named() {
    if !soft() {
        return eprintln!("SKIPPED: needs the software GPU's failure injection");
    }
    if !in_child() {
        child(
            "bug9_a_faulting_kernel_is_named",
            &[("PPSOFT_FAULT_KERNEL", "fd_pxx_f32")],
        );
        return;
    }
    // Checked: the launch itself fails, naming the kernel.
    let cuda = cuda().expect("device").with_checked_launches(true);
    let e = try_fd_pxx(&cuda).expect_err("faults").to_string();
    assert!(
        e.contains("CUDA kernel `fd_pxx_f32` (checked launch"),
        "{e}"
    );
    assert!(e.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{e}");
    // Unchecked: the launch returns, the next call reports it and names the last kernel.
    let hip = hip().expect("device");
    assert!(!hip.checked_launches());
    let p = field::<MemSpaceHip>(20, 40, 1);
    let mut o = ScalarField::<MemSpaceHip, f32>::new(20, 40).expect("alloc");
    fd_pxx(&hip, &mut o, &p).expect("the launch is asynchronous");
    let e = o.to_host().expect_err("the fault surfaces").to_string();
    assert!(e.contains("the last one launched was `fd_pxx_f32`"), "{e}");
}

// ---- bug 10: no link-time dependency on a driver or toolkit ---------------------------------

#[test]
fn bug10_binaries_do_not_link_the_driver_libraries() {
    let exe = std::env::current_exe().expect("test binary");
    let out = match Command::new("readelf").arg("-d").arg(&exe).output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => return eprintln!("SKIPPED: cannot run readelf: {e}"),
    };
    assert!(out.contains("(NEEDED)"), "{out}");
    for lib in ["libcuda", "libamdhip64"] {
        assert!(!out.contains(lib), "{} links {lib}:\n{out}", exe.display());
    }
}

// ---- the registry and grid ------------------------------------------------------------------

#[test]
fn launches_cover_exactly_the_grid_in_bands() {
    let Some(cuda) = cuda() else { return };
    // A band boundary inside the grid: rows 2..65_539 at block height 1 → two launches.
    let (nz, nx) = (65_541, 3);
    let grid = Region {
        shape: [nz, 1, nx],
        lo: [2, 0, 1],
        hi: [nz - 2, 1, 2],
    };
    assert!(super::launch_dims(&grid, BlockSize::new(1, 1).expect("block")).is_err());
    fd_pxx_agrees(
        &cuda.with_block_size(BlockSize::new(1, 1).expect("block")),
        nz,
        5,
    );
    assert_eq!(<super::cuda::CudaDriver as Driver>::BACKEND, "CUDA");
}
