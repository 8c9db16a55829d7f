//! Pacing: the choice, during a run, between all of a thread pool's threads and one fewer,
//! for a machine that other programs share ([`Pacer`]). The rationale and the measurements
//! are in `docs/design/0016-pacing.md`.
//!
//! A run that splits every step evenly over all cores waits at each step for its slowest
//! thread; when another program takes a core, the thread sharing it is time-sliced and the
//! whole run goes at its pace, slower than on one thread fewer. The pacer watches the
//! machine's runnable threads (Linux's `/proc/loadavg`) and, only while there are more than
//! its CPUs, times the run's blocks on the narrower space ([`ExecutionSpace::narrowed`])
//! against the full one and keeps the faster, trying the other again now and then. Both
//! widths give the same results bit for bit, so pacing changes the time a run takes only.

use super::ExecutionSpace;
use crate::{Error, Result};
use std::time::Duration;

/// The environment variable that sets the pacing of host runs: `auto` (the default), `off`
/// (always all threads), or `alternate` (switch width at every block: for tests that the
/// results do not depend on it).
pub const PACING_ENV: &str = "PPSTENCIL_PACING";

/// What [`PACING_ENV`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// Narrow the run while the machine is crowded and that is measured faster.
    Auto,
    /// Always all of the space's threads.
    Off,
    /// Switch between the two widths at every block.
    Alternate,
}

impl Pacing {
    /// The value's name as [`PACING_ENV`] spells it.
    pub fn name(self) -> &'static str {
        match self {
            Pacing::Auto => "auto",
            Pacing::Off => "off",
            Pacing::Alternate => "alternate",
        }
    }
}

/// The pacing [`PACING_ENV`] sets ([`Pacing::Auto`] where unset or empty); an error naming
/// the value and the values accepted otherwise.
pub fn pacing_from_env() -> Result<Pacing> {
    let value = std::env::var_os(PACING_ENV).map(|v| v.to_string_lossy().into_owned());
    parse_pacing(value.as_deref())
}

/// [`pacing_from_env`] of the variable's value `value` (`None`: unset).
fn parse_pacing(value: Option<&str>) -> Result<Pacing> {
    match value.map(str::trim) {
        None | Some("") | Some("auto") => Ok(Pacing::Auto),
        Some("off") => Ok(Pacing::Off),
        Some("alternate") => Ok(Pacing::Alternate),
        Some(other) => Err(Error::invalid(
            PACING_ENV,
            format!("{other:?}"),
            format!(
                "use {PACING_ENV}=auto (the default: one thread fewer while other programs \
                 want the cores), off (always every thread) or alternate (for tests)"
            ),
        )),
    }
}

/// How long a window of blocks runs on one width before it is judged.
const WINDOW: Duration = Duration::from_millis(20);
/// How often, in run time, the machine's runnable threads are read within a window.
const SAMPLE_EVERY: Duration = Duration::from_millis(4);
/// How much faster per step the other width must be to be switched to.
const MARGIN: f64 = 0.05;
/// Windows between tries of the other width after a switch; doubled after each try that
/// did not pay, up to [`MAX_INTERVAL`].
const FIRST_INTERVAL: u32 = 4;
/// The most windows between two tries of the other width.
const MAX_INTERVAL: u32 = 64;

/// The machine's runnable threads now (Linux: the numerator of `/proc/loadavg`'s fourth
/// field), `None` where it cannot be read.
fn runnable() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let field = text.split_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

/// The machine's online CPUs (the `cpuN` lines of Linux's `/proc/stat`): every CPU the
/// kernel schedules on, those of other programs' affinity included.
fn online_cpus() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let n = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    (n > 0).then_some(n)
}

/// The blocks of the current window: their steps, run time and load samples.
#[derive(Default)]
struct Window {
    steps: usize,
    elapsed: Duration,
    since_sample: Duration,
    load: f64,
    samples: u32,
}

/// Chooses, block by block, whether a run uses all of its space's threads (wide) or the
/// narrower space ([`ExecutionSpace::narrowed`]): it times the other width only while the
/// machine has more runnable threads than CPUs (Linux's `/proc/loadavg`) and keeps the faster
/// (`docs/design/0016-pacing.md`).
pub struct Pacer {
    threads: usize,
    narrow_threads: usize,
    cpus: usize,
    alternate: bool,
    narrow_now: bool,
    probing: bool,
    /// Seconds per step of the last window on each width: wide, narrow.
    estimate: [Option<f64>; 2],
    interval: u32,
    since_try: u32,
    window: Window,
    narrow_steps: usize,
    tries: usize,
    load: Box<dyn FnMut() -> Option<f64> + Send + Sync>,
}

impl Pacer {
    /// The pacer of a run on `space` under `pacing`, and the narrower space: `None` when
    /// pacing is off, the space has no narrower form, or (for `auto`) the machine's load
    /// cannot be read. An `auto` pacer starts narrow when the machine is crowded already
    /// (its runnable threads and the space's would be more than its CPUs).
    pub fn for_space<E: ExecutionSpace>(space: &E, pacing: Pacing) -> Option<(Pacer, E)> {
        let narrow = match pacing {
            Pacing::Off => return None,
            _ => space.narrowed()?,
        };
        let (threads, narrow_threads) = (space.host_threads(), narrow.host_threads());
        if pacing == Pacing::Alternate {
            return Some((
                Pacer::with_load(threads, narrow_threads, 1, true, || None),
                narrow,
            ));
        }
        let (cpus, now) = (online_cpus()?, runnable()?);
        let mut pacer = Pacer::with_load(threads, narrow_threads, cpus, false, runnable);
        // This thread is one of the runnable ones; the space's others would join it.
        pacer.narrow_now = now + (threads - 1) as f64 > cpus as f64 + 0.5;
        Some((pacer, narrow))
    }

    /// A pacer of a space of `threads` threads and its narrower form of `narrow_threads`, on
    /// a machine of `cpus` CPUs whose runnable threads `load` reads.
    fn with_load(
        threads: usize,
        narrow_threads: usize,
        cpus: usize,
        alternate: bool,
        load: impl FnMut() -> Option<f64> + Send + Sync + 'static,
    ) -> Pacer {
        Pacer {
            threads,
            narrow_threads,
            cpus,
            alternate,
            narrow_now: false,
            probing: false,
            estimate: [None; 2],
            interval: FIRST_INTERVAL,
            since_try: FIRST_INTERVAL,
            window: Window::default(),
            narrow_steps: 0,
            tries: 0,
            load: Box::new(load),
        }
    }

    /// Whether the next block runs on the narrower space.
    pub fn narrow_next(&self) -> bool {
        self.narrow_now != self.probing
    }

    /// The threads of the narrower space.
    pub fn narrow_threads(&self) -> usize {
        self.narrow_threads
    }

    /// The steps run on the narrower space so far.
    pub fn narrow_steps(&self) -> usize {
        self.narrow_steps
    }

    /// The windows run on the other width to time it so far.
    pub fn tries(&self) -> usize {
        self.tries
    }

    /// Records a block of `steps` steps that took `elapsed` on the width
    /// [`narrow_next`](Self::narrow_next) gave; at the end of a window, decides the next.
    pub fn record(&mut self, steps: usize, elapsed: Duration) {
        if self.narrow_next() {
            self.narrow_steps += steps;
        }
        if self.alternate {
            self.narrow_now = !self.narrow_now;
            return;
        }
        let w = &mut self.window;
        w.steps += steps;
        w.elapsed += elapsed;
        w.since_sample += elapsed;
        if w.samples == 0 || w.since_sample >= SAMPLE_EVERY {
            w.since_sample = Duration::ZERO;
            if let Some(r) = (self.load)() {
                w.load += r;
                w.samples += 1;
            }
        }
        if w.elapsed >= WINDOW && w.steps > 0 {
            let per_step = w.elapsed.as_secs_f64() / w.steps as f64;
            let load = (w.samples > 0).then(|| w.load / w.samples as f64);
            self.window = Window::default();
            self.decide(per_step, load);
        }
    }

    /// The decision at the end of a window that ran `per_step` seconds per step with
    /// `load` runnable threads on average.
    fn decide(&mut self, per_step: f64, load: Option<f64>) {
        let ran = usize::from(self.narrow_next());
        self.estimate[ran] = Some(per_step);
        // Crowded: more threads want to run than the machine has CPUs, counting the
        // threads the wide space would run when the run is narrow now.
        let extra = if self.narrow_now {
            self.threads - self.narrow_threads
        } else {
            0
        };
        let crowded = load.is_some_and(|r| r + extra as f64 > self.cpus as f64 + 0.5);
        if self.probing {
            self.probing = false;
            self.since_try = 0;
            let kept = usize::from(self.narrow_now);
            match self.estimate[kept] {
                Some(k) if per_step < k * (1.0 - MARGIN) => {
                    self.narrow_now = !self.narrow_now;
                    self.interval = FIRST_INTERVAL;
                }
                _ => self.interval = (self.interval * 2).min(MAX_INTERVAL),
            }
            return;
        }
        self.since_try += 1;
        if self.narrow_now && !crowded {
            // The other programs are gone: back to every thread.
            self.narrow_now = false;
            self.interval = FIRST_INTERVAL;
            self.since_try = FIRST_INTERVAL;
        } else if crowded && self.since_try >= self.interval {
            self.probing = true;
            self.tries += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// A pacer of 2 threads (narrow: 1) on 2 CPUs whose load reads `load`'s value.
    fn pacer(load: &Arc<AtomicU64>) -> Pacer {
        let l = Arc::clone(load);
        Pacer::with_load(2, 1, 2, false, move || {
            Some(f64::from_bits(l.load(Ordering::Relaxed)))
        })
    }

    /// Runs `blocks` blocks of 4 steps, each taking `wide` or `narrow` ms by the width the
    /// pacer gives it; returns each block's width (true: narrow).
    fn drive(p: &mut Pacer, blocks: usize, wide: u64, narrow: u64) -> Vec<bool> {
        (0..blocks)
            .map(|_| {
                let n = p.narrow_next();
                p.record(4, Duration::from_millis(if n { narrow } else { wide }));
                n
            })
            .collect()
    }

    /// The blocks at which a run of narrow blocks starts.
    fn starts(widths: &[bool]) -> Vec<usize> {
        (0..widths.len())
            .filter(|&i| widths[i] && (i == 0 || !widths[i - 1]))
            .collect()
    }

    fn set(load: &AtomicU64, r: f64) {
        load.store(r.to_bits(), Ordering::Relaxed);
    }

    #[test]
    fn a_quiet_machine_never_tries_one_thread_fewer() {
        let load = Arc::new(AtomicU64::new(0));
        set(&load, 2.0);
        let mut p = pacer(&load);
        assert!(drive(&mut p, 500, 2, 1).iter().all(|&n| !n));
        assert_eq!((p.tries(), p.narrow_steps()), (0, 0));
    }

    #[test]
    fn a_crowded_machine_narrows_when_that_is_faster_and_widens_when_the_others_leave() {
        let load = Arc::new(AtomicU64::new(0));
        set(&load, 3.0);
        let mut p = pacer(&load);
        // Narrow is faster (3 ms against 4 per block): tried after the first window (5
        // blocks of 4 ms), kept, the wide space tried again now and then.
        let widths = drive(&mut p, 400, 4, 3);
        assert!(!widths[..5].iter().any(|&n| n) && widths[5], "{widths:?}");
        let narrow = widths[5..].iter().filter(|&&n| n).count();
        assert!(narrow * 100 >= 90 * 395, "{narrow} of 395 narrow");
        assert_eq!(p.narrow_steps(), 4 * narrow);
        // Still crowded as the narrow run sees it: 2 runnable and the 1 thread it would add.
        set(&load, 2.0);
        let widths = drive(&mut p, 40, 4, 3);
        assert!(widths.iter().filter(|&&n| n).count() >= 30, "{widths:?}");
        // The other program left: 1 runnable (this run's thread) + 1 = 2 CPUs: wide again
        // within a window (7 blocks of 3 ms).
        set(&load, 1.0);
        let widths = drive(&mut p, 100, 2, 3);
        assert!(widths[8..].iter().all(|&n| !n), "{widths:?}");
    }

    #[test]
    fn a_crowded_machine_stays_wide_when_narrow_is_slower_and_tries_less_often() {
        let load = Arc::new(AtomicU64::new(0));
        set(&load, 3.0);
        let mut p = pacer(&load);
        let widths = drive(&mut p, 2000, 2, 4);
        // Each try lasts one window (5 narrow blocks of 4 ms) and the gaps between tries
        // double (8, 16, 32, 64 windows of 10 wide blocks), up to 64 windows.
        let tries = starts(&widths);
        assert_eq!(tries.len(), p.tries(), "{tries:?}");
        assert!(tries.iter().all(|&t| widths[t..t + 5].iter().all(|&n| n)));
        let gaps: Vec<usize> = tries.windows(2).map(|t| t[1] - t[0]).collect();
        assert!(gaps.len() >= 3, "{tries:?}");
        assert!(gaps.windows(2).all(|g| g[1] >= g[0]), "{gaps:?}");
        assert!(*gaps.last().unwrap() >= 4 * gaps[0], "{gaps:?}");
        let narrow = widths.iter().filter(|&&n| n).count();
        assert!(narrow * 100 <= 3 * widths.len(), "{narrow} narrow blocks");
    }

    #[test]
    fn alternate_switches_every_block_and_counts_the_narrow_steps() {
        let mut p = Pacer::with_load(4, 3, 4, true, || None);
        let widths: Vec<bool> = (0..6)
            .map(|_| {
                let n = p.narrow_next();
                p.record(5, Duration::from_millis(1));
                n
            })
            .collect();
        assert_eq!(widths, [false, true, false, true, false, true]);
        assert_eq!(p.narrow_steps(), 15);
    }

    #[test]
    fn the_values_are_read_and_bad_ones_are_refused_naming_the_variable() {
        for pacing in [Pacing::Auto, Pacing::Off, Pacing::Alternate] {
            assert_eq!(parse_pacing(Some(pacing.name())).unwrap(), pacing);
        }
        assert_eq!(parse_pacing(None).unwrap(), Pacing::Auto);
        assert_eq!(parse_pacing(Some(" off ")).unwrap(), Pacing::Off);
        for bad in ["sometimes", "1", "OFF x"] {
            let e = parse_pacing(Some(bad)).expect_err(bad).to_string();
            assert!(e.contains(PACING_ENV) && e.contains(bad), "{e}");
            assert!(e.contains("auto") && e.contains("off"), "{e}");
        }
    }

    /// On Linux the load reads at least this process's own running thread, and the CPUs
    /// are at least those this process may use.
    #[test]
    fn the_machine_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(runnable().expect("/proc/loadavg") >= 1.0);
            let mine = std::thread::available_parallelism().map_or(1, |n| n.get());
            assert!(online_cpus().expect("/proc/stat") >= mine);
        }
    }
}
