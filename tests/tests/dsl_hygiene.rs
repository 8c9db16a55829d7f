//! Generated code is hygienic in every backend.
//!
//! 1. A `stencil!` with adversarial names (a field `p` next to `p_0_0`, fields named like C
//!    math functions and CUDA built-ins, locals named like C keywords and macros, a doc
//!    comment that tries to inject a preprocessor line) compiles through the macro and
//!    computes what a hand-written loop computes, on Serial and Rayon; its embedded CUDA-C and
//!    HIP-C, compiled by g++ against the CPU emulation shim, give the same bits as Serial.
//! 2. A seeded property test generates many stencils whose names come from C/C++, CUDA/HIP,
//!    C macros, Rust and the generators' own vocabulary (`x_0_1`, `nz`, `ix`, ...), and checks
//!    that the emitted Rust parses (syn), that the CUDA-C and HIP-C compile (g++ with the
//!    emulation shim, and clang for the GPU when present) and that they compute what an
//!    independent evaluator of the stencil's formulas computes, bit for bit, in f32 and f64.
//! 3. Names that cannot be emitted safely (Rust keywords, uppercase names, the generators'
//!    reserved locals, `__`, raw and non-ASCII identifiers) are refused with an error naming
//!    them.
//!
//! Needs `g++`; clang >= 16 for the GPU compile (a missing tool is a visible skip, a failure
//! with `PPSTENCIL_REQUIRE_GPU=1`, as in `kernels-gen/tests/gpu_compile.rs`).
// `blockDim` is a user's (adversarial) field name, so the generated launch function has it.
#![allow(non_snake_case)]

use kernels_gen::emit::c::{self, Dialect};
use kernels_gen::emit::{dsl, rust};
use kernels_gen::ir::{Access, Domain, Expr, Func, ParamKind, Stencil, Stmt};
use ppstencil::launch::Stencil as _;
use ppstencil::{stencil, HostField, Rayon, ScalarField, Serial};
use ppstencil_tests::Rng;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

stencil! {
    /// Adversarial names.
    #[doc = "second line\n#define p_ 0\nthird line \\"]
    pub fn hygiene(sqrt: out, p: in, p_0_0: in, blockDim: in, null: real) {
        let int = p[0, 0] - p_0_0[0, 0];
        let assert = blockDim[0, -1] + p[1, 0];
        sqrt[0, 0] = int * null + assert;
    }

    /// Rust std and runtime vocabulary as names; fields next to their tap-shaped twins.
    pub fn vocabulary(int: inout, x: in, x_0_1: in, x_m1_0: in, f64: real, usize: real) {
        let drop = x[0, 1] - x_0_1[0, 0];
        let std = max(x_m1_0[0, 0], x[-1, 0]) * f64;
        let ppstencil = sqrt(abs(drop)) + usize;
        int[0, 0] = int[0, 0] * 0.5 + std - ppstencil;
    }

    /// Names of methods and functions the generated code calls, and of locals it does not
    /// bind, as fields are indexed through their windows (`nx`, `plane`, `base`).
    pub fn methods(lit: out, len: out, clone: in, rayon: real) {
        let vec = clone[0, 0] * rayon;
        let nx = clone[0, -1];
        let plane = clone[0, 1];
        let base = vec;
        lit[0, 0] = base + nx;
        len[0, 0] = vec - plane;
    }
}

fn shim() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("gpu/emulation_shim.h")
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Compiles `cpp` with g++ (emulation flags, sanitizers) and runs it; its stdout, or `None`
/// after a visible skip when g++ is missing and skipping is allowed.
fn compile_and_run(dir: &Path, name: &str, cpp: &str) -> Option<String> {
    let src = dir.join(format!("{name}.cpp"));
    std::fs::write(&src, cpp).expect("write harness");
    let bin = dir.join(name);
    let status = Command::new("g++")
        .args(["-std=c++17", "-O0", "-ffp-contract=off", "-Wall", "-Werror"])
        .args(["-Wno-unused-parameter", "-Wno-unused-variable"])
        .args(["-fsanitize=address,undefined", "-fno-sanitize-recover=all"])
        .arg(&src)
        .arg("-o")
        .arg(&bin)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("g++ failed ({s}) on {}", src.display()),
        Err(e) => {
            kernels_gen::build::skip_missing_tool(&format!("g++ ({e})"), "apt-get install g++");
            return None;
        }
    }
    let out = Command::new(&bin).output().expect("run harness");
    assert!(
        out.status.success(),
        "{} failed: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("utf-8"))
}

// ---------------------------------------------------------------------------------------
// 1. Through the macro.

const NZ: usize = 7;
const NX: usize = 9;

fn field(seed: u64) -> HostField<f64> {
    let mut rng = Rng::new(seed);
    HostField::from_vec(NZ, NX, rng.vec(NZ * NX, -1.0, 1.0, |v| v)).expect("field")
}

#[test]
fn adversarial_names_compile_through_the_macro_and_compute_the_hand_loop() {
    let (p, p00, bd) = (field(1), field(2), field(3));
    let null = 0.75;
    let mut want = vec![0.0; NZ * NX];
    for iz in 1..NZ - 1 {
        for ix in 1..NX - 1 {
            let at = |f: &HostField<f64>, dz: isize, dx: isize| {
                f[((iz as isize + dz) as usize, (ix as isize + dx) as usize)]
            };
            let int = at(&p, 0, 0) - at(&p00, 0, 0);
            let assert = at(&bd, 0, -1) + at(&p, 1, 0);
            want[iz * NX + ix] = int * null + assert;
        }
    }
    let mut serial: HostField<f64> = ScalarField::new(NZ, NX).expect("field");
    hygiene(&Serial, &mut serial, &p, &p00, &bd, null).expect("serial");
    assert_eq!(serial.as_slice(), &want[..], "serial vs hand loop");
    let mut par: HostField<f64> = ScalarField::new(NZ, NX).expect("field");
    hygiene(&Rayon::new(), &mut par, &p, &p00, &bd, null).expect("rayon");
    assert_eq!(par.as_slice(), &want[..], "rayon vs hand loop");

    // The embedded GPU sources, emulated on the CPU, give Serial's bits.
    let info = &Hygiene::INFO;
    let dir = scratch("dsl-hygiene-macro");
    for backend in ["cuda", "hip"] {
        let text = info.source(backend).expect("embedded source");
        // The multi-line doc comment stays a comment: every line before the header is `//`.
        let head: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("#ifndef"))
            .collect();
        assert!(head.iter().all(|l| l.starts_with("//")), "{text}");
        let mut cpp = format!(
            "#include \"{}\"\n{text}\n#include <cstdio>\n",
            shim().display()
        );
        cpp.push_str("int main() {\n");
        for (k, f) in [&p, &p00, &bd].iter().enumerate() {
            let _ = writeln!(
                cpp,
                "    static double in{k}[] = {{{}}};",
                list(f.as_slice())
            );
        }
        let _ = writeln!(cpp, "    static double o[{}] = {{0}};", NZ * NX);
        let _ = writeln!(
            cpp,
            "    ppemu_launch(ppemu_dim3{{2, 2, 1}}, ppemu_dim3{{4, 4, 1}}, [&] {{ \
             hygiene_f64({NZ}, 1, {NX}, 1, {}, 0, 1, 1, {}, o, in0, in1, in2, {null:?}, {w}, {w}, {w}, {w}); }});",
            NZ - 1,
            NX - 1,
            w = format_args!("0, 0, 0, 1, {NX}")
        );
        let _ = writeln!(
            cpp,
            "    for (int k = 0; k < {}; ++k) printf(\"%.17g\\n\", o[k]);\n    return 0;\n}}",
            NZ * NX
        );
        let Some(out) = compile_and_run(&dir, backend, &cpp) else {
            return;
        };
        let got: Vec<f64> = out.lines().map(|l| l.parse().expect("number")).collect();
        assert_eq!(got, serial.as_slice(), "{backend} emulation vs serial");
    }
}

/// `f(at)` at every interior point at distance `r`, zero elsewhere; `at(field, dz, dx)`.
fn hand_loop(
    r: usize,
    f: impl Fn(&dyn Fn(&HostField<f64>, isize, isize) -> f64) -> f64,
) -> Vec<f64> {
    let mut out = vec![0.0; NZ * NX];
    for iz in r..NZ - r {
        for ix in r..NX - r {
            let at = |g: &HostField<f64>, dz: isize, dx: isize| {
                g[((iz as isize + dz) as usize, (ix as isize + dx) as usize)]
            };
            out[iz * NX + ix] = f(&at);
        }
    }
    out
}

#[test]
fn rust_vocabulary_as_names_computes_the_hand_loop() {
    let (x, x01, xm10, int0) = (field(4), field(5), field(6), field(7));
    let (f64_, usize_) = (1.5, -0.25);
    let want = hand_loop(1, |at| {
        let drop = at(&x, 0, 1) - at(&x01, 0, 0);
        let std = at(&xm10, 0, 0).max(at(&x, -1, 0)) * f64_;
        let ppstencil = drop.abs().sqrt() + usize_;
        at(&int0, 0, 0) * 0.5 + std - ppstencil
    });
    // `int` is updated in place: the border keeps its old values.
    let mut want_int = int0.as_slice().to_vec();
    for (q, w) in want.iter().enumerate() {
        let (iz, ix) = (q / NX, q % NX);
        if (1..NZ - 1).contains(&iz) && (1..NX - 1).contains(&ix) {
            want_int[q] = *w;
        }
    }
    let mut serial = field(7);
    vocabulary(&Serial, &mut serial, &x, &x01, &xm10, f64_, usize_).expect("serial");
    assert_eq!(serial.as_slice(), &want_int[..], "serial vs hand loop");
    let mut par = field(7);
    vocabulary(&Rayon::new(), &mut par, &x, &x01, &xm10, f64_, usize_).expect("rayon");
    assert_eq!(par.as_slice(), &want_int[..], "rayon vs hand loop");

    let clone = field(8);
    let rayon = 0.625;
    let mut lit: HostField<f64> = ScalarField::new(NZ, NX).expect("field");
    let mut len: HostField<f64> = ScalarField::new(NZ, NX).expect("field");
    methods(&Serial, &mut lit, &mut len, &clone, rayon).expect("serial");
    let want_lit = hand_loop(1, |at| at(&clone, 0, 0) * rayon + at(&clone, 0, -1));
    let want_len = hand_loop(1, |at| at(&clone, 0, 0) * rayon - at(&clone, 0, 1));
    assert_eq!(lit.as_slice(), &want_lit[..]);
    assert_eq!(len.as_slice(), &want_len[..]);
}

fn list<T: std::fmt::Debug>(v: &[T]) -> String {
    v.iter()
        .map(|x| format!("{x:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------
// 2. Property test over generated stencils.

/// Names the DSL accepts although they are words of some target language or generator.
const ADVERSARIAL: &[&str] = &[
    // C and C++ keywords and types.
    "int",
    "float",
    "double",
    "char",
    "long",
    "short",
    "signed",
    "unsigned",
    "register",
    "volatile",
    "restrict",
    "inline",
    "sizeof",
    "switch",
    "case",
    "default",
    "goto",
    "void",
    "union",
    "class",
    "new",
    "delete",
    "this",
    "template",
    "typename",
    "namespace",
    "operator",
    "private",
    "public",
    "protected",
    "friend",
    "mutable",
    "using",
    "bool",
    "nullptr",
    "asm",
    "typedef",
    "auto",
    "wchar_t",
    "constexpr",
    "noexcept",
    "decltype",
    "alignas",
    "thread_local",
    "export",
    "concept",
    "requires",
    // CUDA/HIP built-ins, math functions, runtime API, the emulation shim.
    "blockDim",
    "blockIdx",
    "threadIdx",
    "gridDim",
    "warpSize",
    "sqrt",
    "sqrtf",
    "fabs",
    "fabsf",
    "exp",
    "expf",
    "sin",
    "cos",
    "fmin",
    "fmax",
    "fminf",
    "min",
    "max",
    "abs",
    "atomicAdd",
    "printf",
    "malloc",
    "free",
    "memcpy",
    "size_t",
    "int32_t",
    "dim3",
    "float4",
    "make_float2",
    "hipLaunchKernelGGL",
    "cudaMalloc",
    "hipMalloc",
    "texture",
    "ppemu_launch",
    "ppemu_dim3",
    // Lowercase C macros.
    "assert",
    "offsetof",
    "errno",
    "isnan",
    "isinf",
    "signbit",
    "stdin",
    "stdout",
    "null",
    // The generators' vocabulary (C grid, tap-like names).
    "nz",
    "z0",
    "z1",
    "x0",
    "x1",
    "ix",
    "idx",
    "p_0_0",
    "p_0_m1",
    "x_0_1",
    "p_m1_0",
    "i_",
    "n_",
    "p_",
    "e",
    "t",
    "f",
    "x",
    "y",
    "z",
    "p",
    // Rust std and runtime vocabulary.
    "drop",
    "vec",
    "println",
    "std",
    "core",
    "alloc",
    "ppstencil",
    "rayon",
    "f32",
    "f64",
    "i32",
    "usize",
    "str",
    "u8",
    "lit",
    "prefetch",
    "blocks",
    "block",
    "len",
    "clone",
    "into",
    "result",
    "error",
    "launch",
    "serial",
    "rows",
    "arity",
    "vectorized",
    "run_rows",
    "raw",
    "safe",
    "macro_rules",
];

/// Names the DSL must refuse, each with an error naming it (`space`, the launch function's
/// argument, only as a parameter: a local of that name meets nothing).
const REFUSED: &[&str] = &[
    "self",
    "Self",
    "fn",
    "in",
    "type",
    "struct",
    "match",
    "true",
    "async",
    "dyn",
    "gen",
    "NULL",
    "Ok",
    "None",
    "Some",
    "Err",
    "E",
    "T",
    "INFINITY",
    "FdPxx",
    "M_PI",
    "grid",
    "i",
    "n",
    "mode",
    "cols",
    "row",
    "outs",
    "ins",
    "reals",
    "first_row",
    "run",
    "runs",
    "z_end",
    "plan",
    "task",
    "chunk_rows",
    "z_first",
    "space",
    "__syncthreads",
    "p__q",
    "_",
    "café",
];

struct Gen {
    rng: Rng,
}

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }

    /// A random expression over the given reads, scalars and locals, `depth` levels deep.
    fn expr(&mut self, leaves: &[String], depth: usize) -> String {
        if depth == 0 || self.below(3) == 0 {
            return match self.below(6) {
                0 => ["0.5", "1.25", "3.0", "0.1"][self.below(4)].to_string(),
                _ => leaves[self.below(leaves.len())].clone(),
            };
        }
        let a = self.expr(leaves, depth - 1);
        let b = self.expr(leaves, depth - 1);
        match self.below(10) {
            0 => format!("{a} + {b}"),
            1 => format!("({a}) - ({b})"),
            2 => format!("({a}) * ({b})"),
            3 => format!("({a}) / (2.0 + abs({b}))"),
            4 => format!("sqrt(abs({a}))"),
            5 => format!("max({a}, {b})"),
            6 => format!("min({a}, -({b}))"),
            7 => format!("sin({a}) + cos({b})"),
            8 => format!("exp(-abs({a}))"),
            _ => format!("-({a})"),
        }
    }

    /// Stencil number `k`: DSL source with distinct adversarial names.
    fn stencil(&mut self, k: usize) -> String {
        let mut used: Vec<String> = Vec::new();
        let fresh = |g: &mut Gen, used: &mut Vec<String>| loop {
            // Half the time, a name shaped like another name's tap slice (`p` → `p_0_0`).
            let name = match (used.is_empty(), g.below(3)) {
                (false, 0) => {
                    let base = used[g.below(used.len())].trim_end_matches('_').to_string();
                    let (dz, dx) = (g.below(3), g.below(3));
                    format!("{base}_{dz}_m{dx}")
                }
                _ => g.pick(ADVERSARIAL).to_string(),
            };
            if !used.contains(&name) {
                used.push(name.clone());
                return name;
            }
        };
        let outs: Vec<String> = (0..1 + self.below(2))
            .map(|_| fresh(self, &mut used))
            .collect();
        let inout = (self.below(2) == 0).then(|| fresh(self, &mut used));
        let ins: Vec<String> = (0..1 + self.below(3))
            .map(|_| fresh(self, &mut used))
            .collect();
        let reals: Vec<String> = (0..self.below(3)).map(|_| fresh(self, &mut used)).collect();
        // Profiles: one value per row (`in(z)`) or per column (`in(x)`).
        let profiles: Vec<(String, bool)> = (0..self.below(3))
            .map(|_| (fresh(self, &mut used), self.below(2) == 0))
            .collect();
        let lets: Vec<String> = (0..self.below(3)).map(|_| fresh(self, &mut used)).collect();
        let mut params: Vec<String> = Vec::new();
        params.extend(outs.iter().map(|n| format!("{n}: out")));
        params.extend(inout.iter().map(|n| format!("{n}: inout")));
        params.extend(ins.iter().map(|n| format!("{n}: in")));
        params.extend(reals.iter().map(|n| format!("{n}: real")));
        params.extend(
            profiles
                .iter()
                .map(|(n, along_z)| format!("{n}: in({})", if *along_z { "z" } else { "x" })),
        );
        // Shuffle the declaration order: the ABI sorts by group.
        for i in (1..params.len()).rev() {
            let j = self.below(i + 1);
            params.swap(i, j);
        }
        let mut leaves: Vec<String> = reals.clone();
        for f in &ins {
            for _ in 0..3 {
                let (dz, dx) = (self.below(5) as i32 - 2, self.below(5) as i32 - 2);
                leaves.push(format!("{f}[{dz}, {dx}]"));
            }
        }
        for (f, along_z) in &profiles {
            for _ in 0..2 {
                let d = self.below(5) as i32 - 2;
                leaves.push(if *along_z {
                    format!("{f}[{d}, 0]")
                } else {
                    format!("{f}[0, {d}]")
                });
            }
        }
        if let Some(u) = &inout {
            leaves.push(format!("{u}[0, 0]"));
        }
        // Every `in`, profile and `real` is used at least once (the parser refuses unused
        // ones).
        let all_used: Vec<String> = ins
            .iter()
            .chain(profiles.iter().map(|(f, _)| f))
            .map(|f| format!("{f}[0, 0]"))
            .chain(reals.iter().cloned())
            .collect();
        let mut body = String::new();
        for l in &lets {
            let e = self.expr(&leaves, 3);
            let _ = writeln!(body, "    let {l} = {e};");
            leaves.push(l.clone());
        }
        let targets = outs.iter().chain(inout.iter());
        for (n, o) in targets.enumerate() {
            let e = self.expr(&leaves, 3);
            let extra = if n == 0 {
                all_used.join(" + ")
            } else {
                "0.5".into()
            };
            let _ = writeln!(body, "    {o}[0, 0] = {e} + {extra};");
        }
        let word = self
            .pick(ADVERSARIAL)
            .to_ascii_lowercase()
            .trim_matches('_')
            .to_string();
        format!(
            "/// Generated case {k}.\nfn s{k}_{word}({}) {{\n{body}}}\n",
            params.join(", ")
        )
    }
}

/// The stencil's formulas evaluated directly from the IR, in `R`: the reference.
trait Num: Copy + PartialEq + std::fmt::Debug + std::str::FromStr {
    fn lit(v: f64) -> Self;
    fn bin(op: kernels_gen::ir::BinOp, a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn call(f: Func, a: Self, b: Self) -> Self;
    const SUFFIX: &'static str;
    const C_TYPE: &'static str;
    const PRINTF: &'static str;
}

macro_rules! num {
    ($t:ty, $suffix:literal, $c:literal, $printf:literal) => {
        impl Num for $t {
            fn lit(v: f64) -> Self {
                v as $t
            }
            fn bin(op: kernels_gen::ir::BinOp, a: Self, b: Self) -> Self {
                use kernels_gen::ir::BinOp::*;
                match op {
                    Add => a + b,
                    Sub => a - b,
                    Mul => a * b,
                    Div => a / b,
                }
            }
            fn neg(a: Self) -> Self {
                -a
            }
            fn call(f: Func, a: Self, b: Self) -> Self {
                match f {
                    Func::Sqrt => a.sqrt(),
                    Func::Abs => a.abs(),
                    Func::Exp => a.exp(),
                    Func::Sin => a.sin(),
                    Func::Cos => a.cos(),
                    Func::Min => a.min(b),
                    Func::Max => a.max(b),
                }
            }
            const SUFFIX: &'static str = $suffix;
            const C_TYPE: &'static str = $c;
            const PRINTF: &'static str = $printf;
        }
    };
}
num!(f32, "f32", "float", "%.9g");
num!(f64, "f64", "double", "%.17g");

struct Point<'a, R> {
    fields: &'a [Vec<R>],
    /// Per parameter, the axis of a profile (`0`: z, `2`: x).
    profiles: &'a [Option<usize>],
    reals: &'a [R],
    locals: &'a [R],
    i: usize,
}

fn eval<R: Num>(e: &Expr, at: &Point<R>) -> R {
    match e {
        Expr::Lit(v) => R::lit(*v),
        Expr::Scalar(p) => at.reals[*p],
        Expr::Local(l) => at.locals[*l],
        Expr::Read { field, offset } => {
            let (iz, ix) = ((at.i / NX) as isize, (at.i % NX) as isize);
            let k = match at.profiles[*field] {
                Some(0) => iz + offset[0] as isize,
                Some(_) => ix + offset[1] as isize,
                None => at.i as isize + offset[0] as isize * NX as isize + offset[1] as isize,
            };
            at.fields[*field][k as usize]
        }
        Expr::Neg(a) => R::neg(eval(a, at)),
        Expr::Binary(op, a, b) => R::bin(*op, eval(a, at), eval(b, at)),
        Expr::Call(f, args) => {
            let a = eval(&args[0], at);
            let b = args.get(1).map(|x| eval(x, at)).unwrap_or(a);
            R::call(*f, a, b)
        }
    }
}

/// Initial contents of every parameter (fields: NZ × NX values; reals: one value).
fn inputs(s: &Stencil, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng::new(seed);
    s.params
        .iter()
        .map(|p| match p.kind {
            ParamKind::Field(_) => rng.vec(NZ * NX, -1.0, 1.0, |v| v),
            ParamKind::Profile(0) => rng.vec(NZ, -1.0, 1.0, |v| v),
            ParamKind::Profile(_) => rng.vec(NX, -1.0, 1.0, |v| v),
            ParamKind::Real => vec![rng.uniform(-1.0, 1.0)],
            ParamKind::Index => vec![],
        })
        .collect()
}

/// The reference outputs, in ABI order of the written fields, in `R`.
fn reference<R: Num>(s: &Stencil, init: &[Vec<f64>]) -> Vec<Vec<R>> {
    let mut fields: Vec<Vec<R>> = init
        .iter()
        .map(|v| v.iter().map(|&x| R::lit(x)).collect())
        .collect();
    let reals: Vec<R> = init
        .iter()
        .map(|v| v.first().map_or(R::lit(0.0), |&x| R::lit(x)))
        .collect();
    assert_eq!(s.domain, Domain::Interior);
    let profiles: Vec<Option<usize>> = (0..s.params.len()).map(|p| s.profile_axis(p)).collect();
    let r = s.radius();
    for iz in r..NZ - r {
        for ix in r..NX - r {
            let i = iz * NX + ix;
            let mut locals = Vec::new();
            for st in &s.body {
                let at = Point {
                    fields: &fields,
                    profiles: &profiles,
                    reals: &reals,
                    locals: &locals,
                    i,
                };
                match st {
                    Stmt::Let { value, .. } => {
                        let v = eval(value, &at);
                        locals.push(v);
                    }
                    Stmt::Assign { field, value } => {
                        let v = eval(value, &at);
                        fields[*field][i] = v;
                    }
                }
            }
        }
    }
    s.outputs().into_iter().map(|p| fields[p].clone()).collect()
}

/// C++ running kernel `NAME_{R}` of `s` on `init`, printing its outputs in ABI order.
fn c_case<R: Num>(s: &Stencil, init: &[Vec<f64>], k: usize) -> String {
    let ty = R::C_TYPE;
    let mut c = format!("{{ // {}\n", s.name);
    let mut args = vec![format!(
        "{NZ}, 1, {NX}, {r}, {}, 0, 1, {r}, {}",
        NZ - s.radius(),
        NX - s.radius(),
        r = s.radius()
    )];
    for p in kernels_gen::emit::abi::kernel_params(s) {
        if p.group == kernels_gen::emit::abi::ArgGroup::Windows {
            // Every field covers the grid: origin 0, rows of NX points, one row per plane.
            let part = p.name.rsplit("__").next().unwrap_or_default();
            args.push(match part {
                "ny" => "1".to_string(),
                "nx" => NX.to_string(),
                _ => "0".to_string(),
            });
            continue;
        }
        let Some(p) = p.param else { continue };
        let values: Vec<R> = init[p].iter().map(|&x| R::lit(x)).collect();
        let var = format!("v{k}_{p}");
        if matches!(
            s.params[p].kind,
            ParamKind::Field(_) | ParamKind::Profile(_)
        ) {
            let _ = writeln!(c, "    static {ty} {var}[] = {{{}}};", c_list(&values));
        } else {
            let _ = writeln!(c, "    const {ty} {var} = {};", c_list(&values));
        }
        args.push(var);
    }
    let gx = (NX - 2 * s.radius()).div_ceil(4);
    let gz = (NZ - 2 * s.radius()).div_ceil(4);
    let _ = writeln!(
        c,
        "    ppemu_launch(ppemu_dim3{{{gx}, {gz}, 1}}, ppemu_dim3{{4, 4, 1}}, [&] {{ {}({}); }});",
        kernels_gen::emit::abi::kernel_symbol(&s.name, R::SUFFIX),
        args.join(", ")
    );
    for p in s.outputs() {
        let _ = writeln!(
            c,
            "    for (int q = 0; q < {}; ++q) printf(\"{}\\n\", (double)v{k}_{p}[q]);",
            NZ * NX,
            R::PRINTF
        );
    }
    c.push_str("}\n");
    c
}

fn c_list<R: Num>(v: &[R]) -> String {
    v.iter()
        .map(|x| {
            let t = format!("{x:?}");
            let t = if t.contains('.') || t.contains('e') {
                t
            } else {
                format!("{t}.0")
            };
            if R::SUFFIX == "f32" {
                format!("{t}f")
            } else {
                t
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_outputs<R: Num>(got: &mut std::str::Lines, want: &[Vec<R>], what: &str) {
    for (o, field) in want.iter().enumerate() {
        for (q, w) in field.iter().enumerate() {
            let line = got
                .next()
                .unwrap_or_else(|| panic!("{what}: output ended early"));
            let g: R = line
                .parse()
                .unwrap_or_else(|_| panic!("{what}: bad number {line}"));
            assert!(
                g == *w,
                "{what}: output {o}, cell {q}: C gives {g:?}, the formula {w:?}"
            );
        }
    }
}

const CASES: usize = 40;

/// Whether `s` calls `exp`, `sin` or `cos`.
fn uses_libm(s: &Stencil) -> bool {
    let mut found = false;
    for st in &s.body {
        let (Stmt::Let { value, .. } | Stmt::Assign { value, .. }) = st;
        value.walk(&mut |e| {
            found |= matches!(e, Expr::Call(Func::Exp | Func::Sin | Func::Cos, _));
        });
    }
    found
}

#[test]
fn generated_stencils_with_adversarial_names_compile_and_compute_in_every_backend() {
    let mut gen = Gen {
        rng: Rng::new(2024),
    };
    let mut stencils = Vec::new();
    for k in 0..CASES {
        let src = gen.stencil(k);
        let s = kernels_gen::parse_str(&src)
            .unwrap_or_else(|e| panic!("case {k} must parse: {e}\n{src}"))
            .remove(0);
        // The whole Rust expansion parses as Rust.
        let tokens = rust::emit_stencil(&s, &dsl::print(&s), &kernels_gen::extra_sources(&s));
        syn::parse2::<syn::File>(tokens)
            .unwrap_or_else(|e| panic!("case {k}: emitted Rust does not parse: {e}\n{src}"));
        // The printed DSL parses back to the same stencil.
        let again = kernels_gen::parse_str(&dsl::print(&s)).expect("printed DSL parses");
        assert_eq!(again[0], s, "case {k}: DSL round trip");
        stencils.push(s);
    }

    let dir = scratch("dsl-hygiene-property");
    for d in Dialect::ALL {
        let mut cpp = format!("#include \"{}\"\n", shim().display());
        for s in &stencils {
            cpp.push_str(&c::emit(s, d));
        }
        cpp.push_str("#include <cstdio>\nint main() {\n");
        let mut wants = Vec::new();
        for (k, s) in stencils.iter().enumerate() {
            let init = inputs(s, 100 + k as u64);
            cpp.push_str(&c_case::<f32>(s, &init, k));
            cpp.push_str(&c_case::<f64>(s, &init, 1000 + k));
            wants.push((reference::<f32>(s, &init), reference::<f64>(s, &init)));
        }
        cpp.push_str("    return 0;\n}\n");
        let Some(out) = compile_and_run(&dir, d.key(), &cpp) else {
            return;
        };
        let mut lines = out.lines();
        for (s, (w32, w64)) in stencils.iter().zip(&wants) {
            check_outputs(&mut lines, w32, &format!("{} {} f32", d.language(), s.name));
            check_outputs(&mut lines, w64, &format!("{} {} f64", d.language(), s.name));
        }
        assert!(lines.next().is_none(), "extra output");

        // The real GPU compilers accept the same text.
        match kernels_gen::build::Toolchain::clang(d) {
            Some(tc) => {
                let arch = match d {
                    Dialect::Cuda => "sm_80",
                    Dialect::Hip => "gfx90a",
                };
                // Plain clang has no device math library: `exp`, `sin` and `cos` need nvcc or
                // hipcc (see kernels_gen::build), so those stencils are left out here.
                let plain: Vec<Stencil> =
                    stencils.iter().filter(|s| !uses_libm(s)).cloned().collect();
                assert!(plain.len() >= CASES / 4, "too few cases for clang");
                let src = kernels_gen::build::source_for(&plain, d);
                let work = scratch(&format!("dsl-hygiene-{}", d.key()));
                tc.compile(&src, &[arch.to_string()], &work)
                    .unwrap_or_else(|e| {
                        panic!("{}: clang rejects the generated text: {e}", d.language())
                    });
            }
            None => kernels_gen::build::skip_missing_tool(
                &format!("clang >= 16 for {}", d.language()),
                "apt-get install clang-16",
            ),
        }
    }
    // Inout fields are exercised, profiles along both axes, and tap-shaped names next to
    // their base name.
    for axis in [0, 2] {
        assert!(stencils
            .iter()
            .any(|s| (0..s.params.len()).any(|p| s.profile_axis(p) == Some(axis))));
    }
    assert!(stencils
        .iter()
        .any(|s| !s.fields_with(|a| a == Access::InOut).is_empty()));
    assert!(stencils.iter().any(|s| s
        .params
        .iter()
        .any(|p| p.name.ends_with("_m0") || p.name.ends_with("_m1"))));
}

#[test]
fn names_that_cannot_be_emitted_safely_are_refused_with_the_name() {
    for name in REFUSED {
        for src in [
            format!("fn f(o: out, {name}: in) {{ o[0, 0] = {name}[0, 0]; }}"),
            format!("fn f(o: out, {name}: real) {{ o[0, 0] = {name}; }}"),
            format!("fn f(o: out) {{ let {name} = 1.0; o[0, 0] = {name}; }}"),
        ] {
            if *name == "space" && src.contains("let") {
                continue;
            }
            let e = match kernels_gen::parse_str(&src) {
                Ok(_) => panic!("`{name}` must be refused: {src}"),
                Err(e) => e.to_string(),
            };
            assert!(
                e.contains(&format!("`{name}`")) || e.contains("expected") || *name == "_",
                "`{name}`: the error must name it: {e}"
            );
        }
    }
}
