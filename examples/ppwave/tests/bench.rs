//! `ppwave bench` end to end on a tiny grid: the report's JSON keys, the C reference (or the
//! note that it was not built) and the bad-input errors.

mod common;

use common::ppwave;

/// `ppwave bench` on a 24 x 40 grid, one timed run, one thread, 1 MiB STREAM arrays.
fn tiny_bench(extra: &[&str]) -> std::process::Output {
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
    ];
    args.extend_from_slice(extra);
    ppwave(&args)
}

#[test]
fn tiny_bench_writes_the_roofline_json_and_plot() {
    let dir = std::env::temp_dir().join(format!("ppwave-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("bench.json");
    let svg = dir.join("roofline.svg");
    let out = tiny_bench(&[
        "--json",
        json.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for text in [
        "triad GB/s",
        "fd_pxx",
        "fd_pzz",
        "fd_time",
        "fd_step_4",
        "Gpoints/s",
    ] {
        assert!(stdout.contains(text), "missing {text}:\n{stdout}");
    }
    assert!(!stdout.contains("add_source"), "{stdout}");
    // Without a GPU build the device backends are reported and skipped, not fatal.
    assert!(stdout.contains("cuda: skipped"), "{stdout}");

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["grid"]["nz"], 24);
    assert_eq!(v["grid"]["nx"], 40);
    assert!(v["cache"]["llc_bytes"].as_u64().unwrap() > 0);
    assert!(v["bandwidth"][0]["triad_gbs"].as_f64().unwrap() > 0.0);
    assert!(v["bandwidth_bytes_counted"]
        .as_str()
        .unwrap()
        .contains("write-allocate"));
    let kernels = v["kernels"].as_array().unwrap();
    let row = |k: &str, b: &str| {
        kernels
            .iter()
            .find(|r| r["kernel"] == k && r["backend"] == b)
            .unwrap_or_else(|| panic!("no {k} on {b} in {kernels:?}"))
    };
    // Compulsory bytes from the IR: fd_pxx reads p and writes pxx (2 x 4 B); fd_time reads
    // five fields and writes one (6 x 4 B); the fused step reads p, pold, kv2, writes pnew.
    assert_eq!(row("fd_pxx", "serial")["bytes_per_point"], 8);
    assert_eq!(row("fd_time", "rayon")["bytes_per_point"], 24);
    assert_eq!(row("fd_step_4", "serial")["bytes_per_point"], 16);
    // Points are the interior: (24 - 4) x (40 - 4) for the radius-2 kernels.
    assert_eq!(row("fd_pzz", "serial")["points"], 20 * 36);
    assert_eq!(row("fd_time", "serial")["points"], 24 * 40);
    for r in kernels {
        for key in ["median_s", "gbs", "gflops", "arithmetic_intensity"] {
            assert!(r[key].as_f64().unwrap() > 0.0, "{key} in {r}");
        }
        // GB/s is the IR's bytes over the median time.
        let gbs = r["points"].as_f64().unwrap() * r["bytes_per_point"].as_f64().unwrap()
            / r["median_s"].as_f64().unwrap()
            / 1e9;
        assert!(
            (gbs - r["gbs"].as_f64().unwrap()).abs() <= 1e-9 * gbs.max(1.0),
            "{r}"
        );
    }
    let steps = v["steps"].as_array().unwrap();
    assert!(steps
        .iter()
        .any(|s| s["variant"] == "split" && s["backend"] == "serial"));
    assert!(steps
        .iter()
        .any(|s| s["variant"] == "fused" && s["backend"] == "rayon"));
    assert!(v["fused_over_split"]["serial"].as_f64().unwrap() > 0.0);
    let skipped = v["skipped"].as_array().unwrap();
    assert!(skipped.iter().any(|s| s["backend"] == "cuda"));
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.starts_with("<svg") && plot.contains("fd_step_4"),
        "{plot}"
    );
    // The same picture as PNG: signature and the figure's size in the header.
    let png = dir.join("roofline.png");
    let out = tiny_bench(&["--backend", "serial", "--plot", png.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((w, h), ppwave::figures::roofline::ROOFLINE_SIZE);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_a_clear_error() {
    let cases: &[(&[&str], &str)] = &[
        (&["bench", "--nz", "4", "--nx", "40"], "--nz 4 is too small"),
        (&["bench", "--nx", "3"], "use at least 5"),
        (
            &["bench", "--nz", "24", "--nx", "24", "--repeat", "0"],
            "--repeat 0",
        ),
        (
            &["bench", "--nz", "24", "--nx", "24", "--threads", "100000"],
            "hardware threads",
        ),
        (
            &["bench", "--nz", "24", "--nx", "24", "--threads", "0"],
            "use 1 to",
        ),
        (
            &["bench", "--nz", "24", "--nx", "24", "--backend", "tpu"],
            "unknown backend",
        ),
        (
            &["bench", "--nz", "24", "--nx", "24", "--chunk-rows", "0"],
            "--chunk-rows 0",
        ),
        (
            &[
                "bench",
                "--nz",
                "24",
                "--nx",
                "24",
                "--plot",
                "roofline.jpg",
            ],
            "ending in .svg or .png",
        ),
    ];
    let dir = std::env::temp_dir();
    let dir = dir.to_str().expect("utf-8");
    let missing = format!("{dir}/ppwave-no-such-dir-{}/bench.json", std::process::id());
    let missing_svg = missing.replace(".json", ".svg");
    let more: Vec<(Vec<&str>, &str)> = vec![
        // Output paths are checked before the benchmark (which would take minutes here).
        (vec!["bench", "--json", &missing], "does not exist"),
        (vec!["bench", "--json", dir], "is a directory"),
        (vec!["bench", "--plot", &missing_svg], "does not exist"),
        // Memory: checked against what the machine has, before allocating.
        (
            vec!["bench", "--stream-mib", "100000000"],
            "STREAM arrays need 300000000 MiB",
        ),
        (
            vec!["bench", "--nz", "1000000", "--nx", "1000000"],
            "memory is available",
        ),
    ];
    let cases = cases
        .iter()
        .map(|(a, e)| (a.to_vec(), *e))
        .chain(more)
        .collect::<Vec<_>>();
    for (args, expected) in &cases {
        let t0 = std::time::Instant::now();
        let out = ppwave(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: bad input exits 2: {stderr}"
        );
        assert!(
            t0.elapsed().as_secs() < 10,
            "{args:?}: checked before running"
        );
        assert!(
            stderr.contains(expected),
            "{args:?}: expected `{expected}` in {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn bench_placeholder_or_real_never_panics_on_help() {
    let o = ppwave(&["bench", "--help"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The C reference (feature `c-reference`, on by default) is measured beside the generated
/// kernels, and gives the same bytes per point as the IR's fused step; when it was not built,
/// the report says so (stdout and JSON) and names the fix.
#[test]
fn the_c_reference_is_measured_or_the_report_says_how_to_build_it() {
    let dir = std::env::temp_dir().join(format!("ppwave-bench-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("bench.json");
    let out = tiny_bench(&["--backend", "c", "--json", json.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c_rows: Vec<&serde_json::Value> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["backend"] == "c-openmp/1")
        .collect();
    let skipped = v["skipped"].as_array().unwrap();
    let c_skipped = skipped.iter().find(|s| s["backend"] == "c");
    // Without a C compiler the feature's build falls back to "not built" as well.
    let fix = if cfg!(feature = "c-reference") {
        "install gcc or clang"
    } else {
        "--features c-reference"
    };
    match (c_rows.as_slice(), c_skipped) {
        // Measured: only with the feature.
        ([row], None) if cfg!(feature = "c-reference") => {
            assert_eq!(row["kernel"], "fd_step_4");
            assert_eq!(row["bytes_per_point"], 16);
        }
        ([], Some(s)) => {
            let why = s["reason"].as_str().unwrap();
            assert!(
                why.contains("C reference was not built") && why.contains(fix),
                "{why}"
            );
            assert!(
                stdout.contains("c: skipped: the C reference was not built"),
                "{stdout}"
            );
            assert!(stdout.contains(fix), "{stdout}");
        }
        other => panic!("the C reference is neither measured nor skipped: {other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `ppwave bench --ny`: the 3D step blocked in bands of z-planes (and tiles of y) beside the
/// single step (both host backends, the plan in the JSON); `auto` on a grid that fits in the cache
/// measures no blocked step and says why.
#[test]
fn the_3d_bench_reports_the_blocked_step_beside_the_single_one() {
    let dir = std::env::temp_dir().join(format!("ppwave-bench3d-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("b.json");
    let grid = ["--ny", "20", "--space-order", "4"];
    let run = |tb: &str| {
        let mut args = grid.to_vec();
        args.extend_from_slice(&["--backend", "serial,rayon", "--time-block", tb]);
        // The same file each round: replaced on purpose.
        args.extend_from_slice(&["--json", json.to_str().unwrap(), "--overwrite"]);
        let out = tiny_bench(&args);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (text, v)
    };
    let (text, v) = run("3:5");
    assert!(text.contains("bands of 5 z-planes"), "{text}");
    let steps = v["steps"].as_array().unwrap();
    for backend in ["serial", "rayon"] {
        let blocked = steps
            .iter()
            .find(|s| s["backend"] == backend && s["variant"] == "blocked")
            .unwrap_or_else(|| panic!("{backend} blocked: {v}"));
        assert_eq!(blocked["time_block"]["depth"], 3);
        assert_eq!(blocked["time_block"]["band_planes"], 5);
        assert!(blocked["median_s"].as_f64().unwrap() > 0.0);
        assert!(steps
            .iter()
            .any(|s| s["backend"] == backend && s["variant"] == "fused"));
    }
    assert!(v["blocked_over_fused"]["serial/1"].as_f64().unwrap() > 0.0);
    // Tiles of y: recorded in the text and the JSON.
    let (text, v) = run("3:5x4");
    assert!(text.contains("tiles of 4 y-rows"), "{text}");
    let blocked = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["variant"] == "blocked")
        .unwrap_or_else(|| panic!("blocked: {v}"));
    assert_eq!(blocked["time_block"]["tile"], 4);
    let (text, v) = run("auto");
    assert!(text.contains("blocked step not measured"), "{text}");
    assert!(text.contains("fit in half the last-level cache"), "{text}");
    assert!(v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["variant"] == "fused"));
    std::fs::remove_dir_all(&dir).ok();
}
