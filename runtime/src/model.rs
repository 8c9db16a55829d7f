//! [`VelocityModel`]: a 2D or 3D velocity model given as data (e.g. loaded from a `.npy` file),
//! validated once when it is made.

use crate::{Error, Param, Real, Result};
use std::sync::Arc;

/// An `nz × nx` (or `nz × ny × nx`) velocity model in m/s, row-major, every value finite and greater than 0.
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
    ny: usize,
    nx: usize,
    dims: usize,
    values: Arc<[f64]>,
    vmax: f64,
}

impl VelocityModel {
    /// A model of `nz` rows by `nx` columns from row-major `values` (`nz * nx` of them).
    /// Errors name the first value that is NaN, infinite or not greater than 0, and where.
    pub fn new(nz: usize, nx: usize, values: Vec<f64>) -> Result<Self> {
        Self::with_shape(nz, 1, nx, 2, values)
    }

    /// A 3D model (`nz × ny × nx`, z slowest, x fastest) from row-major
    /// `values` (`nz * ny * nx` of them), checked as [`new`](Self::new) checks a 2D one.
    ///
    /// ```
    /// use ppstencil::model::VelocityModel;
    /// let m = VelocityModel::new_3d(2, 2, 2, vec![1500.0; 8])?;
    /// assert_eq!((m.nz(), m.ny(), m.nx(), m.dims()), (2, 2, 2, 3));
    /// let e = VelocityModel::new_3d(1, 2, 2, vec![1.0, 1.0, 0.0, 1.0]).unwrap_err().to_string();
    /// assert!(e.contains("plane 0, row 1, column 0"), "{e}");
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn new_3d(nz: usize, ny: usize, nx: usize, values: Vec<f64>) -> Result<Self> {
        Self::with_shape(nz, ny, nx, 3, values)
    }

    fn with_shape(nz: usize, ny: usize, nx: usize, dims: usize, values: Vec<f64>) -> Result<Self> {
        let shape = if dims == 3 {
            format!("{nz} x {ny} x {nx}")
        } else {
            format!("{nz} x {nx}")
        };
        if nz == 0 || ny == 0 || nx == 0 {
            return Err(Error::invalid(
                Param::VelocityModel,
                shape,
                "every dimension must be at least 1",
            ));
        }
        if nz.checked_mul(ny).and_then(|n| n.checked_mul(nx)) != Some(values.len()) {
            return Err(Error::invalid(
                Param::VelocityModel,
                format!("{} values", values.len()),
                format!("a {shape} model needs one value per point"),
            ));
        }
        let mut vmax = 0.0f64;
        for (k, &v) in values.iter().enumerate() {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(
                    Param::Velocity,
                    v,
                    format!(
                        "at {}row {}, column {}: every velocity of the model must be finite and greater than 0 m/s",
                        if dims == 3 { format!("plane {}, ", k / (ny * nx)) } else { String::new() },
                        if dims == 3 { k / nx % ny } else { k / nx },
                        k % nx
                    ),
                ));
            }
            vmax = vmax.max(v);
        }
        Ok(VelocityModel {
            nz,
            ny,
            nx,
            dims,
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

    /// Planes along y (1 for a 2D model).
    pub fn ny(&self) -> usize {
        self.ny
    }

    /// 2 or 3.
    pub fn dims(&self) -> usize {
        self.dims
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
