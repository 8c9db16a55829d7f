//! Results that would be silently zero: receivers on the grid's border (the stencil never
//! updates the outer `radius` cells, so they record only zeros), a source whose wavelet
//! starts after the last step (nothing is ever injected), and a run that ends with
//! max |p| = 0. Each is a warning (printed and recorded in run.json) or, where the result
//! cannot mean anything, a refusal naming the flag to change.

use crate::BadInput;
use ppstencil::solver::SourceMode;
use ppstencil::WaveConfig;

/// Half-widths of the Ricker wavelet, in periods `1 / fpeak`, beyond which it is below a
/// billionth of its peak.
const WAVELET_HALF_WIDTH: f64 = 1.5;

/// The warnings about silent zeros `config` can be told before it runs; an error
/// ([`BadInput`]) when its wavelet starts after the last step.
pub fn check(config: &WaveConfig) -> anyhow::Result<Vec<String>> {
    let mut warnings = Vec::new();
    let r = config.radius();
    let (nz, ny, nx) = (config.nz, config.ny, config.nx);
    let edge = |i: usize, n: usize| i < r || i + r >= n;
    let on_border = if config.dims() == 3 {
        config
            .receivers_3d
            .iter()
            .filter(|&&(z, y, x)| edge(z, nz) || edge(y, ny) || edge(x, nx))
            .count()
    } else {
        config
            .receivers
            .iter()
            .filter(|&&(z, x)| edge(z, nz) || edge(x, nx))
            .count()
    };
    let total = config.receivers.len() + config.receivers_3d.len();
    if on_border > 0 {
        let planes = if config.dims() == 3 {
            format!(", Y >= {r} and Y < {}", ny.saturating_sub(r))
        } else {
            String::new()
        };
        warnings.push(format!(
            "--receivers: {on_border} of the {total} receivers lie in the grid's outer {r} \
             cell(s), which the order-{} stencil never updates: they record only zeros; place \
             receivers at Z >= {r} and Z < {}{planes}, X >= {r} and X < {}",
            config.space_order,
            nz.saturating_sub(r),
            nx.saturating_sub(r)
        ));
    }
    if config.source_mode == SourceMode::Add {
        let delay = config.source_delay();
        let end = config.nt as f64 * config.dt;
        let onset = delay - WAVELET_HALF_WIDTH / config.fpeak;
        if onset >= end {
            return Err(BadInput(format!(
                "invalid --source-delay = {}: the wavelet starts at about {} s, after the run's \
                 last step at {} s (--nt {} x --dt {}), so nothing would ever be injected; use a \
                 delay below {} s or run more steps",
                crate::figures::short(delay),
                crate::figures::short(onset),
                crate::figures::short(end),
                config.nt,
                config.dt,
                crate::figures::short(end)
            ))
            .into());
        }
        if delay > end {
            warnings.push(format!(
                "--source-delay = {}: the wavelet peaks at {} s, after the run's last step at {} \
                 s; the run records only its onset",
                crate::figures::short(delay),
                crate::figures::short(delay),
                crate::figures::short(end)
            ));
        }
    }
    Ok(warnings)
}

/// The warning for a run that ended with `max_abs` = 0 (`None` otherwise): printed and
/// recorded in run.json.
pub fn after_run(max_abs: f64) -> Option<String> {
    (max_abs == 0.0).then(|| {
        "max |p| = 0: the wavefield is zero everywhere after the run (the source injected \
         nothing, or its wave was absorbed); check --src-z/--src-x, --source-delay and --nt"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_zero_wavefield_is_warned_about() {
        assert!(after_run(0.0).is_some_and(|w| w.contains("max |p| = 0")));
        assert_eq!(after_run(1e-30), None);
        assert_eq!(after_run(f64::NAN), None);
    }
}
