//! The proof-of-concept algorithm: a 2D acoustic wave simulator, generic over the execution
//! space (the paper's `WaveSimulator<ExecSpace>`).
//!
//! Second order in time, fourth order in space by default (any even order from 2 to 16 with
//! [`WaveConfig::space_order`]). Each step runs `add_source → fd_pzz → fd_pxx → fd_time` (the
//! paper's split kernels, order 4 only) or `add_source → fd_step` (fused, the default), then
//! the optional absorbing layer's `fd_absorb`, and rotates `pold ← p ← pnew`. The algorithm is
//! written once; where its fields live and how its kernels run follow from `E`.
//!
//! Beyond the paper (each option defaults to the paper's behaviour):
//! - [`WaveConfig::space_order`]: the fused step of that order (`laplacian(p, N)` in the DSL);
//!   the border that stays zero is its radius `N / 2`; the CFL limit is [`cfl_limit_for`].
//! - [`WaveConfig::absorb`]: an absorbing layer of that many cells on every side, a damping
//!   term `η p_t` whose strength grows quadratically into the layer (see [`absorbing_eta`]).
//! - [`WaveConfig::source_mode`]: [`SourceMode::Set`] (the paper) or [`SourceMode::Add`], a
//!   delayed Ricker wavelet injected as a point source of the discretised equation.
//! - [`WaveConfig::receivers`]: traces recorded every step, read back with
//!   [`WaveSimulator::seismogram`].
//! - [`WaveConfig::velocity`]: a velocity model given as data; layers apply on top.
//! - [`WaveConfig::snapshot_every`]: a host copy of the wavefield handed to a hook every K
//!   steps ([`WaveSimulator::run_with`]).

use crate::kernels::{
    add_source, fd_kv2, fd_pxx, fd_pzz, fd_step_of_order, fd_time, inject_source, FdAbsorb,
};
use crate::launch::launch_in;
use crate::model::VelocityModel;
use crate::receivers::{ReceiverLine, Seismogram};
use crate::{Error, ExecutionSpace, HostField, MemorySpace, Real, Result, ScalarField};
use std::any::Any;
use std::time::{Duration, Instant};

/// Stencil radius of the default (4th-order) scheme: the border that stays at zero.
pub const RADIUS: usize = 2;

/// The default space order (the paper's).
pub const DEFAULT_SPACE_ORDER: usize = 4;

/// Strength of the absorbing layer: the damping at the outer edge is
/// `η_max = ABSORB_STRENGTH · v / (N · dh)` for a layer of `N` cells (see [`absorbing_eta`]).
/// Chosen by measurement (tests/tests/solver_absorb.rs): among 3, 6, 10, 20 and 30 it
/// reflects least for layers 2 to 3 peak wavelengths wide.
pub const ABSORB_STRENGTH: f64 = 20.0;

/// Second-derivative weights of the 4th-order scheme, `[w0, w1, w2]` (the paper's
/// `c0, c1, c2`).
pub const WEIGHTS: [f64; 3] = [-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0];

/// Stability limit of the 2D leapfrog scheme on CFL = vmax·dt/dh: `2 / sqrt(2 Σ|w|)`,
/// about 0.612 for the 4th-order weights (von Neumann analysis of the worst-case mode).
///
/// ```
/// assert!((ppstencil::wave::cfl_limit() - 0.6124).abs() < 1e-4);
/// ```
pub fn cfl_limit() -> f64 {
    let sum: f64 = WEIGHTS[0].abs() + 2.0 * (WEIGHTS[1].abs() + WEIGHTS[2].abs());
    2.0 / (2.0 * sum).sqrt()
}

/// Checks a space order: even, from 2 to 16.
pub fn check_space_order(order: usize) -> Result<()> {
    if (2..=16).contains(&order) && order % 2 == 0 {
        Ok(())
    } else {
        Err(Error::invalid(
            "space order",
            order,
            "use an even order from 2 to 16 (2, 4, 6, ..., 16; the paper's is 4)",
        ))
    }
}

/// Central second-derivative weights `[w0, w1, ..., wm]` of an even `order` (`m = order/2`),
/// from the closed form `wk = 2 (-1)^(k+1) (m!)² / (k² (m-k)! (m+k)!)`, `w0 = -2 Σ wk`
/// (the kernels' weights come from Fornberg's algorithm in kernels-gen; both agree).
///
/// ```
/// let w = ppstencil::wave::second_derivative_weights(4)?;
/// assert_eq!(w, ppstencil::wave::WEIGHTS.to_vec());
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub fn second_derivative_weights(order: usize) -> Result<Vec<f64>> {
    check_space_order(order)?;
    let m = order / 2;
    let fact = |n: usize| (1..=n).map(|k| k as f64).product::<f64>();
    let mut w = vec![0.0];
    for k in 1..=m {
        let sign = if k % 2 == 1 { 1.0 } else { -1.0 };
        let kf = k as f64;
        // Factorials up to 16! are exact in f64; the quotient is one rounding per operation.
        w.push(2.0 * sign * fact(m) * fact(m) / (kf * kf * fact(m - k) * fact(m + k)));
    }
    w[0] = -2.0 * w[1..].iter().sum::<f64>();
    Ok(w)
}

/// Stability limit `2 / sqrt(2 Σ|w|)` of the 2D leapfrog scheme at space order `order`
/// (0.7071 at order 2, 0.6124 at order 4, decreasing towards `√2/π ≈ 0.450` as the order
/// grows, since `Σ|w|` tends to the spectral `π²`).
///
/// ```
/// use ppstencil::wave::cfl_limit_for;
/// assert!((cfl_limit_for(2)? - 0.5f64.sqrt()).abs() < 1e-12);
/// assert_eq!(cfl_limit_for(4)?, ppstencil::wave::cfl_limit());
/// assert!(cfl_limit_for(5).is_err());
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub fn cfl_limit_for(order: usize) -> Result<f64> {
    if order == DEFAULT_SPACE_ORDER {
        return Ok(cfl_limit());
    }
    let w = second_derivative_weights(order)?;
    let sum: f64 = w[0].abs() + 2.0 * w[1..].iter().map(|x| x.abs()).sum::<f64>();
    Ok(2.0 / (2.0 * sum).sqrt())
}

/// How the source wavelet enters the wavefield.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceMode {
    /// The paper's: the pressure at the source point is *set* to `ricker(t)` before each step
    /// (a zero-phase Ricker starting at its peak, [`ricker`]).
    #[default]
    Set,
    /// The Ricker wavelet delayed by [`WaveConfig::source_delay`] is *added* to the new
    /// pressure after each step, scaled as a point source of the discretised equation
    /// `p_tt = v² (∇²p + s(t) δ(x - xs))`: `pnew[src] += dt² v_src² / dh² · s(t)`, so
    /// amplitudes are physical and do not depend on the grid.
    Add,
}

impl SourceMode {
    /// `"set"` or `"add"`.
    pub fn name(self) -> &'static str {
        match self {
            SourceMode::Set => "set",
            SourceMode::Add => "add",
        }
    }
}

impl std::str::FromStr for SourceMode {
    type Err = Error;

    /// Parses `set` or `add`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "set" => Ok(SourceMode::Set),
            "add" => Ok(SourceMode::Add),
            other => Err(Error::invalid(
                "source mode",
                other,
                "use `set` (the paper's: the source point is set to the wavelet) or `add` (a delayed Ricker injected additively)",
            )),
        }
    }
}

/// A Ricker wavelet of peak frequency `fpeak` delayed by `delay` seconds, sampled at
/// `it · dt`: `s(t) = (1 - 2a) e^(-a)`, `a = (π fpeak (t - delay))²`, in f64.
///
/// ```
/// let s = ppstencil::wave::ricker_delayed(101, 0.001, 10.0, 0.05);
/// assert_eq!(s[50], 1.0); // the peak at t = delay
/// assert!((s[0] - (1.0 - 2.0 * 0.25 * std::f64::consts::PI.powi(2)) * (-0.25 * std::f64::consts::PI.powi(2)).exp()).abs() < 1e-15);
/// ```
pub fn ricker_delayed(nt: usize, dt: f64, fpeak: f64, delay: f64) -> Vec<f64> {
    let pi = std::f64::consts::PI;
    (0..nt)
        .map(|it| {
            let t = it as f64 * dt - delay;
            let a = (pi * fpeak * t).powi(2);
            (1.0 - 2.0 * a) * (-a).exp()
        })
        .collect()
}

/// The absorbing layer's damping, as the factor `eta = η dt / 2` of [`fd_absorb`](crate::kernels::fd_absorb), for a
/// point `d` cells deep into a layer of `width` cells (`1 <= d <= width`; 0 outside):
/// `η = ABSORB_STRENGTH · v / (width · dh) · (d / width)²`. At a corner, the depths along z
/// and x add their contributions.
///
/// The quadratic profile grows smoothly from 0, so the layer's inner edge reflects little;
/// a wave crossing the layer at normal incidence is attenuated by about
/// `exp(-ABSORB_STRENGTH / 6)` in amplitude (`∫ η / 2v dx`), so `exp(-ABSORB_STRENGTH / 3)`
/// out and back (when `η` is small against the wave's angular frequency).
pub fn absorbing_eta(d: usize, width: usize, v: f64, dh: f64, dt: f64) -> f64 {
    if d == 0 || width == 0 {
        return 0.0;
    }
    let q = d as f64 / width as f64;
    let eta = ABSORB_STRENGTH * v / (width as f64 * dh) * q * q;
    eta * dt / 2.0
}

/// Depth of index `i` into a layer of `width` cells at both ends of `0..n`: `width` at the
/// outermost cell, 1 at the innermost layer cell, 0 in the interior.
fn layer_depth(i: usize, n: usize, width: usize) -> usize {
    if i < width {
        width - i
    } else if i + width >= n {
        i + width + 1 - n
    } else {
        0
    }
}

/// Rows `[z0, z1)` of the velocity model set to `velocity`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layer {
    /// First row.
    pub z0: usize,
    /// One past the last row.
    pub z1: usize,
    /// Velocity in m/s.
    pub velocity: f64,
}

/// Which kernels make up a time step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernels {
    /// The paper's four kernels: `add_source`, `fd_pzz`, `fd_pxx`, `fd_time` (40 bytes/point).
    Split,
    /// `add_source` then the fused `fd_step` (16 bytes/point); bit-identical results.
    #[default]
    Fused,
}

impl Kernels {
    /// `"split"` or `"fused"`.
    pub fn name(self) -> &'static str {
        match self {
            Kernels::Split => "split",
            Kernels::Fused => "fused",
        }
    }
}

/// Every parameter of a simulation. [`WaveConfig::default`] is the paper's problem.
#[derive(Clone, Debug, PartialEq)]
pub struct WaveConfig {
    /// Rows (depth samples).
    pub nz: usize,
    /// Columns (horizontal samples).
    pub nx: usize,
    /// Time steps.
    pub nt: usize,
    /// Time step in seconds.
    pub dt: f64,
    /// Grid spacing in metres (same in z and x).
    pub dh: f64,
    /// Source row.
    pub src_z: usize,
    /// Source column.
    pub src_x: usize,
    /// Ricker peak frequency in Hz.
    pub fpeak: f64,
    /// Background velocity in m/s: every cell starts at it.
    pub vmin: f64,
    /// Layers applied in order on top of `vmin`.
    pub layers: Vec<Layer>,
    /// Split (paper) or fused time step.
    pub kernels: Kernels,
    /// Even space order from 2 to 16 (the paper's is 4); the split kernels exist at order 4
    /// only. `--space-order N`.
    pub space_order: usize,
    /// Width in cells of the absorbing layer on every side (0: none, the paper's rigid
    /// border). The layer lies inside the `nz × nx` grid. `--absorb N`.
    pub absorb: usize,
    /// Set (the paper's) or additive source. `--source-mode set|add`.
    pub source_mode: SourceMode,
    /// Delay of the additive source's Ricker peak in seconds; `None` means `1.5 / fpeak`.
    /// `--source-delay S`.
    pub source_delay: Option<f64>,
    /// Receiver positions `(z, x)` (row, column), recorded after every step.
    /// `--receivers Z:X0:X1:STEP` (repeatable, see [`ReceiverLine`]) and a file of positions
    /// ([`parse_positions`](crate::receivers::parse_positions)).
    pub receivers: Vec<(usize, usize)>,
    /// Hand a host copy of the wavefield to the snapshot hook every K steps (`None`: never).
    /// `--snapshot-every K`.
    pub snapshot_every: Option<usize>,
    /// A velocity model given as data, instead of the constant `vmin` background (its shape
    /// must be `nz × nx`); `layers` still apply on top. `--velocity FILE.npy`.
    pub velocity: Option<VelocityModel>,
}

impl Default for WaveConfig {
    fn default() -> Self {
        WaveConfig::paper()
    }
}

fn positive_finite(name: &str, v: f64, unit: &str) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            name,
            v,
            format!("must be a finite number greater than 0 {unit}"),
        ))
    }
}

impl WaveConfig {
    /// The paper's run: 1751 × 5001, 4001 steps of 0.2 ms, dh = 3 m, source at (625, 2500),
    /// 10 Hz Ricker, vmin 1500 m/s, layers [750, 1125) = 3000 and [1125, 1751) = 4800 m/s.
    pub fn paper() -> Self {
        WaveConfig {
            nz: 1751,
            nx: 5001,
            nt: 4001,
            dt: 0.0002,
            dh: 3.0,
            src_z: 625,
            src_x: 2500,
            fpeak: 10.0,
            vmin: 1500.0,
            layers: vec![
                Layer {
                    z0: 750,
                    z1: 1125,
                    velocity: 3000.0,
                },
                Layer {
                    z0: 1125,
                    z1: 1751,
                    velocity: 4800.0,
                },
            ],
            kernels: Kernels::Fused,
            space_order: DEFAULT_SPACE_ORDER,
            absorb: 0,
            source_mode: SourceMode::Set,
            source_delay: None,
            receivers: Vec::new(),
            snapshot_every: None,
            velocity: None,
        }
    }

    /// Largest velocity of the model (the background `vmin` or the velocity model, with the
    /// layers on top).
    pub fn vmax(&self) -> f64 {
        let background = match &self.velocity {
            Some(m) => m.vmax(),
            None => self.vmin,
        };
        self.layers
            .iter()
            .map(|l| l.velocity)
            .fold(background, f64::max)
    }

    /// The stencil radius of the space order: the border that stays at zero.
    pub fn radius(&self) -> usize {
        self.space_order / 2
    }

    /// The additive source's delay: [`source_delay`](Self::source_delay) or `1.5 / fpeak`.
    pub fn source_delay(&self) -> f64 {
        self.source_delay.unwrap_or(1.5 / self.fpeak)
    }

    /// Uses `model` as the velocity background and sets `nz`, `nx` to its shape.
    pub fn set_velocity_model(&mut self, model: VelocityModel) {
        self.nz = model.nz();
        self.nx = model.nx();
        self.velocity = Some(model);
    }

    /// Adds the receivers of a line.
    pub fn add_receiver_line(&mut self, line: ReceiverLine) {
        self.receivers.extend(line.positions());
    }

    /// CFL number `vmax · dt / dh`.
    pub fn cfl(&self) -> f64 {
        self.vmax() * self.dt / self.dh
    }

    /// Checks every parameter; the error names the value, its valid range and the fix.
    pub fn validate(&self) -> Result<()> {
        check_space_order(self.space_order)?;
        let r = self.radius();
        let order = self.space_order;
        let min = 2 * r + 1;
        if self.nz < min {
            return Err(Error::invalid(
                "nz",
                self.nz,
                format!("the order-{order} stencil needs at least {min} rows"),
            ));
        }
        if self.nx < min {
            return Err(Error::invalid(
                "nx",
                self.nx,
                format!("the order-{order} stencil needs at least {min} columns"),
            ));
        }
        if self.nz.checked_mul(self.nx).is_none() {
            return Err(Error::invalid(
                "nz x nx",
                format!("{} x {}", self.nz, self.nx),
                "too many points",
            ));
        }
        if self.nt == 0 {
            return Err(Error::invalid("nt", 0, "run at least 1 time step"));
        }
        if self.kernels == Kernels::Split && order != DEFAULT_SPACE_ORDER {
            return Err(Error::invalid(
                "space order",
                order,
                "the split kernels (the paper's fd_pxx, fd_pzz, fd_time) are 4th order only; use the fused kernels for another order, or space order 4",
            ));
        }
        positive_finite("dt", self.dt, "seconds")?;
        positive_finite("dh", self.dh, "metres")?;
        positive_finite("fpeak", self.fpeak, "Hz")?;
        positive_finite("vmin", self.vmin, "m/s")?;
        if let Some(d) = self.source_delay {
            if !(d.is_finite() && d >= 0.0) {
                return Err(Error::invalid(
                    "source delay",
                    d,
                    "must be a finite number of seconds, 0 or more (default 1.5 / fpeak)",
                ));
            }
        }
        if self.snapshot_every == Some(0) {
            return Err(Error::invalid(
                "snapshot interval",
                0,
                "write a snapshot every K >= 1 steps, or none",
            ));
        }
        let narrow = self.nz.min(self.nx);
        if 2 * self.absorb >= narrow {
            return Err(Error::invalid(
                "absorb",
                self.absorb,
                format!(
                    "the absorbing layer must be narrower than half the {} x {} grid: absorb <= {} (or 0 for none)",
                    self.nz,
                    self.nx,
                    (narrow - 1) / 2
                ),
            ));
        }
        if self.src_z < r || self.src_z >= self.nz - r {
            return Err(Error::invalid(
                "src-z",
                self.src_z,
                format!(
                    "the source row must lie inside the order-{order} border of {r} cells: {r} <= src-z < {}",
                    self.nz - r
                ),
            ));
        }
        if self.src_x < r || self.src_x >= self.nx - r {
            return Err(Error::invalid(
                "src-x",
                self.src_x,
                format!(
                    "the source column must lie inside the order-{order} border of {r} cells: {r} <= src-x < {}",
                    self.nx - r
                ),
            ));
        }
        for &(z, x) in &self.receivers {
            if z >= self.nz || x >= self.nx {
                return Err(Error::invalid(
                    "receiver",
                    format!("({z}, {x})"),
                    format!(
                        "receivers must lie in the {} x {} grid: 0 <= z < {}, 0 <= x < {}",
                        self.nz, self.nx, self.nz, self.nx
                    ),
                ));
            }
        }
        if let Some(m) = &self.velocity {
            if (m.nz(), m.nx()) != (self.nz, self.nx) {
                return Err(Error::invalid(
                    "velocity model shape",
                    format!("{} x {}", m.nz(), m.nx()),
                    format!(
                        "must match the grid {} x {} (the model's shape sets the grid)",
                        self.nz, self.nx
                    ),
                ));
            }
        }
        for l in &self.layers {
            let shown = format!("{}:{}:{}", l.z0, l.z1, l.velocity);
            if l.z0 >= l.z1 {
                return Err(Error::invalid(
                    "layer",
                    shown,
                    "Z0 must be smaller than Z1 (rows [Z0, Z1) get velocity V)",
                ));
            }
            if l.z1 > self.nz {
                return Err(Error::invalid(
                    "layer",
                    shown,
                    format!("rows must lie in the grid: Z1 <= nz = {}", self.nz),
                ));
            }
            if !(l.velocity.is_finite() && l.velocity > 0.0) {
                return Err(Error::invalid(
                    "layer",
                    shown,
                    "the velocity V must be a finite number greater than 0 m/s",
                ));
            }
        }
        self.check_cfl(self.vmax())
    }

    /// Checks the stability condition for a model whose largest velocity is `vmax`.
    pub fn check_cfl(&self, vmax: f64) -> Result<()> {
        let cfl = vmax * self.dt / self.dh;
        let limit = cfl_limit_for(self.space_order)?;
        if cfl > limit {
            return Err(Error::invalid(
                "dt",
                self.dt,
                format!(
                    "CFL = vmax*dt/dh = {vmax}*{}/{} = {cfl:.4} exceeds the stability limit {limit:.4} of the order-{} scheme; use dt <= {:.6e} s (or a larger dh)",
                    self.dt,
                    self.dh,
                    self.space_order,
                    limit * self.dh / vmax
                ),
            ));
        }
        Ok(())
    }

    /// The velocity model on the host: the background (`vmin`, or the
    /// [`velocity`](Self::velocity) model) with the layers on top.
    pub fn velocity_model<T: Real>(&self) -> Result<HostField<T>> {
        let mut v = HostField::<T>::new(self.nz, self.nx)?;
        match &self.velocity {
            Some(m) if (m.nz(), m.nx()) == (self.nz, self.nx) => {
                for (dst, &src) in v.as_mut_slice().iter_mut().zip(m.values()) {
                    *dst = T::lit(src);
                }
            }
            Some(m) => {
                return Err(Error::invalid(
                    "velocity model shape",
                    format!("{} x {}", m.nz(), m.nx()),
                    format!("must match the grid {} x {}", self.nz, self.nx),
                ))
            }
            None => v.fill(T::lit(self.vmin)),
        }
        for l in &self.layers {
            let end = l.z1.min(self.nz);
            if l.z0 < end {
                v.as_mut_slice()[l.z0 * self.nx..end * self.nx].fill(T::lit(l.velocity));
            }
        }
        Ok(v)
    }
}

/// The source wavelet as the paper computes it: `r[it] = (1 - 2a) e^(-a)`, `a = (π f t)²`,
/// `t = it · dt` (a zero-phase Ricker starting at its peak, `r[0] = 1`). `t` is rounded to the
/// element type first and `a` evaluated in `f64`, as in the reference C++ code.
///
/// ```
/// let r = ppstencil::wave::ricker::<f64>(3, 0.001, 10.0);
/// assert_eq!(r[0], 1.0);
/// let a = (std::f64::consts::PI * 10.0 * 0.001f64).powi(2);
/// assert!((r[1] - (1.0 - 2.0 * a) * (-a).exp()).abs() < 1e-15);
/// ```
pub fn ricker<T: Real>(nt: usize, dt: f64, fpeak: f64) -> Vec<T> {
    let pi = std::f64::consts::PI;
    (0..nt)
        .map(|it| {
            let t = (T::lit(it as f64) * T::lit(dt)).to_f64();
            let a = T::lit(pi * pi * fpeak * fpeak * t * t);
            (T::lit(1.0) - T::lit(2.0) * a) * (-a).exp()
        })
        .collect()
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
    /// Grid points updated per second, in millions (`nz · nx · nt / wall`).
    pub mpoints_per_s: f64,
}

/// The 2D acoustic wave simulator, generic over the execution space `E` and element type `T`.
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
pub struct WaveSimulator<E: ExecutionSpace, T: Real = f32> {
    space: E,
    config: WaveConfig,
    velocity: Option<ScalarField<E::Memory, T>>,
    velocity_max: f64,
    wavefield: Option<ScalarField<E::Memory, T>>,
    seismogram: Option<Seismogram<T>>,
}

/// Reads the receivers' samples from `p`: in place for host memory, else through a host copy
/// of the whole field (`scratch`, allocated once). A device-side gather kernel would avoid
/// that copy; the DSL cannot express one yet.
fn sample_receivers<M: MemorySpace, T: Real>(
    p: &ScalarField<M, T>,
    points: &[usize],
    out: &mut [T],
    scratch: &mut Option<HostField<T>>,
) -> Result<()> {
    let host: &HostField<T> = match (p as &dyn Any).downcast_ref::<HostField<T>>() {
        Some(h) => h,
        None => {
            let h = match scratch {
                Some(h) => h,
                None => scratch.insert(HostField::new(p.nz(), p.nx())?),
            };
            p.copy_to_host(h.as_mut_slice())?;
            h
        }
    };
    let values = host.as_slice();
    for (o, &k) in out.iter_mut().zip(points) {
        *o = values[k];
    }
    Ok(())
}

impl<E: ExecutionSpace, T: Real> WaveSimulator<E, T> {
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
        }
    }

    /// The execution space.
    pub fn space(&self) -> &E {
        &self.space
    }

    /// All parameters.
    pub fn config(&self) -> &WaveConfig {
        &self.config
    }

    /// Sets the time step `dt` (s).
    pub fn set_time_step(&mut self, dt: f64) -> &mut Self {
        self.config.dt = dt;
        self
    }

    /// Sets the grid spacing `dh` (m).
    pub fn set_space_step(&mut self, dh: f64) -> &mut Self {
        self.config.dh = dh;
        self
    }

    /// Sets the number of time steps.
    pub fn set_time_steps(&mut self, nt: usize) -> &mut Self {
        self.config.nt = nt;
        self
    }

    /// Sets the grid to `nz` rows by `nx` columns.
    pub fn set_dimensions(&mut self, nz: usize, nx: usize) -> &mut Self {
        self.config.nz = nz;
        self.config.nx = nx;
        self
    }

    /// Places the source at row `z`, column `x`.
    pub fn set_source_position(&mut self, z: usize, x: usize) -> &mut Self {
        self.config.src_z = z;
        self.config.src_x = x;
        self
    }

    /// Sets the Ricker wavelet's peak frequency (Hz).
    pub fn set_ricker_peak_frequency(&mut self, f: f64) -> &mut Self {
        self.config.fpeak = f;
        self
    }

    /// Sets the background velocity (m/s).
    pub fn set_vmin(&mut self, v: f64) -> &mut Self {
        self.config.vmin = v;
        self
    }

    /// Adds a layer: rows `[z0, z1)` get velocity `v` (m/s).
    pub fn add_velocity_layer(&mut self, z0: usize, z1: usize, v: f64) -> &mut Self {
        self.config.layers.push(Layer {
            z0,
            z1,
            velocity: v,
        });
        self
    }

    /// Chooses the split (paper) or fused time step.
    pub fn set_kernels(&mut self, kernels: Kernels) -> &mut Self {
        self.config.kernels = kernels;
        self
    }

    /// Sets the space order (even, 2 to 16).
    pub fn set_space_order(&mut self, order: usize) -> &mut Self {
        self.config.space_order = order;
        self
    }

    /// Sets the width of the absorbing layer on every side, in cells (0: none).
    pub fn set_absorbing_layer(&mut self, cells: usize) -> &mut Self {
        self.config.absorb = cells;
        self
    }

    /// Chooses how the source enters (set, the paper's, or add).
    pub fn set_source_mode(&mut self, mode: SourceMode) -> &mut Self {
        self.config.source_mode = mode;
        self
    }

    /// Sets the additive source's delay in seconds (`None`: `1.5 / fpeak`).
    pub fn set_source_delay(&mut self, delay: Option<f64>) -> &mut Self {
        self.config.source_delay = delay;
        self
    }

    /// Adds a receiver at row `z`, column `x`.
    pub fn add_receiver(&mut self, z: usize, x: usize) -> &mut Self {
        self.config.receivers.push((z, x));
        self
    }

    /// Adds the receivers of a line.
    pub fn add_receiver_line(&mut self, line: ReceiverLine) -> &mut Self {
        self.config.add_receiver_line(line);
        self
    }

    /// Removes every receiver.
    pub fn clear_receivers(&mut self) -> &mut Self {
        self.config.receivers.clear();
        self
    }

    /// Hands a host copy of the wavefield to [`run_with`](Self::run_with)'s hook every `k`
    /// steps (`None`: never; `Some(0)` is rejected by [`validate`](Self::validate)).
    pub fn set_snapshot_every(&mut self, k: Option<usize>) -> &mut Self {
        self.config.snapshot_every = k;
        self
    }

    /// Uses a velocity model (host data) as the background, with the layers on top; the
    /// grid takes its shape.
    pub fn set_velocity_model(&mut self, model: VelocityModel) -> &mut Self {
        self.config.set_velocity_model(model);
        self
    }

    /// Removes every layer (the model becomes `vmin` everywhere).
    pub fn clear_velocity_layers(&mut self) -> &mut Self {
        self.config.layers.clear();
        self
    }

    /// Uses a velocity model already in `E`'s memory space as it is, instead of the config's
    /// background and layers (for a model given as host data with layers on top, use
    /// [`set_velocity_model`](Self::set_velocity_model)). Its values are checked (finite,
    /// > 0) and its maximum is used for the CFL check.
    pub fn set_velocity(&mut self, v: ScalarField<E::Memory, T>) -> Result<()> {
        let host = v.to_host()?;
        let mut vmax = 0.0f64;
        for (k, &x) in host.as_slice().iter().enumerate() {
            let x = x.to_f64();
            if !(x.is_finite() && x > 0.0) {
                return Err(Error::invalid(
                    "velocity",
                    x,
                    format!(
                        "at row {}, column {}: every velocity must be finite and greater than 0",
                        k / host.nx(),
                        k % host.nx()
                    ),
                ));
            }
            vmax = vmax.max(x);
        }
        self.velocity_max = vmax;
        self.velocity = Some(v);
        Ok(())
    }

    /// Time step (s).
    pub fn time_step(&self) -> f64 {
        self.config.dt
    }

    /// Grid spacing (m).
    pub fn space_step(&self) -> f64 {
        self.config.dh
    }

    /// Number of time steps.
    pub fn time_steps(&self) -> usize {
        self.config.nt
    }

    /// `(nz, nx)`.
    pub fn dimensions(&self) -> (usize, usize) {
        (self.config.nz, self.config.nx)
    }

    /// CFL number of the current model.
    pub fn cfl(&self) -> f64 {
        match &self.velocity {
            Some(_) => self.velocity_max * self.config.dt / self.config.dh,
            None => self.config.cfl(),
        }
    }

    /// Checks every parameter without running.
    pub fn validate(&self) -> Result<()> {
        self.config.validate()?;
        if let Some(v) = &self.velocity {
            if v.shape() != (self.config.nz, self.config.nx) {
                return Err(Error::invalid(
                    "velocity shape",
                    format!("{} x {}", v.nz(), v.nx()),
                    format!(
                        "must match the grid {} x {}",
                        self.config.nz, self.config.nx
                    ),
                ));
            }
            self.config.check_cfl(self.velocity_max)?;
        }
        Ok(())
    }

    /// Runs the whole simulation.
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
        mut snapshot: impl FnMut(usize, &HostField<T>) -> Result<()>,
    ) -> Result<RunStats> {
        self.validate()?;
        let c = self.config.clone();
        let start = Instant::now();
        // The model on the host: needed for the layer's damping and the source's scale.
        let v_host: Option<HostField<T>> =
            if c.absorb > 0 || c.source_mode == SourceMode::Add || self.velocity.is_none() {
                Some(self.velocity_host()?)
            } else {
                None
            };
        let layered;
        let v = match &self.velocity {
            Some(v) => v,
            None => match &v_host {
                Some(h) => {
                    layered = ScalarField::from_host(h)?;
                    &layered
                }
                None => return Err(Error::invalid("velocity", "none", "no velocity model")),
            },
        };
        let eta = match (&v_host, c.absorb) {
            (Some(vh), width) if width > 0 => {
                let (nz, nx) = (c.nz, c.nx);
                let host = HostField::<T>::from_fn(nz, nx, |iz, ix| {
                    let vel = vh.as_slice()[iz * nx + ix].to_f64();
                    let ez = absorbing_eta(layer_depth(iz, nz, width), width, vel, c.dh, c.dt);
                    let ex = absorbing_eta(layer_depth(ix, nx, width), width, vel, c.dh, c.dt);
                    T::lit(ez + ex)
                })?;
                Some(ScalarField::<E::Memory, T>::from_host(&host)?)
            }
            _ => None,
        };
        // The source term of each step.
        let wavelet: Vec<T> = match c.source_mode {
            SourceMode::Set => ricker::<T>(c.nt, c.dt, c.fpeak),
            SourceMode::Add => {
                let v_src = match &v_host {
                    Some(vh) => vh.as_slice()[c.src_z * c.nx + c.src_x].to_f64(),
                    None => c.vmin,
                };
                let scale = c.dt * c.dt * v_src * v_src / (c.dh * c.dh);
                ricker_delayed(c.nt, c.dt, c.fpeak, c.source_delay())
                    .into_iter()
                    .map(|s| T::lit(scale * s))
                    .collect()
            }
        };
        let nrec = c.receivers.len();
        let rec_points: Vec<usize> = c.receivers.iter().map(|&(z, x)| z * c.nx + x).collect();
        let samples = c.nt.checked_mul(nrec).ok_or_else(|| {
            Error::invalid(
                "receivers",
                nrec,
                "nt x receivers overflows usize; use fewer receivers",
            )
        })?;
        let mut traces: Vec<T> = Vec::new();
        traces
            .try_reserve_exact(samples)
            .map_err(|_| Error::OutOfMemory {
                space: "host",
                bytes: samples.saturating_mul(std::mem::size_of::<T>()),
            })?;
        traces.resize(samples, T::ZERO);
        let mut scratch: Option<HostField<T>> = None;

        let mut p = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
        let mut pold = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
        let mut pnew = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
        let dtdh2 = T::lit((c.dt / c.dh) * (c.dt / c.dh));
        let space = &self.space;
        // The fields the step needs besides p, pold, pnew.
        let mut step = match c.kernels {
            Kernels::Split => StepFields::Split {
                pxx: ScalarField::<E::Memory, T>::new(c.nz, c.nx)?,
                pzz: ScalarField::<E::Memory, T>::new(c.nz, c.nx)?,
            },
            Kernels::Fused => {
                let mut kv2 = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
                fd_kv2(space, &mut kv2, v, dtdh2)?;
                StepFields::Fused { kv2 }
            }
        };
        for (it, &w) in wavelet.iter().enumerate() {
            if c.source_mode == SourceMode::Set {
                add_source(space, &mut p, w, c.src_z, c.src_x)?;
            }
            match &mut step {
                StepFields::Split { pxx, pzz } => {
                    fd_pzz(space, pzz, &p)?;
                    fd_pxx(space, pxx, &p)?;
                    fd_time(space, &mut pnew, &p, &pold, v, pxx, pzz, dtdh2)?;
                }
                StepFields::Fused { kv2 } => {
                    fd_step_of_order(space, c.space_order, &mut pnew, &p, &pold, kv2)?
                }
            }
            if c.source_mode == SourceMode::Add {
                inject_source(space, &mut pnew, w, c.src_z, c.src_x)?;
            }
            if let Some(eta) = &eta {
                // Only the layer: the top and bottom strips, then the sides between them.
                let (w, nz, nx) = (c.absorb, c.nz, c.nx);
                for (rows, cols) in [
                    (0..w, 0..nx),
                    (nz - w..nz, 0..nx),
                    (w..nz - w, 0..w),
                    (w..nz - w, nx - w..nx),
                ] {
                    launch_in::<FdAbsorb, E, T>(
                        space,
                        rows,
                        cols,
                        &mut [&mut pnew],
                        &[&pold, eta],
                        &[],
                    )?;
                }
            }
            pold.swap(&mut p);
            p.swap(&mut pnew);
            if nrec > 0 {
                let row = &mut traces[it * nrec..(it + 1) * nrec];
                sample_receivers(&p, &rec_points, row, &mut scratch)?;
            }
            if let Some(k) = c.snapshot_every {
                if (it + 1) % k == 0 {
                    snapshot(it + 1, &p.to_host()?)?;
                }
            }
            progress(it + 1, c.nt);
        }
        space.synchronize()?;
        let wall = start.elapsed();
        self.wavefield = Some(p);
        self.seismogram = Some(Seismogram {
            nt: c.nt,
            nrec,
            dt: c.dt,
            positions: c.receivers.clone(),
            data: traces,
        });
        let points = (c.nz * c.nx) as f64 * c.nt as f64;
        Ok(RunStats {
            steps: c.nt,
            wall,
            mpoints_per_s: points / wall.as_secs_f64().max(1e-12) / 1e6,
        })
    }

    /// The traces recorded at the receivers by the last [`run`](Self::run) (`nt × nrec`;
    /// `nrec` is 0 without receivers), or `None` before the first run.
    pub fn seismogram(&self) -> Option<&Seismogram<T>> {
        self.seismogram.as_ref()
    }

    /// The final pressure field in `E`'s memory space (after [`run`](Self::run)).
    pub fn wavefield(&self) -> Option<&ScalarField<E::Memory, T>> {
        self.wavefield.as_ref()
    }

    /// Copies the final pressure field to the host.
    pub fn wavefield_host(&self) -> Result<HostField<T>> {
        match &self.wavefield {
            Some(p) => p.to_host(),
            None => Err(Error::invalid(
                "wavefield",
                "none",
                "call run() before reading the wavefield",
            )),
        }
    }

    /// The velocity model (the one given to [`set_velocity`](Self::set_velocity), else the
    /// layered model), on the host.
    pub fn velocity_host(&self) -> Result<HostField<T>> {
        match &self.velocity {
            Some(v) => v.to_host(),
            None => self.config.velocity_model(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rayon, Serial};

    fn small(kernels: Kernels) -> WaveConfig {
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
        let mut split = WaveSimulator::<Serial>::with_config(Serial, small(Kernels::Split));
        let mut fused = WaveSimulator::<Rayon>::with_config(Rayon::new(), small(Kernels::Fused));
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
            let mut c = small(Kernels::Fused);
            f(&mut c);
            let e = c.validate().expect_err("must be rejected").to_string();
            assert!(e.contains(needle), "`{e}` should mention `{needle}`");
        };
        check(&|c| c.nz = 4, "nz = 4");
        check(&|c| c.nt = 0, "nt = 0");
        check(&|c| c.dt = -1.0, "dt = -1");
        check(&|c| c.dh = f64::NAN, "dh = NaN");
        check(&|c| c.src_z = 1, "inside the order-4 border");
        check(&|c| c.src_x = 68, "src-x = 68");
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
                c.kernels = Kernels::Split;
                c.space_order = 6;
            },
            "split kernels",
        );
        check(
            &|c| {
                c.kernels = Kernels::Fused;
                c.space_order = 16;
                c.src_z = 7;
            },
            "order-16 border of 8 cells: 8 <= src-z < 52",
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
            "velocity model shape = 2 x 2",
        );
        check(
            &|c| {
                c.kernels = Kernels::Fused;
                c.space_order = 16;
                c.dt = 0.00145;
            },
            "of the order-16 scheme",
        );
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
