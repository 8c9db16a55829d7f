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
        "kernel `{kernel}`: field `{field}` is {found} but `{first}` is {shape}; every field \
         of one launch must have the same shape"
    )]
    ShapeMismatch {
        /// Kernel name.
        kernel: &'static str,
        /// The first field (reference shape).
        first: &'static str,
        /// The mismatching field.
        field: &'static str,
        /// The reference shape, outermost axis first.
        shape: crate::launch::Shape,
        /// The shape found.
        found: crate::launch::Shape,
    },
    /// The grid is too small for the stencil's radius.
    #[error(
        "kernel `{kernel}` has radius {radius}: a {shape} grid is too small; each \
         dimension needs at least {min} points"
    )]
    GridTooSmall {
        /// Kernel name.
        kernel: &'static str,
        /// Stencil radius.
        radius: usize,
        /// The grid, outermost axis first.
        shape: crate::launch::Shape,
        /// Smallest allowed size (2 × radius + 1).
        min: usize,
    },
    /// A point-domain kernel was given a point too close to the border or outside the grid.
    #[error(
        "kernel `{kernel}`: point {} must lie at least {radius} cells inside the {shape} grid \
         ({})",
        crate::launch::Shape::tuple(point), shape.ranges(*radius)
    )]
    PointOutOfRange {
        /// Kernel name.
        kernel: &'static str,
        /// The point, outermost axis first.
        point: Vec<usize>,
        /// Stencil radius.
        radius: usize,
        /// The grid, outermost axis first.
        shape: crate::launch::Shape,
    },
    /// A parameter is out of its valid range.
    #[error("invalid {param} = {value}: {valid}")]
    InvalidParameter {
        /// Which parameter (a program maps it to its own name for it, e.g. a flag).
        param: Param,
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

    /// Shorthand for [`Error::InvalidParameter`]. `param` is a [`Param`], or a name in
    /// words for anything else ([`Param::Other`]).
    pub fn invalid(
        param: impl Into<Param>,
        value: impl ToString,
        valid: impl Into<String>,
    ) -> Self {
        Error::InvalidParameter {
            param: param.into(),
            value: value.to_string(),
            valid: valid.into(),
        }
    }
}

/// The parameter an [`Error::InvalidParameter`] is about. Displayed in the library's terms
/// (the names of [`WaveConfig`](crate::WaveConfig)'s fields and of the solver's options), so
/// that a program can map each to its own name for it (a command-line flag, a config key).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Param {
    /// Rows of the grid, `nz`.
    Nz,
    /// Columns of the grid, `nx`.
    Nx,
    /// The grid as a whole, `nz x nx` (too many points).
    GridSize,
    /// Number of time steps, `nt`.
    Nt,
    /// Time step `dt` (s).
    TimeStep,
    /// Grid spacing `dh` (m).
    SpaceStep,
    /// Peak frequency of the source wavelet, `fpeak` (Hz).
    PeakFrequency,
    /// Background velocity `vmin` (m/s).
    Vmin,
    /// Source row, `src_z`.
    SourceZ,
    /// Source column, `src_x`.
    SourceX,
    /// A velocity layer `Z0:Z1:V`.
    Layer,
    /// Space order of the finite differences.
    SpaceOrder,
    /// Width of the absorbing layer in cells, `absorb`.
    Absorb,
    /// Delay of the additive source's wavelet (s).
    SourceDelay,
    /// How the source enters the wavefield.
    SourceMode,
    /// Steps between snapshots.
    SnapshotEvery,
    /// One receiver position.
    Receiver,
    /// The receivers as a whole (a line of them, or their number).
    Receivers,
    /// A velocity value.
    Velocity,
    /// A velocity model given as data (its values or its shape).
    VelocityModel,
    /// Threads of a rayon pool.
    Threads,
    /// Anything else, named in words (e.g. `"block size"`).
    Other(String),
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Param::Nz => "nz",
            Param::Nx => "nx",
            Param::GridSize => "nz x nx",
            Param::Nt => "nt",
            Param::TimeStep => "dt",
            Param::SpaceStep => "dh",
            Param::PeakFrequency => "fpeak",
            Param::Vmin => "vmin",
            Param::SourceZ => "src_z",
            Param::SourceX => "src_x",
            Param::Layer => "layer",
            Param::SpaceOrder => "space order",
            Param::Absorb => "absorb",
            Param::SourceDelay => "source delay",
            Param::SourceMode => "source mode",
            Param::SnapshotEvery => "snapshot interval",
            Param::Receiver => "receiver",
            Param::Receivers => "receivers",
            Param::Velocity => "velocity",
            Param::VelocityModel => "velocity model",
            Param::Threads => "threads",
            Param::Other(name) => name,
        })
    }
}

impl From<&str> for Param {
    /// [`Param::Other`]: a name in words.
    fn from(name: &str) -> Param {
        Param::Other(name.to_string())
    }
}

impl From<String> for Param {
    /// [`Param::Other`]: a name in words.
    fn from(name: String) -> Param {
        Param::Other(name)
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
