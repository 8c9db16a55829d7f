//! The C-family GPU emitter: CUDA-C and HIP-C from the same IR.
//!
//! One emitter parameterised by [`Dialect`]; the two dialects differ only in the header lines
//! (which runtime header to include) and in the comment naming the launch API. Every stencil
//! becomes one `extern "C" __global__` kernel per element type, `NAME_f32` and `NAME_f64`, in
//! one source text.
//!
//! # Kernel parameter convention
//!
//! Each kernel takes, in this order (the runtime's launch layer relies on it):
//!
//! 1. the grid, six `long long` values: `nz, nx` (the field shape, row-major `[iz * nx + ix]`)
//!    and `z0, z1, x0, x1` (the rows `z0..z1` and columns `x0..x1` to compute: the interior
//!    at distance `radius` from every border, or one point for `#[at]` stencils) — exactly the
//!    fields of `ppstencil::launch::Region`;
//! 2. the output fields (`out` and `inout`), `T *__restrict__`, in declaration order;
//! 3. the input fields (`in`), `const T *__restrict__`, in declaration order;
//! 4. the `real` scalars, `T`, in declaration order.
//!
//! `index` parameters are not passed: the point they name is already in the grid. This is the
//! order of `StencilInfo::{outputs, inputs, reals}`.
//!
//! The launch is a 2D thread grid: `x` runs along columns (coalesced), `y` along rows. Each
//! thread computes at most one point and returns when it lies outside `z0..z1 × x0..x1`, so any
//! block size works and grids need not be multiples of it.
//!
//! # Arithmetic
//!
//! Expressions are printed from the same tree as the Rust emitters, with the same
//! parentheses, so evaluation order is identical. Constants are printed as the element type's
//! exact value (the `f32` literal is the `f64` constant rounded to `f32`, as `T::lit` does), so
//! with floating-point contraction off (`-ffp-contract=off`, `--fmad=false`) a kernel computes
//! bit for bit what the serial backend computes.

use crate::ir::{Access, Domain, Expr, Func, Stencil, Stmt};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Which GPU language to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// NVIDIA CUDA-C (compiled to PTX by nvcc or clang).
    Cuda,
    /// AMD HIP-C (compiled to a code object by hipcc or clang).
    Hip,
}

impl Dialect {
    /// Both dialects.
    pub const ALL: [Dialect; 2] = [Dialect::Cuda, Dialect::Hip];

    /// The backend key used in `StencilInfo::sources`: `"cuda"` or `"hip"`.
    pub fn key(self) -> &'static str {
        match self {
            Dialect::Cuda => "cuda",
            Dialect::Hip => "hip",
        }
    }

    /// Human-readable name: `"CUDA-C"` or `"HIP-C"`.
    pub fn language(self) -> &'static str {
        match self {
            Dialect::Cuda => "CUDA-C",
            Dialect::Hip => "HIP-C",
        }
    }

    /// The runtime header. `PPSTENCIL_PRELUDE` is defined by the preludes used with plain
    /// clang and by the CPU-emulation shim, which provide the few definitions needed instead.
    fn header(self) -> &'static str {
        match self {
            Dialect::Cuda => "#ifndef PPSTENCIL_PRELUDE\n#include <cuda_runtime.h>\n#endif\n",
            Dialect::Hip => "#ifndef PPSTENCIL_PRELUDE\n#include <hip/hip_runtime.h>\n#endif\n",
        }
    }

    fn launch_api(self) -> &'static str {
        match self {
            Dialect::Cuda => "cuModuleLoadData + cuLaunchKernel (CUDA driver API)",
            Dialect::Hip => "hipModuleLoadData + hipModuleLaunchKernel (HIP module API)",
        }
    }
}

/// The element types every kernel is emitted for: `(suffix, C type)`.
pub const ELEMENT_TYPES: [(&str, &str); 2] = [("f32", "float"), ("f64", "double")];

/// Names the generated kernels use for their own variables; a user name equal to one of these
/// (or to a C keyword) gets a trailing `_` in the C text.
const C_RESERVED: &[&str] = &[
    "nz",
    "nx",
    "z0",
    "z1",
    "x0",
    "x1",
    "ix",
    "iz",
    "i",
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "class",
    "delete",
    "new",
    "template",
    "this",
    "typename",
    "namespace",
    "private",
    "public",
    "operator",
    "virtual",
    "friend",
    "explicit",
    "mutable",
    "using",
];

/// The name of kernel `stencil` for element suffix `ty` (`"f32"` / `"f64"`): `fd_pxx_f32`.
pub fn kernel_name(stencil: &str, ty: &str) -> String {
    format!("{stencil}_{ty}")
}

struct Names(Vec<String>);

impl Names {
    /// C identifiers for every parameter and local, avoiding [`C_RESERVED`] and each other.
    fn new(s: &Stencil) -> Names {
        let mut taken: BTreeSet<String> = s
            .params
            .iter()
            .map(|p| p.name.clone())
            .chain(s.locals.iter().cloned())
            .collect();
        let mut out = Vec::new();
        for name in s.params.iter().map(|p| &p.name).chain(s.locals.iter()) {
            let mut c = name.clone();
            if C_RESERVED.contains(&c.as_str()) {
                while taken.contains(&c) || C_RESERVED.contains(&c.as_str()) {
                    c.push('_');
                }
                taken.insert(c.clone());
            }
            out.push(c);
        }
        Names(out)
    }

    fn param(&self, p: usize) -> &str {
        &self.0[p]
    }

    fn local(&self, s: &Stencil, l: usize) -> &str {
        &self.0[s.params.len() + l]
    }
}

/// A constant as a C literal of type `cty`, exactly the value `T::lit(v)` gives.
fn lit(v: f64, cty: &str) -> String {
    let text = if cty == "float" {
        format!("{:?}", v as f32)
    } else {
        format!("{v:?}")
    };
    let text = if text.contains('.') || text.contains('e') {
        text
    } else {
        format!("{text}.0")
    };
    if cty == "float" {
        format!("{text}f")
    } else {
        text
    }
}

fn func(f: Func, cty: &str) -> String {
    let base = match f {
        Func::Sqrt => "sqrt",
        Func::Abs => "fabs",
        Func::Exp => "exp",
        Func::Sin => "sin",
        Func::Cos => "cos",
        Func::Min => "fmin",
        Func::Max => "fmax",
    };
    if cty == "float" {
        format!("{base}f")
    } else {
        base.to_string()
    }
}

/// The flat index of a tap relative to the current point `i`: `i - 2 * nx + 1`.
fn tap_index(offset: &[i32]) -> String {
    let mut t = String::from("i");
    let (dz, dx) = (offset[0], offset[1]);
    let z = match dz.unsigned_abs() {
        0 => String::new(),
        1 => "nx".to_string(),
        n => format!("{n} * nx"),
    };
    if dz > 0 {
        t.push_str(&format!(" + {z}"));
    } else if dz < 0 {
        t.push_str(&format!(" - {z}"));
    }
    if dx > 0 {
        t.push_str(&format!(" + {dx}"));
    } else if dx < 0 {
        t.push_str(&format!(" - {}", -dx));
    }
    t
}

fn expr(s: &Stencil, n: &Names, e: &Expr, cty: &str) -> String {
    let wrap = |e: &Expr, w: bool| {
        let t = expr(s, n, e, cty);
        if w {
            format!("({t})")
        } else {
            t
        }
    };
    match e {
        Expr::Lit(v) => lit(*v, cty),
        Expr::Scalar(p) => n.param(*p).to_string(),
        Expr::Local(l) => n.local(s, *l).to_string(),
        Expr::Read { field, offset } => format!("{}[{}]", n.param(*field), tap_index(offset)),
        // A nested negation or negative constant is parenthesised: `--x` would be a decrement.
        Expr::Neg(a) => format!("-{}", wrap(a, !a.is_atom())),
        Expr::Binary(op, a, b) => {
            let (l, r) = (op.needs_parens(a, false), op.needs_parens(b, true));
            format!("{} {} {}", wrap(a, l), op.symbol(), wrap(b, r))
        }
        Expr::Call(f, args) => {
            let a: Vec<String> = args.iter().map(|x| expr(s, n, x, cty)).collect();
            format!("{}({})", func(*f, cty), a.join(", "))
        }
    }
}

/// One `__global__` kernel of `s` for element type `cty` (`"float"` / `"double"`).
pub fn emit_kernel(s: &Stencil, ty: &str, cty: &str) -> String {
    let n = Names::new(s);
    let mut params = vec!["const long long nz, const long long nx".to_string()];
    params.push("const long long z0, const long long z1".to_string());
    params.push("const long long x0, const long long x1".to_string());
    for p in s.outputs() {
        params.push(format!("{cty} *__restrict__ {}", n.param(p)));
    }
    for p in s.inputs() {
        params.push(format!("const {cty} *__restrict__ {}", n.param(p)));
    }
    for p in s.reals() {
        params.push(format!("const {cty} {}", n.param(p)));
    }
    let mut k = String::new();
    let _ = writeln!(
        k,
        "extern \"C\" __global__ void {}(\n    {})\n{{",
        kernel_name(&s.name, ty),
        params.join(",\n    ")
    );
    k.push_str("    const long long ix = x0 + (long long)blockIdx.x * blockDim.x + threadIdx.x;\n");
    k.push_str("    const long long iz = z0 + (long long)blockIdx.y * blockDim.y + threadIdx.y;\n");
    k.push_str("    if (ix >= x1 || iz >= z1) {\n        return;\n    }\n");
    k.push_str("    const long long i = iz * nx + ix;\n");
    for st in &s.body {
        match st {
            Stmt::Let { local, value } => {
                let _ = writeln!(
                    k,
                    "    const {cty} {} = {};",
                    n.local(s, *local),
                    expr(s, &n, value, cty)
                );
            }
            Stmt::Assign { field, value } => {
                let _ = writeln!(
                    k,
                    "    {}[i] = {};",
                    n.param(*field),
                    expr(s, &n, value, cty)
                );
            }
        }
    }
    k.push_str("}\n");
    k
}

/// The whole source text of stencil `s` in `dialect`: a header comment, the runtime header,
/// and the `f32` and `f64` kernels.
pub fn emit(s: &Stencil, dialect: Dialect) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// {} for stencil `{}`, generated by kernels-gen from the IR. Do not edit.",
        dialect.language(),
        s.name
    );
    for d in &s.doc {
        let _ = writeln!(out, "//{d}");
    }
    let domain = match s.domain {
        Domain::Interior => format!(
            "the interior, rows and columns {r}..n-{r} (radius {r})",
            r = s.radius()
        ),
        Domain::Point { .. } => "one point, given by z0 and x0".to_string(),
    };
    let _ = writeln!(out, "// Domain: {domain}.");
    let field_list = |idx: Vec<usize>| {
        let v: Vec<&str> = idx.iter().map(|&p| s.params[p].name.as_str()).collect();
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    let inout: Vec<usize> = s.fields_with(|a| a == Access::InOut);
    let _ = writeln!(
        out,
        "// Arguments: nz, nx, z0, z1, x0, x1; outputs: {}; inputs: {}; reals: {}.",
        field_list(s.outputs()),
        field_list(s.inputs()),
        field_list(s.reals())
    );
    if !inout.is_empty() {
        let _ = writeln!(
            out,
            "// Updated in place (read at the current point only): {}.",
            field_list(inout)
        );
    }
    let _ = writeln!(
        out,
        "// Launch: 2D grid, x along columns, y along rows, via {}.",
        dialect.launch_api()
    );
    out.push_str(dialect.header());
    for (ty, cty) in ELEMENT_TYPES {
        out.push('\n');
        out.push_str(&emit_kernel(s, ty, cty));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_str;

    fn stencil(src: &str) -> Stencil {
        parse_str(src).expect("parses").remove(0)
    }

    #[test]
    fn literals_are_the_rounded_element_value() {
        // 1/12 as f64 is 0.08333333333333333; rounded to f32 it prints as 0.083333336.
        assert_eq!(lit(-1.0 / 12.0, "float"), "-0.083333336f");
        assert_eq!(lit(-1.0 / 12.0, "double"), "-0.08333333333333333");
        assert_eq!(lit(2.0, "float"), "2.0f");
        assert_eq!(lit(1e-7, "double"), "1e-7");
        assert_eq!(lit(0.1, "float"), "0.1f");
    }

    #[test]
    fn taps_become_flat_offsets() {
        assert_eq!(tap_index(&[0, 0]), "i");
        assert_eq!(tap_index(&[-2, 0]), "i - 2 * nx");
        assert_eq!(tap_index(&[1, -1]), "i + nx - 1");
        assert_eq!(tap_index(&[0, 2]), "i + 2");
    }

    #[test]
    fn nested_negation_is_not_a_decrement() {
        let s = stencil("fn f(o: out, a: in) { o[0,0] = -(-a[0,0]) - -a[0,1]; }");
        let src = emit(&s, Dialect::Cuda);
        assert!(!src.contains("--"), "{src}");
        assert!(src.contains("o[i] = -(-a[i]) - -a[i + 1];"), "{src}");
    }

    #[test]
    fn names_clashing_with_c_get_a_suffix() {
        let s = stencil("fn f(float: out, x0: in, z1: real) { float[0,0] = x0[0,0] * z1; }");
        let src = emit(&s, Dialect::Hip);
        assert!(src.contains("float *__restrict__ float_,"), "{src}");
        assert!(src.contains("const float *__restrict__ x0_,"), "{src}");
        assert!(src.contains("float_[i] = x0_[i] * z1_;"), "{src}");
    }

    #[test]
    fn functions_map_to_typed_c_math() {
        let s = stencil("fn f(o: out, a: in) { o[0,0] = sqrt(abs(a[0,0])) + max(a[0,0], 0.5); }");
        let src = emit(&s, Dialect::Cuda);
        assert!(
            src.contains("o[i] = sqrtf(fabsf(a[i])) + fmaxf(a[i], 0.5f);"),
            "{src}"
        );
        assert!(
            src.contains("o[i] = sqrt(fabs(a[i])) + fmax(a[i], 0.5);"),
            "{src}"
        );
    }

    #[test]
    fn dialects_differ_only_in_header_and_launch_comment() {
        let s = stencil("fn f(o: out, a: in) { o[0,0] = a[0,-1] + a[0,1]; }");
        let (c, h) = (emit(&s, Dialect::Cuda), emit(&s, Dialect::Hip));
        let differing: Vec<(&str, &str)> =
            c.lines().zip(h.lines()).filter(|(a, b)| a != b).collect();
        assert_eq!(c.lines().count(), h.lines().count());
        assert_eq!(differing.len(), 3, "{differing:?}");
    }
}
