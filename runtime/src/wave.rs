//! The proof-of-concept algorithm: a 2D acoustic wave simulator, generic over the execution
//! space (the paper's `WaveSimulator<ExecSpace>`).
//!
//! Second order in time, fourth order in space. Each step runs
//! `add_source → fd_pzz → fd_pxx → fd_time` (the paper's split kernels) or
//! `add_source → fd_step` (fused, the default) and rotates `pold ← p ← pnew`. The algorithm is
//! written once; where its fields live and how its kernels run follow from `E`.

use crate::kernels::{add_source, fd_kv2, fd_pxx, fd_pzz, fd_step, fd_time};
use crate::{Error, ExecutionSpace, HostField, Real, Result, ScalarField};
use std::time::{Duration, Instant};

/// Stencil radius of the 4th-order scheme: the border that stays at zero.
pub const RADIUS: usize = 2;

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
        }
    }

    /// Largest velocity of the layered model.
    pub fn vmax(&self) -> f64 {
        self.layers
            .iter()
            .map(|l| l.velocity)
            .fold(self.vmin, f64::max)
    }

    /// CFL number `vmax · dt / dh`.
    pub fn cfl(&self) -> f64 {
        self.vmax() * self.dt / self.dh
    }

    /// Checks every parameter; the error names the value, its valid range and the fix.
    pub fn validate(&self) -> Result<()> {
        let min = 2 * RADIUS + 1;
        if self.nz < min {
            return Err(Error::invalid(
                "nz",
                self.nz,
                format!("the 4th-order stencil needs at least {min} rows"),
            ));
        }
        if self.nx < min {
            return Err(Error::invalid(
                "nx",
                self.nx,
                format!("the 4th-order stencil needs at least {min} columns"),
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
        positive_finite("dt", self.dt, "seconds")?;
        positive_finite("dh", self.dh, "metres")?;
        positive_finite("fpeak", self.fpeak, "Hz")?;
        positive_finite("vmin", self.vmin, "m/s")?;
        if self.src_z < RADIUS || self.src_z >= self.nz - RADIUS {
            return Err(Error::invalid(
                "src-z",
                self.src_z,
                format!(
                    "the source row must lie inside the border: {RADIUS} <= src-z < {}",
                    self.nz - RADIUS
                ),
            ));
        }
        if self.src_x < RADIUS || self.src_x >= self.nx - RADIUS {
            return Err(Error::invalid(
                "src-x",
                self.src_x,
                format!(
                    "the source column must lie inside the border: {RADIUS} <= src-x < {}",
                    self.nx - RADIUS
                ),
            ));
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
        let limit = cfl_limit();
        if cfl > limit {
            return Err(Error::invalid(
                "dt",
                self.dt,
                format!(
                    "CFL = vmax*dt/dh = {vmax}*{}/{} = {cfl:.4} exceeds the stability limit {limit:.4} of this scheme; use dt <= {:.6e} s (or a larger dh)",
                    self.dt,
                    self.dh,
                    limit * self.dh / vmax
                ),
            ));
        }
        Ok(())
    }

    /// The layered velocity model on the host.
    pub fn velocity_model<T: Real>(&self) -> Result<HostField<T>> {
        let mut v = HostField::<T>::new(self.nz, self.nx)?;
        v.fill(T::lit(self.vmin));
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

    /// Removes every layer (the model becomes `vmin` everywhere).
    pub fn clear_velocity_layers(&mut self) -> &mut Self {
        self.config.layers.clear();
        self
    }

    /// Uses a velocity model already in `E`'s memory space instead of `vmin` and layers.
    /// Its values are checked (finite, > 0) and its maximum is used for the CFL check.
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
        self.run_with_progress(|_, _| {})
    }

    /// Runs the whole simulation, calling `progress(steps_done, nt)` after each step.
    pub fn run_with_progress(
        &mut self,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<RunStats> {
        self.validate()?;
        let c = self.config.clone();
        let start = Instant::now();
        let layered;
        let v = match &self.velocity {
            Some(v) => v,
            None => {
                layered = ScalarField::from_host(&c.velocity_model::<T>()?)?;
                &layered
            }
        };
        let mut p = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
        let mut pold = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
        let mut pnew = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
        let wavelet = ricker::<T>(c.nt, c.dt, c.fpeak);
        let dtdh2 = T::lit((c.dt / c.dh) * (c.dt / c.dh));
        let space = &self.space;
        match c.kernels {
            Kernels::Split => {
                let mut pxx = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
                let mut pzz = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
                for (it, &w) in wavelet.iter().enumerate() {
                    add_source(space, &mut p, w, c.src_z, c.src_x)?;
                    fd_pzz(space, &mut pzz, &p)?;
                    fd_pxx(space, &mut pxx, &p)?;
                    fd_time(space, &mut pnew, &p, &pold, v, &pxx, &pzz, dtdh2)?;
                    pold.swap(&mut p);
                    p.swap(&mut pnew);
                    progress(it + 1, c.nt);
                }
            }
            Kernels::Fused => {
                let mut kv2 = ScalarField::<E::Memory, T>::new(c.nz, c.nx)?;
                fd_kv2(space, &mut kv2, v, dtdh2)?;
                for (it, &w) in wavelet.iter().enumerate() {
                    add_source(space, &mut p, w, c.src_z, c.src_x)?;
                    fd_step(space, &mut pnew, &p, &pold, &kv2)?;
                    pold.swap(&mut p);
                    p.swap(&mut pnew);
                    progress(it + 1, c.nt);
                }
            }
        }
        space.synchronize()?;
        let wall = start.elapsed();
        self.wavefield = Some(p);
        let points = (c.nz * c.nx) as f64 * c.nt as f64;
        Ok(RunStats {
            steps: c.nt,
            wall,
            mpoints_per_s: points / wall.as_secs_f64().max(1e-12) / 1e6,
        })
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
        check(&|c| c.src_z = 1, "inside the border");
        check(&|c| c.src_x = 68, "src-x = 68");
        check(&|c| c.layers[0].z1 = 61, "Z1 <= nz");
        check(&|c| c.layers[0].z0 = 60, "Z0 must be smaller");
        check(&|c| c.layers[0].velocity = 0.0, "greater than 0");
        check(&|c| c.dt = 0.01, "use dt <= 8.7");
    }
}
