//! What a 3D run writes beside what every run writes: each snapshot as `.npy`,
//! `wavefield.npy` and `velocity.npy` of shape (nz, ny, nx), `wavefield.png` (the three
//! slices through the source: x-z at plane `src_y`, y-z at column `src_x`, x-y at depth
//! `src_z`, one colour bar), `seismogram.npy` (nt, nrec) with receivers, run.json's 3D keys
//! and the 3D summary.

use super::report::Outcome;
use super::{Grid, Outputs, Plan};
use crate::figures::{self, field};
use crate::output::OutputDir;
use ppstencil::model::VelocityModel;
use ppstencil::receivers::Seismogram;
use ppstencil::{io, HostField, Real, WaveConfig};
use std::path::Path;

impl Outputs<3> for Grid<3> {
    type Pictures = ();

    fn pictures(_: &WaveConfig) -> anyhow::Result<()> {
        Ok(())
    }

    fn snapshot<T: Real>(
        out: &mut OutputDir,
        _: &(),
        _: &WaveConfig,
        name: &str,
        _: usize,
        p: &HostField<T, 3>,
    ) -> anyhow::Result<()> {
        out.write(&format!("{name}.npy"), |f| Ok(io::write_npy(f, p)?))?;
        Ok(())
    }

    fn fields<T: Real>(
        out: &mut OutputDir,
        _: &(),
        plan: &Plan,
        p: &HostField<T, 3>,
        v: &HostField<T, 3>,
        steps: usize,
        seismogram: Option<&Seismogram<T>>,
    ) -> anyhow::Result<(f64, Option<f64>)> {
        let clip = write_fields_3d(out, &plan.config, p, v, steps, seismogram)?;
        Ok((clip, None))
    }

    fn json_keys(plan: &Plan, _: &Outcome) -> serde_json::Value {
        let config = &plan.config;
        serde_json::json!({
            "dims": 3,
            "ny": config.ny,
            "src_y": config.src_y,
            "receivers": config.receivers_3d.len(),
        })
    }

    fn summary(plan: &Plan, outcome: &Outcome, target: &Path) -> [String; 2] {
        let (config, stats) = (&plan.config, &outcome.stats);
        let run = format!(
            "ppwave: {} x {} x {} grid (3D), {} steps on {} (order {}, {}) in {:.3} s = {:.1} Mpoints/s; CFL {:.3} (3D limit {:.3}); max |p| = {:.3e}",
            config.nz,
            config.ny,
            config.nx,
            stats.steps,
            plan.options.backend().name(),
            config.space_order,
            outcome.precision,
            stats.wall.as_secs_f64(),
            stats.mpoints_per_s,
            config.cfl(),
            outcome.limit,
            outcome.max_abs
        );
        let wrote = format!(
            "wrote {}/{{{}}}",
            target.display(),
            outcome.names.join(", ")
        );
        [run, wrote]
    }
}

/// One 2D cut through a 3D `(nz, ny, nx)` array: `rows × cols` values and their names.
struct Cut {
    rows: usize,
    cols: usize,
    values: Vec<f32>,
}

/// The three cuts through `[z0, y0, x0]` of `data` (shape `[nz, ny, nx]`): x-z at plane
/// `y0`, y-z at column `x0`, x-y at depth `z0`.
fn cuts(data: &[f32], [nz, ny, nx]: [usize; 3], [z0, y0, x0]: [usize; 3]) -> [Cut; 3] {
    let at = |z: usize, y: usize, x: usize| data[(z * ny + y) * nx + x];
    let zx = (0..nz).flat_map(|z| (0..nx).map(move |x| (z, x)));
    let zy = (0..nz).flat_map(|z| (0..ny).map(move |y| (z, y)));
    let yx = (0..ny).flat_map(|y| (0..nx).map(move |x| (y, x)));
    [
        Cut {
            rows: nz,
            cols: nx,
            values: zx.map(|(z, x)| at(z, y0, x)).collect(),
        },
        Cut {
            rows: nz,
            cols: ny,
            values: zy.map(|(z, y)| at(z, y, x0)).collect(),
        },
        Cut {
            rows: ny,
            cols: nx,
            values: yx.map(|(y, x)| at(z0, y, x)).collect(),
        },
    ]
}

/// The 2D backdrop of a cut: its grid, its velocity values, the source and receivers
/// projected onto it.
fn cut_backdrop(
    c: &WaveConfig,
    v: &Cut,
    src: (usize, usize),
    receivers: Vec<(usize, usize)>,
) -> anyhow::Result<field::Backdrop> {
    let values = v.values.iter().map(|&x| x as f64).collect();
    let config = WaveConfig {
        nz: v.rows,
        nx: v.cols,
        ny: 1,
        src_y: 0,
        src_z: src.0,
        src_x: src.1,
        layers: Vec::new(),
        receivers,
        receivers_3d: Vec::new(),
        velocity: Some(VelocityModel::new(v.rows, v.cols, values)?),
        ..c.clone()
    };
    field::Backdrop::new(&config)
}

/// Writes the 3D fields of a run after `steps` steps into `out`: `wavefield.npy`,
/// `velocity.npy`, `wavefield.png` (the three slices through the source) and, with
/// receivers, `seismogram.npy`. Returns the picture's clip level. Shared by single-process
/// and distributed runs.
pub(crate) fn write_fields_3d<T: Real>(
    out: &mut OutputDir,
    config: &WaveConfig,
    p: &HostField<T, 3>,
    v: &HostField<T, 3>,
    steps: usize,
    seismogram: Option<&Seismogram<T>>,
) -> anyhow::Result<f64> {
    out.write("wavefield.npy", |f| Ok(io::write_npy(f, p)?))?;
    out.write("velocity.npy", |f| Ok(io::write_npy(f, v)?))?;
    let shape = [config.nz, config.ny, config.nx];
    let src = [config.src_z, config.src_y, config.src_x];
    let f32s = |h: &[T]| h.iter().map(|x| x.to_f64() as f32).collect::<Vec<f32>>();
    let [pzx, pzy, pyx] = cuts(&f32s(p.as_slice()), shape, src);
    let [vzx, vzy, vyx] = cuts(&f32s(v.as_slice()), shape, src);
    // The receivers in the cut through the source across `axis` (0: z, 1: y, 2: x), on its
    // other two axes.
    let in_plane = |axis: usize| {
        let (u, w) = match axis {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        config
            .receivers_3d
            .iter()
            .map(|&(z, y, x)| [z, y, x])
            .filter(|r| r[axis] == src[axis])
            .map(|r| (r[u], r[w]))
            .collect::<Vec<_>>()
    };
    let b_zx = cut_backdrop(config, &vzx, (src[0], src[2]), in_plane(1))?;
    let b_zy = cut_backdrop(config, &vzy, (src[0], src[1]), in_plane(2))?;
    let b_yx = cut_backdrop(config, &vyx, (src[1], src[2]), in_plane(0))?;
    let mut clip = 0.0;
    out.write("wavefield.png", |f| {
        let title = format!(
            "Wavefield: pressure after {} steps (t = {} s), slices through the source",
            steps,
            figures::short(steps as f64 * config.dt)
        );
        let notes = vec![format!(
            "left: x-z at y = {} m (plane {}); middle: y-z at x = {} m (column {}); right: x-y at z = {} m (row {}); grid {} x {} x {}, dh = {} m",
            figures::short(src[1] as f64 * config.dh),
            src[1],
            figures::short(src[2] as f64 * config.dh),
            src[2],
            figures::short(src[0] as f64 * config.dh),
            src[0],
            config.nz,
            config.ny,
            config.nx,
            figures::short(config.dh)
        )];
        let parts = vec![
            (b_zx.clone(), pzx.values.clone(), ["x (m)", "depth z (m)"]),
            (b_zy.clone(), pzy.values.clone(), ["y (m)", "depth z (m)"]),
            (b_yx.clone(), pyx.values.clone(), ["x (m)", "y (m)"]),
        ];
        let (fig, c) = field::wavefield_figure_3d(&b_zx, parts, title, notes);
        clip = c;
        figures::write(f, &fig)
    })?;
    if let Some(s) = seismogram.filter(|s| s.nrec > 0) {
        let traces = HostField::from_vec(s.nt, s.nrec, s.data.clone())?;
        out.write("seismogram.npy", |f| Ok(io::write_npy(f, &traces)?))?;
    }
    Ok(clip)
}
