//! Command-line arguments of `ppwave` (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
use ppstencil::receivers::ReceiverLine;
use ppstencil::wave::{Boundary, Layer, PmlParams, SourceMode, TimeBlock};
use ppstencil::{Arithmetic, Numerics, StepKernels, Subnormals, WaveConfig};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// ppwave: a 2D acoustic wave simulator on performance-portable stencils.
///
/// The defaults are the paper's problem (1751 x 5001 grid, 4001 steps: about 35 G point
/// updates; pass smaller --nz/--nx/--nt, a source and layers for a quick run).
#[derive(Parser, Debug)]
#[command(name = "ppwave", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a simulation and write the final wavefield, the velocity model, images, the
    /// receivers' seismogram, snapshots and run.json into --out.
    Run(Box<RunArgs>),
    /// Print the code generated for the acoustic kernels.
    Gen(GenArgs),
    /// Measure the kernels and the time step.
    Bench(crate::bench::BenchArgs),
    /// Reverse-time migration of recorded shot gathers: write image.npy and image.png.
    Migrate(Box<crate::migrate::MigrateArgs>),
    /// Full-waveform inversion of recorded shot gathers from a starting model: write the
    /// misfit per iteration and the model after each.
    Invert(Box<crate::invert::InvertArgs>),
}

/// Where `ppwave run` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// One thread, the reference.
    Serial,
    /// All cores, with rayon (see --threads).
    Rayon,
    /// An NVIDIA GPU (needs a build with `--features cuda`).
    Cuda,
    /// An AMD GPU (needs a build with `--features hip`).
    Hip,
}

impl Backend {
    /// The lowercase name, as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Serial => "serial",
            Backend::Rayon => "rayon",
            Backend::Cuda => "cuda",
            Backend::Hip => "hip",
        }
    }
}

/// Which kernels make up a time step (`WaveConfig::kernels`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelsArg {
    /// The paper's four kernels: add_source, fd_pzz, fd_pxx, fd_time.
    Split,
    /// add_source then one fused fd_step_4 (less memory traffic, same results).
    Fused,
}

impl From<KernelsArg> for StepKernels {
    fn from(k: KernelsArg) -> StepKernels {
        match k {
            KernelsArg::Split => StepKernels::Split,
            KernelsArg::Fused => StepKernels::Fused,
        }
    }
}

/// How the source enters the wavefield (`WaveConfig::source_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceModeArg {
    /// The paper's: the source point is set to the (undelayed) Ricker wavelet before each step.
    Set,
    /// A Ricker wavelet delayed by --source-delay is added after each step, as a physical
    /// point source.
    Add,
}

impl From<SourceModeArg> for SourceMode {
    fn from(m: SourceModeArg) -> SourceMode {
        match m {
            SourceModeArg::Set => SourceMode::Set,
            SourceModeArg::Add => SourceMode::Add,
        }
    }
}

/// How host kernels round `a * b + c` (`WaveConfig::numerics`; `ppstencil::Arithmetic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArithmeticArg {
    /// Every operation rounded as written: bit-identical on every CPU and to the GPU
    /// backends.
    Exact,
    /// Fused multiply-adds and the widest vectors the CPU has (AVX-512, AVX2, NEON); results
    /// within a few units in the last place of exact's per operation.
    Fast,
}

impl From<ArithmeticArg> for Arithmetic {
    fn from(a: ArithmeticArg) -> Arithmetic {
        match a {
            ArithmeticArg::Exact => Arithmetic::Exact,
            ArithmeticArg::Fast => Arithmetic::Fast,
        }
    }
}

/// What host kernels do with subnormal numbers (`ppstencil::Subnormals`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubnormalsArg {
    /// Flushed to zero (FTZ/DAZ): a wave's decaying tails cost nothing.
    Flush,
    /// Kept (IEEE 754), for reproducing results exactly; long runs slow down 2-8x on x86.
    Keep,
}

impl From<SubnormalsArg> for Subnormals {
    fn from(a: SubnormalsArg) -> Subnormals {
        match a {
            SubnormalsArg::Flush => Subnormals::Flush,
            SubnormalsArg::Keep => Subnormals::Keep,
        }
    }
}

/// The numerics of the host kernels given by `--numerics` and `--subnormals`, each
/// defaulting to the solver's ([`Numerics::default`]).
pub fn numerics(arithmetic: Option<ArithmeticArg>, subnormals: Option<SubnormalsArg>) -> Numerics {
    let default = Numerics::default();
    Numerics {
        arithmetic: arithmetic.map_or(default.arithmetic, Arithmetic::from),
        subnormals: subnormals.map_or(default.subnormals, Subnormals::from),
    }
}

/// The grid's edge (`WaveConfig::boundary`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundaryArg {
    /// A convolutional perfectly matched layer of --absorb cells (the default with --absorb).
    Pml,
    /// A damping layer of --absorb cells.
    Sponge,
    /// The paper's reflecting border, no layer (the default without --absorb).
    Rigid,
}

impl From<BoundaryArg> for Boundary {
    fn from(b: BoundaryArg) -> Boundary {
        match b {
            BoundaryArg::Pml => Boundary::Pml,
            BoundaryArg::Sponge => Boundary::Sponge,
            BoundaryArg::Rigid => Boundary::Rigid,
        }
    }
}

/// The floating-point type of the simulation (and of the .npy files it writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats (the paper's): float32 .npy files.
    F32,
    /// 64-bit floats: float64 .npy files.
    F64,
}

impl Precision {
    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

/// Arguments of `ppwave run`, and equally the keys of its `--config` TOML file (one key per
/// flag, same names: `space-order = 8`, `layer = ["750:1125:3000"]`). Every option is
/// optional here: a flag overrides the file, the file overrides the default (the paper's
/// value, listed in each option's help). A flag given twice takes the last value (except
/// --layer and --receivers, which accumulate); negative numbers are accepted by the parser so
/// that the range checks can say what is valid.
#[derive(Args, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[command(args_override_self = true, allow_negative_numbers = true)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct RunArgs {
    /// A TOML file of options, one key per flag with the flag's name (e.g. `nz = 300`,
    /// `space-order = 8`, `layer = ["150:300:3000"]`); flags given here override it. Paths in
    /// it are relative to the file's directory. An out/run.json's "config" object holds the
    /// same keys, so a run can be repeated from it.
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Execution space [default: rayon].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<Backend>,
    /// Rows (depth samples) [default: 1751, or the --velocity model's].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nz: Option<usize>,
    /// Columns (horizontal samples) [default: 5001, or the --velocity model's].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nx: Option<usize>,
    /// Planes along y: makes the run 3D, on an nz x ny x nx grid [default: none, a 2D run].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ny: Option<usize>,
    /// Source plane along y of a 3D run (only with --ny) [default: ny / 2].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_y: Option<usize>,
    /// Time steps [default: 4001].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nt: Option<usize>,
    /// Time step in seconds [default: 0.0002].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dt: Option<f64>,
    /// Grid spacing in metres [default: 3].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dh: Option<f64>,
    /// Source row [default: 625, the paper's, scaled to --nz: 625 * nz / 1751].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_z: Option<usize>,
    /// Source column [default: 2500, the paper's, scaled to --nx: 2500 * nx / 5001].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_x: Option<usize>,
    /// Peak frequency of the Ricker wavelet in Hz [default: 10].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fpeak: Option<f64>,
    /// Background velocity in m/s (unused with --velocity) [default: 1500].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vmin: Option<f64>,
    /// Rows [Z0, Z1) get velocity V (m/s); repeat for several layers, applied in order on top
    /// of the background. Any --layer replaces the default layers: the paper's (750:1125:3000
    /// and 1125:1751:4800 of 1751 rows) scaled to --nz, used only without --velocity.
    #[arg(long = "layer", value_name = "Z0:Z1:V", value_parser = parse_layer, allow_hyphen_values = true)]
    #[serde(
        rename = "layer",
        skip_serializing_if = "Option::is_none",
        with = "text_list"
    )]
    pub layers: Option<Vec<Layer>>,
    /// Split (the paper's four kernels, order 4 only) or fused time step [default: fused].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<KernelsArg>,
    /// Space order of the finite differences: even, 2 to 16 [default: 4, the paper's]. The
    /// stability (CFL) limit falls with the order (0.612 at 4, 0.555 at 8, 0.519 at 16).
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space_order: Option<usize>,
    /// Absorbing layer of N cells on every side, inside the grid [default: 0: the paper's
    /// rigid border]. A PML (the default kind) of 20 cells reflects about 50 dB less than
    /// the rigid border; a sponge needs 2 to 3 peak wavelengths for about -30 dB.
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absorb: Option<usize>,
    /// The kind of border [default: pml with --absorb N, else rigid (the paper's)]. pml and
    /// sponge need --absorb N; rigid has no layer.
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boundary: Option<BoundaryArg>,
    /// The PML's target reflection coefficient R, between 0 and 1 [default: 1e-4]: the
    /// damping at the outer edge is d0 = -(N + 1) v ln(R) / (2 L).
    #[arg(long, value_name = "R")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pml_r: Option<f64>,
    /// The PML's damping profile degree N, d = d0 (depth / L)^N, 1 to 8 [default: 2].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pml_degree: Option<f64>,
    /// The CPML frequency term alpha at the layer's inner edge, in 1/s, 0 or more, falling
    /// linearly to 0 at the outer edge [default: pi fpeak].
    #[arg(long, value_name = "A")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pml_alpha: Option<f64>,
    /// How the source enters [default: set, the paper's].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_mode: Option<SourceModeArg>,
    /// Delay of the additive source's Ricker peak, in seconds [default: 1.5 / fpeak]. Only
    /// with --source-mode add.
    #[arg(long, value_name = "S")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_delay: Option<f64>,
    /// A line of receivers: row Z, columns X0, X0+STEP, ... up to X1; repeatable. The traces
    /// are written as seismogram.npy (nt x nrec) and seismogram.png. In 3D (--ny):
    /// Z:Y:X0:X1:STEP, a line along x at row Z of plane Y.
    #[arg(long = "receivers", value_name = "Z:X0:X1:STEP", value_parser = parse_receivers, allow_hyphen_values = true)]
    #[serde(skip_serializing_if = "Option::is_none", with = "text_list")]
    pub receivers: Option<Vec<ReceiverLine>>,
    /// A text file of receiver positions, one `z x` (row, column) pair per line; `#` starts a
    /// comment. Recorded after the --receivers lines.
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_file: Option<PathBuf>,
    /// A 2D float32/float64 .npy velocity model in m/s; its shape sets --nz and --nx. The
    /// paper's default layers do not apply; --layer still does, on top.
    #[arg(long, value_name = "FILE.npy")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub velocity: Option<PathBuf>,
    /// Write the wavefield every K steps as snapshots/NNNNN.npy and .png (NNNNN: the step).
    #[arg(long, value_name = "K")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_every: Option<usize>,
    /// Temporal blocking: several time steps per pass over the grid, bit-identical results.
    /// `auto` blocks where the fields exceed the last-level cache (host backends; the cache
    /// size from sysfs, or PPSTENCIL_LLC=32M) and, in long runs, times its band, a half and
    /// a quarter of it in the first blocks and keeps the fastest; `off`
    /// never, `K` blocks of K steps, `K:B` also bands of B rows (z-planes in 3D), `K:BxW`
    /// also tiles of W points along y in 3D (x in 2D) [default: auto]. run.json records what
    /// ran.
    #[arg(long, value_name = "off|auto|K|K:B|K:BxW", value_parser = parse_time_block)]
    #[serde(skip_serializing_if = "Option::is_none", with = "text_one")]
    pub time_block: Option<TimeBlock>,
    /// Gain of the shot-gather picture seismogram.png (seismogram.npy is never gained)
    /// [default: none].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gather_gain: Option<crate::figures::gather::GatherGain>,
    /// Floating-point type of the simulation and of the .npy files [default: f32].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// Arithmetic of the host backends [default: exact]. The GPU backends run exact.
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numerics: Option<ArithmeticArg>,
    /// Subnormal numbers on the host backends [default: flush]. The GPU backends keep them.
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subnormals: Option<SubnormalsArg>,
    /// Threads of the rayon pool (1 to 4096) [default: one per core]. Only with --backend
    /// rayon.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Output directory [default: ppwave-out]. Written whole when the run completes (the run
    /// writes into DIR.partial-PID/ and renames it); must be new or empty unless
    /// --overwrite. The default ppwave-out is replaced when it holds a previous ppwave run,
    /// so the plain `ppwave run` can be repeated.
    #[arg(long, value_name = "DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out: Option<PathBuf>,
    /// Replace --out when it holds a previous ppwave run (only the files its run.json lists
    /// and its snapshots), once the new run is complete.
    #[arg(long)]
    #[serde(skip)]
    pub overwrite: bool,
    /// Parts of the grid per axis for a distributed run, `AxB` (rows x columns), e.g. `2x2`,
    /// or `AxBxC` in 3D (z x y x x), e.g. `2x1x2`; their product must be the number of MPI
    /// ranks (`mpiexec -n`) [default: the split with the fewest halo points]. Needs ppwave
    /// built with `--features mpi`.
    #[arg(long, value_name = "AxB[xC]")]
    #[serde(skip)]
    pub decomp: Option<String>,
    /// Many shots with the same model: a file of source positions, one `Z X` per line; writes
    /// OUT/shot-NNNN/seismogram.npy (+ png) per shot and OUT/summary.json.
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub shots: Option<PathBuf>,
    /// Under mpiexec with --shots: ranks per shot (they split its grid) [default: 1]; the
    /// shots are spread over the P / K groups.
    #[arg(long, value_name = "K")]
    #[serde(skip)]
    pub ranks_per_shot: Option<usize>,
}

/// The keys of a `--config` file, with the type each expects (for error messages).
pub const CONFIG_KEYS: &[(&str, &str)] = &[
    ("backend", "one of \"serial\", \"rayon\", \"cuda\", \"hip\""),
    ("nz", "a whole number (rows)"),
    ("nx", "a whole number (columns)"),
    ("ny", "a whole number (planes along y; makes the run 3D)"),
    ("src-y", "a whole number (plane along y)"),
    ("nt", "a whole number (time steps)"),
    ("dt", "a number (seconds)"),
    ("dh", "a number (metres)"),
    ("src-z", "a whole number (row)"),
    ("src-x", "a whole number (column)"),
    ("fpeak", "a number (Hz)"),
    ("vmin", "a number (m/s)"),
    (
        "layer",
        "an array of \"Z0:Z1:V\" strings, e.g. [\"750:1125:3000\"]",
    ),
    ("kernels", "one of \"split\", \"fused\""),
    ("space-order", "a whole number (even, 2 to 16)"),
    ("absorb", "a whole number (cells)"),
    ("boundary", "one of \"pml\", \"sponge\", \"rigid\""),
    ("pml-r", "a number between 0 and 1"),
    ("pml-degree", "a number (1 to 8)"),
    ("pml-alpha", "a number (1/s)"),
    ("source-mode", "one of \"set\", \"add\""),
    ("source-delay", "a number (seconds)"),
    (
        "receivers",
        "an array of \"Z:X0:X1:STEP\" strings, e.g. [\"10:0:500:5\"]",
    ),
    ("receiver-file", "a string (a path)"),
    ("velocity", "a string (a path to a .npy file)"),
    ("snapshot-every", "a whole number (steps)"),
    (
        "time-block",
        "\"off\", \"auto\", a whole number of steps K, \"K:B\", or \"K:BxW\"",
    ),
    ("gather-gain", "one of \"none\", \"agc\", \"t2\""),
    ("precision", "one of \"f32\", \"f64\""),
    ("numerics", "one of \"exact\", \"fast\""),
    ("subnormals", "one of \"flush\", \"keep\""),
    ("threads", "a whole number (1 to 4096)"),
    ("out", "a string (a directory path)"),
];

impl RunArgs {
    /// These options with `file`'s filling every option not given here (flags override the
    /// config file; a list flag replaces the file's whole list).
    pub fn over(&self, file: RunArgs) -> RunArgs {
        macro_rules! pick {
            ($($f:ident),*) => { RunArgs { config: self.config.clone(), overwrite: self.overwrite, decomp: self.decomp.clone(), shots: self.shots.clone(), ranks_per_shot: self.ranks_per_shot, $($f: self.$f.clone().or(file.$f),)* } };
        }
        pick!(
            backend,
            nz,
            nx,
            ny,
            src_y,
            nt,
            dt,
            dh,
            src_z,
            src_x,
            fpeak,
            vmin,
            layers,
            kernels,
            space_order,
            absorb,
            boundary,
            pml_r,
            pml_degree,
            pml_alpha,
            source_mode,
            source_delay,
            receivers,
            receiver_file,
            velocity,
            snapshot_every,
            time_block,
            gather_gain,
            precision,
            numerics,
            subnormals,
            threads,
            out
        )
    }

    /// The simulation parameters these options describe, without the data read from files
    /// (`--velocity`, `--receiver-file`; see `run::plan`): every unset option takes the
    /// paper's value, and the paper's layers apply unless `--layer` or `--velocity` is given.
    pub fn config(&self) -> WaveConfig {
        let paper = WaveConfig::paper();
        let nz = self.nz.unwrap_or(paper.nz);
        let nx = self.nx.unwrap_or(paper.nx);
        let layers = match (&self.layers, &self.velocity) {
            (Some(l), _) => l.clone(),
            (None, Some(_)) => Vec::new(),
            (None, None) => default_layers(nz),
        };
        // The paper's source position, scaled like the layers, inside the widest border.
        let r = self.space_order.unwrap_or(paper.space_order) / 2;
        let scaled = |p: usize, n: usize, paper_n: usize| {
            (p * n / paper_n).clamp(r, n.saturating_sub(r + 1).max(r))
        };
        let ny = self.ny.unwrap_or(1);
        let lines = self.receivers.iter().flatten();
        let (receivers, receivers_3d) = if ny == 1 {
            (
                lines.flat_map(ReceiverLine::positions).collect(),
                Vec::new(),
            )
        } else {
            (
                Vec::new(),
                lines.flat_map(ReceiverLine::positions_3d).collect(),
            )
        };
        WaveConfig {
            nz,
            nx,
            ny,
            src_y: self
                .src_y
                .unwrap_or(if ny == 1 { 0 } else { (ny / 2).max(r) }),
            receivers_3d,
            nt: self.nt.unwrap_or(paper.nt),
            dt: self.dt.unwrap_or(paper.dt),
            dh: self.dh.unwrap_or(paper.dh),
            src_z: self
                .src_z
                .unwrap_or_else(|| scaled(paper.src_z, nz, paper.nz)),
            src_x: self
                .src_x
                .unwrap_or_else(|| scaled(paper.src_x, nx, paper.nx)),
            fpeak: self.fpeak.unwrap_or(paper.fpeak),
            vmin: self.vmin.unwrap_or(paper.vmin),
            layers,
            kernels: self.kernels.map_or(paper.kernels, StepKernels::from),
            space_order: self.space_order.unwrap_or(paper.space_order),
            absorb: self.absorb.unwrap_or(paper.absorb),
            boundary: self.boundary.map_or(paper.boundary, Boundary::from),
            pml: PmlParams {
                reflection: self.pml_r.unwrap_or(paper.pml.reflection),
                degree: self.pml_degree.unwrap_or(paper.pml.degree),
                alpha: self.pml_alpha.or(paper.pml.alpha),
            },
            source_mode: self.source_mode.map_or(paper.source_mode, SourceMode::from),
            source_delay: self.source_delay,
            receivers,
            snapshot_every: self.snapshot_every,
            time_block: self.time_block.unwrap_or(paper.time_block),
            numerics: numerics(self.numerics, self.subnormals),
            ..paper
        }
    }

    /// The backend (default rayon).
    pub fn backend(&self) -> Backend {
        self.backend.unwrap_or(Backend::Rayon)
    }

    /// The precision (default f32).
    pub fn precision(&self) -> Precision {
        self.precision.unwrap_or(Precision::F32)
    }

    /// Whether a previous ppwave run in the output directory may be replaced: with
    /// `--overwrite`, or when no `--out` was given (the default `ppwave-out` is ppwave's own
    /// directory; a user-named directory is never replaced unasked).
    pub fn replace_previous_run(&self) -> bool {
        self.overwrite || self.out.is_none()
    }

    /// The output directory (default `ppwave-out`).
    pub fn out(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from("ppwave-out"))
    }
}

/// The default model's layers for a grid of `nz` rows: the paper's layers (rows
/// [750, 1125) at 3000 m/s and [1125, 1751) at 4800 m/s of 1751) scaled to `nz` rows,
/// `z · nz / 1751` rounded down, so that they fit any grid and are the paper's at nz = 1751.
pub fn default_layers(nz: usize) -> Vec<Layer> {
    let paper = WaveConfig::paper();
    paper
        .layers
        .iter()
        .map(|l| Layer {
            z0: l.z0 * nz / paper.nz,
            z1: l.z1 * nz / paper.nz,
            velocity: l.velocity,
        })
        .filter(|l| l.z0 < l.z1)
        .collect()
}

/// A value written as text on the command line and in config files (`Z0:Z1:V`,
/// `Z:X0:X1:STEP`).
pub trait TextArg: Sized {
    /// Parses the text; the error says the expected format.
    fn parse_text(s: &str) -> Result<Self, String>;
    /// The text that parses back to this value.
    fn to_text(&self) -> String;
}

impl TextArg for Layer {
    fn parse_text(s: &str) -> Result<Self, String> {
        parse_layer(s)
    }
    fn to_text(&self) -> String {
        format!("{}:{}:{}", self.z0, self.z1, self.velocity)
    }
}

impl TextArg for ReceiverLine {
    fn parse_text(s: &str) -> Result<Self, String> {
        parse_receivers(s)
    }
    fn to_text(&self) -> String {
        match self.y {
            Some(y) => format!("{}:{y}:{}:{}:{}", self.z, self.x0, self.x1, self.step),
            None => format!("{}:{}:{}:{}", self.z, self.x0, self.x1, self.step),
        }
    }
}

impl TextArg for TimeBlock {
    fn parse_text(s: &str) -> Result<Self, String> {
        parse_time_block(s)
    }
    fn to_text(&self) -> String {
        self.name()
    }
}

/// Parses `--time-block off|auto|K|K:B|K:BxW`.
pub fn parse_time_block(s: &str) -> Result<TimeBlock, String> {
    s.parse::<TimeBlock>().map_err(|e| match e {
        ppstencil::Error::InvalidParameter { valid, .. } => valid.to_string(),
        other => other.to_string(),
    })
}

/// Serde for `Option<T: TextArg>` as one string (a whole number is read as its digits).
mod text_one {
    use super::TextArg;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer, T: TextArg>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_str(&v.to_text()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: TextArg>(d: D) -> Result<Option<T>, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = String;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a whole number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
                Ok(v.to_string())
            }
        }
        let text = d.deserialize_any(Text)?;
        T::parse_text(&text)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

/// Serde for `Option<Vec<T: TextArg>>` as an array of strings.
mod text_list {
    use super::TextArg;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer, T: TextArg>(
        v: &Option<Vec<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let texts: Vec<String> = v.iter().flatten().map(TextArg::to_text).collect();
        s.collect_seq(texts)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: TextArg>(
        d: D,
    ) -> Result<Option<Vec<T>>, D::Error> {
        let texts = Vec::<String>::deserialize(d)?;
        texts
            .iter()
            .map(|t| T::parse_text(t).map_err(serde::de::Error::custom))
            .collect::<Result<Vec<T>, _>>()
            .map(Some)
    }
}

/// Parses `Z:X0:X1:STEP` (a line of receivers); the grid check happens in `run::plan`.
pub fn parse_receivers(s: &str) -> Result<ReceiverLine, String> {
    s.parse::<ReceiverLine>().map_err(|e| match e {
        ppstencil::Error::InvalidParameter { valid, .. } => valid,
        other => other.to_string(),
    })
}

/// Parses `Z0:Z1:V` (a layer: rows `[Z0, Z1)` get velocity `V`). Range checks against the
/// grid happen later, in `WaveConfig::validate`.
pub fn parse_layer(s: &str) -> Result<Layer, String> {
    let expected = "expected Z0:Z1:V (rows [Z0, Z1) get velocity V in m/s), e.g. 750:1125:3000";
    let parts: Vec<&str> = s.split(':').collect();
    let [z0, z1, v] = parts.as_slice() else {
        return Err(format!(
            "{expected}; `{s}` has {} part(s), not 3",
            parts.len()
        ));
    };
    let row = |t: &str, what: &str| {
        t.trim().parse::<usize>().map_err(|_| {
            format!("{expected}; {what} = `{t}` is not a row number (a whole number >= 0)")
        })
    };
    let z0 = row(z0, "Z0")?;
    let z1 = row(z1, "Z1")?;
    let velocity = v
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("{expected}; V = `{v}` is not a number"))?;
    Ok(Layer { z0, z1, velocity })
}

/// Which generated code `ppwave gen` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GenBackend {
    /// The serial Rust row kernel and driver.
    Serial,
    /// The rayon Rust driver.
    Rayon,
    /// CUDA-C (when this build embeds it).
    Cuda,
    /// HIP-C (when this build embeds it).
    Hip,
    /// The stencil printed back as DSL.
    Dsl,
}

impl GenBackend {
    /// The backend's name in `StencilInfo::sources`.
    pub fn name(self) -> &'static str {
        match self {
            GenBackend::Serial => "serial",
            GenBackend::Rayon => "rayon",
            GenBackend::Cuda => "cuda",
            GenBackend::Hip => "hip",
            GenBackend::Dsl => "dsl",
        }
    }
}

/// Arguments of `ppwave gen`.
#[derive(Args, Debug, Clone)]
pub struct GenArgs {
    /// Which code to print.
    #[arg(long, value_enum, default_value_t = GenBackend::Serial)]
    pub backend: GenBackend,
    /// Only this stencil (default: every acoustic kernel, or every stencil of --file).
    #[arg(long, value_name = "NAME")]
    pub stencil: Option<String>,
    /// Generate from the `stencil!` invocations of this Rust file (your own stencils) instead
    /// of the built-in acoustic kernels.
    #[arg(long, value_name = "FILE.rs")]
    pub file: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_parse_and_bad_ones_say_the_format() {
        let l = parse_layer("10:20:3000.5").expect("valid");
        assert_eq!((l.z0, l.z1, l.velocity), (10, 20, 3000.5));
        for (bad, needle) in [
            ("10:20", "has 2 part(s)"),
            ("10:20:30:40", "has 4 part(s)"),
            ("a:20:3000", "Z0 = `a`"),
            ("10:-1:3000", "Z1 = `-1`"),
            ("10:20:fast", "V = `fast`"),
        ] {
            let e = parse_layer(bad).expect_err(bad);
            assert!(e.contains("expected Z0:Z1:V") && e.contains(needle), "{e}");
        }
    }

    #[test]
    fn no_flags_is_the_paper_problem() {
        let cli = Cli::try_parse_from(["ppwave", "run"]).expect("parses");
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(args.config(), WaveConfig::paper());
        assert_eq!(args.backend(), Backend::Rayon);
        assert_eq!(args.precision(), Precision::F32);
        assert_eq!(args.out(), PathBuf::from("ppwave-out"));
    }

    #[test]
    fn layers_replace_the_paper_layers() {
        let cli = Cli::try_parse_from([
            "ppwave",
            "run",
            "--layer",
            "0:5:2000",
            "--layer",
            "5:9:2500",
            "--kernels",
            "split",
        ])
        .expect("parses");
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        let c = args.config();
        assert_eq!(c.layers.len(), 2);
        assert_eq!(
            (c.layers[1].z0, c.layers[1].z1, c.layers[1].velocity),
            (5, 9, 2500.0)
        );
        assert_eq!(c.kernels, StepKernels::Split);
    }
}
