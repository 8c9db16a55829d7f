//! `ppwave`'s pictures, drawn with `plotters`: the wavefield and snapshots with the velocity
//! model underneath ([`field`]), `velocity.png` ([`field::velocity_figure`]), the shot gather
//! ([`gather`]) and the roofline of `ppwave bench --plot` ([`roofline`]).
//!
//! One figure code serves `ppwave run`, `ppwave bench` and the documentation's pictures
//! (`docs/img/`): each figure is a [`Figure`] (a size and a `draw` on any plotters backend),
//! written as PNG (plotters' bitmap backend, encoded by [`output`](crate::output)) or SVG by
//! [`write()`]. Text uses DejaVu
//! Sans, embedded in the binary (`examples/ppwave/fonts/`, licence beside it) and registered
//! with plotters' `ab_glyph` feature: no font lookup (fontconfig) or font file is needed on
//! the machine that draws. Colour maps and the clip level live here too; what is written
//! where (file names, the output directory) does not: see [`run`](crate::run) and
//! [`output`](crate::output).

pub mod field;
pub mod gather;
pub mod roofline;

use anyhow::{anyhow, Context};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;
use std::sync::Once;

/// The font family every figure's text uses (registered by [`font`]).
pub const FONT: &str = "sans-serif";

/// DejaVu Sans (Bitstream Vera licence, `fonts/DejaVuSans-LICENSE`).
static DEJAVU_SANS: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");

/// Registers the embedded font with plotters (once per process). Called by every renderer.
pub fn font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a file of this repository: a failure here is caught by the tests
        // (text would not render), not by users.
        let _ = register_font(FONT, FontStyle::Normal, DEJAVU_SANS);
    });
}

/// A picture: its size in pixels and how it draws itself on any plotters backend.
pub trait Figure {
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws the figure on `root` (already filled white).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static;
}

/// Turns a plotters drawing error into an error naming what was drawn.
pub(crate) fn drawing<T, E: std::fmt::Display>(r: Result<T, E>) -> anyhow::Result<T> {
    r.map_err(|e| anyhow!("drawing the figure failed: {e}"))
}

/// The figure rasterised: `(width, height, RGB bytes)`, white background.
pub fn raster(fig: &impl Figure) -> anyhow::Result<(u32, u32, Vec<u8>)> {
    font();
    let (w, h) = fig.size();
    let mut buf = vec![255u8; 3 * w as usize * h as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        drawing(root.fill(&WHITE))?;
        fig.draw(&root)?;
        drawing(root.present())?;
    }
    Ok((w, h, buf))
}

/// The figure as SVG text.
pub fn svg(fig: &impl Figure) -> anyhow::Result<String> {
    font();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, fig.size()).into_drawing_area();
        drawing(root.fill(&WHITE))?;
        fig.draw(&root)?;
        drawing(root.present())?;
    }
    Ok(s)
}

/// Whether `path` names an SVG file (by its extension); otherwise the figure is a PNG.
pub fn is_svg(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
}

/// Writes the figure to `path`: SVG when the name ends in `.svg`, PNG otherwise.
pub fn write(path: &Path, fig: &impl Figure) -> anyhow::Result<()> {
    if is_svg(path) {
        std::fs::write(path, svg(fig)?)
            .with_context(|| format!("{}: cannot write the SVG picture", path.display()))
    } else {
        let (w, h, rgb) = raster(fig)?;
        crate::output::encode(path, w as usize, h as usize, ::png::ColorType::Rgb, &rgb)
    }
}

/// Linear interpolation in a colour ramp of `(t, rgb)` stops, `t` increasing; `t` outside the
/// stops takes the end colour, NaN the colour at 0 clamped into the stops.
fn ramp(stops: &[(f32, [f32; 3])], t: f32) -> RGBColor {
    let (lo, hi) = (stops[0].0, stops[stops.len() - 1].0);
    let t = if t.is_nan() { 0.0 } else { t }.clamp(lo, hi);
    let i = stops
        .windows(2)
        .position(|w| t <= w[1].0)
        .unwrap_or(stops.len() - 2);
    let ((t0, c0), (t1, c1)) = (stops[i], stops[i + 1]);
    let w = (t - t0) / (t1 - t0);
    let mix = |k: usize| (c0[k] + w * (c1[k] - c0[k])).round() as u8;
    RGBColor(mix(0), mix(1), mix(2))
}

/// The wavefield colour map: blue (negative) → white (0) → red (positive), darker at the
/// extremes (like matplotlib's "seismic"). `t` is the value over the clip level.
pub fn seismic(t: f32) -> RGBColor {
    ramp(
        &[
            (-1.0, [0.0, 0.0, 77.0]),
            (-0.5, [0.0, 0.0, 255.0]),
            (0.0, [255.0, 255.0, 255.0]),
            (0.5, [255.0, 0.0, 0.0]),
            (1.0, [128.0, 0.0, 0.0]),
        ],
        t,
    )
}

/// The shot-gather colour map, the usual variable-density display: white (-1) → mid-gray (0)
/// → black (+1). `t` is the sample over the clip level.
pub fn gray(t: f32) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(-1.0, 1.0) };
    let g = (127.5 * (1.0 - t)).round() as u8;
    RGBColor(g, g, g)
}

/// The velocity colour map (viridis-like: dark blue, slow → yellow, fast); `t` in [0, 1].
pub fn velocity(t: f32) -> RGBColor {
    ramp(
        &[
            (0.0, [68.0, 1.0, 84.0]),
            (0.25, [59.0, 82.0, 139.0]),
            (0.5, [33.0, 145.0, 140.0]),
            (0.75, [94.0, 201.0, 98.0]),
            (1.0, [253.0, 231.0, 37.0]),
        ],
        t,
    )
}

/// The percentile (0..=100, nearest rank) of the |values| that are finite and not zero: the
/// symmetric clip level ±c of a picture, so a wave that fills only part of the grid still
/// shows. 1.0 when no value is finite and non-zero.
pub fn clip_level(values: impl IntoIterator<Item = f64>, percentile: f64) -> f64 {
    let mut mags: Vec<f64> = values
        .into_iter()
        .map(f64::abs)
        .filter(|&m| m > 0.0 && m.is_finite())
        .collect();
    if mags.is_empty() {
        return 1.0;
    }
    let k = ((percentile / 100.0) * (mags.len() - 1) as f64).round() as usize;
    let k = k.min(mags.len() - 1);
    let (_, v, _) = mags.select_nth_unstable_by(k, f64::total_cmp);
    *v
}

/// The percentile at which every field and gather picture is clipped.
pub const CLIP_PERCENTILE: f64 = 99.0;

/// Draws a vertical colour bar on `area`: the values `lo..hi` (bottom to top) coloured by
/// `color(value)`, with a value axis and `label` (the quantity and its unit) beside it.
pub(crate) fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (lo, hi): (f64, f64),
    label: &str,
    color: impl Fn(f64) -> RGBColor,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5, lo + 0.5)
    };
    let mut chart = drawing(
        ChartBuilder::on(area)
            .margin_top(10)
            .margin_bottom(10)
            .margin_right(8)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..1.0, lo..hi),
    )?;
    const STEPS: usize = 128;
    let dv = (hi - lo) / STEPS as f64;
    drawing(chart.draw_series((0..STEPS).map(|k| {
        let v0 = lo + dv * k as f64;
        Rectangle::new([(0.0, v0), (1.0, v0 + dv)], color(v0 + dv / 2.0).filled())
    })))?;
    drawing(
        chart
            .configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_desc(label)
            .y_labels(7)
            // Ticks within rounding of zero read 0, not 6.9e-18.
            .y_label_formatter(&|v| short(if v.abs() < 1e-9 * (hi - lo) { 0.0 } else { *v }))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw(),
    )?;
    Ok(())
}

/// A number in a short form for labels: three significant digits, plain for
/// 0.001 ≤ |v| < 100 000 (`0.0025`, `1500`), else `1.2e-4`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if (0.001..100_000.0).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.1e}")
    }
}

/// Text style of figure titles and captions.
pub(crate) fn title_style() -> TextStyle<'static> {
    (FONT, 18).into_font().color(&BLACK)
}

/// Text style of notes under a title (clip level, gain, what the underlay is).
pub(crate) fn note_style() -> TextStyle<'static> {
    (FONT, 14).into_font().color(&RGBColor(60, 60, 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_maps_are_symmetric_about_zero() {
        assert_eq!(seismic(0.0), RGBColor(255, 255, 255));
        assert_eq!(seismic(0.5), RGBColor(255, 0, 0));
        assert_eq!(seismic(-0.5), RGBColor(0, 0, 255));
        assert_eq!(seismic(0.25), RGBColor(255, 128, 128));
        assert_eq!(seismic(-0.25), RGBColor(128, 128, 255));
        assert_eq!(seismic(7.0), seismic(1.0), "clipped");
        assert_eq!(seismic(f32::NAN), RGBColor(255, 255, 255));
        assert_eq!(gray(1.0), RGBColor(0, 0, 0));
        assert_eq!(gray(-1.0), RGBColor(255, 255, 255));
        assert_eq!(gray(0.0), RGBColor(128, 128, 128));
        assert_eq!(velocity(0.0), RGBColor(68, 1, 84));
        assert_eq!(velocity(1.0), RGBColor(253, 231, 37));
    }

    #[test]
    fn clip_level_ignores_zeros_and_non_finite_values() {
        let mut v = vec![0.0f64; 1000];
        for (k, x) in v.iter_mut().take(101).enumerate() {
            *x = if k % 2 == 0 { k as f64 } else { -(k as f64) };
        }
        v.push(f64::NAN);
        v.push(f64::INFINITY);
        // Non-zero finite magnitudes are 1..=100: the 99th percentile (nearest rank) is 99.
        assert_eq!(clip_level(v.iter().copied(), 99.0), 99.0);
        assert_eq!(clip_level(v.iter().copied(), 100.0), 100.0);
        assert_eq!(clip_level([0.0; 4], 99.0), 1.0);
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1500.0), "1500");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(-0.001234), "-0.00123");
        assert_eq!(short(0.0008), "8.0e-4");
        assert_eq!(short(0.014), "0.014");
        assert_eq!(short(12345.0), "12345");
    }
}
