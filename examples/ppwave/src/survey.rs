//! What `ppwave migrate` and `ppwave invert` share: the observed shot gathers (`--data`, the
//! layout `ppwave run` writes), the shots (`--shots`), the model and geometry (`ppwave
//! run`'s flags), the memory for the forward wavefield (`--memory`), all read and checked
//! before anything is written; and the wavelets and operator of the survey.

use crate::cli::{Backend, BoundaryArg, RunArgs, SourceModeArg};
use crate::run::Plan;
use crate::BadInput;
use clap::Args;
use ppstencil::solver::{Boundary, SourceMode, Storage, WaveOperator};
use ppstencil::{io, ExecutionSpace, HostField, Real};
use std::path::{Path, PathBuf};

/// The flags of a survey command: the data, the memory budget and `ppwave run`'s flags
/// for the model and geometry.
#[derive(Args, Debug, Clone)]
pub struct SurveyArgs {
    /// The observed data: the --out directory of `ppwave run --shots FILE` (one
    /// `shot-NNNN/seismogram.npy` per shot of --shots), or of a single `ppwave run` (its
    /// `seismogram.npy`, the shot at --src-z, --src-x) without --shots.
    #[arg(long, value_name = "DIR")]
    pub data: PathBuf,
    /// Memory for the forward wavefield, in bytes with an optional K, M or G (powers of
    /// 1024): every step kept when they fit, else binomial checkpoints in that much
    /// [default: half the memory available when the run starts].
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<String>,
    /// The model and geometry, as `ppwave run` takes them (--velocity: the starting or
    /// migration model). Defaults that differ: --source-mode add, --boundary sponge.
    #[command(flatten)]
    pub run: RunArgs,
}

/// A survey read and checked: the plan (model, geometry), each shot's source point and
/// observed gather (`nt × nrec`), and the storage of the forward wavefield.
pub struct Survey {
    /// The model and geometry, every parameter checked.
    pub plan: Plan,
    /// The shots' source points `(z, x)`, in file order.
    pub shots: Vec<(usize, usize)>,
    /// The shots' observed gathers, `nt × nrec` each.
    pub observed: Vec<Vec<f64>>,
    /// How the forward wavefield is kept.
    pub storage: Storage,
    /// The files read (flag, path), which the output never replaces.
    pub inputs: Vec<(&'static str, PathBuf)>,
}

/// A source point `(z, x)`.
type Point = (usize, usize);

/// The shots' gathers (`nt × nrec` each).
type Gathers<T> = Vec<Vec<T>>;

/// A bad-input error.
fn bad(text: String) -> anyhow::Error {
    BadInput(text).into()
}

/// The bytes `text` names: digits with an optional K, M, G (or KiB, MiB, GiB) suffix.
pub fn parse_memory(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit: u64 = match t[digits.len()..].to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => 0,
    };
    match digits.parse::<u64>().ok().and_then(|n| n.checked_mul(unit)) {
        Some(b) if unit > 0 && b > 0 => Ok(b),
        _ => Err(bad(format!(
            "invalid --memory = {text}: give a number of bytes greater than 0, with an \
             optional K, M or G (e.g. 512M, 2G)"
        ))),
    }
}

/// Refuses the `ppwave run` flags that mean nothing to `command`.
fn refuse_run_only(command: &str, o: &RunArgs) -> anyhow::Result<()> {
    let given = [
        ("--ny", o.ny.is_some()),
        ("--snapshot-every", o.snapshot_every.is_some()),
        ("--decomp", o.decomp.is_some()),
        ("--ranks-per-shot", o.ranks_per_shot.is_some()),
        ("--time-block", o.time_block.is_some()),
        ("--gather-gain", o.gather_gain.is_some()),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
        return Err(bad(format!(
            "{flag} does not apply to `ppwave {command}` (a 2D survey stepped one step at a \
             time); drop {flag}"
        )));
    }
    if matches!(o.backend, Some(Backend::Cuda | Backend::Hip)) {
        return Err(bad(format!(
            "invalid --backend = {}: `ppwave {command}` runs on the host; use --backend \
             serial or rayon",
            o.backend.map_or("", Backend::name)
        )));
    }
    Ok(())
}

/// Reads and checks the survey of `args` for `command`: nothing is written.
pub fn load(command: &str, args: &SurveyArgs) -> anyhow::Result<Survey> {
    let mut run = args.run.clone();
    refuse_run_only(command, &run)?;
    run.source_mode.get_or_insert(SourceModeArg::Add);
    run.boundary.get_or_insert(BoundaryArg::Sponge);
    let plan = crate::run::plan(&run)?;
    let c = &plan.config;
    if c.source_mode != SourceMode::Add {
        return Err(bad(format!(
            "invalid --source-mode = set: `ppwave {command}` needs the additive source (a \
             linear map of the wavelet); use --source-mode add (and data made with it)"
        )));
    }
    if c.layer() == Some(Boundary::Pml) {
        return Err(bad(format!(
            "invalid --boundary = pml: the PML has no adjoint here; use --boundary sponge \
             (or rigid) for `ppwave {command}`"
        )));
    }
    if c.receivers.is_empty() {
        return Err(bad(
            "no receivers: give --receivers (or --receiver-file), those of the run that made \
             the data"
                .into(),
        ));
    }
    let mut inputs = plan.inputs.clone();
    let (shots, files) = shot_files(&plan, &args.data)?;
    let mut observed = Vec::with_capacity(files.len());
    for (n, file) in files.iter().enumerate() {
        observed.push(read_gather(&plan, n + 1, file)?);
        inputs.push(("--data", file.clone()));
    }
    let storage = match &args.memory {
        None => Storage::within_available_memory(),
        Some(m) => Storage::Budget {
            bytes: parse_memory(m)?,
        },
    };
    Ok(Survey {
        plan,
        shots,
        observed,
        storage,
        inputs,
    })
}

/// The shots and the gather file of each: `DIR/shot-NNNN/seismogram.npy` for the shots of
/// --shots, `DIR/seismogram.npy` for the single shot without it; each must exist.
fn shot_files(plan: &Plan, data: &Path) -> anyhow::Result<(Vec<Point>, Vec<PathBuf>)> {
    let c = &plan.config;
    if !data.is_dir() {
        return Err(bad(format!(
            "invalid --data = {}: not a directory; give the --out directory of the `ppwave \
             run` that recorded the data",
            data.display()
        )));
    }
    let (shots, files): (Vec<_>, Vec<_>) = match &plan.options.shots {
        Some(file) => crate::shots::read_shots(file, c.nz, c.nx)?
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    s,
                    data.join(format!("shot-{:04}", i + 1))
                        .join("seismogram.npy"),
                )
            })
            .unzip(),
        None => (vec![(c.src_z, c.src_x)], vec![data.join("seismogram.npy")]),
    };
    for (i, (s, f)) in shots.iter().zip(&files).enumerate() {
        if !f.is_file() {
            return Err(bad(format!(
                "invalid --data = {}: shot {} at ({}, {}) has no data ({} is missing); record \
                 it with `ppwave run --source-mode add --shots FILE --out DIR`, or drop the \
                 shot from --shots",
                data.display(),
                i + 1,
                s.0,
                s.1,
                f.display()
            )));
        }
    }
    Ok((shots, files))
}

/// Shot `n`'s gather from `file`: `nt × nrec` finite values.
fn read_gather(plan: &Plan, n: usize, file: &Path) -> anyhow::Result<Vec<f64>> {
    let c = &plan.config;
    let (nt, nrec) = (c.nt, c.receivers.len());
    crate::inputs::check_npy("--data", file)?;
    let g: HostField<f64> = io::read_npy(file).map_err(|e| {
        bad(format!(
            "invalid --data: shot {n}'s gather {}: {e}; give the float32 or float64 \
             seismogram.npy (nt x receivers) that `ppwave run` writes",
            file.display()
        ))
    })?;
    if g.shape() != [nt, nrec] {
        let [a, b] = g.shape();
        return Err(bad(format!(
            "invalid --data: shot {n}'s gather {} is {a} x {b} but --nt x receivers is {nt} x \
             {nrec}; give the --nt and --receivers of the run that recorded it",
            file.display()
        )));
    }
    if let Some(k) = g.as_slice().iter().position(|v| !v.is_finite()) {
        return Err(bad(format!(
            "invalid --data: shot {n}'s gather {} has the non-finite value {} at step {}, \
             receiver {}; record the data again (with a smaller --dt if the run was unstable)",
            file.display(),
            g.as_slice()[k],
            k / nrec,
            k % nrec
        )));
    }
    Ok(g.into_vec())
}

/// `--memory` checked against the grid: a budget below one checkpoint names what it needs.
pub fn check_memory<E: ExecutionSpace, T: Real>(
    op: &WaveOperator<E, T>,
    storage: Storage,
    given: Option<&str>,
) -> anyhow::Result<()> {
    match op.checkpoints_for(storage) {
        Ok(_) => Ok(()),
        Err(_) => Err(bad(format!(
            "invalid --memory = {}: one checkpoint (two wavefields of {}) needs {} bytes; give \
             --memory {} or more ({} keeps every step)",
            given.unwrap_or(""),
            op.config().grid_words(),
            2 * op.field_bytes(),
            2 * op.field_bytes(),
            op.field_bytes() * op.steps().saturating_sub(1) as u64
        ))),
    }
}

/// A computation over a survey, generic in the execution space and the precision.
pub trait Job {
    /// What it returns (free of the precision).
    type Out;
    /// Runs on `space` in `T`.
    fn run<E: ExecutionSpace + Clone, T: Real>(self, space: E) -> anyhow::Result<Self::Out>;
}

/// Runs `job` on `plan`'s --backend (serial or rayon, --threads) in its --precision.
pub fn dispatch<J: Job>(plan: &Plan, job: J) -> anyhow::Result<J::Out> {
    use crate::cli::Precision;
    let o = &plan.options;
    match (o.backend(), o.precision()) {
        (Backend::Serial, Precision::F32) => job.run::<_, f32>(ppstencil::Serial),
        (Backend::Serial, Precision::F64) => job.run::<_, f64>(ppstencil::Serial),
        (_, precision) => {
            let pool = match o.threads {
                Some(n) => ppstencil::Rayon::with_threads(n).map_err(crate::run::flag_error)?,
                None => ppstencil::Rayon::new(),
            };
            match precision {
                Precision::F32 => job.run::<_, f32>(pool),
                Precision::F64 => job.run::<_, f64>(pool),
            }
        }
    }
}

/// Writes `values` (`nz × nx`, row-major) as `name` in `out` in the plan's precision.
pub fn write_field(
    out: &mut crate::output::OutputDir,
    plan: &Plan,
    name: &str,
    values: &[f64],
) -> anyhow::Result<()> {
    let (nz, nx) = (plan.config.nz, plan.config.nx);
    out.write(name, |f| match plan.options.precision() {
        crate::cli::Precision::F32 => {
            let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
            Ok(io::write_npy(f, &HostField::from_vec(nz, nx, v)?)?)
        }
        crate::cli::Precision::F64 => Ok(io::write_npy(
            f,
            &HostField::from_vec(nz, nx, values.to_vec())?,
        )?),
    })?;
    Ok(())
}

/// The survey's shots on `op` in `T`: the simulator's additive wavelets at the shots'
/// sources in `op`'s model, and the observed gathers converted.
pub fn shots_in<E: ExecutionSpace, T: Real>(
    op: &WaveOperator<E, T>,
    survey: &Survey,
) -> anyhow::Result<(Vec<Vec<T>>, Gathers<T>)> {
    let wavelets = survey
        .shots
        .iter()
        .map(|&(z, x)| op.source_wavelet([z, x]))
        .collect::<ppstencil::Result<_>>()?;
    let observed = survey
        .observed
        .iter()
        .map(|g| g.iter().map(|&v| T::lit(v)).collect())
        .collect();
    Ok((wavelets, observed))
}
