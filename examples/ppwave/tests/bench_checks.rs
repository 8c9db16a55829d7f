//! `ppwave bench` refuses, before anything runs (exit 2), a `--time-block` the grid cannot
//! take (2D and 3D), and an existing `--json` or `--plot` file unless `--overwrite` is given.

mod common;

use common::ppwave;
use std::time::Instant;

/// The bench's tiny problem with `extra` appended.
fn bench(extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "bench",
        "--nz",
        "24",
        "--nx",
        "40",
        "--repeat",
        "1",
        "--threads",
        "1",
        "--stream-mib",
        "1",
        "--backend",
        "serial",
    ];
    args.extend_from_slice(extra);
    ppwave(&args)
}

#[test]
fn an_invalid_time_block_is_refused_before_anything_runs() {
    for extra in [
        &["--time-block", "2:1"][..],
        &["--time-block", "2:1", "--ny", "20", "--space-order", "4"][..],
    ] {
        let t0 = Instant::now();
        let o = bench(extra);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {text}");
        assert!(text.contains("--time-block 2:1"), "{extra:?}: {text}");
        assert!(
            !text.contains("Memory bandwidth") && !text.contains("ppwave bench:"),
            "{extra:?}: nothing measured: {text}"
        );
        assert!(t0.elapsed().as_secs() < 30);
    }
}

#[test]
fn an_existing_json_file_is_replaced_only_with_overwrite() {
    let dir = std::env::temp_dir().join(format!("ppwave-bench-checks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("mine.json");
    std::fs::write(&json, "my notes").unwrap();
    let path = json.to_str().unwrap();
    let o = bench(&["--json", path, "--time-block", "off"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--json") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read(&json).unwrap(), b"my notes");
    let o = bench(&["--json", path, "--time-block", "off", "--overwrite"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v.is_object());
    std::fs::remove_dir_all(&dir).unwrap();
}
