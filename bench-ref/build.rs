//! Compiles the C reference kernel with `-O3 -march=native -fopenmp`. Falls back to a build
//! without OpenMP, and then to none at all (cfg `ppref_missing`), so that a machine without
//! a C compiler still builds the workspace; the reference then reports itself unavailable.
fn main() {
    println!("cargo:rerun-if-changed=csrc/fd_step.c");
    println!("cargo:rustc-check-cfg=cfg(ppref_missing)");
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
    } else if build(false).is_err() {
        println!("cargo:warning=no C compiler: the C reference kernel is unavailable");
        println!("cargo:rustc-cfg=ppref_missing");
    }
}
