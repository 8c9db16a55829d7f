//! Many shots at once from Python: [`run`] models one or many shots with the same model and
//! returns numpy arrays in a [`RunResult`]; [`cfl_limit`] is the scheme's stability limit.

use crate::args::{self, Opts, Setup};
use crate::engine::{advance, Advance, Data, Engine};
use crate::errors::{bad, Error, OrPy};
use crate::solver::{int_array, order_words, warn_all};
use numpy::PyArray1;
use pyo3::prelude::*;

/// The results of :func:`run`: arrays in the run's precision, one entry per shot along the
/// first axis.
#[pyclass(module = "ppstencil", frozen, get_all)]
pub struct RunResult {
    /// Traces, shape ``(shots, nt, receivers)``; sample ``k`` is the pressure after step
    /// ``k + 1``, at time ``times[k] = (k + 1) * dt``.
    seismograms: Py<PyAny>,
    /// Final wavefields, shape ``(shots, *shape)``; None with ``wavefields=False``.
    wavefields: Option<Py<PyAny>>,
    /// Snapshots, shape ``(shots, len(snapshot_steps), *shape)``; None without snapshots.
    snapshots: Option<Py<PyAny>>,
    /// The steps of the snapshots (int64), ascending.
    snapshot_steps: Py<PyAny>,
    /// The seismograms' sample times [s], ``(k + 1) * dt``.
    times: Py<PyAny>,
    /// Time step [s].
    dt: f64,
    /// Grid spacing [m].
    dh: f64,
    /// Time steps.
    nt: usize,
    /// The grid, ``(nz, nx)`` or ``(nz, ny, nx)``.
    shape: Vec<usize>,
    /// The sources, int64, shape ``(shots, 2)`` or ``(shots, 3)``.
    sources: Py<PyAny>,
    /// The receivers, int64, shape ``(n, 2)`` or ``(n, 3)``.
    receivers: Py<PyAny>,
    /// Wall time [s] of each shot's time loop (allocation and copies included).
    wall_time_s: Vec<f64>,
    /// Grid points updated per second of each shot, in millions.
    mpoints_per_s: Vec<f64>,
    /// What the time loop did about temporal blocking (the first shot's), in the library's
    /// words.
    blocking: Option<String>,
    /// What the grid cannot carry (also issued as ``ppstencil.GridWarning``).
    warnings: Vec<String>,
    /// ``"f32"`` or ``"f64"``.
    precision: &'static str,
    /// The backend's name.
    backend: String,
    /// Threads the kernels ran on (None on a GPU).
    threads: Option<usize>,
}

#[pymethods]
impl RunResult {
    fn __repr__(&self) -> String {
        format!(
            "<ppstencil.RunResult {} shot(s), {:?} grid, {} steps of {} s, {}>",
            self.wall_time_s.len(),
            self.shape,
            self.nt,
            self.dt,
            self.precision
        )
    }
}

/// Models one or many shots with the same velocity model and receivers, and returns the
/// seismograms, the final wavefields and the snapshots as numpy arrays (:class:`RunResult`).
///
/// Takes the parameters of :class:`Simulation` (``velocity``, ``dh``, ``nt``,
/// ``receivers``, ``dt``/``cfl``, ``fpeak``, ``boundary``, ``absorb``, ``space_order``,
/// ``kernels``, ``source_mode``, ``source_delay``, ``pml_r``, ``pml_degree``,
/// ``pml_alpha``, ``precision``, ``backend``, ``threads``, ``time_block``, ``numerics``,
/// ``subnormals``), and:
///
/// sources : array_like of int
///     The shots' source points, shape ``(shots, 2)`` / ``(shots, 3)``, or one point.
///     Shots run one after another; every shot is checked before the first runs.
/// snapshots : sequence of int, optional
///     Steps (1 to ``nt``) after which to keep each shot's wavefield.
/// wavefields : bool
///     Keep each shot's final wavefield (default True; ``shots x grid`` values).
/// progress : callable, optional
///     ``progress(done, total)`` with steps counted over all shots (``total = shots * nt``),
///     called after every step (every block of steps in a blocked run). An exception it
///     raises stops the run and is raised.
///
/// The GIL is released while the shots run; Ctrl-C raises ``KeyboardInterrupt`` within
/// about 50 ms plus one block of steps, and no results are returned.
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, nt, sources, receivers=None, snapshots=None,
    wavefields=true, progress=None, dt=None, cfl=None, fpeak=10.0, boundary="pml",
    absorb=None, space_order=4, kernels="fused", source_mode="set", source_delay=None,
    pml_r=None, pml_degree=None, pml_alpha=None, precision="f32", backend="rayon",
    threads=None, time_block=None, numerics="exact", subnormals="flush"))]
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    velocity: &Bound<'_, PyAny>,
    dh: f64,
    nt: i64,
    sources: &Bound<'_, PyAny>,
    receivers: Option<&Bound<'_, PyAny>>,
    snapshots: Option<&Bound<'_, PyAny>>,
    wavefields: bool,
    progress: Option<Py<PyAny>>,
    dt: Option<f64>,
    cfl: Option<f64>,
    fpeak: f64,
    boundary: &str,
    absorb: Option<i64>,
    space_order: i64,
    kernels: &str,
    source_mode: &str,
    source_delay: Option<f64>,
    pml_r: Option<f64>,
    pml_degree: Option<f64>,
    pml_alpha: Option<f64>,
    precision: &str,
    backend: &str,
    threads: Option<i64>,
    time_block: Option<&Bound<'_, PyAny>>,
    numerics: &str,
    subnormals: &str,
) -> PyResult<RunResult> {
    let auto = pyo3::types::PyString::new(py, "auto").into_any();
    let opts = Opts {
        dh,
        nt,
        dt,
        cfl,
        fpeak,
        receivers,
        boundary,
        absorb,
        space_order,
        kernels,
        source_mode,
        source_delay,
        pml_r,
        pml_degree,
        pml_alpha,
        precision,
        backend,
        threads,
        time_block: time_block.unwrap_or(&auto),
        numerics,
        subnormals,
    };
    let mut setup = args::setup(velocity, &opts)?;
    let dims = setup.dims();
    let shots = args::points(sources, dims, "sources")?;
    if shots.is_empty() {
        return Err(bad(format!(
            "invalid sources: no source; give at least one point {}",
            order_words(dims)
        )));
    }
    let steps = args::snapshot_steps(snapshots, setup.config.nt)?;
    let (configs, warnings) = checked_shots(py, &setup, &shots)?;
    warn_all(py, &warnings)?;
    let count = configs.len();
    let mut out = Outputs::default();
    for (k, config) in configs.into_iter().enumerate() {
        // The last shot takes the model; the others copy it.
        let model = if k + 1 == count {
            std::mem::replace(&mut setup.model, crate::engine::Model::F32(Vec::new()))
        } else {
            setup.model.clone()
        };
        let progress = progress
            .as_ref()
            .map(|f| (f, k * setup.config.nt, count * setup.config.nt));
        run_shot(
            py, &setup, config, model, &steps, progress, wavefields, &mut out,
        )?;
    }
    let keep_snapshots = !(steps.is_empty() && snapshots.is_none_or(|s| s.is_none()));
    result(
        py,
        &setup,
        &shots,
        &steps,
        out,
        wavefields,
        keep_snapshots,
        warnings,
    )
}

/// Every shot's configuration, checked before the first runs (an error names the shot), and
/// the warnings of all shots without repeats.
fn checked_shots(
    py: Python<'_>,
    setup: &Setup,
    shots: &[[usize; 3]],
) -> PyResult<(Vec<ppstencil::solver::WaveConfig>, Vec<String>)> {
    let mut configs = Vec::with_capacity(shots.len());
    let mut warnings: Vec<String> = Vec::new();
    for (k, &src) in shots.iter().enumerate() {
        let config = setup.shot(src);
        setup.check_shot(&config).map_err(|e| {
            if shots.len() > 1 {
                let text = e.value(py).to_string();
                PyErr::from_type(e.get_type(py), format!("shot {k} (sources[{k}]): {text}"))
            } else {
                e
            }
        })?;
        for w in Setup::warnings(&config) {
            let w = if shots.len() > 1 && w.starts_with("source:") {
                format!("shot {k}: {w}")
            } else {
                w
            };
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        configs.push(config);
    }
    Ok((configs, warnings))
}

/// What the shots produced, gathered in shot order.
#[derive(Default)]
struct Outputs {
    traces: Vec<Data>,
    finals: Vec<Data>,
    frames: Vec<Data>,
    walls: Vec<f64>,
    rates: Vec<f64>,
    blocking: Option<String>,
}

/// Runs one shot (the GIL released, Ctrl-C and `progress` checked between blocks of steps)
/// and adds its seismogram, final wavefield, snapshots and timings to `out`.
#[allow(clippy::too_many_arguments)]
fn run_shot(
    py: Python<'_>,
    setup: &Setup,
    config: ppstencil::solver::WaveConfig,
    model: crate::engine::Model,
    steps: &[usize],
    progress: Option<(&Py<PyAny>, usize, usize)>,
    wavefields: bool,
    out: &mut Outputs,
) -> PyResult<()> {
    let space = &setup.space;
    let mut engine = py.detach(|| -> PyResult<Box<dyn Engine>> {
        let mut e = space.engine(config, model)?;
        e.prepare().py()?;
        Ok(e)
    })?;
    let mut shot_frames = Vec::new();
    advance(
        py,
        engine.as_mut(),
        Advance {
            target: setup.config.nt,
            snapshots: steps,
            frames: &mut shot_frames,
            progress,
        },
    )?;
    let stats = {
        let e = engine.as_mut();
        py.detach(move || e.finish()).py()?
    };
    if out.blocking.is_none() {
        out.blocking = engine.blocking();
    }
    out.walls.push(stats.wall.as_secs_f64());
    out.rates.push(stats.mpoints_per_s);
    out.traces.push(
        engine
            .seismogram()
            .ok_or_else(|| Error::new_err("the finished run left no seismogram"))?,
    );
    if wavefields {
        out.finals.push(engine.wavefield().py()?);
    }
    out.frames.extend(shot_frames);
    Ok(())
}

/// The shots' outputs as numpy arrays with the run's description.
#[allow(clippy::too_many_arguments)]
fn result(
    py: Python<'_>,
    setup: &Setup,
    shots: &[[usize; 3]],
    steps: &[usize],
    out: Outputs,
    wavefields: bool,
    keep_snapshots: bool,
    warnings: Vec<String>,
) -> PyResult<RunResult> {
    let (count, nt, dims) = (out.walls.len(), setup.config.nt, setup.dims());
    let f64s = setup.precision == "f64";
    let shape = setup.shape.clone();
    let with = |lead: &[usize]| -> Vec<usize> {
        let mut s = lead.to_vec();
        s.extend(&shape);
        s
    };
    let seismograms = Data::concat(out.traces, f64s)
        .into_py(py, &[count, nt, setup.receivers.len()])?
        .unbind();
    let wavefields = if wavefields {
        Some(
            Data::concat(out.finals, f64s)
                .into_py(py, &with(&[count]))?
                .unbind(),
        )
    } else {
        None
    };
    let snapshots = if !keep_snapshots {
        None
    } else {
        Some(
            Data::concat(out.frames, f64s)
                .into_py(py, &with(&[count, steps.len()]))?
                .unbind(),
        )
    };
    let dt = setup.config.dt;
    let times: Vec<f64> = (1..=nt).map(|k| k as f64 * dt).collect();
    let step_list: Vec<i64> = steps.iter().map(|&s| s as i64).collect();
    Ok(RunResult {
        seismograms,
        wavefields,
        snapshots,
        snapshot_steps: PyArray1::from_vec(py, step_list).into_any().unbind(),
        times: PyArray1::from_vec(py, times).into_any().unbind(),
        dt,
        dh: setup.config.dh,
        nt,
        shape,
        sources: int_array(py, shots, dims)?.unbind(),
        receivers: int_array(py, &setup.receivers, dims)?.unbind(),
        wall_time_s: out.walls,
        mpoints_per_s: out.rates,
        blocking: out.blocking,
        warnings,
        precision: setup.precision,
        backend: setup.backend.clone(),
        threads: setup.space.threads(),
    })
}

/// The stability limit of the scheme: the largest CFL number ``max(velocity) * dt / dh``
/// of space order ``space_order`` (even, 2 to 16) in ``dims`` (2 or 3) dimensions.
#[pyfunction]
#[pyo3(signature = (space_order=4, dims=2))]
pub fn cfl_limit(space_order: i64, dims: i64) -> PyResult<f64> {
    let order = args::whole(
        "space_order",
        space_order,
        0,
        "use an even order from 2 to 16",
    )?;
    if dims != 2 && dims != 3 {
        return Err(bad(format!("invalid dims = {dims}: use 2 or 3")));
    }
    ppstencil::solver::cfl_limit_in(order, dims as usize).py()
}
