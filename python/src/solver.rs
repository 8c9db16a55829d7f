//! One shot from Python, step by step: [`Simulation`] for users' own time loops, and the
//! helpers the many-shot [`crate::shots::run`] shares with it (warnings, point arrays).

use crate::args::{self, Opts, Setup};
use crate::engine::{advance, Advance, Data, Engine};
use crate::errors::{bad, Error, OrPy};
use numpy::PyArray1;
use numpy::PyArrayMethods;
use ppstencil::RunStats;
use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use std::ffi::CString;

pyo3::create_exception!(
    ppstencil,
    GridWarning,
    PyUserWarning,
    "What the grid cannot carry (the run is still valid): a wavelet with fewer than 2 grid \
     points per wavelength or above the time step's Nyquist frequency, a source or receivers \
     inside the absorbing layer."
);

/// Issues each text as a `ppstencil.GridWarning`.
pub(crate) fn warn_all(py: Python<'_>, texts: &[String]) -> PyResult<()> {
    let category = py.get_type::<GridWarning>();
    for t in texts {
        let msg = CString::new(t.replace('\0', " ")).expect("no NUL left");
        PyErr::warn(py, category.as_any(), &msg, 2)?;
    }
    Ok(())
}

/// Grid points as an int64 array of shape `(n, dims)`, axes `(z, x)` or `(z, y, x)`.
pub(crate) fn int_array<'py>(
    py: Python<'py>,
    points: &[[usize; 3]],
    dims: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let flat: Vec<i64> = points
        .iter()
        .flat_map(|p| {
            if dims == 3 {
                vec![p[0] as i64, p[1] as i64, p[2] as i64]
            } else {
                vec![p[0] as i64, p[2] as i64]
            }
        })
        .collect();
    Ok(PyArray1::from_vec(py, flat)
        .reshape(vec![points.len(), dims])?
        .into_any())
}

/// One shot of the acoustic wave solver, advanced step by step: the library's
/// ``WaveSimulator`` (``prepare``, ``step``, ``finish``) for your own time loop.
///
/// The run is prepared when the object is made (every parameter checked, the fields
/// allocated and zeroed); :meth:`step` advances it, :attr:`wavefield` reads the pressure
/// between steps; after the last of the ``nt`` steps (or :meth:`finish`) the
/// :attr:`seismogram` is ready. The GIL is released while steps run; Ctrl-C raises
/// ``KeyboardInterrupt`` between blocks of steps, with the steps run so far kept.
///
/// Parameters (keyword-only after ``velocity``; units in brackets)
/// ----------------------------------------------------------------
/// velocity : numpy.ndarray
///     Velocity model [m/s], float32 or float64, C-contiguous, shape ``(nz, nx)`` (2D) or
///     ``(nz, ny, nx)`` (3D); z is depth (rows), x the fastest axis. Every value finite and
///     > 0. Read in place and copied once into the run's precision.
/// dh : float
///     Grid spacing [m], the same along every axis.
/// nt : int
///     Number of time steps.
/// source : sequence of int
///     Source grid point ``(z, x)`` or ``(z, y, x)``; at least ``space_order / 2`` cells from
///     every side.
/// receivers : array_like of int, optional
///     Receiver grid points, shape ``(n, 2)`` / ``(n, 3)`` (or one point); recorded after
///     every step, in this order.
/// dt : float, optional
///     Time step [s]. Default: ``cfl * dh / max(velocity)``.
/// cfl : float, optional
///     CFL number ``max(velocity) * dt / dh`` used when ``dt`` is not given; default half
///     the scheme's stability limit (:func:`cfl_limit`). Give ``dt`` or ``cfl``, not both.
/// fpeak : float
///     Peak frequency of the Ricker wavelet [Hz] (default 10).
/// boundary : {"pml", "sponge", "rigid"}
///     The grid's edge: a convolutional PML (default), a sponge (damping layer), or the
///     rigid, reflecting border.
/// absorb : int, optional
///     Width of the absorbing layer [cells], inside the grid, on every side; default 20
///     with "pml" or "sponge"; none with "rigid".
/// space_order : int
///     Even order of the finite differences, 2 to 16 (default 4).
/// kernels : {"fused", "split"}
///     One fused kernel per step (default) or the paper's four (order 4 only); the same
///     results.
/// source_mode : {"set", "add"}
///     "set" (default, the paper's): the source point is set to the Ricker wavelet before
///     each step; "add": a Ricker delayed by ``source_delay`` is injected as a physical
///     point source (amplitudes independent of the grid).
/// source_delay : float, optional
///     Delay of the added wavelet's peak [s] (default ``1.5 / fpeak``); "add" only.
/// pml_r, pml_degree, pml_alpha : float, optional
///     The PML's target reflection coefficient (default 1e-4), damping profile degree
///     (default 2) and frequency term alpha at its inner edge [1/s] (default ``pi * fpeak``).
/// precision : {"f32", "f64"}
///     Floating-point type of the run and of the arrays it returns (default "f32").
/// backend : {"rayon", "serial", "cuda", "hip"}
///     Where the kernels run (default "rayon": every core). "cuda" and "hip" need a build
///     with that feature (``ppstencil.BACKENDS_BUILT`` lists this build's).
/// threads : int, optional
///     Threads of a private rayon pool (rayon only; default: the global pool, one per core).
/// time_block : str or int
///     Temporal blocking: "auto" (default: where the fields exceed the last-level cache),
///     "off", a number of steps per block, "K:B" or "K:BxW". Results are the same bit for
///     bit either way.
/// numerics : {"exact", "fast"}
///     Host kernels' arithmetic: "exact" (default: every operation rounded as written,
///     bit-identical on every CPU and backend) or "fast" (fused multiply-adds and the
///     widest vectors, within a few units in the last place).
/// subnormals : {"flush", "keep"}
///     Subnormal numbers flushed to zero (default; a wave's decaying tails cost nothing) or
///     kept (IEEE 754).
///
/// Raises
/// ------
/// ValueError
///     Bad input (the message names the argument, its valid range and the fix).
/// ppstencil.Error
///     A backend this build does not have, or no device for it.
#[pyclass(module = "ppstencil")]
pub struct Simulation {
    engine: Box<dyn Engine>,
    shape: Vec<usize>,
    receivers: Vec<[usize; 3]>,
    source: [usize; 3],
    precision: &'static str,
    backend: String,
    threads: Option<usize>,
    warnings: Vec<String>,
    stats: Option<RunStats>,
}

/// `dims` in words for messages.
pub(crate) fn order_words(dims: usize) -> &'static str {
    if dims == 3 {
        "(z, y, x)"
    } else {
        "(z, x)"
    }
}

impl Simulation {
    fn dims(&self) -> usize {
        self.shape.len()
    }

    fn steps_total(&self) -> usize {
        self.engine.config().nt
    }

    /// Refuses calls that need a run in progress once it has finished.
    fn running(&self, call: &str) -> PyResult<()> {
        if self.stats.is_some() {
            return Err(Error::new_err(format!(
                "Simulation.{call}: the run is finished ({} of nt = {} steps ran); call reset() to start over",
                self.engine.steps_done(),
                self.steps_total()
            )));
        }
        Ok(())
    }

    /// Runs to `target` steps (finishing the run at `nt`), keeping the snapshots asked for.
    fn go(
        &mut self,
        py: Python<'_>,
        target: usize,
        snapshots: &[usize],
        progress: Option<&Py<PyAny>>,
    ) -> PyResult<Vec<Data>> {
        let mut frames = Vec::new();
        let nt = self.steps_total();
        let result = advance(
            py,
            self.engine.as_mut(),
            Advance {
                target,
                snapshots,
                frames: &mut frames,
                progress: progress.map(|f| (f, 0, nt)),
            },
        );
        result?;
        if self.engine.steps_done() == self.steps_total() {
            let engine = self.engine.as_mut();
            self.stats = Some(py.detach(move || engine.finish()).py()?);
        }
        Ok(frames)
    }
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (velocity, *, dh, nt, source, receivers=None, dt=None, cfl=None,
        fpeak=10.0, boundary="pml", absorb=None, space_order=4, kernels="fused",
        source_mode="set", source_delay=None, pml_r=None, pml_degree=None, pml_alpha=None,
        precision="f32", backend="rayon", threads=None, time_block=None, numerics="exact",
        subnormals="flush"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        velocity: &Bound<'_, PyAny>,
        dh: f64,
        nt: i64,
        source: &Bound<'_, PyAny>,
        receivers: Option<&Bound<'_, PyAny>>,
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
    ) -> PyResult<Self> {
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
        let setup = args::setup(velocity, &opts)?;
        let dims = setup.dims();
        let src = args::points(source, dims, "source")?;
        let [src] = src[..] else {
            return Err(bad(format!(
                "invalid source: a Simulation has one source {}, got {} points; use ppstencil.run(..., sources=...) for many shots",
                order_words(dims),
                src.len()
            )));
        };
        let config = setup.shot(src);
        setup.check_shot(&config)?;
        let warnings = Setup::warnings(&config);
        let Setup {
            shape,
            model,
            space,
            precision,
            backend,
            receivers,
            ..
        } = setup;
        let threads = space.threads();
        let mut engine = space.engine(config, model)?;
        {
            let e = engine.as_mut();
            py.detach(move || e.prepare()).py()?;
        }
        warn_all(py, &warnings)?;
        Ok(Simulation {
            engine,
            shape,
            receivers,
            source: src,
            precision,
            backend,
            threads,
            warnings,
            stats: None,
        })
    }

    /// step(n=1)
    ///
    /// Runs ``n`` more time steps (GIL released; blocked in time where the run is) and
    /// returns the number of steps done. After step ``nt`` the run is finished: the
    /// :attr:`seismogram` is ready and further steps raise.
    #[pyo3(signature = (n=1))]
    fn step(&mut self, py: Python<'_>, n: i64) -> PyResult<usize> {
        self.running("step")?;
        let left = self.steps_total() - self.engine.steps_done();
        let n = args::whole("n", n, 1, "run at least 1 step")?;
        if n > left {
            return Err(bad(format!(
                "invalid n = {n}: only {left} of nt = {} steps are left",
                self.steps_total()
            )));
        }
        let target = self.engine.steps_done() + n;
        self.go(py, target, &[], None)?;
        Ok(self.engine.steps_done())
    }

    /// run(snapshots=None, progress=None)
    ///
    /// Runs the remaining steps and finishes the run.
    ///
    /// Parameters
    /// ----------
    /// snapshots : sequence of int, optional
    ///     Steps (1 to ``nt``) after which to keep a copy of the wavefield; steps already
    ///     run are skipped.
    /// progress : callable, optional
    ///     ``progress(steps_done, nt)``, called after every step (every block of steps in a
    ///     blocked run). An exception it raises stops the run and is raised here. It must
    ///     not use this simulation.
    ///
    /// Returns
    /// -------
    /// numpy.ndarray or None
    ///     The snapshots, shape ``(len(steps), *shape)``, or None without ``snapshots``.
    #[pyo3(signature = (snapshots=None, progress=None))]
    fn run<'py>(
        &mut self,
        py: Python<'py>,
        snapshots: Option<&Bound<'py, PyAny>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.running("run")?;
        let steps = args::snapshot_steps(snapshots, self.steps_total())?;
        let done = self.engine.steps_done();
        let steps: Vec<usize> = steps.into_iter().filter(|&s| s > done).collect();
        let frames = self.go(py, self.steps_total(), &steps, progress.as_ref())?;
        if snapshots.is_none_or(|s| s.is_none()) {
            return Ok(None);
        }
        let mut shape = vec![frames.len()];
        shape.extend(&self.shape);
        let f64s = self.precision == "f64";
        Ok(Some(Data::concat(frames, f64s).into_py(py, &shape)?))
    }

    /// finish()
    ///
    /// Ends the run before step ``nt``: the :attr:`seismogram` holds the steps run so far
    /// and :attr:`wavefield` stays the last one. (Reaching ``nt`` finishes by itself.)
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        self.running("finish")?;
        let engine = self.engine.as_mut();
        self.stats = Some(py.detach(move || engine.finish()).py()?);
        Ok(())
    }

    /// reset()
    ///
    /// Starts the run over from step 0 (zero wavefield), with the same parameters.
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        let engine = self.engine.as_mut();
        py.detach(move || engine.prepare()).py()?;
        self.stats = None;
        Ok(())
    }

    /// The pressure after the steps run so far (zero before the first), a new array of
    /// :attr:`shape` in the run's precision.
    #[getter]
    fn wavefield<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.wavefield().py()?.into_py(py, &self.shape)
    }

    /// The pressure one step before :attr:`wavefield` (the scheme's second time level)
    /// while the run is in progress; None once it is finished.
    #[getter]
    fn previous_wavefield<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.stats.is_some() {
            return Ok(None);
        }
        match self.engine.previous_wavefield() {
            Some(d) => Ok(Some(d.py()?.into_py(py, &self.shape)?)),
            None => Ok(None),
        }
    }

    /// The traces at the receivers, shape ``(steps, receivers)``; sample ``k`` is the
    /// pressure after step ``k + 1`` (time ``(k + 1) * dt``). Ready once the run is
    /// finished (the library hands the traces out at the end of a run).
    #[getter]
    fn seismogram<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.stats.is_none() {
            return Err(Error::new_err(format!(
                "Simulation.seismogram: the run is in progress ({} of nt = {} steps); the traces are ready once it is finished: step to nt, or call finish()",
                self.engine.steps_done(),
                self.steps_total()
            )));
        }
        let data = self
            .engine
            .seismogram()
            .ok_or_else(|| Error::new_err("the finished run left no seismogram"))?;
        let steps = self.engine.steps_done();
        data.into_py(py, &[steps, self.receivers.len()])
    }

    /// The velocity model the run uses [m/s], a new array in the run's precision.
    #[getter]
    fn velocity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.velocity().py()?.into_py(py, &self.shape)
    }

    /// Time steps run (``nt`` once the run is complete).
    #[getter]
    fn steps_done(&self) -> usize {
        self.engine.steps_done()
    }

    /// Whether the run is finished (step ``nt`` reached, or :meth:`finish` called).
    #[getter]
    fn finished(&self) -> bool {
        self.stats.is_some()
    }

    /// Number of time steps.
    #[getter]
    fn nt(&self) -> usize {
        self.engine.config().nt
    }

    /// Time step [s] (given, or derived from the CFL number).
    #[getter]
    fn dt(&self) -> f64 {
        self.engine.config().dt
    }

    /// Grid spacing [m].
    #[getter]
    fn dh(&self) -> f64 {
        self.engine.config().dh
    }

    /// The grid: ``(nz, nx)`` or ``(nz, ny, nx)``.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    /// 2 or 3.
    #[getter]
    fn ndim(&self) -> usize {
        self.dims()
    }

    /// The source point, ``(z, x)`` or ``(z, y, x)``.
    #[getter]
    fn source(&self) -> Vec<usize> {
        let [z, y, x] = self.source;
        if self.dims() == 3 {
            vec![z, y, x]
        } else {
            vec![z, x]
        }
    }

    /// The receivers, an int64 array of shape ``(n, 2)`` or ``(n, 3)``.
    #[getter]
    fn receivers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        int_array(py, &self.receivers, self.dims())
    }

    /// CFL number ``max(velocity) * dt / dh``.
    #[getter]
    fn cfl(&self) -> PyResult<f64> {
        let v = self.engine.velocity().py()?;
        let vmax = match v {
            Data::F32(v) => v.iter().fold(0.0f64, |m, &x| m.max(x as f64)),
            Data::F64(v) => v.iter().fold(0.0f64, |m, &x| m.max(x)),
        };
        let c = self.engine.config();
        Ok(vmax * c.dt / c.dh)
    }

    /// ``"f32"`` or ``"f64"``.
    #[getter]
    fn precision(&self) -> &'static str {
        self.precision
    }

    /// The backend's name.
    #[getter]
    fn backend(&self) -> String {
        self.backend.clone()
    }

    /// Threads the kernels run on (None on a GPU).
    #[getter]
    fn threads(&self) -> Option<usize> {
        self.threads
    }

    /// What the time loop does about temporal blocking, in the library's words.
    #[getter]
    fn blocking(&self) -> Option<String> {
        self.engine.blocking()
    }

    /// What the grid cannot carry (also issued as ``ppstencil.GridWarning``).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// Wall time [s] of the finished run, from its preparation (None while in progress).
    #[getter]
    fn wall_time_s(&self) -> Option<f64> {
        self.stats.map(|s| s.wall.as_secs_f64())
    }

    fn __repr__(&self) -> String {
        format!(
            "<ppstencil.Simulation {}D {:?}, step {} of {}, {} on {}>",
            self.dims(),
            self.shape,
            self.engine.steps_done(),
            self.steps_total(),
            self.precision,
            self.backend
        )
    }
}
