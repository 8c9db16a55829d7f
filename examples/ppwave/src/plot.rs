//! A small vector picture (lines, rectangles, dots, text) written either as SVG or as PNG.
//!
//! `ppwave bench --plot` draws its roofline once as a list of [`Shape`]s; [`svg`] writes it as
//! text, [`png()`] rasterises it (one pixel per unit, lines by Bresenham, text with the public-domain
//! 8 × 8 bitmap font of the `font8x8` crate) so the picture needs no font or renderer on the
//! machine that makes it.

use std::fmt::Write as _;
use std::path::Path;

/// An RGB colour.
pub type Rgb = [u8; 3];

/// How a text is placed relative to its point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// The text starts at the point.
    Start,
    /// The text is centred on the point.
    Middle,
    /// The text ends at the point.
    End,
}

/// One element of a picture, in pixels, y downwards; a text's `y` is its baseline.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A straight line.
    Line {
        /// Start and end points.
        from: (f64, f64),
        /// End point.
        to: (f64, f64),
        /// Colour.
        color: Rgb,
        /// Width in pixels (1 or 2).
        width: u8,
    },
    /// An outlined rectangle.
    Rect {
        /// Top-left corner.
        at: (f64, f64),
        /// Width and height.
        size: (f64, f64),
        /// Outline colour.
        color: Rgb,
    },
    /// A filled dot.
    Dot {
        /// Centre.
        at: (f64, f64),
        /// Radius.
        r: f64,
        /// Fill colour.
        color: Rgb,
    },
    /// A line of text.
    Text {
        /// Anchor point (baseline).
        at: (f64, f64),
        /// The text (ASCII; other characters show as `?` in PNG).
        text: String,
        /// Colour.
        color: Rgb,
        /// Placement.
        anchor: Anchor,
        /// Written upwards (rotated by -90°).
        vertical: bool,
    },
}

fn hex(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The picture as SVG text.
pub fn svg(w: usize, h: usize, shapes: &[Shape]) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         font-family=\"monospace\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for shape in shapes {
        let _ = match shape {
            Shape::Line { from, to, color, width } => writeln!(
                s,
                "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"{width}\"/>",
                from.0, from.1, to.0, to.1, hex(*color)
            ),
            Shape::Rect { at, size, color } => writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"{}\"/>",
                at.0, at.1, size.0, size.1, hex(*color)
            ),
            Shape::Dot { at, r, color } => writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r}\" fill=\"{}\"/>",
                at.0, at.1, hex(*color)
            ),
            Shape::Text { at, text, color, anchor, vertical } => {
                let a = match anchor {
                    Anchor::Start => "start",
                    Anchor::Middle => "middle",
                    Anchor::End => "end",
                };
                let place = if *vertical {
                    format!("transform=\"translate({:.1} {:.1}) rotate(-90)\"", at.0, at.1)
                } else {
                    format!("x=\"{:.1}\" y=\"{:.1}\"", at.0, at.1)
                };
                writeln!(
                    s,
                    "<text {place} text-anchor=\"{a}\" fill=\"{}\">{}</text>",
                    hex(*color),
                    escape(text)
                )
            }
        };
    }
    s.push_str("</svg>\n");
    s
}

/// An RGB raster with clipped pixel writes.
struct Canvas {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

impl Canvas {
    fn put(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            let k = 3 * (y as usize * self.w + x as usize);
            self.rgb[k..k + 3].copy_from_slice(&c);
        }
    }

    fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: Rgb, width: u8) {
        let (mut x, mut y) = (x0.round() as i64, y0.round() as i64);
        let (xe, ye) = (x1.round() as i64, y1.round() as i64);
        let (dx, dy) = ((xe - x).abs(), -(ye - y).abs());
        let (sx, sy) = (if x < xe { 1 } else { -1 }, if y < ye { 1 } else { -1 });
        let mut err = dx + dy;
        loop {
            self.put(x, y, c);
            if width > 1 {
                self.put(x + 1, y, c);
                self.put(x, y + 1, c);
            }
            if x == xe && y == ye {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    fn text(&mut self, at: (f64, f64), text: &str, c: Rgb, anchor: Anchor, vertical: bool) {
        let len = 8 * text.chars().count() as i64;
        let shift = match anchor {
            Anchor::Start => 0,
            Anchor::Middle => len / 2,
            Anchor::End => len,
        };
        let (ax, ay) = (at.0.round() as i64, at.1.round() as i64);
        for (i, ch) in text.chars().enumerate() {
            let glyph = font8x8::legacy::BASIC_LEGACY
                .get(ch as usize)
                .copied()
                .unwrap_or(font8x8::legacy::BASIC_LEGACY[b'?' as usize]);
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) == 0 {
                        continue;
                    }
                    // Glyph pixel (u along the text, v down from the top of the line).
                    let u = 8 * i as i64 + col - shift;
                    let v = row as i64 - 7;
                    if vertical {
                        self.put(ax + v, ay - u, c);
                    } else {
                        self.put(ax + u, ay + v, c);
                    }
                }
            }
        }
    }
}

/// The picture rasterised as an RGB image (`w × h`, white background).
pub fn raster(w: usize, h: usize, shapes: &[Shape]) -> Vec<u8> {
    let mut cv = Canvas {
        w,
        h,
        rgb: vec![255; 3 * w * h],
    };
    for shape in shapes {
        match shape {
            Shape::Line {
                from,
                to,
                color,
                width,
            } => cv.line(*from, *to, *color, *width),
            Shape::Rect { at, size, color } => {
                let (x0, y0, x1, y1) = (at.0, at.1, at.0 + size.0, at.1 + size.1);
                cv.line((x0, y0), (x1, y0), *color, 1);
                cv.line((x1, y0), (x1, y1), *color, 1);
                cv.line((x1, y1), (x0, y1), *color, 1);
                cv.line((x0, y1), (x0, y0), *color, 1);
            }
            Shape::Dot { at, r, color } => {
                let ri = r.ceil() as i64;
                let (cx, cy) = (at.0.round() as i64, at.1.round() as i64);
                for dy in -ri..=ri {
                    for dx in -ri..=ri {
                        if ((dx * dx + dy * dy) as f64) <= r * r {
                            cv.put(cx + dx, cy + dy, *color);
                        }
                    }
                }
            }
            Shape::Text {
                at,
                text,
                color,
                anchor,
                vertical,
            } => cv.text(*at, text, *color, *anchor, *vertical),
        }
    }
    cv.rgb
}

/// Writes the picture as a PNG file.
pub fn png(path: &Path, w: usize, h: usize, shapes: &[Shape]) -> anyhow::Result<()> {
    crate::output::encode(path, w, h, ::png::ColorType::Rgb, &raster(w, h, shapes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: Rgb = [255, 0, 0];

    #[test]
    fn lines_dots_and_text_land_where_expected() {
        let shapes = [
            Shape::Line {
                from: (0.0, 0.0),
                to: (9.0, 9.0),
                color: RED,
                width: 1,
            },
            Shape::Dot {
                at: (30.0, 5.0),
                r: 2.0,
                color: RED,
            },
            Shape::Text {
                at: (40.0, 12.0),
                text: "I".into(),
                color: RED,
                anchor: Anchor::Start,
                vertical: false,
            },
        ];
        let (w, h) = (60, 16);
        let img = raster(w, h, &shapes);
        let px = |x: usize, y: usize| {
            [
                img[3 * (y * w + x)],
                img[3 * (y * w + x) + 1],
                img[3 * (y * w + x) + 2],
            ]
        };
        for k in 0..10 {
            assert_eq!(px(k, k), RED, "diagonal at {k}");
        }
        assert_eq!(px(1, 0), [255, 255, 255], "one pixel wide");
        assert_eq!(px(30, 5), RED);
        assert_eq!(px(32, 5), RED);
        assert_eq!(px(30, 8), [255, 255, 255], "radius 2");
        // The glyph "I" occupies rows 5..=11 (baseline 12) of columns 40..48.
        let inked = (40..48)
            .flat_map(|x| (4..13).map(move |y| (x, y)))
            .filter(|&(x, y)| px(x, y) == RED)
            .count();
        assert!(inked >= 10, "the glyph is drawn ({inked} pixels)");
        assert!(
            (0..w).all(|x| px(x, 15) == [255, 255, 255] || x < 10),
            "nothing below the baseline"
        );
    }

    #[test]
    fn svg_has_one_element_per_shape_and_escapes_text() {
        let shapes = [
            Shape::Rect {
                at: (1.0, 2.0),
                size: (3.0, 4.0),
                color: RED,
            },
            Shape::Text {
                at: (5.0, 6.0),
                text: "a<b & c".into(),
                color: RED,
                anchor: Anchor::End,
                vertical: true,
            },
        ];
        let s = svg(10, 10, &shapes);
        assert!(s.contains("<rect x=\"1.0\" y=\"2.0\" width=\"3.0\" height=\"4.0\" fill=\"none\" stroke=\"#ff0000\"/>"), "{s}");
        assert!(
            s.contains("rotate(-90)") && s.contains("text-anchor=\"end\""),
            "{s}"
        );
        assert!(s.contains(">a&lt;b &amp; c</text>"), "{s}");
    }
}
