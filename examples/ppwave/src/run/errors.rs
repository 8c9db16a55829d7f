//! The errors of `ppwave run` in the words of its command line: a library parameter named
//! by its flag ([`flag_for`], the one table), a simulation's failure, and the origin of an
//! option read from `--config`.

use crate::BadInput;
use ppstencil::WaveConfig;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The flag a library parameter corresponds to: the one table from the library's
/// [`Param`](ppstencil::Param) to `ppwave run`'s flags.
pub fn flag_for(param: &ppstencil::Param) -> Option<&'static str> {
    use ppstencil::Param;
    Some(match param {
        Param::Nz => "--nz",
        Param::Nx => "--nx",
        Param::GridSize => "--nz x --nx",
        Param::Nt => "--nt",
        Param::TimeStep => "--dt",
        Param::SpaceStep => "--dh",
        Param::PeakFrequency => "--fpeak",
        Param::Vmin => "--vmin",
        Param::SourceZ => "--src-z",
        Param::SourceX => "--src-x",
        Param::SourceY => "--src-y",
        Param::Ny => "--ny",
        Param::Layer => "--layer",
        Param::Threads => "--threads",
        Param::TimeBlock => "--time-block",
        Param::SpaceOrder => "--space-order",
        Param::Absorb => "--absorb",
        Param::Boundary => "--boundary",
        Param::PmlReflection => "--pml-r",
        Param::PmlDegree => "--pml-degree",
        Param::PmlAlpha => "--pml-alpha",
        Param::SourceDelay => "--source-delay",
        Param::SourceMode => "--source-mode",
        Param::SnapshotEvery => "--snapshot-every",
        Param::Receiver | Param::Receivers => "--receivers",
        Param::Velocity | Param::VelocityModel => "--velocity",
        _ => return None,
    })
}

/// The valid range and fix of a library parameter error with every parameter it names
/// written as its flag: `--dt` as a setting to change, `src-z` where it stands for its
/// value in a range (empty for other errors).
fn valid_with_flags(e: &ppstencil::Error) -> String {
    e.valid_named(|p, as_value| {
        flag_for(p).map(|f| {
            if as_value {
                f.trim_start_matches("--").to_string()
            } else {
                f.to_string()
            }
        })
    })
    .unwrap_or_default()
}

/// Turns a library parameter error into a [`BadInput`] that names the command-line flag.
pub fn flag_error(e: ppstencil::Error) -> anyhow::Error {
    match e {
        ppstencil::Error::InvalidParameter {
            ref param,
            ref value,
            ..
        } => {
            let name = param.to_string();
            let flag = match param {
                // A 3D grid is shown with its three sizes.
                ppstencil::Param::GridSize if value.matches(" x ").count() == 2 => {
                    "--nz x --ny x --nx"
                }
                _ => flag_for(param).unwrap_or(&name),
            };
            BadInput(format!(
                "invalid {flag} = {value}: {}",
                valid_with_flags(&e)
            ))
            .into()
        }
        other => other.into(),
    }
}

/// The error of a run whose simulation stopped with `e`. A parameter the simulator checks
/// only as it starts is bad input named by its flag: `--time-block` with the value given
/// (`2:1`), what the grid's stencil needs and the fix (in 3D the blocks' bands are planes
/// along z). Anything else is "the simulation failed".
pub(crate) fn simulation_error(e: ppstencil::Error, config: &WaveConfig) -> anyhow::Error {
    use ppstencil::{Error, Param};
    match &e {
        Error::InvalidParameter {
            param: Param::TimeBlock,
            value,
            ..
        } => {
            let mut text = format!("{value}: {}", valid_with_flags(&e));
            if config.dims() == 3 {
                text = text
                    .replace("rows", "planes along z")
                    .replace("row", "plane along z");
            }
            BadInput(format!(
                "invalid --time-block = {}: {text}; or let --time-block auto choose the plan",
                config.time_block.name()
            ))
            .into()
        }
        Error::InvalidParameter { .. } => flag_error(e),
        _ => anyhow::Error::new(e).context("the simulation failed"),
    }
}

/// Adds "(`key` is set in --config FILE)" to a one-message flag error whose option came
/// from the config file rather than the command line.
pub(super) fn with_origin(
    e: anyhow::Error,
    from_file: &BTreeSet<&'static str>,
    config: &Option<PathBuf>,
) -> anyhow::Error {
    let Some(path) = config else { return e };
    if e.chain().count() > 1 {
        return e;
    }
    let text = e.to_string();
    let key = from_file.iter().find(|k| {
        let flag = format!("invalid --{k}");
        text.starts_with(&format!("{flag} ")) || text.starts_with(&format!("{flag}:"))
    });
    match key {
        Some(k) => BadInput(format!(
            "{text} (`{k}` is set in --config {})",
            path.display()
        ))
        .into(),
        None => e,
    }
}
