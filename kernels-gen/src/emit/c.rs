//! The C-family GPU emitter: CUDA-C and HIP-C from the same IR.
//!
//! One emitter parameterised by [`Dialect`]; the two dialects differ only in the header lines
//! (which runtime header to include) and in the comment naming the launch API. Every stencil
//! becomes one `extern "C" __global__` kernel per element type, `NAME_f32` and `NAME_f64`, in
//! one source text.
//!
//! # Kernel ABI
//!
//! Kernel names and the argument order (grid, outputs, inputs, reals, each field's window)
//! are defined in [`super::abi`]; this emitter writes them from there. Every field is indexed
//! through its own window: the kernel first computes, per field, its element at the thread's
//! point (`p__i`), and reads taps at offsets in the field's own strides (`p__nx`,
//! `p__plane`). A profile (`a: in(x)`) is indexed by the point's coordinate along its axis
//! alone (`a__i = ix - a__ox`), its taps at offsets along that axis (`a__i + 1`).
//!
//! # Names
//!
//! Every user name (field, scalar, local) is written with a trailing `_` (`p` → `p_`). User
//! names never contain `__`, so no user name can meet a name the generator writes: the
//! per-field names `field__part` (window arguments `p__oz`, ..., the locals `p__i`,
//! `p__plane`), or [`RESERVED`] (the grid and loop variables, C keywords, CUDA/HIP built-ins, math functions),
//! a C or CUDA/HIP macro (`assert_`, `min_` are not macros), or another user name. Doc lines
//! become `//` comment lines (the parser splits them at line breaks; a trailing `\` is dropped
//! so no comment continues onto the next line).
//!
//! # Launch
//!
//! One launch shape for every dimensionality: a 2D thread grid whose `x` runs along columns
//! (`blockIdx.x * blockDim.x + threadIdx.x`, coalesced) and whose `y` runs along the *rows* of
//! the region, a row being one `(z, y)` pair (`blockIdx.y * blockDim.y + threadIdx.y`,
//! numbered `(iz - z0) * (y1 - y0) + (iy - y0)`; in 1D and 2D simply `iz - z0`). Each thread
//! computes at most one point and returns when it lies outside the box, so any block size
//! works and grids need not be multiples of it. The CUDA/HIP limit of 65,535 blocks along
//! grid `y` is met by the runtime launching the region in bands of whole z-planes (each band
//! a launch with its own `z0..z1`), so the ABI needs no extra row-offset argument.
//!
//! # Arithmetic
//!
//! Expressions are printed from the same tree as the Rust emitters, with the same
//! parentheses, so evaluation order is identical. Constants are printed as the element type's
//! exact value (the `f32` literal is the `f64` constant rounded to `f32`, as `T::lit` does), so
//! with floating-point contraction off (`-ffp-contract=off`, `--fmad=false`) a kernel computes
//! bit for bit what the serial backend computes.

use super::abi::{self, ArgGroup};
use super::infix::{self, CallStyle, Syntax};
use crate::ir::{zyx, Access, Domain, Func, Stencil, Stmt, AXIS_NAMES};
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

/// Every identifier the C emitter writes that is not a user name: the grid arguments, the
/// thread's point, C keywords and types, CUDA/HIP built-ins and qualifiers, math functions
/// and the header guard. User names are written as `name_` and never contain `__`, so none
/// of them can equal one of these (every entry either has no trailing `_` or starts with
/// `__`; a test checks it, and that the emitted text uses nothing else).
pub const RESERVED: &[&str] = &[
    // Grid arguments (abi::GRID_ARGS) and the thread's point.
    "nz",
    "ny",
    "nx",
    "z0",
    "z1",
    "y0",
    "y1",
    "x0",
    "x1",
    "ix",
    "iy",
    "iz",
    "row",
    // C words.
    "extern",
    "void",
    "const",
    "long",
    "float",
    "double",
    "if",
    "return",
    // CUDA/HIP qualifiers and built-ins.
    "__global__",
    "__restrict__",
    "blockIdx",
    "blockDim",
    "threadIdx",
    "x",
    "y",
    // Math functions (f64, then f32).
    "sqrt",
    "fabs",
    "exp",
    "sin",
    "cos",
    "fmin",
    "fmax",
    "sqrtf",
    "fabsf",
    "expf",
    "sinf",
    "cosf",
    "fminf",
    "fmaxf",
    // Preprocessor lines.
    "ifndef",
    "include",
    "endif",
    "PPSTENCIL_PRELUDE",
    "cuda_runtime",
    "hip",
    "hip_runtime",
    "h",
];

/// The C name of user name `name`: `name_`.
pub fn user_name(name: &str) -> String {
    format!("{name}_")
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

/// The C spelling of one stencil's expressions for element type `cty`.
struct C<'a> {
    s: &'a Stencil,
    cty: &'a str,
}

impl Syntax for C<'_> {
    fn lit(&self, out: &mut String, v: f64) {
        out.push_str(&lit(v, self.cty));
    }
    fn scalar(&self, out: &mut String, param: usize) {
        out.push_str(&user_name(&self.s.params[param].name));
    }
    fn local(&self, out: &mut String, local: usize) {
        out.push_str(&user_name(&self.s.locals[local]));
    }
    fn read(&self, out: &mut String, field: usize, offset: &[i32]) {
        let name = &self.s.params[field].name;
        let index = match self.s.profile_axis(field) {
            Some(axis) => profile_index(name, zyx(offset)[axis]),
            None => tap_index(name, offset),
        };
        let _ = write!(out, "{}[{index}]", user_name(name));
    }
    fn func(&self, f: Func) -> String {
        func(f, self.cty)
    }
    fn call_style(&self) -> CallStyle {
        CallStyle::Function
    }
}

/// The name of the generator's per-field local `part` (`i`, the field's element at the
/// thread's point; `plane`, its plane length): `p__i`, like the window arguments
/// ([`abi::window_arg`]), so no user name can meet it.
fn field_local(field: &str, part: &str) -> String {
    abi::window_arg(field, part)
}

/// The element of field `field` at a tap, relative to the field's element at the current
/// point (`p__i`), with the field's own strides: `p__i - 2 * p__nx + 1` in 2D,
/// `p__i + p__plane - 3 * p__nx` in 3D.
fn tap_index(field: &str, offset: &[i32]) -> String {
    let mut t = field_local(field, "i");
    let nx = field_local(field, "nx");
    let z_stride = if offset.len() == 3 {
        field_local(field, "plane")
    } else {
        nx.clone()
    };
    for (d, stride) in zyx(offset)
        .into_iter()
        .zip([Some(&z_stride), Some(&nx), None])
    {
        let term = match (d.unsigned_abs(), stride) {
            (0, _) => continue,
            (n, None) => n.to_string(),
            (1, Some(st)) => st.to_string(),
            (n, Some(st)) => format!("{n} * {st}"),
        };
        t.push_str(if d > 0 { " + " } else { " - " });
        t.push_str(&term);
    }
    t
}

/// The element of profile `field` (`in(x)`) at offset `d` along its axis from the current
/// point: `a__i + 1`.
fn profile_index(field: &str, d: i32) -> String {
    let i = field_local(field, "i");
    match d {
        0 => i,
        d if d > 0 => format!("{i} + {d}"),
        d => format!("{i} - {}", d.unsigned_abs()),
    }
}

/// One `__global__` kernel of `s` for element type `cty` (`"float"` / `"double"`).
pub fn emit_kernel(s: &Stencil, ty: &str, cty: &str) -> String {
    let syntax = C { s, cty };
    let mut params = Vec::new();
    let mut grid = Vec::new();
    let mut windows = Vec::new();
    for p in abi::kernel_params(s) {
        let name = match p.group {
            ArgGroup::Outputs | ArgGroup::Inputs | ArgGroup::Reals => user_name(&p.name),
            ArgGroup::Grid | ArgGroup::Windows => p.name,
        };
        match p.group {
            ArgGroup::Grid => grid.push(format!("const long long {name}")),
            ArgGroup::Outputs => params.push(format!("{cty} *__restrict__ {name}")),
            ArgGroup::Inputs => params.push(format!("const {cty} *__restrict__ {name}")),
            ArgGroup::Reals => params.push(format!("const {cty} {name}")),
            ArgGroup::Windows => windows.push(format!("const long long {name}")),
        }
    }
    // The grid: the shape `nz, ny, nx` on one line, then `z0, z1`, `y0, y1`, `x0, x1`; the
    // fields and reals; each field's window on one line.
    let mut lines: Vec<String> = vec![grid[..3].join(", ")];
    lines.extend(grid[3..].chunks(2).map(|c| c.join(", ")));
    lines.extend(params);
    lines.extend(windows.chunks(abi::WINDOW_ARGS.len()).map(|c| c.join(", ")));
    let mut k = String::new();
    let _ = writeln!(
        k,
        "extern \"C\" __global__ void {}(\n    {})\n{{",
        abi::kernel_symbol(&s.name, ty),
        lines.join(",\n    ")
    );
    k.push_str("    const long long ix = x0 + (long long)blockIdx.x * blockDim.x + threadIdx.x;\n");
    if s.dims == 3 {
        k.push_str("    const long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;\n");
        k.push_str("    const long long iz = z0 + row / (y1 - y0);\n");
        k.push_str("    const long long iy = y0 + row % (y1 - y0);\n");
        k.push_str("    if (ix >= x1 || iz >= z1) {\n        return;\n    }\n");
    } else {
        // 1D and 2D: y0 = 0, y1 = ny = 1, so a row is one z.
        k.push_str(
            "    const long long iz = z0 + (long long)blockIdx.y * blockDim.y + threadIdx.y;\n",
        );
        k.push_str("    if (ix >= x1 || iz >= z1) {\n        return;\n    }\n");
    }
    // Each field's element at the thread's point, through its window (and its plane length
    // where it is read across planes).
    let taps = s.taps();
    for p in s.outputs().into_iter().chain(s.inputs()) {
        let name = &s.params[p].name;
        let w = |part: &str| abi::window_arg(name, part);
        let index = if let Some(axis) = s.profile_axis(p) {
            // A profile: its element at the point's coordinate along its axis.
            let (at, origin) = [("iz", "oz"), ("iy", "oy"), ("ix", "ox")][axis];
            format!("{at} - {}", w(origin))
        } else if s.dims == 3 {
            format!(
                "((iz - {}) * {} + (iy - {})) * {} + (ix - {})",
                w("oz"),
                w("ny"),
                w("oy"),
                w("nx"),
                w("ox")
            )
        } else {
            format!("(iz - {}) * {} + (ix - {})", w("oz"), w("nx"), w("ox"))
        };
        let _ = writeln!(
            k,
            "    const long long {} = {index};",
            field_local(name, "i")
        );
        let strided = s.profile_axis(p).is_none();
        if strided && s.dims == 3 && taps.iter().any(|t| t.field == p && t.offset[0] != 0) {
            let _ = writeln!(
                k,
                "    const long long {} = {} * {};",
                field_local(name, "plane"),
                w("ny"),
                w("nx")
            );
        }
    }
    for st in &s.body {
        match st {
            Stmt::Let { local, value } => {
                let _ = writeln!(
                    k,
                    "    const {cty} {} = {};",
                    user_name(&s.locals[*local]),
                    infix::to_string(&syntax, value)
                );
            }
            Stmt::Assign { field, value } => {
                let name = &s.params[*field].name;
                let _ = writeln!(
                    k,
                    "    {}[{}] = {};",
                    user_name(name),
                    field_local(name, "i"),
                    infix::to_string(&syntax, value)
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
        // The parser splits doc comments into lines; a trailing `\\` would continue the
        // comment onto the next line, so it is dropped here.
        let _ = writeln!(out, "//{}", d.trim_end().trim_end_matches('\\'));
    }
    let domain = match s.domain {
        Domain::Interior => format!(
            "the interior, {} {r}..n-{r} (radius {r})",
            ["points", "rows and columns", "planes, rows and columns"][s.dims - 1],
            r = s.radius()
        ),
        Domain::Point(_) => "one point, given by z0, y0 and x0".to_string(),
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
        "// Arguments: nz, ny, nx, z0, z1, y0, y1, x0, x1; outputs: {}; inputs: {}; reals: {}; \
         per field its window: oz, oy, ox, ny, nx.",
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
    let profiles: Vec<String> = s
        .inputs()
        .into_iter()
        .filter_map(|p| {
            let axis = s.profile_axis(p)?;
            Some(format!("{} along {}", s.params[p].name, AXIS_NAMES[axis]))
        })
        .collect();
    if !profiles.is_empty() {
        let _ = writeln!(
            out,
            "// Profiles (one value per index along their axis): {}.",
            profiles.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "// Launch: 2D grid, x along columns, y along rows ((z, y) pairs), via {}.",
        dialect.launch_api()
    );
    out.push_str(dialect.header());
    for (ty, cty) in abi::ELEMENT_TYPES {
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
        assert_eq!(tap_index("p", &[0, 0]), "p__i");
        assert_eq!(tap_index("p", &[-2, 0]), "p__i - 2 * p__nx");
        assert_eq!(tap_index("p", &[1, -1]), "p__i + p__nx - 1");
        assert_eq!(tap_index("p", &[0, 2]), "p__i + 2");
        assert_eq!(tap_index("q", &[-1, 2, 0]), "q__i - q__plane + 2 * q__nx");
    }

    #[test]
    fn nested_negation_is_not_a_decrement() {
        let s = stencil("fn f(o: out, a: in) { o[0,0] = -(-a[0,0]) - -a[0,1]; }");
        let src = emit(&s, Dialect::Cuda);
        assert!(!src.contains("--"), "{src}");
        assert!(
            src.contains("o_[o__i] = -(-a_[a__i]) - -a_[a__i + 1];"),
            "{src}"
        );
    }

    #[test]
    fn every_user_name_gets_a_suffix() {
        let s = stencil("fn f(float: out, x0: in, z1: real) { float[0,0] = x0[0,0] * z1; }");
        let src = emit(&s, Dialect::Hip);
        assert!(src.contains("float *__restrict__ float_,"), "{src}");
        assert!(src.contains("const float *__restrict__ x0_,"), "{src}");
        assert!(
            src.contains("float_[float__i] = x0_[x0__i] * z1_;"),
            "{src}"
        );
        assert!(
            src.contains("const long long x0__i = (iz - x0__oz) * x0__nx + (ix - x0__ox);"),
            "{src}"
        );
    }

    #[test]
    fn functions_map_to_typed_c_math() {
        let s = stencil("fn f(o: out, a: in) { o[0,0] = sqrt(abs(a[0,0])) + max(a[0,0], 0.5); }");
        let src = emit(&s, Dialect::Cuda);
        assert!(
            src.contains("o_[o__i] = sqrtf(fabsf(a_[a__i])) + fmaxf(a_[a__i], 0.5f);"),
            "{src}"
        );
        assert!(
            src.contains("o_[o__i] = sqrt(fabs(a_[a__i])) + fmax(a_[a__i], 0.5);"),
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
