//! run.json: what a run was asked for, what it ran and what it produced. [`run_json`]
//! writes the keys every run has; each dimensionality adds its own
//! ([`Outputs::json_keys`](super::Outputs::json_keys)).

use super::Plan;
use crate::cli::Backend;
use ppstencil::exec::Pacer;
use ppstencil::solver::tuning::BandTuner;
use ppstencil::solver::{Blocking, RunStats};
use ppstencil::WaveConfig;

/// What a finished run produced, for run.json and the summary on stdout.
pub struct Outcome<'a> {
    /// Timing of the time loop.
    pub stats: RunStats,
    /// Threads of a host backend (`None` on a GPU).
    pub threads: Option<usize>,
    /// The element type's name (`f32`, `f64`).
    pub precision: &'static str,
    /// The CFL limit of the run's order and dimensionality.
    pub limit: f64,
    /// Snapshots written.
    pub frames: usize,
    /// The largest |p| of the final wavefield.
    pub max_abs: f64,
    /// The wavefield picture's clip level.
    pub clip: f64,
    /// The seismogram picture's clip level (2D runs with receivers).
    pub gather_clip: Option<f64>,
    /// The plan's warnings and those found after the run.
    pub warnings: Vec<String>,
    /// The files written besides the snapshots, run.json last.
    pub names: Vec<String>,
    /// What the time loop did about temporal blocking.
    pub blocking: Option<&'a Blocking>,
    /// The band tuner of an `auto` blocked run.
    pub tuner: Option<&'a BandTuner>,
    /// The pacer of a run that may use one thread fewer while the machine is crowded.
    pub pacer: Option<&'a Pacer>,
}

/// run.json's keys that every run has, 2D or 3D.
pub fn run_json(plan: &Plan, outcome: &Outcome) -> serde_json::Value {
    let (config, o) = (&plan.config, &plan.options);
    serde_json::json!({
        "ppstencil_version": ppstencil::VERSION,
        "config": o,
        "backend": o.backend().name(),
        "kernels": config.kernels.name(),
        "threads": outcome.threads,
        "precision": outcome.precision,
        "numerics": numerics_json(config, o.backend()),
        "nz": config.nz,
        "nx": config.nx,
        "nt": config.nt,
        "dt": config.dt,
        "dh": config.dh,
        "src_z": config.src_z,
        "src_x": config.src_x,
        "fpeak": config.fpeak,
        "vmax": config.vmax(),
        "model": plan.model,
        "warnings": outcome.warnings,
        "space_order": config.space_order,
        "absorb": config.absorb,
        "boundary": config.layer().map_or("rigid", |b| b.name()),
        "pml": pml_json(config),
        "source_mode": config.source_mode.name(),
        "time_block": config.time_block.name(),
        "time_blocking": time_blocking_json(outcome.blocking, outcome.tuner, config.dims()),
        "pacing": pacing_json(outcome.pacer),
        "snapshots": outcome.frames,
        "cfl": config.cfl(),
        "cfl_limit": outcome.limit,
        "steps": outcome.stats.steps,
        "wall_time_s": outcome.stats.wall.as_secs_f64(),
        "mpoints_per_s": outcome.stats.mpoints_per_s,
        "max_abs_p": outcome.max_abs,
        "image_clip": outcome.clip,
        "files": outcome.names,
    })
}

/// run.json's `pacing`: the threads of the narrower space, the steps run on it and the
/// windows run on the other width to time it (null: not paced, e.g. one thread, a GPU, or
/// `PPSTENCIL_PACING=off`).
fn pacing_json(pacer: Option<&Pacer>) -> serde_json::Value {
    pacer.map_or(serde_json::Value::Null, |p| {
        serde_json::json!({
            "narrow_threads": p.narrow_threads(),
            "narrow_steps": p.narrow_steps(),
            "tries": p.tries(),
        })
    })
}

/// run.json's `time_blocking`: whether the time loop was blocked, its depth and band (rows
/// in 2D, z-planes in 3D: `band_rows` / `band_planes`), its tile width along the second
/// axis (`tile`: y in 3D, x in 2D; null for whole rows), and the solver's words (why not,
/// when it was not), the last-level cache `auto` sized it for (`llc_bytes`, and where that
/// size comes from: `llc_source`), and the bands `auto` timed in the run's first blocks
/// (`band_trials`: each band with its least milliseconds per step; null when not tuned), the
/// plan above being the one kept.
pub(crate) fn time_blocking_json(
    blocking: Option<&Blocking>,
    tuner: Option<&BandTuner>,
    dims: usize,
) -> serde_json::Value {
    let what = blocking.map(|b| b.to_string());
    let cache = ppstencil::exec::cache_sizes();
    let mut json = match blocking {
        Some(Blocking::On(p)) => {
            let band = if dims == 3 {
                "band_planes"
            } else {
                "band_rows"
            };
            serde_json::json!({"blocked": true, "depth": p.depth, band: p.band, "tile": p.tile, "what": what})
        }
        _ => serde_json::json!({"blocked": false, "what": what}),
    };
    json["llc_bytes"] = cache.llc.into();
    json["llc_source"] = cache.llc_source.to_string().into();
    json["band_trials"] = tuner.map_or(serde_json::Value::Null, |tuner| {
        tuner
            .trials()
            .iter()
            .map(|t| {
                let ms = t.per_step.map(|d| d.as_secs_f64() * 1e3);
                if t.plan.is_unblocked() {
                    serde_json::json!({"unblocked": true, "ms_per_step": ms, "blocks": t.blocks})
                } else {
                    serde_json::json!({"band": t.plan.band, "ms_per_step": ms, "blocks": t.blocks})
                }
            })
            .collect()
    });
    json
}

/// What run.json records of the numerics: what the run asked for and what its backend
/// ran. The GPU backends run exact arithmetic with subnormals kept; a CPU without FMA runs
/// `fast` as `exact`.
pub(crate) fn numerics_json(config: &WaveConfig, backend: Backend) -> serde_json::Value {
    use ppstencil::exec::{fma_available, simd_for};
    use ppstencil::{Arithmetic, Numerics};
    let asked = config.numerics;
    let host = matches!(backend, Backend::Serial | Backend::Rayon);
    let ran = match (host, asked.arithmetic) {
        (false, _) => Numerics::IEEE,
        (true, Arithmetic::Fast) if !fma_available() => Numerics {
            arithmetic: Arithmetic::Exact,
            ..asked
        },
        (true, _) => asked,
    };
    serde_json::json!({
        "arithmetic": ran.arithmetic.name(),
        "subnormals": ran.subnormals.name(),
        "simd": host.then(|| simd_for(ran.arithmetic == Arithmetic::Fast).name()),
        "asked": { "arithmetic": asked.arithmetic.name(), "subnormals": asked.subnormals.name() },
    })
}

/// run.json's `pml` entry (2D and 3D runs): the PML's profile parameters, or null without one.
pub(crate) fn pml_json(config: &WaveConfig) -> Option<serde_json::Value> {
    (config.layer() == Some(ppstencil::solver::Boundary::Pml)).then(|| {
        serde_json::json!({
            "reflection": config.pml.reflection,
            "degree": config.pml.degree,
            "alpha_max": config.pml.alpha_max(config.fpeak),
            "alpha_default": config.pml.alpha.is_none(),
        })
    })
}
