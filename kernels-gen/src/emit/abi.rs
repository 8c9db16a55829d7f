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
//! 4. [`ArgGroup::Reals`]: one value of the element type per `real` scalar, in declaration order;
//! 5. [`ArgGroup::Windows`]: per field, outputs then inputs as in 2–3, five 64-bit signed
//!    integers [`WINDOW_ARGS`] = `oz, oy, ox, ny, nx`: where the field's storage lies in the
//!    grid (its element 0 is grid point `(oz, oy, ox)`) and its row and plane lengths, so the
//!    field's point `(iz, iy, ix)` is element `((iz - oz) * ny + (iy - oy)) * nx + (ix - ox)`.
//!    A field covering the grid passes `0, 0, 0` and the grid's `ny, nx`; a window
//!    (`ScalarField::with_origin` in the runtime) its own. They are named
//!    [`window_arg`]`(field, "oz")` = `field__oz`.
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

/// The window arguments of one field, in order (see [`ArgGroup::Windows`]).
pub const WINDOW_ARGS: [&str; 5] = ["oz", "oy", "ox", "ny", "nx"];

/// The name of window argument `part` ([`WINDOW_ARGS`]) of field `field`: `field__part`. User
/// names contain no `__`, so it is no user name (and no other field's window argument).
pub fn window_arg(field: &str, part: &str) -> String {
    format!("{field}__{part}")
}

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
    /// Per field (outputs, then inputs), the five integers of [`WINDOW_ARGS`].
    Windows,
}

/// The order of the argument groups.
pub const ARG_ORDER: [ArgGroup; 5] = [
    ArgGroup::Grid,
    ArgGroup::Outputs,
    ArgGroup::Inputs,
    ArgGroup::Reals,
    ArgGroup::Windows,
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
    /// A window argument carries its field.
    pub param: Option<usize>,
    /// The grid argument's name, the user's parameter name, or a window argument's name
    /// ([`window_arg`]).
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
            ArgGroup::Windows => {
                for p in s.outputs().into_iter().chain(s.inputs()) {
                    out.extend(WINDOW_ARGS.iter().map(|part| KernelParam {
                        group,
                        param: Some(p),
                        name: window_arg(&s.params[p].name, part),
                    }));
                }
                continue;
            }
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
            [
                "nz", "ny", "nx", "z0", "z1", "y0", "y1", "x0", "x1", "o", "u", "a", "b", "k",
                "o__oz", "o__oy", "o__ox", "o__ny", "o__nx", "u__oz", "u__oy", "u__ox", "u__ny",
                "u__nx", "a__oz", "a__oy", "a__ox", "a__ny", "a__nx", "b__oz", "b__oy", "b__ox",
                "b__ny", "b__nx"
            ]
        );
        assert_eq!(kernel_symbol("fd_pxx", "f64"), "fd_pxx_f64");
    }
}
