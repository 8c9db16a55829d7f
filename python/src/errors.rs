//! The library's errors as Python exceptions: [`ppstencil::Error::InvalidParameter`] (bad
//! input) becomes `ValueError` with the parameters named as the Python keywords name them;
//! every other error (a backend that is not built, a wavefield that stopped being finite, a
//! device failure) becomes `ppstencil.Error`. The messages are the library's.

use ppstencil::Param;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::PyErr;

create_exception!(
    ppstencil,
    Error,
    PyException,
    "A failure of the solver or a backend that is not bad input: a backend this build does \
     not have, a wavefield that stopped being finite, a device error, a call out of order. \
     Bad input raises ValueError instead."
);

/// The Python name of a library parameter: `as_value` where it stands for its value in a
/// range (`2 <= z < 38`), else as a setting to change (`use dt <= ...`). `None` keeps the
/// library's name (nz, nx, ny, dt, dh, fpeak, absorb, ...).
fn py_name(p: &Param, as_value: bool) -> Option<String> {
    let name = match p {
        Param::SourceZ if as_value => "z",
        Param::SourceY if as_value => "y",
        Param::SourceX if as_value => "x",
        Param::SourceZ => "source z",
        Param::SourceY => "source y",
        Param::SourceX => "source x",
        Param::GridSize => "velocity.shape",
        Param::Vmin => "min(velocity)",
        Param::SpaceOrder => "space_order",
        Param::PmlReflection => "pml_r",
        Param::PmlDegree => "pml_degree",
        Param::PmlAlpha => "pml_alpha",
        Param::SourceDelay => "source_delay",
        Param::SourceMode => "source_mode",
        Param::SnapshotEvery => "snapshots",
        Param::Velocity | Param::VelocityModel => "velocity",
        Param::TimeBlock => "time_block",
        _ => return None,
    };
    Some(name.to_string())
}

/// The Python exception for a library error.
pub fn to_py(e: ppstencil::Error) -> PyErr {
    match &e {
        ppstencil::Error::InvalidParameter { param, value, .. } => {
            let valid = e.valid_named(py_name).unwrap_or_default();
            let name = py_name(param, false).unwrap_or_else(|| param.to_string());
            PyValueError::new_err(format!("invalid {name} = {value}: {valid}"))
        }
        // A backend this build does not have: the library says how to rebuild the crate;
        // the package is rebuilt through pip.
        ppstencil::Error::BackendUnavailable { backend, reason } if reason.contains("built without") => {
            Error::new_err(format!(
                "{e}; for this Python package: MATURIN_PEP517_ARGS=\"--features {}\" pip install ./python",
                backend.to_lowercase()
            ))
        }
        _ => Error::new_err(e.to_string()),
    }
}

/// A `ValueError` with `text`.
pub fn bad(text: impl Into<String>) -> PyErr {
    PyValueError::new_err(text.into())
}

/// Shorthand: a library result as a Python one.
pub trait OrPy<T> {
    /// Maps the error with [`to_py`].
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> OrPy<T> for ppstencil::Result<T> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
