//! `ppwave run` on bad input: every error names the flag, the value and the fix, exits 2 and writes
//! nothing.

mod common;

use clap::Parser;

use common::*;
use ppstencil::io;

#[test]
fn bad_input_is_rejected_naming_the_flag_and_writes_nothing() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("nz", &["--nz", "4"], &["--nz = 4", "at least 5"]),
        ("nx", &["--nx", "3"], &["--nx = 3", "at least 5"]),
        ("nz-negative", &["--nz", "-3"], &["--nz", "-3"]),
        ("nt", &["--nt", "0"], &["--nt = 0", "at least 1"]),
        ("dt-zero", &["--dt", "0"], &["--dt = 0", "greater than 0"]),
        ("dt-neg", &["--dt", "-1"], &["--dt = -1", "greater than 0"]),
        ("dt-nan", &["--dt", "nan"], &["--dt = NaN", "finite"]),
        ("dh-inf", &["--dh", "inf"], &["--dh = inf", "finite"]),
        ("dh-zero", &["--dh", "0"], &["--dh = 0"]),
        ("vmin", &["--vmin", "0"], &["--vmin = 0"]),
        ("fpeak", &["--fpeak", "-2"], &["--fpeak = -2"]),
        (
            "src-z-border",
            &["--src-z", "1"],
            &["--src-z = 1", "2 <= src-z < 38"],
        ),
        (
            "src-z-outside",
            &["--src-z", "40"],
            &["--src-z = 40", "< 38"],
        ),
        (
            "src-x-outside",
            &["--src-x", "48"],
            &["--src-x = 48", "2 <= src-x < 48"],
        ),
        (
            "layer-outside",
            &["--layer", "30:41:3000"],
            &["--layer = 30:41:3000", "Z1 <= nz = 40"],
        ),
        (
            "layer-empty",
            &["--layer", "30:30:3000"],
            &["--layer = 30:30:3000", "Z0 must be smaller"],
        ),
        (
            "layer-v0",
            &["--layer", "0:10:0"],
            &["--layer = 0:10:0", "greater than 0"],
        ),
        (
            "layer-nan",
            &["--layer", "0:10:nan"],
            &["--layer", "finite"],
        ),
        ("layer-format", &["--layer", "1:2"], &["--layer", "Z0:Z1:V"]),
        (
            "layer-word",
            &["--layer", "1:2:fast"],
            &["--layer", "Z0:Z1:V", "fast"],
        ),
        // CFL = 3000 * 0.01 / 10 = 3 > sqrt(3/8); largest stable dt = 0.6124 * 10 / 3000.
        (
            "cfl",
            &["--dt", "0.01"],
            &["--dt = 0.01", "0.6124", "use --dt <= 2.041241e-3"],
        ),
        (
            "threads-0",
            &["--threads", "0"],
            &["--threads = 0", "between 1 and 4096"],
        ),
        (
            "threads-big",
            &["--threads", "5000"],
            &["--threads = 5000", "4096"],
        ),
        (
            "threads-serial",
            &["--threads", "2", "--backend", "serial"],
            &["--threads", "rayon"],
        ),
        (
            "backend",
            &["--backend", "opencl"],
            &["--backend", "serial, rayon, cuda, hip"],
        ),
    ];
    for (name, extra, needles) in cases {
        assert_rejected(name, extra, needles);
    }
}

#[test]
fn the_default_model_and_source_fit_any_grid() {
    let out = scratch("default-layers");
    // No --layer, no --src-z/--src-x: the paper's layers and source scaled to the grid.
    let o = ppwave(&[
        "run",
        "--nz",
        "50",
        "--nx",
        "60",
        "--nt",
        "1",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_ok(&o);
    let j = read_json(&out.join("run.json"));
    // By hand: 750 * 50 / 1751 = 21.4, 1125 * 50 / 1751 = 32.1; 625 * 50 / 1751 = 17.8,
    // 2500 * 60 / 5001 = 29.99.
    assert_eq!(
        j["config"]["layer"],
        serde_json::json!(["21:32:3000", "32:50:4800"])
    );
    assert_eq!(
        (j["src_z"].clone(), j["src_x"].clone()),
        (17.into(), 29.into())
    );
    let model = j["model"].as_str().expect("model in words");
    assert!(
        model.contains("default") && model.contains("scaled to 50 rows"),
        "{model}"
    );
    // The issue's example, and the paper's grid still gets the paper's layers.
    let out = scratch("default-layers-401");
    assert_ok(&ppwave(&[
        "run",
        "--nz",
        "401",
        "--nx",
        "401",
        "--nt",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]));
    let cli = ppwave::cli::Cli::try_parse_from(["ppwave", "run"]).expect("parses");
    let ppwave::cli::Command::Run(args) = cli.command else {
        panic!("run")
    };
    assert_eq!(args.config(), ppstencil::WaveConfig::paper());
}

#[test]
fn a_grid_larger_than_memory_is_rejected_before_running() {
    let out = scratch("huge");
    // 10^6 x 10^6 points need 36 TB in f32: more than any test machine has.
    let o = ppwave(&[
        "run",
        "--nz",
        "1000000",
        "--nx",
        "1000000",
        "--nt",
        "1",
        "--src-z",
        "100",
        "--src-x",
        "100",
        "--layer",
        "0:10:1500",
        "--backend",
        "serial",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1000000 x 1000000 needs about") && err.contains("use a smaller grid"),
        "{err}"
    );
    assert!(!out.exists(), "no output");
}

#[test]
fn unwritable_out_is_rejected_before_running() {
    // A regular file where the directory should be, and a directory below a regular file.
    let file = scratch("out-is-a-file");
    std::fs::write(&file, b"keep me").expect("write");
    for out in [file.clone(), file.join("sub")] {
        let o = run_small(&out, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--out") && err.contains("out-is-a-file"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read(&file).expect("still there"), b"keep me");
}

/// The space order, the layer's width and the boundary kind.
#[test]
fn bad_orders_and_boundaries_are_rejected_before_running() {
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        (
            "order-odd",
            vec!["--space-order".into(), "3".into()],
            vec!["--space-order = 3", "even"],
        ),
        (
            "order-small",
            vec!["--space-order".into(), "0".into()],
            vec!["--space-order = 0", "2 to 16"],
        ),
        (
            "order-big",
            vec!["--space-order".into(), "18".into()],
            vec!["--space-order = 18", "2 to 16"],
        ),
        (
            "order-split",
            vec![
                "--space-order".into(),
                "6".into(),
                "--kernels".into(),
                "split".into(),
            ],
            vec!["--space-order = 6", "fused"],
        ),
        (
            "absorb-wide",
            vec!["--absorb".into(), "20".into()],
            vec!["--absorb = 20", "absorb <= 19"],
        ),
        (
            "pml-no-layer",
            vec!["--boundary".into(), "pml".into()],
            vec!["--boundary pml needs a layer", "--absorb N"],
        ),
        (
            "rigid-with-layer",
            vec![
                "--boundary".into(),
                "rigid".into(),
                "--absorb".into(),
                "8".into(),
            ],
            vec!["--boundary rigid has no layer", "drop --absorb"],
        ),
        (
            "boundary-kind",
            vec!["--boundary".into(), "cpml".into()],
            vec!["--boundary", "pml, sponge, rigid"],
        ),
    ];
    assert_all_rejected(&cases);
}

/// The PML's settings: only with a PML, each in its range, a layer wide enough.
#[test]
fn bad_pml_options_are_rejected_before_running() {
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        (
            "pml-r-sponge",
            vec![
                "--absorb".into(),
                "8".into(),
                "--boundary".into(),
                "sponge".into(),
                "--pml-r".into(),
                "0.01".into(),
            ],
            vec!["--pml-r applies only to a PML"],
        ),
        (
            "pml-r-one",
            vec!["--absorb".into(), "8".into(), "--pml-r".into(), "1".into()],
            vec!["--pml-r = 1", "between 0 and 1"],
        ),
        (
            "pml-r-nan",
            vec![
                "--absorb".into(),
                "8".into(),
                "--pml-r".into(),
                "NaN".into(),
            ],
            vec!["--pml-r = NaN", "between 0 and 1"],
        ),
        (
            "pml-degree",
            vec![
                "--absorb".into(),
                "8".into(),
                "--pml-degree".into(),
                "-2".into(),
            ],
            vec!["--pml-degree = -2", "from 1 to 8"],
        ),
        (
            "pml-alpha",
            vec![
                "--absorb".into(),
                "8".into(),
                "--pml-alpha".into(),
                "-1".into(),
            ],
            vec!["--pml-alpha = -1", "0 or more"],
        ),
        (
            "pml-thin",
            vec![
                "--absorb".into(),
                "2".into(),
                "--space-order".into(),
                "4".into(),
            ],
            vec!["--absorb = 2", "absorb >= 3"],
        ),
    ];
    assert_all_rejected(&cases);
}

/// Receiver lines and receiver files: outside the grid, malformed, missing.
#[test]
fn bad_receivers_are_rejected_before_running() {
    let dir = scratch("bad-receiver-files");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let at = |name: &str| dir.join(name).to_str().expect("utf-8").to_string();
    // A receiver file outside the grid, and one with a short line.
    std::fs::write(dir.join("rec.txt"), "1 1\n40 3\n").expect("write");
    std::fs::write(dir.join("rec-bad.txt"), "1 1\n2\n").expect("write");
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        (
            "rec-row",
            vec!["--receivers".into(), "40:0:10:1".into()],
            vec!["--receivers = 40:0:10:1", "Z < 40"],
        ),
        (
            "rec-col",
            vec!["--receivers".into(), "5:0:50:1".into()],
            vec!["--receivers = 5:0:50:1", "X1 < 50"],
        ),
        (
            "rec-format",
            vec!["--receivers".into(), "5:0:50".into()],
            vec!["--receivers", "Z:X0:X1:STEP"],
        ),
        (
            "rec-step",
            vec!["--receivers".into(), "5:0:10:0".into()],
            vec!["--receivers", "STEP must be at least 1"],
        ),
        (
            "rec-file-out",
            vec!["--receiver-file".into(), at("rec.txt")],
            vec!["--receiver-file", "(40, 3)", "outside the 40 x 50 grid"],
        ),
        (
            "rec-file-bad",
            vec!["--receiver-file".into(), at("rec-bad.txt")],
            vec!["--receiver-file", "line 2"],
        ),
        (
            "rec-file-missing",
            vec!["--receiver-file".into(), at("none.txt")],
            vec!["--receiver-file", "none.txt", "cannot read"],
        ),
    ];
    assert_all_rejected(&cases);
}

/// Velocity files: missing, 3D, integer, NaN, inf, zero, negative, of another shape than the grid.
#[test]
fn bad_velocity_files_are_rejected_before_running() {
    let dir = scratch("bad-velocity-files");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let at = |name: &str| dir.join(name).to_str().expect("utf-8").to_string();
    // Velocity files: 3D, integer, NaN, inf, zero, negative; one that fits only 40 x 50.
    write_raw_npy(&dir.join("v3d.npy"), "<f4", "(2, 3, 4)", &[0; 96]);
    write_raw_npy(&dir.join("vint.npy"), "<i4", "(40, 50)", &[0; 8000]);
    let with = |bad: f64| {
        let mut m = gradient_model();
        m[(7, 9)] = bad;
        m
    };
    io::write_npy(dir.join("vnan.npy"), &with(f64::NAN)).expect("write");
    io::write_npy(dir.join("vinf.npy"), &with(f64::INFINITY)).expect("write");
    io::write_npy(dir.join("vzero.npy"), &with(0.0)).expect("write");
    io::write_npy(dir.join("vneg.npy"), &with(-5.0)).expect("write");
    io::write_npy(dir.join("vok.npy"), &gradient_model()).expect("write");
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        (
            "v-missing",
            vec!["--velocity".into(), at("none.npy")],
            vec!["--velocity", "none.npy", "no such file"],
        ),
        (
            "v-3d",
            vec!["--velocity".into(), at("v3d.npy")],
            vec!["--velocity", "v3d.npy", "2D"],
        ),
        (
            "v-int",
            vec!["--velocity".into(), at("vint.npy")],
            vec!["--velocity", "vint.npy", "float"],
        ),
        (
            "v-nan",
            vec!["--velocity".into(), at("vnan.npy")],
            vec!["vnan.npy", "velocity = NaN", "row 7, column 9"],
        ),
        (
            "v-inf",
            vec!["--velocity".into(), at("vinf.npy")],
            vec!["vinf.npy", "velocity = inf"],
        ),
        (
            "v-zero",
            vec!["--velocity".into(), at("vzero.npy")],
            vec!["vzero.npy", "velocity = 0", "greater than 0"],
        ),
        (
            "v-neg",
            vec!["--velocity".into(), at("vneg.npy")],
            vec!["vneg.npy", "velocity = -5"],
        ),
        (
            "v-shape",
            vec![
                "--velocity".into(),
                at("vok.npy"),
                "--nx".into(),
                "60".into(),
            ],
            vec!["--nx = 60", "40 x 50", "drop --nx"],
        ),
    ];
    assert_all_rejected(&cases);
}

/// The snapshot interval, the precision and the source mode.
#[test]
fn bad_output_options_are_rejected_before_running() {
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        (
            "snap-0",
            vec!["--snapshot-every".into(), "0".into()],
            vec!["--snapshot-every = 0"],
        ),
        (
            "precision",
            vec!["--precision".into(), "f16".into()],
            vec!["--precision", "f32, f64"],
        ),
        (
            "source-mode",
            vec!["--source-mode".into(), "inject".into()],
            vec!["--source-mode", "set, add"],
        ),
    ];
    assert_all_rejected(&cases);
}

/// Runs every case (name, extra flags, words the error must hold) through [`assert_rejected`].
fn assert_all_rejected(cases: &[(&str, Vec<String>, Vec<&str>)]) {
    for (name, extra, needles) in cases {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        assert_rejected(name, &extra, needles);
    }
}

/// `PPSTENCIL_LLC` (the last-level cache the temporal blocking and the row loops are sized
/// for): each kind of bad value is refused by `run` and `bench` with the variable, the value
/// and the form expected, and `run` writes nothing; a good value is used and recorded.
#[test]
fn the_cache_size_override_is_checked_and_recorded() {
    let with_llc = |value: &str, args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ppwave"))
            .env("PPSTENCIL_LLC", value)
            .args(args)
            .output()
            .expect("ppwave starts")
    };
    for (name, value) in [
        ("word", "lots"),
        ("zero", "0"),
        ("negative", "-32M"),
        ("fraction", "1.5M"),
        ("unit", "32MB"),
        ("overflow", "99999999999999999999G"),
    ] {
        let out = scratch(&format!("llc-{name}"));
        let mut args = vec!["run"];
        args.extend_from_slice(SMALL);
        args.extend_from_slice(&["--out", out.to_str().expect("utf-8")]);
        let bench = ["bench", "--nz", "24", "--nx", "24", "--repeat", "1"];
        for (o, what) in [
            (with_llc(value, &args), "run"),
            (with_llc(value, &bench), "bench"),
        ] {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{what} {value}: exits 2: {err}");
            for needle in [
                format!("invalid PPSTENCIL_LLC = \"{value}\""),
                "e.g. PPSTENCIL_LLC=32M".to_string(),
            ] {
                assert!(err.contains(&needle), "{what} {value}: `{needle}` in {err}");
            }
            assert!(!err.contains("panicked"), "{err}");
        }
        assert!(!out.exists(), "{value}: a refused run writes nothing");
    }
    // 1 MiB: the paper-sized rule then finds the 40 x 50 grid's fields (32 kB) in half of it
    // and leaves it unblocked, and run.json says which cache that was.
    let out = scratch("llc-good");
    let mut args = vec!["run"];
    args.extend_from_slice(SMALL);
    args.extend_from_slice(&["--out", out.to_str().expect("utf-8")]);
    let o = with_llc("1M", &args);
    assert_ok(&o);
    let blocking = &read_json(&out.join("run.json"))["time_blocking"];
    assert_eq!(blocking["llc_bytes"], 1 << 20, "{blocking}");
    assert_eq!(blocking["llc_source"], "set by PPSTENCIL_LLC", "{blocking}");
    let what = blocking["what"].as_str().expect("what");
    assert!(what.contains("1.0 MiB"), "{what}");
}
