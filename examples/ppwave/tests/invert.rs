//! `ppwave invert`: from a constant starting model, L-BFGS and steepest descent on data
//! recorded by `ppwave run` over a small Gaussian velocity anomaly lower the misfit at every
//! iteration and recover the anomaly's sign and position; bad input (a gather of the wrong shape,
//! bad bounds, a budget below one checkpoint) is exit 2 naming the flag, nothing written.

use ppstencil::{io, HostField};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const PPWAVE: &str = env!("CARGO_BIN_EXE_ppwave");
const NZ: usize = 40;
const NX: usize = 44;
/// The anomaly's centre (row, column).
const CENTRE: (usize, usize) = (20, 22);
/// Geometry: shots and receivers on rows 6 and 33 (a transmission survey).
const GEOMETRY: [&str; 20] = [
    "--nt",
    "260",
    "--dt",
    "0.001",
    "--dh",
    "10",
    "--fpeak",
    "25",
    "--absorb",
    "6",
    "--space-order",
    "4",
    "--receivers",
    "6:7:37:2",
    "--receivers",
    "33:7:37:2",
    "--backend",
    "serial",
    "--precision",
    "f64",
];

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ppwave-invert-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The true model: 2000 m/s with a +150 m/s Gaussian (sigma 3 cells) at [`CENTRE`].
fn true_model() -> HostField<f64> {
    HostField::from_fn(NZ, NX, |z, x| {
        let r2 = (z as f64 - CENTRE.0 as f64).powi(2) + (x as f64 - CENTRE.1 as f64).powi(2);
        2000.0 + 150.0 * (-r2 / 18.0).exp()
    })
    .unwrap()
}

/// The recorded survey (made once): its directory and shot file.
fn data() -> &'static (PathBuf, PathBuf) {
    static DATA: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = temp("data");
        let shots = dir.join("shots.txt");
        std::fs::write(&shots, "6 10\n6 34\n33 10\n33 34\n").unwrap();
        let model = dir.join("true.npy");
        io::write_npy(&model, &true_model()).unwrap();
        let out = dir.join("recorded");
        let o = Command::new(PPWAVE)
            .arg("run")
            .args(GEOMETRY)
            .args(["--velocity", model.to_str().unwrap()])
            .args(["--source-mode", "add", "--boundary", "sponge"])
            .args([
                "--shots",
                shots.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        (out, shots)
    })
}

/// `ppwave invert` from the constant 2000 m/s model with `extra`.
fn invert(out: &Path, extra: &[&str]) -> Output {
    let (data, shots) = data();
    Command::new(PPWAVE)
        .arg("invert")
        .args(GEOMETRY)
        .args(["--nz", &NZ.to_string(), "--nx", &NX.to_string()])
        .args(["--vmin", "2000", "--layer", "0:1:2000"])
        .args([
            "--data",
            data.to_str().unwrap(),
            "--shots",
            shots.to_str().unwrap(),
        ])
        .args(["--out", out.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn lbfgs_lowers_the_misfit_and_finds_the_anomaly() {
    let (misfits, out) = the_misfit_falls_and_the_anomaly_appears_where_it_is("lbfgs");
    // Three iterations of L-BFGS go further down than steepest descent's first three.
    let (descent, _) = the_misfit_falls_and_the_anomaly_appears_where_it_is("descent");
    assert!(misfits[3] < descent[3], "{misfits:?} {descent:?}");
    // An inversion's directory is a ppwave run's: --overwrite replaces all of it.
    let o = invert(&out, &["--iterations", "1", "--overwrite"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("model-0001.npy").is_file());
    assert!(
        !out.join("model-0003.npy").exists(),
        "a previous model was kept"
    );
}

/// Runs three iterations of `method`, checks the misfit falls at each and the largest change
/// is an increase at the anomaly; returns the misfits and the output directory.
fn the_misfit_falls_and_the_anomaly_appears_where_it_is(method: &str) -> (Vec<f64>, PathBuf) {
    let out = temp(method).join("out");
    let o = invert(
        &out,
        &[
            "--iterations",
            "3",
            "--step",
            "40",
            "--bounds",
            "1800:2400",
            "--method",
            method,
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("model.png").is_file());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("misfit.json")).unwrap()).unwrap();
    let misfits: Vec<f64> = json["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["misfit"].as_f64().unwrap())
        .collect();
    eprintln!("{method} misfits: {misfits:?}");
    assert_eq!(misfits.len(), 4, "{json}");
    assert!(misfits.windows(2).all(|w| w[1] < w[0]), "{misfits:?}");
    let last: HostField<f64> = io::read_npy(out.join("model-0003.npy")).unwrap();
    let start: HostField<f64> = io::read_npy(out.join("model-0000.npy")).unwrap();
    assert!(start.as_slice().iter().all(|&v| v == 2000.0));
    // The largest change lies at the anomaly (within three cells) and is an increase.
    let (mut best, mut at) = (0.0f64, (0, 0));
    for z in 0..NZ {
        for x in 0..NX {
            let d = last.as_slice()[z * NX + x] - 2000.0;
            assert!((1800.0..=2400.0).contains(&(d + 2000.0)));
            if d.abs() > best.abs() {
                (best, at) = (d, (z, x));
            }
        }
    }
    eprintln!("largest change {best:.2} m/s at {at:?} (anomaly at {CENTRE:?})");
    assert!(best > 0.0, "the anomaly is faster: {best}");
    assert!(
        at.0.abs_diff(CENTRE.0) <= 3 && at.1.abs_diff(CENTRE.1) <= 3,
        "largest change at {at:?}"
    );
    (misfits, out)
}

/// An inversion that must fail with exit 2 naming `words`, writing nothing.
fn refused(name: &str, extra: &[&str], words: &[&str]) {
    let out = temp(name).join("out");
    let o = invert(&out, extra);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{name}: {t}");
    for w in words {
        assert!(t.contains(w), "{name}: {w:?} not in {t}");
    }
    assert!(!out.exists(), "{name}: wrote {}", out.display());
}

#[test]
fn bad_input_is_refused_naming_the_flag() {
    refused(
        "nt",
        &["--nt", "250"],
        &["--data", "260 x 32", "250 x 32", "--nt"],
    );
    refused(
        "bounds",
        &["--bounds", "2400:1800"],
        &["--bounds = 2400:1800"],
    );
    refused(
        "cfl",
        &["--bounds", "1000:90000"],
        &["--bounds", "VMAX", "--dt"],
    );
    refused(
        "memory",
        &["--memory", "1000"],
        &["--memory = 1000", "needs 28160 bytes"],
    );
    refused("step", &["--step", "0"], &["--step = 0"]);
    refused("method", &["--method", "newton"], &["--method", "newton"]);
    refused(
        "pml",
        &["--boundary", "pml"],
        &["--boundary = pml", "sponge"],
    );
}
