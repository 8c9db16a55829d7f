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
    assert!(text.contains("for cols in pxx.blocks() {"), "{text}");
    assert!(text.contains("for i in 0..pxx.len() {"), "{text}");
    assert!(text.contains("1.3333333333333333"), "{text}");

    let o = ppwave(&["gen", "--backend", "dsl", "--stencil", "fd_time"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("fn fd_time(pnew: out"), "{text}");
    assert!(!text.contains("fd_pxx"), "only the chosen stencil: {text}");
}

#[test]
fn gen_prints_the_code_of_a_users_stencil_file() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/stencils/heat.rs");
    for (backend, needles) in [
        (
            "serial",
            &[
                "impl HeatStep",
                "unew[i] = u__0_0[i]",
                "u__m1_0[i] + u__1_0[i]",
            ][..],
        ),
        (
            "cuda",
            &["__global__ void heat_step_f32(", "u_[i - nx]"][..],
        ),
        (
            "hip",
            &["__global__ void heat_step_f64(", "hip_runtime.h"][..],
        ),
        (
            "dsl",
            &["pub fn heat_step(unew: out, u: in, alpha: real)"][..],
        ),
    ] {
        let o = ppwave(&["gen", "--file", file, "--backend", backend]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(text.contains("===== heat_step"), "{text}");
        for n in needles {
            assert!(text.contains(n), "{backend}: missing `{n}` in {text}");
        }
    }

    let dir = scratch("gen-file");
    std::fs::create_dir_all(&dir).expect("dir");
    let bad = dir.join("bad.rs");
    std::fs::write(
        &bad,
        "ppstencil::stencil! {\n    fn f(o: out, p: in) {\n        o[0, 0] = q[0, 0];\n    }\n}\n",
    )
    .expect("write");
    let none = dir.join("none.rs");
    std::fs::write(&none, "fn main() {}\n").expect("write");
    let missing = dir.join("missing.rs");
    for (path, needle) in [
        (
            &bad,
            "line 3, column 19: invalid stencil: `q` is not declared",
        ),
        (&none, "no `stencil! { ... }` invocation found"),
        (&missing, "no such file"),
    ] {
        let o = ppwave(&["gen", "--file", path.to_str().expect("utf-8")]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(needle), "`{needle}` not in {err}");
    }
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

// ---------------------------------------------------------------------------------------
// Phase 2 of the solver: every option of `ppwave run` beyond the paper's.
// ---------------------------------------------------------------------------------------

use ppstencil::model::VelocityModel;
use ppstencil::receivers::ReceiverLine;
use ppstencil::wave::SourceMode;
use ppstencil::{io, HostField};

/// Parses an npy file by hand: the header dict text and the data as f64 (from `<f4` or
/// `<f8`, per the header).
fn parse_npy(path: &Path) -> (String, Vec<f64>) {
    let b = std::fs::read(path).expect("npy exists");
    assert_eq!(&b[..6], b"\x93NUMPY", "magic");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = String::from_utf8(b[10..10 + hlen].to_vec()).expect("ascii header");
    let data = &b[10 + hlen..];
    let values = if header.contains("'<f8'") {
        data.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    } else {
        assert!(header.contains("'<f4'"), "{header}");
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")) as f64)
            .collect()
    };
    (header, values)
}

/// Writes an npy file by hand (any dtype and shape text), to feed bad models to ppwave.
fn write_raw_npy(path: &Path, descr: &str, shape: &str, data: &[u8]) {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).expect("write npy");
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("run.json")).expect("valid JSON")
}

fn png_size(path: &Path) -> (u32, u32, u8) {
    let png = std::fs::read(path).expect("png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    (w, h, png[25])
}

fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn library_run<T: ppstencil::Real>(config: WaveConfig) -> WaveSimulator<Serial, T> {
    let mut sim = WaveSimulator::<Serial, T>::with_config(Serial, config);
    sim.run().expect("library run");
    sim
}

fn as_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

#[test]
fn space_order_8_matches_the_library_and_uses_its_own_cfl_limit() {
    let out = scratch("order8");
    assert_ok(&run_small(&out, &["--space-order", "8"]));
    let (header, p) = parse_npy(&out.join("wavefield.npy"));
    assert_npy_header(&header, 40, 50);
    let want = library_run::<f32>(WaveConfig {
        space_order: 8,
        ..small_config(Kernels::Fused)
    });
    let want = want.wavefield_host().expect("copy").into_vec();
    assert_eq!(p, as_f64(&want));
    // Order 4 and order 8 differ (a different stencil really ran).
    let (_, p4) = parse_npy(&out_of_default_run());
    assert_ne!(p, p4);

    // The order-8 limit 2/sqrt(2 Σ|w|) from the weights -205/72, 8/5, -1/5, 8/315, -1/560
    // (Fornberg's table): about 0.5546.
    let sum = 205.0 / 72.0 + 2.0 * (8.0 / 5.0 + 1.0 / 5.0 + 8.0 / 315.0 + 1.0 / 560.0);
    let limit8 = 2.0 / (2.0f64 * sum).sqrt();
    let j = read_json(&out.join("run.json"));
    assert!((j["cfl_limit"].as_f64().expect("limit") - limit8).abs() < 1e-12);
    assert_eq!(j["space_order"], 8);
    assert_eq!(j["config"]["space-order"], 8);

    // dt = 0.0019 gives CFL 3000 * 0.0019 / 10 = 0.57: stable at order 4 (0.612), not at 8.
    let stable4 = scratch("order4-dt");
    assert_ok(&run_small(&stable4, &["--dt", "0.0019", "--nt", "2"]));
    let dt_max = format!("{:.6e}", limit8 * 10.0 / 3000.0);
    assert_rejected(
        "order8-cfl",
        &["--dt", "0.0019", "--space-order", "8"],
        &["--dt = 0.0019", "order-8", &format!("use --dt <= {dt_max}")],
    );
}

/// The wavefield of the SMALL problem with default options.
fn out_of_default_run() -> PathBuf {
    let out = scratch("default-small");
    assert_ok(&run_small(&out, &[]));
    out.join("wavefield.npy")
}

#[test]
fn absorbing_layer_removes_most_of_the_boundary_reflection() {
    // 60 x 60 cells of 10 m, 2000 m/s, 25 Hz (80 m = 8 cells per wavelength), source in the
    // middle; after 0.3 s the direct wave has left the grid and only reflections remain.
    let energy = |absorb: &str| {
        let out = scratch(&format!("absorb-{absorb}"));
        let o = ppwave(&[
            "run",
            "--nz",
            "60",
            "--nx",
            "60",
            "--nt",
            "150",
            "--dt",
            "0.002",
            "--dh",
            "10",
            "--src-z",
            "30",
            "--src-x",
            "30",
            "--fpeak",
            "25",
            "--vmin",
            "2000",
            "--layer",
            "0:60:2000",
            "--source-mode",
            "add",
            "--absorb",
            absorb,
            "--backend",
            "serial",
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        assert_ok(&o);
        assert_eq!(
            read_json(&out.join("run.json"))["absorb"],
            absorb.parse::<u32>().expect("n")
        );
        let (_, p) = parse_npy(&out.join("wavefield.npy"));
        p.iter().map(|v| v * v).sum::<f64>()
    };
    let rigid = energy("0");
    let absorbing = energy("16");
    assert!(rigid > 0.0);
    assert!(
        absorbing < 0.05 * rigid,
        "absorbing layer left {absorbing:e} of {rigid:e}"
    );
}

#[test]
fn additive_source_with_a_delay_matches_the_library() {
    let out = scratch("add-source");
    assert_ok(&run_small(
        &out,
        &["--source-mode", "add", "--source-delay", "0.01"],
    ));
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    let want = library_run::<f32>(WaveConfig {
        source_mode: SourceMode::Add,
        source_delay: Some(0.01),
        ..small_config(Kernels::Fused)
    });
    assert_eq!(p, as_f64(&want.wavefield_host().expect("copy").into_vec()));
    let j = read_json(&out.join("run.json"));
    assert_eq!(
        (j["source_mode"].clone(), j["source_delay"].clone()),
        ("add".into(), 0.01.into())
    );

    // The default delay is 1.5 / fpeak = 0.06 s, written into the effective config.
    let out = scratch("add-source-default");
    assert_ok(&run_small(&out, &["--source-mode", "add"]));
    let j = read_json(&out.join("run.json"));
    assert_eq!(j["config"]["source-delay"], 0.06);
    // A delay in set mode is a mistake the run names.
    assert_rejected(
        "delay-set",
        &["--source-delay", "0.01"],
        &["--source-delay", "--source-mode add"],
    );
    assert_rejected(
        "delay-neg",
        &["--source-mode", "add", "--source-delay", "-1"],
        &["--source-delay = -1"],
    );
}

#[test]
fn receivers_write_the_seismogram_of_the_library() {
    let out = scratch("receivers");
    let rfile = scratch("receivers.txt");
    std::fs::write(&rfile, "# z x\n30 10\n35, 40\n").expect("write");
    assert_ok(&run_small(
        &out,
        &[
            "--receivers",
            "5:5:45:5",
            "--receivers",
            "20:25:25:1",
            "--receiver-file",
            rfile.to_str().expect("utf-8"),
        ],
    ));
    // 9 + 1 + 2 receivers, 30 time samples.
    let (header, s) = parse_npy(&out.join("seismogram.npy"));
    assert_npy_header(&header, 30, 12);
    let mut config = small_config(Kernels::Fused);
    config.add_receiver_line("5:5:45:5".parse::<ReceiverLine>().expect("line"));
    config.receivers.extend([(20, 25), (30, 10), (35, 40)]);
    let sim = library_run::<f32>(config);
    let want = sim.seismogram().expect("recorded");
    assert_eq!((want.nt, want.nrec), (30, 12));
    assert_eq!(s, as_f64(&want.data));
    // Receiver 9 sits on the source: its last sample is the final pressure there.
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    assert_eq!(s[29 * 12 + 9], p[20 * 50 + 25]);
    assert!(
        s.iter().any(|v| v.abs() > 1e-6),
        "the receivers recorded the wave"
    );
    // Gray-scale gather: 12 columns widened 34 times (the least whole factor reaching 400
    // pixels), one row per time step.
    assert_eq!(png_size(&out.join("seismogram.png")), (12 * 34, 30, 0));
    let j = read_json(&out.join("run.json"));
    assert_eq!(j["receivers"], 12);
    assert_eq!(
        j["config"]["receivers"],
        serde_json::json!(["5:5:45:5", "20:25:25:1"])
    );
    assert!(j["files"]
        .as_array()
        .expect("files")
        .contains(&"seismogram.png".into()));

    // Without receivers, no seismogram files.
    let none = scratch("no-receivers");
    assert_ok(&run_small(&none, &[]));
    assert!(!none.join("seismogram.npy").exists() && !none.join("seismogram.png").exists());
}

/// A 40 x 50 model: 1800 m/s at the top rising by 20 m/s per row.
fn gradient_model() -> HostField<f64> {
    HostField::from_fn(40, 50, |z, x| 1800.0 + 20.0 * z as f64 + (x % 3) as f64).expect("model")
}

#[test]
fn velocity_file_round_trips_and_layers_apply_on_top() {
    let model = gradient_model();
    for (name, f32_file) in [("v64.npy", false), ("v32.npy", true)] {
        let path = scratch(name);
        if f32_file {
            let m32 = HostField::<f32>::from_fn(40, 50, |z, x| model[(z, x)] as f32).expect("f32");
            io::write_npy(&path, &m32).expect("write");
        } else {
            io::write_npy(&path, &model).expect("write");
        }
        let out = scratch(&format!("velocity-{name}"));
        let o = ppwave(&[
            "run",
            "--velocity",
            path.to_str().expect("utf-8"),
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
            "--layer",
            "35:40:3000",
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        assert_ok(&o);
        let mut config = WaveConfig {
            layers: vec![Layer {
                z0: 35,
                z1: 40,
                velocity: 3000.0,
            }],
            ..small_config(Kernels::Fused)
        };
        config.set_velocity_model(
            VelocityModel::new(40, 50, model.as_slice().to_vec()).expect("valid"),
        );
        let sim = library_run::<f32>(config);
        let (header, p) = parse_npy(&out.join("wavefield.npy"));
        assert_npy_header(&header, 40, 50);
        assert_eq!(
            p,
            as_f64(&sim.wavefield_host().expect("copy").into_vec()),
            "{name}"
        );
        // The model written back: the file's values, the layer on top, no paper layers.
        let (_, v) = parse_npy(&out.join("velocity.npy"));
        for (k, &x) in v.iter().enumerate() {
            let want = if k / 50 >= 35 {
                3000.0
            } else {
                model.as_slice()[k] as f32 as f64
            };
            assert_eq!(x, want, "point {k}");
        }
        let j = read_json(&out.join("run.json"));
        assert_eq!((j["nz"].clone(), j["nx"].clone()), (40.into(), 50.into()));
        assert!(j["config"]["velocity"]
            .as_str()
            .expect("path")
            .ends_with(name));
    }

    // Without --layer the model is used as it is (the paper's layers would not even fit).
    let path = scratch("v-plain.npy");
    io::write_npy(&path, &model).expect("write");
    let out = scratch("velocity-plain");
    assert_ok(&ppwave(&[
        "run",
        "--velocity",
        path.to_str().expect("utf-8"),
        "--nt",
        "5",
        "--dt",
        "0.001",
        "--dh",
        "10",
        "--src-z",
        "20",
        "--src-x",
        "25",
        "--nz",
        "40",
        "--out",
        out.to_str().expect("utf-8"),
    ]));
    let (_, v) = parse_npy(&out.join("velocity.npy"));
    assert_eq!(
        v,
        as_f64(
            &model
                .as_slice()
                .iter()
                .map(|&x| x as f32)
                .collect::<Vec<_>>()
        )
    );
}

#[test]
fn snapshots_are_written_every_k_steps() {
    let out = scratch("snapshots");
    assert_ok(&run_small(&out, &["--snapshot-every", "10"]));
    let mut names: Vec<String> = std::fs::read_dir(out.join("snapshots"))
        .expect("snapshots dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "00010.npy",
            "00010.png",
            "00020.npy",
            "00020.png",
            "00030.npy",
            "00030.png"
        ]
    );
    for step in ["00010", "00020", "00030"] {
        let (header, _) = parse_npy(&out.join("snapshots").join(format!("{step}.npy")));
        assert_npy_header(&header, 40, 50);
        assert_eq!(
            png_size(&out.join("snapshots").join(format!("{step}.png"))),
            (50, 40, 2)
        );
    }
    // The last frame is the final wavefield; an earlier one is the library's run of 10 steps.
    let (_, last) = parse_npy(&out.join("snapshots/00030.npy"));
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    assert_eq!(last, p);
    let (_, first) = parse_npy(&out.join("snapshots/00010.npy"));
    let ten = library_run::<f32>(WaveConfig {
        nt: 10,
        ..small_config(Kernels::Fused)
    });
    assert_eq!(
        first,
        as_f64(&ten.wavefield_host().expect("copy").into_vec())
    );
    assert_eq!(read_json(&out.join("run.json"))["snapshots"], 3);
}

#[test]
fn a_snapshot_that_cannot_be_written_stops_the_run_and_removes_its_files() {
    let out = scratch("snapshot-fails");
    // A directory where frame 20 should go: frame 10 is written, frame 20 fails.
    std::fs::create_dir_all(out.join("snapshots/00020.npy")).expect("mkdir");
    let o = run_small(&out, &["--snapshot-every", "10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("snapshot") && err.contains("00020.npy"),
        "{err}"
    );
    assert!(
        !out.join("snapshots/00010.npy").exists(),
        "frame 10 removed"
    );
    assert!(!out.join("wavefield.npy").exists());
    assert!(
        out.join("snapshots/00020.npy").is_dir(),
        "what was there before stays"
    );
}

#[test]
fn f64_precision_writes_float64_and_agrees_with_f32() {
    let out64 = scratch("f64");
    assert_ok(&run_small(&out64, &["--precision", "f64"]));
    let (header, p64) = parse_npy(&out64.join("wavefield.npy"));
    assert!(header.contains("'<f8'"), "{header}");
    let want = library_run::<f64>(small_config(Kernels::Fused));
    assert_eq!(p64, want.wavefield_host().expect("copy").into_vec());
    let (_, p32) = parse_npy(&out_of_default_run());
    let scale = p64.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = p64
        .iter()
        .zip(&p32)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(scale > 1e-3);
    assert!(worst <= 1e-5 * scale, "f32 vs f64: {worst:e} of {scale:e}");
    assert_ne!(worst, 0.0, "the two precisions really differ");
    assert_eq!(read_json(&out64.join("run.json"))["precision"], "f64");
}

/// The SMALL problem as a config file.
const SMALL_TOML: &str = r#"
nz = 40
nx = 50
nt = 20
dt = 0.001
dh = 10
src-z = 20
src-x = 25
fpeak = 25
vmin = 2000
layer = ["30:40:3000"]
backend = "serial"
"#;

#[test]
fn config_file_is_read_and_flags_override_it() {
    let dir = scratch("config");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let toml = dir.join("run.toml");
    // `out` is relative to the file's directory.
    std::fs::write(&toml, format!("{SMALL_TOML}out = \"result\"\n")).expect("write");
    let o = ppwave(&[
        "run",
        "--config",
        toml.to_str().expect("utf-8"),
        "--nt",
        "30",
    ]);
    assert_ok(&o);
    let out = dir.join("result");
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    let want = library_wavefield(small_config(Kernels::Fused));
    assert_eq!(
        p,
        as_f64(&want),
        "nt = 30 from the flag, the rest from the file"
    );
    let j = read_json(&out.join("run.json"));
    assert_eq!(
        (j["nt"].clone(), j["backend"].clone()),
        (30.into(), "serial".into())
    );

    // run.json's "config" object is a config file: turned into TOML, it repeats the run.
    let config = &j["config"];
    assert_eq!(config["nt"], 30);
    assert_eq!(config["layer"], serde_json::json!(["30:40:3000"]));
    assert!(config.get("config").is_none());
    let again = dir.join("again.toml");
    let mut config = config.clone();
    config["out"] = dir.join("again").to_str().expect("utf-8").into();
    std::fs::write(&again, toml::to_string(&config).expect("as TOML")).expect("write");
    assert_ok(&ppwave(&[
        "run",
        "--config",
        again.to_str().expect("utf-8"),
    ]));
    let (_, q) = parse_npy(&dir.join("again/wavefield.npy"));
    assert_eq!(p, q);
}

#[test]
fn bad_config_files_name_the_key_and_write_nothing() {
    let dir = scratch("bad-config");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "typo",
            "space_order = 8",
            &["unknown key `space_order`", "did you mean `space-order`?"],
        ),
        (
            "typo2",
            "absorbing = 8",
            &["unknown key `absorbing`", "did you mean `absorb`?"],
        ),
        (
            "type",
            "absorb = \"4\"",
            &["`absorb = \"4\"`", "a whole number"],
        ),
        (
            "float",
            "snapshot-every = 2.5",
            &["`snapshot-every = 2.5`", "a whole number"],
        ),
        (
            "list",
            "receivers = \"1:2:3:1\"",
            &["`receivers = \"1:2:3:1\"`", "an array of \"Z:X0:X1:STEP\""],
        ),
        (
            "enum",
            "precision = \"f16\"",
            &["`precision", "\"f32\", \"f64\""],
        ),
        ("syntax", "nz = = 4", &["not valid TOML"]),
        // A value from the file that fails a range check says where it came from.
        (
            "range",
            "space-order = 3",
            &["--space-order = 3", "`space-order` is set in --config"],
        ),
    ];
    for (name, line, needles) in cases {
        let toml = dir.join(format!("{name}.toml"));
        std::fs::write(&toml, format!("{SMALL_TOML}{line}\n")).expect("write");
        let out = dir.join(format!("out-{name}"));
        let o = ppwave(&[
            "run",
            "--config",
            toml.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{name}: `{err}` should mention `{n}`");
        }
        assert!(!out.exists(), "{name}: no output");
    }
    assert_rejected(
        "config-missing",
        &["--config", "/nonexistent/run.toml"],
        &["--config", "run.toml", "cannot read"],
    );
}

#[test]
fn bad_new_options_are_rejected_before_running() {
    let dir = scratch("bad-files");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let at = |name: &str| dir.join(name).to_str().expect("utf-8").to_string();
    // Velocity files: 3D, integer, NaN, zero, negative; a receiver file outside the grid.
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
    std::fs::write(dir.join("rec.txt"), "1 1\n40 3\n").expect("write");
    std::fs::write(dir.join("rec-bad.txt"), "1 1\n2\n").expect("write");
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
    for (name, extra, needles) in &cases {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        assert_rejected(name, &extra, needles);
    }
}
