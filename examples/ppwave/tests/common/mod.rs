//! Shared helpers of the `ppwave` end-to-end tests: running the binary, scratch paths, the
//! small problem every test runs (as flags and as a library config), the one npy reader
//! (independent of `ppstencil::io`), and the checks of outputs and errors.
//!
//! Each test file compiles this module and uses only part of it.
#![allow(dead_code)]

use ppstencil::solver::Layer;
use ppstencil::{HostField, Serial, StepKernels, WaveConfig, WaveSimulator};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn ppwave(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ppwave"))
        .args(args)
        .output()
        .expect("ppwave starts")
}

/// A fresh, empty scratch path for one test (not created).
pub fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    if p.is_dir() {
        std::fs::remove_dir_all(&p).expect("clean scratch dir");
    } else if p.exists() {
        std::fs::remove_file(&p).expect("clean scratch file");
    }
    p
}

/// The small problem every test runs: 40 x 50, 30 steps, one layer.
pub const SMALL: &[&str] = &[
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

pub fn small_config(kernels: StepKernels) -> WaveConfig {
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

pub fn run_small(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run"];
    args.extend_from_slice(SMALL);
    args.extend_from_slice(&["--out", out.to_str().expect("utf-8 path")]);
    args.extend_from_slice(extra);
    ppwave(&args)
}

/// Reads an npy file by hand, independently of `ppstencil::io` (so that the tests check the
/// library's writer instead of trusting it): checks the magic, version 1.0, the 64-byte
/// alignment of the data and the header's closing newline; returns the header dict text and
/// the data as f64, from `<f4` or `<f8` per the header.
pub fn parse_npy(path: &Path) -> (String, Vec<f64>) {
    let b = std::fs::read(path).expect("npy exists");
    assert_eq!(&b[..6], b"\x93NUMPY", "magic");
    assert_eq!((b[6], b[7]), (1, 0), "version 1.0");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    assert_eq!((10 + hlen) % 64, 0, "data aligned to 64 bytes");
    let header = String::from_utf8(b[10..10 + hlen].to_vec()).expect("ascii header");
    assert!(header.ends_with('\n'));
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

/// [`parse_npy`] of a float32 file, with the data as f32 (exact: every f32 is an f64).
pub fn parse_npy_f32(path: &Path) -> (String, Vec<f32>) {
    let (header, values) = parse_npy(path);
    assert!(header.contains("'descr': '<f4'"), "{header}");
    (header, values.into_iter().map(|v| v as f32).collect())
}

pub fn assert_npy_header(header: &str, nz: usize, nx: usize) {
    assert!(header.contains("'descr': '<f4'"), "{header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    assert!(
        header.contains(&format!("'shape': ({nz}, {nx})")),
        "{header}"
    );
}

pub fn library_wavefield(config: WaveConfig) -> Vec<f32> {
    let mut sim = WaveSimulator::<Serial>::with_config(Serial, config);
    sim.run().expect("library run");
    sim.wavefield_host().expect("copy").into_vec()
}

/// Runs with `extra` appended (later flags override SMALL's), expects failure with a message
/// containing every needle, and no output directory.
pub fn assert_rejected(name: &str, extra: &[&str], needles: &[&str]) {
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

/// Writes an npy file by hand (any dtype and shape text), to feed bad models to ppwave.
pub fn write_raw_npy(path: &Path, descr: &str, shape: &str, data: &[u8]) {
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

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("run.json")).expect("valid JSON")
}

pub fn png_size(path: &Path) -> (u32, u32, u8) {
    let png = std::fs::read(path).expect("png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    (w, h, png[25])
}

pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn library_run<T: ppstencil::Real>(config: WaveConfig) -> WaveSimulator<Serial, T> {
    let mut sim = WaveSimulator::<Serial, T>::with_config(Serial, config);
    sim.run().expect("library run");
    sim
}

pub fn as_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// The wavefield of the SMALL problem with default options, in a directory of its own per
/// `tag` (tests run in parallel).
pub fn out_of_default_run(tag: &str) -> PathBuf {
    let out = scratch(&format!("default-small-{tag}"));
    assert_ok(&run_small(&out, &[]));
    out.join("wavefield.npy")
}

/// A 40 x 50 model: 1800 m/s at the top rising by 20 m/s per row.
pub fn gradient_model() -> HostField<f64> {
    HostField::from_fn(40, 50, |z, x| 1800.0 + 20.0 * z as f64 + (x % 3) as f64).expect("model")
}
