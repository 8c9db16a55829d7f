//! Compiling the generated GPU sources: for build scripts (the runtime's and a user's), for
//! tools, and for the tests.
//!
//! ```text
//! src/my_stencils.rs ──stencils_in_file──► IR ──emit::c──► CUDA-C / HIP-C text
//!                                                           │ Toolchain::compile
//!                                                           ▼
//!                                        PTX (CUDA)   or   one code object per gfx arch (HIP)
//! ```
//!
//! # Compilers and knobs
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `PPSTENCIL_CUDA_COMPILER` | `nvcc` or a `clang++` (by path or name) | `nvcc` if on `PATH` or in `/usr/local/cuda/bin`, else the newest `clang++-N`/`clang-N` (N ≥ 16) |
//! | `PPSTENCIL_CUDA_ARCH` | the PTX target, e.g. `sm_80` | `sm_70` (PTX is JIT-compiled for any newer GPU) |
//! | `PPSTENCIL_HIP_COMPILER` | `hipcc` or a `clang++` | `hipcc` if on `PATH` or in `/opt/rocm/bin`, else the newest clang |
//! | `PPSTENCIL_HIP_ARCHS` | comma-separated gfx targets | `gfx908,gfx90a,gfx1030` |
//!
//! nvcc's PTX carries the ISA version of that nvcc: PTX from an nvcc newer than the installed
//! driver does not load. clang's PTX (ISA 6.0 for sm_70, 7.8 for sm_90 with clang 16) loads on
//! any driver of CUDA ≥ 11.8; set `PPSTENCIL_CUDA_COMPILER=clang++-16` to prefer it. hipcc is
//! always given the arch list (without one it silently targets gfx803). Plain clang compiles
//! without any GPU SDK (`-nocudainc -nocudalib` / `-nogpuinc -nogpulib`) against the small
//! [`CUDA_PRELUDE`] / [`HIP_PRELUDE`]; then `exp`, `sin` and `cos` are unavailable (they need
//! libdevice / the ROCm device libraries): use nvcc or hipcc for stencils calling them.
//!
//! Floating-point contraction is turned off (`-ffp-contract=off`, nvcc `--fmad=false`) so the
//! GPU kernels round exactly like the serial backend.
//!
//! # A user's stencils on the GPU
//!
//! Write the stencils in their own file (e.g. `src/stencils.rs`, included from `lib.rs` or
//! `main.rs` with `mod stencils;`), and compile them in `build.rs`:
//!
//! ```no_run
//! // build.rs, with `kernels-gen` as a build-dependency:
//! use kernels_gen::emit::c::Dialect;
//! fn main() {
//!     let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("stencils");
//!     if std::env::var_os("CARGO_FEATURE_CUDA").is_some() {
//!         kernels_gen::build::compile_file("src/stencils.rs", Dialect::Cuda, &out)
//!             .unwrap_or_else(|e| panic!("{e}"));
//!     }
//!     if std::env::var_os("CARGO_FEATURE_HIP").is_some() {
//!         kernels_gen::build::compile_file("src/stencils.rs", Dialect::Hip, &out)
//!             .unwrap_or_else(|e| panic!("{e}"));
//!     }
//! }
//! ```
//!
//! and load the result once, before the first launch of those stencils:
//!
//! ```ignore
//! let cuda = ppstencil::Cuda::new()?;
//! cuda.load_module(include_bytes!(concat!(env!("OUT_DIR"), "/stencils.ptx")))?;
//! let hip = ppstencil::Hip::new()?;
//! hip.load_code_objects(include!(concat!(env!("OUT_DIR"), "/stencils.hip.rs")))?;
//! ```

use crate::emit::c::{emit, Dialect};
use crate::ir::Stencil;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Definitions that let clang compile the generated CUDA-C without the CUDA SDK
/// (`-nocudainc -nocudalib`): the qualifiers, the built-in index variables, and the math
/// functions that map to single PTX instructions.
pub const CUDA_PRELUDE: &str = r#"// ppstencil prelude for clang -x cuda -nocudainc -nocudalib
#define PPSTENCIL_PRELUDE 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#include <__clang_cuda_builtin_vars.h>
"#;

/// Definitions that let clang compile the generated HIP-C without the ROCm headers
/// (`-nogpuinc -nogpulib`).
pub const HIP_PRELUDE: &str = r#"// ppstencil prelude for clang -x hip -nogpuinc -nogpulib
#define PPSTENCIL_PRELUDE 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
struct ppstencil_dim3 { unsigned x, y, z; };
#define threadIdx (ppstencil_dim3{__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z()})
#define blockIdx (ppstencil_dim3{__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z()})
#define blockDim (ppstencil_dim3{__builtin_amdgcn_workgroup_size_x(), __builtin_amdgcn_workgroup_size_y(), __builtin_amdgcn_workgroup_size_z()})
"#;

/// Math functions for the preludes, as compiler built-ins (shared by both dialects).
const PRELUDE_MATH: &str = r#"static __device__ inline float sqrtf(float x) { return __builtin_sqrtf(x); }
static __device__ inline double sqrt(double x) { return __builtin_sqrt(x); }
static __device__ inline float fabsf(float x) { return __builtin_fabsf(x); }
static __device__ inline double fabs(double x) { return __builtin_fabs(x); }
static __device__ inline float fminf(float a, float b) { return __builtin_fminf(a, b); }
static __device__ inline double fmin(double a, double b) { return __builtin_fmin(a, b); }
static __device__ inline float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
static __device__ inline double fmax(double a, double b) { return __builtin_fmax(a, b); }
"#;

/// Every `stencil!` invocation in a Rust source text (at the top level or in inline modules),
/// parsed to IR.
pub fn stencils_in_source(rust: &str) -> Result<Vec<Stencil>, String> {
    let file =
        syn::parse_file(rust).map_err(|e| format!("{}: cannot parse Rust source: {e}", at(&e)))?;
    let mut out = Vec::new();
    collect(&file.items, &mut out)?;
    Ok(out)
}

/// `line L, column C` of an error (1-based), from its span.
fn at(e: &syn::Error) -> String {
    let start = e.span().start();
    format!("line {}, column {}", start.line, start.column + 1)
}

fn collect(items: &[syn::Item], out: &mut Vec<Stencil>) -> Result<(), String> {
    for item in items {
        match item {
            syn::Item::Macro(m)
                if m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "stencil") =>
            {
                let parsed = crate::parse_stencils(m.mac.tokens.clone())
                    .map_err(|e| format!("{}: invalid stencil: {e}", at(&e)))?;
                out.extend(parsed);
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect(items, out)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every `stencil!` in the Rust file at `path`.
pub fn stencils_in_file(path: impl AsRef<Path>) -> Result<Vec<Stencil>, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    stencils_in_source(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The source text of several stencils in one dialect (one translation unit).
pub fn source_for(stencils: &[Stencil], dialect: Dialect) -> String {
    stencils
        .iter()
        .map(|s| emit(s, dialect))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Which program compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompilerKind {
    /// NVIDIA's nvcc.
    Nvcc,
    /// AMD's hipcc.
    Hipcc,
    /// Plain clang, with the preludes.
    Clang,
}

/// A GPU compiler for one dialect.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// The language it compiles.
    pub dialect: Dialect,
    /// The program run.
    pub program: PathBuf,
    /// nvcc, hipcc or clang.
    pub kind: CompilerKind,
}

fn kind_of(program: &Path) -> CompilerKind {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if name.contains("nvcc") {
        CompilerKind::Nvcc
    } else if name.contains("hipcc") {
        CompilerKind::Hipcc
    } else {
        CompilerKind::Clang
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| c.is_file())
}

/// Whether `program` runs and says it is a compiler of `kind` (`--version` exits 0 and names
/// clang, HIP or nvcc). A file that is on `PATH` but is not that compiler (a wrapper left by
/// a removed package, or `/bin/false` bound over it to hide it) counts as absent.
fn runs_as(program: &Path, kind: CompilerKind) -> bool {
    let Ok(out) = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    out.status.success()
        && match kind {
            CompilerKind::Nvcc => text.contains("nvcc") || text.contains("Cuda compilation"),
            CompilerKind::Hipcc => text.contains("HIP version") || text.contains("clang version"),
            CompilerKind::Clang => text.contains("clang version"),
        }
}

/// `name` on `PATH` (or the path itself) when it runs as a compiler of its kind.
fn working(name: &str) -> Option<PathBuf> {
    on_path(name).filter(|p| runs_as(p, kind_of(p)))
}

fn clang_candidates() -> Vec<String> {
    let mut v = Vec::new();
    for n in (16..=22).rev() {
        v.push(format!("clang++-{n}"));
        v.push(format!("clang-{n}"));
    }
    v.push("clang++".into());
    v.push("clang".into());
    v
}

/// The environment variable naming the compiler of `dialect`.
pub fn compiler_var(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Cuda => "PPSTENCIL_CUDA_COMPILER",
        Dialect::Hip => "PPSTENCIL_HIP_COMPILER",
    }
}

/// The environment variable naming the target architectures of `dialect`.
pub fn arch_var(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Cuda => "PPSTENCIL_CUDA_ARCH",
        Dialect::Hip => "PPSTENCIL_HIP_ARCHS",
    }
}

/// The architectures to compile for: the environment knob, else `sm_70` (CUDA) or
/// `gfx908, gfx90a, gfx1030` (HIP).
pub fn target_archs(dialect: Dialect) -> Vec<String> {
    let default = match dialect {
        Dialect::Cuda => "sm_70",
        Dialect::Hip => "gfx908,gfx90a,gfx1030",
    };
    let v = std::env::var(arch_var(dialect)).unwrap_or_else(|_| default.to_string());
    v.split(',')
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect()
}

impl Toolchain {
    /// Finds a compiler for `dialect`: the environment knob, else nvcc / hipcc, else clang.
    /// The error names the package to install.
    pub fn find(dialect: Dialect) -> Result<Toolchain, String> {
        let var = compiler_var(dialect);
        if let Ok(p) = std::env::var(var) {
            let program = on_path(&p).ok_or_else(|| format!("{var}={p}: no such program"))?;
            if !runs_as(&program, kind_of(&program)) {
                return Err(format!(
                    "{var}={p}: `{} --version` does not identify a clang, hipcc or nvcc \
                     compiler; point {var} at one",
                    program.display()
                ));
            }
            return Ok(Toolchain {
                dialect,
                kind: kind_of(&program),
                program,
            });
        }
        if let Some(tc) = Self::vendor(dialect) {
            return Ok(tc);
        }
        Self::clang(dialect).ok_or_else(|| match dialect {
            Dialect::Cuda => "no CUDA compiler found: install nvcc (CUDA toolkit) or clang >= 16 \
                 (Debian: `apt-get install clang-16`), or set PPSTENCIL_CUDA_COMPILER"
                .to_string(),
            Dialect::Hip => "no HIP compiler found: install hipcc (Debian: `apt-get install hipcc \
                 libamdhip64-dev`) or clang >= 16 with lld (`apt-get install clang-16 lld-16`), \
                 or set PPSTENCIL_HIP_COMPILER"
                .to_string(),
        })
    }

    /// The vendor compiler of `dialect` (nvcc / hipcc, on `PATH` or in its usual place), if
    /// one runs.
    pub fn vendor(dialect: Dialect) -> Option<Toolchain> {
        let names: &[&str] = match dialect {
            Dialect::Cuda => &["nvcc", "/usr/local/cuda/bin/nvcc"],
            Dialect::Hip => &["hipcc", "/opt/rocm/bin/hipcc"],
        };
        names.iter().find_map(|c| {
            working(c).map(|program| Toolchain {
                dialect,
                kind: kind_of(&program),
                program,
            })
        })
    }

    /// The newest clang >= 16 on `PATH`, for `dialect`, if any.
    pub fn clang(dialect: Dialect) -> Option<Toolchain> {
        clang_candidates().iter().find_map(|c| {
            working(c).map(|program| Toolchain {
                dialect,
                program,
                kind: CompilerKind::Clang,
            })
        })
    }

    /// Compiles `source` for each of `archs`. CUDA: one PTX per arch; HIP: one code object per
    /// arch. Returns `(arch, bytes)` pairs. `work` is a scratch directory.
    pub fn compile(
        &self,
        source: &str,
        archs: &[String],
        work: &Path,
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        if archs.is_empty() {
            return Err(format!(
                "no target architecture given (set {})",
                arch_var(self.dialect)
            ));
        }
        std::fs::create_dir_all(work)
            .map_err(|e| format!("cannot create {}: {e}", work.display()))?;
        let ext = match self.dialect {
            Dialect::Cuda => "cu",
            Dialect::Hip => "hip",
        };
        let src = work.join(format!("kernels.{ext}"));
        std::fs::write(&src, source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        let prelude = work.join("ppstencil_prelude.h");
        let prelude_text = match self.dialect {
            Dialect::Cuda => format!("{CUDA_PRELUDE}{PRELUDE_MATH}"),
            Dialect::Hip => format!("{HIP_PRELUDE}{PRELUDE_MATH}"),
        };
        std::fs::write(&prelude, prelude_text)
            .map_err(|e| format!("cannot write {}: {e}", prelude.display()))?;
        let mut out = Vec::new();
        for arch in archs {
            let obj = work.join(format!(
                "kernels.{arch}.{}",
                match self.dialect {
                    Dialect::Cuda => "ptx",
                    Dialect::Hip => "co",
                }
            ));
            let mut cmd = Command::new(&self.program);
            match (self.dialect, self.kind) {
                (Dialect::Cuda, CompilerKind::Nvcc) => {
                    let compute = arch.replace("sm_", "compute_");
                    cmd.args(["--ptx", "-O3", "--fmad=false"])
                        .arg(format!("-arch={compute}"));
                }
                (Dialect::Cuda, _) => {
                    cmd.args([
                        "-x",
                        "cuda",
                        "--cuda-device-only",
                        "-nocudainc",
                        "-nocudalib",
                    ])
                    .arg(format!("--cuda-gpu-arch={arch}"))
                    .args(["-O3", "-ffp-contract=off", "-S", "-include"])
                    .arg(&prelude);
                }
                (Dialect::Hip, CompilerKind::Hipcc) => {
                    cmd.args([
                        "--genco",
                        "--no-gpu-bundle-output",
                        "-O3",
                        "-ffp-contract=off",
                    ])
                    .arg(format!("--offload-arch={arch}"));
                }
                (Dialect::Hip, _) => {
                    cmd.args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"])
                        .args(["-nogpuinc", "-nogpulib", "-O3", "-ffp-contract=off"])
                        .arg(format!("--offload-arch={arch}"))
                        .arg("-include")
                        .arg(&prelude);
                }
            }
            cmd.arg(&src).arg("-o").arg(&obj);
            let shown = format!("{cmd:?}");
            let res = cmd
                .output()
                .map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
            if !res.status.success() {
                return Err(format!(
                    "{} failed for {arch}:\n{shown}\n{}",
                    self.program.display(),
                    String::from_utf8_lossy(&res.stderr)
                ));
            }
            let bytes =
                std::fs::read(&obj).map_err(|e| format!("cannot read {}: {e}", obj.display()))?;
            out.push((arch.clone(), bytes));
        }
        Ok(out)
    }
}

/// For a `build.rs`: generates the `dialect` source of every `stencil!` in `rust_file`, compiles
/// it with the toolchain and architectures the environment selects, and writes
/// `{out}.ptx` (CUDA) or `{out}.{arch}.co` for each arch plus `{out}.hip.rs` (HIP: a Rust
/// expression `&[(arch, bytes)]` to `include!`). Also writes `{out}.{cu|hip}` (the source) and
/// prints the `cargo:rerun-if-…` lines. Returns the written image paths.
pub fn compile_file(
    rust_file: impl AsRef<Path>,
    dialect: Dialect,
    out: &Path,
) -> Result<Vec<PathBuf>, String> {
    let rust_file = rust_file.as_ref();
    println!("cargo:rerun-if-changed={}", rust_file.display());
    println!("cargo:rerun-if-env-changed={}", compiler_var(dialect));
    println!("cargo:rerun-if-env-changed={}", arch_var(dialect));
    println!("cargo:rerun-if-env-changed=PATH");
    let stencils = stencils_in_file(rust_file)?;
    let source = source_for(&stencils, dialect);
    let tc = Toolchain::find(dialect)?;
    let archs = target_archs(dialect);
    let work = out.with_extension(format!("{}-work", dialect.key()));
    let images = tc.compile(&source, &archs, &work)?;
    let stem = out.to_string_lossy().to_string();
    let mut written = Vec::new();
    let write = |path: PathBuf, bytes: &[u8]| -> Result<PathBuf, String> {
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    };
    match dialect {
        Dialect::Cuda => {
            write(PathBuf::from(format!("{stem}.cu")), source.as_bytes())?;
            // One PTX (the first arch): PTX is JIT-compiled for every newer GPU.
            written.push(write(PathBuf::from(format!("{stem}.ptx")), &images[0].1)?);
        }
        Dialect::Hip => {
            write(PathBuf::from(format!("{stem}.hip")), source.as_bytes())?;
            let mut list = String::from("&[\n");
            for (arch, bytes) in &images {
                let p = write(PathBuf::from(format!("{stem}.{arch}.co")), bytes)?;
                let _ = writeln!(list, "    ({arch:?}, include_bytes!({p:?}) as &[u8]),");
                written.push(p);
            }
            list.push(']');
            write(PathBuf::from(format!("{stem}.hip.rs")), list.as_bytes())?;
        }
    }
    Ok(written)
}

/// The variable that turns a missing external tool (GPU compiler, g++) or device from a
/// visible skip into a failure: `PPSTENCIL_REQUIRE_GPU=1`. CI sets it, since it installs the
/// tools; a newcomer's `cargo test --workspace` on a machine with only Rust skips instead.
pub const REQUIRE_VAR: &str = "PPSTENCIL_REQUIRE_GPU";

/// Whether [`REQUIRE_VAR`] is set to `1`.
pub fn tools_required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1")
}

/// What a test does when an external tool it needs (`what`, installed by `install`) is
/// absent: with [`REQUIRE_VAR`]`=1` it panics naming the package; otherwise it writes a
/// `SKIPPED:` line straight to standard error, past the test harness's capture, so the skip
/// shows in `cargo test`'s output, and returns (the caller then returns).
///
/// # Panics
/// When the tool is required, by design: a missing tool is then a test failure.
pub fn skip_missing_tool(what: &str, install: &str) {
    use std::io::Write;
    if tools_required() {
        panic!("{what} not found: install it (`{install}`); {REQUIRE_VAR}=1 requires it");
    }
    // Straight to fd 2: `eprintln!` inside a passing test is captured and never shown.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {what} not found (install it with `{install}`; {REQUIRE_VAR}=1 makes this a failure)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_stencils_at_top_level_and_in_modules() {
        let src = r#"
            use ppstencil::stencil;
            stencil! { pub fn a(o: out, p: in) { o[0, 0] = p[0, 1]; } }
            mod inner {
                ppstencil::stencil! {
                    fn b(o: out, p: in) { o[0, 0] = p[1, 0]; }
                    fn c(o: out, p: in, k: real) { o[0, 0] = k * p[0, 0]; }
                }
            }
            fn unrelated() {}
        "#;
        let names: Vec<String> = stencils_in_source(src)
            .expect("parses")
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn reports_invalid_stencils() {
        let err = stencils_in_source("stencil! { fn a(o: out) { o[0, 0] = q[0, 0]; } }")
            .expect_err("undeclared name");
        assert!(err.contains("invalid stencil"), "{err}");
    }

    #[test]
    fn kind_follows_the_program_name() {
        assert_eq!(
            kind_of(Path::new("/usr/local/cuda/bin/nvcc")),
            CompilerKind::Nvcc
        );
        assert_eq!(kind_of(Path::new("hipcc")), CompilerKind::Hipcc);
        assert_eq!(
            kind_of(Path::new("/usr/bin/clang++-16")),
            CompilerKind::Clang
        );
    }
}
