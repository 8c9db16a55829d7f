//! The roofline of `ppwave bench --plot`: log-log GFlop/s against arithmetic intensity, one
//! roof per thread count (a bandwidth slope from the measured triad, flat at the compute
//! peak), and any number of measured points, each numbered and named in a list beside the
//! plot. The points are a plain list ([`RoofPoint`]): new kernels or steps (e.g. a blocked
//! step) are added by whoever measures them, without touching this module.

use super::{drawing, short, title_style, Figure, FONT};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One roof: what `threads` threads reach from memory and from the arithmetic units.
#[derive(Clone, Debug, PartialEq)]
pub struct Roof {
    /// Who the roof is for, e.g. "1 thread".
    pub label: String,
    /// Memory bandwidth in GB/s (the slope).
    pub gbs: f64,
    /// Compute peak in GFlop/s (the flat part).
    pub gflops: f64,
}

/// One measured kernel or step.
#[derive(Clone, Debug, PartialEq)]
pub struct RoofPoint {
    /// Its name in the list beside the plot, e.g. "fd_pxx rayon (16 thr): 40 GB/s".
    pub label: String,
    /// Arithmetic intensity in flop per byte.
    pub ai: f64,
    /// Measured GFlop/s.
    pub gflops: f64,
    /// Colour group: points with the roof of the same index share its colour.
    pub roof: usize,
}

/// A roofline ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Roofline {
    /// The title.
    pub title: String,
    /// How the roofs were obtained, stated under the plot.
    pub note: String,
    /// The roofs, one per thread count.
    pub roofs: Vec<Roof>,
    /// The measured points.
    pub points: Vec<RoofPoint>,
}

/// Size of the roofline picture.
pub const ROOFLINE_SIZE: (u32, u32) = (1150, 620);
/// Width of the list of points beside the plot.
const LIST_W: u32 = 380;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
];

fn color(k: usize) -> RGBColor {
    COLORS[k % COLORS.len()]
}

impl Roofline {
    /// The axes' ranges: every point and every roof's knee inside, whole decades.
    fn ranges(&self) -> ((f64, f64), (f64, f64)) {
        let pos = |v: f64| v.is_finite() && v > 0.0;
        let ais = self.points.iter().map(|p| p.ai).filter(|&v| pos(v));
        let knees = self
            .roofs
            .iter()
            .map(|r| r.gflops / r.gbs)
            .filter(|&v| pos(v));
        let (x_lo, x_hi) = ais
            .chain(knees)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        let ys = self
            .points
            .iter()
            .map(|p| p.gflops)
            .chain(self.roofs.iter().map(|r| r.gflops))
            .filter(|&v| pos(v));
        let (y_lo, y_hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let decade_below = |v: f64, d: f64| 10f64.powf((v.log10()).floor() - d);
        let decade_above = |v: f64, d: f64| 10f64.powf((v.log10()).ceil() + d);
        let x = if x_lo.is_finite() {
            (
                decade_below(x_lo, 0.0),
                decade_above(x_hi, 0.0).max(10.0 * x_lo),
            )
        } else {
            (0.01, 100.0)
        };
        let y = if y_lo.is_finite() {
            (
                decade_below(y_lo, 0.0),
                decade_above(y_hi, 0.0).max(10.0 * y_lo),
            )
        } else {
            (0.1, 1000.0)
        };
        (x, y)
    }
}

impl Figure for Roofline {
    fn size(&self) -> (u32, u32) {
        ROOFLINE_SIZE
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (w, _) = root.dim_in_pixel();
        let (left, list) = root.split_horizontally(w - LIST_W);
        let ((x_lo, x_hi), (y_lo, y_hi)) = self.ranges();
        let mut chart = drawing(
            ChartBuilder::on(&left)
                .caption(&self.title, title_style())
                .margin(10)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale()),
        )?;
        drawing(
            chart
                .configure_mesh()
                .x_desc("arithmetic intensity (flop / byte)")
                .y_desc("performance (GFlop/s)")
                .x_label_formatter(&|v| short(*v))
                .y_label_formatter(&|v| short(*v))
                .light_line_style(RGBColor(235, 235, 235))
                .bold_line_style(RGBColor(200, 200, 200))
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .draw(),
        )?;
        for (k, roof) in self.roofs.iter().enumerate() {
            let knee = roof.gflops / roof.gbs;
            let c = color(k);
            let path = vec![
                (x_lo, roof.gbs * x_lo),
                (knee, roof.gflops),
                (x_hi, roof.gflops),
            ];
            drawing(chart.draw_series(LineSeries::new(path, c.stroke_width(2))))?
                .label(format!(
                    "{}: {} GB/s, {} GFlop/s",
                    roof.label,
                    short(roof.gbs),
                    short(roof.gflops)
                ))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
        for (i, p) in self.points.iter().enumerate() {
            if !(p.ai > 0.0 && p.gflops > 0.0) {
                continue;
            }
            let c = color(p.roof);
            drawing(chart.draw_series([Circle::new((p.ai, p.gflops), 5, c.filled())]))?;
            // Numbers alternate left and right, and step up and down: several kernels share
            // one arithmetic intensity.
            let dx = if i % 2 == 0 { -10 } else { 10 };
            let dy = 12 * ((i / 2 % 3) as i32 - 1);
            let pos = chart.backend_coord(&(p.ai, p.gflops));
            let style = (FONT, 13).into_font().color(&c).pos(Pos::new(
                if dx < 0 { HPos::Right } else { HPos::Left },
                VPos::Center,
            ));
            drawing(root.draw_text(&format!("{}", i + 1), &style, (pos.0 + dx, pos.1 + dy)))?;
        }
        drawing(
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .label_font((FONT, 13))
                .draw(),
        )?;
        // The list of points, and how the roofs were measured.
        let mut y = 40;
        drawing(list.draw_text(
            "measured kernels",
            &(FONT, 15).into_font().color(&BLACK),
            (4, y),
        ))?;
        y += 24;
        for (i, p) in self.points.iter().enumerate() {
            let style = (FONT, 13).into_font().color(&color(p.roof));
            drawing(list.draw_text(&format!("{:>2}  {}", i + 1, p.label), &style, (4, y)))?;
            y += 18;
        }
        y += 12;
        for line in self.note.lines() {
            drawing(list.draw_text(
                line,
                &(FONT, 12).into_font().color(&RGBColor(60, 60, 60)),
                (4, y),
            ))?;
            y += 16;
        }
        Ok(())
    }
}
