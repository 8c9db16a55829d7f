//! The Python arguments read into the library's terms: the velocity model (a numpy array,
//! read in place and copied once into the run's precision), grid points (sources,
//! receivers) and the options, into a [`Setup`] with a [`WaveConfig`] for each shot. Bad
//! input raises `ValueError` naming the argument and the fix; the library checks the rest
//! (`WaveConfig::validate_for`, `WaveSimulator::validate`) with its own messages.

use crate::engine::{Model, Space};
use crate::errors::{bad, OrPy};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use ppstencil::solver::{cfl_limit_in, Boundary, PmlParams, SourceMode, TimeBlock};
use ppstencil::{Arithmetic, Numerics, Real, StepKernels, Subnormals, WaveConfig};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

/// Default width of an absorbing layer (cells) when `absorb` is not given.
pub const DEFAULT_ABSORB: usize = 20;

/// Default CFL number, as a fraction of the scheme's stability limit, when `dt` is derived.
pub const DEFAULT_CFL_FRACTION: f64 = 0.5;

/// The options shared by `Simulation` and `run`, as Python gave them.
pub struct Opts<'a, 'py> {
    pub dh: f64,
    pub nt: i64,
    pub dt: Option<f64>,
    pub cfl: Option<f64>,
    pub fpeak: f64,
    pub receivers: Option<&'a Bound<'py, PyAny>>,
    pub boundary: &'a str,
    pub absorb: Option<i64>,
    pub space_order: i64,
    pub kernels: &'a str,
    pub source_mode: &'a str,
    pub source_delay: Option<f64>,
    pub pml_r: Option<f64>,
    pub pml_degree: Option<f64>,
    pub pml_alpha: Option<f64>,
    pub precision: &'a str,
    pub backend: &'a str,
    pub threads: Option<i64>,
    pub time_block: &'a Bound<'py, PyAny>,
    pub numerics: &'a str,
    pub subnormals: &'a str,
}

/// Everything a run needs, checked: the parameters (each shot sets its source with
/// [`Setup::shot`]), the model in the run's precision, and the execution space.
pub struct Setup {
    /// The parameters, without the source.
    pub config: WaveConfig,
    /// The grid: `[nz, nx]` or `[nz, ny, nx]`.
    pub shape: Vec<usize>,
    /// The velocity model, in the run's precision.
    pub model: Model,
    /// Where the run runs.
    pub space: Space,
    /// `"f32"` or `"f64"`.
    pub precision: &'static str,
    /// The backend's name.
    pub backend: String,
    /// Receivers `[z, y, x]` (`y` = 0 in 2D), in trace order.
    pub receivers: Vec<[usize; 3]>,
    /// The model's largest velocity (m/s).
    pub vmax: f64,
}

impl Setup {
    /// The parameters of a shot at `src` (`[z, y, x]`, `y` = 0 in 2D).
    pub fn shot(&self, [z, y, x]: [usize; 3]) -> WaveConfig {
        WaveConfig {
            src_z: z,
            src_y: y,
            src_x: x,
            ..self.config.clone()
        }
    }

    /// 2 or 3.
    pub fn dims(&self) -> usize {
        self.shape.len()
    }

    /// The checks of a shot's parameters that need no model data (the source's position
    /// against the grid and the scheme's border, every option), in the run's precision.
    pub fn check_shot(&self, config: &WaveConfig) -> PyResult<()> {
        // The config's background `vmin` is the model's smallest velocity (see `setup`), so
        // its checks at the largest velocity (the CFL condition above all) are made with a
        // copy whose background is the largest, then its checks at the smallest velocity
        // (coefficients that underflow) with the config itself.
        let at_vmax = WaveConfig {
            vmin: self.vmax,
            ..config.clone()
        };
        for c in [&at_vmax, config] {
            match self.precision {
                "f64" => c.validate_for::<f64>(),
                _ => c.validate_for::<f32>(),
            }
            .py()?;
        }
        Ok(())
    }

    /// What the grid cannot carry for `config` (the library's warnings), as texts naming the
    /// Python arguments.
    pub fn warnings(config: &WaveConfig) -> Vec<String> {
        config
            .warnings()
            .into_iter()
            .map(|(param, text)| match param {
                ppstencil::Param::PeakFrequency => format!("fpeak = {}: {text}", config.fpeak),
                ppstencil::Param::SourceZ
                | ppstencil::Param::SourceX
                | ppstencil::Param::SourceY => {
                    format!("source: {text}")
                }
                other => format!("{other}: {text}"),
            })
            .collect()
    }
}

/// A whole number >= `min` given as a Python int (`ValueError` otherwise, not the
/// `OverflowError` a negative number would raise as an unsigned one).
pub fn whole(name: &str, v: i64, min: i64, what: &str) -> PyResult<usize> {
    if v < min {
        return Err(bad(format!("invalid {name} = {v}: {what}")));
    }
    usize::try_from(v).map_err(|_| bad(format!("invalid {name} = {v}: too large")))
}

/// `[z, y, x]` of flat index `k` of `shape`, written `[z, x]` / `[z, y, x]`.
fn index_words(k: usize, shape: &[usize]) -> String {
    let mut rest = k;
    let mut idx = vec![0; shape.len()];
    for a in (0..shape.len()).rev() {
        idx[a] = rest % shape[a];
        rest /= shape[a];
    }
    let parts: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `src` converted to `T`, with the smallest and largest value; every value must be finite
/// and > 0 (else the error names the first bad one and where). One pass to check (the
/// minimum and maximum of a NaN-free slice tell every bad value), one to convert.
fn convert<S: Copy + Into<f64>, T: Real>(
    src: &[S],
    shape: &[usize],
) -> PyResult<(Vec<T>, f64, f64)> {
    let (lo, hi, nan) = src.iter().fold(
        (f64::INFINITY, f64::NEG_INFINITY, false),
        |(lo, hi, nan), &s| {
            let v: f64 = s.into();
            (lo.min(v), hi.max(v), nan | v.is_nan())
        },
    );
    if nan || !(lo > 0.0 && hi.is_finite()) {
        let k = src
            .iter()
            .position(|&s| {
                let v: f64 = s.into();
                !(v.is_finite() && v > 0.0)
            })
            .expect("a bad value was seen");
        let v: f64 = src[k].into();
        // As Python writes them: nan, inf, -inf.
        let shown = match v {
            v if v.is_nan() => "nan".to_string(),
            v if v.is_infinite() => (if v > 0.0 { "inf" } else { "-inf" }).to_string(),
            v => v.to_string(),
        };
        return Err(bad(format!(
            "invalid velocity{} = {shown}: every velocity must be a finite number greater than 0 m/s",
            index_words(k, shape)
        )));
    }
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(src.len()).map_err(|_| {
        PyMemoryError::new_err(format!(
            "cannot allocate {} bytes for the velocity model",
            src.len() * std::mem::size_of::<T>()
        ))
    })?;
    out.extend(src.iter().map(|&s| T::lit(s.into())));
    Ok((out, lo, hi))
}

/// The velocity model: a C-contiguous float32 or float64 numpy array of 2 (`nz, nx`) or 3
/// (`nz, ny, nx`) dimensions, read in place and copied once, into the run's precision.
/// Returns the shape, the model and its smallest and largest velocity.
pub fn velocity(v: &Bound<'_, PyAny>, f64_run: bool) -> PyResult<(Vec<usize>, Model, f64, f64)> {
    let py = v.py();
    let arr = v.cast::<PyUntypedArray>().map_err(|_| {
        let ty = v
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        bad(format!(
            "velocity must be a numpy.ndarray of velocities in m/s (float32 or float64, shape (nz, nx) or (nz, ny, nx)), not {ty}; use np.asarray(velocity, dtype=np.float32)"
        ))
    })?;
    let shape = arr.shape().to_vec();
    let dtype = arr.dtype();
    let shown = format!("{shape:?}");
    if !(2..=3).contains(&shape.len()) {
        return Err(bad(format!(
            "invalid velocity.shape = {shown}: the model must have 2 dimensions (nz, nx) or 3 (nz, ny, nx); got {} dimension(s)",
            shape.len()
        )));
    }
    if shape.contains(&0) {
        return Err(bad(format!(
            "invalid velocity.shape = {shown}: every dimension must be at least 1"
        )));
    }
    if shape.len() == 3 && shape[1] == 1 {
        return Err(bad(format!(
            "invalid velocity.shape = {shown}: a 3D model needs ny > 1 planes along y; pass a 2D model as velocity[:, 0, :]"
        )));
    }
    let is_f32 = dtype.is_equiv_to(&numpy::dtype::<f32>(py));
    let is_f64 = dtype.is_equiv_to(&numpy::dtype::<f64>(py));
    if !is_f32 && !is_f64 {
        return Err(bad(format!(
            "invalid velocity.dtype = {}: the model must be float32 or float64 (native byte order); use velocity.astype(np.float32)",
            dtype.str().map(|s| s.to_string()).unwrap_or_else(|_| "?".into())
        )));
    }
    if !arr.is_c_contiguous() {
        return Err(bad(
            "velocity must be C-contiguous (row-major, x fastest): this array is a strided view or in Fortran order; use np.ascontiguousarray(velocity)",
        ));
    }
    macro_rules! read {
        ($s:ty) => {{
            let a = arr.cast::<PyArrayDyn<$s>>()?.try_readonly()?;
            let src = a.as_slice().map_err(|_| {
                bad("velocity must be C-contiguous; use np.ascontiguousarray(velocity)")
            })?;
            if f64_run {
                let (v, lo, hi) = convert::<$s, f64>(src, &shape)?;
                (Model::F64(v), lo, hi)
            } else {
                let (v, lo, hi) = convert::<$s, f32>(src, &shape)?;
                (Model::F32(v), lo, hi)
            }
        }};
    }
    let (model, lo, hi) = if is_f32 { read!(f32) } else { read!(f64) };
    Ok((shape, model, lo, hi))
}

/// Grid points given as integers: one point (a sequence of `dims` indices) or many (an
/// array of shape `(n, dims)`), as `[z, y, x]` (`y` = 0 in 2D). `what` names the argument.
pub fn points(obj: &Bound<'_, PyAny>, dims: usize, what: &str) -> PyResult<Vec<[usize; 3]>> {
    let py = obj.py();
    let order = if dims == 3 { "(z, y, x)" } else { "(z, x)" };
    let np = py.import("numpy")?;
    let a = np.call_method1("asarray", (obj,)).map_err(|e| {
        bad(format!(
            "invalid {what}: {e}; give integer grid indices {order}, one point or an array of shape (n, {dims})"
        ))
    })?;
    let arr = a.cast::<PyUntypedArray>()?;
    if arr.len() == 0 {
        return Ok(Vec::new());
    }
    let kind = arr.dtype().kind();
    if kind != b'i' && kind != b'u' {
        return Err(bad(format!(
            "invalid {what}: grid indices must be integers, not {}; round them, e.g. np.rint({what}).astype(int)",
            arr.dtype().str().map(|s| s.to_string()).unwrap_or_else(|_| "?".into())
        )));
    }
    let shape = arr.shape().to_vec();
    let n = match shape[..] {
        [d] if d == dims => 1,
        [n, d] if d == dims => n,
        _ => {
            return Err(bad(format!(
                "invalid {what}: shape {shape:?}; a {dims}D run takes points {order}: one as a sequence of {dims} integers, or an array of shape (n, {dims})"
            )))
        }
    };
    let ints = a.call_method1("astype", ("int64",))?;
    let ints = ints.cast::<PyArrayDyn<i64>>()?.try_readonly()?;
    let values: Vec<i64> = ints.as_array().iter().copied().collect();
    let mut out = Vec::with_capacity(n);
    for (k, p) in values.chunks(dims).enumerate() {
        if let Some(v) = p.iter().find(|&&v| v < 0) {
            return Err(bad(format!(
                "invalid {what}: point {k} has the negative index {v}; indices count from 0 (negative indices from the end are not accepted)"
            )));
        }
        let u: Vec<usize> = p.iter().map(|&v| v as usize).collect();
        out.push(if dims == 3 {
            [u[0], u[1], u[2]]
        } else {
            [u[0], 0, u[1]]
        });
    }
    Ok(out)
}

/// Reads every option into a [`Setup`]: the model, the parameters, the execution space.
/// `ValueError` for bad input (the library's messages where it checks).
pub fn setup(velocity_arg: &Bound<'_, PyAny>, o: &Opts<'_, '_>) -> PyResult<Setup> {
    let precision = precision_arg(o.precision)?;
    let (shape, model, vlow, vmax) = velocity(velocity_arg, precision == "f64")?;
    let dims = shape.len();
    let (nz, ny, nx) = if dims == 3 {
        (shape[0], shape[1], shape[2])
    } else {
        (shape[0], 1, shape[1])
    };
    let nt = whole("nt", o.nt, 1, "run at least 1 time step")?;
    let space_order = whole(
        "space_order",
        o.space_order,
        0,
        "use an even order from 2 to 16",
    )?;
    let kernels = kernels_arg(o.kernels)?;
    let boundary: Boundary = o.boundary.parse().py()?;
    let absorb = absorb_arg(boundary, o)?;
    let source_mode: SourceMode = o.source_mode.parse().py()?;
    if o.source_delay.is_some() && source_mode != SourceMode::Add {
        return Err(bad(
            "source_delay applies only to source_mode=\"add\" (the set mode starts the wavelet at its peak); add source_mode=\"add\" or drop source_delay",
        ));
    }
    let time_block = time_block_arg(o.time_block)?;
    let threads = threads_arg(o)?;
    let dt = time_step(o, space_order, dims, vmax)?;
    let numerics = numerics_arg(o)?;
    let receivers = match o.receivers {
        Some(r) if !r.is_none() => points(r, dims, "receivers")?,
        _ => Vec::new(),
    };
    let defaults = PmlParams::default();
    let config = WaveConfig {
        nz,
        nx,
        ny,
        src_y: 0,
        src_z: 0,
        src_x: 0,
        receivers: if dims == 2 {
            receivers.iter().map(|&[z, _, x]| (z, x)).collect()
        } else {
            Vec::new()
        },
        receivers_3d: if dims == 3 {
            receivers.iter().map(|&[z, y, x]| (z, y, x)).collect()
        } else {
            Vec::new()
        },
        nt,
        dt,
        dh: o.dh,
        fpeak: o.fpeak,
        // The model is given as a field (`WaveSimulator::set_velocity`); the config's
        // background is its smallest velocity, which the library's checks and warnings
        // about the lowest velocity read.
        vmin: vlow,
        layers: Vec::new(),
        kernels,
        space_order,
        absorb,
        boundary,
        pml: PmlParams {
            reflection: o.pml_r.unwrap_or(defaults.reflection),
            degree: o.pml_degree.unwrap_or(defaults.degree),
            alpha: o.pml_alpha.or(defaults.alpha),
        },
        source_mode,
        source_delay: o.source_delay,
        snapshot_every: None,
        velocity: None,
        time_block,
        numerics,
    };
    let space = Space::open(o.backend, threads)?;
    Ok(Setup {
        config,
        shape,
        model,
        space,
        precision,
        backend: o.backend.to_string(),
        receivers,
        vmax,
    })
}

/// The run's precision: `"f32"` or `"f64"` (numpy's names accepted).
fn precision_arg(text: &str) -> PyResult<&'static str> {
    match text {
        "f32" | "float32" => Ok("f32"),
        "f64" | "float64" => Ok("f64"),
        other => Err(bad(format!(
            "invalid precision = {other:?}: use \"f32\" or \"f64\""
        ))),
    }
}

/// One fused kernel per step or the paper's four.
fn kernels_arg(text: &str) -> PyResult<StepKernels> {
    match text {
        "fused" => Ok(StepKernels::Fused),
        "split" => Ok(StepKernels::Split),
        other => Err(bad(format!(
            "invalid kernels = {other:?}: use \"fused\" (the default) or \"split\" (the paper's four kernels, order 4 only)"
        ))),
    }
}

/// The absorbing layer's width: none on a rigid edge, [`DEFAULT_ABSORB`] when not given, at
/// least one cell otherwise; the PML's own options only with `boundary="pml"`.
fn absorb_arg(boundary: Boundary, o: &Opts<'_, '_>) -> PyResult<usize> {
    for (name, given) in [
        ("pml_r", o.pml_r.is_some()),
        ("pml_degree", o.pml_degree.is_some()),
        ("pml_alpha", o.pml_alpha.is_some()),
    ] {
        if given && boundary != Boundary::Pml {
            return Err(bad(format!(
                "{name} applies only to boundary=\"pml\", not \"{}\"; drop {name}",
                boundary.name()
            )));
        }
    }
    Ok(match (boundary, o.absorb) {
        (Boundary::Rigid, Some(a)) if a != 0 => {
            return Err(bad(format!(
                "invalid absorb = {a}: boundary=\"rigid\" has no layer; drop absorb, or use boundary=\"pml\" or \"sponge\""
            )))
        }
        (Boundary::Rigid, _) => 0,
        (_, None) => DEFAULT_ABSORB,
        (b, Some(a)) => {
            let a = whole("absorb", a, 0, "a layer is 1 cell wide or more")?;
            if a == 0 {
                return Err(bad(format!(
                    "invalid absorb = 0: boundary=\"{}\" needs a layer (20 cells or more absorb well); or use boundary=\"rigid\"",
                    b.name()
                )));
            }
            a
        }
    })
}

/// Temporal blocking: a number of steps per block, or the library's text forms.
fn time_block_arg(obj: &Bound<'_, PyAny>) -> PyResult<TimeBlock> {
    match obj.extract::<i64>() {
        Ok(k) => Ok(TimeBlock::Depth(whole(
            "time_block",
            k,
            1,
            "a block holds 1 step or more; or use \"off\" or \"auto\"",
        )?)),
        Err(_) => {
            let text: String = obj.extract().map_err(|_| {
                bad("time_block must be \"off\", \"auto\", a number of steps K, \"K:B\" or \"K:BxW\"")
            })?;
            text.parse().py()
        }
    }
}

/// A private pool's threads: rayon only, 1 or more.
fn threads_arg(o: &Opts<'_, '_>) -> PyResult<Option<usize>> {
    let Some(t) = o.threads else { return Ok(None) };
    if o.backend != "rayon" {
        return Err(bad(format!(
            "threads applies only to backend=\"rayon\", not {:?}; drop threads",
            o.backend
        )));
    }
    Ok(Some(whole(
        "threads",
        t,
        1,
        "use between 1 and 4096 threads",
    )?))
}

/// The time step: `dt` as given, or `cfl * dh / vmax` with the CFL number given or
/// [`DEFAULT_CFL_FRACTION`] of the scheme's limit.
fn time_step(o: &Opts<'_, '_>, space_order: usize, dims: usize, vmax: f64) -> PyResult<f64> {
    match (o.dt, o.cfl) {
        (Some(_), Some(_)) => Err(bad(
            "give dt or cfl, not both (cfl sets dt = cfl * dh / max(velocity))",
        )),
        (Some(dt), None) => Ok(dt),
        (None, _) if !(o.dh.is_finite() && o.dh > 0.0) => Err(bad(format!(
            "invalid dh = {}: must be a finite number greater than 0 metres",
            o.dh
        ))),
        (None, cfl) => {
            let limit = cfl_limit_in(space_order, dims).py()?;
            let cfl = cfl.unwrap_or(DEFAULT_CFL_FRACTION * limit);
            if !(cfl.is_finite() && cfl > 0.0) {
                return Err(bad(format!(
                    "invalid cfl = {cfl}: must be a finite number greater than 0 (the limit of the order-{space_order} {dims}D scheme is {limit:.4})"
                )));
            }
            Ok(cfl * o.dh / vmax)
        }
    }
}

/// The host kernels' arithmetic and the treatment of subnormal numbers.
fn numerics_arg(o: &Opts<'_, '_>) -> PyResult<Numerics> {
    let arithmetic = match o.numerics {
        "exact" => Arithmetic::Exact,
        "fast" => Arithmetic::Fast,
        other => {
            return Err(bad(format!(
                "invalid numerics = {other:?}: use \"exact\" (every operation rounded as written, the default) or \"fast\" (fused multiply-adds, results within a few units in the last place)"
            )))
        }
    };
    let subnormals = match o.subnormals {
        "flush" => Subnormals::Flush,
        "keep" => Subnormals::Keep,
        other => {
            return Err(bad(format!(
                "invalid subnormals = {other:?}: use \"flush\" (to zero, the default) or \"keep\" (IEEE 754)"
            )))
        }
    };
    Ok(Numerics {
        arithmetic,
        subnormals,
    })
}

/// Snapshot steps: integers from 1 to `nt`, returned sorted without repeats.
pub fn snapshot_steps(obj: Option<&Bound<'_, PyAny>>, nt: usize) -> PyResult<Vec<usize>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let steps: Vec<i64> = obj
        .extract()
        .or_else(|_| obj.extract::<i64>().map(|s| vec![s]))
        .map_err(|_| bad("snapshots must be a sequence of step numbers (integers from 1 to nt)"))?;
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        if s < 1 || s as u64 > nt as u64 {
            return Err(bad(format!(
                "invalid snapshots: step {s} is not between 1 and nt = {nt} (step k is the wavefield after k time steps)"
            )));
        }
        out.push(s as usize);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
