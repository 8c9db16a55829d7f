//! [`WaveSimulator`]: the solver generic over the execution space. It prepares a run (the
//! model, damping and wavelet moved to the space), advances it one time step at a time, and
//! hands out the fields and results; [`run`](WaveSimulator::run) is a loop over those steps.
//! Parameters and their checks live in `config.rs`, the scheme's numbers in
//! `physics.rs`.

use super::blocking::Blocking;
use super::config::{Boundary, SourceMode, StepKernels, WaveConfig};
use super::dims::{trailing, Dims, WaveKernels};
use super::pml::{layer_boxes, Pml, PmlRows};
use super::tuning::BandTuner;
use crate::launch::launch_in_region;
use crate::receivers::Seismogram;
use crate::{Error, ExecutionSpace, MemSpaceHost, Param, Real, Result, ScalarField};
use std::time::{Duration, Instant};

mod blocked;
mod paced;
mod settings;
mod step_parts;

#[cfg(feature = "mpi")]
pub(crate) use step_parts::sponge_eta_at;
pub use step_parts::FINITE_CHECK_EVERY;
use step_parts::{check_finite, fused_source_pml, sample_receivers};
pub(crate) use step_parts::{non_finite, position_words, sponge_eta};

/// A host field of `D` dimensions.
type HostFieldN<T, const D: usize> = ScalarField<MemSpaceHost, T, D>;

/// A prepared run: its parameters, its fields in the space and where it stands.
struct Run<E: ExecutionSpace, T: Real, const D: usize> {
    /// The parameters the run was prepared with.
    config: WaveConfig,
    /// When [`WaveSimulator::prepare`] started.
    start: Instant,
    /// Time steps run.
    done: usize,
    /// The pressure after `done` steps.
    p: ScalarField<E::Memory, T, D>,
    /// The pressure one step earlier.
    pold: ScalarField<E::Memory, T, D>,
    /// The next pressure (scratch of one step).
    pnew: ScalarField<E::Memory, T, D>,
    /// The other fields the step's kernels need.
    work: StepFields<ScalarField<E::Memory, T, D>>,
    /// The layered velocity model in the space, when none was given with `set_velocity`.
    layered: Option<ScalarField<E::Memory, T, D>>,
    /// The absorbing layer's damping, when there is a layer.
    eta: Option<ScalarField<E::Memory, T, D>>,
    /// The PML, when there is one.
    pml: Option<Pml<E, T, D>>,
    /// `(dt / dh)²`.
    dtdh2: T,
    /// The source term of every step.
    wavelet: Vec<T>,
    /// The receivers, as flat indices into the field.
    receivers: Vec<usize>,
    /// The traces recorded so far (`nt × receivers`).
    traces: Vec<T>,
    /// A host copy of the field for sampling receivers of device runs.
    scratch: Option<HostFieldN<T, D>>,
}

/// The work fields of one time step, besides `p`, `pold` and `pnew`.
enum StepFields<F> {
    /// The paper's split kernels: the two second derivatives.
    Split { pxx: F, pzz: F },
    /// The fused step: `kv2 = (dt/dh)² v²`, computed once.
    Fused { kv2: F },
}

/// Timing of one [`WaveSimulator::run`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunStats {
    /// Time steps run.
    pub steps: usize,
    /// Wall time of the time loop (allocation and copies included).
    pub wall: Duration,
    /// Grid points updated per second, in millions (`nz · (ny ·) nx · nt / wall`).
    pub mpoints_per_s: f64,
}

/// The acoustic wave simulator, generic over the execution space `E`, the element type `T`
/// and the dimensionality `D`: 2 (the default, `nz × nx`) or 3 (`nz × ny × nx`, with
/// [`WaveConfig::ny`] > 1; the scheme, the options and the step API are the same, the
/// kernels are the 3D ones of [`crate::kernels`]).
///
/// Its fields live in `E::Memory`: data moves to the space once, before the time loop, and
/// back once, when [`wavefield_host`](Self::wavefield_host) is called.
///
/// ```
/// use ppstencil::{Rayon, Serial, WaveSimulator};
/// let mut sim = WaveSimulator::<Serial>::new(Serial);
/// sim.set_dimensions(40, 50)
///     .set_time_steps(30)
///     .set_source_position(20, 25)
///     .set_time_step(0.001)
///     .set_space_step(10.0)
///     .set_vmin(2000.0)
///     .clear_velocity_layers()
///     .add_velocity_layer(30, 40, 3000.0);
/// sim.run()?;
/// let p = sim.wavefield_host()?;
/// assert!(p.max_abs() > 0.0);
/// assert_eq!(p[(0, 0)], 0.0); // the border never moves
/// # Ok::<(), ppstencil::Error>(())
/// ```
///
/// A 3D run: `D = 3`, a grid of `nz × ny × nx` points and `(z, y, x)` positions.
///
/// ```
/// use ppstencil::{Serial, WaveSimulator};
/// let mut sim = WaveSimulator::<Serial, f32, 3>::new(Serial);
/// sim.set_dimensions_3d(24, 20, 28)
///     .set_time_steps(20)
///     .set_source_position_3d(12, 10, 14)
///     .set_time_step(0.001)
///     .set_space_step(10.0)
///     .set_vmin(2000.0)
///     .clear_velocity_layers()
///     .clear_receivers()
///     .add_receiver_3d(12, 10, 20);
/// sim.run()?;
/// let p = sim.wavefield_host()?; // a HostField<f32, 3>
/// assert_eq!(p.shape(), [24, 20, 28]);
/// assert!(p.max_abs() > 0.0);
/// assert_eq!(p[(0, 10, 14)], 0.0); // the border never moves
/// assert_eq!(sim.seismogram().unwrap().nrec, 1);
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub struct WaveSimulator<E: ExecutionSpace, T: Real = f32, const D: usize = 2> {
    space: E,
    config: WaveConfig,
    velocity: Option<ScalarField<E::Memory, T, D>>,
    velocity_max: f64,
    wavefield: Option<ScalarField<E::Memory, T, D>>,
    seismogram: Option<Seismogram<T>>,
    run: Option<Run<E, T, D>>,
    /// Whether the last prepared run's time loop blocks steps, and how (`blocked.rs`): the
    /// one record of it, which the band tuner updates once it has chosen.
    blocking: Option<Blocking>,
    /// The band of the last prepared run's `auto` blocking, chosen by timing (`tuning.rs`).
    tuner: Option<BandTuner>,
    /// The last prepared run's pacer and the narrower space it may run blocks on
    /// (`simulator/paced.rs`).
    pacer: Option<(crate::exec::Pacer, E)>,
}

impl<E: ExecutionSpace, T: Real, const D: usize> WaveSimulator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// A simulator on `space` with the paper's parameters.
    pub fn new(space: E) -> Self {
        Self::with_config(space, WaveConfig::paper())
    }

    /// A simulator on `space` with the given parameters.
    pub fn with_config(space: E, config: WaveConfig) -> Self {
        WaveSimulator {
            space,
            config,
            velocity: None,
            velocity_max: 0.0,
            wavefield: None,
            seismogram: None,
            run: None,
            blocking: None,
            tuner: None,
            pacer: None,
        }
    }

    /// Checks every parameter without running.
    pub fn validate(&self) -> Result<()> {
        let c = &self.config;
        if c.dims() != D && c.ny != 0 {
            return Err(Error::invalid(
                Param::Ny,
                c.ny,
                if D == 3 {
                    "a 3D simulator needs ny > 1 planes along y (ny = 1 is a 2D run: use WaveSimulator<E, T, 2>)"
                } else {
                    "ny > 1 makes a 3D run: use WaveSimulator<E, T, 3>, or ny = 1 for a 2D run"
                },
            ));
        }
        c.validate_for::<T>()?;
        if let Some(v) = &self.velocity {
            if v.shape() != self.shape() {
                let [nz, ny, nx] = v.zyx();
                let shape = if D == 3 {
                    format!("{nz} x {ny} x {nx}")
                } else {
                    format!("{nz} x {nx}")
                };
                return Err(Error::invalid(
                    Param::VelocityModel,
                    shape,
                    format!("must match the grid {}", c.grid_words()),
                ));
            }
            self.config.check_cfl(self.velocity_max)?;
        }
        Ok(())
    }

    /// Runs the whole simulation: [`prepare`](Self::prepare), [`step`](Self::step) `nt`
    /// times, [`finish`](Self::finish).
    pub fn run(&mut self) -> Result<RunStats> {
        self.run_with(|_, _| {}, |_, _| Ok(()))
    }

    /// Runs the whole simulation, calling `progress(steps_done, nt)` after each step.
    pub fn run_with_progress(&mut self, progress: impl FnMut(usize, usize)) -> Result<RunStats> {
        self.run_with(progress, |_, _| Ok(()))
    }

    /// Runs the whole simulation, calling `progress(steps_done, nt)` after each step and
    /// `snapshot(steps_done, wavefield)` with a host copy of the pressure every
    /// [`snapshot_every`](WaveConfig::snapshot_every) steps. An error from `snapshot` stops
    /// the run and is returned. Every parameter is checked before the first step.
    ///
    /// ```
    /// use ppstencil::{Serial, WaveConfig, WaveSimulator};
    /// let config = WaveConfig {
    ///     nz: 30, nx: 30, nt: 20, dt: 0.001, dh: 10.0, src_z: 15, src_x: 15,
    ///     fpeak: 20.0, vmin: 2000.0, layers: vec![], snapshot_every: Some(5),
    ///     ..WaveConfig::paper()
    /// };
    /// let mut sim = WaveSimulator::<Serial, f64>::with_config(Serial, config);
    /// let mut frames = Vec::new();
    /// sim.run_with(|_, _| {}, |step, p| { frames.push((step, p.max_abs())); Ok(()) })?;
    /// assert_eq!(frames.iter().map(|f| f.0).collect::<Vec<_>>(), vec![5, 10, 15, 20]);
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn run_with(
        &mut self,
        mut progress: impl FnMut(usize, usize),
        mut snapshot: impl FnMut(usize, &HostFieldN<T, D>) -> Result<()>,
    ) -> Result<RunStats> {
        self.prepare()?;
        let (nt, every) = (self.config.nt, self.config.snapshot_every);
        while self.steps_done() < nt {
            // Blocks end where a snapshot is due (`blocked.rs`); 1 step when unblocked.
            let first = self.steps_done() + 1;
            let last = self.step_block(self.block_steps())? + 1;
            for done in first..=last {
                if every.is_some_and(|k| done % k == 0) {
                    snapshot(done, &self.wavefield_host()?)?;
                }
                progress(done, nt);
            }
        }
        self.finish()
    }

    /// Prepares a run of the current configuration: checks every parameter, moves the
    /// velocity model, the absorbing layer's damping and the work fields to `E`'s memory
    /// space, computes the source wavelet, and zeroes the wavefield. Starts the run's clock.
    ///
    /// Then call [`step`](Self::step) up to `nt` times and [`finish`](Self::finish). Calling
    /// `prepare` again starts over; the previous run's wavefield and seismogram are dropped.
    /// Changes to the parameters made after `prepare` apply from the next `prepare`.
    pub fn prepare(&mut self) -> Result<()> {
        self.run = None;
        self.validate()?;
        let c = self.config.clone();
        let start = Instant::now();
        // The model on the host: needed for the layer's damping and the source's scale.
        let v_host: Option<HostFieldN<T, D>> =
            if c.absorb > 0 || c.source_mode == SourceMode::Add || self.velocity.is_none() {
                Some(self.velocity_host()?)
            } else {
                None
            };
        let layered = match (&self.velocity, &v_host) {
            (Some(_), _) => None,
            (None, Some(h)) => Some(ScalarField::from_host(h)?),
            (None, None) => {
                return Err(Error::invalid(Param::Velocity, "none", "no velocity model"))
            }
        };
        let shape = self.shape();
        let eta = match &v_host {
            Some(vh) if c.layer() == Some(Boundary::Sponge) => {
                let host = sponge_eta(&c, vh, shape)?;
                Some(ScalarField::<E::Memory, T, D>::from_host(&host)?)
            }
            _ => None,
        };
        let pml = match &v_host {
            Some(vh) if c.layer() == Some(Boundary::Pml) => Some(Pml::prepare(
                &c,
                vh,
                c.radius(),
                c.kernels == StepKernels::Split,
            )?),
            _ => None,
        };
        // The source term of each step.
        let src_flat = (c.src_z * c.ny + c.src_y) * c.nx + c.src_x;
        let v_src = match &v_host {
            Some(vh) => vh.as_slice()[src_flat].to_f64(),
            None => c.vmin,
        };
        let (wavelet, receivers, traces) = run_buffers::<T>(&c, v_src)?;

        let p = ScalarField::<E::Memory, T, D>::zeros(shape)?;
        let pold = ScalarField::<E::Memory, T, D>::zeros(shape)?;
        let pnew = ScalarField::<E::Memory, T, D>::zeros(shape)?;
        let dtdh2 = T::lit((c.dt / c.dh) * (c.dt / c.dh));
        // The fields the step needs besides p, pold, pnew.
        let work = match c.kernels {
            StepKernels::Split => StepFields::Split {
                pxx: ScalarField::<E::Memory, T, D>::zeros(shape)?,
                pzz: ScalarField::<E::Memory, T, D>::zeros(shape)?,
            },
            StepKernels::Fused => {
                let mut kv2 = ScalarField::<E::Memory, T, D>::zeros(shape)?;
                let v = self.velocity.as_ref().or(layered.as_ref());
                let v =
                    v.ok_or_else(|| Error::invalid(Param::Velocity, "none", "no velocity model"))?;
                Dims::<D>::kv2(&self.space, &mut kv2, v, dtdh2)?;
                StepFields::Fused { kv2 }
            }
        };
        let (blocking, tuner) = self.plan_blocking(&c)?;
        self.blocking = Some(blocking);
        self.tuner = tuner;
        self.plan_pacing()?;
        self.wavefield = None;
        self.seismogram = None;
        self.run = Some(Run {
            config: c,
            start,
            done: 0,
            p,
            pold,
            pnew,
            work,
            layered,
            eta,
            pml,
            dtdh2,
            wavelet,
            receivers,
            traces,
            scratch: None,
        });
        Ok(())
    }

    /// Runs one time step of the prepared run and returns its index `it` (0 for the first
    /// step, up to `nt - 1`): injects the source sample `it`, advances the wavefield from
    /// `p` to `pnew` (and damps it in the absorbing layer), rotates `pold ← p ← pnew`, and
    /// records the receivers. Afterwards [`wavefield`](Self::wavefield) is the pressure after
    /// `it + 1` steps.
    ///
    /// An error ([`Error::OutOfOrder`]) before [`prepare`](Self::prepare) and once all `nt`
    /// steps have run. A user's own time loop, here one that stops as soon as the wave
    /// reaches a point, gives the same wavefield as [`run`](Self::run):
    ///
    /// ```
    /// use ppstencil::{Serial, WaveConfig, WaveSimulator};
    /// let config = WaveConfig {
    ///     nz: 40, nx: 40, nt: 100, dt: 0.001, dh: 10.0, src_z: 20, src_x: 20,
    ///     fpeak: 20.0, vmin: 2000.0, layers: vec![], ..WaveConfig::paper()
    /// };
    /// let mut sim = WaveSimulator::<Serial, f64>::with_config(Serial, config);
    /// sim.prepare()?;
    /// let mut arrival = None;
    /// while sim.steps_done() < sim.time_steps() {
    ///     let it = sim.step()?;
    ///     let p = sim.wavefield_host()?;
    ///     if p[(20, 30)].abs() > 1e-3 {
    ///         arrival = Some(it);
    ///         break;
    ///     }
    /// }
    /// let stats = sim.finish()?;
    /// let it = arrival.expect("the wave arrives");
    /// assert_eq!(stats.steps, it + 1);
    /// assert!(it > 0 && it < 100);
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn step(&mut self) -> Result<usize> {
        crate::with_numerics(self.numerics(), || self.step_in_place())
    }

    /// The numerics this run's host launches use: the prepared run's configuration's, else
    /// the current one's.
    fn numerics(&self) -> crate::Numerics {
        self.run
            .as_ref()
            .map_or(self.config.numerics, |r| r.config.numerics)
    }

    /// [`step`](Self::step) with the thread's numerics as they are.
    fn step_in_place(&mut self) -> Result<usize> {
        let space = &self.space;
        let Some(run) = self.run.as_mut() else {
            return Err(Error::OutOfOrder {
                call: "WaveSimulator::step",
                problem: "no run is prepared".into(),
                fix: "call prepare() first (run() does both)",
            });
        };
        let c = &run.config;
        let it = run.done;
        let Some(&w) = run.wavelet.get(it) else {
            return Err(Error::OutOfOrder {
                call: "WaveSimulator::step",
                problem: format!("all nt = {} time steps have run", c.nt),
                fix: "call finish() for the results, or prepare() to start over",
            });
        };
        let (p, pold, pnew) = (&mut run.p, &mut run.pold, &mut run.pnew);
        let src = trailing::<D>([c.src_z, c.src_y, c.src_x]);
        if c.source_mode == SourceMode::Set {
            Dims::<D>::set_source(space, p, w, src)?;
        }
        let add = (c.source_mode == SourceMode::Add).then_some((w, src));
        match &mut run.work {
            StepFields::Split { pxx, pzz } => {
                let v = self.velocity.as_ref().or(run.layered.as_ref());
                let v =
                    v.ok_or_else(|| Error::invalid(Param::Velocity, "none", "no velocity model"))?;
                Dims::<D>::split_step(space, pnew, p, pold, v, pxx, pzz, run.dtdh2)?;
                if let Some((value, at)) = add {
                    Dims::<D>::add_source(space, pnew, value, at)?;
                }
                if let Some(pml) = &mut run.pml {
                    // The PML: its memory variables and its correction of `pnew`, on the
                    // layer only (with its own `kv2`).
                    pml.step(space, pnew, p, None, &PmlRows::ALL, None)?;
                }
            }
            StepFields::Fused { kv2 } => {
                let r = c.radius();
                let region = std::array::from_fn(|a| r..pnew.shape()[a] - r);
                let order = c.space_order;
                let fields = [&*p, &*pold, &*kv2];
                let pml = run.pml.as_mut();
                fused_source_pml(space, order, region, pnew, fields, add, pml, &PmlRows::ALL)?;
            }
        }
        if let Some(eta) = &run.eta {
            // Only the layer: the top and bottom strips, then the sides between them (and
            // in 3D the front and back slabs between those).
            for region in layer_boxes(pnew.shape(), c.absorb, 0) {
                launch_in_region::<<Dims<D> as WaveKernels<D>>::Absorb, E, T, D>(
                    space,
                    region,
                    &mut [&mut *pnew],
                    &[pold, eta],
                    &[],
                )?;
            }
        }
        pold.swap(p);
        p.swap(pnew);
        let nrec = run.receivers.len();
        if nrec > 0 {
            let row = &mut run.traces[it * nrec..(it + 1) * nrec];
            sample_receivers(p, &run.receivers, row, &mut run.scratch)?;
            if let Some(k) = row.iter().position(|v| !v.to_f64().is_finite()) {
                let pos = position_words(run.receivers[k], [c.nz, c.ny, c.nx], c.dims());
                return Err(non_finite::<T>(it + 1, row[k], &pos, "at receiver"));
            }
        }
        check_finite(p, c, it + 1)?;
        run.done = it + 1;
        Ok(it)
    }

    /// Time steps run since [`prepare`](Self::prepare) (0 when no run is prepared).
    pub fn steps_done(&self) -> usize {
        self.run.as_ref().map_or(0, |r| r.done)
    }

    /// Ends the prepared run: waits for the space, keeps the final wavefield (see
    /// [`wavefield`](Self::wavefield)) and the receivers' traces of the steps run (see
    /// [`seismogram`](Self::seismogram)), and returns the timing since
    /// [`prepare`](Self::prepare). Usually called after all `nt` steps; called earlier, the
    /// results cover the steps run. An error ([`Error::OutOfOrder`]) when no run is prepared.
    pub fn finish(&mut self) -> Result<RunStats> {
        let Some(run) = self.run.take() else {
            return Err(Error::OutOfOrder {
                call: "WaveSimulator::finish",
                problem: "no run is prepared".into(),
                fix: "call prepare() and step() first (run() does all three)",
            });
        };
        self.space.synchronize()?;
        let wall = run.start.elapsed();
        let c = run.config;
        let nrec = run.receivers.len();
        let mut data = run.traces;
        data.truncate(run.done * nrec);
        self.wavefield = Some(run.p);
        self.seismogram = Some(Seismogram {
            nt: run.done,
            nrec,
            dt: c.dt,
            positions: c.receiver_points(),
            data,
        });
        let points = (c.nz * c.ny * c.nx) as f64 * run.done as f64;
        Ok(RunStats {
            steps: run.done,
            wall,
            mpoints_per_s: points / wall.as_secs_f64().max(1e-12) / 1e6,
        })
    }

    /// The traces recorded at the receivers by the last finished run (`nt × nrec`; `nrec`
    /// is 0 without receivers), or `None` before the first run and while one is prepared.
    pub fn seismogram(&self) -> Option<&Seismogram<T>> {
        self.seismogram.as_ref()
    }

    /// The pressure field in `E`'s memory space: while a run is prepared, the field after
    /// the last [`step`](Self::step) (zero before the first); after a finished run, its final
    /// field; `None` before any run.
    pub fn wavefield(&self) -> Option<&ScalarField<E::Memory, T, D>> {
        match &self.run {
            Some(run) => Some(&run.p),
            None => self.wavefield.as_ref(),
        }
    }

    /// The pressure one step before [`wavefield`](Self::wavefield), while a run is prepared
    /// (the leapfrog scheme's second time level); `None` otherwise.
    pub fn previous_wavefield(&self) -> Option<&ScalarField<E::Memory, T, D>> {
        self.run.as_ref().map(|run| &run.pold)
    }

    /// Copies the pressure field (see [`wavefield`](Self::wavefield)) to the host.
    pub fn wavefield_host(&self) -> Result<HostFieldN<T, D>> {
        match self.wavefield() {
            Some(p) => p.to_host(),
            None => Err(Error::OutOfOrder {
                call: "WaveSimulator::wavefield_host",
                problem: "there is no wavefield yet".into(),
                fix: "call run() (or prepare() and step()) first",
            }),
        }
    }

    /// The velocity model (the one given to [`set_velocity`](Self::set_velocity), else the
    /// layered model), on the host.
    pub fn velocity_host(&self) -> Result<HostFieldN<T, D>> {
        match &self.velocity {
            Some(v) => v.to_host(),
            None => self.config.velocity_model_in::<T, D>(),
        }
    }
}

/// The run's host buffers: the source wavelet of each step (scaled by the velocity `v_src`
/// at the source), the receivers' flat indices and their zeroed `nt x receivers` traces.
/// The nt-long buffers are allocated fallibly: too many steps are an error, not an abort
/// (`validate` already refused sizes beyond the address space).
fn run_buffers<T: Real>(c: &WaveConfig, v_src: f64) -> Result<(Vec<T>, Vec<usize>, Vec<T>)> {
    let out_of_memory = |n: usize| Error::OutOfMemory {
        space: "host",
        bytes: n.saturating_mul(std::mem::size_of::<T>()),
    };
    let mut wavelet: Vec<T> = Vec::new();
    wavelet
        .try_reserve_exact(c.nt)
        .map_err(|_| out_of_memory(c.nt))?;
    wavelet.extend((0..c.nt).map(|it| c.source_sample::<T>(v_src, it)));
    if let Some(it) = wavelet.iter().position(|w| !w.to_f64().is_finite()) {
        return Err(Error::invalid(
            Param::PeakFrequency,
            c.fpeak,
            format!("the source wavelet is not finite in {} at time step {it}; use a lower peak frequency, or a velocity model with smaller values at the source", T::NAME),
        ));
    }
    let receivers: Vec<usize> = c
        .receiver_points()
        .iter()
        .map(|&[z, y, x]| (z * c.ny + y) * c.nx + x)
        .collect();
    let nrec = receivers.len();
    let samples = c.nt.checked_mul(nrec).ok_or_else(|| {
        Error::invalid(
            Param::Receivers,
            nrec,
            "nt x receivers overflows usize; use fewer receivers",
        )
    })?;
    let mut traces: Vec<T> = Vec::new();
    traces
        .try_reserve_exact(samples)
        .map_err(|_| out_of_memory(samples))?;
    traces.resize(samples, T::ZERO);
    Ok((wavelet, receivers, traces))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::VelocityModel;
    use crate::solver::config::Layer;
    use crate::{Rayon, Serial};

    fn small(kernels: StepKernels) -> WaveConfig {
        WaveConfig {
            nz: 60,
            nx: 70,
            nt: 120,
            dt: 0.0005,
            dh: 5.0,
            src_z: 20,
            src_x: 35,
            fpeak: 25.0,
            vmin: 2000.0,
            layers: vec![Layer {
                z0: 40,
                z1: 60,
                velocity: 3500.0,
            }],
            kernels,
            ..WaveConfig::paper()
        }
    }

    #[test]
    fn fused_and_split_steps_are_bit_identical() {
        let mut split = WaveSimulator::<Serial>::with_config(Serial, small(StepKernels::Split));
        let mut fused =
            WaveSimulator::<Rayon>::with_config(Rayon::new(), small(StepKernels::Fused));
        split.run().expect("split runs");
        fused.run().expect("fused runs");
        let a = split.wavefield_host().expect("copy");
        let b = fused.wavefield_host().expect("copy");
        assert!(a.max_abs() > 1e-3, "the wave must have propagated");
        assert_eq!(a.as_slice(), b.as_slice());
    }

    #[test]
    fn bad_parameters_are_errors_naming_the_value() {
        let check = |f: &dyn Fn(&mut WaveConfig), needle: &str| {
            let mut c = small(StepKernels::Fused);
            f(&mut c);
            let e = c.validate().expect_err("must be rejected").to_string();
            assert!(e.contains(needle), "`{e}` should mention `{needle}`");
        };
        check(&|c| c.nz = 4, "nz = 4");
        check(&|c| c.nt = 0, "nt = 0");
        check(&|c| c.dt = -1.0, "dt = -1");
        check(&|c| c.dh = f64::NAN, "dh = NaN");
        check(&|c| c.src_z = 1, "inside the order-4 border");
        check(&|c| c.src_x = 68, "src_x = 68");
        check(&|c| c.layers[0].z1 = 61, "Z1 <= nz");
        check(&|c| c.layers[0].z0 = 60, "Z0 must be smaller");
        check(&|c| c.layers[0].velocity = 0.0, "greater than 0");
        check(&|c| c.dt = 0.01, "use dt <= 8.7");
        // Beyond the paper: each bad input is an error before any step runs.
        for bad in [0, 1, 3, 5, 15, 17, 18] {
            check(
                &move |c| c.space_order = bad,
                &format!("space order = {bad}"),
            );
        }
        check(
            &|c| {
                c.kernels = StepKernels::Split;
                c.space_order = 6;
            },
            "split kernels",
        );
        check(
            &|c| {
                c.kernels = StepKernels::Fused;
                c.space_order = 16;
                c.src_z = 7;
            },
            "order-16 border of 8 cells: 8 <= src_z < 52",
        );
        check(&|c| c.absorb = 30, "absorb = 30");
        check(&|c| c.absorb = 30, "absorb <= 29");
        check(
            &|c| c.receivers = vec![(10, 10), (60, 3)],
            "receiver = (60, 3)",
        );
        check(&|c| c.receivers = vec![(3, 70)], "0 <= x < 70");
        check(&|c| c.snapshot_every = Some(0), "snapshot interval = 0");
        check(&|c| c.source_delay = Some(-1.0), "source delay = -1");
        check(
            &|c| c.source_delay = Some(f64::INFINITY),
            "source delay = inf",
        );
        check(
            &|c| {
                c.velocity = Some(VelocityModel::new(2, 2, vec![1.0; 4]).expect("valid"));
            },
            "velocity model = 2 x 2",
        );
        check(
            &|c| {
                c.kernels = StepKernels::Fused;
                c.space_order = 16;
                c.dt = 0.00145;
            },
            "of the order-16 scheme",
        );
    }

    /// A user's time loop of `prepare`, `step` and `finish` against `run()`, on the same
    /// space: the same wavefield and seismogram bit for bit, step indices `0..nt`, and
    /// out-of-order calls are errors that say what to call.
    fn user_loop_equals_run<E: ExecutionSpace<Memory = crate::MemSpaceHost> + Clone>(space: E) {
        for kernels in [StepKernels::Split, StepKernels::Fused] {
            let config = WaveConfig {
                absorb: if kernels == StepKernels::Fused { 8 } else { 0 },
                receivers: vec![(20, 10), (30, 50)],
                ..small(kernels)
            };
            let mut whole = WaveSimulator::<E>::with_config(space.clone(), config.clone());
            let stats = whole.run().expect("run");
            let mut user = WaveSimulator::<E>::with_config(space.clone(), config.clone());
            let e = user.step().expect_err("step before prepare").to_string();
            assert!(
                e.contains("no run is prepared") && e.contains("prepare()"),
                "{e}"
            );
            assert!(user.finish().is_err());
            user.prepare().expect("prepare");
            assert_eq!(user.wavefield_host().expect("zero field").max_abs(), 0.0);
            let mut indices = Vec::new();
            while user.steps_done() < config.nt {
                indices.push(user.step().expect("step"));
                // The previous level is the last step's wavefield.
                assert!(user.previous_wavefield().is_some());
            }
            assert_eq!(indices, (0..config.nt).collect::<Vec<_>>());
            let e = user.step().expect_err("step past nt").to_string();
            assert!(e.contains("all nt = 120 time steps have run"), "{e}");
            let mine = user.finish().expect("finish");
            assert_eq!((mine.steps, stats.steps), (config.nt, config.nt));
            let (a, b) = (
                whole.wavefield_host().unwrap(),
                user.wavefield_host().unwrap(),
            );
            assert!(a.max_abs() > 1e-3, "the wave must have propagated");
            assert!(a
                .as_slice()
                .iter()
                .zip(b.as_slice())
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            let (sa, sb) = (whole.seismogram().unwrap(), user.seismogram().unwrap());
            assert_eq!((sa.nt, sa.nrec), (sb.nt, sb.nrec));
            assert!(sa
                .data
                .iter()
                .zip(&sb.data)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            assert!(user.previous_wavefield().is_none());
        }
    }

    #[test]
    fn a_user_time_loop_equals_run_serial() {
        user_loop_equals_run(Serial);
    }

    #[test]
    fn a_user_time_loop_equals_run_rayon() {
        user_loop_equals_run(Rayon::with_threads(2).unwrap());
    }

    /// Stopping early: `finish` after 30 of 120 steps keeps 30 steps of traces, and equals a
    /// run of `nt = 30` (the wavelet's first 30 samples do not depend on `nt`).
    #[test]
    fn finishing_early_equals_a_shorter_run() {
        let config = WaveConfig {
            receivers: vec![(20, 10)],
            ..small(StepKernels::Fused)
        };
        let mut user = WaveSimulator::<Serial>::with_config(Serial, config.clone());
        user.prepare().unwrap();
        for _ in 0..30 {
            user.step().unwrap();
        }
        assert_eq!(user.finish().unwrap().steps, 30);
        let mut short =
            WaveSimulator::<Serial>::with_config(Serial, WaveConfig { nt: 30, ..config });
        short.run().unwrap();
        assert_eq!(user.seismogram().unwrap().nt, 30);
        assert_eq!(
            user.seismogram().unwrap().data,
            short.seismogram().unwrap().data
        );
        assert_eq!(
            user.wavefield_host().unwrap().as_slice(),
            short.wavefield_host().unwrap().as_slice()
        );
    }

    /// Each invalid parameter is reported as its typed [`Param`], with no command-line flag
    /// in the words.
    #[test]
    fn bad_parameters_carry_their_typed_param() {
        use crate::Param;
        type Mutation = Box<dyn Fn(&mut WaveConfig)>;
        let cases: Vec<(Mutation, Param)> = vec![
            (Box::new(|c| c.nz = 4), Param::Nz),
            (Box::new(|c| c.nx = 4), Param::Nx),
            (Box::new(|c| c.nt = 0), Param::Nt),
            (Box::new(|c| c.dt = 0.01), Param::TimeStep),
            (Box::new(|c| c.dh = 0.0), Param::SpaceStep),
            (Box::new(|c| c.fpeak = -1.0), Param::PeakFrequency),
            (Box::new(|c| c.vmin = 0.0), Param::Vmin),
            (Box::new(|c| c.src_z = 1), Param::SourceZ),
            (Box::new(|c| c.src_x = 69), Param::SourceX),
            (Box::new(|c| c.space_order = 5), Param::SpaceOrder),
            (Box::new(|c| c.absorb = 30), Param::Absorb),
            (
                Box::new(|c| c.source_delay = Some(-1.0)),
                Param::SourceDelay,
            ),
            (
                Box::new(|c| c.snapshot_every = Some(0)),
                Param::SnapshotEvery,
            ),
            (Box::new(|c| c.receivers = vec![(60, 0)]), Param::Receiver),
            (Box::new(|c| c.layers[0].z0 = 60), Param::Layer),
        ];
        for (bad, want) in cases {
            let mut c = small(StepKernels::Fused);
            bad(&mut c);
            match c.validate() {
                Err(Error::InvalidParameter { param, valid, .. }) => {
                    assert_eq!(param, want, "{valid}");
                    assert!(!valid.contains("--"), "no flags in library words: {valid}");
                }
                other => panic!("{want:?}: expected an invalid parameter, got {other:?}"),
            }
        }
    }

    /// A NaN that enters the field stops the run at the step boundary: next to the source
    /// point the step it spreads there, far from it at the next whole-field check.
    #[test]
    fn a_non_finite_field_stops_the_run_naming_the_step() {
        // (197, 197) of a 200 x 200 grid is 339 cells (Manhattan) from the source at
        // (20, 35): the order-4 step spreads a NaN 2 cells a step, so it reaches the source
        // only after the whole-field check at step 64.
        for (n, z, x, first_check) in [(60, 20, 36, 4), (200, 197, 197, FINITE_CHECK_EVERY)] {
            let config = WaveConfig {
                nz: n,
                nx: n.max(70),
                layers: vec![],
                ..small(StepKernels::Fused)
            };
            let mut sim = WaveSimulator::<Serial>::with_config(Serial, config);
            sim.prepare().unwrap();
            for _ in 0..3 {
                sim.step().unwrap();
            }
            sim.run.as_mut().unwrap().p[(z, x)] = f32::NAN;
            let e = loop {
                match sim.step() {
                    Ok(_) => continue,
                    Err(e) => break e,
                }
            };
            match &e {
                Error::NonFinite { step, found, .. } => {
                    assert_eq!(*step, first_check, "{e}");
                    assert!(found.contains("NaN"), "{e}");
                }
                other => panic!("expected NonFinite, got {other:?}"),
            }
            assert!(
                e.to_string()
                    .contains(&format!("after time step {first_check}")),
                "{e}"
            );
        }
    }

    /// Values that vanish or overflow in the run's precision are refused before the first
    /// step, naming the parameter; the same values pass in f64 where they are normal.
    #[test]
    fn precision_checks_name_the_parameter() {
        let param_of = |r: Result<()>| match r {
            Err(Error::InvalidParameter { param, .. }) => Some(param),
            Ok(()) => None,
            Err(other) => panic!("{other:?}"),
        };
        let mut c = small(StepKernels::Fused);
        c.dt = 1e-30; // (dt/dh)² = 4e-62: 0 in f32, normal in f64
        assert_eq!(param_of(c.validate_for::<f32>()), Some(Param::TimeStep));
        assert_eq!(param_of(c.validate_for::<f64>()), None);
        let mut c = small(StepKernels::Fused);
        c.layers[0].velocity = 1e-45; // a subnormal f32
        assert_eq!(param_of(c.validate_for::<f32>()), Some(Param::Layer));
        let mut c = small(StepKernels::Fused);
        c.fpeak = 1e25; // (π fpeak dt)² overflows f32
        assert_eq!(
            param_of(c.validate_for::<f32>()),
            Some(Param::PeakFrequency)
        );
        let mut c = small(StepKernels::Fused);
        c.source_mode = SourceMode::Add;
        c.source_delay = Some(1e154); // (π fpeak delay)² overflows f64
        assert_eq!(param_of(c.validate_for::<f64>()), Some(Param::SourceDelay));
        // nt-sized buffers beyond the address space: an error, not a capacity overflow.
        let mut c = small(StepKernels::Fused);
        c.nt = usize::MAX;
        assert_eq!(param_of(c.validate()), Some(Param::Nt));
        let mut sim = WaveSimulator::<Serial>::with_config(Serial, c);
        assert!(sim.run().is_err());
    }

    /// The warnings' numbers, by hand: 2.5 x 200 Hz = 500 Hz; 2000 m/s / 500 Hz = 4 m = 0.8
    /// points of 5 m; Nyquist of dt = 0.0005 s is 1000 Hz (2.5 x 500 Hz = 1250 Hz is above).
    #[test]
    fn what_the_grid_cannot_carry_is_warned_with_the_numbers() {
        let mut c = small(StepKernels::Fused);
        assert!(c.warnings().is_empty(), "25 Hz: 6.4 points per wavelength");
        c.fpeak = 200.0;
        let w = c.warnings();
        assert_eq!(w.len(), 1);
        assert!(w[0].1.contains("0.800 grid points"), "{}", w[0].1);
        c.fpeak = 500.0;
        let w = c.warnings();
        assert_eq!(w.len(), 2);
        assert!(w[1].1.contains("1/(2 dt) = 1.0000e3 Hz"), "{}", w[1].1);
    }

    #[test]
    fn bad_velocity_models_are_rejected_when_made() {
        for (bad, needle) in [
            (f64::NAN, "velocity = NaN"),
            (f64::INFINITY, "velocity = inf"),
            (0.0, "velocity = 0"),
            (-1500.0, "velocity = -1500"),
        ] {
            let mut values = vec![2000.0; 12];
            values[7] = bad;
            let e = VelocityModel::new(3, 4, values)
                .expect_err("must be rejected")
                .to_string();
            assert!(e.contains(needle) && e.contains("row 1, column 3"), "{e}");
        }
        let e = VelocityModel::new(3, 4, vec![1.0; 11]).expect_err("wrong length");
        assert!(e.to_string().contains("11 values"), "{e}");
    }
}
