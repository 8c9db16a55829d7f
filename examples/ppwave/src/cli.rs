//! Command-line arguments of `ppwave` (clap derive): the subcommands ([`Command`]: one
//! variant each, whose arguments live with it), the value enums shared by them, `ppwave
//! run`'s arguments and config keys (`run_args`) and the options written as text
//! (`text`). A new subcommand is a variant here, an arm in [`crate::execute`] and a module.

use clap::{Args, Parser, Subcommand, ValueEnum};
use ppstencil::solver::{Boundary, SourceMode};
use ppstencil::{Arithmetic, Numerics, StepKernels, Subnormals};
use serde::{Deserialize, Serialize};

mod run_args;
mod text;

pub use run_args::{default_layers, RunArgs, CONFIG_KEYS};
pub use text::{parse_layer, parse_receivers, parse_time_block, TextArg};

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
    use ppstencil::{StepKernels, WaveConfig};
    use std::path::PathBuf;

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
