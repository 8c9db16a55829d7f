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
        shape: crate::geometry::Shape,
        /// The shape found.
        found: crate::geometry::Shape,
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
        shape: crate::geometry::Shape,
        /// Smallest allowed size (2 × radius + 1).
        min: usize,
    },
    /// A point-domain kernel was given a point too close to the border or outside the grid.
    #[error(
        "kernel `{kernel}`: point {} must lie at least {radius} cells inside the {shape} grid \
         ({})",
        crate::geometry::Shape::tuple(point), shape.ranges(*radius)
    )]
    PointOutOfRange {
        /// Kernel name.
        kernel: &'static str,
        /// The point, outermost axis first.
        point: Vec<usize>,
        /// Stencil radius.
        radius: usize,
        /// The grid, outermost axis first.
        shape: crate::geometry::Shape,
    },
    /// A parameter is out of its valid range.
    #[error("invalid {param} = {value}: {valid}")]
    InvalidParameter {
        /// Which parameter (a program maps it to its own name for it, e.g. a flag).
        param: Param,
        /// The value given.
        value: String,
        /// The valid range and the fix, naming parameters in the library's terms.
        valid: String,
        /// Where `valid` names a parameter, so that a program can write its own name for
        /// it ([`Error::valid_named`]).
        mentions: Vec<Mention>,
    },
    /// The wavefield became NaN or infinite: the run stopped instead of writing a wrong
    /// result.
    #[error("the wavefield is not finite ({found}) after time step {step}: {cause}")]
    NonFinite {
        /// The step (1-based: after `step` steps) where it was found.
        step: usize,
        /// What was found where, e.g. `"NaN at row 3, column 4"`.
        found: String,
        /// The likely cause and the fix.
        cause: String,
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
    /// A long call was stopped by its caller: a monitor the caller installed (such as
    /// [`WaveOperator::set_monitor`](crate::solver::WaveOperator::set_monitor)'s) returned
    /// this error after `steps` time steps, and the call returned it without a result.
    #[error("stopped by the caller after {steps} time steps: {reason}")]
    Stopped {
        /// The time steps the call had run when it stopped.
        steps: usize,
        /// Why the caller stopped it, e.g. `"interrupted (Ctrl-C)"`.
        reason: String,
    },
    /// Another MPI rank of a computation shared over ranks failed (it reports its own
    /// error); this rank stopped with it instead of waiting for its results.
    #[error("rank {rank} failed (its error is reported there); this rank stopped with it")]
    OtherRank {
        /// The lowest rank that failed.
        rank: usize,
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
    pub fn invalid(param: impl Into<Param>, value: impl ToString, valid: impl Into<Valid>) -> Self {
        let valid = valid.into();
        Error::InvalidParameter {
            param: param.into(),
            value: value.to_string(),
            valid: valid.text,
            mentions: valid.mentions,
        }
    }

    /// For [`Error::InvalidParameter`]: the valid range and fix with every parameter it
    /// names written as `name(param, as_value)` says (`None` keeps the library's name).
    /// `as_value` is true where the parameter stands for its value in a range (`2 <= src_z
    /// < 38`), false where it is named as a setting to change (`use dt <= 1e-3`). `None` for
    /// other errors.
    pub fn valid_named(&self, name: impl Fn(&Param, bool) -> Option<String>) -> Option<String> {
        let Error::InvalidParameter {
            valid, mentions, ..
        } = self
        else {
            return None;
        };
        let mut out = String::with_capacity(valid.len());
        let mut at = 0;
        for m in mentions {
            let Some(text) = valid.get(m.at.clone()) else {
                continue;
            };
            out.push_str(&valid[at..m.at.start]);
            out.push_str(&name(&m.param, m.as_value).unwrap_or_else(|| text.to_string()));
            at = m.at.end;
        }
        out.push_str(&valid[at..]);
        Some(out)
    }
}

/// Where the text of an [`Error::InvalidParameter`] names a parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The byte range of the name in the text.
    pub at: std::ops::Range<usize>,
    /// The parameter named.
    pub param: Param,
    /// Named for its value in a range (`2 <= src_z < 38`) rather than as a setting to
    /// change (`use dt <= 1e-3`).
    pub as_value: bool,
}

/// The valid range and fix of an invalid parameter, built piece by piece so that the
/// parameters it names are known ([`Mention`]); a plain string converts into one that names
/// none.
///
/// ```
/// use ppstencil::{Error, Param, Valid};
/// let e = Error::invalid(
///     Param::TimeStep,
///     0.01,
///     Valid::new().text("use ").setting(Param::TimeStep).text(" <= 1e-3"),
/// );
/// assert_eq!(e.to_string(), "invalid dt = 0.01: use dt <= 1e-3");
/// let flags = e.valid_named(|p, _| (*p == Param::TimeStep).then(|| "--dt".to_string()));
/// assert_eq!(flags.as_deref(), Some("use --dt <= 1e-3"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Valid {
    text: String,
    mentions: Vec<Mention>,
}

impl Valid {
    /// An empty text.
    pub fn new() -> Self {
        Valid::default()
    }

    /// Appends plain text.
    pub fn text(mut self, s: impl AsRef<str>) -> Self {
        self.text.push_str(s.as_ref());
        self
    }

    /// Appends the name of `param` as a setting to change (`use dt <= ...`).
    pub fn setting(self, param: Param) -> Self {
        self.mention(param, false)
    }

    /// Appends the name of `param` standing for its value (`2 <= src_z < 38`).
    pub fn value(self, param: Param) -> Self {
        self.mention(param, true)
    }

    fn mention(mut self, param: Param, as_value: bool) -> Self {
        let start = self.text.len();
        self.text.push_str(&param.to_string());
        self.mentions.push(Mention {
            at: start..self.text.len(),
            param,
            as_value,
        });
        self
    }
}

impl From<String> for Valid {
    fn from(text: String) -> Valid {
        Valid {
            text,
            mentions: Vec::new(),
        }
    }
}

impl From<&str> for Valid {
    fn from(text: &str) -> Valid {
        Valid::from(text.to_string())
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
    /// Planes along y of a 3D grid, `ny` (1: a 2D run).
    Ny,
    /// Source plane along y of a 3D run, `src_y`.
    SourceY,
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
    /// The kind of border: rigid, sponge or PML.
    Boundary,
    /// The PML's target reflection coefficient `R`.
    PmlReflection,
    /// The PML's profile degree `N`.
    PmlDegree,
    /// The PML's frequency term `α` (1/s).
    PmlAlpha,
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
    /// Time steps per block of the temporal blocking (`off`, `auto`, a depth).
    TimeBlock,
    /// Anything else, named in words (e.g. `"block size"`).
    Other(String),
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Param::Nz => "nz",
            Param::Nx => "nx",
            Param::Ny => "ny",
            Param::SourceY => "src_y",
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
            Param::Boundary => "boundary",
            Param::PmlReflection => "PML reflection coefficient",
            Param::PmlDegree => "PML profile degree",
            Param::PmlAlpha => "PML alpha",
            Param::SourceDelay => "source delay",
            Param::SourceMode => "source mode",
            Param::SnapshotEvery => "snapshot interval",
            Param::Receiver => "receiver",
            Param::Receivers => "receivers",
            Param::Velocity => "velocity",
            Param::VelocityModel => "velocity model",
            Param::Threads => "threads",
            Param::TimeBlock => "time block",
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

/// `x` as a message writes it: the shortest decimal that reads back as `x` (`0.0002`,
/// `4800`) for `1e-5 <= |x| < 1e16` and 0, scientific notation (`1e-300`, `2.5e300`)
/// beyond, so that no value prints as hundreds of digits.
///
/// ```
/// use ppstencil::fmt_num;
/// assert_eq!((fmt_num(0.0002), fmt_num(4800.0)), ("0.0002".into(), "4800".into()));
/// assert_eq!((fmt_num(1e-300), fmt_num(2.5e300)), ("1e-300".into(), "2.5e300".into()));
/// ```
pub fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || !a.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `x` with `digits` decimals (`{:.digits$}`) for `1e-3 <= |x| < 1e6` and 0, with `digits`
/// decimals of scientific notation (`{:.digits$e}`) beyond.
///
/// ```
/// use ppstencil::fmt_num_to;
/// assert_eq!((fmt_num_to(0.3, 4), fmt_num_to(1.6e303, 4)), ("0.3000".into(), "1.6000e303".into()));
/// ```
pub fn fmt_num_to(x: f64, digits: usize) -> String {
    let a = x.abs();
    if a == 0.0 || !a.is_finite() || (1e-3..1e6).contains(&a) {
        format!("{x:.digits$}")
    } else {
        format!("{x:.digits$e}")
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
