//! What `ppwave run` writes: the output directory ([`OutputDir`]: checked before the run,
//! written under a fresh name and moved into place only when complete) and the PNG encoder of
//! the pictures; the pictures themselves are drawn by [`figures`](crate::figures).
//!
//! The rules every run keeps, whatever the file system:
//! - finished results are never deleted because of where `--out` is: when the final rename
//!   cannot be done, the complete directory is kept and the error names it;
//! - `--overwrite` deletes only plain files that the previous run's `run.json` lists with
//!   their size and fingerprint, and only the directories that run created;
//! - every name a run makes next to or inside `--out` carries a random id and is created
//!   exclusively, so names never collide (process ids repeat in containers); a partial
//!   directory is removed by a later run only when its marker proves it is ppwave's and its
//!   lock proves the run that made it is gone.

use crate::BadInput;
use anyhow::Context;
use serde_json::Value;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

mod target;

pub use target::{check_target, fingerprint};
use target::{
    delete_previous, inspect, is_mount_point, remove_stale, resolve, try_lock, PreviousRun,
};

/// The marker file of a run in progress: present in the partial directory until the run is
/// complete, so a directory left by an interrupted run (SIGINT, SIGTERM, a crash) says so.
/// The running process holds an exclusive `flock` on it: a later run that can take the lock
/// knows the writer is gone.
pub const INCOMPLETE: &str = "INCOMPLETE";

/// The first words of every [`INCOMPLETE`] marker: what proves a directory is ppwave's.
const MARKER_HEAD: &str = "ppwave run ";

/// The name of the partial directory inside `--out` when it cannot be written beside it
/// (a mount point, a parent without write permission): `.ppwave-partial-<id>`.
const INSIDE_PREFIX: &str = ".ppwave-partial-";

/// The largest `run.json` read when checking a previous run (a run's is a few kilobytes per
/// thousand files it lists).
const RUN_JSON_LIMIT: u64 = 64 << 20;

/// Bytes hashed at each end of a file for its [`fingerprint`].
const FINGERPRINT_SPAN: u64 = 1 << 20;

/// Where a run's partial directory lies and how it becomes `--out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `OUT.partial-<id>` next to `--out`, renamed to it whole.
    Beside,
    /// `OUT/.ppwave-partial-<id>`, whose files are moved up one by one (run.json last): for
    /// an `--out` that is a mount point or whose parent cannot be written.
    Inside,
}

/// The output directory of one run, written all at once or not at all.
///
/// The run writes into a fresh partial directory holding an [`INCOMPLETE`] marker: beside
/// `--out` (`OUT.partial-<id>`, renamed to `--out` when complete) or, where that rename
/// cannot work (`--out` is a mount point, its parent is not writable), inside it
/// (`OUT/.ppwave-partial-<id>`, whose files are moved up with `run.json` last). A symbolic
/// link `--out` is followed: the run lands in the directory it points to and the link stays.
/// A failed run removes its partial directory (only it: it was created fresh) and leaves an
/// existing `--out` untouched; an interrupted run leaves its partial directory with the
/// marker and without `run.json`; a complete run whose directory cannot be moved into place
/// keeps it and says where. An existing, non-empty `--out` is refused unless `--overwrite`
/// is given and it holds only a previous ppwave run's files ([`check_target`]).
#[derive(Debug)]
pub struct OutputDir {
    /// `--out`, absolute, with a symbolic link at its end followed.
    target: PathBuf,
    /// Where the run writes until it is complete.
    staging: PathBuf,
    /// Beside or inside `--out`.
    place: Place,
    /// `--out` holds a previous run that [`commit`](Self::commit) replaces.
    replace: bool,
    /// Ancestors of `--out` this run created, deepest first (removed again on failure).
    created: Vec<PathBuf>,
    /// Files written, relative to the directory.
    written: Vec<PathBuf>,
    /// run.json's `outputs`: each file written (but run.json) with its size and fingerprint.
    outputs: serde_json::Map<String, Value>,
    /// This run's random id (in the partial directory's name, its marker and run.json).
    run_id: String,
    /// The open [`INCOMPLETE`] marker, locked while the run lives.
    lock: Option<File>,
    /// Committed, kept or abandoned: nothing left to clean up.
    closed: bool,
}

/// A random id of 16 hex digits: the process's randomly keyed hasher over the time, the
/// process id and a counter, so that two processes (even with the same pid in two
/// containers) draw different ids.
fn random_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.write_u64(COUNT.fetch_add(1, Ordering::Relaxed));
    format!("{:016x}", h.finish())
}

impl OutputDir {
    /// Checks `--out` ([`check_target`]), removes the partial directories of gone runs next
    /// to (or inside) it, creates its parent if needed and the fresh partial directory with
    /// the locked [`INCOMPLETE`] marker (which also proves the place writable).
    pub fn prepare(
        path: &Path,
        overwrite: bool,
        inputs: &[(&str, &Path)],
    ) -> anyhow::Result<OutputDir> {
        let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let target = resolve(&shown)?;
        let replace = inspect(&shown, &target, overwrite, inputs)?.is_some();
        let bad = |what: &str| BadInput(format!("--out {}: {what}", path.display()));
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(bad("names no directory; choose a directory path").into());
        };
        if parent.exists() && !parent.is_dir() {
            return Err(bad("lies below a file, not a directory; choose a directory path").into());
        }
        let name = name.to_string_lossy().into_owned();
        let created: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        let run_id = random_id();
        let mut dir = OutputDir {
            staging: parent.join(format!("{name}.partial-{run_id}")),
            place: Place::Beside,
            target: target.clone(),
            replace,
            created,
            written: Vec::new(),
            outputs: serde_json::Map::new(),
            run_id,
            lock: None,
            closed: true,
        };
        if let Err(e) = std::fs::create_dir_all(parent) {
            dir.abandon_ref();
            return Err(anyhow::Error::new(e)
                .context(bad("cannot create the directory; choose a writable path")));
        }
        let existing = target.is_dir();
        if existing && is_mount_point(&target) {
            dir.place = Place::Inside;
        } else {
            remove_stale(parent, &format!("{name}.partial-"));
            match std::fs::create_dir(&dir.staging) {
                Ok(()) => dir.closed = false,
                // The parent takes no new entry (read-only, no permission): write inside.
                Err(_) if existing => dir.place = Place::Inside,
                Err(e) => {
                    dir.abandon_ref();
                    return Err(anyhow::Error::new(e).context(bad(
                        "cannot create the run's directory next to it; choose a writable path",
                    )));
                }
            }
        }
        if dir.place == Place::Inside {
            remove_stale(&target, INSIDE_PREFIX);
            dir.staging = target.join(format!("{INSIDE_PREFIX}{}", dir.run_id));
            if let Err(e) = std::fs::create_dir(&dir.staging) {
                dir.abandon_ref();
                return Err(anyhow::Error::new(e).context(bad(
                    "cannot create the run's directory inside it; choose a writable path",
                )));
            }
            dir.closed = false;
        }
        if let Err(e) = dir.mark() {
            dir.abandon_ref();
            return Err(e.context(bad("the directory is not writable; choose a writable path")));
        }
        Ok(dir)
    }

    /// Writes the [`INCOMPLETE`] marker: created under another name, locked, filled, then
    /// renamed, so that no other run ever sees an unlocked marker of a live run.
    fn mark(&mut self) -> anyhow::Result<()> {
        let fresh = self.staging.join(format!("{INCOMPLETE}.new"));
        let mut file = File::options().write(true).create_new(true).open(&fresh)?;
        anyhow::ensure!(try_lock(&file), "cannot lock {}", fresh.display());
        let text = format!(
            "{MARKER_HEAD}{} (process {}) writing {}: until this file is gone the directory \
             is incomplete; when the run completes its files go to {}\n",
            self.run_id,
            std::process::id(),
            self.staging.display(),
            self.target.display()
        );
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        std::fs::rename(&fresh, self.staging.join(INCOMPLETE))?;
        self.lock = Some(file);
        Ok(())
    }

    /// This run's random id (recorded in run.json as `run_id`).
    pub fn run_id(&self) -> &str {
        &self.run_id
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

    /// Writes file `name` with `write(path)`, recording it with its size and fingerprint; on
    /// failure removes everything this run wrote (its whole partial directory). `run.json`
    /// also gets `"program": "ppwave"`, the run's id (`run_id`) and the record of every other
    /// file written (`outputs`: `{"bytes", "fingerprint"}` per path), which prove to a later
    /// `--overwrite` which files are this run's, whichever command wrote them.
    pub fn write(
        &mut self,
        name: &str,
        write: impl FnOnce(&Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<PathBuf> {
        let file = self.staging.join(name);
        self.written.push(PathBuf::from(name));
        let done = write(&file).and_then(|()| {
            if name == "run.json" {
                self.seal_run_json(&file)
            } else {
                let (bytes, print) = fingerprint(&file)
                    .with_context(|| format!("{}: cannot read it back", file.display()))?;
                self.outputs.insert(
                    name.to_string(),
                    serde_json::json!({"bytes": bytes, "fingerprint": print}),
                );
                Ok(())
            }
        });
        match done {
            Ok(()) => Ok(self.target.join(name)),
            Err(e) => {
                self.abandon_ref();
                Err(e)
            }
        }
    }

    /// Adds `program`, `run_id` and `outputs` to the JSON object in `file` (a run.json just
    /// written).
    fn seal_run_json(&self, file: &Path) -> anyhow::Result<()> {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("{}: cannot read it back", file.display()))?;
        let mut json: Value = serde_json::from_str(&text)?;
        if let Some(obj) = json.as_object_mut() {
            obj.insert("program".into(), "ppwave".into());
            obj.insert("run_id".into(), self.run_id.clone().into());
            obj.insert("outputs".into(), Value::Object(self.outputs.clone()));
        }
        std::fs::write(file, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("{}: cannot write", file.display()))
    }

    /// Completes the run: moves its files to `--out` (replacing the previous run's files
    /// with `--overwrite`) and removes the [`INCOMPLETE`] marker. Returns the files written,
    /// at their final paths. When the move cannot be done, the complete directory is kept
    /// (marker removed, run.json in it) and the error names it.
    pub fn commit(mut self) -> anyhow::Result<Vec<PathBuf>> {
        let shown = self.target.display().to_string();
        let fail = |e: anyhow::Error, what: String| e.context(format!("--out {shown}: {what}"));
        // What is in --out now: the previous run (checked again: the run may have been long).
        let prev = match inspect(&self.target, &self.target, self.replace, &[]) {
            Ok(prev) => prev,
            Err(e) => return Err(self.keep(e, "--out changed during the run")),
        };
        if prev.is_some() != self.replace && self.target.exists() {
            let e = anyhow::anyhow!("--out is no longer what it was when the run started");
            return Err(self.keep(e, "--out changed during the run"));
        }
        match self.place {
            Place::Beside => self.commit_beside(prev),
            Place::Inside => self.commit_inside(prev),
        }
        .map_err(|e| {
            fail(
                e,
                "the run is complete but its files could not be put there".into(),
            )
        })
    }

    /// Keeps the complete partial directory (without its marker) after `e`, whose context
    /// says what happened and where the results are.
    fn keep(&mut self, e: anyhow::Error, what: &str) -> anyhow::Error {
        let _ = std::fs::remove_file(self.staging.join(INCOMPLETE));
        self.lock = None;
        self.closed = true;
        e.context(format!(
            "--out {}: {what}; the run is complete and its results are kept in {}: move them \
             where you want them",
            self.target.display(),
            self.staging.display()
        ))
    }

    /// [`commit`](Self::commit) beside `--out`: one rename (the previous run moved aside to
    /// a fresh `OUT.replaced-<id>` first, and its checked files deleted after).
    fn commit_beside(&mut self, prev: Option<PreviousRun>) -> anyhow::Result<Vec<PathBuf>> {
        if let Err(e) = std::fs::remove_file(self.staging.join(INCOMPLETE)) {
            return Err(self.keep(e.into(), "cannot complete the run's directory"));
        }
        let name = self
            .target
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let old = self
            .target
            .with_file_name(format!("{name}.replaced-{}", self.run_id));
        if prev.is_some() {
            // Created exclusively, so the rename below replaces only this run's empty directory.
            let moved =
                std::fs::create_dir(&old).and_then(|()| std::fs::rename(&self.target, &old));
            if moved.is_err() {
                // A mount point cannot be moved (EBUSY): replace its files instead.
                let _ = std::fs::remove_dir(&old);
                return self.commit_inside(prev);
            }
        } else if self.target.is_dir() {
            // Empty (checked): make room for the rename. A mount point stays (EBUSY).
            let _ = std::fs::remove_dir(&self.target);
        }
        if let Err(e) = std::fs::rename(&self.staging, &self.target) {
            if prev.is_some() {
                let _ = std::fs::rename(&old, &self.target);
            }
            if self.target.is_dir() {
                // --out stayed (a mount point of the same file system): move the files in.
                let prev = prev.and_then(|_| {
                    inspect(&self.target, &self.target, true, &[])
                        .ok()
                        .flatten()
                });
                return self.commit_inside(prev);
            }
            let what = format!("cannot rename {} to it", self.staging.display());
            return Err(self.keep(e.into(), &what));
        }
        self.lock = None;
        self.closed = true;
        if let Some(prev) = prev {
            if !delete_previous(&old, &prev, true) {
                eprintln!(
                    "warning: kept {}: the previous run's directory now holds files it did not \
                     write",
                    old.display()
                );
            }
        }
        Ok(self.written.iter().map(|f| self.target.join(f)).collect())
    }

    /// [`commit`](Self::commit) file by file, for a partial directory inside `--out` or for
    /// an `--out` that cannot be renamed (a mount point): the previous run's checked files
    /// deleted, then each new entry moved into `--out` with run.json last, then the marker
    /// and the partial directory removed. A move that fails (another file system) keeps the
    /// rest in the partial directory and says so.
    fn commit_inside(&mut self, prev: Option<PreviousRun>) -> anyhow::Result<Vec<PathBuf>> {
        if let Some(prev) = &prev {
            delete_previous(&self.target, prev, false);
        }
        // A marker was removed before a rename that then failed: put it back.
        if !self.staging.join(INCOMPLETE).exists() && self.mark().is_err() {
            return Err(self.keep(
                anyhow::anyhow!("cannot mark the run's directory"),
                "cannot move the files in",
            ));
        }
        let mut tops: Vec<String> = self
            .written
            .iter()
            .filter_map(|f| f.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        tops.dedup();
        tops.sort_by_key(|t| t == "run.json");
        tops.dedup();
        for top in &tops {
            if let Err(e) = std::fs::rename(self.staging.join(top), self.target.join(top)) {
                let what = format!("cannot move {top} into it");
                return Err(self.keep(e.into(), &what));
            }
        }
        let _ = std::fs::remove_file(self.staging.join(INCOMPLETE));
        self.lock = None;
        let _ = std::fs::remove_dir(&self.staging);
        self.closed = true;
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
        self.lock = None;
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

    #[test]
    fn a_complete_run_that_cannot_be_moved_into_place_is_kept() {
        let root = std::env::temp_dir().join(format!("ppwave-outkeep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let target = root.join("out");
        let mut dir = OutputDir::prepare(&target, false, &[]).expect("prepare");
        dir.write("x.npy", |f| Ok(std::fs::write(f, "x")?))
            .expect("write");
        dir.write("run.json", |f| {
            Ok(std::fs::write(f, "{\"program\": \"ppwave\"}")?)
        })
        .expect("run.json");
        let staging = dir.staging().to_path_buf();
        // During the run, the user puts a file where the run was to go.
        std::fs::create_dir_all(&target).expect("mkdir");
        std::fs::write(target.join("mine.txt"), "mine").expect("write");
        let e = format!("{:#}", dir.commit().expect_err("cannot be put there"));
        assert!(e.contains(&staging.display().to_string()), "{e}");
        assert!(!staging.join(INCOMPLETE).exists(), "complete: no marker");
        assert_eq!(std::fs::read(staging.join("x.npy")).expect("kept"), b"x");
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(staging.join("run.json")).unwrap())
                .unwrap();
        assert_eq!(json["outputs"]["x.npy"]["bytes"], 1);
        assert_eq!(json["run_id"].as_str().map(str::len), Some(16));
        assert_eq!(std::fs::read(target.join("mine.txt")).unwrap(), b"mine");
        std::fs::remove_dir_all(&root).expect("clean up");
    }
}
