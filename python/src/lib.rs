//! `ppstencil._native`: the Python extension module behind the `ppstencil` package.
//!
//! - [`solver`]: `Simulation` (one shot, step by step) over the library's `WaveSimulator`,
//!   with numpy arrays in and out, the GIL released while the kernels run and Ctrl-C checked
//!   between blocks of steps.
//! - [`shots`]: `run` (many shots at once, results as arrays) and `cfl_limit`.
//! - [`adjoint`]: `forward`, `adjoint`, `gradient` and `migrate` over the library's
//!   `WaveOperator` (the exact adjoint, the misfit's gradient, the RTM image).
//! - [`gen`]: the stencil DSL's code generator, as `ppwave gen` has it.
//! - [`errors`]: the library's errors as Python exceptions (`ValueError` for bad input,
//!   `ppstencil.Error` otherwise).
//!
//! Only the public API of the `ppstencil` crate is used.

use pyo3::prelude::*;

mod adjoint;
mod args;
mod engine;
mod errors;
mod gen;
mod shots;
mod solver;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("GridWarning", py.get_type::<solver::GridWarning>())?;
    m.add("LIBRARY_VERSION", ppstencil::VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "BACKENDS_BUILT",
        vec![
            "serial",
            "rayon",
            #[cfg(feature = "cuda")]
            "cuda",
            #[cfg(feature = "hip")]
            "hip",
        ],
    )?;
    m.add_class::<solver::Simulation>()?;
    m.add_class::<shots::RunResult>()?;
    m.add_function(wrap_pyfunction!(shots::run, m)?)?;
    m.add_function(wrap_pyfunction!(shots::cfl_limit, m)?)?;
    m.add_function(wrap_pyfunction!(adjoint::forward, m)?)?;
    m.add_function(wrap_pyfunction!(adjoint::adjoint, m)?)?;
    m.add_function(wrap_pyfunction!(adjoint::gradient, m)?)?;
    m.add_function(wrap_pyfunction!(adjoint::migrate, m)?)?;
    m.add_function(wrap_pyfunction!(gen::gen, m)?)?;
    m.add_function(wrap_pyfunction!(gen::stencil_names, m)?)?;
    Ok(())
}
