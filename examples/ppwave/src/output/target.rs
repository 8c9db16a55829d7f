//! What `--out` holds before a run: the checks on the target directory ([`check_target`]),
//! a previous run's files proven by its run.json ([`fingerprint`]), stale partial
//! directories of interrupted runs, and mount points.

use super::{FINGERPRINT_SPAN, INCOMPLETE, INSIDE_PREFIX, MARKER_HEAD, RUN_JSON_LIMIT};
use crate::BadInput;
use anyhow::Context;
use serde_json::Value;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Component, Path, PathBuf};

/// `flock(LOCK_EX | LOCK_NB)` on `file`: true when taken (nobody else holds it).
pub(super) fn try_lock(file: &File) -> bool {
    // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// A file's size and fingerprint: FNV-1a (64 bits) over its size and its first and last
/// MiB (`FINGERPRINT_SPAN` bytes; the whole file when smaller), as 16 hex digits. What proves a
/// file in `--out` is the one a run wrote, without reading gigabytes of wavefield.
pub fn fingerprint(path: &Path) -> std::io::Result<(u64, String)> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&len.to_le_bytes());
    let mut buf = Vec::new();
    (&mut file).take(FINGERPRINT_SPAN).read_to_end(&mut buf)?;
    eat(&buf);
    if len > FINGERPRINT_SPAN {
        buf.clear();
        file.seek(SeekFrom::Start(
            len.saturating_sub(FINGERPRINT_SPAN).max(FINGERPRINT_SPAN),
        ))?;
        file.take(FINGERPRINT_SPAN).read_to_end(&mut buf)?;
        eat(&buf);
    }
    Ok((len, format!("{hash:016x}")))
}

/// Whether `dir` is the partial directory of a ppwave run that is gone: a real directory
/// whose [`INCOMPLETE`] marker starts with ppwave's words and whose lock nobody holds.
pub(super) fn is_stale_partial(dir: &Path) -> bool {
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let marker = dir.join(INCOMPLETE);
    if !std::fs::symlink_metadata(&marker).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(mut file) = File::open(&marker) else {
        return false;
    };
    let mut head = [0u8; MARKER_HEAD.len()];
    file.read_exact(&mut head).is_ok() && head == MARKER_HEAD.as_bytes() && try_lock(&file)
}

/// Removes the partial directories in `dir` whose names start with `prefix` and that
/// [`is_stale_partial`] proves are a gone ppwave run's, saying so on stderr.
pub(super) fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with(prefix) {
            continue;
        }
        let path = e.path();
        if is_stale_partial(&path) && std::fs::remove_dir_all(&path).is_ok() {
            eprintln!(
                "note: removed {}, the partial directory of an interrupted ppwave run",
                path.display()
            );
        }
    }
}

/// `--out` as a run writes it: a symbolic link at its end followed. Refuses a path that names
/// the current directory or one above it, and a link to nothing.
pub(super) fn resolve(target: &Path) -> anyhow::Result<PathBuf> {
    let bad = |what: String| BadInput(format!("--out {}: {what}", target.display()));
    if matches!(
        target.components().next_back(),
        None | Some(Component::CurDir | Component::ParentDir | Component::RootDir)
    ) || target.parent().is_none_or(|p| p.as_os_str().is_empty())
    {
        return Err(bad(
            "names no directory of its own; choose a new directory, e.g. --out ppwave-out".into(),
        )
        .into());
    }
    let real = match std::fs::symlink_metadata(target) {
        Ok(m) if m.file_type().is_symlink() => target.canonicalize().map_err(|e| {
            bad(format!(
                "is a symbolic link to a path that cannot be followed ({e}); create the \
                 directory it points to, or choose another --out"
            ))
        })?,
        _ => target.to_path_buf(),
    };
    if let (Ok(cwd), Ok(canon)) = (
        std::env::current_dir().and_then(|d| d.canonicalize()),
        real.canonicalize(),
    ) {
        if cwd.starts_with(&canon) {
            return Err(bad(
                "is the current directory or holds it; a run's outputs go into a directory of \
                 their own: choose a new one, e.g. --out ppwave-out"
                    .into(),
            )
            .into());
        }
    }
    Ok(real)
}

/// The entries of `dir` that count as its content: all but ppwave's partial directories
/// inside it (`.ppwave-partial-*`, a live run's or an interrupted one's).
pub(super) fn content(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(INSIDE_PREFIX))
        .collect();
    names.sort();
    Ok(names)
}

/// Whether `--out` holds a previous run to replace: checks it before anything is written.
/// `overwrite` is `--overwrite`; `inputs` are the run's input files (flag, path), none of
/// which may lie inside `--out` (the run would replace the directory holding them).
pub fn check_target(
    target: &Path,
    overwrite: bool,
    inputs: &[(&str, &Path)],
) -> anyhow::Result<bool> {
    let real = resolve(target)?;
    inspect(target, &real, overwrite, inputs).map(|prev| prev.is_some())
}

/// [`check_target`] of `real` (`--out` resolved, `shown` as given): the previous run's
/// files to replace, `None` when `--out` is new or empty.
pub(super) fn inspect(
    shown: &Path,
    real: &Path,
    overwrite: bool,
    inputs: &[(&str, &Path)],
) -> anyhow::Result<Option<PreviousRun>> {
    let bad = |what: String| BadInput(format!("--out {}: {what}", shown.display()));
    if !real.exists() {
        return Ok(None);
    }
    if !real.is_dir() {
        return Err(bad("exists and is not a directory; choose a directory path".into()).into());
    }
    let canon = real.canonicalize().context(bad("cannot be read".into()))?;
    for (flag, input) in inputs {
        if input.canonicalize().is_ok_and(|i| i.starts_with(&canon)) {
            return Err(BadInput(format!(
                "{flag} {} lies inside --out {}: a run never overwrites its input, and its \
                 outputs replace that directory; move the file out of it or choose another --out",
                input.display(),
                shown.display()
            ))
            .into());
        }
    }
    let entries = content(real).context(bad("cannot be read".into()))?;
    if entries.is_empty() {
        return Ok(None);
    }
    if !overwrite {
        return Err(bad(format!(
            "already holds {} file(s) (e.g. `{}`); a run's outputs are never mixed with other \
             files: choose a new or empty --out, or add --overwrite to replace a previous \
             ppwave run's directory",
            entries.len(),
            entries[0]
        ))
        .into());
    }
    previous_run(real, &entries).map(Some).map_err(|why| {
        bad(format!(
            "--overwrite replaces only the files a previous ppwave run wrote, but {why}; \
                 nothing was deleted: move it away or choose another --out"
        ))
        .into()
    })
}

/// A previous run's files in `--out`, each proven to be what its run.json records.
#[derive(Debug)]
pub(super) struct PreviousRun {
    /// Plain files, relative to the directory, run.json last.
    pub(super) files: Vec<String>,
    /// Directories the run created (`snapshots`, `shot-0001`, ...).
    pub(super) dirs: Vec<String>,
}

/// The files of `dir` (named `entries`) proven to be the previous run's: `run.json` a plain
/// ppwave run.json with an `outputs` list, and every other entry a plain file that list
/// records with the same size and fingerprint, or a real directory holding only such files.
/// The error says which entry is not the run's, and why.
pub(super) fn previous_run(dir: &Path, entries: &[String]) -> Result<PreviousRun, String> {
    let json_path = dir.join("run.json");
    match std::fs::symlink_metadata(&json_path) {
        Err(_) => return Err("it holds no run.json, so it is not a ppwave run's directory".into()),
        Ok(m) if !m.is_file() => return Err("`run.json` is not a plain file".into()),
        Ok(m) if m.len() > RUN_JSON_LIMIT => return Err("`run.json` is too large".into()),
        Ok(_) => {}
    }
    let json: Value = std::fs::read_to_string(&json_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|j: &Value| j["program"] == "ppwave")
        .ok_or("`run.json` is not a run.json written by ppwave")?;
    let outputs = json["outputs"].as_object().ok_or(
        "`run.json` records no `outputs` (the size and fingerprint of each file), so its \
         files cannot be told from yours (an older ppwave's run, or a copied run.json)",
    )?;
    let check = |rel: &str| -> Result<(), String> {
        let rec = outputs
            .get(rel)
            .ok_or_else(|| format!("`{rel}` is not one of the files its run.json lists"))?;
        let path = dir.join(rel);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err(format!(
                "`{rel}` is not a plain file (a run writes only plain files)"
            ));
        }
        let (bytes, print) =
            fingerprint(&path).map_err(|e| format!("`{rel}` cannot be read ({e})"))?;
        if rec["bytes"] != bytes || rec["fingerprint"] != print.as_str() {
            return Err(format!(
                "`{rel}` is not the file the run wrote (its size or content differs from what \
                 run.json records)"
            ));
        }
        Ok(())
    };
    let mut prev = PreviousRun {
        files: Vec::new(),
        dirs: Vec::new(),
    };
    for name in entries.iter().filter(|n| *n != "run.json") {
        let path = dir.join(name);
        let inside = format!("{name}/");
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir && outputs.keys().any(|k| k.starts_with(&inside)) {
            let subs =
                std::fs::read_dir(&path).map_err(|e| format!("`{name}/` cannot be read ({e})"))?;
            for sub in subs.filter_map(Result::ok) {
                let rel = format!("{inside}{}", sub.file_name().to_string_lossy());
                check(&rel)?;
                prev.files.push(rel);
            }
            prev.dirs.push(name.clone());
        } else if is_dir {
            return Err(format!("`{name}/` is a directory the run did not create"));
        } else {
            check(name)?;
            prev.files.push(name.clone());
        }
    }
    prev.files.push("run.json".into());
    Ok(prev)
}

/// Deletes `prev`'s files and then its directories (each only when empty) from `dir`, and
/// `dir` itself when `remove_dir` and empty. Returns whether nothing is left.
pub(super) fn delete_previous(dir: &Path, prev: &PreviousRun, remove_dir: bool) -> bool {
    for f in &prev.files {
        let _ = std::fs::remove_file(dir.join(f));
    }
    let mut ok = true;
    for d in &prev.dirs {
        ok &= std::fs::remove_dir(dir.join(d)).is_ok();
    }
    if remove_dir {
        ok &= std::fs::remove_dir(dir).is_ok();
    }
    ok
}

/// Whether `dir` is a mount point: its device differs from its parent's, it is `/`, or
/// `/proc/self/mountinfo` lists it (a bind mount of the same file system, as a container's
/// `-v host:/out`). Files cannot be renamed across it, so the run writes inside it.
pub(super) fn is_mount_point(dir: &Path) -> bool {
    let (Ok(m), Some(parent)) = (std::fs::metadata(dir), dir.parent()) else {
        return false;
    };
    if std::fs::metadata(parent).is_ok_and(|p| p.dev() != m.dev() || p.ino() == m.ino()) {
        return true;
    }
    let (Ok(canon), Ok(info)) = (
        dir.canonicalize(),
        std::fs::read_to_string("/proc/self/mountinfo"),
    ) else {
        return false;
    };
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .any(|point| Path::new(&unescape_mountinfo(point)) == canon)
}

/// A mount point as `/proc/self/mountinfo` writes it, with its `\NNN` octal escapes (space,
/// tab, newline, backslash) decoded.
pub(super) fn unescape_mountinfo(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push(
                    d.iter()
                        .fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
