//! End-to-end tests of the `ppwave` binary on small grids.

use ppstencil::wave::Layer;
use ppstencil::{Kernels, Rayon, Serial, WaveConfig, WaveSimulator};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ppwave(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ppwave"))
        .args(args)
        .output()
        .expect("ppwave starts")
}

/// A fresh, empty scratch path for one test (not created).
fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    if p.is_dir() {
        std::fs::remove_dir_all(&p).expect("clean scratch dir");
    } else if p.exists() {
        std::fs::remove_file(&p).expect("clean scratch file");
    }
    p
}

/// The small problem every test runs: 40 x 50, 30 steps, one layer.
const SMALL: &[&str] = &[
    "--nz",
    "40",
    "--nx",
    "50",
    "--nt",
    "30",
    "--dt",
    "0.001",
    "--dh",
    "10",
    "--src-z",
    "20",
    "--src-x",
    "25",
    "--fpeak",
    "25",
    "--vmin",
    "2000",
    "--layer",
    "30:40:3000",
];

fn small_config(kernels: Kernels) -> WaveConfig {
    // `..paper()` keeps this compiling when WaveConfig gains fields.
    #[allow(clippy::needless_update)]
    WaveConfig {
        nz: 40,
        nx: 50,
        nt: 30,
        dt: 0.001,
        dh: 10.0,
        src_z: 20,
        src_x: 25,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![Layer {
            z0: 30,
            z1: 40,
            velocity: 3000.0,
        }],
        kernels,
        ..WaveConfig::paper()
    }
}

fn run_small(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run"];
    args.extend_from_slice(SMALL);
    args.extend_from_slice(&["--out", out.to_str().expect("utf-8 path")]);
    args.extend_from_slice(extra);
    ppwave(&args)
}

/// Parses an npy file by hand (independently of `ppstencil::io`): returns the header dict text
/// and the float32 data.
fn parse_npy_f32(path: &Path) -> (String, Vec<f32>) {
    let b = std::fs::read(path).expect("npy exists");
    assert_eq!(&b[..6], b"\x93NUMPY", "magic");
    assert_eq!((b[6], b[7]), (1, 0), "version 1.0");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    assert_eq!((10 + hlen) % 64, 0, "data aligned to 64 bytes");
    let header = String::from_utf8(b[10..10 + hlen].to_vec()).expect("ascii header");
    assert!(header.ends_with('\n'));
    let data = b[10 + hlen..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (header, data)
}

fn assert_npy_header(header: &str, nz: usize, nx: usize) {
    assert!(header.contains("'descr': '<f4'"), "{header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    assert!(
        header.contains(&format!("'shape': ({nz}, {nx})")),
        "{header}"
    );
}

fn library_wavefield(config: WaveConfig) -> Vec<f32> {
    let mut sim = WaveSimulator::<Serial>::with_config(Serial, config);
    sim.run().expect("library run");
    sim.wavefield_host().expect("copy").into_vec()
}

#[test]
fn small_run_writes_the_four_files_and_matches_the_library() {
    let out = scratch("small-run");
    let o = run_small(&out, &["--threads", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let mut names: Vec<String> = std::fs::read_dir(&out)
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["run.json", "velocity.npy", "wavefield.npy", "wavefield.png"]
    );

    // The final wavefield equals the library's serial run of the same problem.
    let (header, p) = parse_npy_f32(&out.join("wavefield.npy"));
    assert_npy_header(&header, 40, 50);
    let expect = library_wavefield(small_config(Kernels::Fused));
    assert!(expect.iter().any(|v| v.abs() > 1e-3), "the wave propagated");
    assert_eq!(p, expect);

    // The velocity model: 2000 m/s above row 30, 3000 m/s from row 30 down.
    let (header, v) = parse_npy_f32(&out.join("velocity.npy"));
    assert_npy_header(&header, 40, 50);
    for (k, &x) in v.iter().enumerate() {
        assert_eq!(x, if k / 50 < 30 { 2000.0 } else { 3000.0 }, "point {k}");
    }

    // The PNG signature and its IHDR: width = nx, height = nz, 8-bit RGB.
    let png = std::fs::read(out.join("wavefield.png")).expect("png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(u32::from_be_bytes([png[16], png[17], png[18], png[19]]), 50);
    assert_eq!(u32::from_be_bytes([png[20], png[21], png[22], png[23]]), 40);
    assert_eq!((png[24], png[25]), (8, 2), "8-bit RGB");

    // run.json holds the parameters and the stability numbers.
    let text = std::fs::read_to_string(out.join("run.json")).expect("run.json");
    let j: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(j["nz"], 40);
    assert_eq!(j["nx"], 50);
    assert_eq!(j["nt"], 30);
    assert_eq!(j["steps"], 30);
    assert_eq!(j["dt"], 0.001);
    assert_eq!(j["dh"], 10.0);
    assert_eq!(
        (j["src_z"].clone(), j["src_x"].clone()),
        (20.into(), 25.into())
    );
    assert_eq!(j["fpeak"], 25.0);
    assert_eq!(j["vmin"], 2000.0);
    assert_eq!(j["layers"][0]["z0"], 30);
    assert_eq!(j["layers"][0]["z1"], 40);
    assert_eq!(j["layers"][0]["velocity"], 3000.0);
    assert_eq!(j["backend"], "rayon");
    assert_eq!(j["kernels"], "fused");
    assert_eq!(j["threads"], 2);
    // CFL = 3000 * 0.001 / 10; limit 2 / sqrt(2 (5/2 + 2 (4/3 + 1/12))) = sqrt(3/8).
    let cfl = j["cfl"].as_f64().expect("cfl");
    let limit = j["cfl_limit"].as_f64().expect("limit");
    assert!((cfl - 0.3).abs() < 1e-12, "{cfl}");
    assert!((limit - (3.0f64 / 8.0).sqrt()).abs() < 1e-12, "{limit}");
    assert!(j["wall_time_s"].as_f64().expect("wall") > 0.0);
    assert!(j["mpoints_per_s"].as_f64().expect("rate") > 0.0);
    assert!(j["ppstencil_version"].is_string());
}

#[test]
fn serial_split_run_matches_the_library_rayon_fused_run() {
    let out = scratch("serial-split");
    let o = run_small(&out, &["--backend", "serial", "--kernels", "split"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, p) = parse_npy_f32(&out.join("wavefield.npy"));
    let mut sim = WaveSimulator::<Rayon>::with_config(Rayon::new(), small_config(Kernels::Fused));
    sim.run().expect("library run");
    assert_eq!(p, sim.wavefield_host().expect("copy").into_vec());
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).expect("json"))
            .expect("valid JSON");
    assert_eq!(
        (j["backend"].clone(), j["kernels"].clone()),
        ("serial".into(), "split".into())
    );
}

/// Runs with `extra` appended (later flags override SMALL's), expects failure with a message
/// containing every needle, and no output directory.
fn assert_rejected(name: &str, extra: &[&str], needles: &[&str]) {
    let out = scratch(&format!("bad-{name}"));
    let o = run_small(&out, extra);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{extra:?} must fail");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{extra:?}: bad input exits 2; {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{extra:?}: `{err}` should mention `{n}`");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "{extra:?} must leave no output");
}

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
fn default_layers_on_a_small_grid_say_how_to_fix_it() {
    let out = scratch("default-layers");
    let o = ppwave(&[
        "run",
        "--nz",
        "50",
        "--nx",
        "50",
        "--src-z",
        "20",
        "--src-x",
        "20",
        "--nt",
        "1",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--layer Z0:Z1:V") && err.contains("Z1 <= nz = 50"),
        "{err}"
    );
    assert!(!out.exists());
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

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_backend_without_the_feature_names_the_feature() {
    let out = scratch("cuda");
    let o = run_small(&out, &["--backend", "cuda"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("CUDA") && err.contains("--features cuda"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "no output");
}

#[cfg(not(feature = "hip"))]
#[test]
fn hip_backend_without_the_feature_names_the_feature() {
    let out = scratch("hip");
    let o = run_small(&out, &["--backend", "hip"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("--features hip"), "{err}");
    assert!(!out.exists(), "no output");
}

/// With a GPU feature on, `--backend cuda|hip` either runs and agrees with the library's
/// serial run, or (no device, as in CI) fails cleanly naming the missing device.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn gpu_backend_runs_or_names_the_missing_device(backend: &str, device: &str) {
    let out = scratch(backend);
    let o = run_small(&out, &["--backend", backend]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if o.status.success() {
        let (_, got) = parse_npy_f32(&out.join("wavefield.npy"));
        let want = library_wavefield(small_config(Kernels::Fused));
        let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5 * scale, "{backend}: {g} vs {w}");
        }
    } else {
        assert!(err.contains(&format!("no {device} device")), "{err}");
        assert!(!out.exists(), "no output on failure");
    }
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_backend_runs_or_names_the_missing_device() {
    gpu_backend_runs_or_names_the_missing_device("cuda", "CUDA");
}

#[cfg(feature = "hip")]
#[test]
fn hip_backend_runs_or_names_the_missing_device() {
    gpu_backend_runs_or_names_the_missing_device("hip", "HIP");
}

#[test]
fn gen_prints_the_generated_kernels() {
    let o = ppwave(&["gen", "--backend", "serial"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for info in ppstencil::kernels::ALL {
        assert!(
            text.contains(&format!("===== {} (serial)", info.name)),
            "{}",
            info.name
        );
    }
    // The generated row loop of fd_pxx: a loop over the row's blocks of columns, the
    // 5-point weights.
    assert!(text.contains("for i in cols {"), "{text}");
    assert!(text.contains("1.3333333333333333"), "{text}");

    let o = ppwave(&["gen", "--backend", "dsl", "--stencil", "fd_time"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("fn fd_time(pnew: out"), "{text}");
    assert!(!text.contains("fd_pxx"), "only the chosen stencil: {text}");
}

#[test]
fn gen_rejects_unknown_stencils_and_missing_backends() {
    let o = ppwave(&["gen", "--stencil", "fd_nope"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fd_nope") && err.contains("fd_pxx, fd_pzz"),
        "{err}"
    );

    for backend in ["cuda", "hip"] {
        let o = ppwave(&["gen", "--backend", backend, "--stencil", "fd_pxx"]);
        let embedded = ppstencil::kernels::ALL[1].source(backend).is_some();
        if embedded {
            assert!(o.status.success());
            assert!(String::from_utf8_lossy(&o.stdout).contains("fd_pxx"));
        } else {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success());
            assert!(
                err.contains(&format!("no {backend} source is embedded")),
                "{err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

#[test]
fn bench_placeholder_or_real_never_panics_on_help() {
    let o = ppwave(&["bench", "--help"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
