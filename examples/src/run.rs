//! `ppwave run`: validate everything, run the simulation on the chosen backend, write the
//! outputs.

use crate::cli::{Backend, RunArgs};
use crate::output::{write_png, OutputDir};
use crate::BadInput;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ppstencil::wave::{cfl_limit, RunStats};
use ppstencil::{io, ExecutionSpace, HostField, Rayon, Serial, WaveConfig, WaveSimulator};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// What a successful run produced.
#[derive(Debug)]
pub struct RunSummary {
    /// The files written, in order: wavefield.npy, velocity.npy, wavefield.png, run.json.
    pub files: Vec<PathBuf>,
    /// Timing of the time loop.
    pub stats: RunStats,
}

/// The flag a library parameter name corresponds to.
fn flag_for(name: &str) -> Option<&'static str> {
    Some(match name {
        "nz" => "--nz",
        "nx" => "--nx",
        "nz x nx" => "--nz x --nx",
        "nt" => "--nt",
        "dt" => "--dt",
        "dh" => "--dh",
        "fpeak" => "--fpeak",
        "vmin" => "--vmin",
        "src-z" => "--src-z",
        "src-x" => "--src-x",
        "layer" => "--layer",
        "threads" => "--threads",
        _ => return None,
    })
}

/// Turns a library parameter error into a [`BadInput`] that names the command-line flag.
pub fn flag_error(e: ppstencil::Error) -> anyhow::Error {
    match e {
        ppstencil::Error::InvalidParameter { name, value, valid } => {
            let flag = flag_for(&name).unwrap_or(&name);
            let valid = valid
                .replace("use dt <=", "use --dt <=")
                .replace("a larger dh", "a larger --dh");
            BadInput(format!("invalid {flag} = {value}: {valid}")).into()
        }
        other => other.into(),
    }
}

/// Checks the arguments, runs the simulation on `--backend` and writes the outputs into
/// `--out`. Nothing is written unless the run succeeds.
pub fn run(args: &RunArgs) -> anyhow::Result<RunSummary> {
    let config = args.config();
    config.validate().map_err(|e| {
        let mut e = flag_error(e);
        if args.layers.is_empty() && e.to_string().starts_with("invalid --layer") {
            e = e.context(BadInput(format!(
                "the paper's default layers need nz >= 1751; for nz = {} give your own \
                 --layer Z0:Z1:V (e.g. --layer {}:{}:3000)",
                args.nz,
                args.nz / 2,
                args.nz
            )));
        }
        e
    })?;
    // Fields of the time loop (velocity, p, pold, pnew and kv2 or pxx + pzz) plus the host
    // copies of the results: refuse grids whose size does not even fit in an address.
    let fields = 8usize;
    if config
        .nz
        .checked_mul(config.nx)
        .and_then(|n| n.checked_mul(fields * std::mem::size_of::<f32>()))
        .is_none()
    {
        return Err(BadInput(format!(
            "--nz x --nx = {} x {} is too large: its fields would need more bytes than this \
             machine can address; use a smaller grid",
            config.nz, config.nx
        ))
        .into());
    }
    if args.threads.is_some() && args.backend != Backend::Rayon {
        return Err(BadInput(format!(
            "--threads applies only to --backend rayon, not --backend {}; drop --threads",
            args.backend.name()
        ))
        .into());
    }
    match args.backend {
        Backend::Serial => simulate(Serial, args, &config, Some(1)),
        Backend::Rayon => {
            let space = match args.threads {
                Some(n) => Rayon::with_threads(n).map_err(flag_error)?,
                None => Rayon::new(),
            };
            let threads = space.threads();
            simulate(space, args, &config, Some(threads))
        }
        Backend::Cuda => simulate(ppstencil::Cuda::new()?, args, &config, None),
        Backend::Hip => simulate(ppstencil::Hip::new()?, args, &config, None),
    }
}

fn progress_bar(nt: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {pos}/{len} steps (eta {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(nt as u64).with_style(style)
}

/// Runs the simulation described by `config` on `space` and writes the outputs: the one
/// generic function behind every `--backend`.
pub fn simulate<E: ExecutionSpace>(
    space: E,
    args: &RunArgs,
    config: &WaveConfig,
    threads: Option<usize>,
) -> anyhow::Result<RunSummary> {
    let mut out = OutputDir::prepare(&args.out)?;
    let mut sim = WaveSimulator::<E, f32>::with_config(space, config.clone());
    let bar = progress_bar(config.nt);
    let result = sim
        .run_with_progress(|done, _| bar.set_position(done as u64))
        .and_then(|stats| Ok((stats, sim.wavefield_host()?, sim.velocity_host()?)));
    bar.finish_and_clear();
    let (stats, p, v) = match result {
        Ok(r) => r,
        Err(e) => {
            out.abandon();
            return Err(anyhow::Error::new(e).context("the simulation failed"));
        }
    };
    out.write("wavefield.npy", |f| Ok(io::write_npy(f, &p)?))?;
    out.write("velocity.npy", |f| Ok(io::write_npy(f, &v)?))?;
    let mut clip = 0.0;
    out.write("wavefield.png", |f| {
        clip = write_png(f, &p)?;
        Ok(())
    })?;
    let json = run_json(args, config, threads, &stats, &p, clip);
    out.write("run.json", |f| {
        let text = serde_json::to_string_pretty(&json)? + "\n";
        std::fs::write(f, text).with_context(|| format!("{}: cannot write", f.display()))
    })?;
    // A closed stdout (e.g. `| head -0`) must not turn a finished run into a failure.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "ppwave: {} x {} grid, {} steps on {} ({} kernels{}) in {:.3} s = {:.1} Mpoints/s; \
         CFL {:.3} (limit {:.3}); max |p| = {:.3e}",
        config.nz,
        config.nx,
        stats.steps,
        args.backend.name(),
        config.kernels.name(),
        threads
            .map(|t| format!(", {t} thread{}", if t == 1 { "" } else { "s" }))
            .unwrap_or_default(),
        stats.wall.as_secs_f64(),
        stats.mpoints_per_s,
        config.cfl(),
        cfl_limit(),
        p.max_abs(),
    );
    let _ = writeln!(
        stdout,
        "wrote {}/{{wavefield.npy, velocity.npy, wavefield.png, run.json}}",
        out.path().display()
    );
    Ok(RunSummary {
        files: out.written().to_vec(),
        stats,
    })
}

/// The contents of `run.json`: every parameter, the stability numbers, how and how fast it
/// ran.
fn run_json(
    args: &RunArgs,
    c: &WaveConfig,
    threads: Option<usize>,
    stats: &RunStats,
    p: &HostField<f32>,
    clip: f32,
) -> serde_json::Value {
    let layers: Vec<_> = c
        .layers
        .iter()
        .map(|l| serde_json::json!({"z0": l.z0, "z1": l.z1, "velocity": l.velocity}))
        .collect();
    serde_json::json!({
        "program": "ppwave",
        "ppstencil_version": ppstencil::VERSION,
        "backend": args.backend.name(),
        "kernels": c.kernels.name(),
        "threads": threads,
        "precision": "f32",
        "nz": c.nz,
        "nx": c.nx,
        "nt": c.nt,
        "dt": c.dt,
        "dh": c.dh,
        "src_z": c.src_z,
        "src_x": c.src_x,
        "fpeak": c.fpeak,
        "vmin": c.vmin,
        "vmax": c.vmax(),
        "layers": layers,
        "cfl": c.cfl(),
        "cfl_limit": cfl_limit(),
        "dt_max_stable": cfl_limit() * c.dh / c.vmax(),
        "steps": stats.steps,
        "wall_time_s": stats.wall.as_secs_f64(),
        "mpoints_per_s": stats.mpoints_per_s,
        "max_abs_p": p.max_abs(),
        "image_clip": clip,
        "files": ["wavefield.npy", "velocity.npy", "wavefield.png", "run.json"],
    })
}
