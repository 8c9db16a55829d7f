//! What `ppwave run` writes: the output directory (checked before the run, cleaned up after a
//! failure), the seismic-style PNG image and `run.json`.

use crate::BadInput;
use anyhow::Context;
use ppstencil::{HostField, Real};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// The output directory of one run. [`OutputDir::prepare`] checks it is writable before the
/// time loop; files are recorded as they are written, and [`OutputDir::abandon`] removes them
/// (and the directories this run created) so a failed run leaves nothing behind.
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    /// Directories this run created, deepest first.
    created: Vec<PathBuf>,
    written: Vec<PathBuf>,
}

impl OutputDir {
    /// Creates `path` if needed and probes that a file can be written in it.
    pub fn prepare(path: &Path) -> anyhow::Result<OutputDir> {
        let bad = |what: String| BadInput(format!("--out {}: {what}", path.display()));
        if path.exists() && !path.is_dir() {
            return Err(
                bad("exists and is not a directory; choose a directory path".into()).into(),
            );
        }
        let created: Vec<PathBuf> = path
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(path).context(bad(
            "cannot create the directory; choose a writable path".into(),
        ))?;
        let dir = OutputDir {
            path: path.to_path_buf(),
            created,
            written: Vec::new(),
        };
        let probe = path.join(format!(".ppwave-probe-{}", std::process::id()));
        if let Err(e) = std::fs::write(&probe, b"probe") {
            dir.abandon();
            return Err(anyhow::Error::new(e).context(bad(
                "the directory is not writable; choose a writable path".into(),
            )));
        }
        // The probe is ours; failing to remove it is harmless.
        let _ = std::fs::remove_file(&probe);
        Ok(dir)
    }

    /// Creates the subdirectory `name` (if missing) and probes that a file can be written in
    /// it; a directory created here is removed again by [`abandon`](Self::abandon) when empty.
    pub fn subdir(&mut self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.path.join(name);
        let bad = |what: &str| BadInput(format!("--out {}: {what}", dir.display()));
        if dir.exists() && !dir.is_dir() {
            return Err(
                bad("exists and is not a directory; move it away or choose another --out").into(),
            );
        }
        if !dir.exists() {
            std::fs::create_dir(&dir).context(bad("cannot create the directory"))?;
            self.created.insert(0, dir.clone());
        }
        let probe = dir.join(format!(".ppwave-probe-{}", std::process::id()));
        std::fs::write(&probe, b"probe").context(bad("the directory is not writable"))?;
        // The probe is ours; failing to remove it is harmless.
        let _ = std::fs::remove_file(&probe);
        Ok(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Files written so far.
    pub fn written(&self) -> &[PathBuf] {
        &self.written
    }

    /// Writes file `name` with `write(path)`, recording it; on failure removes everything this
    /// run wrote.
    pub fn write(
        &mut self,
        name: &str,
        write: impl FnOnce(&Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<PathBuf> {
        let file = self.path.join(name);
        self.written.push(file.clone());
        match write(&file) {
            Ok(()) => Ok(file),
            Err(e) => {
                self.abandon_ref();
                Err(e)
            }
        }
    }

    /// Removes the files this run wrote and the directories it created (when empty).
    pub fn abandon(mut self) {
        self.abandon_ref();
    }

    fn abandon_ref(&mut self) {
        for f in self.written.drain(..) {
            let _ = std::fs::remove_file(f);
        }
        for d in self.created.drain(..) {
            // Only succeeds when empty: never removes anything that was not ours.
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// The colour map: blue (negative) → white (0) → red (positive), darker at the extremes
/// (like matplotlib's "seismic"). `t` is the value over the clip level, clamped to [-1, 1].
pub fn seismic(t: f32) -> [u8; 3] {
    const STOPS: [(f32, [f32; 3]); 5] = [
        (-1.0, [0.0, 0.0, 77.0]),
        (-0.5, [0.0, 0.0, 255.0]),
        (0.0, [255.0, 255.0, 255.0]),
        (0.5, [255.0, 0.0, 0.0]),
        (1.0, [128.0, 0.0, 0.0]),
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(-1.0, 1.0) };
    let i = STOPS
        .windows(2)
        .position(|w| t <= w[1].0)
        .unwrap_or(STOPS.len() - 2);
    let ((t0, c0), (t1, c1)) = (STOPS[i], STOPS[i + 1]);
    let w = (t - t0) / (t1 - t0);
    let mix = |k: usize| (c0[k] + w * (c1[k] - c0[k])).round() as u8;
    [mix(0), mix(1), mix(2)]
}

/// Percentile (0..=100) of the |values| that are not zero: the image's clip level, so a wave
/// that fills only part of the grid is still visible. 1.0 for an all-zero field.
pub fn clip_level<T: Real>(values: &[T], percentile: f64) -> f32 {
    let mut mags: Vec<f32> = values
        .iter()
        .map(|v| v.to_f64().abs() as f32)
        .filter(|&m| m > 0.0 && m.is_finite())
        .collect();
    if mags.is_empty() {
        return 1.0;
    }
    let k = ((percentile / 100.0) * (mags.len() - 1) as f64).round() as usize;
    let k = k.min(mags.len() - 1);
    let (_, v, _) = mags.select_nth_unstable_by(k, f32::total_cmp);
    *v
}

/// The largest image side before `ppwave` downsamples.
pub const MAX_IMAGE_SIDE: usize = 4096;

/// The `h × w` image of an `nz × nx` row-major array reduced by whole factors `sz` (rows) and
/// `sx` (columns): each pixel is the value of largest magnitude of its block, as f32.
fn reduce<T: Real>(
    data: &[T],
    nz: usize,
    nx: usize,
    sz: usize,
    sx: usize,
) -> (usize, usize, Vec<f32>) {
    let (h, w) = (nz.div_ceil(sz), nx.div_ceil(sx));
    let mut out = Vec::with_capacity(h * w);
    for bz in 0..h {
        for bx in 0..w {
            let mut v = 0.0f32;
            for z in bz * sz..((bz + 1) * sz).min(nz) {
                for x in bx * sx..((bx + 1) * sx).min(nx) {
                    let p = data[z * nx + x].to_f64() as f32;
                    if p.abs() > v.abs() {
                        v = p;
                    }
                }
            }
            out.push(v);
        }
    }
    (h, w, out)
}

/// Writes 8-bit pixels (`channels` 1: gray, 3: RGB) of a `w × h` image.
pub(crate) fn encode(
    path: &Path,
    w: usize,
    h: usize,
    color: png::ColorType,
    pixels: &[u8],
) -> anyhow::Result<()> {
    let ctx = || format!("{}: cannot write the PNG image", path.display());
    let file = File::create(path).with_context(ctx)?;
    let too_big = || format!("{}: image {w} x {h} is too large", path.display());
    let mut enc = png::Encoder::new(
        BufWriter::new(file),
        u32::try_from(w).ok().with_context(too_big)?,
        u32::try_from(h).ok().with_context(too_big)?,
    );
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().with_context(ctx)?;
    writer.write_image_data(pixels).with_context(ctx)?;
    writer.finish().with_context(ctx)?;
    Ok(())
}

/// Writes `field` as an RGB PNG, one pixel per grid point (rows = depth, downwards), coloured
/// with [`seismic`] and clipped at the 99th percentile of the non-zero |p|. A grid with a side
/// above [`MAX_IMAGE_SIDE`] is reduced by a whole factor, each pixel showing the largest-|p|
/// point of its block. Returns the clip level.
pub fn write_png<T: Real>(path: &Path, field: &HostField<T>) -> anyhow::Result<f32> {
    let [nz, nx] = field.shape();
    let step = nz.max(nx).div_ceil(MAX_IMAGE_SIDE).max(1);
    let (h, w, values) = reduce(field.as_slice(), nz, nx, step, step);
    let clip = clip_level(field.as_slice(), 99.0);
    let rgb: Vec<u8> = values.iter().flat_map(|&v| seismic(v / clip)).collect();
    encode(path, w, h, png::ColorType::Rgb, &rgb)?;
    Ok(clip)
}

/// Narrowest shot-gather image: narrower gathers are widened by a whole factor.
pub const MIN_GATHER_WIDTH: usize = 400;

/// The gray level of a trace sample over the clip level: white (-1) → mid-gray (0) → black
/// (+1), the usual variable-density display.
pub fn gray(t: f32) -> u8 {
    let t = if t.is_nan() { 0.0 } else { t.clamp(-1.0, 1.0) };
    (127.5 * (1.0 - t)).round() as u8
}

/// Writes a seismogram (`nt × nrec`, time down) as a gray-scale shot gather, one column per
/// receiver, clipped at the 99th percentile of the non-zero |samples| so the later, weaker
/// arrivals show. More than [`MAX_IMAGE_SIDE`] time samples or receivers are reduced by a
/// whole factor (largest |sample| of each block); a gather narrower than
/// [`MIN_GATHER_WIDTH`] or than half its height is widened by repeating each column a whole
/// number of times. Returns the clip level.
pub fn write_gather_png<T: Real>(path: &Path, traces: &HostField<T>) -> anyhow::Result<f32> {
    let [nt, nrec] = traces.shape();
    let sz = nt.div_ceil(MAX_IMAGE_SIDE).max(1);
    let sx = nrec.div_ceil(MAX_IMAGE_SIDE).max(1);
    let (h, w, values) = reduce(traces.as_slice(), nt, nrec, sz, sx);
    let clip = clip_level(traces.as_slice(), 99.0);
    let target = MIN_GATHER_WIDTH.max(h / 2).min(MAX_IMAGE_SIDE);
    let widen = target.div_ceil(w).max(1);
    let mut pixels = Vec::with_capacity(h * w * widen);
    for row in values.chunks(w) {
        for &v in row {
            pixels.extend(std::iter::repeat_n(gray(v / clip), widen));
        }
    }
    encode(path, w * widen, h, png::ColorType::Grayscale, &pixels)?;
    Ok(clip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_map_is_white_at_zero_and_symmetric() {
        assert_eq!(seismic(0.0), [255, 255, 255]);
        assert_eq!(seismic(0.5), [255, 0, 0]);
        assert_eq!(seismic(-0.5), [0, 0, 255]);
        assert_eq!(seismic(1.0), [128, 0, 0]);
        assert_eq!(seismic(7.0), seismic(1.0), "clipped");
        assert_eq!(seismic(-1.0), [0, 0, 77]);
        assert_eq!(seismic(0.25), [255, 128, 128]);
        assert_eq!(seismic(-0.25), [128, 128, 255]);
        assert_eq!(seismic(f32::NAN), [255, 255, 255]);
    }

    #[test]
    fn a_failed_write_removes_what_this_run_created() {
        let root = std::env::temp_dir().join(format!("ppwave-outdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let nested = root.join("a").join("b");
        let mut dir = OutputDir::prepare(&nested).expect("prepare");
        assert!(nested.is_dir());
        assert_eq!(
            std::fs::read_dir(&nested).expect("list").count(),
            0,
            "probe removed"
        );
        dir.write("one.txt", |f| Ok(std::fs::write(f, "1")?))
            .expect("first write");
        let e = dir
            .write("two.txt", |f| {
                std::fs::write(f, "partial")?;
                anyhow::bail!("disk full")
            })
            .expect_err("second write fails");
        assert_eq!(e.to_string(), "disk full");
        assert!(!root.exists(), "files and the created directories are gone");

        // A directory that existed before is kept, with files that were not ours.
        std::fs::create_dir_all(&root).expect("mkdir");
        std::fs::write(root.join("keep.txt"), "k").expect("write");
        let mut dir = OutputDir::prepare(&root).expect("prepare existing");
        dir.write("x.npy", |f| Ok(std::fs::write(f, "x")?))
            .expect("write");
        dir.abandon();
        assert!(root.join("keep.txt").exists() && !root.join("x.npy").exists());
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    #[test]
    fn huge_grids_are_reduced_keeping_the_strongest_point_of_each_block() {
        // 5 x 8193 points: side > 4096, so blocks of 3 x 3 give a 2731 x 2 image.
        let mut f: HostField<f32> = HostField::new(5, 8193).expect("field");
        f.fill(0.01);
        f[(4, 8192)] = -1.0; // alone in the last block (rows 3..5, column 8190..8193)
        let path = std::env::temp_dir().join(format!("ppwave-big-{}.png", std::process::id()));
        write_png(&path, &f).expect("write");
        let decoder = png::Decoder::new(std::io::BufReader::new(File::open(&path).expect("open")));
        let mut reader = decoder.read_info().expect("png header");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("decode");
        assert_eq!((info.width, info.height), (2731, 2));
        let last = &buf[buf.len() - 3..];
        // Non-zero |p| are 0.01 (many) and 1.0: the clip is 0.01, so -1 saturates dark blue.
        assert_eq!(last, &[0, 0, 77]);
        assert_eq!(&buf[..3], &[128, 0, 0], "0.01 / clip 0.01 = +1: dark red");
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn clip_level_ignores_zeros() {
        let mut v = vec![0.0f32; 1000];
        for (k, x) in v.iter_mut().take(101).enumerate() {
            *x = if k % 2 == 0 { k as f32 } else { -(k as f32) };
        }
        // Non-zero magnitudes are 1..=100: the 99th percentile (nearest rank) is 99.
        assert_eq!(clip_level(&v, 99.0), 99.0);
        assert_eq!(clip_level(&v, 100.0), 100.0);
        assert_eq!(clip_level(&[0.0; 4], 99.0), 1.0);
    }

    #[test]
    fn gathers_are_gray_time_down_and_widened_by_a_whole_factor() {
        assert_eq!((gray(1.0), gray(0.0), gray(-1.0)), (0, 128, 255));
        assert_eq!(gray(3.0), 0, "clipped");
        assert_eq!(gray(f32::NAN), 128);
        // 3 time samples x 7 receivers: widened 58 times (7 * 58 = 406 >= 400 > 7 * 57).
        let mut t: HostField<f64> = HostField::new(3, 7).expect("field");
        t[(2, 6)] = 0.5;
        t[(1, 0)] = -0.5;
        let path = std::env::temp_dir().join(format!("ppwave-gather-{}.png", std::process::id()));
        let clip = write_gather_png(&path, &t).expect("write");
        assert_eq!(clip, 0.5);
        let decoder = png::Decoder::new(std::io::BufReader::new(File::open(&path).expect("open")));
        let mut reader = decoder.read_info().expect("png header");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("decode");
        assert_eq!(
            (info.width, info.height, info.color_type),
            (406, 3, png::ColorType::Grayscale)
        );
        let px = |row: usize, col: usize| buf[row * 406 + col];
        assert_eq!(px(0, 0), 128, "zero is mid-gray");
        assert_eq!(
            (px(2, 6 * 58), px(2, 406 - 1)),
            (0, 0),
            "the last receiver's block is black"
        );
        assert_eq!(px(2, 6 * 58 - 1), 128);
        assert_eq!(
            (px(1, 0), px(1, 57), px(1, 58)),
            (255, 255, 128),
            "first receiver, row 1"
        );
        std::fs::remove_file(&path).ok();
    }
}
