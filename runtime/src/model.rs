//! [`VelocityModel`]: a 2D velocity model given as data (e.g. loaded from a `.npy` file),
//! validated once when it is made.

use crate::{Error, Param, Real, Result};
use std::sync::Arc;

/// An `nz × nx` velocity model in m/s, row-major, every value finite and greater than 0.
///
/// It is part of [`WaveConfig`](crate::WaveConfig) (its shape sets `nz`, `nx`); the config's
/// layers are applied on top of it. Cloning is cheap (the data is shared).
///
/// ```
/// use ppstencil::model::VelocityModel;
/// let m = VelocityModel::new(2, 3, vec![1500.0, 1500.0, 1600.0, 2000.0, 2100.0, 2200.0])?;
/// assert_eq!((m.nz(), m.nx(), m.vmax()), (2, 3, 2200.0));
/// let e = VelocityModel::new(1, 2, vec![1500.0, f64::NAN]).unwrap_err().to_string();
/// assert!(e.contains("row 0, column 1"), "{e}");
/// # Ok::<(), ppstencil::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct VelocityModel {
    nz: usize,
    nx: usize,
    values: Arc<[f64]>,
    vmax: f64,
}

impl VelocityModel {
    /// A model of `nz` rows by `nx` columns from row-major `values` (`nz * nx` of them).
    /// Errors name the first value that is NaN, infinite or not greater than 0, and where.
    pub fn new(nz: usize, nx: usize, values: Vec<f64>) -> Result<Self> {
        if nz == 0 || nx == 0 {
            return Err(Error::invalid(
                Param::VelocityModel,
                format!("{nz} x {nx}"),
                "both dimensions must be at least 1",
            ));
        }
        if nz.checked_mul(nx) != Some(values.len()) {
            return Err(Error::invalid(
                Param::VelocityModel,
                format!("{} values", values.len()),
                format!("a {nz} x {nx} model needs nz * nx values"),
            ));
        }
        let mut vmax = 0.0f64;
        for (k, &v) in values.iter().enumerate() {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(
                    Param::Velocity,
                    v,
                    format!(
                        "at row {}, column {}: every velocity of the model must be finite and greater than 0 m/s",
                        k / nx,
                        k % nx
                    ),
                ));
            }
            vmax = vmax.max(v);
        }
        Ok(VelocityModel {
            nz,
            nx,
            values: values.into(),
            vmax,
        })
    }

    /// A model from values of any element type (e.g. a float32 `.npy` file), widened to f64.
    pub fn from_values<T: Real>(nz: usize, nx: usize, values: &[T]) -> Result<Self> {
        Self::new(nz, nx, values.iter().map(|v| v.to_f64()).collect())
    }

    /// Rows.
    pub fn nz(&self) -> usize {
        self.nz
    }

    /// Columns.
    pub fn nx(&self) -> usize {
        self.nx
    }

    /// The values, row-major.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Largest velocity.
    pub fn vmax(&self) -> f64 {
        self.vmax
    }
}
