//! A simulation's parameters: [`WaveConfig`] (with its validation, whose errors name the
//! value, its valid range and the fix), velocity [`Layer`]s, the [`SourceMode`] and the
//! [`StepKernels`] a time step runs. Running a configuration is `simulator.rs`'s job.

use super::blocking::TimeBlock;
use super::physics::{
    cfl_limit_in, check_space_order, is_normal_in, min_normal, source_sample, SourceTerm,
    DEFAULT_SPACE_ORDER,
};
use super::pml::{PmlParams, PML_RADIUS};
use crate::error::{fmt_num as num, fmt_num_to as num_to};
use crate::model::VelocityModel;
use crate::receivers::ReceiverLine;
use crate::{Error, HostField, MemSpaceHost, Numerics, Param, Real, Result, ScalarField, Valid};

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
    /// A damping layer of [`WaveConfig::absorb`] cells (`fd_absorb`, see
    /// [`absorbing_eta`](super::absorbing_eta)).
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

fn positive_finite(param: Param, v: f64, unit: &str) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            param,
            num(v),
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
        let dims = self.dims();
        // 2D grids have rows and columns, 3D grids planes along each axis.
        let (row, rows, column, columns) = if dims == 3 {
            (
                "plane along z",
                "planes along z",
                "plane along x",
                "planes along x",
            )
        } else {
            ("row", "rows", "column", "columns")
        };
        if self.nz < min {
            return Err(Error::invalid(
                Param::Nz,
                self.nz,
                format!("the order-{order} stencil needs at least {min} {rows}"),
            ));
        }
        if self.nx < min {
            return Err(Error::invalid(
                Param::Nx,
                self.nx,
                format!("the order-{order} stencil needs at least {min} {columns}"),
            ));
        }
        if self.ny == 0 {
            return Err(Error::invalid(
                Param::Ny,
                0,
                Valid::new().text("use ").setting(Param::Ny).text(format!(
                    " = 1 for a 2D run, or at least {min} planes for a 3D run"
                )),
            ));
        }
        if dims == 3 && self.ny < min {
            return Err(Error::invalid(
                Param::Ny,
                self.ny,
                Valid::new()
                    .text(format!(
                        "the order-{order} stencil needs at least {min} planes along y (or "
                    ))
                    .value(Param::Ny)
                    .text(" = 1 for a 2D run)"),
            ));
        }
        if self.points().is_none() {
            return Err(Error::invalid(
                Param::GridSize,
                self.grid_words(),
                "too many points",
            ));
        }
        if dims == 2 && self.src_y != 0 {
            return Err(Error::invalid(
                Param::SourceY,
                self.src_y,
                Valid::new()
                    .text("a source plane along y is for 3D runs: set ")
                    .setting(Param::Ny)
                    .text(" too, or leave ")
                    .setting(Param::SourceY)
                    .text(" at 0"),
            ));
        }
        if dims == 2 && !self.receivers_3d.is_empty() {
            return Err(Error::invalid(
                Param::Receivers,
                format!("{} (z, y, x) receivers", self.receivers_3d.len()),
                "(z, y, x) receivers are for 3D runs: set ny too, or use (z, x) receivers",
            ));
        }
        if dims == 3 && !self.receivers.is_empty() {
            return Err(Error::invalid(
                Param::Receivers,
                format!("{} (z, x) receivers", self.receivers.len()),
                "a 3D run takes (z, y, x) receivers (receivers_3d; --receivers Z:Y:X0:X1:STEP)",
            ));
        }
        if self.nt == 0 {
            return Err(Error::invalid(Param::Nt, 0, "run at least 1 time step"));
        }
        if self.nt_buffer_bytes(8).is_none() {
            return Err(Error::invalid(
                Param::Nt,
                self.nt,
                format!(
                    "the buffers that grow with nt (the source wavelet and {} receiver trace(s) of nt samples) would need more bytes than this machine can address; run fewer steps",
                    self.receivers.len() + self.receivers_3d.len()
                ),
            ));
        }
        if self.kernels == StepKernels::Split && order != DEFAULT_SPACE_ORDER {
            return Err(Error::invalid(
                Param::SpaceOrder,
                order,
                "the split kernels (the paper's fd_pxx, fd_pzz, fd_time) are 4th order only; use the fused kernels for another order, or space order 4",
            ));
        }
        positive_finite(Param::TimeStep, self.dt, "seconds")?;
        positive_finite(Param::SpaceStep, self.dh, "metres")?;
        positive_finite(Param::PeakFrequency, self.fpeak, "Hz")?;
        positive_finite(Param::Vmin, self.vmin, "m/s")?;
        if let Some(d) = self.source_delay {
            if !(d.is_finite() && d >= 0.0) {
                return Err(Error::invalid(
                    Param::SourceDelay,
                    num(d),
                    "must be a finite number of seconds, 0 or more (default 1.5 / fpeak)",
                ));
            }
        }
        if self.snapshot_every == Some(0) {
            return Err(Error::invalid(
                Param::SnapshotEvery,
                0,
                "write a snapshot every K >= 1 steps, or none",
            ));
        }
        let depth = match self.time_block {
            TimeBlock::Depth(k) => Some(k),
            TimeBlock::Fixed(plan) => Some(plan.depth.min(plan.band)),
            TimeBlock::Off | TimeBlock::Auto => None,
        };
        match depth {
            Some(0) => {
                return Err(Error::invalid(
                    Param::TimeBlock,
                    self.time_block.name(),
                    "a block needs at least 1 time step and a band at least 1 row; use off for the unblocked loop",
                ))
            }
            Some(_) if self.time_block_depth() > self.nt => {
                return Err(Error::invalid(
                    Param::TimeBlock,
                    self.time_block.name(),
                    Valid::new()
                        .text("a block cannot hold more steps than the run's ")
                        .value(Param::Nt)
                        .text(format!(" = {}: use a depth <= {}, or auto", self.nt, self.nt)),
                ))
            }
            _ => {}
        }
        let narrow = if dims == 3 {
            self.nz.min(self.nx).min(self.ny)
        } else {
            self.nz.min(self.nx)
        };
        if 2 * self.absorb >= narrow {
            return Err(Error::invalid(
                Param::Absorb,
                self.absorb,
                Valid::new()
                    .text(format!(
                        "the absorbing layer must be narrower than half the {} grid: ",
                        self.grid_words()
                    ))
                    .value(Param::Absorb)
                    .text(format!(" <= {} (or 0 for none)", (narrow - 1) / 2)),
            ));
        }
        if self.layer() == Some(Boundary::Pml) {
            self.pml.validate()?;
            let edge = r.max(PML_RADIUS);
            if self.absorb <= edge {
                return Err(Error::invalid(
                    Param::Absorb,
                    self.absorb,
                    Valid::new()
                        .text(format!(
                            "a PML must be wider than the {edge}-cell border its kernels leave at zero: "
                        ))
                        .value(Param::Absorb)
                        .text(format!(" >= {} (20 or more absorb well)", edge + 1)),
                ));
            }
        }
        if self.src_z < r || self.src_z >= self.nz - r {
            return Err(Error::invalid(
                Param::SourceZ,
                self.src_z,
                Valid::new()
                    .text(format!(
                        "the source {row} must lie inside the order-{order} border of {r} cells: {r} <= "
                    ))
                    .value(Param::SourceZ)
                    .text(format!(" < {}", self.nz - r)),
            ));
        }
        if self.src_x < r || self.src_x >= self.nx - r {
            return Err(Error::invalid(
                Param::SourceX,
                self.src_x,
                Valid::new()
                    .text(format!(
                        "the source {column} must lie inside the order-{order} border of {r} cells: {r} <= "
                    ))
                    .value(Param::SourceX)
                    .text(format!(" < {}", self.nx - r)),
            ));
        }
        if dims == 3 && (self.src_y < r || self.src_y >= self.ny - r) {
            return Err(Error::invalid(
                Param::SourceY,
                self.src_y,
                Valid::new()
                    .text(format!(
                        "the source plane along y must lie inside the order-{order} border of {r} cells: {r} <= "
                    ))
                    .value(Param::SourceY)
                    .text(format!(" < {}", self.ny - r)),
            ));
        }
        for &(z, y, x) in &self.receivers_3d {
            if z >= self.nz || y >= self.ny || x >= self.nx {
                return Err(Error::invalid(
                    Param::Receiver,
                    format!("({z}, {y}, {x})"),
                    format!(
                        "receivers must lie in the {} grid: 0 <= z < {}, 0 <= y < {}, 0 <= x < {}",
                        self.grid_words(),
                        self.nz,
                        self.ny,
                        self.nx
                    ),
                ));
            }
        }
        for &(z, x) in &self.receivers {
            if z >= self.nz || x >= self.nx {
                return Err(Error::invalid(
                    Param::Receiver,
                    format!("({z}, {x})"),
                    format!(
                        "receivers must lie in the {} x {} grid: 0 <= z < {}, 0 <= x < {}",
                        self.nz, self.nx, self.nz, self.nx
                    ),
                ));
            }
        }
        if let Some(m) = &self.velocity {
            if m.dims() != dims {
                return Err(Error::invalid(
                    Param::VelocityModel,
                    format!("a {}D model", m.dims()),
                    format!(
                        "a {dims}D run needs a {dims}D velocity model (its shape sets the grid)"
                    ),
                ));
            }
            if (m.nz(), m.ny(), m.nx()) != (self.nz, self.ny, self.nx) {
                let shape = if dims == 3 {
                    format!("{} x {} x {}", m.nz(), m.ny(), m.nx())
                } else {
                    format!("{} x {}", m.nz(), m.nx())
                };
                return Err(Error::invalid(
                    Param::VelocityModel,
                    shape,
                    format!(
                        "must match the grid {} (the model's shape sets the grid)",
                        self.grid_words()
                    ),
                ));
            }
        }
        for l in &self.layers {
            let shown = format!("{}:{}:{}", l.z0, l.z1, num(l.velocity));
            if l.z0 >= l.z1 {
                return Err(Error::invalid(
                    Param::Layer,
                    shown,
                    format!("Z0 must be smaller than Z1 ({rows} [Z0, Z1) get velocity V)"),
                ));
            }
            if l.z1 > self.nz {
                return Err(Error::invalid(
                    Param::Layer,
                    shown,
                    Valid::new()
                        .text(format!("{rows} must lie in the grid: Z1 <= "))
                        .value(Param::Nz)
                        .text(format!(" = {}", self.nz)),
                ));
            }
            if !(l.velocity.is_finite() && l.velocity > 0.0) {
                return Err(Error::invalid(
                    Param::Layer,
                    shown,
                    "the velocity V must be a finite number greater than 0 m/s",
                ));
            }
        }
        self.check_cfl(self.vmax())
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

    /// Smallest velocity of the model (the background `vmin` or the velocity model's
    /// smallest value, and the layers), with the parameter it comes from.
    fn lowest_velocity(&self) -> (f64, Param) {
        let background = match &self.velocity {
            Some(m) => (
                m.values().iter().copied().fold(f64::INFINITY, f64::min),
                Param::VelocityModel,
            ),
            None => (self.vmin, Param::Vmin),
        };
        self.layers.iter().fold(background, |low, l| {
            if l.velocity < low.0 {
                (l.velocity, Param::Layer)
            } else {
                low
            }
        })
    }

    /// [`validate`](Self::validate), then the checks that depend on the element type `T` of
    /// the run: every velocity and the scheme's coefficients `(dt/dh)²` and `(v dt/dh)²` are
    /// normal numbers in `T` (not rounded to 0 or a subnormal), and every sample of the source
    /// wavelet is finite in `T`.
    pub fn validate_for<T: Real>(&self) -> Result<()> {
        self.validate()?;
        let name = T::NAME;
        let tiny = min_normal::<T>();
        let (low, from) = self.lowest_velocity();
        for (v, param) in [(low, from), (self.vmax(), Param::Velocity)] {
            if !is_normal_in::<T>(v) {
                return Err(Error::invalid(
                    param,
                    num(v),
                    format!(
                        "the velocity {} m/s is not a normal {name} number (it would become {}); velocities must lie between {tiny:.6e} and {:.6e} m/s in {name}",
                        num(v),
                        num(T::lit(v).to_f64()),
                        if name == "f32" { f32::MAX as f64 } else { f64::MAX }
                    ),
                ));
            }
        }
        let r = self.dt / self.dh;
        for (x, what) in [
            (r * r, "(dt/dh)²"),
            ((low * r) * (low * r), "(vmin dt/dh)²"),
        ] {
            if !is_normal_in::<T>(x) {
                return Err(Error::invalid(
                    Param::TimeStep,
                    num(self.dt),
                    Valid::new()
                        .text(format!(
                            "{what} = {x:e} underflows in {name} (smallest normal {tiny:.6e}); use a larger "
                        ))
                        .setting(Param::TimeStep)
                        .text(" or a smaller ")
                        .setting(Param::SpaceStep)
                        .text(if name == "f32" { ", or f64 precision" } else { "" }),
                ));
            }
        }
        let v_src = T::lit(self.velocity_at_zyx([self.src_z, self.src_y, self.src_x])).to_f64();
        // The wavelet's argument (π fpeak (t - delay))² grows with the distance from the
        // delay, so a sample that is not finite is at one end: check the first and the last.
        if let Some(it) = [0, self.nt - 1]
            .into_iter()
            .find(|&it| !self.source_sample::<T>(v_src, it).to_f64().is_finite())
        {
            // The delay is the cause when the undelayed wavelet is finite there.
            let undelayed = WaveConfig {
                source_delay: Some(0.0),
                ..self.clone()
            };
            let (param, value, fix) = match self.source_delay {
                Some(d)
                    if self.source_mode == SourceMode::Add
                        && undelayed.source_sample::<T>(v_src, it).to_f64().is_finite() =>
                {
                    (Param::SourceDelay, d, "use a delay of a few periods of the wavelet (the default is 1.5 / fpeak)")
                }
                _ => (Param::PeakFrequency, self.fpeak, "use a peak frequency the grid can carry (at least 2 points per wavelength at 2.5 x fpeak)"),
            };
            return Err(Error::invalid(
                param,
                num(value),
                format!(
                    "the source wavelet is not finite in {name} at time step {it} (its argument (π fpeak t)² overflows); {fix}"
                ),
            ));
        }
        Ok(())
    }

    /// What the grid cannot carry, as warnings (the run is still valid): the wavelet's
    /// highest frequency, about `2.5 fpeak`, with fewer than 2 grid points per wavelength at
    /// the lowest velocity, or above the Nyquist frequency `1 / (2 dt)` of the time step.
    pub fn warnings(&self) -> Vec<(Param, String)> {
        let mut out = Vec::new();
        let fmax = 2.5 * self.fpeak;
        let (low, _) = self.lowest_velocity();
        let ppw = low / (fmax * self.dh);
        if ppw < 2.0 {
            out.push((
                Param::PeakFrequency,
                format!(
                    "the wavelet reaches about 2.5 x fpeak = {fmax:.4e} Hz, whose wavelength at the lowest velocity {} m/s is {:.4e} m = {} grid points of {} m; at least 2 are needed (use fpeak <= {:.4e} Hz or a finer grid) or the wave is aliased",
                    num(low),
                    low / fmax,
                    num_to(ppw, 3),
                    num(self.dh),
                    low / (2.0 * 2.5 * self.dh)
                ),
            ));
        }
        if self.layer().is_some() {
            let w = self.absorb;
            let kind = self.boundary.name();
            // Per axis (z, y, x; y only in 3D) whether a point lies within `w` of either side.
            let shape = [self.nz, self.ny, self.nx];
            let axes_in = |at: [usize; 3]| -> Vec<usize> {
                (0..3)
                    .filter(|&k| {
                        (k != 1 || self.dims() == 3) && (at[k] < w || at[k] + w >= shape[k])
                    })
                    .collect()
            };
            let src = [self.src_z, self.src_y, self.src_x];
            if let Some(&k) = axes_in(src).first() {
                let (param, at) = match k {
                    0 if self.dims() == 3 => (Param::SourceZ, "plane along z"),
                    0 => (Param::SourceZ, "row"),
                    1 => (Param::SourceY, "plane along y"),
                    _ if self.dims() == 3 => (Param::SourceX, "plane along x"),
                    _ => (Param::SourceX, "column"),
                };
                let position = if self.dims() == 3 {
                    format!("({}, {}, {})", src[0], src[1], src[2])
                } else {
                    format!("({}, {})", src[0], src[2])
                };
                out.push((
                    param,
                    format!(
                        "the source {position} lies inside the {w}-cell {kind} layer (its {at} {} is within {w} cells of a side): its wave is damped from the start (place it at least {w} cells from every side)",
                        src[k]
                    ),
                ));
            }
            let points = self.receiver_points();
            let n = points.iter().filter(|&&p| !axes_in(p).is_empty()).count();
            if n > 0 {
                out.push((
                    Param::Receivers,
                    format!(
                        "{n} of {} receivers lie inside the {w}-cell {kind} layer: the data recorded there is damped (place them at least {w} cells from every side)",
                        points.len()
                    ),
                ));
            }
        }
        let nyquist = 0.5 / self.dt;
        if fmax > nyquist {
            out.push((
                Param::PeakFrequency,
                format!(
                    "the wavelet reaches about 2.5 x fpeak = {fmax:.4e} Hz, above the Nyquist frequency 1/(2 dt) = {nyquist:.4e} Hz of dt = {} s (use fpeak <= {:.4e} Hz or a smaller dt)",
                    num(self.dt),
                    nyquist / 2.5
                ),
            ));
        }
        out
    }

    /// Checks the stability condition for a model whose largest velocity is `vmax`.
    pub fn check_cfl(&self, vmax: f64) -> Result<()> {
        let cfl = vmax * self.dt / self.dh;
        let limit = cfl_limit_in(self.space_order, self.dims())?;
        if cfl > limit {
            return Err(Error::invalid(
                Param::TimeStep,
                num(self.dt),
                Valid::new()
                    .text(format!(
                        "CFL = vmax*dt/dh = {}*{}/{} = {} exceeds the stability limit {limit:.4} of the order-{}{} scheme; use ",
                        num(vmax), num(self.dt), num(self.dh), num_to(cfl, 4), self.space_order, if self.dims() == 3 { " 3D" } else { "" },
                    ))
                    .setting(Param::TimeStep)
                    .text(format!(" <= {:.6e} s (or a larger ", limit * self.dh / vmax))
                    .setting(Param::SpaceStep)
                    .text(")"),
            ));
        }
        Ok(())
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
