//! Messages and options: options that do not apply are refused, `RAYON_NUM_THREADS` is
//! warned about like `--threads`, and an error never shows the content of a file the user
//! did not name on the command line.

mod common;

use common::*;
use std::process::Command;

#[test]
fn ranks_per_shot_without_shots_is_refused() {
    assert_rejected(
        "ranks-per-shot",
        &["--ranks-per-shot", "2"],
        &["--ranks-per-shot", "--shots"],
    );
}

#[test]
fn rayon_num_threads_is_warned_about_like_threads() {
    let out = scratch("rayon-env");
    let o = Command::new(env!("CARGO_BIN_EXE_ppwave"))
        .arg("run")
        .args(SMALL)
        .args(["--nt", "2", "--out", out.to_str().unwrap()])
        .env("RAYON_NUM_THREADS", "1000")
        .output()
        .unwrap();
    assert_ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: RAYON_NUM_THREADS = 1000"), "{err}");
    assert!(read_json(&out.join("run.json"))["warnings"]
        .to_string()
        .contains("RAYON_NUM_THREADS"));
}

#[test]
fn a_file_named_by_a_config_is_not_echoed() {
    let dir = scratch("no-echo");
    std::fs::create_dir_all(&dir).unwrap();
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "10 10\nhunter2:x:0:0\n").unwrap();
    let config = dir.join("c.toml");
    std::fs::write(
        &config,
        format!("receiver-file = \"{}\"\n", secret.display()),
    )
    .unwrap();
    let out = dir.join("out");
    let o = run_small(&out, &["--config", config.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 2") && err.contains("--receiver-file"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    // Named on the command line, the line is shown (the user gave that file).
    let o = run_small(&out, &["--receiver-file", secret.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("hunter2"));
}
