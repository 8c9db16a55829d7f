//! The GPU kernel ABI: what a generated CUDA-C / HIP-C kernel is called and which arguments it
//! takes, in which order. Defined once here; the C emitter ([`super::c`]) writes kernels by
//! it and the runtime's device launch layer calls them by it.
//!
//! A stencil `NAME` gives one kernel per element type, named [`kernel_symbol`]`(NAME, "f32")`
//! = `NAME_f32` and `NAME_f64`. Its arguments, in the order of [`ARG_ORDER`]:
//!
//! 1. [`ArgGroup::Grid`]: nine 64-bit signed integers, [`GRID_ARGS`] =
//!    `nz, ny, nx, z0, z1, y0, y1, x0, x1` (the field shape, row-major
//!    `[(iz * ny + iy) * nx + ix]` with absent axes of size 1 — a 2D field is `nz × 1 × nx`, a
//!    1D field `1 × 1 × n` — and the box `z0..z1 × y0..y1 × x0..x1` to compute). The same
//!    nine for every dimensionality;
//! 2. [`ArgGroup::Outputs`]: one device pointer per written field (`out`, `inout`), in
//!    declaration order;
//! 3. [`ArgGroup::Inputs`]: one device pointer per `in` field, in declaration order;
//! 4. [`ArgGroup::Reals`]: one value of the element type per `real` scalar, in declaration order.
//!
//! `index` parameters are not passed: the point they name is in the grid arguments. The order
//! of groups 2–4 is that of `StencilInfo::{outputs, inputs, reals}`. [`kernel_params`] lists
//! the whole argument list of one stencil.
//!
//! What does not live here: the C text of a kernel ([`super::c`]), launch geometry (runtime).

use crate::ir::Stencil;

/// The element types every kernel is emitted for: `(symbol suffix, C type)`.
pub const ELEMENT_TYPES: [(&str, &str); 2] = [("f32", "float"), ("f64", "double")];

/// The grid arguments, in order: all nine are 64-bit signed integers (`long long`).
pub const GRID_ARGS: [&str; 9] = ["nz", "ny", "nx", "z0", "z1", "y0", "y1", "x0", "x1"];

/// A group of kernel arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgGroup {
    /// The nine integers of [`GRID_ARGS`].
    Grid,
    /// Pointers to the written fields (`out`, `inout`), in declaration order.
    Outputs,
    /// Pointers to the read-only fields (`in`), in declaration order.
    Inputs,
    /// The `real` scalars, by value in the element type, in declaration order.
    Reals,
}

/// The order of the argument groups.
pub const ARG_ORDER: [ArgGroup; 4] = [
    ArgGroup::Grid,
    ArgGroup::Outputs,
    ArgGroup::Inputs,
    ArgGroup::Reals,
];

/// The symbol of stencil `stencil`'s kernel for element suffix `elem` (`"f32"`, `"f64"`):
/// `fd_pxx_f32`.
pub fn kernel_symbol(stencil: &str, elem: &str) -> String {
    format!("{stencil}_{elem}")
}

/// One argument of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelParam {
    /// Its group.
    pub group: ArgGroup,
    /// The stencil parameter it carries (index into `Stencil::params`); `None` for the grid.
    pub param: Option<usize>,
    /// The grid argument's name, or the user's parameter name.
    pub name: String,
}

/// Every argument of `s`'s kernels, in ABI order.
pub fn kernel_params(s: &Stencil) -> Vec<KernelParam> {
    let mut out = Vec::new();
    for group in ARG_ORDER {
        let params = match group {
            ArgGroup::Grid => {
                out.extend(GRID_ARGS.iter().map(|g| KernelParam {
                    group,
                    param: None,
                    name: g.to_string(),
                }));
                continue;
            }
            ArgGroup::Outputs => s.outputs(),
            ArgGroup::Inputs => s.inputs(),
            ArgGroup::Reals => s.reals(),
        };
        out.extend(params.into_iter().map(|p| KernelParam {
            group,
            param: Some(p),
            name: s.params[p].name.clone(),
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_str;

    #[test]
    fn arguments_follow_grid_outputs_inputs_reals() {
        // Declared in mixed order; the ABI sorts by group, keeping declaration order inside.
        let s = parse_str(
            "#[at(iz, ix)] fn f(k: real, a: in, o: out, iz: index, u: inout, b: in, ix: index) \
             { o[0,0] = a[0,0] * k; u[0,0] = u[0,0] + b[0,0]; }",
        )
        .expect("parses")
        .remove(0);
        let names: Vec<String> = kernel_params(&s).into_iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["nz", "ny", "nx", "z0", "z1", "y0", "y1", "x0", "x1", "o", "u", "a", "b", "k"]
        );
        assert_eq!(kernel_symbol("fd_pxx", "f64"), "fd_pxx_f64");
    }
}
