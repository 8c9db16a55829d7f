//! Golden-file tests of the emitted CUDA-C and HIP-C for the acoustic kernels.
//!
//! The expected text lives in `tests/golden/<stencil>.{cu,hip}` and was read and checked by a
//! person (indexing, guards, qualifiers, literals). After an intended emitter change, rerun
//! with `UPDATE_GOLDEN=1`, then review the diff before committing it.

use kernels_gen::build::stencils_in_file;
use kernels_gen::emit::c::{emit, Dialect};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn acoustic_kernels_match_the_golden_files() {
    let all = stencils_in_file(root().join("../runtime/src/kernels.rs")).expect("parses");
    // The paper's kernels, the fused step, the source/absorbing helpers, and one high-order
    // step as a representative of fd_step_2 ..= fd_step_16 (same emitter path, longer sums).
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
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut mismatches = Vec::new();
    for s in &stencils {
        for (d, ext) in [(Dialect::Cuda, "cu"), (Dialect::Hip, "hip")] {
            let text = emit(s, d);
            let path = root().join(format!("tests/golden/{}.{ext}", s.name));
            if update {
                std::fs::write(&path, &text).expect("write golden file");
                continue;
            }
            let expected = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if expected != text {
                mismatches.push(format!("{}:\n{text}", path.display()));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "emitted text differs from the golden files (UPDATE_GOLDEN=1 to rewrite, then review):\n{}",
        mismatches.join("\n")
    );
}
