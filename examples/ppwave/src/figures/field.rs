//! Pictures of a field on the grid: the wavefield and snapshots (seismic colours, clipped
//! symmetrically, the velocity model as a faint gray underlay) and the velocity model itself
//! (`velocity.png`, its own colour bar in m/s). Both show axes in metres, a colour bar with
//! units, the source, the receivers and the inner edge of the absorbing layer.
//!
//! A [`FieldFigure`] is a row of [`Slice`]s sharing one colour bar: a 2D run has one slice;
//! a 3D run has the three slices through the source ([`wavefield_figure_3d`]), each with its
//! own backdrop and axis names, side by side with the same [`Scale`].

use super::{colour_bar, drawing, note_style, short, title_style, Figure, CLIP_PERCENTILE, FONT};
use plotters::coord::Shift;
use plotters::prelude::*;
use ppstencil::{HostField, Real, WaveConfig};

/// Largest side, in pixels, of a slice's image (the grid is resampled to it).
pub const SLICE_SIDE: u32 = 900;
/// Smallest side of a slice's image (very elongated grids are stretched to it).
pub const MIN_SLICE_SIDE: u32 = 160;
/// Height of the title band (title and notes).
const TITLE_H: u32 = 76;
/// Width of the colour bar band.
const BAR_W: u32 = 130;
/// Pixels around a slice's image for its axes (left, bottom) and margins.
const AXES_W: u32 = 90;
const AXES_H: u32 = 60;
/// Receivers drawn at most (every k-th beyond that).
const MAX_RECEIVER_MARKS: usize = 300;
/// How dark the fastest velocity makes the underlay (0: invisible, 1: black).
const UNDERLAY_DEPTH: f32 = 0.2;

/// What the grid around a field looks like: spacing, velocity model, source, receivers and
/// absorbing layer, taken once from the run's configuration and shared by its pictures.
#[derive(Clone, Debug)]
pub struct Backdrop {
    nz: usize,
    nx: usize,
    dh: f64,
    velocity: Vec<f32>,
    vmin: f64,
    vmax: f64,
    src: (usize, usize),
    receivers: Vec<(usize, usize)>,
    absorb: usize,
}

impl Backdrop {
    /// The backdrop of `config`'s runs (builds its velocity model).
    pub fn new(config: &WaveConfig) -> anyhow::Result<Backdrop> {
        let v = config.velocity_model::<f32>()?;
        let velocity = v.as_slice().to_vec();
        let (vmin, vmax) = velocity
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                (lo.min(x as f64), hi.max(x as f64))
            });
        Ok(Backdrop {
            nz: config.nz,
            nx: config.nx,
            dh: config.dh,
            velocity,
            vmin,
            vmax,
            src: (config.src_z, config.src_x),
            receivers: config.receivers.clone(),
            absorb: config.absorb,
        })
    }
}

/// How values become colours, and what the colour bar says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Pressure: [`seismic`](super::seismic) colours clipped symmetrically at ±`clip`.
    Pressure {
        /// The clip level.
        clip: f64,
    },
    /// A migrated image: [`seismic`](super::seismic) colours clipped symmetrically at
    /// ±`clip`.
    Image {
        /// The clip level.
        clip: f64,
    },
    /// Velocity: [`velocity`](super::velocity) colours from `vmin` to `vmax` (m/s).
    Velocity {
        /// Slowest velocity.
        vmin: f64,
        /// Fastest velocity.
        vmax: f64,
    },
}

impl Scale {
    fn color(&self, v: f64) -> RGBColor {
        match *self {
            Scale::Pressure { clip } | Scale::Image { clip } => super::seismic((v / clip) as f32),
            Scale::Velocity { vmin, vmax } => {
                let t = if vmax > vmin {
                    (v - vmin) / (vmax - vmin)
                } else {
                    0.5
                };
                super::velocity(t as f32)
            }
        }
    }

    fn range(&self) -> (f64, f64) {
        match *self {
            Scale::Pressure { clip } | Scale::Image { clip } => (-clip, clip),
            Scale::Velocity { vmin, vmax } => (vmin, vmax),
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Scale::Pressure { .. } => "pressure p (source peak = 1)",
            Scale::Image { .. } => "image amplitude",
            Scale::Velocity { .. } => "velocity (m/s)",
        }
    }
}

/// One picture of a 2D cut through the grid (`nz × nx` values, rows downwards).
#[derive(Clone, Debug)]
pub struct Slice {
    /// The values, row-major.
    pub values: Vec<f32>,
    /// Draw the velocity model faintly underneath.
    pub underlay: bool,
    /// The slice's own grid (a 3D run's slices); `None`: the figure's.
    pub backdrop: Option<Backdrop>,
    /// Horizontal and vertical axis names.
    pub axes: [&'static str; 2],
}

/// A titled row of slices with one colour bar.
#[derive(Clone, Debug)]
pub struct FieldFigure<'a> {
    backdrop: &'a Backdrop,
    title: String,
    notes: Vec<String>,
    slices: Vec<Slice>,
    scale: Scale,
}

/// The wavefield `p` on `backdrop`'s grid, clipped at the [`CLIP_PERCENTILE`]th percentile of
/// the non-zero |p|, over the velocity model. Returns the figure and its clip level.
pub fn wavefield_figure<'a, T: Real>(
    backdrop: &'a Backdrop,
    p: &HostField<T>,
    title: String,
) -> (FieldFigure<'a>, f64) {
    let clip = super::clip_level(p.as_slice().iter().map(|v| v.to_f64()), CLIP_PERCENTILE);
    let b = backdrop;
    let notes = vec![
        format!(
            "colours: p clipped at \u{b1}{} (\u{b1}{}th percentile of the non-zero |p|)",
            short(clip),
            CLIP_PERCENTILE
        ),
        format!(
            "gray underlay: velocity model, darker = faster ({}\u{2013}{} m/s); grid {} x {}, dh = {} m",
            short(b.vmin),
            short(b.vmax),
            b.nz,
            b.nx,
            short(b.dh)
        ),
    ];
    let fig = FieldFigure {
        backdrop,
        title,
        notes,
        slices: vec![Slice {
            values: p.as_slice().iter().map(|v| v.to_f64() as f32).collect(),
            underlay: true,
            backdrop: None,
            axes: ["x (m)", "depth z (m)"],
        }],
        scale: Scale::Pressure { clip },
    };
    (fig, clip)
}

/// The three slices through a 3D run's source side by side (`parts`: each slice's 2D
/// backdrop, values and axis names), clipped together as [`wavefield_figure`] clips one.
pub fn wavefield_figure_3d<'a>(
    main: &'a Backdrop,
    parts: Vec<(Backdrop, Vec<f32>, [&'static str; 2])>,
    title: String,
    notes: Vec<String>,
) -> (FieldFigure<'a>, f64) {
    let clip = super::clip_level(
        parts.iter().flat_map(|p| p.1.iter().map(|&v| v as f64)),
        CLIP_PERCENTILE,
    );
    let mut notes = notes;
    notes.insert(
        0,
        format!(
            "colours: p clipped at \u{b1}{} (\u{b1}{}th percentile of the non-zero |p| of the slices); gray underlay: velocity",
            short(clip),
            CLIP_PERCENTILE
        ),
    );
    let slices = parts
        .into_iter()
        .map(|(b, values, axes)| Slice {
            values,
            underlay: true,
            backdrop: Some(b),
            axes,
        })
        .collect();
    let fig = FieldFigure {
        backdrop: main,
        title,
        notes,
        slices,
        scale: Scale::Pressure { clip },
    };
    (fig, clip)
}

/// A migrated image (`nz × nx` values) on `backdrop`'s grid, clipped as
/// [`wavefield_figure`] clips, over the (migration) velocity model.
pub fn image_figure<'a>(backdrop: &'a Backdrop, image: &[f64], title: String) -> FieldFigure<'a> {
    let clip = super::clip_level(image.iter().copied(), CLIP_PERCENTILE);
    FieldFigure {
        backdrop,
        title,
        notes: vec![format!(
            "colours: image clipped at \u{b1}{} (\u{b1}{}th percentile of the non-zero values); gray underlay: migration velocity {}\u{2013}{} m/s",
            short(clip),
            CLIP_PERCENTILE,
            short(backdrop.vmin),
            short(backdrop.vmax)
        )],
        slices: vec![Slice {
            values: image.iter().map(|&v| v as f32).collect(),
            underlay: true,
            backdrop: None,
            axes: ["x (m)", "depth z (m)"],
        }],
        scale: Scale::Image { clip },
    }
}

/// The velocity model of `backdrop` with its own colour bar (m/s).
pub fn velocity_figure(backdrop: &Backdrop) -> FieldFigure<'_> {
    model_figure(backdrop, backdrop.velocity.clone(), "Velocity model".into())
}

/// A velocity model (`nz × nx` values in m/s, such as an inversion's result) on
/// `backdrop`'s grid, coloured from its own slowest to its fastest velocity.
pub fn model_figure(backdrop: &Backdrop, values: Vec<f32>, title: String) -> FieldFigure<'_> {
    let (vmin, vmax) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x as f64), hi.max(x as f64))
        });
    FieldFigure {
        backdrop,
        title,
        notes: vec![format!(
            "{}\u{2013}{} m/s; grid {} x {}, dh = {} m",
            short(vmin),
            short(vmax),
            backdrop.nz,
            backdrop.nx,
            short(backdrop.dh)
        )],
        slices: vec![Slice {
            values,
            underlay: false,
            backdrop: None,
            axes: ["x (m)", "depth z (m)"],
        }],
        scale: Scale::Velocity { vmin, vmax },
    }
}

impl FieldFigure<'_> {
    /// The colour scale (the clip level of a wavefield).
    pub fn scale(&self) -> Scale {
        self.scale
    }

    /// Pixel size of one slice's image: the grid's aspect ratio, longest side [`SLICE_SIDE`].
    fn image_size(&self) -> (u32, u32) {
        let (nz, nx) = (self.backdrop.nz as f64, self.backdrop.nx as f64);
        let s = SLICE_SIDE as f64 / nz.max(nx);
        let side = |n: f64| ((n * s).round() as u32).max(MIN_SLICE_SIDE);
        (side(nx), side(nz))
    }
}

/// The value of largest magnitude in each of `w × h` blocks of an `nz × nx` row-major array
/// (a block is at least one point: smaller grids are repeated).
fn resample(data: &[f32], nz: usize, nx: usize, w: usize, h: usize) -> Vec<f32> {
    let span = |i: usize, n: usize, m: usize| {
        let a = i * n / m;
        a..((i + 1) * n / m).max(a + 1).min(n)
    };
    let mut out = Vec::with_capacity(w * h);
    for j in 0..h {
        let rows = span(j, nz, h);
        for i in 0..w {
            let cols = span(i, nx, w);
            let mut v = 0.0f32;
            for z in rows.clone() {
                for &p in &data[z * nx + cols.start..z * nx + cols.end] {
                    if p.abs() > v.abs() || v.is_nan() {
                        v = p;
                    }
                }
            }
            out.push(v);
        }
    }
    out
}

impl Figure for FieldFigure<'_> {
    fn size(&self) -> (u32, u32) {
        let (w, h) = self.image_size();
        let n = self.slices.len() as u32;
        (n * (w + AXES_W) + BAR_W, h + AXES_H + TITLE_H)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (title, body) = root.split_vertically(TITLE_H);
        drawing(title.draw_text(&self.title, &title_style(), (12, 8)))?;
        for (k, note) in self.notes.iter().enumerate() {
            drawing(title.draw_text(note, &note_style(), (12, 34 + 19 * k as i32)))?;
        }
        let (w_all, _) = body.dim_in_pixel();
        let (slices, bar) = body.split_horizontally(w_all - BAR_W);
        let areas = slices.split_evenly((1, self.slices.len()));
        for (slice, area) in self.slices.iter().zip(&areas) {
            let b = slice.backdrop.as_ref().unwrap_or(self.backdrop);
            let (x_max, z_max) = (b.nx as f64 * b.dh, b.nz as f64 * b.dh);
            let mut chart = drawing(
                ChartBuilder::on(area)
                    .margin(4)
                    .margin_right(12)
                    .x_label_area_size(AXES_H - 12)
                    .y_label_area_size(AXES_W - 16)
                    .build_cartesian_2d(0.0..x_max, z_max..0.0),
            )?;
            drawing(
                chart
                    .configure_mesh()
                    .disable_mesh()
                    .x_desc(slice.axes[0])
                    .y_desc(slice.axes[1])
                    .x_label_formatter(&|v| short(*v))
                    .y_label_formatter(&|v| short(*v))
                    .label_style((FONT, 13))
                    .axis_desc_style((FONT, 14))
                    .draw(),
            )?;
            // The image, pixel by pixel, in the plotting area.
            let plot = chart.plotting_area().strip_coord_spec();
            let (pw, ph) = plot.dim_in_pixel();
            let (pw, ph) = (pw as usize, ph as usize);
            let values = resample(&slice.values, b.nz, b.nx, pw, ph);
            let shade = slice
                .underlay
                .then(|| resample(&b.velocity, b.nz, b.nx, pw, ph));
            for (k, &v) in values.iter().enumerate() {
                let RGBColor(mut r, mut g, mut bl) = self.scale.color(v as f64);
                if let Some(vel) = &shade {
                    if b.vmax > b.vmin {
                        let t = ((vel[k] as f64 - b.vmin) / (b.vmax - b.vmin)) as f32;
                        let f = 1.0 - UNDERLAY_DEPTH * t;
                        let dim = |c: u8| (c as f32 * f).round() as u8;
                        (r, g, bl) = (dim(r), dim(g), dim(bl));
                    }
                }
                drawing(plot.draw_pixel(((k % pw) as i32, (k / pw) as i32), &RGBColor(r, g, bl)))?;
            }
            // The marks: absorbing layer, receivers, source.
            let m = |z: usize, x: usize| (x as f64 * b.dh, z as f64 * b.dh);
            if b.absorb > 0 {
                let a = b.absorb;
                let edge = RGBColor(40, 40, 40);
                // A black line on a white halo: visible on every colour.
                drawing(chart.draw_series([
                    Rectangle::new([m(a, a), m(b.nz - a, b.nx - a)], WHITE.stroke_width(3)),
                    Rectangle::new([m(a, a), m(b.nz - a, b.nx - a)], edge.stroke_width(1)),
                ]))?
                .label(format!("absorbing layer ({a} cells), inner edge"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], edge.stroke_width(1))
                });
            }
            if !b.receivers.is_empty() {
                let every = b.receivers.len().div_ceil(MAX_RECEIVER_MARKS);
                let green = RGBColor(0, 110, 0);
                drawing(
                    chart.draw_series(
                        b.receivers
                            .iter()
                            .step_by(every)
                            .map(|&(z, x)| TriangleMarker::new(m(z, x), 4, green.filled())),
                    ),
                )?
                .label(format!("receivers ({})", b.receivers.len()))
                .legend(move |(x, y)| TriangleMarker::new((x + 8, y), 4, green.filled()));
            }
            let orange = RGBColor(255, 160, 0);
            drawing(chart.draw_series([
                Circle::new(m(b.src.0, b.src.1), 6, orange.filled()),
                Circle::new(m(b.src.0, b.src.1), 6, BLACK.stroke_width(1)),
            ]))?
            .label("source")
            .legend(move |(x, y)| Circle::new((x + 8, y), 5, orange.filled()));
            drawing(
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::LowerRight)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font((FONT, 13))
                    .draw(),
            )?;
        }
        colour_bar(&bar, self.scale.range(), self.scale.label(), |v| {
            self.scale.color(v)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resampling_keeps_the_strongest_point_and_repeats_small_grids() {
        // 2 x 4 -> 1 x 2: blocks of 2 x 2.
        let d = [1.0, -3.0, 0.5, 0.0, 2.0, 0.0, 0.0, -0.25];
        assert_eq!(resample(&d, 2, 4, 2, 1), vec![-3.0, 0.5]);
        // 1 x 2 -> 2 x 4: every point repeated.
        assert_eq!(
            resample(&[1.0, 2.0], 1, 2, 4, 2),
            vec![1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0]
        );
    }
}
