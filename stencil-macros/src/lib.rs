//! The `stencil!` procedural macro. All logic lives in `kernels-gen`; this crate only turns
//! its errors into `compile_error!` at the right span. Use it through `ppstencil::stencil!`.
#![warn(missing_docs)]

use proc_macro::TokenStream;

/// Defines one or more stencils declaratively and generates every backend for them.
///
/// See the `ppstencil` crate documentation for the syntax and for what is generated.
#[proc_macro]
pub fn stencil(input: TokenStream) -> TokenStream {
    match kernels_gen::expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}
