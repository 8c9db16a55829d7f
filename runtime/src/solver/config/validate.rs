//! [`WaveConfig`]'s checks: [`validate`](WaveConfig::validate), one check per concern (the
//! grid, the dimensions' options, time, temporal blocking, the absorbing layer, the source,
//! the receivers, the velocity model, its layers, stability), the checks that depend on
//! the element type, and the warnings of what the grid cannot carry.

use super::{Boundary, SourceMode, StepKernels, WaveConfig};
use crate::error::{fmt_num as num, fmt_num_to as num_to};
use crate::solver::blocking::TimeBlock;
use crate::solver::physics::{
    cfl_limit_in, check_space_order, is_normal_in, min_normal, DEFAULT_SPACE_ORDER,
};
use crate::solver::pml::PML_RADIUS;
use crate::{Error, Param, Real, Result, Valid};

/// An error unless `v` is finite and greater than 0 (in `unit`).
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

/// How the axes of a grid are called in messages: (row, rows, column, columns) in 2D; planes
/// along z and x in 3D.
fn axis_words(dims: usize) -> (&'static str, &'static str, &'static str, &'static str) {
    if dims == 3 {
        (
            "plane along z",
            "planes along z",
            "plane along x",
            "planes along x",
        )
    } else {
        ("row", "rows", "column", "columns")
    }
}

impl WaveConfig {
    /// Checks every parameter; the error names the value, its valid range and the fix.
    pub fn validate(&self) -> Result<()> {
        check_space_order(self.space_order)?;
        self.check_grid()?;
        self.check_dims_options()?;
        self.check_time()?;
        self.check_time_block()?;
        self.check_absorbing_layer()?;
        self.check_source_position()?;
        self.check_receivers()?;
        self.check_velocity_model()?;
        self.check_layers()?;
        self.check_cfl(self.vmax())
    }

    /// The grid holds the stencil along every axis, and its points can be counted.
    fn check_grid(&self) -> Result<()> {
        let r = self.radius();
        let order = self.space_order;
        let min = 2 * r + 1;
        let dims = self.dims();
        let (_, rows, _, columns) = axis_words(dims);
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
        Ok(())
    }

    /// Options of one dimensionality are not given to a run of the other.
    fn check_dims_options(&self) -> Result<()> {
        let dims = self.dims();
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
        Ok(())
    }

    /// The number of steps, the kernels' order, the time step, spacing, frequency, velocity,
    /// source delay and snapshot interval.
    fn check_time(&self) -> Result<()> {
        let order = self.space_order;
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
        Ok(())
    }

    /// A temporal block holds at least one step and at most the run's.
    fn check_time_block(&self) -> Result<()> {
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
        Ok(())
    }

    /// The absorbing layer is narrower than half the grid; a PML is wider than its border.
    fn check_absorbing_layer(&self) -> Result<()> {
        let r = self.radius();
        let dims = self.dims();
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
        Ok(())
    }

    /// The source lies inside the stencil's border along every axis.
    fn check_source_position(&self) -> Result<()> {
        let r = self.radius();
        let order = self.space_order;
        let dims = self.dims();
        let (row, _, column, _) = axis_words(dims);
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
        Ok(())
    }

    /// Every receiver lies in the grid.
    fn check_receivers(&self) -> Result<()> {
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
        Ok(())
    }

    /// A velocity model given as data has the run's dimensions and the grid's shape.
    fn check_velocity_model(&self) -> Result<()> {
        let dims = self.dims();
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
        Ok(())
    }

    /// Every velocity layer is a non-empty range of rows in the grid with a positive
    /// velocity.
    fn check_layers(&self) -> Result<()> {
        let (_, rows, _, _) = axis_words(self.dims());
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
        Ok(())
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
}
