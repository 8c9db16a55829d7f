//! The generated CUDA-C and HIP-C compile with real GPU compilers (no GPU needed): CUDA-C to
//! PTX for sm_80 and sm_90 with clang, HIP-C to code objects for gfx90a, gfx908 and gfx1030
//! with hipcc and with clang.
//!
//! A missing compiler is a visible skip (`SKIPPED: …` on stderr), or a failure naming the
//! package with `PPSTENCIL_REQUIRE_GPU=1` (CI): see `kernels_gen::build::skip_missing_tool`.

use kernels_gen::build::{compile_file, source_for, stencils_in_file, Toolchain};
use kernels_gen::emit::c::Dialect;
use kernels_gen::ir::Stencil;
use std::path::PathBuf;

const KERNELS: [&str; 10] = [
    "add_source",
    "fd_pxx",
    "fd_pzz",
    "fd_time",
    "fd_kv2",
    "fd_step_4",
    "nd_heat1",
    "nd_lap3",
    "nd_mixed3",
    "nd_point3",
];

/// 1D and 3D stencils compiled beside the acoustic (2D) kernels.
const ND: &str = "
    fn nd_heat1(unew: out, u: in, r: real) { unew[0] = u[0] + r * d2x(u, 4) + d1x(u, 2); }
    fn nd_lap3(o: out, p: in, k: real) { o[0, 0, 0] = k * laplacian(p, 8); }
    fn nd_mixed3(o: out, p: in) { o[0, 0, 0] = d2xz(p, 4) + d2xy(p, 2) - d2yz(p, 6) + d1y(p, 2); }
    #[at(iz, iy, ix)] fn nd_point3(u: inout, a: real, iz: index, iy: index, ix: index) { u[0, 0, 0] = u[0, 0, 0] + a; }
";

/// The acoustic kernels and the 1D/3D stencils of [`ND`].
fn acoustic() -> Vec<Stencil> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut all = stencils_in_file(root.join("../runtime/src/kernels.rs")).expect("parses");
    all.extend(kernels_gen::parse_str(ND).expect("1D/3D stencils parse"));
    all
}

/// The toolchain, or `None` after a visible skip (a failure when tools are required).
fn need(tc: Option<Toolchain>, what: &str, install: &str) -> Option<Toolchain> {
    if tc.is_none() {
        kernels_gen::build::skip_missing_tool(what, install);
    }
    tc
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// PTX ISA version `major.minor` from a `.version` line.
fn ptx_version(ptx: &str) -> (u32, u32) {
    let line = ptx
        .lines()
        .find(|l| l.starts_with(".version"))
        .expect(".version line");
    let v = line.trim_start_matches(".version").trim();
    let (a, b) = v.split_once('.').expect("major.minor");
    (a.parse().expect("major"), b.parse().expect("minor"))
}

#[test]
fn cuda_c_compiles_to_ptx_for_sm80_and_sm90_with_clang() {
    let Some(tc) = need(
        Toolchain::clang(Dialect::Cuda),
        "clang >= 16 (CUDA-C to PTX)",
        "apt-get install clang-16",
    ) else {
        return;
    };
    let src = source_for(&acoustic(), Dialect::Cuda);
    let archs = vec!["sm_80".to_string(), "sm_90".to_string()];
    let out = tc
        .compile(&src, &archs, &scratch("ptx"))
        .unwrap_or_else(|e| panic!("{e}"));
    for (arch, bytes) in &out {
        let ptx = String::from_utf8(bytes.clone()).expect("PTX is text");
        assert!(ptx.contains(&format!(".target {arch}")), "{arch}:\n{ptx}");
        // ISA 7.8 or older loads on any CUDA >= 11.8 driver.
        assert!(
            ptx_version(&ptx) <= (7, 8),
            "{arch}: {:?}",
            ptx_version(&ptx)
        );
        for k in KERNELS {
            for ty in ["f32", "f64"] {
                let entry = format!(".visible .entry {k}_{ty}(");
                assert!(ptx.contains(&entry), "{arch}: no `{entry}`");
            }
        }
        // Contraction is off: the kernels round like the serial backend.
        assert!(!ptx.contains("fma.rn"), "{arch}: unexpected FMA");
    }
}

fn check_code_objects(out: &[(String, Vec<u8>)]) {
    for (arch, bytes) in out {
        assert!(
            bytes.starts_with(b"\x7fELF"),
            "{arch}: not an ELF code object"
        );
        assert!(contains(bytes, "amdgcn"), "{arch}: not an AMDGPU object");
        for k in KERNELS {
            assert!(contains(bytes, &format!("{k}_f32")), "{arch}: no {k}_f32");
            assert!(contains(bytes, &format!("{k}_f64")), "{arch}: no {k}_f64");
        }
    }
}

fn hip_archs() -> Vec<String> {
    ["gfx90a", "gfx908", "gfx1030"].map(String::from).to_vec()
}

#[test]
fn hip_c_compiles_to_code_objects_with_hipcc() {
    let hipcc = Toolchain::vendor(Dialect::Hip);
    let Some(tc) = need(hipcc, "hipcc", "apt-get install hipcc libamdhip64-dev") else {
        return;
    };
    let src = source_for(&acoustic(), Dialect::Hip);
    let out = tc
        .compile(&src, &hip_archs(), &scratch("hipcc"))
        .unwrap_or_else(|e| panic!("{e}"));
    check_code_objects(&out);
}

#[test]
fn hip_c_compiles_to_code_objects_with_plain_clang() {
    let Some(tc) = need(
        Toolchain::clang(Dialect::Hip),
        "clang >= 16 with lld (HIP-C)",
        "apt-get install clang-16 lld-16",
    ) else {
        return;
    };
    let src = source_for(&acoustic(), Dialect::Hip);
    let out = tc
        .compile(&src, &hip_archs(), &scratch("hip-clang"))
        .unwrap_or_else(|e| panic!("{e}"));
    check_code_objects(&out);
}

/// The build-script helper compiles a user-authored stencil (with `sqrt` and `max`) end to end.
#[test]
fn build_helper_compiles_a_user_stencil() {
    let Some(_) = need(
        Toolchain::clang(Dialect::Cuda),
        "clang >= 16",
        "apt-get install clang-16",
    ) else {
        return;
    };
    let dir = scratch("user");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let rs = dir.join("stencils.rs");
    std::fs::write(
        &rs,
        "ppstencil::stencil! {
            /// Heat step with a clamped, square-rooted coefficient.
            pub fn heat(unew: out, u: in, alpha: real) {
                let k = max(sqrt(alpha), 0.0);
                unew[0, 0] = u[0, 0] + k * (u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0]);
            }
        }",
    )
    .expect("write");
    // Force the clang path so the test does not depend on what else is installed.
    let clang = Toolchain::clang(Dialect::Cuda).expect("checked above");
    std::env::set_var("PPSTENCIL_CUDA_COMPILER", &clang.program);
    let written =
        compile_file(&rs, Dialect::Cuda, &dir.join("stencils")).unwrap_or_else(|e| panic!("{e}"));
    let ptx = std::fs::read_to_string(&written[0]).expect("ptx");
    assert!(ptx.contains(".entry heat_f32("), "{ptx}");
    assert!(ptx.contains(".entry heat_f64("), "{ptx}");
    assert!(
        ptx.contains("sqrt.rn.f32"),
        "sqrt must be the IEEE instruction:\n{ptx}"
    );
    assert!(dir.join("stencils.cu").is_file());
}
