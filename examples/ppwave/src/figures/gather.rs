//! The shot gather (`seismogram.png`): time in seconds downwards, one column per receiver
//! along its x in metres (or its number when the receivers are not one evenly spaced line
//! of increasing x), variable-density gray (black = positive), clipped symmetrically at a
//! percentile stated on the figure, after an optional gain ([`GatherGain`]) that brings up
//! the faint late arrivals.

use super::{colour_bar, drawing, note_style, short, title_style, Figure, CLIP_PERCENTILE, FONT};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

/// Gain applied to every trace before it is drawn (`--gather-gain`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatherGain {
    /// None: the recorded amplitudes.
    #[default]
    None,
    /// Automatic gain control: each sample divided by the RMS of its trace over a window of
    /// [`AGC_WINDOW_S`] seconds centred on it.
    Agc,
    /// Each sample multiplied by t² (compensates geometric spreading and attenuation).
    T2,
}

/// Length of the AGC window in seconds.
pub const AGC_WINDOW_S: f64 = 0.5;

impl GatherGain {
    /// What the gain is, as the figure states it.
    pub fn describe(self) -> String {
        match self {
            GatherGain::None => "no gain".into(),
            GatherGain::Agc => format!("AGC, {} s window", short(AGC_WINDOW_S)),
            GatherGain::T2 => "gain t\u{b2}".into(),
        }
    }

    /// Applies the gain to `traces` (`nt × nrec`, row-major, sample `k` at time `(k+1) dt`).
    pub fn apply(self, traces: &[f64], nt: usize, nrec: usize, dt: f64) -> Vec<f64> {
        match self {
            GatherGain::None => traces.to_vec(),
            GatherGain::T2 => traces
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let t = (i / nrec + 1) as f64 * dt;
                    v * t * t
                })
                .collect(),
            GatherGain::Agc => {
                let half = ((AGC_WINDOW_S / dt / 2.0).round() as usize).max(1);
                let mut out = vec![0.0; traces.len()];
                for r in 0..nrec {
                    // Running sum of squares over the window [k - half, k + half].
                    let sq = |k: usize| traces[k * nrec + r].powi(2);
                    let mut sum: f64 = (0..half.min(nt)).map(sq).sum();
                    for k in 0..nt {
                        if k + half < nt {
                            sum += sq(k + half);
                        }
                        if k > half {
                            sum -= sq(k - half - 1);
                        }
                        let n = (k + half).min(nt - 1) + 1 - k.saturating_sub(half);
                        let rms = (sum.max(0.0) / n as f64).sqrt();
                        let v = traces[k * nrec + r];
                        out[k * nrec + r] = if rms > 0.0 { v / rms } else { 0.0 };
                    }
                }
                out
            }
        }
    }
}

/// Size of the gather picture.
pub const GATHER_SIZE: (u32, u32) = (1000, 1100);
/// Height of the title band.
const TITLE_H: u32 = 76;
/// Width of the colour bar band.
const BAR_W: u32 = 130;

/// A shot gather ready to draw.
#[derive(Clone, Debug)]
pub struct GatherFigure {
    /// Gained samples, `nt × nrec`.
    values: Vec<f64>,
    nt: usize,
    nrec: usize,
    dt: f64,
    /// Receiver x in metres of the first and last column, when the receivers are one
    /// evenly spaced line of increasing x; otherwise columns are receiver numbers.
    x_span: Option<(f64, f64)>,
    gain: GatherGain,
    clip: f64,
}

/// The gather of `traces` (`nt × nrec`, recorded every `dt` seconds) at `receivers` (row,
/// column) on a grid of spacing `dh` metres, gained by `gain` and clipped at the
/// [`CLIP_PERCENTILE`]th percentile of the non-zero gained |samples|. Returns the figure and
/// its clip level.
pub fn gather_figure(
    traces: &[f64],
    nt: usize,
    nrec: usize,
    dt: f64,
    receivers: &[(usize, usize)],
    dh: f64,
    gain: GatherGain,
) -> (GatherFigure, f64) {
    let values = gain.apply(traces, nt, nrec, dt);
    let clip = super::clip_level(values.iter().copied(), CLIP_PERCENTILE);
    let xs: Vec<usize> = receivers.iter().map(|r| r.1).collect();
    let even_line = xs.len() >= 2
        && receivers.iter().all(|r| r.0 == receivers[0].0)
        && xs
            .windows(2)
            .all(|w| w[1] > w[0] && w[1] - w[0] == xs[1] - xs[0]);
    let x_span = even_line.then(|| (xs[0] as f64 * dh, xs[xs.len() - 1] as f64 * dh));
    let fig = GatherFigure {
        values,
        nt,
        nrec,
        dt,
        x_span,
        gain,
        clip,
    };
    (fig, clip)
}

impl Figure for GatherFigure {
    fn size(&self) -> (u32, u32) {
        GATHER_SIZE
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (title, body) = root.split_vertically(TITLE_H);
        drawing(title.draw_text(
            &format!("Shot gather: {} receivers, {} samples", self.nrec, self.nt),
            &title_style(),
            (12, 8),
        ))?;
        let notes = [
            format!(
                "gray: black = positive, white = negative, clipped at \u{b1}{} (\u{b1}{}th percentile of the non-zero |amplitude|)",
                short(self.clip),
                CLIP_PERCENTILE
            ),
            format!(
                "{}; sample interval {} ms",
                self.gain.describe(),
                short(self.dt * 1e3)
            ),
        ];
        for (k, note) in notes.iter().enumerate() {
            drawing(title.draw_text(note, &note_style(), (12, 34 + 19 * k as i32)))?;
        }
        let (w_all, _) = body.dim_in_pixel();
        let (plot_area, bar) = body.split_horizontally(w_all - BAR_W);
        let (x_lo, x_hi, x_desc) = match self.x_span {
            Some((a, b)) => (a, b, "receiver x (m)"),
            None => (1.0, self.nrec as f64, "receiver number"),
        };
        let (x_lo, x_hi) = if x_hi > x_lo {
            (x_lo, x_hi)
        } else {
            (x_lo - 0.5, x_lo + 0.5)
        };
        let t_max = self.nt as f64 * self.dt;
        let mut chart = drawing(
            ChartBuilder::on(&plot_area)
                .margin(4)
                .margin_right(14)
                .x_label_area_size(48)
                .y_label_area_size(74)
                .build_cartesian_2d(x_lo..x_hi, t_max..self.dt.min(t_max)),
        )?;
        drawing(
            chart
                .configure_mesh()
                .disable_mesh()
                .x_desc(x_desc)
                .y_desc("time (s)")
                .x_label_formatter(&|v| short(*v))
                .y_label_formatter(&|v| short(*v))
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .draw(),
        )?;
        let plot = chart.plotting_area().strip_coord_spec();
        let (pw, ph) = plot.dim_in_pixel();
        for j in 0..ph as usize {
            let k = (j * self.nt / ph as usize).min(self.nt - 1);
            for i in 0..pw as usize {
                // The nearest receiver column.
                let r = if self.nrec > 1 {
                    ((i as f64 + 0.5) / pw as f64 * self.nrec as f64) as usize
                } else {
                    0
                }
                .min(self.nrec - 1);
                let v = self.values[k * self.nrec + r] / self.clip;
                drawing(plot.draw_pixel((i as i32, j as i32), &super::gray(v as f32)))?;
            }
        }
        colour_bar(
            &bar,
            (-self.clip, self.clip),
            "amplitude (after gain)",
            |v| super::gray((v / self.clip) as f32),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gains_by_hand() {
        // 3 samples x 1 receiver, dt = 0.5 s: t = 0.5, 1, 1.5.
        let t2 = GatherGain::T2.apply(&[1.0, 1.0, 2.0], 3, 1, 0.5);
        assert_eq!(t2, vec![0.25, 1.0, 4.5]);
        // AGC window 0.5 s at dt = 0.25 s: half = 1 sample; a constant trace becomes ±1.
        let agc = GatherGain::Agc.apply(&[3.0, -3.0, 3.0, -3.0], 4, 1, 0.25);
        assert_eq!(agc, vec![1.0, -1.0, 1.0, -1.0]);
        // A zero trace stays zero (no division by zero).
        assert_eq!(GatherGain::Agc.apply(&[0.0; 3], 3, 1, 0.25), vec![0.0; 3]);
        // Two receivers, one loud, one quiet: AGC brings both to the same RMS.
        let agc = GatherGain::Agc.apply(&[100.0, 0.5, -100.0, -0.5], 2, 2, 0.25);
        assert_eq!(agc, vec![1.0, 1.0, -1.0, -1.0]);
    }
}
