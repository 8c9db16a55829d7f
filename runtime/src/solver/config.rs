//! A simulation's parameters: [`WaveConfig`] (with its validation, whose errors name the
//! value, its valid range and the fix), velocity [`Layer`]s, the [`SourceMode`] and the
//! [`StepKernels`] a time step runs. Running a configuration is `simulator.rs`'s job.

mod validate;

use super::blocking::TimeBlock;
use super::physics::{source_sample, SourceTerm, DEFAULT_SPACE_ORDER};
use super::pml::PmlParams;
use crate::model::VelocityModel;
use crate::receivers::ReceiverLine;
use crate::{Error, HostField, MemSpaceHost, Numerics, Param, Real, Result, ScalarField};

/// How the source wavelet enters the wavefield.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceMode {
    /// The paper's: the pressure at the source point is *set* to `ricker(t)` before each step
    /// (a zero-phase Ricker starting at its peak, [`ricker`](super::ricker)).
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
                Param::SourceMode,
                other,
                "use `set` (the paper's: the source point is set to the wavelet) or `add` (a delayed Ricker injected additively)",
            )),
        }
    }
}

/// What the grid's edge does to waves that reach it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Boundary {
    /// The paper's: the outer cells stay 0, waves reflect (no layer, whatever
    /// [`WaveConfig::absorb`] says).
    Rigid,
    /// A damping layer of [`WaveConfig::absorb`] cells (`fd_absorb`, its damping growing
    /// quadratically into the layer).
    Sponge,
    /// A convolutional perfectly matched layer of [`WaveConfig::absorb`] cells (see
    /// [`PmlParams`]); the default absorbing boundary.
    #[default]
    Pml,
}

impl Boundary {
    /// `"rigid"`, `"sponge"` or `"pml"`.
    pub fn name(self) -> &'static str {
        match self {
            Boundary::Rigid => "rigid",
            Boundary::Sponge => "sponge",
            Boundary::Pml => "pml",
        }
    }
}

impl std::str::FromStr for Boundary {
    type Err = Error;

    /// Parses `rigid`, `sponge` or `pml`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "rigid" => Ok(Boundary::Rigid),
            "sponge" => Ok(Boundary::Sponge),
            "pml" => Ok(Boundary::Pml),
            other => Err(Error::invalid(
                Param::Boundary,
                other,
                "use `pml` (a perfectly matched layer, the default with a layer), `sponge` (a damping layer) or `rigid` (the paper's reflecting border, no layer)",
            )),
        }
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
pub enum StepKernels {
    /// The paper's four kernels: `add_source`, `fd_pzz`, `fd_pxx`, `fd_time` (40 bytes/point).
    Split,
    /// `add_source` then the fused `fd_step_4` (16 bytes/point); bit-identical results.
    #[default]
    Fused,
}

impl StepKernels {
    /// `"split"` or `"fused"`.
    pub fn name(self) -> &'static str {
        match self {
            StepKernels::Split => "split",
            StepKernels::Fused => "fused",
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
    /// Planes along y (the second horizontal axis) of a 3D run; 1 (the default) makes the run
    /// 2D. A 3D run uses [`WaveSimulator<E, T, 3>`](super::WaveSimulator). `--ny N`.
    pub ny: usize,
    /// Source plane along y of a 3D run (0 in 2D). `--src-y`.
    pub src_y: usize,
    /// Receiver positions `(z, y, x)` of a 3D run (a 2D run uses
    /// [`receivers`](Self::receivers), a 3D run this list only). `--receivers Z:Y:X0:X1:STEP`.
    pub receivers_3d: Vec<(usize, usize, usize)>,
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
    pub kernels: StepKernels,
    /// Even space order from 2 to 16 (the paper's is 4); the split kernels exist at order 4
    /// only. `--space-order N`.
    pub space_order: usize,
    /// Width in cells of the absorbing layer on every side (0: none, the paper's rigid
    /// border). The layer lies inside the `nz × nx` grid. `--absorb N`.
    pub absorb: usize,
    /// The kind of absorbing layer when [`absorb`](Self::absorb) > 0 (PML by default);
    /// [`Boundary::Rigid`] means no layer. `--boundary pml|sponge|rigid`.
    pub boundary: Boundary,
    /// The PML's profile parameters. `--pml-r`, `--pml-degree`, `--pml-alpha`.
    pub pml: PmlParams,
    /// How host kernels round and treat subnormals (exact arithmetic with subnormals
    /// flushed by default; the GPU backends always run exact with subnormals kept).
    /// `--numerics exact|fast`, `--subnormals flush|keep`.
    pub numerics: Numerics,
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
    /// Temporal blocking of the time loop ([`TimeBlock`]): `Auto` (the default) blocks
    /// where it pays. Results are bit-identical either way. `--time-block off|auto|K`.
    pub time_block: TimeBlock,
}

impl Default for WaveConfig {
    fn default() -> Self {
        WaveConfig::paper()
    }
}

impl WaveConfig {
    /// The paper's run: 1751 × 5001, 4001 steps of 0.2 ms, dh = 3 m, source at (625, 2500),
    /// 10 Hz Ricker, vmin 1500 m/s, layers [750, 1125) = 3000 and [1125, 1751) = 4800 m/s.
    pub fn paper() -> Self {
        WaveConfig {
            nz: 1751,
            nx: 5001,
            ny: 1,
            src_y: 0,
            receivers_3d: Vec::new(),
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
            kernels: StepKernels::Fused,
            space_order: DEFAULT_SPACE_ORDER,
            absorb: 0,
            boundary: Boundary::Pml,
            pml: PmlParams::default(),
            numerics: Numerics::default(),
            source_mode: SourceMode::Set,
            source_delay: None,
            receivers: Vec::new(),
            snapshot_every: None,
            velocity: None,
            time_block: TimeBlock::Auto,
        }
    }

    /// Steps per block asked for by [`time_block`](Self::time_block) (0 for `off` and
    /// `auto`, whose depth follows from the cache sizes when the run is prepared).
    pub fn time_block_depth(&self) -> usize {
        match self.time_block {
            TimeBlock::Depth(k) => k,
            TimeBlock::Fixed(plan) => plan.depth,
            TimeBlock::Off | TimeBlock::Auto => 0,
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

    /// 2 for a 2D run (`ny == 1`), else 3.
    pub fn dims(&self) -> usize {
        if self.ny == 1 {
            2
        } else {
            3
        }
    }

    /// Grid points `nz · ny · nx` (`None` on overflow).
    pub fn points(&self) -> Option<usize> {
        self.nz.checked_mul(self.ny)?.checked_mul(self.nx)
    }

    /// The grid shown as `nz x nx` or `nz x ny x nx`.
    pub fn grid_words(&self) -> String {
        if self.dims() == 3 {
            format!("{} x {} x {}", self.nz, self.ny, self.nx)
        } else {
            format!("{} x {}", self.nz, self.nx)
        }
    }

    /// The receivers as `[z, y, x]` (`y` = 0 in 2D), in trace order.
    pub fn receiver_points(&self) -> Vec<[usize; 3]> {
        if self.dims() == 3 {
            self.receivers_3d
                .iter()
                .map(|&(z, y, x)| [z, y, x])
                .collect()
        } else {
            self.receivers.iter().map(|&(z, x)| [z, 0, x]).collect()
        }
    }

    /// The layer the run has: `None` without one (`absorb` 0 or a rigid border), else the
    /// sponge or the PML.
    pub fn layer(&self) -> Option<Boundary> {
        match self.boundary {
            _ if self.absorb == 0 => None,
            Boundary::Rigid => None,
            b => Some(b),
        }
    }

    /// The stencil radius of the space order: the border that stays at zero.
    pub fn radius(&self) -> usize {
        self.space_order / 2
    }

    /// The additive source's delay: [`source_delay`](Self::source_delay) or `1.5 / fpeak`.
    pub fn source_delay(&self) -> f64 {
        self.source_delay.unwrap_or(1.5 / self.fpeak)
    }

    /// The numbers the source term depends on ([`SourceMode`], time step, spacing, peak
    /// frequency, delay, dimensions).
    pub(crate) fn source_term(&self) -> SourceTerm {
        SourceTerm {
            add: self.source_mode == SourceMode::Add,
            dt: self.dt,
            dh: self.dh,
            fpeak: self.fpeak,
            delay: self.source_delay(),
            dims: self.dims(),
        }
    }

    /// Sample `it` of the source term in `T` (see [`SourceMode`]), `v_src` the velocity at
    /// the source.
    pub(crate) fn source_sample<T: Real>(&self, v_src: f64, it: usize) -> T {
        source_sample::<T>(&self.source_term(), v_src, it)
    }

    /// Uses `model` as the velocity background and sets `nz`, `nx` (and `ny`) to its shape.
    pub fn set_velocity_model(&mut self, model: VelocityModel) {
        self.nz = model.nz();
        self.ny = model.ny();
        self.nx = model.nx();
        self.velocity = Some(model);
    }

    /// Adds the receivers of a line.
    pub fn add_receiver_line(&mut self, line: ReceiverLine) {
        if line.y.is_some() || self.ny > 1 {
            self.receivers_3d.extend(line.positions_3d());
        } else {
            self.receivers.extend(line.positions());
        }
    }

    /// CFL number `vmax · dt / dh`.
    pub fn cfl(&self) -> f64 {
        self.vmax() * self.dt / self.dh
    }

    /// Bytes of the buffers that grow with `nt` for elements of `elem_bytes` bytes: the
    /// source wavelet and the receivers' traces (`nt × (1 + receivers)` elements); `None`
    /// when that overflows the address space.
    pub fn nt_buffer_bytes(&self, elem_bytes: usize) -> Option<usize> {
        (self.receivers.len() + self.receivers_3d.len())
            .checked_add(1)
            .and_then(|n| n.checked_mul(self.nt))
            .and_then(|n| n.checked_mul(elem_bytes))
            .filter(|&b| b <= isize::MAX as usize)
    }

    /// The velocity at row `z`, column `x` (the background with the layers on top; plane
    /// `y = 0` of a 3D model).
    pub fn velocity_at(&self, z: usize, x: usize) -> f64 {
        self.velocity_at_zyx([z, 0, x])
    }

    /// The velocity at `[z, y, x]` (`y` = 0 in 2D).
    pub fn velocity_at_zyx(&self, [z, y, x]: [usize; 3]) -> f64 {
        let background = match &self.velocity {
            Some(m) => m
                .values()
                .get((z * m.ny() + y) * m.nx() + x)
                .copied()
                .unwrap_or(self.vmin),
            None => self.vmin,
        };
        self.layers
            .iter()
            .rev()
            .find(|l| (l.z0..l.z1).contains(&z))
            .map_or(background, |l| l.velocity)
    }

    /// The velocity model on the host: the background (`vmin`, or the
    /// [`velocity`](Self::velocity) model) with the layers on top.
    pub fn velocity_model<T: Real>(&self) -> Result<HostField<T>> {
        self.velocity_model_in::<T, 2>()
    }

    /// [`velocity_model`](Self::velocity_model) as a `D`-dimensional field (`D` = 3 for a 3D
    /// run: shape `nz × ny × nx`); an error when `D` is not the run's dimensionality.
    pub fn velocity_model_in<T: Real, const D: usize>(
        &self,
    ) -> Result<ScalarField<MemSpaceHost, T, D>> {
        if D != self.dims() {
            return Err(Error::invalid(
                Param::Ny,
                self.ny,
                format!(
                    "the velocity model of a {}D run ({}) is not a {D}D field",
                    self.dims(),
                    self.grid_words()
                ),
            ));
        }
        let mut v = ScalarField::<MemSpaceHost, T, D>::zeros(super::dims::trailing::<D>([
            self.nz, self.ny, self.nx,
        ]))?;
        match &self.velocity {
            Some(m) if (m.nz(), m.ny(), m.nx()) == (self.nz, self.ny, self.nx) => {
                for (dst, &src) in v.as_mut_slice().iter_mut().zip(m.values()) {
                    *dst = T::lit(src);
                }
            }
            Some(m) => {
                return Err(Error::invalid(
                    Param::VelocityModel,
                    format!("{} x {} x {}", m.nz(), m.ny(), m.nx()),
                    format!("must match the grid {}", self.grid_words()),
                ))
            }
            None => v.fill(T::lit(self.vmin)),
        }
        let plane = self.ny * self.nx;
        for l in &self.layers {
            let end = l.z1.min(self.nz);
            if l.z0 < end {
                v.as_mut_slice()[l.z0 * plane..end * plane].fill(T::lit(l.velocity));
            }
        }
        Ok(v)
    }
}
