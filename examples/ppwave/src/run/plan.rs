//! `ppwave run`'s plan: the flags merged with `--config`, the input files read, every
//! parameter checked and every default written out, before anything runs. [`plan`] runs the
//! checks in a fixed order (the first failing one is reported); each check is one function.

use super::errors::{flag_error, flag_for, with_origin};
use crate::cli::{Backend, Precision, RunArgs, TextArg};
use crate::BadInput;
use ppstencil::model::VelocityModel;
use ppstencil::{io, HostField, WaveConfig};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
    /// [`inputs`](Self::inputs) as [`OutputDir::prepare`](crate::output::OutputDir::prepare)
    /// takes them.
    pub(crate) fn input_refs(&self) -> Vec<(&str, &Path)> {
        self.inputs.iter().map(|(f, p)| (*f, p.as_path())).collect()
    }
}

/// Adds the config file's name to an error about an option that came from it.
type Origin<'a> = &'a dyn Fn(anyhow::Error) -> anyhow::Error;

/// `--threads` above this many per core is warned about.
const THREADS_PER_CORE_WARNING: usize = 4;

/// Fields of `nz × nx` elements a run holds at most: velocity, p, pold, pnew, kv2 or
/// pxx + pzz, the damping, and the host copies of the results.
const FIELDS_PER_POINT: usize = 9;

/// Absolute form of `p` (relative to the current directory), without touching the disk.
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Merges the flags with `--config`, reads `--velocity` and `--receiver-file`, fills in the
/// defaults and checks every parameter: everything that can be checked before running.
pub fn plan(args: &RunArgs) -> anyhow::Result<Plan> {
    let (mut o, from_file) = merge(args)?;
    let origin = |e: anyhow::Error| with_origin(e, &from_file, &args.config);
    check_early(&o, &origin)?;
    // The velocity model sets the grid.
    let model = read_velocity(&mut o, &origin)?;
    let mut config = o.config();
    if let Some(m) = model {
        config.set_velocity_model(m);
    }
    check_receiver_lines(&o, &config, &origin)?;
    if let Some(path) = o.receiver_file.clone() {
        read_receiver_file(&o, &path, &from_file, &mut config, &origin)?;
        o.receiver_file = Some(absolute(&path));
    }
    match o.precision() {
        Precision::F32 => config.validate_for::<f32>(),
        Precision::F64 => config.validate_for::<f64>(),
    }
    .map_err(|e| origin(flag_error(e)))?;
    let mut warnings = grid_warnings(&config, &origin)?;
    check_memory(&o, &config, &origin)?;
    warnings.extend(threads_warning(&o));
    check_combinations(&o, &config, &origin)?;
    let model = model_words(&o, &config);
    fill_in(&mut o, &config);
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
    check_out(&plan, args)?;
    Ok(plan)
}

/// The flags over the `--config` file, and the options whose value came from the file.
fn merge(args: &RunArgs) -> anyhow::Result<(RunArgs, BTreeSet<&'static str>)> {
    let file = match &args.config {
        Some(path) => crate::config::load(path)?,
        None => RunArgs::default(),
    };
    let file_json = serde_json::to_value(&file)?;
    let o = args.over(file);
    let cli_json = serde_json::to_value(args)?;
    let from_file: BTreeSet<&'static str> = crate::cli::CONFIG_KEYS
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| file_json.get(k).is_some() && cli_json.get(k).is_none())
        .collect();
    Ok((o, from_file))
}

/// The checks made before any file is read: the cache size and pacing overrides, and flags
/// that apply only with another (`--ranks-per-shot` with `--shots`, `--src-y` with `--ny`).
fn check_early(o: &RunArgs, origin: Origin) -> anyhow::Result<()> {
    // The cache size blocking and the host kernels read, and the pacing of the time loop: a
    // bad override is refused here, before any size is chosen or printed.
    if let Err(e) = ppstencil::exec::llc_from_env() {
        return Err(BadInput(e.to_string()).into());
    }
    if let Err(e) = ppstencil::exec::pacing_from_env() {
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
    Ok(())
}

/// Reads `--velocity` (3D with `--ny`), checks that the grid flags given agree with its
/// shape, and sets `--nz`, `--nx` and the path (absolute) from it. `None` without a file.
fn read_velocity(o: &mut RunArgs, origin: Origin) -> anyhow::Result<Option<VelocityModel>> {
    let Some(path) = o.velocity.clone() else {
        return Ok(None);
    };
    crate::inputs::check_npy("--velocity", &path).map_err(origin)?;
    let ((model, sizes), flags) = match o.ny {
        Some(_) => (
            model_3d(&path, origin)?,
            vec![("--nz", o.nz), ("--ny", o.ny), ("--nx", o.nx)],
        ),
        None => (
            model_2d(&path, origin)?,
            vec![("--nz", o.nz), ("--nx", o.nx)],
        ),
    };
    let words = sizes
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(" x ");
    for ((flag, given), &has) in flags.iter().zip(&sizes) {
        if let Some(given) = given.filter(|&g| g != has) {
            let e: anyhow::Error = BadInput(format!(
                "invalid {flag} = {given}: the --velocity model {} is {words} and its shape sets the grid; drop {flag} (or give {has})",
                path.display()
            ))
            .into();
            return Err(origin(e));
        }
    }
    o.nz = Some(sizes[0]);
    o.nx = sizes.last().copied();
    o.velocity = Some(absolute(&path));
    Ok(Some(model))
}

/// A velocity model read from a file, with its sizes (nz, [ny,] nx).
type ModelRead = (VelocityModel, Vec<usize>);

/// The error of a model file with a bad value (the library names the value and the rule).
fn bad_value(e: ppstencil::Error, path: &Path, origin: Origin) -> anyhow::Error {
    origin(flag_error(e).context(BadInput(format!(
        "--velocity {}: the model has a bad value",
        path.display()
    ))))
}

/// A 2D `--velocity` model: an (nz, nx) float32 or float64 `.npy` file.
fn model_2d(path: &Path, origin: Origin) -> anyhow::Result<ModelRead> {
    let field: HostField<f64> = io::read_npy(path).map_err(|e| {
        origin(BadInput(format!("invalid --velocity: {e}; give a 2D float32 or float64 .npy file of velocities in m/s (a 3D model needs --ny)")).into())
    })?;
    let [nz, nx] = field.shape();
    let model =
        VelocityModel::new(nz, nx, field.into_vec()).map_err(|e| bad_value(e, path, origin))?;
    Ok((model, vec![nz, nx]))
}

/// A 3D `--velocity` model: an (nz, ny, nx) float32 or float64 `.npy` file.
fn model_3d(path: &Path, origin: Origin) -> anyhow::Result<ModelRead> {
    let field: ppstencil::ScalarField<ppstencil::MemSpaceHost, f64, 3> = io::read_npy(path)
        .map_err(|e| {
            origin(BadInput(format!("invalid --velocity: {e}; a 3D run (--ny) needs a 3D (nz, ny, nx) float32 or float64 .npy file of velocities in m/s")).into())
        })?;
    let [nz, ny, nx] = field.shape();
    let model = VelocityModel::new_3d(nz, ny, nx, field.into_vec())
        .map_err(|e| bad_value(e, path, origin))?;
    Ok((model, vec![nz, ny, nx]))
}

/// Each `--receivers` line must be of the run's dimensionality and lie in the grid.
fn check_receiver_lines(o: &RunArgs, config: &WaveConfig, origin: Origin) -> anyhow::Result<()> {
    let (nz, nx, ny) = (config.nz, config.nx, config.ny);
    let grid = config.grid_words();
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
    Ok(())
}

/// Reads `--receiver-file` (2D runs: one `z x` pair per line, every one in the grid) and
/// adds its receivers to `config`.
fn read_receiver_file(
    o: &RunArgs,
    path: &Path,
    from_file: &BTreeSet<&'static str>,
    config: &mut WaveConfig,
    origin: Origin,
) -> anyhow::Result<()> {
    let (nz, nx) = (config.nz, config.nx);
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
            format!("line {line} is not a `z x` pair of whole numbers (its content is not shown)")
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
    Ok(())
}

/// What the grid cannot carry, each named by its flag (run.json records them too), and the
/// warnings about a wavefield that may underflow.
fn grid_warnings(config: &WaveConfig, origin: Origin) -> anyhow::Result<Vec<String>> {
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
    warnings.extend(crate::zeros::check(config).map_err(origin)?);
    Ok(warnings)
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

/// Refuses a grid whose fields (velocity, p, pold, pnew, kv2 or pxx + pzz, the damping,
/// the host copies of the results) do not fit in an address, and on the host a run that
/// cannot fit in the memory available, rather than letting the out-of-memory killer stop it
/// half-way.
fn check_memory(o: &RunArgs, config: &WaveConfig, origin: Origin) -> anyhow::Result<()> {
    let (nz, nx, ny) = (config.nz, config.nx, config.ny);
    let grid = config.grid_words();
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
        .and_then(|n| n.checked_add(nt_bytes(config, bytes)?))
        .is_none()
    {
        return Err(BadInput(format!(
            "{flags} = {grid} is too large: its fields would need more bytes than this \
             machine can address; use a smaller grid"
        ))
        .into());
    }
    if !matches!(o.backend(), Backend::Serial | Backend::Rayon) {
        return Ok(());
    }
    let grid_bytes = (nz as f64) * (ny as f64) * (nx as f64) * (FIELDS_PER_POINT * bytes) as f64;
    let steps = nt_bytes(config, bytes).unwrap_or(usize::MAX) as f64;
    let Some(avail) = available_memory() else {
        return Ok(());
    };
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
    Ok(())
}

/// Memory the system can give without swapping (`MemAvailable` of `/proc/meminfo`), in bytes;
/// `None` where it cannot be read (then no check is made).
pub(crate) fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The warning about more threads (`--threads`, or `RAYON_NUM_THREADS` for the default
/// pool) than [`THREADS_PER_CORE_WARNING`] times the cores.
fn threads_warning(o: &RunArgs) -> Option<String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // RAYON_NUM_THREADS sizes the default pool as --threads sizes a private one.
    let env_threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|_| o.threads.is_none() && o.backend() == Backend::Rayon)
        .map(|t| ("RAYON_NUM_THREADS", t));
    let (flag, t) = o
        .threads
        .map(|t| ("--threads", t))
        .or(env_threads)
        .filter(|&(_, t)| t > THREADS_PER_CORE_WARNING * cores)?;
    Some(format!(
        "{flag} = {t}: more than {THREADS_PER_CORE_WARNING} times the {cores} cores of this \
         machine; the threads take turns and each step waits for the slowest (use --threads {cores})"
    ))
}

/// Flags that apply only with others: `--threads` with rayon, a layer kind with a layer
/// width, the PML's flags with a PML, `--source-delay` with the additive source, `--vmin`
/// without a model file.
fn check_combinations(o: &RunArgs, config: &WaveConfig, origin: Origin) -> anyhow::Result<()> {
    use ppstencil::solver::Boundary;
    let refuse = |text: String| -> anyhow::Result<()> { Err(origin(BadInput(text).into())) };
    if o.threads.is_some() && o.backend() != Backend::Rayon {
        return refuse(format!(
            "--threads applies only to --backend rayon, not --backend {}; drop --threads",
            o.backend().name()
        ));
    }
    let kind = o.boundary.map(Boundary::from);
    if config.absorb == 0 && matches!(kind, Some(Boundary::Pml | Boundary::Sponge)) {
        let name = config.boundary.name();
        return refuse(format!(
            "--boundary {name} needs a layer: add --absorb N (20 cells or more for a PML), or use --boundary rigid"
        ));
    }
    if config.absorb > 0 && kind == Some(Boundary::Rigid) {
        return refuse(format!(
            "--boundary rigid has no layer, but --absorb = {}: drop --absorb, or choose --boundary pml or sponge",
            config.absorb
        ));
    }
    let pml_flags = [
        ("--pml-r", o.pml_r.is_some()),
        ("--pml-degree", o.pml_degree.is_some()),
        ("--pml-alpha", o.pml_alpha.is_some()),
    ];
    if let Some((flag, _)) = pml_flags.iter().find(|(_, given)| *given) {
        if config.layer() != Some(Boundary::Pml) {
            return refuse(format!(
                "{flag} applies only to a PML (--absorb N with --boundary pml, the default kind); add --absorb N or drop {flag}"
            ));
        }
    }
    if o.source_delay.is_some() && config.source_mode != ppstencil::solver::SourceMode::Add {
        return refuse(
            "--source-delay applies only to --source-mode add (the paper's set mode starts the wavelet at its peak); add --source-mode add or drop --source-delay".into(),
        );
    }
    if o.vmin.is_some() && config.velocity.is_some() {
        return refuse(
            "--vmin applies only without --velocity (the model file gives every cell's velocity); drop --vmin, or drop --velocity for a constant background".into(),
        );
    }
    Ok(())
}

/// The velocity model in words (run.json's "model").
fn model_words(o: &RunArgs, config: &WaveConfig) -> String {
    let layers_text = config
        .layers
        .iter()
        .map(TextArg::to_text)
        .collect::<Vec<_>>()
        .join(", ");
    match (&o.velocity, &o.layers) {
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
            "the default: --vmin {} m/s with the paper's layers scaled to {} rows ({layers_text}; \
             the paper's are 750:1125:3000, 1125:1751:4800 of 1751 rows)",
            config.vmin, config.nz
        ),
    }
}

/// Writes every default into the options (run.json's "config"); options that do not apply
/// are not recorded as applied.
fn fill_in(o: &mut RunArgs, config: &WaveConfig) {
    use crate::cli::{BoundaryArg, KernelsArg, SourceModeArg};
    use ppstencil::solver::{Boundary, SourceMode};
    o.backend = Some(o.backend());
    o.nz = Some(config.nz);
    o.nx = Some(config.nx);
    if config.dims() == 3 {
        o.ny = Some(config.ny);
        o.src_y = Some(config.src_y);
    }
    o.nt = Some(config.nt);
    o.dt = Some(config.dt);
    o.dh = Some(config.dh);
    o.src_z = Some(config.src_z);
    o.src_x = Some(config.src_x);
    o.fpeak = Some(config.fpeak);
    o.vmin = config.velocity.is_none().then_some(config.vmin);
    o.layers = Some(config.layers.clone());
    o.kernels = Some(match config.kernels {
        ppstencil::StepKernels::Split => KernelsArg::Split,
        ppstencil::StepKernels::Fused => KernelsArg::Fused,
    });
    o.space_order = Some(config.space_order);
    o.absorb = Some(config.absorb);
    let layer = config.layer();
    o.boundary = Some(match layer {
        None => BoundaryArg::Rigid,
        Some(Boundary::Sponge) => BoundaryArg::Sponge,
        Some(_) => BoundaryArg::Pml,
    });
    let pml = (layer == Some(Boundary::Pml)).then_some(config.pml);
    o.pml_r = pml.map(|p| p.reflection);
    o.pml_degree = pml.map(|p| p.degree);
    o.pml_alpha = pml.map(|p| p.alpha_max(config.fpeak));
    o.source_mode = Some(match config.source_mode {
        SourceMode::Set => SourceModeArg::Set,
        SourceMode::Add => SourceModeArg::Add,
    });
    if config.source_mode == SourceMode::Add {
        o.source_delay = Some(config.source_delay());
    }
    o.precision = Some(o.precision());
    o.gather_gain = Some(o.gather_gain.unwrap_or_default());
    // Decided before `out` is made explicit: the default ppwave-out may replace a previous run.
    o.overwrite = o.replace_previous_run();
    o.out = Some(absolute(&o.out()));
}

/// Checks that `--out` may take the run's files (see [`crate::output::check_target`]),
/// saying when `--out` came from the config file.
fn check_out(plan: &Plan, args: &RunArgs) -> anyhow::Result<()> {
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
    Ok(())
}
