//! The adjoint-state functions over the library's `WaveOperator`: `forward` (wavelet →
//! traces), `adjoint` (traces → wavelet, its exact transpose), `gradient` (the misfit and
//! its gradient with respect to squared slowness, summed over shots) and `migrate` (the
//! RTM image), on the host backends, with the GIL released while they run.

use crate::args::{self, Opts, Setup};
use crate::engine::{Data, Elem, Model, Space};
use crate::errors::{bad, OrPy};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use ppstencil::solver::{Dims, Shot, Storage, WaveKernels, WaveOperator};
use ppstencil::{ExecutionSpace, MemSpaceHost, ScalarField, Serial, WaveConfig};
use pyo3::prelude::*;

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

/// Runs `job` on the operator of `config` with `setup`'s model and space, the GIL released.
fn dispatch<J: OpJob>(
    py: Python<'_>,
    setup: Setup,
    config: WaveConfig,
    job: J,
) -> PyResult<J::Out> {
    fn build<E: ExecutionSpace, T: Elem, const D: usize, J: OpJob>(
        space: E,
        config: WaveConfig,
        values: Vec<T>,
        job: J,
    ) -> ppstencil::Result<J::Out>
    where
        Dims<D>: WaveKernels<D>,
    {
        let full = [config.nz, config.ny, config.nx];
        let shape: [usize; D] = std::array::from_fn(|a| if D == 3 { full[a] } else { full[2 * a] });
        let v = ScalarField::<MemSpaceHost, T, D>::from_vec_shape(shape, values)?;
        let op = WaveOperator::<E, T, D>::with_velocity(space, config, &v)?;
        job.run(&op)
    }
    fn in_space<E: ExecutionSpace, J: OpJob>(
        space: E,
        config: WaveConfig,
        model: Model,
        job: J,
    ) -> ppstencil::Result<J::Out> {
        match (model, config.dims()) {
            (Model::F32(v), 2) => build::<E, f32, 2, J>(space, config, v, job),
            (Model::F64(v), 2) => build::<E, f64, 2, J>(space, config, v, job),
            (Model::F32(v), _) => build::<E, f32, 3, J>(space, config, v, job),
            (Model::F64(v), _) => build::<E, f64, 3, J>(space, config, v, job),
        }
    }
    let Setup { space, model, .. } = setup;
    match space {
        Space::Serial => py.detach(move || in_space(Serial, config, model, job)).py(),
        Space::Rayon(r) => py.detach(move || in_space(r, config, model, job)).py(),
        #[allow(unreachable_patterns)]
        _ => Err(bad(
            "invalid backend: the adjoint functions run on the host; use backend=\"serial\" or \"rayon\"",
        )),
    }
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
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, source, wavelet, receivers, boundary="sponge",
    absorb=None, space_order=4, precision="f64", backend="rayon", threads=None))]
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
    )?;
    d.into_py(py, &[nt, nrec])
}

/// `F* d`: the exact adjoint of :func:`forward`: the wavelet-shaped ``(nt,)`` result of the
/// traces ``traces`` ``(nt, receivers)``, so that ``<F m, d> = <m, F* d>`` to rounding.
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, source, traces, receivers, boundary="sponge",
    absorb=None, space_order=4, precision="f64", backend="rayon", threads=None))]
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
        None => Storage::Full,
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
    let (misfit, field) = dispatch(py, setup, config, job)?;
    Ok((misfit, field.into_py(py, &grid)?))
}

/// The misfit ``J = ½ Σ ‖F m − d_obs‖²`` over the shots and its gradient with respect to
/// the squared slowness ``1/v²`` (s²/m²) at every grid point, by the adjoint-state method,
/// summed over the shots in order. ``sources`` ``(shots, 2|3)``; ``observed`` ``(shots, nt,
/// receivers)`` float64; ``wavelets`` ``(shots, nt)`` (default: the simulator's additive
/// Ricker of ``fpeak``, ``source_delay``); ``memory``: bytes for the forward wavefield
/// (binomial checkpoints when every step does not fit; the same result bit for bit).
/// Returns ``(misfit, gradient)``.
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, sources, observed, receivers, wavelets=None,
    fpeak=10.0, source_delay=None, memory=None, boundary="sponge", absorb=None,
    space_order=4, precision="f64", backend="rayon", threads=None))]
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
    )
}

/// The reverse-time-migrated image (the grid's shape): each shot's unexplained data
/// ``d_obs − F m`` propagated back and cross-correlated at zero lag with the source
/// wavefield, summed over the shots in order; what ``ppwave migrate`` writes (without its
/// ``--laplacian``). Arguments as :func:`gradient`.
#[pyfunction]
#[pyo3(signature = (velocity, *, dh, dt, sources, observed, receivers, wavelets=None,
    fpeak=10.0, source_delay=None, memory=None, boundary="sponge", absorb=None,
    space_order=4, precision="f64", backend="rayon", threads=None))]
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
    )?;
    Ok(image)
}
