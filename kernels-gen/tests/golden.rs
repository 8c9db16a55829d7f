//! Golden-file tests of the emitted code of the acoustic kernels: CUDA-C and HIP-C
//! (`tests/golden/<stencil>.{cu,hip}`) and the serial and rayon Rust, pretty-printed as
//! `ppwave gen` shows it (`tests/golden/<stencil>.{serial,rayon}.rs`).
//!
//! The expected text was read and checked by a person (indexing, guards, qualifiers,
//! literals, slices, drivers). After an intended emitter change, rerun with
//! `UPDATE_GOLDEN=1`, then review the diff before committing it. The Rust goldens name the
//! runtime paths generated code calls (`::ppstencil::...`): when those move (e.g. into
//! `::ppstencil::__private`), re-bless them the same way and check that only the paths changed.

use kernels_gen::build::stencils_in_file;
use kernels_gen::emit::c::{emit, Dialect};
use kernels_gen::emit::rust::host_source;
use kernels_gen::ir::Stencil;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn acoustic_kernels_match_the_golden_files() {
    let all = stencils_in_file(root().join("../runtime/src/kernels.rs")).expect("parses");
    // The paper's kernels, the fused step, the source/absorbing helpers, and one high-order
    // step as a representative of fd_step_2 ..= fd_step_16 (same emitter path, longer sums);
    // the PML's face updates, whose profiles are indexed along x, z and (3D) y alone.
    let golden = [
        "add_source",
        "fd_pxx",
        "fd_pzz",
        "fd_time",
        "fd_kv2",
        "fd_step_4",
        "fd_step_8",
        "inject_source",
        "fd_absorb",
        "pml_update_x",
        "pml_update_z",
        "pml_psi_3d_y",
    ];
    let stencils: Vec<_> = all
        .into_iter()
        .filter(|s| golden.contains(&s.name.as_str()))
        .collect();
    assert_eq!(
        stencils.len(),
        golden.len(),
        "every golden stencil is in kernels.rs"
    );
    let mut mismatches = Vec::new();
    for s in &stencils {
        for (d, ext) in [(Dialect::Cuda, "cu"), (Dialect::Hip, "hip")] {
            check(&format!("{}.{ext}", s.name), &emit(s, d), &mut mismatches);
        }
    }
    assert!(
        mismatches.is_empty(),
        "emitted text differs from the golden files (UPDATE_GOLDEN=1 to rewrite, then review):\n{}",
        mismatches.join("\n")
    );
}

/// Compares `text` with golden file `name` (or rewrites it with `UPDATE_GOLDEN=1`).
fn check(name: &str, text: &str, mismatches: &mut Vec<String>) {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).expect("write golden file");
        return;
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if expected != text {
        mismatches.push(format!("{}:\n{text}", path.display()));
    }
}

#[test]
fn host_rust_of_the_acoustic_kernels_matches_the_golden_files() {
    let all = stencils_in_file(root().join("../runtime/src/kernels.rs")).expect("parses");
    // A two-input kernel, the time update (several inputs and a real), a high-order fused
    // step (long sums), a point stencil, an in-place (`inout`) update, and the PML's face
    // updates: a profile along x (a row slice like a field's) and along z (a scalar per row).
    let golden = [
        "fd_pxx",
        "fd_time",
        "fd_step_8",
        "add_source",
        "fd_absorb",
        "pml_update_x",
        "pml_update_z",
    ];
    let stencils: Vec<&Stencil> = all
        .iter()
        .filter(|s| golden.contains(&s.name.as_str()))
        .collect();
    assert_eq!(
        stencils.len(),
        golden.len(),
        "every golden stencil is in kernels.rs"
    );
    let mut mismatches = Vec::new();
    for s in stencils {
        for backend in ["serial", "rayon"] {
            let text = host_source(s, backend);
            check(&format!("{}.{backend}.rs", s.name), &text, &mut mismatches);
        }
    }
    assert!(
        mismatches.is_empty(),
        "emitted Rust differs from the golden files (UPDATE_GOLDEN=1 to rewrite, then review):\n{}",
        mismatches.join("\n")
    );
}

/// 1D and 3D stencils: the generated CUDA-C (the 3D row decomposition, the `plane` stride)
/// and serial Rust (tap offsets in `plane` and `nx`, row runs), read and checked by a person.
#[test]
fn one_and_three_dimensional_stencils_match_the_golden_files() {
    let stencils = kernels_gen::parse_str(
        "/// 1D explicit heat step.
         fn nd_heat1(unew: out, u: in, r: real) { unew[0] = u[0] + r * d2x(u, 2); }
         /// 3D explicit heat step with a mixed derivative.
         fn nd_heat3(unew: out, u: in, r: real) {
             unew[0, 0, 0] = u[0, 0, 0] + r * laplacian(u, 2) + d2xz(u, 2);
         }",
    )
    .expect("parses");
    let mut mismatches = Vec::new();
    for s in &stencils {
        check(
            &format!("{}.cu", s.name),
            &emit(s, Dialect::Cuda),
            &mut mismatches,
        );
        check(
            &format!("{}.serial.rs", s.name),
            &host_source(s, "serial"),
            &mut mismatches,
        );
    }
    assert!(
        mismatches.is_empty(),
        "emitted text differs from the golden files (UPDATE_GOLDEN=1 to rewrite, then review):\n{}",
        mismatches.join("\n")
    );
}
