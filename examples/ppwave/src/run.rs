//! `ppwave run`: merge the flags with the `--config` file, read the input files, validate
//! everything, run the simulation on the chosen backend and precision, write the outputs.

use crate::cli::{Backend, Precision, RunArgs, TextArg};
use crate::figures::{self, field, gather};
use crate::output::OutputDir;
use crate::BadInput;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ppstencil::model::VelocityModel;
use ppstencil::solver::{cfl_limit_for, RunStats};
use ppstencil::{io, ExecutionSpace, HostField, Rayon, Real, Serial, WaveConfig, WaveSimulator};
use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// What a successful run produced.
#[derive(Debug)]
pub struct RunSummary {
    /// The files written, in order (snapshots first, then wavefield.npy, velocity.npy,
    /// wavefield.png, velocity.png, seismogram.npy and .png with receivers, run.json).
    pub files: Vec<PathBuf>,
    /// Timing of the time loop.
    pub stats: RunStats,
}

/// Everything a run needs, checked: the effective options and the simulation parameters.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The effective options: the flags over the config file, every default filled in and
    /// every path absolute. Written to run.json as `"config"` (it is a valid config file).
    pub options: RunArgs,
    /// The simulation's parameters (the velocity model and receivers read in).
    pub config: WaveConfig,
    /// Options whose value came from the config file (named in error messages).
    pub from_file: BTreeSet<&'static str>,
    /// The velocity model in words (run.json's "model").
    pub model: String,
    /// What the grid cannot carry (printed to stderr, recorded in run.json).
    pub warnings: Vec<String>,
    /// The files the run reads (flag, path): never inside --out.
    pub inputs: Vec<(&'static str, PathBuf)>,
}

impl Plan {
    /// [`inputs`](Self::inputs) as [`OutputDir::prepare`] takes them.
    pub(crate) fn input_refs(&self) -> Vec<(&str, &Path)> {
        self.inputs.iter().map(|(f, p)| (*f, p.as_path())).collect()
    }
}

/// The flag a library parameter corresponds to: the one table from the library's
/// [`Param`](ppstencil::Param) to `ppwave run`'s flags.
pub fn flag_for(param: &ppstencil::Param) -> Option<&'static str> {
    use ppstencil::Param;
    Some(match param {
        Param::Nz => "--nz",
        Param::Nx => "--nx",
        Param::GridSize => "--nz x --nx",
        Param::Nt => "--nt",
        Param::TimeStep => "--dt",
        Param::SpaceStep => "--dh",
        Param::PeakFrequency => "--fpeak",
        Param::Vmin => "--vmin",
        Param::SourceZ => "--src-z",
        Param::SourceX => "--src-x",
        Param::SourceY => "--src-y",
        Param::Ny => "--ny",
        Param::Layer => "--layer",
        Param::Threads => "--threads",
        Param::TimeBlock => "--time-block",
        Param::SpaceOrder => "--space-order",
        Param::Absorb => "--absorb",
        Param::Boundary => "--boundary",
        Param::PmlReflection => "--pml-r",
        Param::PmlDegree => "--pml-degree",
        Param::PmlAlpha => "--pml-alpha",
        Param::SourceDelay => "--source-delay",
        Param::SourceMode => "--source-mode",
        Param::SnapshotEvery => "--snapshot-every",
        Param::Receiver | Param::Receivers => "--receivers",
        Param::Velocity | Param::VelocityModel => "--velocity",
        _ => return None,
    })
}

/// The valid range and fix of a library parameter error with every parameter it names
/// written as its flag: `--dt` as a setting to change, `src-z` where it stands for its
/// value in a range (empty for other errors).
fn valid_with_flags(e: &ppstencil::Error) -> String {
    e.valid_named(|p, as_value| {
        flag_for(p).map(|f| {
            if as_value {
                f.trim_start_matches("--").to_string()
            } else {
                f.to_string()
            }
        })
    })
    .unwrap_or_default()
}

/// Turns a library parameter error into a [`BadInput`] that names the command-line flag.
pub fn flag_error(e: ppstencil::Error) -> anyhow::Error {
    match e {
        ppstencil::Error::InvalidParameter {
            ref param,
            ref value,
            ..
        } => {
            let name = param.to_string();
            let flag = match param {
                // A 3D grid is shown with its three sizes.
                ppstencil::Param::GridSize if value.matches(" x ").count() == 2 => {
                    "--nz x --ny x --nx"
                }
                _ => flag_for(param).unwrap_or(&name),
            };
            BadInput(format!(
                "invalid {flag} = {value}: {}",
                valid_with_flags(&e)
            ))
            .into()
        }
        other => other.into(),
    }
}

/// The error of a run whose simulation stopped with `e`. A parameter the simulator checks
/// only as it starts is bad input named by its flag: `--time-block` with the value given
/// (`2:1`), what the grid's stencil needs and the fix (in 3D the blocks' bands are planes
/// along z). Anything else is "the simulation failed".
pub(crate) fn simulation_error(e: ppstencil::Error, config: &WaveConfig) -> anyhow::Error {
    use ppstencil::{Error, Param};
    match &e {
        Error::InvalidParameter {
            param: Param::TimeBlock,
            value,
            ..
        } => {
            let mut text = format!("{value}: {}", valid_with_flags(&e));
            if config.dims() == 3 {
                text = text
                    .replace("rows", "planes along z")
                    .replace("row", "plane along z");
            }
            BadInput(format!(
                "invalid --time-block = {}: {text}; or let --time-block auto choose the plan",
                config.time_block.name()
            ))
            .into()
        }
        Error::InvalidParameter { .. } => flag_error(e),
        _ => anyhow::Error::new(e).context("the simulation failed"),
    }
}

/// Adds "(`key` is set in --config FILE)" to a one-message flag error whose option came
/// from the config file rather than the command line.
fn with_origin(
    e: anyhow::Error,
    from_file: &BTreeSet<&'static str>,
    config: &Option<PathBuf>,
) -> anyhow::Error {
    let Some(path) = config else { return e };
    if e.chain().count() > 1 {
        return e;
    }
    let text = e.to_string();
    let key = from_file.iter().find(|k| {
        let flag = format!("invalid --{k}");
        text.starts_with(&format!("{flag} ")) || text.starts_with(&format!("{flag}:"))
    });
    match key {
        Some(k) => BadInput(format!(
            "{text} (`{k}` is set in --config {})",
            path.display()
        ))
        .into(),
        None => e,
    }
}

/// Absolute form of `p` (relative to the current directory), without touching the disk.
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Merges the flags with `--config`, reads `--velocity` and `--receiver-file`, fills in the
/// defaults and checks every parameter: everything that can be checked before running.
pub fn plan(args: &RunArgs) -> anyhow::Result<Plan> {
    let file = match &args.config {
        Some(path) => crate::config::load(path)?,
        None => RunArgs::default(),
    };
    let file_json = serde_json::to_value(&file)?;
    let mut o = args.over(file);
    let cli_json = serde_json::to_value(args)?;
    let from_file: BTreeSet<&'static str> = crate::cli::CONFIG_KEYS
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| file_json.get(k).is_some() && cli_json.get(k).is_none())
        .collect();
    let origin = |e: anyhow::Error| with_origin(e, &from_file, &args.config);
    // The cache size blocking and the host kernels read: a bad override is refused here,
    // before any size is chosen or printed.
    if let Err(e) = ppstencil::exec::llc_from_env() {
        return Err(BadInput(e.to_string()).into());
    }
    if o.ranks_per_shot.is_some() && o.shots.is_none() {
        return Err(BadInput(
            "--ranks-per-shot applies only to a --shots survey: add --shots FILE, or drop \
             --ranks-per-shot"
                .into(),
        )
        .into());
    }
    if o.ny.is_none() && o.src_y.is_some() {
        return Err(origin(
            BadInput(
                "--src-y applies only to a 3D run: add --ny N (planes along y), or drop --src-y"
                    .into(),
            )
            .into(),
        ));
    }

    // The velocity model sets the grid.
    let model = match &o.velocity {
        Some(path) if o.ny.is_some() => {
            let shown = path.display();
            crate::inputs::check_npy("--velocity", path).map_err(origin)?;
            let field: ppstencil::ScalarField<ppstencil::MemSpaceHost, f64, 3> =
                io::read_npy(path).map_err(|e| {
                    origin(BadInput(format!("invalid --velocity: {e}; a 3D run (--ny) needs a 3D (nz, ny, nx) float32 or float64 .npy file of velocities in m/s")).into())
                })?;
            let [nz, ny, nx] = field.shape();
            let model = VelocityModel::new_3d(nz, ny, nx, field.into_vec()).map_err(|e| {
                origin(flag_error(e).context(BadInput(format!(
                    "--velocity {shown}: the model has a bad value"
                ))))
            })?;
            for (flag, given, has) in [("--nz", o.nz, nz), ("--ny", o.ny, ny), ("--nx", o.nx, nx)] {
                if let Some(given) = given.filter(|&g| g != has) {
                    let e: anyhow::Error = BadInput(format!(
                        "invalid {flag} = {given}: the --velocity model {shown} is {nz} x {ny} x {nx} and its shape sets the grid; drop {flag} (or give {has})"
                    ))
                    .into();
                    return Err(origin(e));
                }
            }
            o.nz = Some(nz);
            o.nx = Some(nx);
            o.velocity = Some(absolute(path));
            Some(model)
        }
        Some(path) => {
            let shown = path.display();
            crate::inputs::check_npy("--velocity", path).map_err(origin)?;
            let field: HostField<f64> = io::read_npy(path).map_err(|e| {
                origin(BadInput(format!("invalid --velocity: {e}; give a 2D float32 or float64 .npy file of velocities in m/s (a 3D model needs --ny)")).into())
            })?;
            let [nz, nx] = field.shape();
            let model = VelocityModel::new(nz, nx, field.into_vec()).map_err(|e| {
                origin(flag_error(e).context(BadInput(format!(
                    "--velocity {shown}: the model has a bad value"
                ))))
            })?;
            for (flag, given, has) in [("--nz", o.nz, nz), ("--nx", o.nx, nx)] {
                if let Some(given) = given.filter(|&g| g != has) {
                    let e: anyhow::Error = BadInput(format!(
                        "invalid {flag} = {given}: the --velocity model {shown} is {nz} x {nx} and its shape sets the grid; drop {flag} (or give {has})"
                    ))
                    .into();
                    return Err(origin(e));
                }
            }
            o.nz = Some(nz);
            o.nx = Some(nx);
            o.velocity = Some(absolute(path));
            Some(model)
        }
        None => None,
    };
    let mut config = o.config();
    if let Some(m) = model {
        config.set_velocity_model(m);
    }
    let (nz, nx, ny) = (config.nz, config.nx, config.ny);
    let grid = config.grid_words();

    // Receivers: each line, then the file, must lie in the grid.
    for line in o.receivers.iter().flatten() {
        let wrong = match (o.ny, line.y) {
            (None, Some(_)) => {
                Some("Z:Y:X0:X1:STEP is a 3D line: add --ny N, or write Z:X0:X1:STEP")
            }
            (Some(_), None) => {
                Some("a 3D run (--ny) needs lines Z:Y:X0:X1:STEP (row Z of plane Y)")
            }
            _ => None,
        };
        if let Some(why) = wrong {
            return Err(origin(
                BadInput(format!("invalid --receivers = {}: {why}", line.to_text())).into(),
            ));
        }
        if line.y.is_some_and(|y| y >= ny) {
            return Err(origin(
                BadInput(format!(
                    "invalid --receivers = {}: receivers must lie in the {grid} grid: Z < {nz}, Y < {ny} and X1 < {nx}",
                    line.to_text()
                ))
                .into(),
            ));
        }
        if line.z >= nz || line.x1 >= nx {
            return Err(origin(
                BadInput(format!(
                    "invalid --receivers = {}: receivers must lie in the {nz} x {nx} grid: Z < {nz} and X1 < {nx}",
                    line.to_text()
                ))
                .into(),
            ));
        }
    }
    if let Some(path) = &o.receiver_file {
        let shown = path.display();
        if o.ny.is_some() {
            return Err(origin(BadInput(format!("invalid --receiver-file {shown}: receiver files hold 2D `z x` positions; a 3D run (--ny) takes --receivers Z:Y:X0:X1:STEP lines")).into()));
        }
        let text =
            crate::inputs::read_text("--receiver-file", path, "a receiver file").map_err(origin)?;
        let positions = ppstencil::receivers::parse_positions(&text).map_err(|e| {
            // A path named by --config is not one the user typed: its content is not shown.
            let e = if from_file.contains("receiver-file") {
                let line = text
                    .lines()
                    .position(|l| ppstencil::receivers::parse_positions(l).is_err())
                    .map_or(0, |i| i + 1);
                format!(
                    "line {line} is not a `z x` pair of whole numbers (its content is not shown)"
                )
            } else {
                e.to_string()
            };
            origin(BadInput(format!("invalid --receiver-file {shown}: {e}")).into())
        })?;
        if positions.is_empty() {
            return Err(origin(BadInput(format!("invalid --receiver-file {shown}: it holds no receiver; write one `z x` pair per line")).into()));
        }
        if let Some((k, &(z, x))) = positions
            .iter()
            .enumerate()
            .find(|(_, &(z, x))| z >= nz || x >= nx)
        {
            return Err(origin(BadInput(format!(
                "invalid --receiver-file {shown}: receiver {} at (z, x) = ({z}, {x}) lies outside the {nz} x {nx} grid: 0 <= z < {nz}, 0 <= x < {nx}",
                k + 1
            )).into()));
        }
        config.receivers.extend(positions);
        o.receiver_file = Some(absolute(path));
    }

    match o.precision() {
        Precision::F32 => config.validate_for::<f32>(),
        Precision::F64 => config.validate_for::<f64>(),
    }
    .map_err(|e| origin(flag_error(e)))?;
    // What the grid cannot carry: warnings (run.json records them too).
    let mut warnings: Vec<String> = config
        .warnings()
        .into_iter()
        .map(|(param, text)| {
            let name = param.to_string();
            let flag = flag_for(&param).unwrap_or(&name);
            // The peak frequency's warnings are about its value; the others' texts name the
            // points they are about.
            match param {
                ppstencil::Param::PeakFrequency => {
                    format!("{flag} = {}: {text}", ppstencil::fmt_num(config.fpeak))
                }
                _ => format!("{flag}: {text}"),
            }
        })
        .collect();
    warnings.extend(crate::zeros::check(&config).map_err(origin)?);
    // Fields of the time loop (velocity, p, pold, pnew, kv2 or pxx + pzz, the damping) plus
    // the host copies of the results: refuse grids whose size does not even fit in an address.
    let bytes = match o.precision() {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    let flags = if ny == 1 {
        "--nz x --nx"
    } else {
        "--nz x --ny x --nx"
    };
    if config
        .points()
        .and_then(|n| n.checked_mul(FIELDS_PER_POINT * bytes))
        .and_then(|n| n.checked_add(nt_bytes(&config, bytes)?))
        .is_none()
    {
        return Err(BadInput(format!(
            "{flags} = {grid} is too large: its fields would need more bytes than this \
             machine can address; use a smaller grid"
        ))
        .into());
    }
    // On the host, refuse a run that cannot fit in memory before it starts, rather than
    // letting the kernel's out-of-memory killer stop it half-way.
    if matches!(o.backend(), Backend::Serial | Backend::Rayon) {
        let grid_bytes =
            (nz as f64) * (ny as f64) * (nx as f64) * (FIELDS_PER_POINT * bytes) as f64;
        let steps = nt_bytes(&config, bytes).unwrap_or(usize::MAX) as f64;
        if let Some(avail) = available_memory() {
            let gib = |b: f64| b / (1u64 << 30) as f64;
            if steps > avail as f64 / 2.0 {
                return Err(origin(BadInput(format!(
                    "invalid --nt = {}: the buffers that grow with the steps (the source wavelet and {} receiver \
                     trace(s), {bytes} bytes per sample, twice for the seismogram) need about {:.1} GiB, but only \
                     {:.1} GiB of memory is available; run fewer steps (or use fewer receivers)",
                    config.nt,
                    config.receivers.len() + config.receivers_3d.len(),
                    gib(steps),
                    gib(avail as f64),
                ))
                .into()));
            }
            let need = grid_bytes + steps;
            if need > avail as f64 {
                return Err(BadInput(format!(
                    "{flags} = {grid} needs about {:.1} GiB ({FIELDS_PER_POINT} fields of {bytes} bytes \
                     per point), but only {:.1} GiB of memory is available; use a smaller grid{}",
                    gib(need),
                    gib(avail as f64),
                    if bytes == 8 {
                        " or --precision f32"
                    } else {
                        ""
                    }
                ))
                .into());
            }
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // RAYON_NUM_THREADS sizes the default pool as --threads sizes a private one.
    let env_threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|_| o.threads.is_none() && o.backend() == Backend::Rayon)
        .map(|t| ("RAYON_NUM_THREADS", t));
    if let Some((flag, t)) = o
        .threads
        .map(|t| ("--threads", t))
        .or(env_threads)
        .filter(|&(_, t)| t > THREADS_PER_CORE_WARNING * cores)
    {
        warnings.push(format!(
            "{flag} = {t}: more than {THREADS_PER_CORE_WARNING} times the {cores} cores of this \
             machine; the threads take turns and each step waits for the slowest (use --threads {cores})"
        ));
    }
    if o.threads.is_some() && o.backend() != Backend::Rayon {
        return Err(origin(
            BadInput(format!(
                "--threads applies only to --backend rayon, not --backend {}; drop --threads",
                o.backend().name()
            ))
            .into(),
        ));
    }
    {
        use ppstencil::solver::Boundary;
        let kind = o.boundary.map(Boundary::from);
        if config.absorb == 0 && matches!(kind, Some(Boundary::Pml | Boundary::Sponge)) {
            let name = config.boundary.name();
            return Err(origin(BadInput(format!(
                "--boundary {name} needs a layer: add --absorb N (20 cells or more for a PML), or use --boundary rigid"
            )).into()));
        }
        if config.absorb > 0 && kind == Some(Boundary::Rigid) {
            return Err(origin(BadInput(format!(
                "--boundary rigid has no layer, but --absorb = {}: drop --absorb, or choose --boundary pml or sponge",
                config.absorb
            )).into()));
        }
        let pml_flags = [
            ("--pml-r", o.pml_r.is_some()),
            ("--pml-degree", o.pml_degree.is_some()),
            ("--pml-alpha", o.pml_alpha.is_some()),
        ];
        if let Some((flag, _)) = pml_flags.iter().find(|(_, given)| *given) {
            if config.layer() != Some(Boundary::Pml) {
                return Err(origin(BadInput(format!(
                    "{flag} applies only to a PML (--absorb N with --boundary pml, the default kind); add --absorb N or drop {flag}"
                )).into()));
            }
        }
    }
    if o.source_delay.is_some() && config.source_mode != ppstencil::solver::SourceMode::Add {
        return Err(origin(BadInput(
            "--source-delay applies only to --source-mode add (the paper's set mode starts the wavelet at its peak); add --source-mode add or drop --source-delay".into(),
        ).into()));
    }

    if o.vmin.is_some() && config.velocity.is_some() {
        return Err(origin(BadInput(
            "--vmin applies only without --velocity (the model file gives every cell's velocity); drop --vmin, or drop --velocity for a constant background".into(),
        ).into()));
    }
    let layers_text = config
        .layers
        .iter()
        .map(TextArg::to_text)
        .collect::<Vec<_>>()
        .join(", ");
    let model = match (&o.velocity, &o.layers) {
        (Some(v), None) => format!("the --velocity file {}", v.display()),
        (Some(v), Some(_)) => format!(
            "the --velocity file {} with the --layer layers {layers_text} on top",
            v.display()
        ),
        (None, Some(_)) => format!(
            "--vmin {} m/s with the --layer layers {layers_text} on top",
            config.vmin
        ),
        (None, None) => format!(
            "the default: --vmin {} m/s with the paper's layers scaled to {nz} rows ({layers_text}; \
             the paper's are 750:1125:3000, 1125:1751:4800 of 1751 rows)",
            config.vmin
        ),
    };

    // The effective options, every default written out (run.json's "config").
    o.backend = Some(o.backend());
    o.nz = Some(nz);
    o.nx = Some(nx);
    if config.dims() == 3 {
        o.ny = Some(ny);
        o.src_y = Some(config.src_y);
    }
    o.nt = Some(config.nt);
    o.dt = Some(config.dt);
    o.dh = Some(config.dh);
    o.src_z = Some(config.src_z);
    o.src_x = Some(config.src_x);
    o.fpeak = Some(config.fpeak);
    // Options that do not apply are not recorded as applied.
    o.vmin = config.velocity.is_none().then_some(config.vmin);
    o.layers = Some(config.layers.clone());
    o.kernels = Some(match config.kernels {
        ppstencil::StepKernels::Split => crate::cli::KernelsArg::Split,
        ppstencil::StepKernels::Fused => crate::cli::KernelsArg::Fused,
    });
    o.space_order = Some(config.space_order);
    o.absorb = Some(config.absorb);
    let layer = config.layer();
    o.boundary = Some(match layer {
        None => crate::cli::BoundaryArg::Rigid,
        Some(ppstencil::solver::Boundary::Sponge) => crate::cli::BoundaryArg::Sponge,
        Some(_) => crate::cli::BoundaryArg::Pml,
    });
    let pml = (layer == Some(ppstencil::solver::Boundary::Pml)).then_some(config.pml);
    o.pml_r = pml.map(|p| p.reflection);
    o.pml_degree = pml.map(|p| p.degree);
    o.pml_alpha = pml.map(|p| p.alpha_max(config.fpeak));
    o.source_mode = Some(match config.source_mode {
        ppstencil::solver::SourceMode::Set => crate::cli::SourceModeArg::Set,
        ppstencil::solver::SourceMode::Add => crate::cli::SourceModeArg::Add,
    });
    if config.source_mode == ppstencil::solver::SourceMode::Add {
        o.source_delay = Some(config.source_delay());
    }
    o.precision = Some(o.precision());
    o.gather_gain = Some(o.gather_gain.unwrap_or_default());
    // Decided before `out` is made explicit: the default ppwave-out may replace a previous run.
    o.overwrite = o.replace_previous_run();
    o.out = Some(absolute(&o.out()));
    let inputs: Vec<(&'static str, PathBuf)> = [
        ("--config", args.config.clone()),
        ("--velocity", o.velocity.clone()),
        ("--receiver-file", o.receiver_file.clone()),
    ]
    .into_iter()
    .filter_map(|(f, p)| p.map(|p| (f, p)))
    .collect();
    o.config = None;
    let plan = Plan {
        options: o,
        config,
        from_file,
        model,
        warnings,
        inputs,
    };
    crate::output::check_target(
        &plan.options.out(),
        plan.options.replace_previous_run(),
        &plan.input_refs(),
    )
    .map_err(|e| match (&args.config, plan.from_file.contains("out")) {
        (Some(path), true) => e.context(BadInput(format!(
            "--out comes from --config {} (`out`); pass --out DIR for a new directory",
            path.display()
        ))),
        _ => e,
    })?;
    Ok(plan)
}

/// The largest |p|, NaN when any value is NaN (unlike a plain maximum, which skips NaN).
pub(crate) fn max_abs<T: Real>(p: &HostField<T>) -> f64 {
    p.as_slice().iter().fold(0.0f64, |m, v| {
        let a = v.to_f64().abs();
        if a.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(a)
        }
    })
}

/// Bytes of the buffers that grow with nt, in elements of `bytes` bytes: the wavelet and the
/// traces ([`WaveConfig::nt_buffer_bytes`]) and the seismogram's copy of the traces.
fn nt_bytes(config: &WaveConfig, bytes: usize) -> Option<usize> {
    let copy = config
        .nt
        .checked_mul(config.receivers.len() + config.receivers_3d.len())?
        .checked_mul(bytes)?;
    config.nt_buffer_bytes(bytes)?.checked_add(copy)
}

/// `--threads` above this many per core is warned about.
const THREADS_PER_CORE_WARNING: usize = 4;

/// Fields of `nz × nx` elements a run holds at most: velocity, p, pold, pnew, kv2 or
/// pxx + pzz, the damping, and the host copies of the results.
const FIELDS_PER_POINT: usize = 9;

/// Memory the system can give without swapping (`MemAvailable` of `/proc/meminfo`), in bytes;
/// `None` where it cannot be read (then no check is made).
pub(crate) fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
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

/// [`simulate`] in the plan's precision.
fn simulate_in<E: ExecutionSpace>(
    space: E,
    plan: &Plan,
    threads: Option<usize>,
) -> anyhow::Result<RunSummary> {
    match plan.options.precision() {
        Precision::F32 => simulate::<E, f32>(space, plan, threads),
        Precision::F64 => simulate::<E, f64>(space, plan, threads),
    }
}

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

/// Writes a run's traces into `out`: `seismogram.npy` (nt × nrec, the run's precision) and
/// the shot-gather picture `seismogram.png` drawn with `gain`. Returns the picture's clip
/// level, or `None` when there are no receivers. Shared by single-process and distributed
/// runs.
pub(crate) fn write_seismogram<T: Real>(
    out: &mut OutputDir,
    s: &ppstencil::receivers::Seismogram<T>,
    config: &WaveConfig,
    gain: gather::GatherGain,
) -> anyhow::Result<Option<f64>> {
    if s.nrec == 0 {
        return Ok(None);
    }
    let traces = HostField::from_vec(s.nt, s.nrec, s.data.clone())?;
    out.write("seismogram.npy", |f| Ok(io::write_npy(f, &traces)?))?;
    let mut clip = None;
    out.write("seismogram.png", |f| {
        let samples: Vec<f64> = s.data.iter().map(|v| v.to_f64()).collect();
        let (fig, c) = gather::gather_figure(
            &samples,
            s.nt,
            s.nrec,
            config.dt,
            &config.receivers,
            config.dh,
            gain,
        );
        clip = Some(c);
        figures::write(f, &fig)
    })?;
    Ok(clip)
}

/// run.json's `time_blocking`: whether the time loop was blocked, its depth and band (rows
/// in 2D, z-planes in 3D: `band_rows` / `band_planes`), its tile width along the second
/// axis (`tile`: y in 3D, x in 2D; null for whole rows), and the solver's words (why not,
/// when it was not), the last-level cache `auto` sized it for (`llc_bytes`, and where that
/// size comes from: `llc_source`), and the bands `auto` timed in the run's first blocks
/// (`band_trials`: each band with its least milliseconds per step; null when not tuned), the
/// plan above being the one kept.
pub(crate) fn time_blocking_json(
    blocking: Option<&ppstencil::solver::Blocking>,
    tuner: Option<&ppstencil::solver::tuning::BandTuner>,
    dims: usize,
) -> serde_json::Value {
    let what = blocking.map(|b| b.to_string());
    let cache = ppstencil::exec::cache_sizes();
    let mut json = match blocking {
        Some(ppstencil::solver::Blocking::On(p)) => {
            let band = if dims == 3 {
                "band_planes"
            } else {
                "band_rows"
            };
            serde_json::json!({"blocked": true, "depth": p.depth, band: p.band, "tile": p.tile, "what": what})
        }
        _ => serde_json::json!({"blocked": false, "what": what}),
    };
    json["llc_bytes"] = cache.llc.into();
    json["llc_source"] = cache.llc_source.to_string().into();
    json["band_trials"] = tuner.map_or(serde_json::Value::Null, |tuner| {
        tuner
            .trials()
            .iter()
            .map(|t| {
                let ms = t.per_step.map(|d| d.as_secs_f64() * 1e3);
                if t.plan.is_unblocked() {
                    serde_json::json!({"unblocked": true, "ms_per_step": ms, "blocks": t.blocks})
                } else {
                    serde_json::json!({"band": t.plan.band, "ms_per_step": ms, "blocks": t.blocks})
                }
            })
            .collect()
    });
    json
}

/// Runs the simulation of `plan` on `space` in element type `T` and writes the outputs: the
/// one generic function behind every `--backend` and `--precision`. The .npy files hold `T`
/// (float32 for f32, float64 for f64).
pub fn simulate<E: ExecutionSpace, T: Real>(
    space: E,
    plan: &Plan,
    threads: Option<usize>,
) -> anyhow::Result<RunSummary> {
    let config = &plan.config;
    if config.dims() == 3 {
        return crate::run3d::simulate_3d::<E, T>(space, plan, threads);
    }
    let o = &plan.options;
    let mut out = OutputDir::prepare(&o.out(), o.replace_previous_run(), &plan.input_refs())?;
    if config.snapshot_every.is_some() {
        out.subdir("snapshots")?;
    }
    let backdrop = match field::Backdrop::new(config) {
        Ok(b) => b,
        Err(e) => {
            out.abandon();
            return Err(e);
        }
    };
    let mut sim = WaveSimulator::<E, T>::with_config(space, config.clone());
    let bar = progress_bar(config.nt);
    let digits = step_digits(config.nt);
    let mut frames = 0usize;
    let mut frame_error: Option<anyhow::Error> = None;
    let result = sim
        .run_with(
            |done, _| bar.set_position(done as u64),
            |step, p| {
                let name = format!("snapshots/{step:0digits$}");
                let written = out
                    .write(&format!("{name}.npy"), |f| Ok(io::write_npy(f, p)?))
                    .and_then(|_| {
                        out.write(&format!("{name}.png"), |f| {
                            let title = format!(
                                "Snapshot: pressure after step {step} (t = {} s)",
                                figures::short(step as f64 * config.dt)
                            );
                            figures::write(f, &field::wavefield_figure(&backdrop, p, title).0)
                        })
                    });
                match written {
                    Ok(_) => {
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
    let (stats, p, v) = match result {
        Ok(r) => r,
        Err(e) => {
            out.abandon();
            return Err(match frame_error {
                Some(f) => f.context(
                    "writing a snapshot failed; the run was stopped and its files removed",
                ),
                None => simulation_error(e, config),
            });
        }
    };
    out.write("wavefield.npy", |f| Ok(io::write_npy(f, &p)?))?;
    out.write("velocity.npy", |f| Ok(io::write_npy(f, &v)?))?;
    let mut clip = 0.0;
    out.write("wavefield.png", |f| {
        let title = format!(
            "Wavefield: pressure after {} steps (t = {} s)",
            stats.steps,
            figures::short(stats.steps as f64 * config.dt)
        );
        let (fig, c) = field::wavefield_figure(&backdrop, &p, title);
        clip = c;
        figures::write(f, &fig)
    })?;
    out.write("velocity.png", |f| {
        figures::write(f, &field::velocity_figure(&backdrop))
    })?;
    let gather_clip = match sim.seismogram() {
        Some(s) => write_seismogram(&mut out, s, config, o.gather_gain.unwrap_or_default())?,
        None => None,
    };
    let names: Vec<String> = out
        .written()
        .iter()
        .map(|f| f.display().to_string())
        .filter(|f| !f.starts_with("snapshots"))
        .chain(["run.json".to_string()])
        .collect();
    let limit = cfl_limit_for(config.space_order)?;
    let mut warnings = plan.warnings.clone();
    if let Some(w) = crate::zeros::after_run(max_abs(&p)) {
        eprintln!("warning: {w}");
        warnings.push(w);
    }
    let json = serde_json::json!({
        "program": "ppwave",
        "ppstencil_version": ppstencil::VERSION,
        "config": &plan.options,
        "backend": o.backend().name(),
        "kernels": config.kernels.name(),
        "threads": threads,
        "precision": T::NAME,
        "numerics": numerics_json(config, o.backend()),
        "nz": config.nz,
        "nx": config.nx,
        "nt": config.nt,
        "dt": config.dt,
        "dh": config.dh,
        "src_z": config.src_z,
        "src_x": config.src_x,
        "fpeak": config.fpeak,
        "vmin": config.velocity.is_none().then_some(config.vmin),
        "vmax": config.vmax(),
        "model": plan.model,
        "warnings": warnings,
        "velocity_file": o.velocity,
        "layers": config.layers.iter().map(|l| serde_json::json!({"z0": l.z0, "z1": l.z1, "velocity": l.velocity})).collect::<Vec<_>>(),
        "space_order": config.space_order,
        "absorb": config.absorb,
        "boundary": config.layer().map_or("rigid", |b| b.name()),
        "pml": pml_json(config),
        "source_mode": config.source_mode.name(),
        "source_delay": (config.source_mode == ppstencil::solver::SourceMode::Add).then(|| config.source_delay()),
        "receivers": config.receivers.len(),
        "snapshot_every": config.snapshot_every,
        "time_block": config.time_block.name(),
        "time_blocking": time_blocking_json(sim.blocking(), sim.band_tuner(), 2),
        "snapshots": frames,
        "cfl": config.cfl(),
        "cfl_limit": limit,
        "dt_max_stable": limit * config.dh / config.vmax(),
        "steps": stats.steps,
        "wall_time_s": stats.wall.as_secs_f64(),
        "mpoints_per_s": stats.mpoints_per_s,
        "max_abs_p": max_abs(&p),
        "image_clip": clip,
        "seismogram_clip": gather_clip,
        "files": names,
    });
    out.write("run.json", |f| {
        let text = serde_json::to_string_pretty(&json)? + "\n";
        std::fs::write(f, text).with_context(|| format!("{}: cannot write", f.display()))
    })?;
    let target = out.path().to_path_buf();
    let files = out.commit()?;
    // A closed stdout (e.g. `| head -0`) must not turn a finished run into a failure.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "ppwave: {} x {} grid, {} steps on {} ({} kernels, order {}, {}{}) in {:.3} s = {:.1} Mpoints/s; \
         CFL {:.3} (limit {:.3}); max |p| = {:.3e}",
        config.nz,
        config.nx,
        stats.steps,
        o.backend().name(),
        config.kernels.name(),
        config.space_order,
        T::NAME,
        threads
            .map(|t| format!(", {t} thread{}", if t == 1 { "" } else { "s" }))
            .unwrap_or_default(),
        stats.wall.as_secs_f64(),
        stats.mpoints_per_s,
        config.cfl(),
        limit,
        max_abs(&p),
    );
    let snapshots = if frames > 0 {
        format!(", snapshots/ ({frames} frames)")
    } else {
        String::new()
    };
    let _ = writeln!(
        stdout,
        "wrote {}/{{{}{snapshots}}}",
        target.display(),
        names.join(", ")
    );
    Ok(RunSummary { files, stats })
}

/// run.json's `pml` entry (2D and 3D runs): the PML's profile parameters, or null without one.
/// What run.json records of the numerics: what the run asked for and what its backend
/// ran. The GPU backends run exact arithmetic with subnormals kept; a CPU without FMA runs
/// `fast` as `exact`.
pub(crate) fn numerics_json(config: &WaveConfig, backend: Backend) -> serde_json::Value {
    use ppstencil::exec::{fma_available, simd_for};
    use ppstencil::{Arithmetic, Numerics};
    let asked = config.numerics;
    let host = matches!(backend, Backend::Serial | Backend::Rayon);
    let ran = match (host, asked.arithmetic) {
        (false, _) => Numerics::IEEE,
        (true, Arithmetic::Fast) if !fma_available() => Numerics {
            arithmetic: Arithmetic::Exact,
            ..asked
        },
        (true, _) => asked,
    };
    serde_json::json!({
        "arithmetic": ran.arithmetic.name(),
        "subnormals": ran.subnormals.name(),
        "simd": host.then(|| simd_for(ran.arithmetic == Arithmetic::Fast).name()),
        "asked": { "arithmetic": asked.arithmetic.name(), "subnormals": asked.subnormals.name() },
    })
}

pub(crate) fn pml_json(config: &WaveConfig) -> Option<serde_json::Value> {
    (config.layer() == Some(ppstencil::solver::Boundary::Pml)).then(|| {
        serde_json::json!({
            "reflection": config.pml.reflection,
            "degree": config.pml.degree,
            "alpha_max": config.pml.alpha_max(config.fpeak),
            "alpha_default": config.pml.alpha.is_none(),
        })
    })
}
