//! `ppwave run --shots FILE`: many shots with one model. The file holds one source position
//! per line, `Z X` (row, column; a comma also separates; `#` starts a comment). Every shot
//! writes `OUT/shot-NNNN/seismogram.npy` and `.png` (NNNN: the shot's number, from 1 in file
//! order) and `shot.json` (its position, status, timing); `OUT/summary.json` lists them all.
//! A shot that fails (its position is not valid for the scheme, its values become
//! non-finite, its files cannot be written) is reported by number; the others' results stay.
//!
//! Without MPI the shots run one after another in this process. Under `mpiexec -n P` (feature
//! `mpi`) the ranks form groups of `--ranks-per-shot K` (default 1) and each group runs every
//! (P/K)-th shot over its K ranks with the distributed solver: shot-parallel, domain-parallel,
//! or both. With K > 1 a shot failing on one rank stops all ranks (its group's partners would
//! wait for it forever).

use crate::cli::Backend;
use crate::figures::{self, gather};
use crate::run::{Plan, RunSummary};
use crate::BadInput;
use anyhow::Context;
use ppstencil::wave::RunStats;
use ppstencil::{io, ExecutionSpace, HostField, Rayon, Serial, WaveConfig, WaveSimulator};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The shots of `file`: `(z, x)` per line, checked against the `nz x nx` grid.
pub fn read_shots(file: &Path, nz: usize, nx: usize) -> anyhow::Result<Vec<(usize, usize)>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("--shots {}: cannot read", file.display()))?;
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
        shots.push((z, x));
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

/// The directory of shot `n` (from 1).
fn shot_dir(out: &Path, n: usize) -> PathBuf {
    out.join(format!("shot-{n:04}"))
}

/// One shot's outcome.
struct Outcome {
    max_abs: f64,
    wall: Duration,
}

/// Writes shot `n`'s seismogram and picture into `dir`.
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
    let (fig, _) = gather::gather_figure(
        data,
        nt,
        nrec,
        config.dt,
        &config.receivers,
        config.dh,
        plan.options.gather_gain.unwrap_or_default(),
    );
    figures::write(&dir.join("seismogram.png"), &fig)
}

/// Runs shot config `c` in this process on `space` and writes its files into `dir`.
fn one_shot<E: ExecutionSpace>(
    space: E,
    c: &WaveConfig,
    plan: &Plan,
    dir: &Path,
) -> anyhow::Result<Outcome> {
    let mut sim = WaveSimulator::<E, f32>::with_config(space, c.clone());
    let stats = sim.run()?;
    let p = sim.wavefield_host()?;
    let s = sim
        .seismogram()
        .context("the run left no seismogram")?
        .clone();
    let data: Vec<f64> = s.data.iter().map(|v| *v as f64).collect();
    write_seismogram(dir, c, plan, s.nt, s.nrec, &data, |f| {
        let traces = HostField::from_vec(s.nt, s.nrec, s.data.clone())?;
        Ok(io::write_npy(f, &traces)?)
    })?;
    Ok(Outcome {
        max_abs: p.max_abs() as f64,
        wall: stats.wall,
    })
}

/// Records shot `n`'s outcome in `dir/shot.json`.
fn record(dir: &Path, n: usize, pos: (usize, usize), r: &anyhow::Result<Outcome>) {
    let json = match r {
        Ok(o) => serde_json::json!({"shot": n, "src_z": pos.0, "src_x": pos.1, "ok": true,
            "max_abs_p": o.max_abs, "wall_time_s": o.wall.as_secs_f64()}),
        Err(e) => serde_json::json!({"shot": n, "src_z": pos.0, "src_x": pos.1, "ok": false,
            "error": format!("{e:#}")}),
    };
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join("shot.json"), json.to_string() + "\n");
}

/// Checks the shots and the output directory, before any shot runs: every shot directory
/// must be new.
fn prepare(plan: &Plan) -> anyhow::Result<(Vec<(usize, usize)>, PathBuf)> {
    let o = &plan.options;
    let file = o.shots.as_ref().context("no --shots file")?;
    let shots = read_shots(file, plan.config.nz, plan.config.nx)?;
    if o.snapshot_every.is_some() {
        return Err(BadInput("--snapshot-every is not available with --shots".into()).into());
    }
    let out = o.out();
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
    Ok((shots, out))
}

/// Writes `out/summary.json` from the shots' `shot.json` files and reports failures.
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
    let (shots, out) = prepare(plan)?;
    let start = Instant::now();
    std::fs::create_dir_all(&out).with_context(|| format!("{}: cannot create", out.display()))?;
    for (i, &pos) in shots.iter().enumerate() {
        let n = i + 1;
        let dir = shot_dir(&out, n);
        let c = WaveConfig {
            src_z: pos.0,
            src_x: pos.1,
            ..plan.config.clone()
        };
        let r = std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create", dir.display()))
            .and_then(|_| match plan.options.backend() {
                Backend::Serial => one_shot(Serial, &c, plan, &dir),
                Backend::Rayon => match plan.options.threads {
                    Some(t) => one_shot(Rayon::with_threads(t)?, &c, plan, &dir),
                    None => one_shot(Rayon::new(), &c, plan, &dir),
                },
                b => Err(BadInput(format!(
                    "--shots runs on the host: use --backend serial or rayon, not {}",
                    b.name()
                ))
                .into()),
            });
        if let Err(e) = &r {
            eprintln!("shot {n} ({}, {}) failed: {e:#}", pos.0, pos.1);
        }
        record(&dir, n, pos, &r);
    }
    summarize(&out, shots.len(), start.elapsed())
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
        let (shots, out) = prepare(plan)?;
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
