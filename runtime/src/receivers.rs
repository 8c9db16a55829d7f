//! Receivers (where the wavefield is recorded every time step) and the recorded
//! [`Seismogram`].
//!
//! Receivers are grid points `(z, x)` (row, column). A [`ReceiverLine`] is the usual
//! horizontal line of receivers, written `Z:X0:X1:STEP` (the `--receivers` flag);
//! [`parse_positions`] reads a list of `z x` pairs (a receiver file).

use crate::{Error, Param, Real, Result};
use std::str::FromStr;

/// A horizontal line of receivers: row `z`, columns `x0, x0 + step, ...` up to and including
/// `x1` when the step lands on it.
///
/// ```
/// use ppstencil::receivers::ReceiverLine;
/// let line: ReceiverLine = "10:0:20:5".parse()?;
/// assert_eq!(line.positions(), vec![(10, 0), (10, 5), (10, 10), (10, 15), (10, 20)]);
/// assert!("10:20:0:5".parse::<ReceiverLine>().is_err()); // X1 before X0
/// # Ok::<(), ppstencil::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiverLine {
    /// Row of every receiver.
    pub z: usize,
    /// Plane along y of every receiver, for a 3D run (`Z:Y:X0:X1:STEP`); `None` in 2D.
    pub y: Option<usize>,
    /// First column.
    pub x0: usize,
    /// Last column (inclusive bound).
    pub x1: usize,
    /// Column step (at least 1).
    pub step: usize,
}

impl ReceiverLine {
    /// The receiver positions `(z, x)`, in increasing `x`.
    pub fn positions(&self) -> Vec<(usize, usize)> {
        (self.x0..=self.x1)
            .step_by(self.step.max(1))
            .map(|x| (self.z, x))
            .collect()
    }

    /// The receiver positions `(z, y, x)` of a 3D line (`y` = 0 when the line has none).
    ///
    /// ```
    /// use ppstencil::receivers::ReceiverLine;
    /// let line: ReceiverLine = "10:7:0:4:2".parse()?;
    /// assert_eq!(line.positions_3d(), vec![(10, 7, 0), (10, 7, 2), (10, 7, 4)]);
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn positions_3d(&self) -> Vec<(usize, usize, usize)> {
        let y = self.y.unwrap_or(0);
        self.positions()
            .into_iter()
            .map(|(z, x)| (z, y, x))
            .collect()
    }
}

impl FromStr for ReceiverLine {
    type Err = Error;

    /// Parses `Z:X0:X1:STEP` (non-negative integers, `X0 <= X1`, `STEP >= 1`), or
    /// `Z:Y:X0:X1:STEP` for a line along x in plane `Y` of a 3D grid.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::invalid(
                Param::Receivers,
                s,
                format!(
                    "{why}; write Z:X0:X1:STEP, e.g. 10:0:500:5 (row 10, columns 0 to 500 every 5), or Z:Y:X0:X1:STEP in 3D"
                ),
            )
        };
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() != 4 && parts.len() != 5 {
            return Err(bad(
                "expected four (2D) or five (3D) fields separated by `:`",
            ));
        }
        let mut v = Vec::new();
        for part in &parts {
            v.push(
                part.trim()
                    .parse::<usize>()
                    .map_err(|_| bad(&format!("`{part}` is not a non-negative integer")))?,
            );
        }
        let (z, y, x0, x1, step) = match v[..] {
            [z, x0, x1, step] => (z, None, x0, x1, step),
            [z, y, x0, x1, step] => (z, Some(y), x0, x1, step),
            _ => return Err(bad("expected four or five fields")),
        };
        if x0 > x1 {
            return Err(bad("X0 must not be greater than X1"));
        }
        if step == 0 {
            return Err(bad("STEP must be at least 1"));
        }
        Ok(ReceiverLine { z, y, x0, x1, step })
    }
}

/// Parses receiver positions from text: one `z x` pair per line (separated by spaces, tabs
/// or a comma), blank lines and `#` comments ignored.
///
/// ```
/// let p = ppstencil::receivers::parse_positions("# z x\n10 20\n11, 21\n\n")?;
/// assert_eq!(p, vec![(10, 20), (11, 21)]);
/// assert!(ppstencil::receivers::parse_positions("10").is_err());
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub fn parse_positions(text: &str) -> Result<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let parsed: Option<Vec<usize>> = fields.iter().map(|f| f.parse().ok()).collect();
        match parsed.as_deref() {
            Some(&[z, x]) => out.push((z, x)),
            _ => {
                return Err(Error::invalid(
                    Param::Receivers,
                    line,
                    format!(
                        "line {}: each line holds two non-negative integers `z x` (row, column)",
                        n + 1
                    ),
                ))
            }
        }
    }
    Ok(out)
}

/// Traces recorded at the receivers: `nt` samples by `nrec` receivers, row-major (`data[it *
/// nrec + r]`). Sample `it` is the pressure after time step `it + 1`, at time
/// `(it + 1) · dt`.
#[derive(Clone, Debug, PartialEq)]
pub struct Seismogram<T: Real = f32> {
    /// Time samples (the number of time steps).
    pub nt: usize,
    /// Receivers.
    pub nrec: usize,
    /// Sample interval (the time step), in seconds.
    pub dt: f64,
    /// Receiver positions `[z, y, x]` (`y` = 0 in 2D), in trace order.
    pub positions: Vec<[usize; 3]>,
    /// The samples, `nt × nrec`, row-major (time down, one column per receiver).
    pub data: Vec<T>,
}

impl<T: Real> Seismogram<T> {
    /// Sample `it` of receiver `r`, or `None` outside the seismogram.
    pub fn get(&self, it: usize, r: usize) -> Option<T> {
        (it < self.nt && r < self.nrec).then(|| self.data[it * self.nrec + r])
    }

    /// The whole trace of receiver `r` (empty when `r >= nrec`).
    pub fn trace(&self, r: usize) -> Vec<T> {
        if r >= self.nrec {
            return Vec::new();
        }
        (0..self.nt)
            .map(|it| self.data[it * self.nrec + r])
            .collect()
    }

    /// The time of sample `it`: `(it + 1) · dt`.
    pub fn time(&self, it: usize) -> f64 {
        (it + 1) as f64 * self.dt
    }

    /// Writes the samples to `path` as an `nt × nrec` `.npy` array of `T` (time down, one
    /// column per receiver, as [`data`](Self::data)), replacing any existing file; see
    /// [`crate::io::write_npy`].
    pub fn write_npy(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        let field =
            crate::HostField::<T, 2>::from_vec_shape([self.nt, self.nrec], self.data.clone())?;
        crate::io::write_npy(path, &field)
    }
}
