//! `ppwave run --shots FILE`: each shot's seismogram equals a plain run with that source; a
//! failing shot is reported by number and the others keep their results; bad shot files
//! are exit 2 naming the line.

use std::path::Path;
use std::process::{Command, Output};

const PPWAVE: &str = env!("CARGO_BIN_EXE_ppwave");
const GRID: [&str; 10] = [
    "--nz",
    "61",
    "--nx",
    "71",
    "--nt",
    "50",
    "--receivers",
    "5:2:68:1",
    "--backend",
    "serial",
];

fn ppwave(args: &[&str]) -> Output {
    Command::new(PPWAVE)
        .arg("run")
        .args(GRID)
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ppwave-shots-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_shot_equals_a_plain_run_and_a_failed_one_keeps_the_others() {
    let dir = temp("ok");
    let file = dir.join("shots.txt");
    // Shot 2 sits in the order-4 border (row 1): it fails; shots 1 and 3 run.
    std::fs::write(&file, "# survey\n30 30\n1 40\n\n45,20\n").unwrap();
    let out = dir.join("out");
    let o = ppwave(&[
        "--shots",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("shot 2: invalid src_z = 1"),
        "{}",
        text(&o)
    );
    for (n, z, x) in [(1, "30", "30"), (3, "45", "20")] {
        let one = dir.join(format!("one-{n}"));
        let p = ppwave(&["--src-z", z, "--src-x", x, "--out", one.to_str().unwrap()]);
        assert!(p.status.success(), "{}", text(&p));
        let a = std::fs::read(one.join("seismogram.npy")).unwrap();
        let b = std::fs::read(out.join(format!("shot-000{n}/seismogram.npy"))).unwrap();
        assert!(a == b, "shot {n} differs from the plain run");
        assert!(out.join(format!("shot-000{n}/seismogram.png")).exists());
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["shots"], 3);
    assert_eq!(summary["failed"], serde_json::json!([2]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_shot_files_name_the_problem() {
    let dir = temp("bad");
    let cases = [
        ("3 4\nfoo\n", "line 2: `foo` is not a source position"),
        (
            "3 400\n",
            "line 1: source (3, 400) is outside the 61 x 71 grid",
        ),
        ("# nothing\n\n", "no shots in the file"),
    ];
    for (i, (body, want)) in cases.iter().enumerate() {
        let file = dir.join(format!("s{i}.txt"));
        std::fs::write(&file, body).unwrap();
        let out = dir.join(format!("out{i}"));
        let o = ppwave(&[
            "--shots",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(want), "{}", text(&o));
        assert!(!Path::new(&out).join("summary.json").exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(not(feature = "mpi"))]
#[test]
fn decomp_and_ranks_per_shot_need_the_mpi_feature() {
    let o = ppwave(&["--decomp", "2x2", "--out", "/nonexistent/never"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--features mpi"), "{}", text(&o));
}
