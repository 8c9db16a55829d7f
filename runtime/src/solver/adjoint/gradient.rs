//! The misfit's gradient and the migrated image by the adjoint-state method, one shot or
//! many, with the forward wavefield stored in full or replayed from binomial checkpoints.

use super::checkpoint::{self, Action};
use super::shots::{Part, ShotSum};
use super::{
    check_len, flat_index, Direction, Field, HostFieldN, MisfitGradient, Stepper, WaveOperator,
};
use crate::kernels::adjoint::{fd_adjoint_grad_nd, fd_adjoint_image_nd, fd_copy_nd};
use crate::solver::dims::{Dims, WaveKernels};
use crate::{Error, ExecutionSpace, Param, Real, Result};
use std::collections::VecDeque;
use std::sync::atomic::AtomicUsize;

/// How the forward wavefield reaches the reverse sweep of a gradient or an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Every level kept: `nt − 1` wavefields in the space's memory, no recomputation.
    Full,
    /// Binomial checkpoints within `bytes` (each checkpoint two wavefields), the forward
    /// steps between them run again: the same gradient bit for bit as [`Storage::Full`].
    Checkpoints {
        /// The memory the checkpoints may take, in bytes.
        bytes: u64,
    },
    /// [`Storage::Full`] when its `nt − 1` wavefields fit in `bytes`, else
    /// [`Storage::Checkpoints`] within `bytes`.
    Budget {
        /// The memory the stored wavefield may take, in bytes.
        bytes: u64,
    },
}

impl Storage {
    /// The storage of a call given no budget: [`Storage::Budget`] of half the memory the
    /// process can still allocate (the least of Linux's `MemAvailable` and its cgroup's room),
    /// so every level is kept where that fits and binomial checkpoints are used where it
    /// does not; [`Storage::Full`] where neither can be read.
    pub fn within_available_memory() -> Storage {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let system = read("/proc/meminfo").and_then(|m| mem_available(&m));
        let cgroup = match (
            read("/sys/fs/cgroup/memory.max"),
            read("/sys/fs/cgroup/memory.current"),
        ) {
            (Some(max), Some(current)) => cgroup_room(&max, &current),
            _ => None,
        };
        match system.into_iter().chain(cgroup).min() {
            Some(bytes) => Storage::Budget { bytes: bytes / 2 },
            None => Storage::Full,
        }
    }
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        _ => None,
    }
}

/// The bytes a cgroup (v2) may still allocate: `memory.max − memory.current`; `None` without
/// a limit (`max`).
fn cgroup_room(max: &str, current: &str) -> Option<u64> {
    let max: u64 = max.trim().parse().ok()?;
    let current: u64 = current.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// One shot of a survey: its source point, its wavelet (`nt` values) and its observed
/// traces (`nt × nrec`, the operator's receivers).
#[derive(Clone, Copy, Debug)]
pub struct Shot<'a, T, const D: usize = 2> {
    /// The source point, `[z, x]` (2D) or `[z, y, x]` (3D).
    pub source: [usize; D],
    /// The value added at the source point at each step.
    pub wavelet: &'a [T],
    /// The observed traces, one row of receivers per step.
    pub observed: &'a [T],
}

/// What the reverse sweep accumulates.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Condition {
    /// `g += kv2 q L p`: the misfit's gradient (scaled by `−v²` at the end).
    Gradient,
    /// `g += q p`: zero-lag cross-correlation of the source and receiver wavefields.
    Image,
}

/// The forward levels `p[n]` handed to the reverse sweep, last first.
enum Levels<'a, E: ExecutionSpace, T: Real, const D: usize> {
    /// `p[1]`, …, `p[nt − 1]`.
    Full(Vec<Field<E, T, D>>),
    /// A forward stepper replaying from checkpoints.
    Replay(Replay<'a, E, T, D>),
}

/// A checkpoint: the levels `p` and `pold` of a state, and the state's step.
type Slot<E, T, const D: usize> = (Field<E, T, D>, Field<E, T, D>, usize);

/// The checkpoints of a run: the slots (two levels and the state they hold each), the rest
/// of the schedule, and the forward steps run again so far.
struct Book<E: ExecutionSpace, T: Real, const D: usize> {
    slots: Vec<Slot<E, T, D>>,
    actions: VecDeque<Action>,
    recomputed: usize,
}

impl<E: ExecutionSpace, T: Real, const D: usize> Book<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// `slots` empty checkpoints of `shape` and the schedule of `steps` steps.
    fn new(shape: [usize; D], slots: usize, steps: usize) -> Result<Self> {
        let mut fields = Vec::with_capacity(slots);
        for _ in 0..slots {
            let p = Field::<E, T, D>::zeros(shape)?;
            fields.push((p, Field::<E, T, D>::zeros(shape)?, 0));
        }
        Ok(Book {
            slots: fields,
            actions: checkpoint::schedule(steps, slots).into(),
            recomputed: 0,
        })
    }

    /// Runs the schedule's actions that the first forward run's reaching `state` allows
    /// (its advance to `state` and the stores that follow).
    fn store_prefix(&mut self, state: usize, stepper: &Stepper<'_, E, T, D>) -> Result<()> {
        while let Some(&a) = self.actions.front() {
            match a {
                Action::Advance(to) if to == state => {}
                Action::Store(k) => self.store(k, stepper, state)?,
                _ => break,
            }
            self.actions.pop_front();
        }
        Ok(())
    }

    /// Copies the stepper's levels (state `state`) into slot `k`.
    fn store(&mut self, k: usize, stepper: &Stepper<'_, E, T, D>, state: usize) -> Result<()> {
        let (p, pold, at) = &mut self.slots[k];
        fd_copy_nd(&stepper.op.space, p, &stepper.p)?;
        fd_copy_nd(&stepper.op.space, pold, &stepper.pold)?;
        *at = state;
        Ok(())
    }
}

/// A checkpointed forward run: the stepper at state `current` (after `current` steps) and
/// its checkpoints.
struct Replay<'a, E: ExecutionSpace, T: Real, const D: usize> {
    stepper: Stepper<'a, E, T, D>,
    source: [usize; D],
    wavelet: &'a [T],
    current: usize,
    book: Book<E, T, D>,
}

impl<E: ExecutionSpace, T: Real, const D: usize> Replay<'_, E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// Runs the schedule up to the use of state `n` and returns `p[n]`.
    fn level(&mut self, n: usize) -> Result<&Field<E, T, D>> {
        while let Some(a) = self.book.actions.pop_front() {
            match a {
                Action::Advance(to) => {
                    while self.current < to {
                        let w = self.wavelet[self.current];
                        self.stepper.step(&[self.source], |_| w)?;
                        self.current += 1;
                        self.book.recomputed += 1;
                        // A step of the call like any sweep's: the monitor sees it.
                        self.stepper.op.tick(self.stepper.done())?;
                    }
                }
                Action::Store(k) => self.book.store(k, &self.stepper, self.current)?,
                Action::Restore(k) => self.restore(k)?,
                Action::Use(i) if i == n => break,
                Action::Use(_) => {}
            }
        }
        // The first use (state nt - 1) finds the stepper one step further: p[n] is pold.
        match self.current {
            c if c == n => Ok(&self.stepper.p),
            c if c == n + 1 => Ok(&self.stepper.pold),
            c => Err(Error::invalid(
                Param::Other("checkpoint schedule".into()),
                c,
                format!("reached state {c} where level {n} was due; this is a bug"),
            )),
        }
    }

    /// Makes slot `k`'s state current (`None`: the zero state).
    fn restore(&mut self, k: Option<usize>) -> Result<()> {
        match k {
            Some(k) => {
                let (p, pold, at) = &self.book.slots[k];
                let space = &self.stepper.op.space;
                fd_copy_nd(space, &mut self.stepper.p, p)?;
                fd_copy_nd(space, &mut self.stepper.pold, pold)?;
                self.current = *at;
            }
            None => {
                let zeros = vec![T::ZERO; self.stepper.p.len()];
                self.stepper.p.copy_from_host(&zeros)?;
                self.stepper.pold.copy_from_host(&zeros)?;
                self.current = 0;
            }
        }
        Ok(())
    }
}

impl<E: ExecutionSpace, T: Real, const D: usize> WaveOperator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
    /// The simulator's additive wavelet for a source at `source`: the delayed Ricker of the
    /// config's `fpeak` and `source_delay` times `dt² v² / dh^D`, `v` the model's velocity
    /// there (what [`WaveSimulator`](crate::WaveSimulator) adds with
    /// [`SourceMode::Add`](crate::solver::SourceMode::Add)).
    pub fn source_wavelet(&self, source: [usize; D]) -> Result<Vec<T>> {
        self.check_source(0, source)?;
        let c = &self.config;
        let flat = flat_index(self.shape, source);
        let v = self.velocity[flat].to_f64();
        let scale = c.dt * c.dt * v * v / c.dh.powi(D as i32);
        Ok(
            crate::solver::ricker_delayed(c.nt, c.dt, c.fpeak, c.source_delay())
                .into_iter()
                .map(|r| T::lit(scale * r))
                .collect(),
        )
    }

    /// The bytes of one wavefield of the grid in `T`.
    pub fn field_bytes(&self) -> u64 {
        (self.shape.iter().product::<usize>() * std::mem::size_of::<T>()) as u64
    }

    /// The checkpoints `storage` allows (`None`: full storage), at most `nt − 1`. Error: a
    /// budget below one checkpoint, naming the bytes one needs.
    pub fn checkpoints_for(&self, storage: Storage) -> Result<Option<usize>> {
        let levels = self.config.nt.saturating_sub(1) as u64;
        let field = self.field_bytes();
        let bytes = match storage {
            Storage::Full => return Ok(None),
            Storage::Budget { bytes } if levels * field <= bytes => return Ok(None),
            Storage::Budget { bytes } | Storage::Checkpoints { bytes } => bytes,
        };
        let slots = bytes / (2 * field);
        if slots == 0 {
            return Err(Error::invalid(
                Param::Other("memory budget".into()),
                format!("{bytes} bytes"),
                format!(
                    "one checkpoint (two wavefields of {}) needs {} bytes; give at least that \
                     (full storage takes {} bytes)",
                    self.config.grid_words(),
                    2 * field,
                    levels * field
                ),
            ));
        }
        Ok(Some((slots as usize).min(levels.max(1) as usize)))
    }

    /// The misfit `J = ½ ‖F m − d_obs‖²` of the wavelet `wavelet` against the observed
    /// traces `observed` (`nt × nrec`) and its gradient with respect to the squared slowness
    /// at every grid point, by the adjoint-state method with the forward wavefield stored in
    /// full (`nt` fields in `E`'s memory space).
    pub fn misfit_gradient(&self, wavelet: &[T], observed: &[T]) -> Result<MisfitGradient<T, D>> {
        self.misfit_gradient_with(wavelet, observed, Storage::Full)
    }

    /// [`misfit_gradient`](Self::misfit_gradient) with the forward wavefield kept as
    /// `storage` says: the same result bit for bit whatever the storage.
    ///
    /// ```
    /// use ppstencil::solver::{Boundary, SourceMode, Storage, WaveOperator};
    /// use ppstencil::{Serial, WaveConfig};
    /// let config = WaveConfig {
    ///     nz: 24, nx: 30, nt: 40, dt: 0.001, dh: 10.0, src_z: 10, src_x: 12, vmin: 2000.0,
    ///     layers: vec![], source_mode: SourceMode::Add, absorb: 5, boundary: Boundary::Sponge,
    ///     receivers: vec![(4, 20), (18, 7)],
    ///     ..WaveConfig::paper()
    /// };
    /// let op = WaveOperator::<Serial, f64>::new(Serial, config)?;
    /// let wavelet = op.source_wavelet([10, 12])?;
    /// let observed = vec![0.0; 40 * 2];
    /// let full = op.misfit_gradient(&wavelet, &observed)?;
    /// // Three checkpoints (two wavefields each) instead of 39 wavefields.
    /// let bytes = 3 * 2 * op.field_bytes();
    /// let saved = op.misfit_gradient_with(&wavelet, &observed, Storage::Checkpoints { bytes })?;
    /// assert_eq!(saved.checkpoints, Some(3));
    /// assert!(saved.recomputed_steps > 0);
    /// assert_eq!(saved.gradient.as_slice(), full.gradient.as_slice());
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn misfit_gradient_with(
        &self,
        wavelet: &[T],
        observed: &[T],
        storage: Storage,
    ) -> Result<MisfitGradient<T, D>> {
        let shot = Shot {
            source: self.source,
            wavelet,
            observed,
        };
        self.misfit_gradient_shots(&[shot], storage)
    }

    /// The misfit and gradient summed over `shots`, in their order (shot 0's gradient plus
    /// shot 1's, …; the misfit in f64): independent of the space's threads. `traces` holds
    /// the shots' predicted traces one after another.
    pub fn misfit_gradient_shots(
        &self,
        shots: &[Shot<'_, T, D>],
        storage: Storage,
    ) -> Result<MisfitGradient<T, D>> {
        self.over_shots(shots, storage, Some(Condition::Gradient))
    }

    /// The reverse-time-migrated image of `shots` at every grid point: for each shot, the
    /// data the operator's model does not explain, `d_obs − F m`, propagated back by the
    /// adjoint and cross-correlated at zero lag with the source wavefield,
    /// `Σ_n q[n+1] p[n]`; summed over the shots in their order. `misfit` is the shots' `J`.
    pub fn image_shots(
        &self,
        shots: &[Shot<'_, T, D>],
        storage: Storage,
    ) -> Result<MisfitGradient<T, D>> {
        self.over_shots(shots, storage, Some(Condition::Image))
    }

    /// The misfit `½ ‖F m − d_obs‖²` of `shots` (forward runs only), summed in their order
    /// in f64: what a line search needs between gradients.
    pub fn misfit_shots(&self, shots: &[Shot<'_, T, D>]) -> Result<f64> {
        Ok(self.over_shots(shots, Storage::Full, None)?.misfit)
    }

    /// The accumulation `condition` over `shots` (`None`: the misfit alone), each shot's
    /// field summed on the host in shot order; the monitor sees the steps of all the shots'
    /// sweeps as one count.
    fn over_shots(
        &self,
        shots: &[Shot<'_, T, D>],
        storage: Storage,
        condition: Option<Condition>,
    ) -> Result<MisfitGradient<T, D>> {
        let checkpoints = self.check_shots(shots, storage)?;
        let mut sum = ShotSum::new(self.shape)?;
        // Full storage's fields, reused from shot to shot (allocated and touched once).
        let mut kept = Vec::new();
        let done = AtomicUsize::new(0);
        for s in shots {
            sum.add(&self.one_shot(s, checkpoints, condition, &mut kept, &done)?);
        }
        Ok(sum.finish(checkpoints))
    }

    /// Checks every shot of `shots` (source on the grid, `nt` wavelet values, `nt × nrec`
    /// observed values) and returns the checkpoints `storage` gives.
    pub(super) fn check_shots(
        &self,
        shots: &[Shot<'_, T, D>],
        storage: Storage,
    ) -> Result<Option<usize>> {
        let checkpoints = self.checkpoints_for(storage)?;
        let (nt, nrec) = (self.config.nt, self.receivers.len());
        for (i, s) in shots.iter().enumerate() {
            self.check_source(i, s.source)?;
            check_len("wavelet", s.wavelet.len(), nt, "nt")?;
            check_len(
                "observed traces",
                s.observed.len(),
                nt * nrec,
                "nt x receivers",
            )?;
        }
        Ok(checkpoints)
    }

    /// An error unless shot `i`'s source lies on the grid.
    pub(super) fn check_source(&self, i: usize, source: [usize; D]) -> Result<()> {
        if (0..D).all(|a| source[a] < self.shape[a]) {
            return Ok(());
        }
        Err(Error::invalid(
            Param::Other(format!("shot {i}'s source")),
            format!("{source:?}"),
            format!("must lie on the grid {}", self.config.grid_words()),
        ))
    }

    /// One shot's [`Part`] (its field scaled by `−v²` for the gradient; none when
    /// `condition` is `None`: the forward run alone). Full storage keeps its levels in
    /// `kept`'s fields (more allocated as needed) and leaves them there for the next shot.
    /// The steps count in `done`, the call's step count.
    pub(super) fn one_shot(
        &self,
        shot: &Shot<'_, T, D>,
        checkpoints: Option<usize>,
        condition: Option<Condition>,
        kept: &mut Vec<Field<E, T, D>>,
        done: &AtomicUsize,
    ) -> Result<Part<T, D>> {
        let half_squares = |traces: &[T]| {
            let r = traces
                .iter()
                .zip(shot.observed)
                .map(|(&a, &b)| (a - b).to_f64());
            r.fold(0.0f64, |j, r| j + 0.5 * r * r)
        };
        let Some(condition) = condition else {
            let mut stepper = Stepper::counting(self, Direction::Forward, Some(done))?;
            let traces = self.forward_at(&mut stepper, shot.source, shot.wavelet, |_, _| Ok(()))?;
            return Ok(Part {
                misfit: half_squares(&traces),
                traces,
                field: None,
                recomputed: 0,
            });
        };
        let taken = std::mem::take(kept);
        let (traces, mut levels) = self.first_run(shot, checkpoints, taken, done)?;
        let adjoint_source: Vec<T> = traces
            .iter()
            .zip(shot.observed)
            .map(|(&a, &b)| match condition {
                Condition::Gradient => a - b,
                Condition::Image => b - a,
            })
            .collect();
        let field = self.reverse(&adjoint_source, &mut levels, condition, done)?;
        let recomputed = match levels {
            Levels::Full(fields) => {
                *kept = fields;
                0
            }
            Levels::Replay(r) => r.book.recomputed,
        };
        Ok(Part {
            misfit: half_squares(&traces),
            traces,
            field: Some(field),
            recomputed,
        })
    }

    /// The first forward run of `shot`, keeping the levels full storage (in the fields of
    /// `kept`, more allocated as needed) or the schedule of `checkpoints` asks for, its
    /// steps and those of the replay counted in `done`: the traces and the levels.
    fn first_run<'a>(
        &'a self,
        shot: &Shot<'a, T, D>,
        checkpoints: Option<usize>,
        mut kept: Vec<Field<E, T, D>>,
        done: &'a AtomicUsize,
    ) -> Result<(Vec<T>, Levels<'a, E, T, D>)> {
        let nt = self.config.nt;
        let mut stepper = Stepper::counting(self, Direction::Forward, Some(done))?;
        match checkpoints {
            None => {
                // p[1] ... p[nt-1]: the levels the imaging condition needs (p[0] = 0), kept
                // without a copy: after step n the stepper's spare level holds p[n-1], which
                // the next step would overwrite; it is kept, and a field of `kept` (the last
                // shot's levels, else a new one) takes its place, to be written whole by the
                // next step. p[nt-1] is the last `pold`.
                let mut levels = Vec::with_capacity(nt.saturating_sub(1));
                let traces = self.forward_at(&mut stepper, shot.source, shot.wavelet, |n, s| {
                    if n >= 2 {
                        let spare = match kept.pop() {
                            Some(f) => f,
                            None => Field::<E, T, D>::zeros(self.shape)?,
                        };
                        levels.push(std::mem::replace(&mut s.pnew, spare));
                    }
                    Ok(())
                })?;
                if nt >= 2 {
                    levels.push(stepper.pold);
                }
                Ok((traces, Levels::Full(levels)))
            }
            Some(slots) => {
                let mut book = Book::new(self.shape, slots, nt)?;
                let traces = self.forward_at(&mut stepper, shot.source, shot.wavelet, |n, s| {
                    book.store_prefix(n + 1, s)
                })?;
                let replay = Replay {
                    stepper,
                    source: shot.source,
                    wavelet: shot.wavelet,
                    current: nt,
                    book,
                };
                Ok((traces, Levels::Replay(replay)))
            }
        }
    }

    /// The reverse sweep from `adjoint_source` accumulating `condition` with the levels of
    /// `levels`, its steps counted in `done`: the field on the host (`−v²` times the sum for
    /// the gradient, the sum divided by `kv2` for the image).
    fn reverse(
        &self,
        adjoint_source: &[T],
        levels: &mut Levels<'_, E, T, D>,
        condition: Condition,
        done: &AtomicUsize,
    ) -> Result<HostFieldN<T, D>> {
        let order = self.config.space_order;
        let mut g = Field::<E, T, D>::zeros(self.shape)?;
        // The hook's field at step n is s[n+1] = kv2 q[n+1]; the step's matrix acts on p[n]
        // (p[0] = 0).
        self.adjoint_at(adjoint_source, Some(done), |n, s| {
            if n == 0 {
                return Ok(());
            }
            let p = match levels {
                Levels::Full(kept) => &kept[n - 1],
                Levels::Replay(replay) => replay.level(n)?,
            };
            match condition {
                // g += kv2 q L p[n] = s L p[n].
                Condition::Gradient => fd_adjoint_grad_nd(&self.space, order, &mut g, s, p),
                // g += s p[n]; Σ q p = Σ s p / kv2, divided out below.
                Condition::Image => fd_adjoint_image_nd(&self.space, &mut g, s, p),
            }
        })?;
        let mut field = g.to_host()?;
        let values = field.as_mut_slice();
        match condition {
            // ∂K/∂s = −K v²: the factor kv2 is in s, −v² here.
            Condition::Gradient => {
                for (gi, &v) in values.iter_mut().zip(&self.velocity) {
                    *gi = -(*gi * v * v);
                }
            }
            Condition::Image => {
                for (gi, &k) in values.iter_mut().zip(&self.kv2_host) {
                    *gi = *gi / k;
                }
            }
        }
        Ok(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memory readings, from texts written by hand in the kernel's formats.
    #[test]
    fn available_memory_is_read_from_meminfo_and_the_cgroup() {
        let meminfo = "MemTotal:       24554108 kB\nMemFree:         1000000 kB\n\
                       MemAvailable:   20000000 kB\nBuffers:           1 kB\n";
        assert_eq!(mem_available(meminfo), Some(20_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots kB\n"), None);
        assert_eq!(cgroup_room("8589934592\n", "1073741824\n"), Some(7 << 30));
        assert_eq!(cgroup_room("max\n", "1073741824\n"), None);
        assert_eq!(cgroup_room("100\n", "200\n"), Some(0));
        // On Linux the default is a budget of at most half the machine's available memory.
        if let Some(avail) = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| mem_available(&m))
        {
            match Storage::within_available_memory() {
                Storage::Budget { bytes } => assert!(bytes > 0 && bytes <= avail / 2 + (64 << 20)),
                other => panic!("{other:?}"),
            }
        }
    }
}
