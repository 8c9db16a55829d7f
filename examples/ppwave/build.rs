//! With the feature `c-reference` (on by default): compiles the C reference kernel
//! `csrc/fd_step.c` with `-O3 -march=native -fopenmp`, falling back to a build without OpenMP,
//! and then to none at all, so that a machine without a C compiler still builds ppwave; the
//! reference then reports itself unavailable (see `src/cref.rs`). Sets cfg `ppref` when the
//! kernel was compiled.
//!
//! Without the feature this script does nothing, and `cc` is not even a dependency.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(ppref)");
    #[cfg(feature = "c-reference")]
    compile_c_reference();
}

#[cfg(feature = "c-reference")]
fn compile_c_reference() {
    println!("cargo:rerun-if-changed=csrc/fd_step.c");
    let build = |openmp: bool| {
        let mut b = cc::Build::new();
        b.file("csrc/fd_step.c")
            .opt_level(3)
            .flag_if_supported("-march=native")
            .flag_if_supported("-ffp-contract=off")
            .warnings(true);
        if openmp {
            b.flag("-fopenmp");
        }
        b.cargo_warnings(false).try_compile("ppref")
    };
    if build(true).is_ok() {
        println!("cargo:rustc-link-lib=gomp");
        println!("cargo:rustc-cfg=ppref");
    } else if build(false).is_ok() {
        println!("cargo:rustc-cfg=ppref");
    } else {
        println!("cargo:warning=no C compiler: the C reference kernel is unavailable");
    }
}
