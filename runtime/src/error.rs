//! The library's one error type.

/// Everything that can go wrong in ppstencil. Messages name the problem and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The backend is not compiled in, or no device was found at run time.
    #[error("the {backend} backend is not available: {reason}")]
    BackendUnavailable {
        /// `"CUDA"` or `"HIP"`.
        backend: &'static str,
        /// Why, and what to do.
        reason: String,
    },
    /// An allocation failed.
    #[error("cannot allocate {bytes} bytes in {space}: out of memory; use a smaller grid")]
    OutOfMemory {
        /// The memory space.
        space: &'static str,
        /// Bytes requested.
        bytes: usize,
    },
    /// A host buffer or field of the wrong length was passed to a copy.
    #[error("{what}: expected {expected} elements, found {found}")]
    SizeMismatch {
        /// Which copy.
        what: String,
        /// Elements expected.
        expected: usize,
        /// Elements found.
        found: usize,
    },
    /// Fields of different shapes were passed to one kernel launch.
    #[error(
        "kernel `{kernel}`: field `{field}` is {found_nz} x {found_nx} but `{first}` is \
         {nz} x {nx}; every field of one launch must have the same shape"
    )]
    ShapeMismatch {
        /// Kernel name.
        kernel: &'static str,
        /// The first field (reference shape).
        first: &'static str,
        /// The mismatching field.
        field: &'static str,
        /// Reference rows.
        nz: usize,
        /// Reference columns.
        nx: usize,
        /// Rows found.
        found_nz: usize,
        /// Columns found.
        found_nx: usize,
    },
    /// The grid is too small for the stencil's radius.
    #[error(
        "kernel `{kernel}` has radius {radius}: a {nz} x {nx} grid is too small; each \
         dimension needs at least {min} points"
    )]
    GridTooSmall {
        /// Kernel name.
        kernel: &'static str,
        /// Stencil radius.
        radius: usize,
        /// Rows.
        nz: usize,
        /// Columns.
        nx: usize,
        /// Smallest allowed size (2 × radius + 1).
        min: usize,
    },
    /// A point-domain kernel was given a point too close to the border or outside the grid.
    #[error(
        "kernel `{kernel}`: point ({iz}, {ix}) must lie at least {radius} cells inside the \
         {nz} x {nx} grid (rows {radius}..{}, columns {radius}..{})",
        nz.saturating_sub(*radius), nx.saturating_sub(*radius)
    )]
    PointOutOfRange {
        /// Kernel name.
        kernel: &'static str,
        /// Row.
        iz: usize,
        /// Column.
        ix: usize,
        /// Stencil radius.
        radius: usize,
        /// Rows.
        nz: usize,
        /// Columns.
        nx: usize,
    },
    /// A parameter is out of its valid range.
    #[error("invalid {name} = {value}: {valid}")]
    InvalidParameter {
        /// Parameter name, as the user knows it (e.g. `--dt`).
        name: String,
        /// The value given.
        value: String,
        /// The valid range and the fix.
        valid: String,
    },
    /// A device API call failed.
    #[error("{call} failed: {code}")]
    Device {
        /// The call, e.g. `cuMemAlloc(1048576 bytes)`.
        call: String,
        /// The error code's name and description.
        code: String,
    },
    /// Reading or writing a file failed, or a file's contents are not what was expected
    /// (see [`io`](crate::io)).
    #[error("{path}: {problem}")]
    File {
        /// The file.
        path: String,
        /// What went wrong, and the fix where there is one.
        problem: String,
        /// The operating-system error, if any.
        #[source]
        source: Option<std::io::Error>,
    },
    /// A step-level call of the solver came out of order: [`step`] before [`prepare`] or
    /// after the last time step, [`finish`] without a prepared run.
    ///
    /// [`step`]: crate::WaveSimulator::step
    /// [`prepare`]: crate::WaveSimulator::prepare
    /// [`finish`]: crate::WaveSimulator::finish
    #[error("{call}: {problem}; {fix}")]
    OutOfOrder {
        /// The call, e.g. `"WaveSimulator::step"`.
        call: &'static str,
        /// What is wrong.
        problem: String,
        /// What to call instead.
        fix: &'static str,
    },
    /// A generated kernel was launched with the wrong number of arguments (a bug in a
    /// hand-written launch; generated launch functions cannot cause it).
    #[error("kernel `{kernel}` was launched with the wrong number of {what}")]
    Arity {
        /// Kernel name.
        kernel: &'static str,
        /// Which arguments.
        what: &'static str,
    },
}

impl Error {
    /// Shorthand for [`Error::Arity`], used by generated code.
    pub fn arity(kernel: &'static str, what: &'static str) -> Self {
        Error::Arity { kernel, what }
    }

    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(
        name: impl Into<String>,
        value: impl ToString,
        valid: impl Into<String>,
    ) -> Self {
        Error::InvalidParameter {
            name: name.into(),
            value: value.to_string(),
            valid: valid.into(),
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
