//! What `ppwave run` writes: the output directory (checked before the run, cleaned up after a
//! failure) and the PNG encoder of the pictures; the pictures themselves are drawn by
//! [`figures`](crate::figures).

use crate::BadInput;
use anyhow::Context;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
