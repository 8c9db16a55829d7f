//! The parts of one time step that the whole-grid step ([`WaveSimulator::step`]) and the
//! blocked sweep share: the fused update with its source and PML, the receivers' sampling,
//! the finite-value checks and their messages, and the sponge's damping.
//!
//! [`WaveSimulator::step`]: super::WaveSimulator::step

use super::HostFieldN;
use crate::solver::config::WaveConfig;
use crate::solver::dims::{Dims, WaveKernels};
use crate::solver::physics::{absorbing_eta, layer_depth};
use crate::solver::pml::{Interior, Pml, PmlRows};
use crate::{Error, ExecutionSpace, MemorySpace, Real, Result, ScalarField};

/// Reads the receivers' samples from `p`: in place for host memory, else through a host copy
/// of the whole field (`scratch`, allocated once). A device-side gather kernel would avoid
/// that copy; the DSL cannot express one yet.
pub(super) fn sample_receivers<M: MemorySpace, T: Real, const D: usize>(
    p: &ScalarField<M, T, D>,
    points: &[usize],
    out: &mut [T],
    scratch: &mut Option<HostFieldN<T, D>>,
) -> Result<()> {
    let values = match p.host_values() {
        Some(values) => values,
        None => {
            let h = match scratch {
                Some(h) => h,
                None => scratch.insert(HostFieldN::zeros(p.shape())?),
            };
            p.copy_to_host(h.as_mut_slice())?;
            h.as_slice()
        }
    };
    for (o, &k) in out.iter_mut().zip(points) {
        *o = values[k];
    }
    Ok(())
}

/// The whole field is checked for NaN and infinity every this many steps (and after the
/// last); the source point every step. Host memory only: a device field is checked through
/// its receivers every step and whole after the last step.
pub const FINITE_CHECK_EVERY: usize = 64;

/// Where flat index `k` of a grid `[nz, ny, nx]` of `dims` dimensions lies, in words:
/// `row z, column x` (2D) or `plane z, row y, column x` (3D).
pub(crate) fn position_words(k: usize, [_, ny, nx]: [usize; 3], dims: usize) -> String {
    let (zy, x) = (k / nx, k % nx);
    if dims == 3 {
        format!("plane {}, row {}, column {x}", zy / ny, zy % ny)
    } else {
        format!("row {zy}, column {x}")
    }
}

/// [`Error::NonFinite`] for `value` found after `step` steps at `pos`
/// ([`position_words`]).
pub(crate) fn non_finite<T: Real>(step: usize, value: T, pos: &str, place: &str) -> Error {
    Error::NonFinite {
        step,
        found: format!("{} {place} {pos}", value.to_f64()),
        cause: format!(
            "the values grew beyond {}'s range or became undefined; likely causes: a source \
             wavelet the grid cannot carry (peak frequency, source delay), an absorbing layer \
             too thin for the model, or extreme velocities; the run was stopped, nothing \
             after this step is valid",
            T::NAME
        ),
    }
}

/// The fused step of space order `order` on `region` of `out` from `[level, before, kv2]`,
/// then the additive source `add` (its value and point), then the PML on `rows`: the order
/// in which the unblocked step and every band of a blocked sweep apply them. With a PML the
/// fused step runs in the PML's first group ([`Pml::step`]), unless the source lies where
/// the PML updates the pressure: it is then added between the two, so that every point's
/// sum is made in the same order.
#[allow(clippy::too_many_arguments)]
pub(super) fn fused_source_pml<E: ExecutionSpace, T: Real, const D: usize>(
    space: &E,
    order: usize,
    region: [std::ops::Range<usize>; D],
    out: &mut ScalarField<E::Memory, T, D>,
    [level, before, kv2]: [&ScalarField<E::Memory, T, D>; 3],
    add: Option<(T, [usize; D])>,
    pml: Option<&mut Pml<E, T, D>>,
    rows: &PmlRows,
) -> Result<()>
where
    Dims<D>: WaveKernels<D>,
{
    let between = add.is_some_and(|(_, at)| pml.as_ref().is_some_and(|pml| pml.updates(at)));
    let (joined, after) = match pml {
        Some(pml) if !between => (Some(pml), None),
        pml => (None, pml),
    };
    match joined {
        Some(pml) => {
            let interior = Interior {
                order,
                region,
                pold: before,
            };
            pml.step(space, out, level, Some(kv2), rows, Some(interior))?
        }
        None => Dims::<D>::fused_step_in(space, order, region, out, level, before, kv2)?,
    }
    if let Some((value, at)) = add {
        Dims::<D>::add_source(space, out, value, at)?;
    }
    if let Some(pml) = after {
        pml.step(space, out, level, Some(kv2), rows, None)?;
    }
    Ok(())
}

/// The step-boundary check of `p` after `step` steps: the source point every step, the
/// whole field every [`FINITE_CHECK_EVERY`] steps and after the last (host memory; device
/// memory: whole after the last step only).
pub(super) fn check_finite<M: MemorySpace, T: Real, const D: usize>(
    p: &ScalarField<M, T, D>,
    c: &WaveConfig,
    step: usize,
) -> Result<()> {
    let whole = step.is_multiple_of(FINITE_CHECK_EVERY) || step == c.nt;
    let first_bad = |values: &[T]| values.iter().position(|v| !v.to_f64().is_finite());
    let at = |k: usize| position_words(k, [c.nz, c.ny, c.nx], c.dims());
    if let Some(values) = p.host_values() {
        let src = (c.src_z * c.ny + c.src_y) * c.nx + c.src_x;
        if !values[src].to_f64().is_finite() {
            return Err(non_finite::<T>(
                step,
                values[src],
                &at(src),
                "at the source,",
            ));
        }
        if whole {
            if let Some(k) = first_bad(values) {
                return Err(non_finite::<T>(step, values[k], &at(k), "at"));
            }
        }
    } else if step == c.nt {
        let host = p.to_host()?;
        if let Some(k) = first_bad(host.as_slice()) {
            return Err(non_finite::<T>(step, host.as_slice()[k], &at(k), "at"));
        }
    }
    Ok(())
}

/// The sponge's damping `eta` of `c` on the host (also the adjoint's): the
/// depths into the layer along each axis add their contributions.
pub(crate) fn sponge_eta<T: Real, const D: usize>(
    c: &WaveConfig,
    velocity: &HostFieldN<T, D>,
    shape: [usize; D],
) -> Result<HostFieldN<T, D>> {
    let mut host = HostFieldN::<T, D>::zeros(shape)?;
    for (k, (e, v)) in host
        .as_mut_slice()
        .iter_mut()
        .zip(velocity.as_slice())
        .enumerate()
    {
        let mut rest = k;
        let mut index = [0usize; D];
        for a in (0..D).rev() {
            index[a] = rest % shape[a];
            rest /= shape[a];
        }
        *e = T::lit(sponge_eta_at(c, shape, index, v.to_f64()));
    }
    Ok(host)
}

/// The sponge's damping `eta` of `c` at point `g` of a grid of `shape` where the velocity is
/// `vel`: the depths into the layer along each axis add their contributions, axis by axis
/// (the one definition of the whole-grid, blocked, distributed and adjoint runs).
pub(crate) fn sponge_eta_at<const D: usize>(
    c: &WaveConfig,
    shape: [usize; D],
    g: [usize; D],
    vel: f64,
) -> f64 {
    (0..D).fold(0.0, |acc, a| {
        let depth = layer_depth(g[a], shape[a], c.absorb);
        acc + absorbing_eta(depth, c.absorb, vel, c.dh, c.dt)
    })
}
