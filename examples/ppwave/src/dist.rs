//! Distributed `ppwave run` (feature `mpi`), 2D or 3D: under `mpiexec -n P`, or with
//! `--decomp`, every rank runs its part of the grid with
//! `ppstencil::dist::DistributedSimulator`, rank 0 gathers the results and writes the same
//! files as a single-process run (wavefield, velocity, seismogram, their pictures, run.json
//! with the ranks, the decomposition and the time in exchange vs compute). Error policy: what
//! every rank checks the same way (the
//! options, the decomposition) is an error on every rank, before any step; a failure on one
//! rank (a value that is not finite, an output that cannot be written) prints the error and
//! stops all ranks with `MPI_Abort`, so none hangs. Snapshots (`--snapshot-every`) are
//! gathered on rank 0 and written as in one process.

use crate::run::{Plan, RunSummary};

/// Whether this process was started by an MPI launcher (MPICH/Hydra, Open MPI, PMIx).
pub fn under_mpiexec() -> bool {
    ["PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Runs `plan` over MPI when started by `mpiexec` or given `--decomp`; `None`: run it in
/// one process as usual.
#[cfg(not(feature = "mpi"))]
pub fn run_distributed(plan: &Plan) -> anyhow::Result<Option<RunSummary>> {
    if plan.options.decomp.is_some() {
        return Err(crate::BadInput(
            "--decomp needs ppwave built with MPI: `cargo build --release -p ppwave --features mpi` \
             (see .ci/mpi-toolchain for what it installs), then `mpiexec -n P ppwave run --decomp AxB ...` (AxBxC in 3D)"
                .into(),
        )
        .into());
    }
    Ok(None)
}

#[cfg(feature = "mpi")]
pub use with_mpi::run_distributed;

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::*;
    use crate::cli::{Backend, Precision};
    use crate::figures::field;
    use crate::output::OutputDir;
    use crate::run::flag_error;
    use crate::BadInput;
    use anyhow::Context;
    use ppstencil::dist::mpi::datatype::Equivalence;
    use ppstencil::dist::mpi::topology::SimpleCommunicator;
    use ppstencil::dist::mpi::traits::*;
    use ppstencil::dist::{mpi, Decomposition, DistResults, DistStats, DistributedSimulator};
    use ppstencil::solver::RunStats;
    use ppstencil::solver::{Dims, WaveKernels};
    use ppstencil::{io, ExecutionSpace, HostField, MemSpaceHost, Rayon, Real, Serial};

    /// Prints `e` as `main` would, prefixed with the rank, and stops every rank.
    ///
    /// The message goes out in one write, and the abort waits [`ABORT_GRACE`] for it:
    /// `mpiexec` forwards a rank's stderr through a pipe and `MPI_Abort` kills the ranks
    /// at once, so a message written piece by piece was seen cut short ("error (rank 0")
    /// on a loaded machine.
    fn abort(world: &SimpleCommunicator, e: &anyhow::Error) -> ! {
        use std::io::Write as _;
        let mut text = format!("error (rank {} of {}): {e}\n", world.rank(), world.size());
        for cause in e.chain().skip(1) {
            text.push_str(&format!("  caused by: {cause}\n"));
        }
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(text.as_bytes());
        let _ = stderr.flush();
        drop(stderr);
        std::thread::sleep(ABORT_GRACE);
        world.abort(i32::from(crate::exit_code(e)))
    }

    /// How long a failing rank waits between printing its error and `MPI_Abort`.
    const ABORT_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

    /// See the module docs.
    pub fn run_distributed(plan: &Plan) -> anyhow::Result<Option<RunSummary>> {
        let o = &plan.options;
        if o.decomp.is_none() && !under_mpiexec() {
            return Ok(None);
        }
        match plan.config.dims() {
            3 => run_in::<3>(plan),
            _ => run_in::<2>(plan),
        }
        .map(Some)
    }

    /// The distributed run of a `D`-dimensional plan.
    fn run_in<const D: usize>(plan: &Plan) -> anyhow::Result<RunSummary>
    where
        Dims<D>: WaveKernels<D>,
    {
        let o = &plan.options;
        let parts = match &o.decomp {
            Some(text) => Some(Decomposition::<D>::parse_parts(text).map_err(|e| {
                BadInput(format!(
                    "--decomp: {e} ({D}D grid {})",
                    plan.config.grid_words()
                ))
            })?),
            None => None,
        };
        let Some(universe) = mpi::initialize() else {
            anyhow::bail!("MPI was already initialised in this process");
        };
        let world = universe.world();
        match (o.backend(), o.precision()) {
            (Backend::Serial, Precision::F32) => go::<_, f32, D>(Serial, plan, parts, &world, 1),
            (Backend::Serial, Precision::F64) => go::<_, f64, D>(Serial, plan, parts, &world, 1),
            (Backend::Rayon, precision) => {
                let space = match o.threads {
                    Some(n) => Rayon::with_threads(n).map_err(flag_error)?,
                    None => Rayon::new(),
                };
                let t = space.threads();
                match precision {
                    Precision::F32 => go::<_, f32, D>(space, plan, parts, &world, t),
                    Precision::F64 => go::<_, f64, D>(space, plan, parts, &world, t),
                }
            }
            (b, _) => Err(BadInput(format!(
                "--backend {} is not available in a distributed run: each rank computes on the \
                 host; use --backend serial or rayon",
                b.name()
            ))
            .into()),
        }
    }

    /// The distributed run of `plan` on `space` in element type `T`: every rank steps its
    /// part; rank 0 writes the snapshots and the results.
    fn go<E: ExecutionSpace<Memory = MemSpaceHost>, T: Real + Equivalence, const D: usize>(
        space: E,
        plan: &Plan,
        parts: Option<[usize; D]>,
        world: &SimpleCommunicator,
        threads: usize,
    ) -> anyhow::Result<RunSummary>
    where
        Dims<D>: WaveKernels<D>,
    {
        let config = &plan.config;
        // Checked identically on every rank: an error here is every rank's, no abort needed.
        let mut sim =
            DistributedSimulator::<E, T, D>::new(space, config.clone(), world.duplicate(), parts)
                .map_err(|e| match parts {
                Some(_) => anyhow::Error::new(BadInput(format!("--decomp: {e}"))),
                None => flag_error(e),
            })?;
        let decomp = sim.decomposition().to_string();
        let mut out = rank0_output(plan, world);
        let digits = crate::run::step_digits(config.nt);
        let backdrop = match (world.rank(), config.snapshot_every, D) {
            (0, Some(_), 2) => match field::Backdrop::new(config) {
                Ok(b) => Some(b),
                Err(e) => abort(world, &e),
            },
            _ => None,
        };
        let mut frame_error: Option<anyhow::Error> = None;
        let run = sim.run_with(|step, p| {
            let Some(out) = out.as_mut() else {
                return Ok(());
            };
            let name = format!("snapshots/{step:0digits$}");
            write_snapshot(out, backdrop.as_ref(), config, &name, step, p).map_err(|e| {
                frame_error = Some(e);
                ppstencil::Error::invalid("snapshot", step, "could not be written")
            })
        });
        let (stats, results) = match run {
            Ok(r) => r,
            Err(_) if frame_error.is_some() => {
                let e = frame_error.take().expect("checked");
                abort(
                    world,
                    &e.context("writing a snapshot failed; the run was stopped"),
                )
            }
            Err(e) => abort(world, &crate::run::simulation_error(e, config)),
        };
        let run_stats = RunStats {
            steps: stats.steps,
            wall: stats.wall,
            mpoints_per_s: stats.mpoints_per_s,
        };
        let (Some(res), Some(out)) = (results, out.take()) else {
            return Ok(RunSummary {
                files: vec![],
                stats: run_stats,
            });
        };
        let what = Distributed {
            stats: &stats,
            threads,
            decomp: &decomp,
            ranks: world.size(),
        };
        match write_results(out, plan, res, &what) {
            Ok(files) => Ok(RunSummary {
                files,
                stats: run_stats,
            }),
            Err(e) => abort(world, &e),
        }
    }

    /// Rank 0's output directory (with `snapshots/` when the run writes snapshots); `None`
    /// on the other ranks. A failure stops every rank.
    fn rank0_output(plan: &Plan, world: &SimpleCommunicator) -> Option<OutputDir> {
        if world.rank() != 0 {
            return None;
        }
        let o = &plan.options;
        let mut out = match OutputDir::prepare(&o.out(), o.replace_previous_run(), &[]) {
            Ok(out) => out,
            Err(e) => abort(world, &e),
        };
        // Snapshots: gathered on rank 0, written as in one process (`.npy`, and in 2D the
        // picture).
        if plan.config.snapshot_every.is_some() {
            if let Err(e) = out.subdir("snapshots") {
                abort(world, &e);
            }
        }
        Some(out)
    }

    /// Writes the gathered snapshot `name` (without extension) of step `step`: `.npy`, and
    /// in 2D (with a `backdrop`) the picture.
    fn write_snapshot<T: Real, const D: usize>(
        out: &mut OutputDir,
        backdrop: Option<&field::Backdrop>,
        config: &ppstencil::WaveConfig,
        name: &str,
        step: usize,
        p: &HostField<T, D>,
    ) -> anyhow::Result<()> {
        out.write(&format!("{name}.npy"), |f| Ok(io::write_npy(f, p)?))?;
        if let Some(backdrop) = backdrop {
            let p = HostField::<T>::from_vec(config.nz, config.nx, p.as_slice().to_vec())?;
            crate::run::snapshot_png(out, backdrop, config, name, step, &p)?;
        }
        Ok(())
    }

    /// What a distributed run adds to its run.json and summary: its timing, the threads of
    /// each rank, the decomposition and the ranks.
    struct Distributed<'a> {
        stats: &'a DistStats,
        threads: usize,
        decomp: &'a str,
        ranks: i32,
    }

    /// Rank 0: writes the results (the fields, their pictures, the seismogram, run.json),
    /// moves the directory into place and prints the summary; returns the files written.
    fn write_results<T: Real, const D: usize>(
        mut out: OutputDir,
        plan: &Plan,
        res: DistResults<T, D>,
        what: &Distributed,
    ) -> anyhow::Result<Vec<std::path::PathBuf>> {
        let (config, o, stats) = (&plan.config, &plan.options, what.stats);
        write_fields(&mut out, plan, res, stats.steps)?;
        let json = run_json::<T, D>(plan, what);
        out.write("run.json", |f| {
            let text = serde_json::to_string_pretty(&json)? + "\n";
            std::fs::write(f, text).with_context(|| format!("{}: cannot write", f.display()))
        })?;
        let target = out.path().display().to_string();
        let files = out.commit()?;
        println!(
            "ppwave: {} grid, {} steps on {} ranks as {} ({} x {} thread(s), {}) in {:.3} s = {:.1} Mpoints/s; halo exchange {:.3} s, compute {:.3} s",
            config.grid_words(),
            stats.steps,
            what.ranks,
            what.decomp,
            o.backend().name(),
            what.threads,
            T::NAME,
            stats.wall.as_secs_f64(),
            stats.mpoints_per_s,
            stats.exchange.as_secs_f64(),
            stats.compute.as_secs_f64(),
        );
        println!("wrote {target}");
        Ok(files)
    }

    /// The gathered fields after `steps` steps: in 3D as a single-process run writes them;
    /// in 2D `wavefield.npy`, `velocity.npy`, `wavefield.png` and the seismogram.
    fn write_fields<T: Real, const D: usize>(
        out: &mut OutputDir,
        plan: &Plan,
        res: DistResults<T, D>,
        steps: usize,
    ) -> anyhow::Result<()> {
        let (config, o) = (&plan.config, &plan.options);
        let values = res.wavefield.into_vec();
        if D == 3 {
            let p = HostField::<T, 3>::from_vec_shape([config.nz, config.ny, config.nx], values)?;
            let v = config.velocity_model_in::<T, 3>()?;
            crate::run::write_fields_3d(out, config, &p, &v, steps, Some(&res.seismogram))?;
            return Ok(());
        }
        let p = &HostField::<T>::from_vec(config.nz, config.nx, values)?;
        let v = config.velocity_model::<T>()?;
        let backdrop = field::Backdrop::new(config)?;
        crate::run::write_wavefield(out, &backdrop, config, p, &v, steps)?;
        crate::run::write_seismogram(
            out,
            &res.seismogram,
            config,
            o.gather_gain.unwrap_or_default(),
        )?;
        Ok(())
    }

    /// The distributed run's run.json.
    fn run_json<T: Real, const D: usize>(plan: &Plan, what: &Distributed) -> serde_json::Value {
        let (config, o, stats) = (&plan.config, &plan.options, what.stats);
        serde_json::json!({
            "ppstencil_version": ppstencil::VERSION,
            "config": o,
            "backend": o.backend().name(),
            "threads_per_rank": what.threads,
            "precision": T::NAME,
            "ranks": what.ranks,
            "decomposition": what.decomp,
            "dims": D,
            "snapshot_every": config.snapshot_every,
            "nz": config.nz,
            "ny": config.ny,
            "nx": config.nx,
            "nt": config.nt,
            "space_order": config.space_order,
            "steps": stats.steps,
            "wall_time_s": stats.wall.as_secs_f64(),
            "exchange_time_s": stats.exchange.as_secs_f64(),
            "compute_time_s": stats.compute.as_secs_f64(),
            "exchange_per_step_us": stats.exchange.as_secs_f64() * 1e6 / stats.steps.max(1) as f64,
            "halo_bytes_per_step": stats.halo_bytes_per_step,
            "mpoints_per_s": stats.mpoints_per_s,
        })
    }
}
