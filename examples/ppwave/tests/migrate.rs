//! `ppwave migrate`: the RTM image of a two-layer synthetic recorded by `ppwave run` peaks
//! on the interface (within two cells), with and without the Laplacian filter; a checkpoint
//! budget gives the same image bytes as full storage; every bad input class (a gather whose
//! shape is not nt x receivers, NaN in the data, a shot without data, a budget below one
//! checkpoint) is exit 2 naming the flag, with nothing written.

use ppstencil::{io, HostField};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const PPWAVE: &str = env!("CARGO_BIN_EXE_ppwave");
/// The interface: rows 24.. are 3000 m/s in the true model, 2000 m/s above.
const INTERFACE: usize = 24;
/// The absorbing layer's width.
const ABSORB: usize = 8;
/// The geometry shared by the recording run and the migration.
const GEOMETRY: [&str; 20] = [
    "--nz",
    "48",
    "--nx",
    "60",
    "--nt",
    "300",
    "--dt",
    "0.001",
    "--dh",
    "10",
    "--fpeak",
    "25",
    "--absorb",
    "8",
    "--space-order",
    "4",
    "--receivers",
    "4:8:52:2",
    "--backend",
    "serial",
];

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ppwave-migrate-{name}-{}", std::process::id()));
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

/// The recorded survey (made once): its directory and shot file.
fn data() -> &'static (PathBuf, PathBuf) {
    static DATA: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = temp("data");
        let shots = dir.join("shots.txt");
        std::fs::write(&shots, "4 15\n4 30\n4 45\n").unwrap();
        let out = dir.join("recorded");
        let o = Command::new(PPWAVE)
            .arg("run")
            .args(GEOMETRY)
            .args(["--vmin", "2000", "--layer", &format!("{INTERFACE}:48:3000")])
            .args([
                "--source-mode",
                "add",
                "--boundary",
                "sponge",
                "--precision",
                "f64",
            ])
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

/// `ppwave migrate` over the recorded data with the smooth (2000 m/s) model and `extra`.
fn migrate(out: &Path, data: &Path, shots: &Path, extra: &[&str]) -> Output {
    Command::new(PPWAVE)
        .arg("migrate")
        .args(GEOMETRY)
        .args(["--vmin", "2000", "--layer", &format!("{INTERFACE}:48:2000")])
        .args(["--precision", "f64"])
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

/// The row of the largest |value| of `image` away from the absorbing layer.
fn peak_row(image: &HostField<f64>) -> usize {
    let [nz, nx] = image.shape();
    let mut best = (0.0, 0);
    for z in ABSORB..nz - ABSORB {
        for x in ABSORB..nx - ABSORB {
            let v = image.as_slice()[z * nx + x].abs();
            if v > best.0 {
                best = (v, z);
            }
        }
    }
    assert!(best.0 > 0.0, "the image is empty");
    best.1
}

#[test]
fn the_image_peaks_on_the_interface() {
    let (recorded, shots) = data();
    let dir = temp("image");
    let mut images = Vec::new();
    for (name, extra) in [
        ("plain", vec![]),
        ("laplacian", vec!["--laplacian"]),
        ("checkpoints", vec!["--memory", "100K"]),
    ] {
        let out = dir.join(name);
        let o = migrate(&out, recorded, shots, &extra);
        assert!(o.status.success(), "{name}: {}", text(&o));
        assert!(out.join("image.png").is_file());
        let image: HostField<f64> = io::read_npy(out.join("image.npy")).unwrap();
        assert_eq!(image.shape(), [48, 60]);
        let row = peak_row(&image);
        eprintln!("{name}: peak at row {row} (interface {INTERFACE})");
        assert!(row.abs_diff(INTERFACE) <= 2, "{name}: peak at row {row}");
        images.push(std::fs::read(out.join("image.npy")).unwrap());
    }
    // 100 KiB holds two checkpoints of two 48 x 60 f64 fields (46080 bytes each), not the
    // 299 levels (6.9 MB): the image is the same bytes.
    assert!(images[0] == images[2], "checkpointed image differs");
    // A migration's directory is a ppwave run's: refused without --overwrite, replaced with it.
    let plain = dir.join("plain");
    let o = migrate(&plain, recorded, shots, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--overwrite"), "{}", text(&o));
    let o = migrate(&plain, recorded, shots, &["--overwrite"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read(plain.join("image.npy")).unwrap() == images[0]);
}

/// Runs a migration that must fail with exit 2 naming `words`, writing nothing.
fn refused(name: &str, data: &Path, shots: &Path, extra: &[&str], words: &[&str]) {
    let out = temp(name).join("out");
    let o = migrate(&out, data, shots, extra);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{name}: {t}");
    for w in words {
        assert!(t.contains(w), "{name}: {w:?} not in {t}");
    }
    assert!(!out.exists(), "{name}: wrote {}", out.display());
}

#[test]
fn bad_input_is_refused_naming_the_flag() {
    let (recorded, shots) = data();
    // A shape that is not nt x receivers.
    refused(
        "nt",
        recorded,
        shots,
        &["--nt", "299"],
        &["--data", "300 x 23", "299 x 23", "--nt"],
    );
    // A budget below one checkpoint (two fields of 48 x 60 f64: 46080 bytes).
    refused(
        "memory",
        recorded,
        shots,
        &["--memory", "40K"],
        &["--memory", "needs 46080 bytes"],
    );
    refused(
        "memory-text",
        recorded,
        shots,
        &["--memory", "lots"],
        &["--memory = lots"],
    );
    // A shot without data.
    let dir = temp("more-shots");
    let more = dir.join("shots.txt");
    std::fs::write(&more, "4 15\n4 30\n4 45\n4 50\n").unwrap();
    refused(
        "no-data",
        recorded,
        &more,
        &[],
        &["--data", "shot 4", "shot-0004", "--shots"],
    );
    // NaN in the data.
    let copy = dir.join("nan");
    for n in 1..=3 {
        let from = recorded.join(format!("shot-{n:04}")).join("seismogram.npy");
        let to = copy.join(format!("shot-{n:04}"));
        std::fs::create_dir_all(&to).unwrap();
        let mut g: HostField<f64> = io::read_npy(&from).unwrap();
        if n == 2 {
            g.as_mut_slice()[5 * 23 + 7] = f64::NAN;
        }
        io::write_npy(to.join("seismogram.npy"), &g).unwrap();
    }
    refused(
        "nan",
        &copy,
        shots,
        &[],
        &["--data", "shot 2", "NaN", "step 5, receiver 7"],
    );
}
