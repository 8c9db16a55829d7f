//! The files `ppwave run` reads are read with bounds: `/dev/zero`, a FIFO with no writer and
//! a directory given as `--velocity`, `--config`, `--receiver-file` or `--shots` are refused
//! at once (exit 2, naming the flag and what the path is) instead of reading until memory is
//! gone or waiting forever; an `.npy` whose header promises more (or less) than the file
//! holds is refused before it is loaded; text that is not UTF-8 is refused naming the line.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the SMALL problem with `extra` into `out`, killed after 20 s (a hang fails).
fn run_bounded(out: &Path, extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ppwave"))
        .arg("run")
        .args(SMALL)
        .args(["--out", out.to_str().unwrap()])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let t0 = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{extra:?}: still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn special_files_are_refused_at_once() {
    let root = scratch("inputs-special");
    std::fs::create_dir_all(&root).unwrap();
    let fifo = root.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let dir = root.join("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let shots = root.join("shots.txt");
    std::fs::write(&shots, "20 25\n").unwrap();
    let cases = [
        ("/dev/zero", "character device"),
        (fifo.to_str().unwrap(), "FIFO"),
        (dir.to_str().unwrap(), "a directory"),
    ];
    for (path, kind) in cases {
        for flag in ["--velocity", "--config", "--receiver-file", "--shots"] {
            let out = root.join("out");
            // A survey needs receivers (checked before its file).
            let o = run_bounded(&out, &[flag, path, "--receivers", "5:5:45:5"]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{flag} {path}: {err}");
            assert!(
                err.contains(flag) && err.contains(kind) && err.contains("not a regular file"),
                "{flag} {path}: {err}"
            );
            assert!(!out.exists(), "{flag} {path}: nothing written");
        }
    }
}

#[test]
fn an_npy_header_must_match_the_file_length() {
    let root = scratch("inputs-npy");
    std::fs::create_dir_all(&root).unwrap();
    // Promises 4000 x 4000 float64 values (128 MB) but holds 16 bytes.
    let liar = root.join("liar.npy");
    write_raw_npy(&liar, "<f8", "(4000, 4000)", &[0u8; 16]);
    // Holds more than it promises.
    let long = root.join("long.npy");
    write_raw_npy(&long, "<f4", "(2, 2)", &[0u8; 64]);
    // Not an npy at all.
    let text = root.join("text.npy");
    std::fs::write(&text, "hello").unwrap();
    for (file, want) in [
        (&liar, "promises a (4000, 4000) array of 8-byte values"),
        (&long, "but the file holds"),
        (&text, "not an .npy file"),
    ] {
        let out = root.join("out");
        let o = ppwave(&[
            "run",
            "--velocity",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--velocity") && err.contains(want), "{err}");
        assert!(!out.exists());
    }
}

#[test]
fn text_inputs_must_be_utf8() {
    let root = scratch("inputs-utf8");
    std::fs::create_dir_all(&root).unwrap();
    let config = root.join("c.toml");
    std::fs::write(&config, b"nt = 10\n# caf\xe9\n").unwrap();
    let receivers = root.join("r.txt");
    std::fs::write(&receivers, b"10 10\n\xff\xfe\n").unwrap();
    for (flag, file) in [("--config", &config), ("--receiver-file", &receivers)] {
        let out = root.join("out");
        let o = run_bounded(&out, &[flag, file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(flag) && err.contains("not UTF-8") && err.contains("line 2"),
            "{err}"
        );
    }
}
