//! Command-line arguments of `ppwave` (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
use ppstencil::wave::Layer;
use ppstencil::{Kernels, WaveConfig};
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
    /// Run a simulation and write the final wavefield, the velocity model, an image and
    /// run.json into --out.
    Run(RunArgs),
    /// Print the code generated for the acoustic kernels.
    Gen(GenArgs),
    /// Measure the kernels and the time step.
    Bench(crate::bench::BenchArgs),
}

/// Where `ppwave run` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KernelsArg {
    /// The paper's four kernels: add_source, fd_pzz, fd_pxx, fd_time.
    Split,
    /// add_source then one fused fd_step (less memory traffic, same results).
    Fused,
}

impl From<KernelsArg> for Kernels {
    fn from(k: KernelsArg) -> Kernels {
        match k {
            KernelsArg::Split => Kernels::Split,
            KernelsArg::Fused => Kernels::Fused,
        }
    }
}

/// Arguments of `ppwave run`. Every default is the paper's value. A flag given twice takes
/// the last value (except --layer, which accumulates); negative numbers are accepted by the
/// parser so that the range checks can say what is valid.
#[derive(Args, Debug, Clone)]
#[command(args_override_self = true, allow_negative_numbers = true)]
pub struct RunArgs {
    /// Execution space.
    #[arg(long, value_enum, default_value_t = Backend::Rayon)]
    pub backend: Backend,
    /// Rows (depth samples).
    #[arg(long, default_value_t = WaveConfig::paper().nz)]
    pub nz: usize,
    /// Columns (horizontal samples).
    #[arg(long, default_value_t = WaveConfig::paper().nx)]
    pub nx: usize,
    /// Time steps.
    #[arg(long, default_value_t = WaveConfig::paper().nt)]
    pub nt: usize,
    /// Time step in seconds.
    #[arg(long, default_value_t = WaveConfig::paper().dt)]
    pub dt: f64,
    /// Grid spacing in metres.
    #[arg(long, default_value_t = WaveConfig::paper().dh)]
    pub dh: f64,
    /// Source row.
    #[arg(long, default_value_t = WaveConfig::paper().src_z)]
    pub src_z: usize,
    /// Source column.
    #[arg(long, default_value_t = WaveConfig::paper().src_x)]
    pub src_x: usize,
    /// Peak frequency of the Ricker wavelet in Hz.
    #[arg(long, default_value_t = WaveConfig::paper().fpeak)]
    pub fpeak: f64,
    /// Background velocity in m/s.
    #[arg(long, default_value_t = WaveConfig::paper().vmin)]
    pub vmin: f64,
    /// Rows [Z0, Z1) get velocity V (m/s); repeat for several layers, applied in order.
    /// Any --layer replaces the paper's layers (750:1125:3000 and 1125:1751:4800).
    #[arg(long = "layer", value_name = "Z0:Z1:V", value_parser = parse_layer)]
    pub layers: Vec<Layer>,
    /// Split (the paper's four kernels) or fused time step.
    #[arg(long, value_enum, default_value_t = KernelsArg::Fused)]
    pub kernels: KernelsArg,
    /// Threads of the rayon pool (1 to 4096; default: one per core). Only with --backend rayon.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Output directory (created if missing; existing output files are replaced).
    #[arg(long, default_value = "ppwave-out")]
    pub out: PathBuf,
}

impl RunArgs {
    /// The simulation parameters these arguments describe.
    pub fn config(&self) -> WaveConfig {
        let paper = WaveConfig::paper();
        // `..paper` keeps this compiling (with the paper's values) when WaveConfig gains fields.
        #[allow(clippy::needless_update)]
        WaveConfig {
            nz: self.nz,
            nx: self.nx,
            nt: self.nt,
            dt: self.dt,
            dh: self.dh,
            src_z: self.src_z,
            src_x: self.src_x,
            fpeak: self.fpeak,
            vmin: self.vmin,
            layers: if self.layers.is_empty() {
                paper.layers.clone()
            } else {
                self.layers.clone()
            },
            kernels: self.kernels.into(),
            ..paper
        }
    }
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
    /// Only this stencil (default: every acoustic kernel).
    #[arg(long, value_name = "NAME")]
    pub stencil: Option<String>,
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
        assert_eq!(args.backend, Backend::Rayon);
        assert_eq!(args.out, PathBuf::from("ppwave-out"));
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
        assert_eq!(c.kernels, Kernels::Split);
    }
}
