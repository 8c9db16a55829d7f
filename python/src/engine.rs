//! One shot's simulator with its backend, precision and dimensionality erased: the library's
//! `WaveSimulator<E, T, D>` behind the [`Engine`] trait, so that the Python classes hold one
//! `Box<dyn Engine>` whatever the options chose. Also the loop that advances an engine with
//! the GIL released ([`advance`]).

#[cfg(not(all(feature = "cuda", feature = "hip")))]
use crate::errors::to_py;
use crate::errors::OrPy;
use numpy::{PyArray1, PyArrayMethods};
use ppstencil::solver::{Blocking, Dims, WaveKernels};
use ppstencil::{
    ExecutionSpace, MemSpaceHost, Rayon, Real, RunStats, ScalarField, Serial, WaveConfig,
    WaveSimulator,
};
use pyo3::prelude::*;
use std::any::Any;
use std::time::{Duration, Instant};

/// Host values of the run's element type: what goes back to Python as a numpy array.
pub enum Data {
    /// float32 values.
    F32(Vec<f32>),
    /// float64 values.
    F64(Vec<f64>),
}

impl Data {
    /// The values as a numpy array of `shape` (the vector becomes the array's memory: no
    /// copy).
    pub fn into_py<'py>(self, py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Data::F32(v) => PyArray1::from_vec(py, v)
                .reshape(shape.to_vec())?
                .into_any(),
            Data::F64(v) => PyArray1::from_vec(py, v)
                .reshape(shape.to_vec())?
                .into_any(),
        })
    }

    /// The parts one after another (the parts all have the same element type).
    pub fn concat(mut parts: Vec<Data>, f64s: bool) -> Data {
        if parts.len() == 1 {
            return parts.pop().expect("one part");
        }
        if f64s {
            let mut out = Vec::new();
            for p in parts {
                if let Data::F64(v) = p {
                    out.extend(v);
                }
            }
            Data::F64(out)
        } else {
            let mut out = Vec::new();
            for p in parts {
                if let Data::F32(v) = p {
                    out.extend(v);
                }
            }
            Data::F32(out)
        }
    }
}

/// The element types a run has: f32 and f64.
pub trait Elem: Real {
    /// Wraps values as [`Data`].
    fn data(v: Vec<Self>) -> Data;
}

impl Elem for f32 {
    fn data(v: Vec<f32>) -> Data {
        Data::F32(v)
    }
}

impl Elem for f64 {
    fn data(v: Vec<f64>) -> Data {
        Data::F64(v)
    }
}

/// A run's velocity model in its element type, row-major.
#[derive(Clone)]
pub enum Model {
    /// For an f32 run.
    F32(Vec<f32>),
    /// For an f64 run.
    F64(Vec<f64>),
}

/// One shot's simulator, whatever its backend, precision and dimensionality.
pub trait Engine: Send + Sync {
    /// The parameters.
    fn config(&self) -> &WaveConfig;
    /// Starts (or starts over) the run: `WaveSimulator::prepare`.
    fn prepare(&mut self) -> ppstencil::Result<()>;
    /// Steps run since `prepare` (0 once finished: see [`finished`](Self::finished)).
    fn steps_done(&self) -> usize;
    /// Runs up to `k` steps as one block (`WaveSimulator::step_block`).
    fn step_block(&mut self, k: usize) -> ppstencil::Result<()>;
    /// Steps per block of the run's temporal blocking (1 when unblocked).
    fn depth(&self) -> usize;
    /// Ends the run: `WaveSimulator::finish`.
    fn finish(&mut self) -> ppstencil::Result<RunStats>;
    /// A host copy of the pressure (after the last step, or the finished run's final one).
    fn wavefield(&self) -> ppstencil::Result<Data>;
    /// A host copy of the pressure one step earlier, while the run is prepared.
    fn previous_wavefield(&self) -> Option<ppstencil::Result<Data>>;
    /// The finished run's traces (`steps × receivers`).
    fn seismogram(&self) -> Option<Data>;
    /// What the time loop does about temporal blocking, in the library's words.
    fn blocking(&self) -> Option<String>;
    /// A host copy of the velocity model the run uses.
    fn velocity(&self) -> ppstencil::Result<Data>;
}

/// The library's simulator behind [`Engine`].
struct Sim<E: ExecutionSpace, T: Elem, const D: usize>
where
    Dims<D>: WaveKernels<D>,
{
    sim: WaveSimulator<E, T, D>,
    /// Steps of a finished run (the library's counter is 0 once finished).
    finished: Option<usize>,
}

impl<E: ExecutionSpace, T: Elem, const D: usize> Engine for Sim<E, T, D>
where
    Dims<D>: WaveKernels<D>,
    WaveSimulator<E, T, D>: Send + Sync,
{
    fn config(&self) -> &WaveConfig {
        self.sim.config()
    }

    fn prepare(&mut self) -> ppstencil::Result<()> {
        self.finished = None;
        self.sim.prepare()
    }

    fn steps_done(&self) -> usize {
        self.finished.unwrap_or_else(|| self.sim.steps_done())
    }

    fn step_block(&mut self, k: usize) -> ppstencil::Result<()> {
        self.sim.step_block(k).map(|_| ())
    }

    fn depth(&self) -> usize {
        match self.sim.blocking() {
            Some(Blocking::On(plan)) => plan.depth.max(1),
            _ => 1,
        }
    }

    fn finish(&mut self) -> ppstencil::Result<RunStats> {
        let stats = self.sim.finish()?;
        self.finished = Some(stats.steps);
        Ok(stats)
    }

    fn wavefield(&self) -> ppstencil::Result<Data> {
        Ok(T::data(self.sim.wavefield_host()?.into_vec()))
    }

    fn previous_wavefield(&self) -> Option<ppstencil::Result<Data>> {
        self.sim
            .previous_wavefield()
            .map(|p| p.to_host().map(|h| T::data(h.into_vec())))
    }

    fn seismogram(&self) -> Option<Data> {
        self.sim.seismogram().map(|s| T::data(s.data.clone()))
    }

    fn blocking(&self) -> Option<String> {
        self.sim.blocking().map(|b| b.to_string())
    }

    fn velocity(&self) -> ppstencil::Result<Data> {
        Ok(T::data(self.sim.velocity_host()?.into_vec()))
    }
}

/// `host` in `M`: moved when `M` is host memory (no copy), copied to the device otherwise.
fn into_space<M: ppstencil::MemorySpace, T: Real, const D: usize>(
    host: ScalarField<MemSpaceHost, T, D>,
) -> ppstencil::Result<ScalarField<M, T, D>> {
    let boxed: Box<dyn Any> = Box::new(host);
    match boxed.downcast::<ScalarField<M, T, D>>() {
        Ok(field) => Ok(*field),
        Err(boxed) => {
            let host = boxed
                .downcast::<ScalarField<MemSpaceHost, T, D>>()
                .expect("the field boxed above");
            ScalarField::from_host(&host)
        }
    }
}

/// A simulator of `config` on `space` whose velocity model is `values` (row-major, of the
/// config's shape). The model is handed to the library as it is
/// (`WaveSimulator::set_velocity`): on the host the vector becomes the run's velocity field.
fn make<E: ExecutionSpace, T: Elem, const D: usize>(
    space: E,
    config: WaveConfig,
    values: Vec<T>,
) -> ppstencil::Result<Box<dyn Engine>>
where
    Dims<D>: WaveKernels<D>,
    WaveSimulator<E, T, D>: Send + Sync,
{
    let full = [config.nz, config.ny, config.nx];
    // [nz, nx] in 2D, [nz, ny, nx] in 3D.
    let shape: [usize; D] = std::array::from_fn(|a| if D == 3 { full[a] } else { full[2 * a] });
    let host = ScalarField::<MemSpaceHost, T, D>::from_vec_shape(shape, values)?;
    let mut sim = WaveSimulator::<E, T, D>::with_config(space, config);
    sim.set_velocity(into_space::<E::Memory, T, D>(host)?)?;
    Ok(Box::new(Sim {
        sim,
        finished: None,
    }))
}

/// Where a run runs.
#[derive(Clone)]
pub enum Space {
    /// One thread.
    Serial,
    /// A rayon pool (the global one, or a private one of `threads` threads).
    Rayon(Rayon),
    /// An NVIDIA GPU (a build with the `cuda` feature).
    #[cfg(feature = "cuda")]
    Cuda(ppstencil::Cuda),
    /// An AMD GPU (a build with the `hip` feature).
    #[cfg(feature = "hip")]
    Hip(ppstencil::Hip),
}

impl Space {
    /// The backend named `name` (`serial`, `rayon`, `cuda`, `hip`); `threads` for rayon.
    pub fn open(name: &str, threads: Option<usize>) -> PyResult<Space> {
        match name {
            "serial" => Ok(Space::Serial),
            "rayon" => Ok(Space::Rayon(match threads {
                Some(n) => Rayon::with_threads(n).py()?,
                None => Rayon::new(),
            })),
            #[cfg(feature = "cuda")]
            "cuda" => Ok(Space::Cuda(ppstencil::Cuda::new().py()?)),
            #[cfg(not(feature = "cuda"))]
            "cuda" => Err(to_py(
                ppstencil::Cuda::new().expect_err("a build without CUDA has no device"),
            )),
            #[cfg(feature = "hip")]
            "hip" => Ok(Space::Hip(ppstencil::Hip::new().py()?)),
            #[cfg(not(feature = "hip"))]
            "hip" => Err(to_py(
                ppstencil::Hip::new().expect_err("a build without HIP has no device"),
            )),
            other => Err(crate::errors::bad(format!(
                "invalid backend = {other:?}: use \"serial\", \"rayon\", \"cuda\" or \"hip\""
            ))),
        }
    }

    /// Threads kernels run on (`None` for a GPU).
    pub fn threads(&self) -> Option<usize> {
        match self {
            Space::Serial => Some(1),
            Space::Rayon(r) => Some(r.threads()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// A simulator of `config` (2D or 3D after `config.ny`) with velocity model `model`.
    pub fn engine(&self, config: WaveConfig, model: Model) -> PyResult<Box<dyn Engine>> {
        fn in_space<E: ExecutionSpace>(
            space: E,
            config: WaveConfig,
            model: Model,
        ) -> ppstencil::Result<Box<dyn Engine>>
        where
            WaveSimulator<E, f32, 2>: Send + Sync,
            WaveSimulator<E, f64, 2>: Send + Sync,
            WaveSimulator<E, f32, 3>: Send + Sync,
            WaveSimulator<E, f64, 3>: Send + Sync,
        {
            match (model, config.dims()) {
                (Model::F32(v), 2) => make::<E, f32, 2>(space, config, v),
                (Model::F64(v), 2) => make::<E, f64, 2>(space, config, v),
                (Model::F32(v), _) => make::<E, f32, 3>(space, config, v),
                (Model::F64(v), _) => make::<E, f64, 3>(space, config, v),
            }
        }
        match self {
            Space::Serial => in_space(Serial, config, model),
            Space::Rayon(r) => in_space(r.clone(), config, model),
            #[cfg(feature = "cuda")]
            Space::Cuda(c) => in_space(*c, config, model),
            #[cfg(feature = "hip")]
            Space::Hip(h) => in_space(*h, config, model),
        }
        .py()
    }
}

/// How often a long run re-takes the GIL to look for Ctrl-C (and other signals) when no
/// progress callback is given, here and in the adjoint functions. Taking the GIL every step
/// would make the run wait for other Python threads at every step.
pub const SIGNAL_CHECK_EVERY: Duration = Duration::from_millis(50);

/// What to do while advancing an engine.
pub struct Advance<'a> {
    /// Run until this many steps are done.
    pub target: usize,
    /// Steps (counted from 1) after which the wavefield is copied into `frames`, ascending.
    pub snapshots: &'a [usize],
    /// The copies.
    pub frames: &'a mut Vec<Data>,
    /// Called as `progress(offset + steps_done, total)` after each block of steps (each
    /// step when the run is not blocked): the callback, `offset` and `total`.
    pub progress: Option<(&'a Py<PyAny>, usize, usize)>,
}

/// Advances `engine` to `what.target` steps with the GIL released, in blocks of the run's
/// temporal blocking that end at every snapshot step; between blocks, at most every
/// [`SIGNAL_CHECK_EVERY`] (and after every block with a progress callback), the GIL is taken
/// back briefly to check for signals (Ctrl-C raises `KeyboardInterrupt` there, the steps run
/// so far stay done) and to call the callback. Exceptions from the callback stop the run
/// and are raised.
pub fn advance(py: Python<'_>, engine: &mut dyn Engine, what: Advance<'_>) -> PyResult<()> {
    let Advance {
        target,
        snapshots,
        frames,
        progress,
    } = what;
    py.detach(move || -> PyResult<()> {
        let mut next = snapshots.partition_point(|&s| s <= engine.steps_done());
        let mut checked = Instant::now();
        while engine.steps_done() < target {
            let done = engine.steps_done();
            let mut k = engine.depth().min(target - done);
            if let Some(&s) = snapshots.get(next) {
                k = k.min(s - done);
            }
            engine.step_block(k).py()?;
            let done = engine.steps_done();
            if snapshots.get(next) == Some(&done) {
                frames.push(engine.wavefield().py()?);
                next += 1;
            }
            if progress.is_some() || checked.elapsed() >= SIGNAL_CHECK_EVERY || done == target {
                Python::attach(|py| -> PyResult<()> {
                    py.check_signals()?;
                    if let Some((f, offset, total)) = progress {
                        f.call1(py, (offset + done, total))?;
                    }
                    Ok(())
                })?;
                checked = Instant::now();
            }
        }
        Ok(())
    })
}
