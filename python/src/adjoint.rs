//! The adjoint-state functions over the library's `WaveOperator`: `forward` (wavelet →
//! traces), `adjoint` (traces → wavelet, its exact transpose), `gradient` (the misfit and
//! its gradient with respect to squared slowness, summed over shots) and `migrate` (the
//! RTM image), on the host backends, with the GIL released while they run and the calling
//! thread answering the operator's monitor: Ctrl-C and the `progress` callback
//! ([`watched`]).

use crate::args::{self, Opts, Setup};
use crate::engine::{Data, Elem, Model, Space, SIGNAL_CHECK_EVERY};
use crate::errors::{bad, OrPy};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use ppstencil::solver::{Dims, Shot, Storage, WaveKernels, WaveOperator};
use ppstencil::{ExecutionSpace, MemSpaceHost, ScalarField, Serial, WaveConfig};
use pyo3::prelude::*;
use std::sync::{mpsc, Mutex, PoisonError};
use std::time::Instant;

/// An operator's monitor (`WaveOperator::set_monitor`), boxed.
type Monitor = Box<dyn Fn(usize) -> ppstencil::Result<()> + Send + Sync>;

/// A computation on an operator, generic in the space, the precision and the dimensions.
trait OpJob: Send {
    /// What it returns.
    type Out: Send;
    /// Runs on `op`.
    fn run<E: ExecutionSpace, T: Elem, const D: usize>(
        self,
        op: &WaveOperator<E, T, D>,
    ) -> ppstencil::Result<Self::Out>
    where
        Dims<D>: WaveKernels<D>;
}

/// Runs `job` on the operator of `config` with `setup`'s model and space, the GIL released,
/// watched as [`watched`] says (`progress`: the callback).
fn dispatch<J: OpJob>(
    py: Python<'_>,
    setup: Setup,
    config: WaveConfig,
    job: J,
    progress: Option<Py<PyAny>>,
) -> PyResult<J::Out> {
    fn build<E: ExecutionSpace, T: Elem, const D: usize, J: OpJob>(
        space: E,
        config: WaveConfig,
        values: Vec<T>,
        job: J,
        monitor: Monitor,
    ) -> ppstencil::Result<J::Out>
    where
        Dims<D>: WaveKernels<D>,
    {
        let full = [config.nz, config.ny, config.nx];
        let shape: [usize; D] = std::array::from_fn(|a| if D == 3 { full[a] } else { full[2 * a] });
        let v = ScalarField::<MemSpaceHost, T, D>::from_vec_shape(shape, values)?;
        let mut op = WaveOperator::<E, T, D>::with_velocity(space, config, &v)?;
        op.set_monitor(monitor);
        job.run(&op)
    }
    fn in_space<E: ExecutionSpace, J: OpJob>(
        space: E,
        config: WaveConfig,
        model: Model,
        job: J,
        monitor: Monitor,
    ) -> ppstencil::Result<J::Out> {
        match (model, config.dims()) {
            (Model::F32(v), 2) => build::<E, f32, 2, J>(space, config, v, job, monitor),
            (Model::F64(v), 2) => build::<E, f64, 2, J>(space, config, v, job, monitor),
            (Model::F32(v), _) => build::<E, f32, 3, J>(space, config, v, job, monitor),
            (Model::F64(v), _) => build::<E, f64, 3, J>(space, config, v, job, monitor),
        }
    }
    let Setup { space, model, .. } = setup;
    match space {
        Space::Serial => watched(py, progress, move |m| in_space(Serial, config, model, job, m)),
        Space::Rayon(r) => watched(py, progress, move |m| in_space(r, config, model, job, m)),
        #[allow(unreachable_patterns)]
        _ => Err(bad(
            "invalid backend: the adjoint functions run on the host; use backend=\"serial\" or \"rayon\"",
        )),
    }
}

/// Runs `work` with the GIL released on a thread of its own, handing it a monitor for its
/// operator. The monitor runs where the space runs the steps (a rayon worker, where Python
/// sees no signals), so it asks the calling thread: every [`SIGNAL_CHECK_EVERY`], and after
/// every step when there is a `progress` callback, the calling thread takes the GIL, checks
/// for signals (Ctrl-C raises `KeyboardInterrupt` there) and calls `progress(steps)`, the
/// call's steps so far. A Python exception there stops the work (the monitor returns
/// `Error::Stopped`) and is raised unchanged in place of the library's error.
fn watched<R: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    work: impl FnOnce(Monitor) -> ppstencil::Result<R> + Send,
) -> PyResult<R> {
    let (ask, asked) = mpsc::channel::<usize>();
    let (answer, answered) = mpsc::channel::<bool>();
    let answered = Mutex::new(answered);
    let every_step = progress.is_some();
    let checked = Mutex::new(Instant::now());
    let monitor: Monitor = Box::new(move |k| {
        let mut last = checked.lock().unwrap_or_else(PoisonError::into_inner);
        if !every_step && last.elapsed() < SIGNAL_CHECK_EVERY {
            return Ok(());
        }
        let receiver = answered.lock().unwrap_or_else(PoisonError::into_inner);
        let go = ask.send(k).is_ok() && receiver.recv() == Ok(true);
        *last = Instant::now();
        if go {
            return Ok(());
        }
        Err(ppstencil::Error::Stopped {
            steps: k,
            reason: "a Python exception (Ctrl-C, or one the progress callback raised)".into(),
        })
    });
    py.detach(move || {
        std::thread::scope(|scope| {
            let worker = scope.spawn(move || work(monitor));
            // The monitor's sender goes with the operator: the loop ends when the work does.
            let mut raised: Option<PyErr> = None;
            while let Ok(k) = asked.recv() {
                if raised.is_none() {
                    raised = Python::attach(|py| -> PyResult<()> {
                        py.check_signals()?;
                        if let Some(f) = &progress {
                            f.call1(py, (k,))?;
                        }
                        Ok(())
                    })
                    .err();
                }
                // The work waits for the answer; it is gone only when it panicked.
                let _ = answer.send(raised.is_none());
            }
            let out = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            match raised {
                Some(e) => Err(e),
                None => out.py(),
            }
        })
    })
}

/// A float64 numpy array's values (C order) and shape; `ValueError` for a NaN or infinity.
fn values(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<(Vec<f64>, Vec<usize>)> {
    let a = obj.cast::<PyArrayDyn<f64>>().map_err(|_| {
        bad(format!(
            "invalid {name}: give a float64 numpy array (np.asarray({name}, dtype=np.float64))"
        ))
    })?;
    let shape = a.shape().to_vec();
    let v = a.to_vec().map_err(|_| {
        bad(format!(
            "invalid {name}: not C-contiguous; pass np.ascontiguousarray({name})"
        ))
    })?;
    if let Some(k) = v.iter().position(|x| !x.is_finite()) {
        return Err(bad(format!(
            "invalid {name}: value {} at flat index {k} is not finite; every value must be",
            v[k]
        )));
    }
    Ok((v, shape))
}

/// The options of the adjoint functions as [`Opts`]: the additive source, fused kernels,
/// one step at a time.
#[allow(clippy::too_many_arguments)]
fn opts<'a, 'py>(
    off: &'a Bound<'py, PyAny>,
    dh: f64,
    dt: f64,
    nt: usize,
    fpeak: f64,
    source_delay: Option<f64>,
    receivers: &'a Bound<'py, PyAny>,
    boundary: &'a str,
    absorb: Option<i64>,
    space_order: i64,
    precision: &'a str,
    backend: &'a str,
    threads: Option<i64>,
) -> Opts<'a, 'py> {
    Opts {
        dh,
        nt: nt as i64,
        dt: Some(dt),
        cfl: None,
        fpeak,
        receivers: Some(receivers),
        boundary,
        absorb,
        space_order,
        kernels: "fused",
        source_mode: "add",
        source_delay,
        pml_r: None,
        pml_degree: None,
        pml_alpha: None,
        precision,
        backend,
        threads,
        time_block: off,
        numerics: "exact",
        subnormals: "flush",
    }
}

/// `F m` or `F* d` of one operator.
struct Apply {
    input: Vec<f64>,
    adjoint: bool,
}

impl OpJob for Apply {
    type Out = Data;
    fn run<E: ExecutionSpace, T: Elem, const D: usize>(
        self,
        op: &WaveOperator<E, T, D>,
    ) -> ppstencil::Result<Data>
    where
        Dims<D>: WaveKernels<D>,
    {
        let x: Vec<T> = self.input.iter().map(|&v| T::lit(v)).collect();
        Ok(T::data(if self.adjoint {
            op.adjoint(&x)?
        } else {
            op.forward(&x)?
        }))
    }
}

/// The misfit and gradient, or the image, over shots.
struct Survey {
    sources: Vec<[usize; 3]>,
    wavelets: Option<Vec<f64>>,
    observed: Vec<f64>,
    storage: Storage,
    image: bool,
}

impl OpJob for Survey {
    type Out = (f64, Data);
    fn run<E: ExecutionSpace, T: Elem, const D: usize>(
        self,
        op: &WaveOperator<E, T, D>,
    ) -> ppstencil::Result<(f64, Data)>
    where
        Dims<D>: WaveKernels<D>,
    {
        let (nt, nrec) = (op.steps(), op.receivers());
        let at = |s: [usize; 3]| -> [usize; D] {
            std::array::from_fn(|a| if D == 3 { s[a] } else { s[2 * a] })
        };
        let mut wavelets = Vec::new();
        for (i, &s) in self.sources.iter().enumerate() {
            wavelets.push(match &self.wavelets {
                Some(w) => w[i * nt..(i + 1) * nt].iter().map(|&v| T::lit(v)).collect(),
                None => op.source_wavelet(at(s))?,
            });
        }
        let observed: Vec<T> = self.observed.iter().map(|&v| T::lit(v)).collect();
        let shots: Vec<Shot<'_, T, D>> = self
            .sources
            .iter()
            .enumerate()
            .map(|(i, &s)| Shot {
                source: at(s),
                wavelet: &wavelets[i],
                observed: &observed[i * nt * nrec..(i + 1) * nt * nrec],
            })
            .collect();
        let r = if self.image {
            op.image_shots(&shots, self.storage)?
        } else {
            op.misfit_gradient_shots(&shots, self.storage)?
        };
        Ok((r.misfit, T::data(r.gradient.into_vec())))
    }
}

/// `F m`: the traces ``(nt, receivers)`` of the wavelet ``wavelet`` (``nt`` values added at
/// ``source`` after each step; float64) on the model ``velocity`` (m/s), with the additive
/// source. Options as :func:`run` (``boundary`` ``"sponge"`` or ``"rigid"``; the PML has no
/// adjoint); ``precision`` ``"f64"`` by default. Equals ``WaveOperator::forward`` bit for bit.
/// ``progress``: called as ``progress(steps)`` with the time steps run so far (``nt`` in
/// all), after every step; Ctrl-C or an exception it raises stops the call and is raised.
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, source, wavelet, receivers, boundary="sponge",
    absorb=None, space_order=4, precision="f64", backend="rayon", threads=None,
    progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn forward<'py>(
    py: Python<'py>,
    velocity: &Bound<'py, PyAny>,
    dh: f64,
    dt: f64,
    source: &Bound<'py, PyAny>,
    wavelet: &Bound<'py, PyAny>,
    receivers: &Bound<'py, PyAny>,
    boundary: &str,
    absorb: Option<i64>,
    space_order: i64,
    precision: &str,
    backend: &str,
    threads: Option<i64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (m, shape) = values(wavelet, "wavelet")?;
    if shape.len() != 1 {
        return Err(bad(format!(
            "invalid wavelet: shape {shape:?}; give nt values (1D)"
        )));
    }
    let off = pyo3::types::PyString::new(py, "off").into_any();
    let o = opts(
        &off,
        dh,
        dt,
        m.len(),
        10.0,
        None,
        receivers,
        boundary,
        absorb,
        space_order,
        precision,
        backend,
        threads,
    );
    let (setup, config) = one_source(velocity, &o, source)?;
    let nrec = setup.receivers.len();
    let nt = m.len();
    let d = dispatch(
        py,
        setup,
        config,
        Apply {
            input: m,
            adjoint: false,
        },
        progress,
    )?;
    d.into_py(py, &[nt, nrec])
}

/// `F* d`: the exact adjoint of :func:`forward`: the wavelet-shaped ``(nt,)`` result of the
/// traces ``traces`` ``(nt, receivers)``, so that ``<F m, d> = <m, F* d>`` to rounding.
/// ``progress`` as :func:`forward`'s (``nt`` steps in all).
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, source, traces, receivers, boundary="sponge",
    absorb=None, space_order=4, precision="f64", backend="rayon", threads=None,
    progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn adjoint<'py>(
    py: Python<'py>,
    velocity: &Bound<'py, PyAny>,
    dh: f64,
    dt: f64,
    source: &Bound<'py, PyAny>,
    traces: &Bound<'py, PyAny>,
    receivers: &Bound<'py, PyAny>,
    boundary: &str,
    absorb: Option<i64>,
    space_order: i64,
    precision: &str,
    backend: &str,
    threads: Option<i64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (d, shape) = values(traces, "traces")?;
    if shape.len() != 2 {
        return Err(bad(format!(
            "invalid traces: shape {shape:?}; give (nt, receivers)"
        )));
    }
    let off = pyo3::types::PyString::new(py, "off").into_any();
    let o = opts(
        &off,
        dh,
        dt,
        shape[0],
        10.0,
        None,
        receivers,
        boundary,
        absorb,
        space_order,
        precision,
        backend,
        threads,
    );
    let (setup, config) = one_source(velocity, &o, source)?;
    check_receivers(&setup, &shape, "traces")?;
    let out = dispatch(
        py,
        setup,
        config,
        Apply {
            input: d,
            adjoint: true,
        },
        progress,
    )?;
    out.into_py(py, &[shape[0]])
}

/// The setup of `o` with the one source `source`.
fn one_source(
    velocity: &Bound<'_, PyAny>,
    o: &Opts<'_, '_>,
    source: &Bound<'_, PyAny>,
) -> PyResult<(Setup, WaveConfig)> {
    let setup = args::setup(velocity, o)?;
    let points = args::points(source, setup.dims(), "source")?;
    let [s] = points.as_slice() else {
        return Err(bad(format!(
            "invalid source: {} points; give one point (z, x) or (z, y, x)",
            points.len()
        )));
    };
    let config = setup.shot(*s);
    setup.check_shot(&config)?;
    Ok((setup, config))
}

/// An error unless the last axis of `shape` is the receivers' number.
fn check_receivers(setup: &Setup, shape: &[usize], name: &str) -> PyResult<()> {
    let nrec = setup.receivers.len();
    if shape.last() != Some(&nrec) {
        return Err(bad(format!(
            "invalid {name}: shape {shape:?} but there are {nrec} receivers; the last axis \
             holds one trace per receiver"
        )));
    }
    Ok(())
}

/// The survey functions' shared body: `gradient` and `migrate`.
#[allow(clippy::too_many_arguments)]
fn survey<'py>(
    py: Python<'py>,
    velocity: &Bound<'py, PyAny>,
    dh: f64,
    dt: f64,
    sources: &Bound<'py, PyAny>,
    observed: &Bound<'py, PyAny>,
    receivers: &Bound<'py, PyAny>,
    wavelets: Option<&Bound<'py, PyAny>>,
    fpeak: f64,
    source_delay: Option<f64>,
    memory: Option<u64>,
    boundary: &str,
    absorb: Option<i64>,
    space_order: i64,
    precision: &str,
    backend: &str,
    threads: Option<i64>,
    image: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(f64, Bound<'py, PyAny>)> {
    let (obs, shape) = values(observed, "observed")?;
    if shape.len() != 3 {
        return Err(bad(format!(
            "invalid observed: shape {shape:?}; give (shots, nt, receivers)"
        )));
    }
    let off = pyo3::types::PyString::new(py, "off").into_any();
    let o = opts(
        &off,
        dh,
        dt,
        shape[1],
        fpeak,
        source_delay,
        receivers,
        boundary,
        absorb,
        space_order,
        precision,
        backend,
        threads,
    );
    let setup = args::setup(velocity, &o)?;
    check_receivers(&setup, &shape, "observed")?;
    let points = args::points(sources, setup.dims(), "sources")?;
    if points.len() != shape[0] {
        return Err(bad(format!(
            "invalid observed: {} shots of data for {} sources; give one (nt, receivers) gather per source",
            shape[0],
            points.len()
        )));
    }
    for &s in &points {
        setup.check_shot(&setup.shot(s))?;
    }
    let wavelets = match wavelets {
        None => None,
        Some(w) => {
            let (w, ws) = values(w, "wavelets")?;
            if ws != [shape[0], shape[1]] {
                return Err(bad(format!(
                    "invalid wavelets: shape {ws:?}; give (shots, nt) = ({}, {})",
                    shape[0], shape[1]
                )));
            }
            Some(w)
        }
    };
    let storage = match memory {
        None => Storage::within_available_memory(),
        Some(bytes) => Storage::Budget { bytes },
    };
    let grid = setup.shape.clone();
    let config = setup.shot(points[0]);
    let job = Survey {
        sources: points,
        wavelets,
        observed: obs,
        storage,
        image,
    };
    let (misfit, field) = dispatch(py, setup, config, job, progress)?;
    Ok((misfit, field.into_py(py, &grid)?))
}

/// The misfit ``J = ½ Σ ‖F m − d_obs‖²`` over the shots and its gradient with respect to
/// the squared slowness ``1/v²`` (s²/m²) at every grid point, by the adjoint-state method,
/// summed over the shots in order. ``sources`` ``(shots, 2|3)``; ``observed`` ``(shots, nt,
/// receivers)`` float64; ``wavelets`` ``(shots, nt)`` (default: the simulator's additive
/// Ricker of ``fpeak``, ``source_delay``); ``memory``: bytes for the forward wavefield
/// (binomial checkpoints when every step does not fit; the same result bit for bit; default:
/// half the memory available when the call starts).
/// ``progress``: called as ``progress(steps)`` after every time step of the call, counting
/// every step of every forward, adjoint and recomputed (checkpoint) sweep of every shot:
/// ``shots × 2 × nt`` with full storage, more with checkpoints. Ctrl-C, or an exception
/// ``progress`` raises, stops the call and is raised. Returns ``(misfit, gradient)``.
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, sources, observed, receivers, wavelets=None,
    fpeak=10.0, source_delay=None, memory=None, boundary="sponge", absorb=None,
    space_order=4, precision="f64", backend="rayon", threads=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn gradient<'py>(
    py: Python<'py>,
    velocity: &Bound<'py, PyAny>,
    dh: f64,
    dt: f64,
    sources: &Bound<'py, PyAny>,
    observed: &Bound<'py, PyAny>,
    receivers: &Bound<'py, PyAny>,
    wavelets: Option<&Bound<'py, PyAny>>,
    fpeak: f64,
    source_delay: Option<f64>,
    memory: Option<u64>,
    boundary: &str,
    absorb: Option<i64>,
    space_order: i64,
    precision: &str,
    backend: &str,
    threads: Option<i64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(f64, Bound<'py, PyAny>)> {
    survey(
        py,
        velocity,
        dh,
        dt,
        sources,
        observed,
        receivers,
        wavelets,
        fpeak,
        source_delay,
        memory,
        boundary,
        absorb,
        space_order,
        precision,
        backend,
        threads,
        false,
        progress,
    )
}

/// The reverse-time-migrated image (the grid's shape): each shot's unexplained data
/// ``d_obs − F m`` propagated back and cross-correlated at zero lag with the source
/// wavefield, summed over the shots in order; what ``ppwave migrate`` writes (without its
/// ``--laplacian``). Arguments as :func:`gradient`.
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, sources, observed, receivers, wavelets=None,
    fpeak=10.0, source_delay=None, memory=None, boundary="sponge", absorb=None,
    space_order=4, precision="f64", backend="rayon", threads=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn migrate<'py>(
    py: Python<'py>,
    velocity: &Bound<'py, PyAny>,
    dh: f64,
    dt: f64,
    sources: &Bound<'py, PyAny>,
    observed: &Bound<'py, PyAny>,
    receivers: &Bound<'py, PyAny>,
    wavelets: Option<&Bound<'py, PyAny>>,
    fpeak: f64,
    source_delay: Option<f64>,
    memory: Option<u64>,
    boundary: &str,
    absorb: Option<i64>,
    space_order: i64,
    precision: &str,
    backend: &str,
    threads: Option<i64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (_, image) = survey(
        py,
        velocity,
        dh,
        dt,
        sources,
        observed,
        receivers,
        wavelets,
        fpeak,
        source_delay,
        memory,
        boundary,
        absorb,
        space_order,
        precision,
        backend,
        threads,
        true,
        progress,
    )?;
    Ok(image)
}
