//! `ppwave run`: merge the flags with the `--config` file, read the input files, validate
//! everything ([`plan`]), run the simulation on the chosen backend, precision and
//! dimensionality ([`simulate`], one path generic in `D`), write the outputs.
//!
//! Modules: `plan` (the checks, in order), `errors` (library errors in the words of the
//! command line), `report` (run.json), `out2d` and `out3d` (what a 2D and a 3D run write
//! beside what every run writes: [`Outputs`]).

mod errors;
mod out2d;
mod out3d;
mod plan;
mod report;

pub(crate) use errors::simulation_error;
pub use errors::{flag_error, flag_for};
#[cfg(feature = "mpi")]
pub(crate) use out2d::{snapshot_png, write_seismogram, write_wavefield};
#[cfg(feature = "mpi")]
pub(crate) use out3d::write_fields_3d;
pub(crate) use plan::available_memory;
pub use plan::{plan, Plan};
pub use report::Outcome;

use crate::cli::{Backend, Precision, RunArgs};
use crate::output::OutputDir;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ppstencil::receivers::Seismogram;
use ppstencil::solver::{cfl_limit_in, RunStats};
use ppstencil::solver::{Dims, WaveKernels};
use ppstencil::{ExecutionSpace, HostField, Rayon, Real, Serial, WaveConfig, WaveSimulator};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// What a successful run produced.
#[derive(Debug)]
pub struct RunSummary {
    /// The files written, in order (snapshots first, then wavefield.npy, velocity.npy,
    /// wavefield.png, velocity.png, seismogram.npy and .png with receivers, run.json).
    pub files: Vec<PathBuf>,
    /// Timing of the time loop.
    pub stats: RunStats,
}

/// The dimensionality `D` of a run, as a type: what its [`Outputs`] are implemented on.
pub struct Grid<const D: usize>;

/// What a run of `D` dimensions writes beside what every run writes: its snapshots, its
/// fields and pictures, its own keys of run.json and its summary on stdout.
pub trait Outputs<const D: usize> {
    /// What the pictures of the run are drawn on, made before the run starts.
    type Pictures;

    /// The pictures' backdrop of run `config`; an error stops the run before it starts.
    fn pictures(config: &WaveConfig) -> anyhow::Result<Self::Pictures>;

    /// Writes the snapshot `name` (without extension, under `snapshots/`) of the pressure
    /// `p` after `step` steps.
    fn snapshot<T: Real>(
        out: &mut OutputDir,
        pictures: &Self::Pictures,
        config: &WaveConfig,
        name: &str,
        step: usize,
        p: &HostField<T, D>,
    ) -> anyhow::Result<()>;

    /// Writes the final pressure `p` and the velocity `v` after `steps` steps, their
    /// pictures and the seismogram; returns the clip levels of the wavefield picture and of
    /// the seismogram's (`None` without one).
    fn fields<T: Real>(
        out: &mut OutputDir,
        pictures: &Self::Pictures,
        plan: &Plan,
        p: &HostField<T, D>,
        v: &HostField<T, D>,
        steps: usize,
        seismogram: Option<&Seismogram<T>>,
    ) -> anyhow::Result<(f64, Option<f64>)>;

    /// run.json's keys that only a run of `D` dimensions has.
    fn json_keys(plan: &Plan, outcome: &Outcome) -> serde_json::Value;

    /// The two lines printed on stdout after the run: the run in numbers, and the files
    /// written into `target`.
    fn summary(plan: &Plan, outcome: &Outcome, target: &std::path::Path) -> [String; 2];
}

/// Checks the arguments, runs the simulation on `--backend` and writes the outputs into
/// `--out`. Nothing is written unless the run succeeds.
pub fn run(args: &RunArgs) -> anyhow::Result<RunSummary> {
    let plan = plan(args)?;
    if plan.options.shots.is_some() {
        return crate::shots::run_shots(&plan);
    }
    if let Some(summary) = crate::dist::run_distributed(&plan)? {
        return Ok(summary);
    }
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }
    let o = &plan.options;
    match o.backend() {
        Backend::Serial => simulate_in(Serial, &plan, Some(1)),
        Backend::Rayon => {
            let space = match o.threads {
                Some(n) => Rayon::with_threads(n).map_err(flag_error)?,
                None => Rayon::new(),
            };
            let threads = space.threads();
            simulate_in(space, &plan, Some(threads))
        }
        Backend::Cuda => simulate_in(ppstencil::Cuda::new()?, &plan, None),
        Backend::Hip => simulate_in(ppstencil::Hip::new()?, &plan, None),
    }
}

/// [`simulate`] in the plan's precision and dimensionality.
fn simulate_in<E: ExecutionSpace>(
    space: E,
    plan: &Plan,
    threads: Option<usize>,
) -> anyhow::Result<RunSummary> {
    match (plan.options.precision(), plan.config.dims() == 3) {
        (Precision::F32, false) => simulate::<E, f32, 2>(space, plan, threads),
        (Precision::F32, true) => simulate::<E, f32, 3>(space, plan, threads),
        (Precision::F64, false) => simulate::<E, f64, 2>(space, plan, threads),
        (Precision::F64, true) => simulate::<E, f64, 3>(space, plan, threads),
    }
}

/// A progress bar of `nt` steps on stderr when it is a terminal, else a hidden one.
pub(crate) fn progress_bar(nt: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {pos}/{len} steps (eta {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(nt as u64).with_style(style)
}

/// The digits of snapshot file names: 5, or more when `nt` needs them.
pub(crate) fn step_digits(nt: usize) -> usize {
    nt.to_string().len().max(5)
}

/// The largest |p|, NaN when any value is NaN (unlike a plain maximum, which skips NaN).
pub(crate) fn max_abs<T: Real, const D: usize>(p: &HostField<T, D>) -> f64 {
    p.as_slice().iter().fold(0.0f64, |m, v| {
        let a = v.to_f64().abs();
        if a.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(a)
        }
    })
}

/// The final fields of a run: the pressure and the velocity, after `stats.steps` steps, and
/// the snapshots written.
struct Finished<T: Real, const D: usize> {
    stats: RunStats,
    p: HostField<T, D>,
    v: HostField<T, D>,
    frames: usize,
}

/// Runs the simulation of `plan` on `space` in element type `T` and `D` dimensions and
/// writes the outputs: the one generic function behind every `--backend`, `--precision` and
/// dimensionality. The .npy files hold `T` (float32 for f32, float64 for f64). An error
/// when the plan's grid is not of `D` dimensions.
pub fn simulate<E: ExecutionSpace, T: Real, const D: usize>(
    space: E,
    plan: &Plan,
    threads: Option<usize>,
) -> anyhow::Result<RunSummary>
where
    Dims<D>: WaveKernels<D>,
    Grid<D>: Outputs<D>,
{
    let config = &plan.config;
    anyhow::ensure!(
        config.dims() == D,
        "a {}D plan cannot run as a {D}D simulation",
        config.dims()
    );
    let o = &plan.options;
    let mut out = OutputDir::prepare(&o.out(), o.replace_previous_run(), &plan.input_refs())?;
    if config.snapshot_every.is_some() {
        out.subdir("snapshots")?;
    }
    let pictures = match Grid::<D>::pictures(config) {
        Ok(b) => b,
        Err(e) => {
            out.abandon();
            return Err(e);
        }
    };
    let mut sim = WaveSimulator::<E, T, D>::with_config(space, config.clone());
    let done = match time_loop(&mut sim, &mut out, &pictures, config) {
        Ok(done) => done,
        Err(e) => {
            out.abandon();
            return Err(e);
        }
    };
    let (clip, gather_clip) = Grid::<D>::fields(
        &mut out,
        &pictures,
        plan,
        &done.p,
        &done.v,
        done.stats.steps,
        sim.seismogram(),
    )?;
    let names: Vec<String> = out
        .written()
        .iter()
        .map(|f| f.display().to_string())
        .filter(|f| !f.starts_with("snapshots"))
        .chain(["run.json".to_string()])
        .collect();
    let max_abs = max_abs(&done.p);
    let mut warnings = plan.warnings.clone();
    if let Some(w) = crate::zeros::after_run(max_abs) {
        eprintln!("warning: {w}");
        warnings.push(w);
    }
    let outcome = Outcome {
        stats: done.stats,
        threads,
        precision: T::NAME,
        limit: cfl_limit_in(config.space_order, D)?,
        frames: done.frames,
        max_abs,
        clip,
        gather_clip,
        warnings,
        names,
        blocking: sim.blocking(),
        tuner: sim.band_tuner(),
        pacer: sim.pacer(),
    };
    finish::<D>(out, plan, &outcome)
}

/// The time loop of `sim`, writing a snapshot every `--snapshot-every` steps, and the final
/// fields on the host. A snapshot that cannot be written stops the run.
fn time_loop<E: ExecutionSpace, T: Real, const D: usize>(
    sim: &mut WaveSimulator<E, T, D>,
    out: &mut OutputDir,
    pictures: &<Grid<D> as Outputs<D>>::Pictures,
    config: &WaveConfig,
) -> anyhow::Result<Finished<T, D>>
where
    Dims<D>: WaveKernels<D>,
    Grid<D>: Outputs<D>,
{
    let bar = progress_bar(config.nt);
    let digits = step_digits(config.nt);
    let mut frames = 0usize;
    let mut frame_error: Option<anyhow::Error> = None;
    let result = sim
        .run_with(
            |done, _| bar.set_position(done as u64),
            |step, p| {
                let name = format!("snapshots/{step:0digits$}");
                match Grid::<D>::snapshot(out, pictures, config, &name, step, p) {
                    Ok(()) => {
                        frames += 1;
                        Ok(())
                    }
                    Err(e) => {
                        frame_error = Some(e);
                        Err(ppstencil::Error::invalid(
                            "snapshot",
                            step,
                            "could not be written",
                        ))
                    }
                }
            },
        )
        .and_then(|stats| Ok((stats, sim.wavefield_host()?, sim.velocity_host()?)));
    bar.finish_and_clear();
    match result {
        Ok((stats, p, v)) => Ok(Finished {
            stats,
            p,
            v,
            frames,
        }),
        Err(e) => Err(match frame_error {
            Some(f) => {
                f.context("writing a snapshot failed; the run was stopped and its files removed")
            }
            None => simulation_error(e, config),
        }),
    }
}

/// Writes run.json, moves the run's directory into place and prints the summary.
fn finish<const D: usize>(
    mut out: OutputDir,
    plan: &Plan,
    outcome: &Outcome,
) -> anyhow::Result<RunSummary>
where
    Grid<D>: Outputs<D>,
{
    let mut json = report::run_json(plan, outcome);
    if let (Some(all), serde_json::Value::Object(own)) =
        (json.as_object_mut(), Grid::<D>::json_keys(plan, outcome))
    {
        all.extend(own);
    }
    out.write("run.json", |f| {
        let text = serde_json::to_string_pretty(&json)? + "\n";
        std::fs::write(f, text).with_context(|| format!("{}: cannot write", f.display()))
    })?;
    let target = out.path().to_path_buf();
    let files = out.commit()?;
    // A closed stdout (e.g. `| head -0`) must not turn a finished run into a failure.
    let mut stdout = std::io::stdout().lock();
    for line in Grid::<D>::summary(plan, outcome, &target) {
        let _ = writeln!(stdout, "{line}");
    }
    Ok(RunSummary {
        files,
        stats: outcome.stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan runs only in its own dimensionality: a 2D plan handed to the 3D simulation is
    /// an error, before anything is written.
    #[test]
    fn a_plan_runs_only_in_its_own_dimensions() {
        let dir = std::env::temp_dir().join(format!("ppwave-dims-{}", std::process::id()));
        let args = RunArgs {
            nz: Some(20),
            nx: Some(24),
            nt: Some(2),
            src_z: Some(10),
            src_x: Some(12),
            out: Some(dir.clone()),
            ..RunArgs::default()
        };
        let plan = plan(&args).expect("a valid 2D plan");
        let e = simulate::<Serial, f32, 3>(Serial, &plan, Some(1)).expect_err("2D plan as 3D");
        assert!(e.to_string().contains("2D plan cannot run as a 3D"), "{e}");
        assert!(!dir.exists(), "nothing was written");
    }
}
