//! Where `ppwave run` puts its outputs, on real file systems: an `--out` that is a mount
//! point (tmpfs, a container's bind mount) or a symbolic link gets the results; a complete run
//! is never deleted because it cannot be moved into place; `--overwrite` deletes only plain
//! files a previous run wrote (size and fingerprint recorded in its run.json), never a
//! directory or a file it did not write; names left by runs in containers (where process ids
//! repeat) never block a later run, and a partial directory is removed only when its run is
//! provably gone.
//!
//! The mount and PID-namespace cases need `unshare` and root; without them they print a
//! `SKIPPED:` line and check what they can.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The entries of `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The files of the SMALL run without receivers or snapshots.
const RUN_FILES: [&str; 5] = [
    "run.json",
    "velocity.npy",
    "velocity.png",
    "wavefield.npy",
    "wavefield.png",
];

/// The SMALL run's command line (for shell scripts), with `extra` appended.
fn small_line(out: &Path, extra: &str) -> String {
    format!(
        "'{}' run {} --out '{}' {extra}",
        env!("CARGO_BIN_EXE_ppwave"),
        SMALL.join(" "),
        out.display()
    )
}

/// Whether `unshare` with `flags` works here (root, the tool present); prints `SKIPPED:` for
/// `what` when it does not.
fn unshare_works(flags: &[&str], what: &str) -> bool {
    let ok = Command::new("unshare")
        .args(flags)
        .args(["sh", "-c", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        println!(
            "SKIPPED: {what}: `unshare {}` is not available here (needs root)",
            flags.join(" ")
        );
    }
    ok
}

/// Runs `script` with sh in a private mount namespace (mounts vanish when it ends).
fn in_mount_namespace(script: &str) -> Output {
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script])
        .output()
        .expect("unshare starts")
}

fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn an_empty_mount_point_gets_the_results() {
    if !unshare_works(&["-m"], "mount points as --out") {
        return;
    }
    // tmpfs: the run, then a second one with --overwrite, inside the namespace; what the
    // mount held is copied out before it vanishes.
    let root = scratch("mount-tmpfs");
    let out = root.join("out");
    let seen = root.join("seen");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&seen).unwrap();
    let script = format!(
        "set -e; mount -t tmpfs none '{o}'; {first}; cp -r '{o}' '{s}/first'; {second}; \
         cp -r '{o}' '{s}/second'; ls -A '{r}' > '{s}/beside'",
        o = out.display(),
        s = seen.display(),
        r = root.display(),
        first = small_line(&out, "--nt 20"),
        second = small_line(&out, "--overwrite"),
    );
    let o = in_mount_namespace(&script);
    assert!(o.status.success(), "{}", both(&o));
    assert_eq!(names(&seen.join("first")), RUN_FILES);
    assert_eq!(names(&seen.join("second")), RUN_FILES);
    assert_eq!(read_json(&seen.join("first/run.json"))["nt"], 20);
    assert_eq!(read_json(&seen.join("second/run.json"))["nt"], 30);
    let beside = std::fs::read_to_string(seen.join("beside")).unwrap();
    assert_eq!(
        beside.split_whitespace().collect::<Vec<_>>(),
        ["out", "seen"]
    );

    // A bind mount of an empty host directory, as a container's `-v host:/out`: the results
    // land in the host directory.
    let host = root.join("host");
    let mnt = root.join("mnt");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let script = format!(
        "set -e; mount --bind '{h}' '{m}'; {run}",
        h = host.display(),
        m = mnt.display(),
        run = small_line(&mnt, "--receivers 5:5:45:5 --snapshot-every 10"),
    );
    let o = in_mount_namespace(&script);
    assert!(o.status.success(), "{}", both(&o));
    let mut want: Vec<&str> = RUN_FILES.to_vec();
    want.extend(["seismogram.npy", "seismogram.png", "snapshots"]);
    want.sort();
    assert_eq!(names(&host), want);
    assert_eq!(names(&host.join("snapshots")).len(), 6);
    assert!(names(&mnt).is_empty(), "the mount point itself stays empty");
}

#[test]
fn a_symbolic_link_out_is_followed_and_kept() {
    let root = scratch("symlink-out");
    let real = root.join("real");
    let link = root.join("link");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_ok(&run_small(&link, &["--nt", "20"]));
    assert_eq!(names(&real), RUN_FILES);
    // --overwrite through the link replaces the run where the link points; the link stays.
    assert_ok(&run_small(&link, &["--overwrite"]));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(names(&real), RUN_FILES);
    assert_eq!(read_json(&real.join("run.json"))["nt"], 30);
    assert_eq!(names(&root), ["link", "real"], "nothing left beside");
    // A link to nothing is refused before the run.
    let dangling = root.join("dangling");
    std::os::unix::fs::symlink(root.join("nowhere"), &dangling).unwrap();
    let o = run_small(&dangling, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(both(&o).contains("symbolic link"), "{}", both(&o));
}

#[test]
fn overwrite_deletes_only_what_the_previous_run_wrote() {
    let out = scratch("overwrite-proof");
    assert_ok(&run_small(&out, &["--snapshot-every", "10"]));
    let json = read_json(&out.join("run.json"));
    assert_eq!(json["run_id"].as_str().map(str::len), Some(16));
    assert!(json["outputs"]["wavefield.npy"]["fingerprint"].is_string());
    assert!(json["outputs"]["snapshots/00010.npy"]["bytes"].is_u64());

    // A directory named like an output, holding a user's file: refused, nothing deleted.
    let refused = |what: &str, needle: &str| {
        let o = run_small(&out, &["--overwrite"]);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", both(&o));
        assert!(both(&o).contains(needle), "{what}: {}", both(&o));
    };
    std::fs::remove_file(out.join("wavefield.png")).unwrap();
    std::fs::create_dir(out.join("wavefield.png")).unwrap();
    std::fs::write(out.join("wavefield.png/mine.txt"), "mine").unwrap();
    refused("a directory", "wavefield.png");
    assert_eq!(
        std::fs::read(out.join("wavefield.png/mine.txt")).unwrap(),
        b"mine"
    );
    std::fs::remove_dir_all(out.join("wavefield.png")).unwrap();
    std::fs::remove_file(out.join("snapshots/00010.npy")).unwrap();
    std::fs::create_dir(out.join("snapshots/00010.npy")).unwrap();
    std::fs::write(out.join("snapshots/00010.npy/mine.txt"), "mine").unwrap();
    refused("a frame directory", "snapshots/00010.npy");
    assert!(out.join("snapshots/00010.npy/mine.txt").exists());
    // A file of the run changed by the user: refused.
    std::fs::remove_dir_all(out.join("snapshots/00010.npy")).unwrap();
    std::fs::write(out.join("snapshots/00010.npy"), "edited").unwrap();
    refused("an edited file", "not the file the run wrote");
    assert_eq!(
        std::fs::read(out.join("snapshots/00010.npy")).unwrap(),
        b"edited"
    );

    // A run.json copied into a project folder does not make the project's files deletable.
    let project = scratch("overwrite-project");
    let other = scratch("overwrite-other");
    assert_ok(&run_small(&other, &["--receivers", "5:5:45:5"]));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(other.join("run.json"), project.join("run.json")).unwrap();
    // The user's own files under the names the run wrote (an npy and a png of theirs).
    assert_ok(&run_small(
        &scratch("overwrite-user"),
        &["--receivers", "6:5:45:5"],
    ));
    for f in ["seismogram.npy", "velocity.png"] {
        std::fs::copy(scratch_keep("overwrite-user").join(f), project.join(f)).unwrap();
    }
    let before = names(&project);
    let o = run_small(&project, &["--overwrite"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(
        both(&o).contains("not the file the run wrote"),
        "{}",
        both(&o)
    );
    assert_eq!(names(&project), before);

    // An intact previous run is replaced whole, and nothing is left beside it.
    let fresh = scratch("overwrite-intact");
    assert_ok(&run_small(&fresh, &["--snapshot-every", "10"]));
    assert_ok(&run_small(&fresh, &["--overwrite"]));
    assert_eq!(names(&fresh), RUN_FILES);
    let parent = fresh.parent().unwrap();
    assert!(!names(parent)
        .iter()
        .any(|n| n.starts_with("cli-overwrite-intact.")));
}

/// The scratch path `name` without cleaning it (a directory an earlier step filled).
fn scratch_keep(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"))
}

#[test]
fn names_left_in_containers_never_block_a_run() {
    let root = scratch("container-names");
    std::fs::create_dir_all(&root).unwrap();
    let out = root.join("out");
    // What a container's interrupted run (process 1) left under the old names: a partial
    // directory without a marker and a non-empty replaced directory. Neither is touched.
    for d in ["out.partial-1", "out.replaced-1"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
        std::fs::write(root.join(d).join("keep.txt"), d).unwrap();
    }
    let pid_ns = unshare_works(&["-p", "-f"], "runs as process 1 in a PID namespace");
    let run = |extra: &str| -> Output {
        let line = small_line(&out, extra);
        if pid_ns {
            Command::new("unshare")
                .args(["-p", "-f", "sh", "-c", &format!("exec {line}")])
                .output()
                .expect("unshare starts")
        } else {
            Command::new("sh").args(["-c", &line]).output().expect("sh")
        }
    };
    let o = run("--nt 20");
    assert!(o.status.success(), "{}", both(&o));
    let o = run("--overwrite");
    assert!(o.status.success(), "{}", both(&o));
    assert_eq!(read_json(&out.join("run.json"))["nt"], 30);
    assert_eq!(names(&root), ["out", "out.partial-1", "out.replaced-1"]);
    for d in ["out.partial-1", "out.replaced-1"] {
        assert_eq!(
            std::fs::read_to_string(root.join(d).join("keep.txt")).unwrap(),
            d
        );
    }
}

#[test]
fn only_a_gone_runs_partial_directory_is_removed() {
    let root = scratch("stale-partials");
    std::fs::create_dir_all(&root).unwrap();
    let out = root.join("out");
    let marker = "ppwave run 0123456789abcdef (process 1) writing\n";
    // Gone: ppwave's marker, unlocked.
    let gone = root.join("out.partial-0123456789abcdef");
    std::fs::create_dir_all(gone.join("snapshots")).unwrap();
    std::fs::write(gone.join("INCOMPLETE"), marker).unwrap();
    // Alive: the same marker, locked by this test as a running ppwave locks it.
    let alive = root.join("out.partial-fedcba9876543210");
    std::fs::create_dir_all(&alive).unwrap();
    std::fs::write(alive.join("INCOMPLETE"), marker).unwrap();
    let held = std::fs::File::open(alive.join("INCOMPLETE")).unwrap();
    // SAFETY: flock only reads the descriptor, which `held` keeps open.
    let locked = unsafe {
        libc::flock(
            std::os::unix::io::AsRawFd::as_raw_fd(&held),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(locked, 0);
    // Not provably ppwave's: no marker, or a marker with other words.
    let strange = root.join("out.partial-aaaaaaaaaaaaaaaa");
    std::fs::create_dir_all(&strange).unwrap();
    std::fs::write(strange.join("INCOMPLETE"), "my notes\n").unwrap();
    let o = run_small(&out, &[]);
    assert_ok(&o);
    assert!(both(&o).contains("interrupted ppwave run"), "{}", both(&o));
    assert_eq!(
        names(&root),
        [
            "out",
            "out.partial-aaaaaaaaaaaaaaaa",
            "out.partial-fedcba9876543210"
        ]
    );
    drop(held);
}

#[test]
fn the_current_directory_is_never_out() {
    let cwd = scratch("dot-cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("mine.txt"), "mine").unwrap();
    for out in [".", "..", cwd.to_str().unwrap()] {
        let o = Command::new(env!("CARGO_BIN_EXE_ppwave"))
            .arg("run")
            .args(SMALL)
            .args(["--out", out, "--overwrite"])
            .current_dir(&cwd)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "--out {out}: {}", both(&o));
        assert!(both(&o).contains("--out"), "{}", both(&o));
    }
    assert_eq!(names(&cwd), ["mine.txt"]);
}
