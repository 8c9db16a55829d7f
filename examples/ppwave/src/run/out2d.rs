//! What a 2D run writes beside what every run writes: each snapshot as `.npy` and `.png`,
//! `wavefield.npy`, `velocity.npy`, their pictures, the seismogram (`.npy` and the shot
//! gather's `.png`), run.json's 2D keys and the 2D summary.

use super::report::Outcome;
use super::{Grid, Outputs, Plan};
use crate::figures::{self, field, gather};
use crate::output::OutputDir;
use ppstencil::receivers::Seismogram;
use ppstencil::{io, HostField, Real, WaveConfig};
use std::path::Path;

impl Outputs<2> for Grid<2> {
    type Pictures = field::Backdrop;

    fn pictures(config: &WaveConfig) -> anyhow::Result<field::Backdrop> {
        field::Backdrop::new(config)
    }

    fn snapshot<T: Real>(
        out: &mut OutputDir,
        backdrop: &field::Backdrop,
        config: &WaveConfig,
        name: &str,
        step: usize,
        p: &HostField<T>,
    ) -> anyhow::Result<()> {
        out.write(&format!("{name}.npy"), |f| Ok(io::write_npy(f, p)?))?;
        snapshot_png(out, backdrop, config, name, step, p)
    }

    fn fields<T: Real>(
        out: &mut OutputDir,
        backdrop: &field::Backdrop,
        plan: &Plan,
        p: &HostField<T>,
        v: &HostField<T>,
        steps: usize,
        seismogram: Option<&Seismogram<T>>,
    ) -> anyhow::Result<(f64, Option<f64>)> {
        let config = &plan.config;
        let clip = write_wavefield(out, backdrop, config, p, v, steps)?;
        out.write("velocity.png", |f| {
            figures::write(f, &field::velocity_figure(backdrop))
        })?;
        let gain = plan.options.gather_gain.unwrap_or_default();
        let gather_clip = match seismogram {
            Some(s) => write_seismogram(out, s, config, gain)?,
            None => None,
        };
        Ok((clip, gather_clip))
    }

    fn json_keys(plan: &Plan, outcome: &Outcome) -> serde_json::Value {
        let (config, o) = (&plan.config, &plan.options);
        serde_json::json!({
            "vmin": config.velocity.is_none().then_some(config.vmin),
            "velocity_file": o.velocity,
            "layers": config.layers.iter().map(|l| serde_json::json!({"z0": l.z0, "z1": l.z1, "velocity": l.velocity})).collect::<Vec<_>>(),
            "source_delay": (config.source_mode == ppstencil::solver::SourceMode::Add).then(|| config.source_delay()),
            "receivers": config.receivers.len(),
            "snapshot_every": config.snapshot_every,
            "dt_max_stable": outcome.limit * config.dh / config.vmax(),
            "seismogram_clip": outcome.gather_clip,
        })
    }

    fn summary(plan: &Plan, outcome: &Outcome, target: &Path) -> [String; 2] {
        let (config, o, stats) = (&plan.config, &plan.options, &outcome.stats);
        let run = format!(
            "ppwave: {} x {} grid, {} steps on {} ({} kernels, order {}, {}{}) in {:.3} s = {:.1} Mpoints/s; \
             CFL {:.3} (limit {:.3}); max |p| = {:.3e}",
            config.nz,
            config.nx,
            stats.steps,
            o.backend().name(),
            config.kernels.name(),
            config.space_order,
            outcome.precision,
            outcome
                .threads
                .map(|t| format!(", {t} thread{}", if t == 1 { "" } else { "s" }))
                .unwrap_or_default(),
            stats.wall.as_secs_f64(),
            stats.mpoints_per_s,
            config.cfl(),
            outcome.limit,
            outcome.max_abs,
        );
        let frames = outcome.frames;
        let snapshots = if frames > 0 {
            format!(", snapshots/ ({frames} frames)")
        } else {
            String::new()
        };
        let wrote = format!(
            "wrote {}/{{{}{snapshots}}}",
            target.display(),
            outcome.names.join(", ")
        );
        [run, wrote]
    }
}

/// Writes the picture `name.png` of the pressure `p` after `step` steps (a snapshot of a 2D
/// run). Shared by single-process and distributed runs.
pub(crate) fn snapshot_png<T: Real>(
    out: &mut OutputDir,
    backdrop: &field::Backdrop,
    config: &WaveConfig,
    name: &str,
    step: usize,
    p: &HostField<T>,
) -> anyhow::Result<()> {
    out.write(&format!("{name}.png"), |f| {
        let title = format!(
            "Snapshot: pressure after step {step} (t = {} s)",
            figures::short(step as f64 * config.dt)
        );
        figures::write(f, &field::wavefield_figure(backdrop, p, title).0)
    })?;
    Ok(())
}

/// Writes a 2D run's final pressure `p` and velocity `v` after `steps` steps into `out`:
/// `wavefield.npy`, `velocity.npy` and the picture `wavefield.png`. Returns the picture's
/// clip level. Shared by single-process and distributed runs.
pub(crate) fn write_wavefield<T: Real>(
    out: &mut OutputDir,
    backdrop: &field::Backdrop,
    config: &WaveConfig,
    p: &HostField<T>,
    v: &HostField<T>,
    steps: usize,
) -> anyhow::Result<f64> {
    out.write("wavefield.npy", |f| Ok(io::write_npy(f, p)?))?;
    out.write("velocity.npy", |f| Ok(io::write_npy(f, v)?))?;
    let mut clip = 0.0;
    out.write("wavefield.png", |f| {
        let title = format!(
            "Wavefield: pressure after {} steps (t = {} s)",
            steps,
            figures::short(steps as f64 * config.dt)
        );
        let (fig, c) = field::wavefield_figure(backdrop, p, title);
        clip = c;
        figures::write(f, &fig)
    })?;
    Ok(clip)
}

/// Writes a run's traces into `out`: `seismogram.npy` (nt × nrec, the run's precision) and
/// the shot-gather picture `seismogram.png` drawn with `gain`. Returns the picture's clip
/// level, or `None` when there are no receivers. Shared by single-process and distributed
/// runs.
pub(crate) fn write_seismogram<T: Real>(
    out: &mut OutputDir,
    s: &Seismogram<T>,
    config: &WaveConfig,
    gain: gather::GatherGain,
) -> anyhow::Result<Option<f64>> {
    if s.nrec == 0 {
        return Ok(None);
    }
    let traces = HostField::from_vec(s.nt, s.nrec, s.data.clone())?;
    out.write("seismogram.npy", |f| Ok(io::write_npy(f, &traces)?))?;
    let mut clip = None;
    out.write("seismogram.png", |f| {
        let samples: Vec<f64> = s.data.iter().map(|v| v.to_f64()).collect();
        let (fig, c) = gather::gather_figure(
            &samples,
            s.nt,
            s.nrec,
            config.dt,
            &config.receivers,
            config.dh,
            gain,
        );
        clip = Some(c);
        figures::write(f, &fig)
    })?;
    Ok(clip)
}
