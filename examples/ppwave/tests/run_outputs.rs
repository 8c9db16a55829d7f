//! `ppwave run`'s output directory: the outputs appear together or not at all, inputs are
//! never overwritten, nothing the run did not create is deleted, two runs are never mixed, and
//! an interrupted run is recognisable.

mod common;

use common::*;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The entries of `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Directories next to `out` left by a run (`NAME.partial-*`, `NAME.replaced-*`).
fn leftovers(out: &Path) -> Vec<String> {
    let name = out.file_name().unwrap().to_string_lossy().into_owned();
    names(out.parent().unwrap())
        .into_iter()
        .filter(|n| n.starts_with(&format!("{name}.")))
        .collect()
}

#[test]
fn an_input_inside_out_is_never_overwritten() {
    let out = scratch("input-inside");
    assert_ok(&run_small(&out, &[]));
    let model = out.join("velocity.npy");
    let before = std::fs::read(&model).expect("model");
    let v = model.to_str().unwrap();
    for extra in [&["--overwrite"][..], &[][..]] {
        let mut args = vec![
            "run",
            "--velocity",
            v,
            "--nt",
            "5",
            "--src-z",
            "20",
            "--src-x",
            "25",
        ];
        args.extend_from_slice(&[
            "--dt",
            "0.001",
            "--dh",
            "10",
            "--out",
            out.to_str().unwrap(),
        ]);
        args.extend_from_slice(extra);
        let o = ppwave(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("--velocity") && err.contains("--out"), "{err}");
        assert_eq!(
            std::fs::read(&model).expect("kept"),
            before,
            "input untouched"
        );
    }
    // The same file through another spelling of the directory (`out/../out`).
    let other = out.join("..").join(out.file_name().unwrap());
    let o = ppwave(&[
        "run",
        "--velocity",
        v,
        "--nt",
        "5",
        "--src-z",
        "20",
        "--src-x",
        "25",
        "--dt",
        "0.001",
        "--dh",
        "10",
        "--out",
        other.to_str().unwrap(),
        "--overwrite",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&model).expect("kept"), before);
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
}

#[test]
fn reusing_out_needs_overwrite_and_never_mixes_two_runs() {
    let out = scratch("reuse");
    assert_ok(&run_small(
        &out,
        &["--snapshot-every", "10", "--receivers", "5:5:45:5"],
    ));
    assert!(out.join("seismogram.npy").exists() && out.join("snapshots").is_dir());
    // Without --overwrite: refused, the first run intact.
    let first = names(&out);
    let o = run_small(&out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--overwrite"), "{err}");
    assert_eq!(names(&out), first);
    // With it: the second run replaces the first whole; no seismogram or snapshot remains.
    assert_ok(&run_small(&out, &["--overwrite"]));
    assert_eq!(
        names(&out),
        [
            "run.json",
            "velocity.npy",
            "velocity.png",
            "wavefield.npy",
            "wavefield.png"
        ]
    );
    let j = read_json(&out.join("run.json"));
    let mut listed: Vec<String> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        names(&out),
        "run.json lists exactly the run's files"
    );
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));

    // A user's file in the directory: --overwrite refuses and deletes nothing.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = run_small(&out, &["--overwrite"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("notes.txt"), "{err}");
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
    assert!(out.join("wavefield.npy").exists());
}

#[test]
fn an_empty_out_directory_is_used() {
    let out = scratch("empty-out");
    std::fs::create_dir_all(&out).unwrap();
    assert_ok(&run_small(&out, &[]));
    assert!(out.join("run.json").exists());
}

/// The partial directory of `out` whose marker names process `pid` (its name carries a
/// random id), if there is one yet.
fn partial(out: &Path, pid: u32) -> Option<PathBuf> {
    leftovers(out)
        .into_iter()
        .filter(|n| n.contains(".partial-"))
        .map(|n| out.with_file_name(n))
        .find(|d| {
            std::fs::read_to_string(d.join("INCOMPLETE"))
                .is_ok_and(|t| t.contains(&format!("(process {pid})")))
        })
}

#[test]
fn an_interrupted_run_is_recognisable_and_leaves_out_alone() {
    for signal in ["TERM", "INT"] {
        let out = scratch(&format!("interrupted-{signal}"));
        // A previous run in --out, which the interrupted run would replace.
        assert_ok(&run_small(&out, &[]));
        let before = names(&out);
        let wave = std::fs::read(out.join("wavefield.npy")).unwrap();
        // Long enough to be interrupted: 200 x 200, 99999 serial steps, a frame every 5.
        let mut child = Command::new(env!("CARGO_BIN_EXE_ppwave"));
        child
            .args([
                "run",
                "--backend",
                "serial",
                "--nz",
                "200",
                "--nx",
                "200",
                "--nt",
                "99999",
                "--dt",
                "0.001",
                "--dh",
                "10",
                "--src-z",
                "100",
                "--src-x",
                "100",
                "--fpeak",
                "10",
                "--vmin",
                "2000",
                "--snapshot-every",
                "5",
                "--overwrite",
                "--out",
                out.to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // A test run from a background job (a script's `cmd &`) inherits SIGINT ignored, and
        // so would the child, which would then never stop: give it the default dispositions,
        // as a run from a terminal has them.
        // SAFETY: between fork and exec the closure only calls `signal`, which is
        // async-signal-safe, and allocates nothing.
        unsafe {
            child.pre_exec(|| {
                for sig in [libc::SIGINT, libc::SIGTERM] {
                    if libc::signal(sig, libc::SIG_DFL) == libc::SIG_ERR {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = child.spawn().expect("starts");
        // Killed if the test fails before it is interrupted.
        struct Reap(std::process::Child);
        impl Drop for Reap {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let mut child = Reap(child);
        let child = &mut child.0;
        let t0 = Instant::now();
        let dir = loop {
            match partial(&out, child.id()) {
                Some(d) if d.join("snapshots/00010.npy").exists() => break d,
                _ => {}
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "no frame written");
            assert!(child.try_wait().unwrap().is_none(), "ended early");
            std::thread::sleep(Duration::from_millis(20));
        };
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let t0 = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "SIG{signal} did not stop the run"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!status.success());
        // The partial directory says it is incomplete and has no run.json; --out is intact.
        assert!(dir.join("INCOMPLETE").is_file(), "{signal}");
        assert!(!dir.join("run.json").exists());
        assert_eq!(names(&out), before);
        assert_eq!(std::fs::read(out.join("wavefield.npy")).unwrap(), wave);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn the_default_out_can_be_repeated_but_never_replaces_what_is_not_a_run() {
    // `ppwave run` with no --out writes ./ppwave-out; running it again replaces that previous
    // run (the README's first command can be repeated), but a ppwave-out holding anything
    // that is not a ppwave run is refused like a named --out.
    let cwd = scratch("default-out-cwd");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let run = |nt: &str| {
        let mut args = vec!["run"];
        args.extend_from_slice(SMALL);
        let at = args.iter().position(|a| *a == "--nt").expect("--nt") + 1;
        args[at] = nt;
        Command::new(env!("CARGO_BIN_EXE_ppwave"))
            .args(&args)
            .current_dir(&cwd)
            .output()
            .expect("ppwave starts")
    };
    let out = cwd.join("ppwave-out");
    assert_ok(&run("20"));
    assert_eq!(read_json(&out.join("run.json"))["config"]["nt"], 20);
    assert_ok(&run("25"));
    assert_eq!(read_json(&out.join("run.json"))["config"]["nt"], 25);
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
    // A file the run did not write: refused, and kept.
    std::fs::write(out.join("notes.txt"), "mine").expect("write");
    let o = run("30");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("notes.txt") || err.contains("--out"), "{err}");
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(read_json(&out.join("run.json"))["config"]["nt"], 25);
}
