//! The pictures, checked without eyes: sizes, that the axes, colour bars and text are drawn
//! where they sit, that clipping is symmetric (a field of +a / -a gives the two end colours of
//! the colour map, hand-copied here, over regions of the same size), that a non-zero field
//! gives a non-blank image, and that the embedded font renders text.

use plotters::coord::Shift;
use plotters::prelude::*;
use ppstencil::solver::Layer;
use ppstencil::{HostField, WaveConfig};
use ppwave::figures::field::{velocity_figure, wavefield_figure, Backdrop};
use ppwave::figures::gather::{gather_figure, GatherGain, GATHER_SIZE};
use ppwave::figures::roofline::{Roof, RoofPoint, Roofline, ROOFLINE_SIZE};
use ppwave::figures::{raster, svg, Figure, FONT};

/// An RGB raster with pixel look-ups.
struct Img {
    w: u32,
    h: u32,
    rgb: Vec<u8>,
}

impl Img {
    fn of(fig: &impl Figure) -> Img {
        let (w, h, rgb) = raster(fig).expect("raster");
        assert_eq!((w, h), fig.size(), "the raster has the figure's size");
        assert_eq!(rgb.len(), 3 * (w * h) as usize);
        Img { w, h, rgb }
    }
    fn px(&self, x: u32, y: u32) -> [u8; 3] {
        let k = 3 * (y * self.w + x) as usize;
        [self.rgb[k], self.rgb[k + 1], self.rgb[k + 2]]
    }
    /// Pixels that are not white in the box `x0..x1 × y0..y1`.
    fn ink(&self, (x0, x1): (u32, u32), (y0, y1): (u32, u32)) -> usize {
        (y0..y1.min(self.h))
            .flat_map(|y| (x0..x1.min(self.w)).map(move |x| (x, y)))
            .filter(|&(x, y)| self.px(x, y) != [255, 255, 255])
            .count()
    }
    /// Bounding box `(x0, x1, y0, y1)` (inclusive) and count of the pixels of colour `c`.
    fn bbox(&self, c: [u8; 3]) -> Option<((u32, u32, u32, u32), usize)> {
        let mut b: Option<(u32, u32, u32, u32)> = None;
        let mut n = 0;
        for y in 0..self.h {
            for x in 0..self.w {
                if self.px(x, y) == c {
                    n += 1;
                    b = Some(match b {
                        None => (x, x, y, y),
                        Some((a, bb, c0, d)) => (a.min(x), bb.max(x), c0.min(y), d.max(y)),
                    });
                }
            }
        }
        b.map(|b| (b, n))
    }
}

/// A 40 x 60 grid at 10 m, constant 2000 m/s, source at row 5, column 10, no receivers.
fn small_config() -> WaveConfig {
    let mut c = WaveConfig::paper();
    c.nz = 40;
    c.nx = 60;
    c.dh = 10.0;
    c.vmin = 2000.0;
    c.layers.clear();
    c.src_z = 5;
    c.src_x = 10;
    c.receivers.clear();
    c.absorb = 0;
    c
}

#[test]
fn a_field_of_plus_and_minus_a_uses_both_ends_of_the_colour_map_over_equal_regions() {
    let config = small_config();
    let backdrop = Backdrop::new(&config).expect("backdrop");
    let a = 0.37f32;
    let mut p: HostField<f32> = HostField::new(40, 60).expect("field");
    for z in 0..40 {
        for x in 0..60 {
            p[(z, x)] = if x < 30 { a } else { -a };
        }
    }
    let (fig, clip) = wavefield_figure(&backdrop, &p, "test".into());
    assert_eq!(clip, a as f64, "every |p| is a: the clip level is a");
    let img = Img::of(&fig);
    // The seismic map's ends (matplotlib's "seismic"): dark red at +clip, dark blue at -clip.
    let (red, nr) = img.bbox([128, 0, 0]).expect("+a is dark red");
    let (blue, nb) = img.bbox([0, 0, 77]).expect("-a is dark blue");
    assert_eq!((red.2, red.3), (blue.2, blue.3), "same rows");
    assert_eq!(red.1 + 1, blue.0, "the halves touch at the middle");
    let (wr, wb) = (red.1 - red.0 + 1, blue.1 - blue.0 + 1);
    assert!(wr.abs_diff(wb) <= 1, "equal widths: {wr} vs {wb}");
    // The image keeps the grid's aspect ratio (60 x 40), within a pixel or two.
    let hh = red.3 - red.2 + 1;
    let ratio = (wr + wb) as f64 / hh as f64;
    assert!((ratio - 1.5).abs() < 0.02, "aspect {ratio}");
    // Nothing but the source marker covers the red half (the legend sits in the blue one).
    assert!(nr as f64 > 0.97 * (wr * hh) as f64, "{nr} of {}", wr * hh);
    assert!(nb > 0);

    // Axes: tick labels left of and below the image; the colour bar right of it.
    assert!(img.ink((0, red.0), (red.2, red.3)) > 100, "y axis labels");
    assert!(
        img.ink((red.0, blue.1), (red.3 + 2, img.h)) > 100,
        "x axis labels"
    );
    let bar = img.ink((blue.1 + 10, img.w), (red.2, red.3));
    assert!(bar > 2000, "colour bar drawn ({bar} pixels)");
    // The colour bar runs from -clip (bottom) to +clip (top): its ends are near the map's.
    let col: Vec<[u8; 3]> = (0..img.h)
        .map(|y| img.px(img.w - 40, y))
        .filter(|c| *c != [255, 255, 255])
        .collect();
    let (top, bottom) = (col[0], col[col.len() - 1]);
    assert!(
        top[0] > 100 && top[1] < 10 && top[2] < 10,
        "top is dark red: {top:?}"
    );
    assert!(
        bottom[0] < 10 && bottom[1] < 10 && bottom[2] < 100,
        "bottom dark blue: {bottom:?}"
    );
    // The title band holds text (the embedded font).
    assert!(img.ink((0, img.w), (0, 30)) > 100, "title text");
}

#[test]
fn a_non_zero_field_gives_a_non_blank_image_and_zero_a_white_one() {
    let config = small_config();
    let backdrop = Backdrop::new(&config).expect("backdrop");
    let blob = |z: usize, x: usize| {
        let r2 = ((z as f64 - 20.0).powi(2) + (x as f64 - 30.0).powi(2)) / 25.0;
        (-r2).exp() as f32
    };
    let p: HostField<f32> = HostField::from_fn(40, 60, blob).expect("field");
    let zero: HostField<f32> = HostField::new(40, 60).expect("field");
    let (w, h) = wavefield_figure(&backdrop, &zero, "t".into()).0.size();
    // The middle of the picture (the blob is in the middle of the grid).
    let middle = ((w / 2 - 60, w / 2 + 20), (h / 2 - 40, h / 2 + 40));
    let inked = Img::of(&wavefield_figure(&backdrop, &p, "t".into()).0).ink(middle.0, middle.1);
    let blank = Img::of(&wavefield_figure(&backdrop, &zero, "t".into()).0).ink(middle.0, middle.1);
    assert!(inked > 1000, "the blob shows ({inked} pixels)");
    assert_eq!(blank, 0, "p = 0 is white");
}

#[test]
fn the_velocity_picture_has_its_own_colour_bar() {
    let mut config = small_config();
    config.layers = vec![Layer {
        z0: 20,
        z1: 40,
        velocity: 3000.0,
    }];
    let backdrop = Backdrop::new(&config).expect("backdrop");
    let img = Img::of(&velocity_figure(&backdrop));
    // The viridis-like map's ends (hand-copied from matplotlib's viridis): 2000 m/s is the
    // slowest, 3000 the fastest; the two layers split the image at half depth.
    let (slow, _) = img.bbox([68, 1, 84]).expect("2000 m/s");
    let (fast, _) = img.bbox([253, 231, 37]).expect("3000 m/s");
    assert_eq!(slow.3 + 1, fast.2, "fast below slow");
    let (hs, hf) = (slow.3 - slow.2 + 1, fast.3 - fast.2 + 1);
    assert!(hs.abs_diff(hf) <= 1, "half and half: {hs} vs {hf}");
    let bar = img.ink((slow.1 + 10, img.w), (slow.2, fast.3));
    assert!(bar > 2000, "colour bar drawn ({bar} pixels)");
}

#[test]
fn the_gather_is_clipped_symmetrically_at_the_99th_percentile() {
    // 2 receivers x 100 samples: +a/2 on the first, -a/2 on the second, except the first 4
    // samples (4 % of all) at +a / -a, and one sample of each at +-10 a: the 99th percentile
    // (nearest rank 197 of 0..199) of |samples| is a, not 10 a.
    let (nt, nrec, a) = (100, 2, 0.25);
    let mut t = vec![0.0; nt * nrec];
    for k in 0..nt {
        let s = if k < 4 { a } else { a / 2.0 };
        t[k * nrec] = s;
        t[k * nrec + 1] = -s;
    }
    t[50 * nrec] = 10.0 * a;
    t[50 * nrec + 1] = -10.0 * a;
    let (fig, clip) = gather_figure(
        &t,
        nt,
        nrec,
        1e-3,
        &[(0, 0), (0, 5)],
        10.0,
        GatherGain::None,
    );
    assert_eq!(clip, a);
    let img = Img::of(&fig);
    assert_eq!((img.w, img.h), GATHER_SIZE);
    // Variable density, white (-clip) to black (+clip): +a/2 is gray 64 (127.5 x 0.5, rounded),
    // -a/2 gray 191 (127.5 x 1.5): symmetric about mid-gray, over halves of equal size.
    let (_, n_plus) = img.bbox([64, 64, 64]).expect("+a/2");
    let (_, n_minus) = img.bbox([191, 191, 191]).expect("-a/2");
    assert!(
        n_plus > 100_000,
        "the +a/2 trace fills half the plot ({n_plus} pixels)"
    );
    let diff = n_plus.abs_diff(n_minus) as f64 / n_plus as f64;
    assert!(diff < 0.01, "equal areas: {n_plus} vs {n_minus}");
    // The plot's extent: the rows and columns mostly of the traces' grays.
    let trace = |c: [u8; 3]| matches!(c, [64, 64, 64] | [191, 191, 191]);
    let rows: Vec<u32> = (0..img.h)
        .filter(|&y| (0..img.w).filter(|&x| trace(img.px(x, y))).count() > 300)
        .collect();
    let (y0, y1) = (rows[0], rows[rows.len() - 1]);
    let mid = (y0 + y1) / 2;
    let cols: Vec<u32> = (0..img.w).filter(|&x| trace(img.px(x, mid))).collect();
    let (x0, x1) = (cols[0], cols[cols.len() - 1]);
    assert!(
        x1 - x0 > 500 && y1 - y0 > 500,
        "a large plot ({x0}..{x1} x {y0}..{y1})"
    );
    // The first 4 % of the time axis (the +a / -a samples) is black and white, above.
    assert_eq!(img.px(x0 + 5, y0 - 5), [0, 0, 0]);
    assert_eq!(img.px(x1 - 5, y0 - 5), [255, 255, 255]);
    let plus = (x0, x1, y0, y1);
    // Axes: time labels left of the plot, receiver x (m) below; title text above.
    assert!(
        img.ink((0, x0.saturating_sub(2)), (plus.2, plus.3)) > 100,
        "time axis"
    );
    assert!(img.ink((x0, x1), (plus.3 + 3, img.h)) > 100, "x axis");
    assert!(img.ink((0, img.w), (0, 30)) > 100, "title");
    // Colour bar on the right.
    assert!(
        img.ink((x1 + 20, img.w), (plus.2, plus.3)) > 2000,
        "colour bar"
    );
}

#[test]
fn gather_gain_t2_brings_up_late_samples() {
    let (nt, nrec) = (100, 1);
    let t: Vec<f64> = (0..nt)
        .map(|k| if k % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let (_, none) = gather_figure(&t, nt, nrec, 0.01, &[(0, 0)], 10.0, GatherGain::None);
    let (_, t2) = gather_figure(&t, nt, nrec, 0.01, &[(0, 0)], 10.0, GatherGain::T2);
    assert_eq!(none, 1.0);
    // |gained| = t^2 at t = 0.01..=1.00; the 99th percentile (rank 98 of 0..99) is 0.99^2.
    assert!((t2 - 0.99f64.powi(2)).abs() < 1e-12, "{t2}");
}

#[test]
fn the_roofline_has_log_axes_both_roofs_and_every_point_named() {
    let fig = Roofline {
        title: "Roofline".into(),
        note: "roofs measured".into(),
        roofs: vec![
            Roof {
                label: "1 thread".into(),
                gbs: 10.0,
                gflops: 20.0,
            },
            Roof {
                label: "8 threads".into(),
                gbs: 40.0,
                gflops: 160.0,
            },
        ],
        points: vec![
            RoofPoint {
                label: "fd_pxx serial".into(),
                ai: 0.5,
                gflops: 4.0,
                roof: 0,
            },
            RoofPoint {
                label: "fd_step_4 rayon".into(),
                ai: 1.2,
                gflops: 30.0,
                roof: 1,
            },
        ],
    };
    let img = Img::of(&fig);
    assert_eq!((img.w, img.h), ROOFLINE_SIZE);
    // The roofs' colours (tab10 blue and red) are on the picture.
    assert!(img.bbox([31, 119, 180]).is_some() && img.bbox([214, 39, 40]).is_some());
    // The list of points beside the plot holds text.
    assert!(img.ink((img.w - 370, img.w), (40, 120)) > 200);
    let s = svg(&fig).expect("svg");
    for text in [
        "fd_pxx serial",
        "fd_step_4 rayon",
        "1 thread",
        "8 threads",
        "GFlop/s",
    ] {
        assert!(s.contains(text), "{text} in the SVG");
    }
}

/// Draws "Hg" at (20, 20) in the embedded font.
struct TextOnly;

impl Figure for TextOnly {
    fn size(&self) -> (u32, u32) {
        (120, 60)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.draw_text("Hg", &(FONT, 24).into_font().color(&BLACK), (20, 20))
            .map_err(|e| anyhow::anyhow!("{e}"))
    }
}

#[test]
fn the_embedded_font_renders_text_where_it_is_placed() {
    let img = Img::of(&TextOnly);
    let inside = img.ink((18, 60), (14, 50));
    assert!(inside > 60, "glyph pixels ({inside})");
    assert_eq!(img.ink((0, 120), (0, 10)), 0, "nothing above the text");
    assert_eq!(
        img.ink((70, 120), (0, 60)),
        0,
        "nothing right of two letters"
    );
}
