//! The linear forward map of the acoustic solver, its exact discrete adjoint, and the
//! gradient of the least-squares misfit by the adjoint-state method.
//!
//! [`WaveOperator`] runs the scheme of [`WaveSimulator`](super::WaveSimulator) with the
//! additive source ([`SourceMode::Add`]) as a linear map `F` from source terms to receiver
//! data: [`forward`](WaveOperator::forward) injects a wavelet `m` (the value added at the
//! source point at each step, as the simulator adds its scaled Ricker) and returns the traces
//! `d` sampled after each step; [`adjoint`](WaveOperator::adjoint) is the transpose `F*`,
//! exact to rounding: `<F m, d> = <m, F* d>` for every `m` and `d`.
//!
//! # The adjoint, derived
//!
//! With `K = diag(kv2)`, `L` the order-`N` Laplacian on the interior (points within the
//! radius `N / 2` of a side stay 0), `D = diag(1 / (1 + eta))` and `eta` the sponge's
//! damping (0 without one), one forward step is
//!
//! ```text
//! p[n+1] = D (2 p[n] - p[n-1] + K L p[n] + S m[n]) + D eta p[n-1],    d[n] = R p[n+1]
//! ```
//!
//! (`S` puts `m[n]` at the source point, `R` samples the receivers; `p[0] = p[-1] = 0`).
//! Restricted to the interior, `L` is symmetric, so the transpose of `K L` is `L K`. Writing
//! the adjoint field scaled by `D`, `q[n] = D λ[n]`, the transposed recursion run backwards
//! in time is again a leapfrog step, the sponge included:
//!
//! ```text
//! q[n] = D (2 q[n+1] - q[n+2] + L (K q[n+1]) + R* d[n-1]) + D eta q[n+2],    m*[n-1] = S* q[n]
//! ```
//!
//! That is a leapfrog step with `L K` in place of `K L`. `K`, `D` and `eta` are diagonal, so
//! multiplying the recursion by `K` turns it into the forward step itself for the scaled
//! field `s = K q`:
//!
//! ```text
//! s[n] = D (2 s[n+1] - s[n+2] + K L s[n+1] + K R* d[n-1]) + D eta s[n+2],    m*[n-1] = S* K⁻¹ s[n]
//! ```
//!
//! So the adjoint run is the forward run (`fd_step_<N>` and `fd_absorb`, the same kernels
//! on every backend) on `s`: the receivers' traces, times `kv2` at each receiver, injected
//! in reverse time order with the same additive source kernel, and `s / kv2` recorded at
//! the source point. Receivers within the rigid border record 0 in the forward run; their
//! traces are not injected.
//!
//! # The gradient
//!
//! [`misfit_gradient`](WaveOperator::misfit_gradient) returns `J = ½ ‖F m − d_obs‖²` for a
//! fixed wavelet and its gradient with respect to the squared slowness `s = 1 / v²` at every
//! grid point, with the forward wavefield stored in full: since `K = (dt/dh)² / s`,
//! `∂J/∂s(x) = −v(x)² Σ_n q[n+1](x) kv2(x) (L p[n])(x) = −v(x)² Σ_n s[n+1](x) (L p[n])(x)`
//! (the kernel `fd_adjoint_grad_<N>`), the exact derivative of the
//! discrete misfit (`⟨g, δs⟩` is the plain sum over grid points). Full storage takes
//! `nt × grid` values; [`Storage::Checkpoints`] replays the forward run from binomial
//! checkpoints within a memory budget, with the same result bit for bit.
//!
//! # What is refused
//!
//! The PML ([`Boundary::Pml`] with `absorb > 0`) has no adjoint here: its memory variables
//! need their own transposed recursion. Use [`Boundary::Sponge`] or a rigid border. The
//! paper's set source ([`SourceMode::Set`]) is not a linear map of the wavelet and the split
//! kernels are the paper's order-4 2D step: both are refused, naming the setting to use.

use super::config::{Boundary, SourceMode, StepKernels, WaveConfig};
use super::dims::{trailing, Dims, WaveKernels};
use super::pml::layer_boxes;
use super::simulator::sponge_eta;
use crate::kernels::adjoint::fd_scale_nd;
use crate::launch::launch_in_region;
use crate::{Error, ExecutionSpace, MemSpaceHost, MemorySpace, Param, Real, Result, ScalarField};
mod checkpoint;
mod gradient;
mod offgrid;
#[cfg(feature = "mpi")]
mod ranks;
mod shots;

pub use gradient::{Shot, Storage};
pub use offgrid::{OffGridOperator, HICKS_KAISER_B, HICKS_RADIUS};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A host field of `D` dimensions.
type HostFieldN<T, const D: usize> = ScalarField<MemSpaceHost, T, D>;

/// A field of `E`'s memory space in `D` dimensions.
type Field<E, T, const D: usize> = ScalarField<<E as ExecutionSpace>::Memory, T, D>;

/// The forward map `F` (wavelet at the source point → traces at the receivers) of a
/// [`WaveConfig`] with the additive source, and its exact adjoint `F*`, on the execution
/// space `E` in `T`, in `D` = 2 or 3 dimensions.
///
/// Traces are `nt × nrec` values, one row of `nrec` receivers per time step (the layout of
/// [`Seismogram::data`](crate::receivers::Seismogram)); a wavelet is `nt` values.
/// Host launches run with the config's [`numerics`](WaveConfig::numerics), as the
/// simulator's do. A [monitor](WaveOperator::set_monitor) sees every time step of a call
/// and may stop it.
///
/// ```
/// use ppstencil::solver::{Boundary, SourceMode, WaveOperator};
/// use ppstencil::{Serial, WaveConfig};
/// let config = WaveConfig {
///     nz: 24, nx: 30, nt: 40, dt: 0.001, dh: 10.0, src_z: 10, src_x: 12, vmin: 2000.0,
///     layers: vec![], source_mode: SourceMode::Add, absorb: 5, boundary: Boundary::Sponge,
///     receivers: vec![(4, 20), (18, 7)],
///     ..WaveConfig::paper()
/// };
/// let op = WaveOperator::<Serial, f64>::new(Serial, config)?;
/// let m: Vec<f64> = (0..40).map(|n| ((n * 7 % 11) as f64 - 5.0) / 5.0).collect();
/// let d: Vec<f64> = (0..80).map(|k| ((k * 5 % 13) as f64 - 6.0) / 6.0).collect();
/// let fm = op.forward(&m)?;
/// let fd = op.adjoint(&d)?;
/// let lhs: f64 = fm.iter().zip(&d).map(|(a, b)| a * b).sum();
/// let rhs: f64 = m.iter().zip(&fd).map(|(a, b)| a * b).sum();
/// assert!((lhs - rhs).abs() <= 1e-12 * lhs.abs().max(rhs.abs()));
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub struct WaveOperator<E: ExecutionSpace, T: Real = f32, const D: usize = 2> {
    space: E,
    config: WaveConfig,
    shape: [usize; D],
    /// `(dt/dh)² v²` in the space.
    kv2: Field<E, T, D>,
    /// `kv2` on the host (row-major values): the scale of the adjoint's injected and
    /// recorded values.
    kv2_host: Vec<T>,
    /// The sponge's damping `eta` in the space, when there is a sponge.
    eta: Option<Field<E, T, D>>,
    /// The velocity model on the host (row-major values).
    velocity: Vec<T>,
    /// The source point.
    source: [usize; D],
    /// The receivers, in trace order.
    receivers: Vec<[usize; D]>,
    /// Called with the call's step count after every time step; an error stops the call.
    monitor: Option<Arc<Monitor>>,
}

/// A caller's watch over the time steps of a [`WaveOperator`]'s calls (see
/// [`WaveOperator::set_monitor`]).
type Monitor = dyn Fn(usize) -> Result<()> + Send + Sync;

/// The misfit and its gradient from [`WaveOperator::misfit_gradient`].
#[derive(Debug)]
pub struct MisfitGradient<T: Real, const D: usize = 2> {
    /// `J = ½ Σ (F m − d_obs)²`, accumulated in f64.
    pub misfit: f64,
    /// The traces `F m` of the forward run (`nt × nrec`).
    pub traces: Vec<T>,
    /// `∂J/∂s` at every grid point, `s = 1 / v²` the squared slowness (0 within the rigid
    /// border, which no perturbation there can change).
    pub gradient: HostFieldN<T, D>,
    /// The forward steps run again from checkpoints, beyond the first forward run (0 with
    /// [`Storage::Full`]).
    pub recomputed_steps: usize,
    /// The checkpoints the run kept at most (each two wavefields); `None`: full storage.
    pub checkpoints: Option<usize>,
}

/// Which time step a sweep runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// The forward step `K L` on `p`.
    Forward,
    /// Its transpose `L K` on `q`, run as the forward step on `s = K q`: the values
    /// injected are scaled by `kv2`, those recorded divided by it.
    Adjoint,
}

impl<E: ExecutionSpace, T: Real, const D: usize> WaveOperator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// The operator of `config` with its own velocity model (the background and layers):
    /// checks the parameters, moves `kv2` and the sponge's damping to `E`'s memory space.
    /// Errors: the checks of [`WaveConfig::validate_for`], a dimensionality `D` other than
    /// the config's, and the settings without an adjoint (a PML, the set source, the split
    /// kernels), each naming what to use instead.
    pub fn new(space: E, config: WaveConfig) -> Result<Self> {
        check_config::<T, D>(&config)?;
        let velocity = config.velocity_model_in::<T, D>()?;
        Self::with_velocity(space, config, &velocity)
    }

    /// The operator of `config` with the velocity model `velocity` (host data of the grid's
    /// shape, every value finite and > 0, within the CFL limit) in place of the config's.
    pub fn with_velocity(
        space: E,
        config: WaveConfig,
        velocity: &HostFieldN<T, D>,
    ) -> Result<Self> {
        check_config::<T, D>(&config)?;
        let c = &config;
        let shape = trailing::<D>([c.nz, c.ny, c.nx]);
        if velocity.shape() != shape {
            return Err(Error::invalid(
                Param::VelocityModel,
                format!("{:?}", velocity.shape()),
                format!("must match the grid {}", c.grid_words()),
            ));
        }
        let mut vmax = 0.0f64;
        for &v in velocity.as_slice() {
            let v = v.to_f64();
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(
                    Param::Velocity,
                    v,
                    "every velocity must be finite and greater than 0",
                ));
            }
            vmax = vmax.max(v);
        }
        c.check_cfl(vmax)?;
        let v = Field::<E, T, D>::from_host(velocity)?;
        let mut kv2 = Field::<E, T, D>::zeros(shape)?;
        let dtdh2 = T::lit((c.dt / c.dh) * (c.dt / c.dh));
        Dims::<D>::kv2(&space, &mut kv2, &v, dtdh2)?;
        let kv2_host = kv2.to_host()?.as_slice().to_vec();
        let eta = match c.layer() {
            Some(Boundary::Sponge) => Some(Field::<E, T, D>::from_host(&sponge_eta(
                c, velocity, shape,
            )?)?),
            _ => None,
        };
        let source = trailing::<D>([c.src_z, c.src_y, c.src_x]);
        let receivers = c.receiver_points().into_iter().map(trailing::<D>).collect();
        Ok(WaveOperator {
            space,
            config,
            shape,
            kv2,
            kv2_host,
            eta,
            velocity: velocity.as_slice().to_vec(),
            source,
            receivers,
            monitor: None,
        })
    }

    /// Installs `monitor`, called after every time step of every sweep a call of the
    /// operator runs (forward, adjoint, and the forward steps a checkpointed gradient or
    /// image runs again) with the number of steps that call has run so far, from 1. An
    /// error it returns stops the call, which returns that error; a caller that stops a
    /// call for its own reasons can return [`Error::Stopped`]. Replaces any monitor set
    /// before; the results of calls it lets finish are unchanged.
    pub fn set_monitor(&mut self, monitor: impl Fn(usize) -> Result<()> + Send + Sync + 'static) {
        self.monitor = Some(Arc::new(monitor));
    }

    /// Counts one more time step of the current call in `done` and hands the count to the
    /// monitor, whose error stops the call.
    fn tick(&self, done: &AtomicUsize) -> Result<()> {
        let k = done.fetch_add(1, Ordering::Relaxed) + 1;
        match &self.monitor {
            Some(monitor) => monitor(k),
            None => Ok(()),
        }
    }

    /// The configuration the operator was made with.
    pub fn config(&self) -> &WaveConfig {
        &self.config
    }

    /// The number of time steps `nt`: the length of a wavelet.
    pub fn steps(&self) -> usize {
        self.config.nt
    }

    /// The number of receivers `nrec`: a row of the traces.
    pub fn receivers(&self) -> usize {
        self.receivers.len()
    }

    /// `F m`: runs the forward scheme with `wavelet[n]` added at the source point at step
    /// `n` and returns the receivers' traces (`nt × nrec`), the same values as
    /// [`WaveSimulator`](super::WaveSimulator) records with that wavelet.
    pub fn forward(&self, wavelet: &[T]) -> Result<Vec<T>> {
        self.forward_with(wavelet, |_, _| Ok(()))
    }

    /// [`forward`](Self::forward), handing `hook(n, p)` the wavefield after step `n` (in
    /// `E`'s memory space) after each step; an error from the hook stops the run.
    pub fn forward_with(
        &self,
        wavelet: &[T],
        hook: impl FnMut(usize, &Field<E, T, D>) -> Result<()> + Send,
    ) -> Result<Vec<T>> {
        let mut stepper = Stepper::new(self, Direction::Forward)?;
        let mut hook = hook;
        self.forward_at(&mut stepper, self.source, wavelet, |k, s| hook(k, &s.p))
    }

    /// [`forward`](Self::forward) with the source at `source` (`[z, x]` or `[z, y, x]`) in
    /// place of the config's: one shot of a survey.
    pub fn forward_from(&self, source: [usize; D], wavelet: &[T]) -> Result<Vec<T>> {
        self.check_source(0, source)?;
        let mut stepper = Stepper::new(self, Direction::Forward)?;
        self.forward_at(&mut stepper, source, wavelet, |_, _| Ok(()))
    }

    /// The forward run of `stepper` with the source at `source` in place of the config's,
    /// handing `hook` the stepper after each step: the traces.
    fn forward_at(
        &self,
        stepper: &mut Stepper<'_, E, T, D>,
        source: [usize; D],
        wavelet: &[T],
        hook: impl FnMut(usize, &mut Stepper<'_, E, T, D>) -> Result<()> + Send,
    ) -> Result<Vec<T>> {
        check_len("wavelet", wavelet.len(), self.config.nt, "nt")?;
        let recorded: Vec<[usize; D]> = self.receivers.clone();
        let mut traces = vec![T::ZERO; self.config.nt * recorded.len()];
        let value = |n: usize, _: usize| wavelet[n];
        self.sweep(stepper, &[source], value, &recorded, &mut traces, hook)?;
        Ok(traces)
    }

    /// `F* d`: runs the adjoint scheme with the traces `d` (`nt × nrec`) injected at the
    /// receivers in reverse time order and returns the wavelet-shaped result (`nt` values)
    /// recorded at the source point, so that `<F m, d> = <m, F* d>`.
    pub fn adjoint(&self, traces: &[T]) -> Result<Vec<T>> {
        self.adjoint_with(traces, |_, _| Ok(()))
    }

    /// [`adjoint`](Self::adjoint), handing `hook(n, q)` the adjoint field `q` that step `n`'s
    /// source term sees (the adjoint with respect to a value added at any point at step
    /// `n`), for `n` from `nt - 1` down to 0; an error from the hook stops the run.
    pub fn adjoint_with(
        &self,
        traces: &[T],
        mut hook: impl FnMut(usize, &Field<E, T, D>) -> Result<()> + Send,
    ) -> Result<Vec<T>> {
        // q = s / kv2, as s times 1 / kv2 (a field of this call only).
        let inv: Vec<T> = self.kv2_host.iter().map(|&k| T::lit(1.0) / k).collect();
        let mut inv_kv2 = Field::<E, T, D>::zeros(self.shape)?;
        inv_kv2.copy_from_host(&inv)?;
        let mut q = Field::<E, T, D>::zeros(self.shape)?;
        self.adjoint_at(traces, None, |n, s| {
            fd_scale_nd(&self.space, &mut q, s, &inv_kv2)?;
            hook(n, &q)
        })
    }

    /// The adjoint run of [`adjoint_with`](Self::adjoint_with), handing `hook(n, s)` the
    /// scaled field `s = kv2 q` and counting its steps in `done`, the step count of the call
    /// it is part of (`None`: a count of its own).
    fn adjoint_at(
        &self,
        traces: &[T],
        done: Option<&AtomicUsize>,
        mut hook: impl FnMut(usize, &Field<E, T, D>) -> Result<()> + Send,
    ) -> Result<Vec<T>> {
        let (nt, nrec) = (self.config.nt, self.receivers.len());
        check_len("traces", traces.len(), nt * nrec, "nt x receivers")?;
        // Receivers within the rigid border record 0: their rows of F are 0.
        let inside: Vec<usize> = (0..nrec)
            .filter(|&i| self.in_interior(self.receivers[i]))
            .collect();
        let at: Vec<[usize; D]> = inside.iter().map(|&i| self.receivers[i]).collect();
        let value = |k: usize, j: usize| traces[(nt - 1 - k) * nrec + inside[j]];
        let mut reversed = vec![T::ZERO; nt];
        let mut stepper = Stepper::counting(self, Direction::Adjoint, done)?;
        self.sweep(
            &mut stepper,
            &at,
            value,
            &[self.source],
            &mut reversed,
            |k, s| hook(nt - 1 - k, &s.p),
        )?;
        reversed.reverse();
        Ok(reversed)
    }

    /// Whether `at` lies in the interior the step updates (not within the order's radius of
    /// a side).
    fn in_interior(&self, at: [usize; D]) -> bool {
        let r = self.config.radius();
        (0..D).all(|a| at[a] >= r && at[a] + r < self.shape[a])
    }

    /// One run of `nt` steps of `stepper` (from its current levels), with the host launches
    /// (the hook's included) under the config's [`numerics`](WaveConfig::numerics), as the
    /// simulator's: each step advances the field, adds `value(k, i)` at point `inject[i]`,
    /// records the points `record` into row `k` of `out`, calls `hook(k, p)` with the new
    /// level and then the monitor with the call's step count. Every step of every call runs
    /// here or in a checkpointed replay, which reports its steps the same way.
    fn sweep(
        &self,
        stepper: &mut Stepper<'_, E, T, D>,
        inject: &[[usize; D]],
        value: impl Fn(usize, usize) -> T + Sync,
        record: &[[usize; D]],
        out: &mut [T],
        hook: impl FnMut(usize, &mut Stepper<'_, E, T, D>) -> Result<()> + Send,
    ) -> Result<()> {
        let index = |at: &[usize; D]| flat_index(self.shape, *at);
        let flat: Vec<usize> = record.iter().map(index).collect();
        // The adjoint runs on s = kv2 q: values in are scaled by kv2, values out divided by
        // it (a scale of 1, exact, for the forward run).
        let scale = |at: &[usize; D]| match stepper.direction {
            Direction::Forward => T::lit(1.0),
            Direction::Adjoint => self.kv2_host[index(at)],
        };
        let gain: Vec<T> = inject.iter().map(scale).collect();
        let loss: Vec<T> = record.iter().map(scale).collect();
        let value = |k: usize, i: usize| value(k, i) * gain[i];
        // Under `install`, as the simulator's runs: the pool stays awake between the step's
        // many small launches instead of falling asleep and waking at each.
        crate::with_numerics(self.config.numerics, || {
            self.space
                .install(|| self.sweep_steps(stepper, inject, &value, &flat, out, hook))
        })?;
        for row in out.chunks_mut(loss.len().max(1)) {
            for (o, &l) in row.iter_mut().zip(&loss) {
                *o = *o / l;
            }
        }
        Ok(())
    }

    /// The loop of [`sweep`](Self::sweep): `nt` steps, each sampled at the flat indices
    /// `flat` into `out` and handed to `hook`.
    fn sweep_steps(
        &self,
        stepper: &mut Stepper<'_, E, T, D>,
        inject: &[[usize; D]],
        value: &(impl Fn(usize, usize) -> T + Sync),
        flat: &[usize],
        out: &mut [T],
        mut hook: impl FnMut(usize, &mut Stepper<'_, E, T, D>) -> Result<()> + Send,
    ) -> Result<()> {
        let n = flat.len();
        let mut scratch = None;
        for k in 0..self.config.nt {
            stepper.step(inject, |i| value(k, i))?;
            sample(&stepper.p, flat, &mut out[k * n..(k + 1) * n], &mut scratch)?;
            hook(k, stepper)?;
            self.tick(stepper.done())?;
        }
        self.space.synchronize()
    }
}

/// The step count of a call that a [`Stepper`] adds its steps to.
enum Count<'a> {
    /// The stepper's own: the call runs this stepper alone.
    Own(AtomicUsize),
    /// The call's, shared by its steppers (the forward and adjoint sweeps of a gradient).
    Shared(&'a AtomicUsize),
}

/// The levels of a leapfrog run of a [`WaveOperator`] and the buffers one step needs:
/// `p` the newest level, `pold` the one before; `count` the step count of the call the
/// run belongs to.
struct Stepper<'a, E: ExecutionSpace, T: Real, const D: usize> {
    op: &'a WaveOperator<E, T, D>,
    count: Count<'a>,
    region: [Range<usize>; D],
    boxes: Vec<[Range<usize>; D]>,
    p: Field<E, T, D>,
    pold: Field<E, T, D>,
    pnew: Field<E, T, D>,
    /// Forward on `p`, or adjoint on `s = kv2 q`: the scale of the values in and out.
    direction: Direction,
}

impl<'a, E: ExecutionSpace, T: Real, const D: usize> Stepper<'a, E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// Zero levels of `op` stepping in `direction`, with a step count of their own.
    fn new(op: &'a WaveOperator<E, T, D>, direction: Direction) -> Result<Self> {
        Self::counting(op, direction, None)
    }

    /// Zero levels of `op` stepping in `direction` that add their steps to `done`, the step
    /// count of the call they belong to (`None`: a count of their own).
    fn counting(
        op: &'a WaveOperator<E, T, D>,
        direction: Direction,
        done: Option<&'a AtomicUsize>,
    ) -> Result<Self> {
        let shape = op.shape;
        let r = op.config.radius();
        let boxes = match op.eta {
            Some(_) => layer_boxes(shape, op.config.absorb, 0),
            None => Vec::new(),
        };
        Ok(Stepper {
            op,
            count: match done {
                Some(done) => Count::Shared(done),
                None => Count::Own(AtomicUsize::new(0)),
            },
            region: std::array::from_fn(|a| r..shape[a] - r),
            boxes,
            p: Field::<E, T, D>::zeros(shape)?,
            pold: Field::<E, T, D>::zeros(shape)?,
            pnew: Field::<E, T, D>::zeros(shape)?,
            direction,
        })
    }

    /// The step count of the call the stepper belongs to.
    fn done(&self) -> &AtomicUsize {
        match &self.count {
            Count::Own(done) => done,
            Count::Shared(done) => done,
        }
    }

    /// One step under the thread's numerics: the fused step, `value(i)` added at
    /// `inject[i]`, the sponge's damping, then the levels rotate.
    fn step(&mut self, inject: &[[usize; D]], value: impl Fn(usize) -> T) -> Result<()> {
        let op = self.op;
        let (space, order) = (&op.space, op.config.space_order);
        Dims::<D>::fused_step_in(
            space,
            order,
            self.region.clone(),
            &mut self.pnew,
            &self.p,
            &self.pold,
            &op.kv2,
        )?;
        for (i, &at) in inject.iter().enumerate() {
            Dims::<D>::add_source(space, &mut self.pnew, value(i), at)?;
        }
        if let Some(eta) = &op.eta {
            for b in &self.boxes {
                launch_in_region::<<Dims<D> as WaveKernels<D>>::Absorb, E, T, D>(
                    space,
                    b.clone(),
                    &mut [&mut self.pnew],
                    &[&self.pold, eta],
                    &[],
                )?;
            }
        }
        self.pold.swap(&mut self.p);
        self.p.swap(&mut self.pnew);
        Ok(())
    }
}

/// The settings of `config` the operator accepts in `T` and `D` dimensions.
fn check_config<T: Real, const D: usize>(c: &WaveConfig) -> Result<()> {
    if c.dims() != D {
        return Err(Error::invalid(
            Param::Ny,
            c.ny,
            format!(
                "the config is a {}D run ({}); use WaveOperator<E, T, {}>",
                c.dims(),
                c.grid_words(),
                c.dims()
            ),
        ));
    }
    c.validate_for::<T>()?;
    if c.layer() == Some(Boundary::Pml) {
        return Err(Error::invalid(
            Param::Boundary,
            "pml",
            "the PML has no adjoint yet; use Boundary::Sponge (or absorb = 0, the rigid border) for adjoint and gradient runs",
        ));
    }
    if c.source_mode != SourceMode::Add {
        return Err(Error::invalid(
            Param::SourceMode,
            c.source_mode.name(),
            "the set source is not a linear map of the wavelet; use SourceMode::Add",
        ));
    }
    if c.kernels != StepKernels::Fused {
        return Err(Error::invalid(
            Param::Other("kernels".into()),
            c.kernels.name(),
            "the adjoint transposes the fused step; use StepKernels::Fused",
        ));
    }
    Ok(())
}

/// Reads `p` at the flat indices `points` into `out`: in place for host memory, else through
/// a host copy of the whole field (`scratch`, allocated once).
fn sample<M: MemorySpace, T: Real, const D: usize>(
    p: &ScalarField<M, T, D>,
    points: &[usize],
    out: &mut [T],
    scratch: &mut Option<HostFieldN<T, D>>,
) -> Result<()> {
    if points.is_empty() {
        return Ok(());
    }
    let values = match p.host_values() {
        Some(values) => values,
        None => {
            let h = match scratch {
                Some(h) => h,
                None => scratch.insert(HostFieldN::zeros(p.shape())?),
            };
            p.copy_to_host(h.as_mut_slice())?;
            h.as_slice()
        }
    };
    for (o, &k) in out.iter_mut().zip(points) {
        *o = values[k];
    }
    Ok(())
}

/// The row-major index of the point `at` in a grid of `shape`.
fn flat_index<const D: usize>(shape: [usize; D], at: [usize; D]) -> usize {
    (0..D).fold(0, |k, a| k * shape[a] + at[a])
}

/// An error unless a buffer `what` has `want` values.
fn check_len(what: &str, got: usize, want: usize, words: &str) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid(
            Param::Other(what.into()),
            format!("{got} values"),
            format!("must hold {words} = {want} values"),
        ))
    }
}
