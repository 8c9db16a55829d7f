//! What `ppwave run` writes: the output directory (checked before the run, written under a
//! temporary name and renamed into place when complete, removed after a failure; see
//! [`OutputDir`]) and the PNG encoder of the pictures; the pictures themselves are drawn by
//! [`figures`](crate::figures).

use crate::BadInput;
use anyhow::Context;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// The marker file of a run in progress: present in `OUT.partial-<pid>/` until the run is
/// complete, so a directory left by an interrupted run (SIGINT, SIGTERM, a crash) says so.
pub const INCOMPLETE: &str = "INCOMPLETE";

/// The output directory of one run, written all at once or not at all.
///
/// The run writes into a fresh directory `OUT.partial-<pid>` next to `--out` (same parent,
/// same file system), holding an [`INCOMPLETE`] marker; [`commit`](Self::commit) removes the
/// marker and renames the directory to `--out`, so the outputs appear together, `run.json`
/// included. A failed run removes its partial directory (and only it: it was created fresh)
/// and leaves an existing `--out` untouched; an interrupted run leaves `OUT.partial-<pid>/`
/// with the marker and without `run.json`. An existing, non-empty `--out` is refused unless
/// `--overwrite` is given and it holds a previous ppwave run (its run.json's files and
/// snapshots, nothing else); then the new directory replaces it whole when the run is
/// complete, so two runs are never mixed.
#[derive(Debug)]
pub struct OutputDir {
    /// `--out`, absolute.
    target: PathBuf,
    /// Where the run writes until it is complete.
    staging: PathBuf,
    /// `--out` holds a previous run that [`commit`](Self::commit) replaces.
    replace: bool,
    /// Ancestors of `--out` this run created, deepest first (removed again on failure).
    created: Vec<PathBuf>,
    /// Files written, relative to the directory.
    written: Vec<PathBuf>,
    /// Committed or abandoned: nothing left to clean up.
    closed: bool,
}

/// Whether `--out` holds a previous run to replace: checks it before anything is written.
/// `overwrite` is `--overwrite`; `inputs` are the run's input files (flag, path), none of
/// which may lie inside `--out` (the run would replace the directory holding them).
pub fn check_target(
    target: &Path,
    overwrite: bool,
    inputs: &[(&str, &Path)],
) -> anyhow::Result<bool> {
    let bad = |what: String| BadInput(format!("--out {}: {what}", target.display()));
    if target.parent().is_none_or(|p| p.as_os_str().is_empty()) {
        return Err(
            bad("has no parent directory; choose a directory below another one".into()).into(),
        );
    }
    if !target.exists() {
        return Ok(false);
    }
    if !target.is_dir() {
        return Err(bad("exists and is not a directory; choose a directory path".into()).into());
    }
    let canon = target
        .canonicalize()
        .context(bad("cannot be read".into()))?;
    for (flag, input) in inputs {
        if input.canonicalize().is_ok_and(|i| i.starts_with(&canon)) {
            return Err(BadInput(format!(
                "{flag} {} lies inside --out {}: a run never overwrites its input, and its \
                 outputs replace that directory; move the file out of it or choose another --out",
                input.display(),
                target.display()
            ))
            .into());
        }
    }
    let entries: Vec<String> = std::fs::read_dir(target)
        .context(bad("cannot be read".into()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if entries.is_empty() {
        return Ok(false);
    }
    if !overwrite {
        return Err(bad(format!(
            "already holds {} file(s) (e.g. `{}`); a run's outputs are never mixed with other \
             files: choose a new or empty --out, or add --overwrite to replace a previous \
             ppwave run's directory",
            entries.len(),
            entries.iter().min().map_or("", String::as_str)
        ))
        .into());
    }
    if let Some(stranger) = not_a_previous_run(target, &entries) {
        return Err(bad(format!(
            "--overwrite replaces only a previous ppwave run's directory, but `{stranger}` is \
             not one of the files its run.json lists; move it away or choose another --out"
        ))
        .into());
    }
    Ok(true)
}

/// The first entry of `dir` (named `entries`) that is not an output of the ppwave run its
/// run.json describes (`run.json` missing or not ppwave's: `run.json` itself).
fn not_a_previous_run(dir: &Path, entries: &[String]) -> Option<String> {
    let json: Option<serde_json::Value> = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let files: Vec<String> = match &json {
        Some(j) if j["program"] == "ppwave" => j["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect(),
        _ => return Some("run.json".into()),
    };
    let is_frame = |n: &str| {
        let (stem, ext) = n.rsplit_once('.').unwrap_or((n, ""));
        (ext == "npy" || ext == "png")
            && !stem.is_empty()
            && stem.bytes().all(|b| b.is_ascii_digit())
    };
    for e in entries {
        if e == "snapshots" {
            let frames = std::fs::read_dir(dir.join(e)).ok()?;
            for f in frames.filter_map(|f| f.ok()) {
                let name = f.file_name().to_string_lossy().into_owned();
                if !is_frame(&name) {
                    return Some(format!("snapshots/{name}"));
                }
            }
        } else if !files.contains(e) {
            return Some(e.clone());
        }
    }
    None
}

impl OutputDir {
    /// Checks `--out` ([`check_target`]), creates its parent if needed and the fresh
    /// directory `OUT.partial-<pid>` with the [`INCOMPLETE`] marker (which also proves the
    /// place writable).
    pub fn prepare(
        path: &Path,
        overwrite: bool,
        inputs: &[(&str, &Path)],
    ) -> anyhow::Result<OutputDir> {
        let target = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let replace = check_target(&target, overwrite, inputs)?;
        let bad = |what: &str| BadInput(format!("--out {}: {what}", path.display()));
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(bad("names no directory; choose a directory path").into());
        };
        if parent.exists() && !parent.is_dir() {
            return Err(bad("lies below a file, not a directory; choose a directory path").into());
        }
        let created: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        let mut dir = OutputDir {
            staging: parent.join(format!(
                "{}.partial-{}",
                name.to_string_lossy(),
                std::process::id()
            )),
            target: target.clone(),
            replace,
            created,
            written: Vec::new(),
            closed: false,
        };
        if let Err(e) = std::fs::create_dir_all(parent) {
            dir.abandon_ref();
            return Err(anyhow::Error::new(e)
                .context(bad("cannot create the directory; choose a writable path")));
        }
        if let Err(e) = std::fs::create_dir(&dir.staging) {
            dir.closed = e.kind() == std::io::ErrorKind::AlreadyExists;
            dir.abandon_ref();
            return Err(anyhow::Error::new(e).context(bad(
                "cannot create the run's directory next to it; choose a writable path",
            )));
        }
        let marker = format!(
            "ppwave run (process {}) writing {}: until this file is gone the directory is \
             incomplete; when the run completes it is renamed to {}\n",
            std::process::id(),
            dir.staging.display(),
            target.display()
        );
        if let Err(e) = std::fs::write(dir.staging.join(INCOMPLETE), marker) {
            dir.abandon_ref();
            return Err(anyhow::Error::new(e)
                .context(bad("the directory is not writable; choose a writable path")));
        }
        Ok(dir)
    }

    /// Creates the subdirectory `name`.
    pub fn subdir(&mut self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.staging.join(name);
        if let Err(e) = std::fs::create_dir(&dir) {
            self.abandon_ref();
            return Err(anyhow::Error::new(e).context(BadInput(format!(
                "--out {}: cannot create {name}/",
                self.target.display()
            ))));
        }
        Ok(dir)
    }

    /// `--out`, where the files are once the run is committed.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Where the files are written until [`commit`](Self::commit).
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Files written so far, relative to the directory.
    pub fn written(&self) -> &[PathBuf] {
        &self.written
    }

    /// Writes file `name` with `write(path)`, recording it; on failure removes everything this
    /// run wrote (its whole partial directory).
    pub fn write(
        &mut self,
        name: &str,
        write: impl FnOnce(&Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<PathBuf> {
        let file = self.staging.join(name);
        self.written.push(PathBuf::from(name));
        match write(&file) {
            Ok(()) => Ok(self.target.join(name)),
            Err(e) => {
                self.abandon_ref();
                Err(e)
            }
        }
    }

    /// Completes the run: removes the [`INCOMPLETE`] marker and renames the directory to
    /// `--out` (replacing the previous run's directory with `--overwrite`). Returns the files
    /// written, at their final paths.
    pub fn commit(mut self) -> anyhow::Result<Vec<PathBuf>> {
        let shown = self.target.display().to_string();
        let fail = |e: std::io::Error, what: String| {
            anyhow::Error::new(e).context(format!("--out {shown}: {what}"))
        };
        if let Err(e) = std::fs::remove_file(self.staging.join(INCOMPLETE)) {
            self.abandon_ref();
            return Err(fail(e, "cannot complete the run's directory".into()));
        }
        let old = self
            .staging
            .with_extension(format!("replaced-{}", std::process::id()));
        if self.replace {
            if let Err(e) = std::fs::rename(&self.target, &old) {
                self.abandon_ref();
                return Err(fail(e, "cannot move the previous run away".into()));
            }
        } else if self.target.is_dir() {
            // Empty (checked before the run): make room for the rename.
            let _ = std::fs::remove_dir(&self.target);
        }
        if let Err(e) = std::fs::rename(&self.staging, &self.target) {
            if self.replace {
                let _ = std::fs::rename(&old, &self.target);
            }
            self.abandon_ref();
            return Err(fail(
                e,
                format!("cannot rename {} to it", self.staging.display()),
            ));
        }
        self.closed = true;
        if self.replace {
            // The previous run's files (checked: only those its run.json lists), now replaced.
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(self.written.iter().map(|f| self.target.join(f)).collect())
    }

    /// Removes the partial directory (everything in it is this run's) and the ancestors this
    /// run created (when empty).
    pub fn abandon(mut self) {
        self.abandon_ref();
    }

    fn abandon_ref(&mut self) {
        if !self.closed {
            let _ = std::fs::remove_dir_all(&self.staging);
            self.closed = true;
        }
        for d in self.created.drain(..) {
            // Only succeeds when empty: never removes anything that was not ours.
            let _ = std::fs::remove_dir(d);
        }
    }
}

impl Drop for OutputDir {
    /// An error return (or a panic) between [`prepare`](Self::prepare) and
    /// [`commit`](Self::commit) removes the partial directory.
    fn drop(&mut self) {
        self.abandon_ref();
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
        let mut dir = OutputDir::prepare(&nested, false, &[]).expect("prepare");
        let staging = dir.staging().to_path_buf();
        assert!(staging.join(INCOMPLETE).is_file() && !nested.exists());
        dir.write("one.txt", |f| Ok(std::fs::write(f, "1")?))
            .expect("first write");
        let e = dir
            .write("two.txt", |f| {
                std::fs::write(f, "partial")?;
                anyhow::bail!("disk full")
            })
            .expect_err("second write fails");
        assert_eq!(e.to_string(), "disk full");
        drop(dir);
        assert!(!root.exists(), "files and the created directories are gone");

        // A committed run appears whole, without the marker; an empty --out is fine.
        std::fs::create_dir_all(&nested).expect("mkdir");
        let mut dir = OutputDir::prepare(&nested, false, &[]).expect("prepare empty");
        dir.write("x.npy", |f| Ok(std::fs::write(f, "x")?))
            .expect("write");
        let files = dir.commit().expect("commit");
        assert_eq!(files, vec![nested.join("x.npy")]);
        let names: Vec<_> = std::fs::read_dir(&nested)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.npy"]);
        // Now non-empty: refused, and a failed --overwrite attempt (no run.json) too.
        let e = OutputDir::prepare(&nested, false, &[]).expect_err("non-empty");
        assert!(e.to_string().contains("--overwrite"), "{e}");
        let e = OutputDir::prepare(&nested, true, &[]).expect_err("not a run");
        assert!(e.to_string().contains("run.json"), "{e}");
        // An input inside --out is refused.
        let e = OutputDir::prepare(&nested, true, &[("--velocity", &nested.join("x.npy"))])
            .expect_err("input inside");
        assert!(
            e.to_string().contains("--velocity") && e.to_string().contains("inside"),
            "{e}"
        );
        assert_eq!(std::fs::read(nested.join("x.npy")).unwrap(), b"x");
        assert_eq!(
            std::fs::read_dir(nested.parent().unwrap()).unwrap().count(),
            1,
            "no partial dirs"
        );
        std::fs::remove_dir_all(&root).expect("clean up");
    }
}
