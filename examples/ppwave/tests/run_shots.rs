//! `ppwave run --shots FILE`: each shot's seismogram equals a plain run with that source, in
//! the run's precision; everything that can be checked fails before any shot runs (exit 2,
//! no output); the survey's directory is written all at once and replaced only with
//! --overwrite; bad shot files are exit 2 naming the line.

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
fn every_shot_equals_a_plain_run_in_its_precision() {
    let dir = temp("ok");
    let file = dir.join("shots.txt");
    std::fs::write(&file, "# survey\n30 30\n\n45,20\n").unwrap();
    for precision in ["f32", "f64"] {
        let out = dir.join(format!("out-{precision}"));
        let o = ppwave(&[
            "--shots",
            file.to_str().unwrap(),
            "--precision",
            precision,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        for (n, z, x) in [(1, "30", "30"), (2, "45", "20")] {
            let one = dir.join(format!("one-{n}-{precision}"));
            let p = ppwave(&[
                "--src-z",
                z,
                "--src-x",
                x,
                "--precision",
                precision,
                "--out",
                one.to_str().unwrap(),
            ]);
            assert!(p.status.success(), "{}", text(&p));
            let a = std::fs::read(one.join("seismogram.npy")).unwrap();
            let b = std::fs::read(out.join(format!("shot-000{n}/seismogram.npy"))).unwrap();
            assert!(a == b, "shot {n} differs from the plain run in {precision}");
            let descr = if precision == "f64" { "'<f8'" } else { "'<f4'" };
            assert!(String::from_utf8_lossy(&b[..128]).contains(descr));
            assert!(out.join(format!("shot-000{n}/seismogram.png")).exists());
        }
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["shots"], 2);
        assert_eq!(summary["failed"], serde_json::json!([]));
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(run["precision"], precision);
        assert!(run["outputs"]["shot-0002/seismogram.npy"].is_object());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_can_be_checked_fails_before_any_shot() {
    let dir = temp("upfront");
    let file = dir.join("shots.txt");
    std::fs::write(&file, "30 30\n45 20\n").unwrap();
    let border = dir.join("border.txt");
    std::fs::write(&border, "30 30\n1 40\n").unwrap();
    let latin1 = dir.join("latin1.txt");
    std::fs::write(&latin1, b"30 30\n# caf\xe9\n").unwrap();
    let f = file.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["--shots", f, "--ny", "20"], "--ny"),
        (
            &["--shots", f, "--backend", "cuda"],
            "--backend serial or rayon",
        ),
        (&["--shots", f, "--time-block", "2:1"], "--time-block"),
        (&["--shots", f, "--snapshot-every", "5"], "--snapshot-every"),
        (
            &["--shots", border.to_str().unwrap()],
            "line 2: source (1, 40)",
        ),
        (&["--shots", latin1.to_str().unwrap()], "not UTF-8"),
        (&["--shots", "/dev/zero"], "character device"),
        (
            &["--shots", f, "--receivers", "5:2:2:1", "--nt", "0"],
            "--nt",
        ),
    ];
    for (i, (args, want)) in cases.iter().enumerate() {
        let out = dir.join(format!("out{i}"));
        let mut all = args.to_vec();
        all.extend(["--out", out.to_str().unwrap()]);
        let o = ppwave(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
        assert!(!out.exists(), "{args:?}: nothing written");
    }
    // No receivers: a survey would record nothing.
    let out = dir.join("no-receivers");
    let o = Command::new(PPWAVE)
        .args([
            "run", "--nz", "61", "--nx", "71", "--nt", "20", "--shots", f,
        ])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--receivers"), "{}", text(&o));
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_survey_directory_is_replaced_only_with_overwrite_and_never_mixed() {
    let dir = temp("replace");
    let file = dir.join("shots.txt");
    std::fs::write(&file, "30 30\n").unwrap();
    let out = dir.join("out");
    let o_str = out.to_str().unwrap();
    // A single run first; the survey replaces it whole with --overwrite.
    let o = ppwave(&["--out", o_str]);
    assert!(o.status.success(), "{}", text(&o));
    let f = file.to_str().unwrap();
    let o = ppwave(&["--shots", f, "--out", o_str]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--overwrite"), "{}", text(&o));
    let o = ppwave(&["--shots", f, "--out", o_str, "--overwrite"]);
    assert!(o.status.success(), "{}", text(&o));
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["run.json", "shot-0001", "summary.json"]);
    // And a survey is replaced by another.
    let o = ppwave(&["--shots", f, "--out", o_str, "--overwrite", "--nt", "30"]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_full_disk_leaves_no_partial_survey() {
    let probe = Command::new("unshare").args(["-m", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        println!("SKIPPED: a full disk: `unshare -m` is not available here (needs root)");
        return;
    }
    let dir = temp("full");
    let file = dir.join("shots.txt");
    std::fs::write(&file, "30 30\n45 20\n20 50\n").unwrap();
    let out = dir.join("out");
    let listing = dir.join("listing");
    let line = format!(
        "'{PPWAVE}' run {} --shots '{}' --out '{}'",
        GRID.join(" "),
        file.display(),
        out.display()
    );
    std::fs::create_dir_all(&out).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=12k none '{o}' || exit 99; {line}; rc=$?; ls -A '{o}' > '{l}'; \
         exit $rc",
        o = out.display(),
        l = listing.display()
    );
    let o = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("No space left"), "{}", text(&o));
    let left = std::fs::read_to_string(&listing).unwrap();
    assert_eq!(left.trim(), "", "the full disk holds nothing of the run");
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
