//! `ppwave run --shots FILE`: many shots with one model. The file holds one source position
//! per line, `Z X` (row, column; a comma also separates; `#` starts a comment). Every shot
//! writes `OUT/shot-NNNN/seismogram.npy` and `.png` (NNNN: the shot's number, from 1 in file
//! order) and `shot.json` (its position, status, timing); `OUT/summary.json` lists them all
//! and `OUT/run.json` records the run as a single run's does (so `--overwrite` can replace
//! it). Everything that can be checked is checked before the first shot runs (exit 2): the
//! file, the options that do not apply to a survey, the receivers, every shot's position
//! and the time blocking. The directory is written all at once ([`OutputDir`]): a shot
//! whose values become non-finite is reported by number and the others' results stay, but a
//! file that cannot be written (a full disk) fails the whole run and leaves no partial
//! results behind.
//!
//! Without MPI the shots run one after another in this process, in `--precision`. Under
//! `mpiexec -n P` (feature `mpi`) the ranks form groups of `--ranks-per-shot K` (default 1)
//! and each group runs every (P/K)-th shot over its K ranks with the distributed solver:
//! shot-parallel, domain-parallel, or both. With K > 1 a shot failing on one rank stops all
//! ranks (its group's partners would wait for it forever).

use crate::cli::{Backend, Precision};
use crate::figures::{self, gather};
use crate::output::OutputDir;
use crate::run::{flag_error, Plan, RunSummary};
use crate::BadInput;
use anyhow::Context;
use ppstencil::solver::RunStats;
use ppstencil::{io, ExecutionSpace, HostField, Rayon, Real, Serial, WaveConfig, WaveSimulator};
use std::path::Path;
#[cfg(feature = "mpi")]
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The shots of `file`: `(z, x)` per line, checked against the `nz x nx` grid.
pub fn read_shots(file: &Path, nz: usize, nx: usize) -> anyhow::Result<Vec<(usize, usize)>> {
    Ok(read_shot_lines(file, nz, nx)?
        .into_iter()
        .map(|(_, z, x)| (z, x))
        .collect())
}

/// [`read_shots`] with each shot's line number: `(line, z, x)`. The file is read with
/// bounds ([`read_text`](crate::inputs::read_text)).
fn read_shot_lines(
    file: &Path,
    nz: usize,
    nx: usize,
) -> anyhow::Result<Vec<(usize, usize, usize)>> {
    let text = crate::inputs::read_text("--shots", file, "a shot file")?;
    let mut shots = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let at = format!("--shots {}, line {}", file.display(), i + 1);
        let fields: Vec<&str> = body
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let parsed: Vec<Option<usize>> = fields.iter().map(|f| f.parse().ok()).collect();
        let (z, x) = match parsed.as_slice() {
            [Some(z), Some(x)] => (*z, *x),
            _ => {
                return Err(BadInput(format!(
                    "{at}: `{body}` is not a source position; write the row and the column as \
                     two whole numbers, e.g. `625 1000`"
                ))
                .into())
            }
        };
        if z >= nz || x >= nx {
            return Err(BadInput(format!(
                "{at}: source ({z}, {x}) is outside the {nz} x {nx} grid; rows are 0 to {}, \
                 columns 0 to {}",
                nz - 1,
                nx - 1
            ))
            .into());
        }
        shots.push((i + 1, z, x));
    }
    if shots.is_empty() {
        return Err(BadInput(format!(
            "--shots {}: no shots in the file; write one source position `Z X` per line",
            file.display()
        ))
        .into());
    }
    Ok(shots)
}

/// The directory of shot `n` (from 1), relative to `--out`.
fn shot_name(n: usize) -> String {
    format!("shot-{n:04}")
}

/// The directory of shot `n` (from 1).
#[cfg(feature = "mpi")]
fn shot_dir(out: &Path, n: usize) -> PathBuf {
    out.join(shot_name(n))
}

/// One shot's outcome.
struct Outcome {
    max_abs: f64,
    wall: Duration,
}

/// Shot `n`'s gather picture, drawn from `data` (nt x nrec samples).
fn gather_picture(
    path: &Path,
    config: &WaveConfig,
    plan: &Plan,
    nt: usize,
    nrec: usize,
    data: &[f64],
) -> anyhow::Result<()> {
    let (fig, _) = gather::gather_figure(
        data,
        nt,
        nrec,
        config.dt,
        &config.receivers,
        config.dh,
        plan.options.gather_gain.unwrap_or_default(),
    );
    figures::write(path, &fig)
}

/// Writes shot `n`'s seismogram and picture into `dir` (the MPI path, which writes in
/// place).
#[cfg(feature = "mpi")]
fn write_seismogram(
    dir: &Path,
    config: &WaveConfig,
    plan: &Plan,
    nt: usize,
    nrec: usize,
    data: &[f64],
    raw: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if nrec == 0 {
        return Ok(());
    }
    raw(&dir.join("seismogram.npy"))?;
    gather_picture(&dir.join("seismogram.png"), config, plan, nt, nrec, data)
}

/// Runs shot config `c` in this process on `space` in `T`: its outcome and seismogram.
fn one_shot<E: ExecutionSpace, T: Real>(
    space: E,
    c: &WaveConfig,
) -> anyhow::Result<(Outcome, ppstencil::receivers::Seismogram<T>)> {
    let mut sim = WaveSimulator::<E, T>::with_config(space, c.clone());
    let stats = sim.run()?;
    let p = sim.wavefield_host()?;
    let s = sim
        .seismogram()
        .context("the run left no seismogram")?
        .clone();
    let max_abs = crate::run::max_abs(&p);
    anyhow::ensure!(
        max_abs.is_finite(),
        "the wavefield became non-finite (max |p| = {max_abs}); the scheme is unstable for \
         this shot: use a smaller --dt"
    );
    Ok((
        Outcome {
            max_abs,
            wall: stats.wall,
        },
        s,
    ))
}

/// Shot `n`'s record (shot.json and its entry in summary.json).
fn record_json(n: usize, pos: (usize, usize), r: &anyhow::Result<Outcome>) -> serde_json::Value {
    match r {
        Ok(o) => serde_json::json!({"shot": n, "src_z": pos.0, "src_x": pos.1, "ok": true,
            "max_abs_p": o.max_abs, "wall_time_s": o.wall.as_secs_f64()}),
        Err(e) => serde_json::json!({"shot": n, "src_z": pos.0, "src_x": pos.1, "ok": false,
            "error": format!("{e:#}")}),
    }
}

/// Records shot `n`'s outcome in `dir/shot.json` (the MPI path).
#[cfg(feature = "mpi")]
fn record(dir: &Path, n: usize, pos: (usize, usize), r: &anyhow::Result<Outcome>) {
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(
        dir.join("shot.json"),
        record_json(n, pos, r).to_string() + "\n",
    );
}

/// Checks everything a survey needs before any shot runs, each failure a [`BadInput`]
/// (exit 2): options that do not apply (`--ny`, `--snapshot-every`, a device backend), the
/// receivers, the shot file, every shot's position for the scheme in `--precision`, and
/// the run's time blocking (prepared once for the first shot). Returns the shots.
fn prepare(plan: &Plan) -> anyhow::Result<Vec<(usize, usize)>> {
    let o = &plan.options;
    let file = o.shots.as_ref().context("no --shots file")?;
    let shown = file.display();
    if plan.config.dims() == 3 {
        return Err(BadInput(format!(
            "--shots {shown}: a survey runs 2D shots, but --ny makes the run 3D; drop --ny \
             (a 3D run takes one source: --src-z, --src-y, --src-x)"
        ))
        .into());
    }
    if o.snapshot_every.is_some() {
        return Err(BadInput(
            "--snapshot-every is not available with --shots; drop --snapshot-every".into(),
        )
        .into());
    }
    if !matches!(o.backend(), Backend::Serial | Backend::Rayon) {
        return Err(BadInput(format!(
            "--shots runs on the host: use --backend serial or rayon, not --backend {}",
            o.backend().name()
        ))
        .into());
    }
    if plan.config.receivers.is_empty() {
        return Err(BadInput(format!(
            "--shots {shown}: a survey records each shot's seismogram, but the run has no \
             receiver: add --receivers Z:X0:X1:STEP or --receiver-file FILE"
        ))
        .into());
    }
    let shots = read_shot_lines(file, plan.config.nz, plan.config.nx)?;
    let at = |line: usize, z: usize, x: usize| {
        format!("--shots {shown}, line {line}: source ({z}, {x})")
    };
    for &(line, z, x) in &shots {
        let c = WaveConfig {
            src_z: z,
            src_x: x,
            ..plan.config.clone()
        };
        match o.precision() {
            Precision::F32 => c.validate_for::<f32>(),
            Precision::F64 => c.validate_for::<f64>(),
        }
        .map_err(|e| flag_error(e).context(BadInput(at(line, z, x))))?;
    }
    let (line, z, x) = shots[0];
    let first = WaveConfig {
        src_z: z,
        src_x: x,
        ..plan.config.clone()
    };
    match o.precision() {
        Precision::F32 => WaveSimulator::<Serial, f32>::with_config(Serial, first).prepare(),
        Precision::F64 => WaveSimulator::<Serial, f64>::with_config(Serial, first).prepare(),
    }
    .map_err(|e| flag_error(e).context(BadInput(at(line, z, x))))?;
    Ok(shots.into_iter().map(|(_, z, x)| (z, x)).collect())
}

/// `ppwave run --shots FILE`: see the module docs.
pub fn run_shots(plan: &Plan) -> anyhow::Result<RunSummary> {
    #[cfg(feature = "mpi")]
    if crate::dist::under_mpiexec() {
        return with_mpi::run_shots(plan);
    }
    if plan.options.ranks_per_shot.is_some() {
        return Err(BadInput(
            "--ranks-per-shot needs a run under mpiexec with ppwave built with --features mpi"
                .into(),
        )
        .into());
    }
    let shots = prepare(plan)?;
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }
    match plan.options.precision() {
        Precision::F32 => run_all::<f32>(plan, &shots),
        Precision::F64 => run_all::<f64>(plan, &shots),
    }
}

/// Runs `shots` one after another in `T` and writes their files through one [`OutputDir`].
fn run_all<T: Real>(plan: &Plan, shots: &[(usize, usize)]) -> anyhow::Result<RunSummary> {
    let o = &plan.options;
    let mut out = OutputDir::prepare(&o.out(), o.replace_previous_run(), &plan.input_refs())?;
    let start = Instant::now();
    let mut results = Vec::new();
    let mut failed: Vec<(usize, String)> = Vec::new();
    for (i, &pos) in shots.iter().enumerate() {
        let n = i + 1;
        let dir = shot_name(n);
        out.subdir(&dir)?;
        let c = WaveConfig {
            src_z: pos.0,
            src_x: pos.1,
            ..plan.config.clone()
        };
        let r = match (o.backend(), o.threads) {
            (Backend::Rayon, Some(t)) => Rayon::with_threads(t)
                .map_err(anyhow::Error::from)
                .and_then(|space| one_shot::<_, T>(space, &c)),
            (Backend::Rayon, None) => one_shot::<_, T>(Rayon::new(), &c),
            _ => one_shot::<_, T>(Serial, &c),
        };
        let (outcome, seismogram) = match r {
            Ok((outcome, s)) => (Ok(outcome), Some(s)),
            Err(e) => (Err(e), None),
        };
        if let Some(s) = &seismogram {
            let traces = HostField::from_vec(s.nt, s.nrec, s.data.clone())?;
            out.write(&format!("{dir}/seismogram.npy"), |f| {
                Ok(io::write_npy(f, &traces)?)
            })?;
            let data: Vec<f64> = s.data.iter().map(|v| v.to_f64()).collect();
            out.write(&format!("{dir}/seismogram.png"), |f| {
                gather_picture(f, &c, plan, s.nt, s.nrec, &data)
            })?;
        }
        if let Err(e) = &outcome {
            eprintln!("shot {n} ({}, {}) failed: {e:#}", pos.0, pos.1);
            failed.push((n, format!("{e:#}")));
        }
        let json = record_json(n, pos, &outcome);
        out.write(&format!("{dir}/shot.json"), |f| {
            Ok(std::fs::write(f, json.to_string() + "\n")?)
        })?;
        results.push(json);
    }
    let wall = start.elapsed();
    let count = shots.len();
    let failed_numbers: Vec<usize> = failed.iter().map(|f| f.0).collect();
    let summary = serde_json::json!({"program": "ppwave", "shots": count,
        "failed": failed_numbers, "precision": T::NAME,
        "wall_time_s": wall.as_secs_f64(), "results": results});
    out.write("summary.json", |f| {
        Ok(std::fs::write(
            f,
            serde_json::to_string_pretty(&summary)? + "\n",
        )?)
    })?;
    let run = serde_json::json!({
        "ppstencil_version": ppstencil::VERSION,
        "config": o,
        "backend": o.backend().name(),
        "precision": T::NAME,
        "shots": count,
        "failed": failed_numbers,
        "warnings": plan.warnings,
        "receivers": plan.config.receivers.len(),
        "wall_time_s": wall.as_secs_f64(),
        "files": ["summary.json", "run.json"],
    });
    out.write("run.json", |f| {
        Ok(std::fs::write(
            f,
            serde_json::to_string_pretty(&run)? + "\n",
        )?)
    })?;
    let target = out.path().to_path_buf();
    let mut files = out.commit()?;
    println!(
        "ppwave: {count} shots, {} ok ({}); wrote {}/shot-NNNN/, summary.json and run.json",
        count - failed.len(),
        T::NAME,
        target.display()
    );
    if !failed.is_empty() {
        let list: Vec<String> = failed
            .iter()
            .map(|(n, e)| format!("shot {n}: {e}"))
            .collect();
        anyhow::bail!(
            "{} of {count} shots failed (the others' results are in {}):\n  {}",
            failed.len(),
            target.display(),
            list.join("\n  ")
        );
    }
    files.retain(|f| f.ends_with("summary.json"));
    Ok(RunSummary {
        files,
        stats: RunStats {
            steps: 0,
            wall,
            mpoints_per_s: 0.0,
        },
    })
}

/// Writes `out/summary.json` from the shots' `shot.json` files and reports failures (the
/// MPI path).
#[cfg(feature = "mpi")]
fn summarize(out: &Path, count: usize, wall: Duration) -> anyhow::Result<RunSummary> {
    let mut entries = Vec::new();
    let mut failed = Vec::new();
    for n in 1..=count {
        let path = shot_dir(out, n).join("shot.json");
        let v: serde_json::Value = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| serde_json::json!({"shot": n, "ok": false, "error": "no record"}));
        if v["ok"] != true {
            failed.push((n, v["error"].as_str().unwrap_or("").to_string()));
        }
        entries.push(v);
    }
    let summary = serde_json::json!({"program": "ppwave", "shots": count,
        "failed": failed.iter().map(|f| f.0).collect::<Vec<_>>(),
        "wall_time_s": wall.as_secs_f64(), "results": entries});
    let file = out.join("summary.json");
    std::fs::write(&file, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("{}: cannot write", file.display()))?;
    println!(
        "ppwave: {count} shots, {} ok; wrote {}/shot-NNNN/ and summary.json",
        count - failed.len(),
        out.display()
    );
    if !failed.is_empty() {
        let list: Vec<String> = failed
            .iter()
            .map(|(n, e)| format!("shot {n}: {e}"))
            .collect();
        anyhow::bail!(
            "{} of {count} shots failed (the others' results are in {}):\n  {}",
            failed.len(),
            out.display(),
            list.join("\n  ")
        );
    }
    Ok(RunSummary {
        files: vec![file],
        stats: RunStats {
            steps: 0,
            wall,
            mpoints_per_s: 0.0,
        },
    })
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::*;
    use ppstencil::dist::mpi::topology::{Color, SimpleCommunicator};
    use ppstencil::dist::mpi::traits::*;
    use ppstencil::dist::{mpi, DistributedSimulator};
    use ppstencil::MemSpaceHost;

    fn shot<E: ExecutionSpace<Memory = MemSpaceHost>>(
        space: E,
        c: &WaveConfig,
        plan: &Plan,
        dir: &Path,
        group: SimpleCommunicator,
    ) -> anyhow::Result<Option<Outcome>> {
        let k = group.size();
        let mut sim = DistributedSimulator::<E, f32>::new(space, c.clone(), group, None)?;
        let (stats, res) = match sim.run() {
            Ok(r) => r,
            // A partner of this group may wait for this rank's messages: stop everyone.
            Err(e) if k > 1 => {
                eprintln!("error: shot in {}: {e}", dir.display());
                mpi::topology::SimpleCommunicator::world().abort(1)
            }
            Err(e) => return Err(e.into()),
        };
        let Some(res) = res else { return Ok(None) };
        let s = &res.seismogram;
        let data: Vec<f64> = s.data.iter().map(|v| *v as f64).collect();
        write_seismogram(dir, c, plan, s.nt, s.nrec, &data, |f| {
            let traces = HostField::from_vec(s.nt, s.nrec, s.data.clone())?;
            Ok(io::write_npy(f, &traces)?)
        })?;
        Ok(Some(Outcome {
            max_abs: res.wavefield.max_abs() as f64,
            wall: stats.wall,
        }))
    }

    pub fn run_shots(plan: &Plan) -> anyhow::Result<RunSummary> {
        let shots = prepare(plan)?;
        let out = plan.options.out();
        for n in 1..=shots.len() {
            let d = shot_dir(&out, n);
            if d.exists() {
                return Err(BadInput(format!(
                    "shot {n}: its output directory {} exists; give a new --out, or remove it",
                    d.display()
                ))
                .into());
            }
        }
        let universe = mpi::initialize().context("MPI was already initialised")?;
        let world = universe.world();
        let (p, k) = (
            world.size() as usize,
            plan.options.ranks_per_shot.unwrap_or(1),
        );
        if k == 0 || p % k != 0 {
            return Err(BadInput(format!(
                "--ranks-per-shot {k} does not divide the {p} MPI ranks; give a divisor of {p}"
            ))
            .into());
        }
        let start = Instant::now();
        let rank = world.rank() as usize;
        let groups = p / k;
        let group = world
            .split_by_color(Color::with_value((rank / k) as i32))
            .context("MPI could not form the shot groups")?;
        if rank == 0 {
            std::fs::create_dir_all(&out)
                .with_context(|| format!("{}: cannot create", out.display()))?;
        }
        world.barrier();
        for (i, &pos) in shots
            .iter()
            .enumerate()
            .filter(|(i, _)| i % groups == rank / k)
        {
            let n = i + 1;
            let dir = shot_dir(&out, n);
            let c = WaveConfig {
                src_z: pos.0,
                src_x: pos.1,
                ..plan.config.clone()
            };
            let leader = group.rank() == 0;
            if leader {
                let _ = std::fs::create_dir_all(&dir);
            }
            let r = match plan.options.backend() {
                Backend::Rayon => {
                    let space = match plan.options.threads {
                        Some(t) => Rayon::with_threads(t)?,
                        None => Rayon::new(),
                    };
                    shot(space, &c, plan, &dir, group.duplicate())
                }
                _ => shot(Serial, &c, plan, &dir, group.duplicate()),
            };
            if leader {
                let r = r.and_then(|o| o.context("rank 0 of the group has the results"));
                if let Err(e) = &r {
                    eprintln!("shot {n} ({}, {}) failed: {e:#}", pos.0, pos.1);
                }
                record(&dir, n, pos, &r);
            }
        }
        world.barrier();
        if rank == 0 {
            summarize(&out, shots.len(), start.elapsed())
        } else {
            Ok(RunSummary {
                files: vec![],
                stats: RunStats {
                    steps: 0,
                    wall: start.elapsed(),
                    mpoints_per_s: 0.0,
                },
            })
        }
    }
}
