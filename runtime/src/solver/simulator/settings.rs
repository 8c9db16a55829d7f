//! The settings of a [`WaveSimulator`] before it prepares a run: its parameters one by one
//! (a [`WaveConfig`] sets them all at once) and what they make (time step, shape, CFL).

use super::{position_words, WaveSimulator};
use crate::model::VelocityModel;
use crate::receivers::ReceiverLine;
use crate::solver::config::{Layer, SourceMode, StepKernels, WaveConfig};
use crate::solver::dims::{trailing, Dims, WaveKernels};
use crate::{Error, ExecutionSpace, Param, Real, Result, ScalarField};

impl<E: ExecutionSpace, T: Real, const D: usize> WaveSimulator<E, T, D>
where
    Dims<D>: WaveKernels<D>,
{
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

    /// Sets a 3D grid of `nz × ny × nx` points (`ny` = 1 is a 2D grid); run it with
    /// `D = 3` (`WaveSimulator<E, T, 3>`).
    pub fn set_dimensions_3d(&mut self, nz: usize, ny: usize, nx: usize) -> &mut Self {
        self.config.nz = nz;
        self.config.ny = ny;
        self.config.nx = nx;
        self
    }

    /// Places the source of a 3D run at `(z, y, x)`.
    pub fn set_source_position_3d(&mut self, z: usize, y: usize, x: usize) -> &mut Self {
        self.config.src_z = z;
        self.config.src_y = y;
        self.config.src_x = x;
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
    pub fn set_kernels(&mut self, kernels: StepKernels) -> &mut Self {
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

    /// Adds a receiver of a 3D run at `(z, y, x)`.
    pub fn add_receiver_3d(&mut self, z: usize, y: usize, x: usize) -> &mut Self {
        self.config.receivers_3d.push((z, y, x));
        self
    }

    /// Removes every receiver (2D and 3D).
    pub fn clear_receivers(&mut self) -> &mut Self {
        self.config.receivers.clear();
        self.config.receivers_3d.clear();
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
    pub fn set_velocity(&mut self, v: ScalarField<E::Memory, T, D>) -> Result<()> {
        let host = v.to_host()?;
        let mut vmax = 0.0f64;
        for (k, &x) in host.as_slice().iter().enumerate() {
            let x = x.to_f64();
            if !(x.is_finite() && x > 0.0) {
                return Err(Error::invalid(
                    Param::Velocity,
                    x,
                    format!(
                        "at {}: every velocity must be finite and greater than 0",
                        position_words(k, host.zyx(), D)
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

    /// The fields' shape: `[nz, nx]` in 2D, `[nz, ny, nx]` in 3D.
    pub fn shape(&self) -> [usize; D] {
        let c = &self.config;
        trailing::<D>([c.nz, c.ny, c.nx])
    }

    /// CFL number of the current model.
    pub fn cfl(&self) -> f64 {
        match &self.velocity {
            Some(_) => self.velocity_max * self.config.dt / self.config.dh,
            None => self.config.cfl(),
        }
    }
}
