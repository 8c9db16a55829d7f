//! `mpiexec -n P ppwave run ...` against the same run in one process, file for file
//! (wavefield.npy, seismogram.npy, snapshots byte-identical), 2D and 3D, and the distributed
//! bad inputs.

use std::path::Path;
use std::process::{Command, Output};

const PPWAVE: &str = env!("CARGO_BIN_EXE_ppwave");

fn mpiexec(p: usize, args: &[&str]) -> Output {
    Command::new("mpiexec")
        .args(["-n", &p.to_string(), PPWAVE, "run"])
        .args(args)
        .output()
        .expect("mpiexec runs (install an MPI: .ci/mpi-toolchain)")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn same_file(a: &Path, b: &Path) {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(x == y, "{} and {} differ", a.display(), b.display());
}

#[test]
fn distributed_runs_write_the_single_process_files() {
    let dir = std::env::temp_dir().join(format!("ppwave-mpi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // 121 x 97: uneven for 2, 3, 4 parts; row 61 (a receiver line) is the 2-way boundary,
    // the source at column 48 sits on the 1x2 boundary (97 = 49 + 48), and the 15-cell
    // absorbing layer spans ranks.
    let common = [
        "--nz",
        "121",
        "--nx",
        "97",
        "--nt",
        "120",
        "--src-z",
        "61",
        "--src-x",
        "49",
        "--space-order",
        "8",
        "--absorb",
        "15",
        "--boundary",
        "sponge",
        "--receivers",
        "61:0:96:1",
        "--backend",
        "serial",
        "--layer",
        "80:100:2800",
    ];
    for mode in ["set", "add"] {
        let one = dir.join(format!("one-{mode}"));
        let mut args = common.to_vec();
        args.extend(["--source-mode", mode]);
        let out = Command::new(PPWAVE)
            .arg("run")
            .args(&args)
            .arg("--out")
            .arg(&one)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        for (p, decomp) in [
            (1, None),
            (2, None),
            (2, Some("1x2")),
            (3, None),
            (4, Some("2x2")),
            (4, Some("1x4")),
        ] {
            let here = dir.join(format!("{mode}-{p}-{}", decomp.unwrap_or("auto")));
            let mut a = args.clone();
            a.extend(["--out", here.to_str().unwrap()]);
            if let Some(d) = decomp {
                a.extend(["--decomp", d]);
            }
            let out = mpiexec(p, &a);
            assert!(out.status.success(), "P = {p}: {}", text(&out));
            same_file(&one.join("wavefield.npy"), &here.join("wavefield.npy"));
            same_file(&one.join("seismogram.npy"), &here.join("seismogram.npy"));
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(here.join("run.json")).unwrap())
                    .unwrap();
            assert_eq!(json["ranks"], p);
            assert!(json["exchange_time_s"].as_f64().is_some());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn distributed_3d_runs_write_the_single_process_files() {
    let dir = std::env::temp_dir().join(format!("ppwave-mpi3d-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 23 x 21 x 19 splits unevenly for 2, 3, 4 parts along every axis; the source (12, 11,
    // 10) sits on the 2-way boundaries of all three axes (23 = 12 + 11, 21 = 11 + 10, 19 =
    // 10 + 9) and the receiver line along x at (12, 11) crosses the x boundary; the 6-cell
    // layer (sponge with the set source, the default PML with the add source) spans two
    // ranks of the 4-way splits; the velocity file differs at every point.
    let (nz, ny, nx) = (23, 21, 19);
    let values = (0..nz * ny * nx)
        .map(|k| 1800.0 + ((k * 37) % 101) as f64 * 5.0)
        .collect();
    let model = ppstencil::HostField::<f64, 3>::from_vec_shape([nz, ny, nx], values).unwrap();
    let velocity = dir.join("v.npy");
    ppstencil::io::write_npy(&velocity, &model).unwrap();
    let common = [
        "--ny",
        "21",
        "--nt",
        "30",
        "--dt",
        "0.001",
        "--dh",
        "10",
        "--src-z",
        "12",
        "--src-y",
        "11",
        "--src-x",
        "10",
        "--absorb",
        "6",
        "--receivers",
        "12:11:0:18:1",
        "--backend",
        "serial",
        "--velocity",
        velocity.to_str().unwrap(),
        "--snapshot-every",
        "15",
    ];
    // (source mode, space order, [(ranks, --decomp)]).
    type Runs<'a> = [(&'a str, &'a str, &'a [(usize, Option<&'a str>)]); 2];
    let runs: Runs = [
        (
            "set",
            "8",
            &[
                (1, None),
                (2, None),
                (2, Some("1x1x2")),
                (3, None),
                (4, Some("2x1x2")),
                (4, Some("1x2x2")),
            ],
        ),
        ("add", "2", &[(2, Some("1x2x1")), (4, None)]),
    ];
    for (mode, order, ranks) in runs {
        let one = dir.join(format!("one-{mode}"));
        let mut args = common.to_vec();
        args.extend(["--source-mode", mode, "--space-order", order]);
        if mode == "set" {
            args.extend(["--boundary", "sponge"]);
        }
        let out = Command::new(PPWAVE)
            .arg("run")
            .args(&args)
            .arg("--out")
            .arg(&one)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        for &(p, decomp) in ranks {
            let here = dir.join(format!("{mode}-{p}-{}", decomp.unwrap_or("auto")));
            let mut a = args.clone();
            a.extend(["--out", here.to_str().unwrap()]);
            if let Some(d) = decomp {
                a.extend(["--decomp", d]);
            }
            let out = mpiexec(p, &a);
            assert!(out.status.success(), "P = {p}: {}", text(&out));
            for f in [
                "wavefield.npy",
                "seismogram.npy",
                "velocity.npy",
                "snapshots/00015.npy",
                "snapshots/00030.npy",
            ] {
                same_file(&one.join(f), &here.join(f));
            }
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(here.join("run.json")).unwrap())
                    .unwrap();
            assert_eq!(json["ranks"], p);
            assert_eq!(json["dims"], 3);
            if let Some(d) = decomp {
                assert_eq!(json["decomposition"], d);
            }
            assert!(json["exchange_time_s"].as_f64().is_some());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_decompositions_are_errors_on_every_rank() {
    let out = mpiexec(
        3,
        &[
            "--nz",
            "60",
            "--nx",
            "60",
            "--nt",
            "5",
            "--decomp",
            "2x2",
            "--out",
            "/nonexistent/never",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert_eq!(
        t.matches("has 4 parts but the run has 3 MPI ranks").count(),
        3,
        "{t}"
    );
    // Order 8 has radius 4: 4 parts of a 12-column grid are 3 columns thick.
    let out = mpiexec(
        4,
        &[
            "--nz",
            "60",
            "--nx",
            "12",
            "--nt",
            "5",
            "--src-x",
            "6",
            "--space-order",
            "8",
            "--decomp",
            "1x4",
            "--out",
            "/nonexistent/never",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("thinner than the halo width 4"),
        "{}",
        text(&out)
    );
}

#[test]
fn distributed_pml_runs_write_the_single_process_files() {
    let dir = std::env::temp_dir().join(format!("ppwave-mpi-pml-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The 2D default layer, the PML (30 cells), across the ranks of every split below, with
    // rank boundaries inside it (columns 28 and 56 of 1x3, rows 23 and 69 of 4x1), where the
    // psi each rank computes 2 cells into its halo is read; the receiver line at row 5 runs
    // through the layer, and order 2 has a halo of 4, wider than its radius 1.
    for order in ["8", "2"] {
        let args = [
            "--nz",
            "91",
            "--nx",
            "83",
            "--nt",
            "80",
            "--absorb",
            "30",
            "--space-order",
            order,
            "--receivers",
            "5:0:82:1",
            "--backend",
            "serial",
            "--snapshot-every",
            "40",
        ];
        let one = dir.join(format!("one-{order}"));
        let out = Command::new(PPWAVE)
            .arg("run")
            .args(args)
            .arg("--out")
            .arg(&one)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        for (p, decomp) in [(2, "2x1"), (3, "1x3"), (4, "4x1")] {
            let here = dir.join(format!("{order}-{p}-{decomp}"));
            let mut a = args.to_vec();
            a.extend(["--decomp", decomp, "--out", here.to_str().unwrap()]);
            let out = mpiexec(p, &a);
            assert!(out.status.success(), "P = {p}: {}", text(&out));
            for f in [
                "wavefield.npy",
                "seismogram.npy",
                "snapshots/00040.npy",
                "snapshots/00080.npy",
            ] {
                same_file(&one.join(f), &here.join(f));
            }
            assert!(here.join("snapshots/00040.png").is_file());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_3d_decompositions_are_errors_on_every_rank() {
    // 24 x 20 x 12, order 8 (radius 4): every case fails on every rank before any step.
    let grid = [
        "--nz",
        "24",
        "--ny",
        "20",
        "--nx",
        "12",
        "--nt",
        "5",
        "--src-x",
        "6",
        "--space-order",
        "8",
        "--out",
        "/nonexistent/never",
    ];
    for (p, extra, needle) in [
        // Two factors for a 3D grid.
        (
            4,
            &["--decomp", "2x2"][..],
            "`2x2` is not a decomposition of 3 axes",
        ),
        // Three factors, product 4 on 3 ranks.
        (
            3,
            &["--decomp", "2x1x2"][..],
            "has 4 parts but the run has 3 MPI ranks",
        ),
        // 12 columns in 4 parts of 3 < radius 4.
        (
            4,
            &["--decomp", "1x1x4"][..],
            "thinner than the halo width 4",
        ),
    ] {
        let mut args = grid.to_vec();
        args.extend_from_slice(extra);
        let out = mpiexec(p, &args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert_eq!(text(&out).matches(needle).count(), p, "{}", text(&out));
    }
}

#[test]
fn one_rank_failing_stops_all() {
    // Rank 0 cannot create the output directory: it aborts every rank with the message.
    let out = mpiexec(
        2,
        &[
            "--nz",
            "60",
            "--nx",
            "60",
            "--nt",
            "5",
            "--src-z",
            "30",
            "--src-x",
            "30",
            "--out",
            "/proc/ppwave-cannot-write",
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("error (rank 0 of 2)"), "{}", text(&out));
}

#[test]
fn shots_over_groups_of_ranks_equal_one_process() {
    let dir = std::env::temp_dir().join(format!("ppwave-mpi-shots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("shots.txt");
    std::fs::write(&file, "30 30\n10 40\n45 20\n20 50\n").unwrap();
    let grid = [
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
        "--shots",
        file.to_str().unwrap(),
    ];
    let one = dir.join("one");
    let o = Command::new(PPWAVE)
        .arg("run")
        .args(grid)
        .arg("--out")
        .arg(&one)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for (p, k) in [(2, "1"), (4, "2"), (3, "3")] {
        let here = dir.join(format!("p{p}k{k}"));
        let mut a = grid.to_vec();
        a.extend(["--ranks-per-shot", k, "--out", here.to_str().unwrap()]);
        let o = mpiexec(p, &a);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        for n in [1, 2, 3, 4] {
            let s = format!("shot-000{n}/seismogram.npy");
            same_file(&one.join(&s), &here.join(&s));
        }
    }
    let o = mpiexec(
        3,
        &[
            &grid[..],
            &[
                "--ranks-per-shot",
                "2",
                "--out",
                dir.join("bad").to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("does not divide the 3 MPI ranks"),
        "{}",
        text(&o)
    );
    // A shot on the border is refused before any shot runs, on every rank count.
    std::fs::write(&file, "30 30\n1 40\n").unwrap();
    let border = dir.join("border");
    let mut a = grid.to_vec();
    a.extend(["--ranks-per-shot", "1", "--out", border.to_str().unwrap()]);
    let o = mpiexec(2, &a);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("line 2"), "{}", text(&o));
    assert!(!border.join("shot-0001").exists(), "no shot ran");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `mpiexec -n P ppwave COMMAND ARGS`.
fn mpiexec_command(p: usize, command: &str, args: &[&str]) -> Output {
    Command::new("mpiexec")
        .args(["-n", &p.to_string(), PPWAVE, command])
        .args(args)
        .output()
        .expect("mpiexec runs (install an MPI: .ci/mpi-toolchain)")
}

#[test]
fn migrate_and_invert_over_ranks_equal_one_process() {
    let dir = std::env::temp_dir().join(format!("ppwave-mpi-fwi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("shots.txt");
    // Five shots: an uneven last batch on 2 and 3 ranks.
    std::fs::write(&file, "8 10\n8 20\n8 30\n8 40\n31 25\n").unwrap();
    let data = dir.join("data");
    let geometry = [
        "--nz",
        "40",
        "--nx",
        "50",
        "--nt",
        "220",
        "--dt",
        "0.001",
        "--dh",
        "10",
        "--fpeak",
        "25",
        "--absorb",
        "6",
        "--receivers",
        "8:7:42:1",
        "--backend",
        "serial",
        "--shots",
        file.to_str().unwrap(),
    ];
    let o = Command::new(PPWAVE)
        .arg("run")
        .args(geometry)
        .args([
            "--boundary",
            "sponge",
            "--source-mode",
            "add",
            "--vmin",
            "2000",
        ])
        .args(["--layer", "24:40:2600", "--out", data.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let model = [
        "--vmin",
        "2000",
        "--layer",
        "0:1:2000",
        "--data",
        data.to_str().unwrap(),
    ];
    for (command, extra, files) in [
        ("migrate", vec!["--memory", "100K"], vec!["image.npy"]),
        (
            "invert",
            vec!["--iterations", "2", "--step", "40"],
            vec!["misfit.json", "model-0001.npy", "model-0002.npy"],
        ),
    ] {
        let one = dir.join(format!("{command}-one"));
        let o = Command::new(PPWAVE)
            .arg(command)
            .args(geometry)
            .args(model)
            .args(&extra)
            .arg("--out")
            .arg(&one)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{command}: {}", text(&o));
        for p in [2, 3] {
            let here = dir.join(format!("{command}-{p}"));
            let mut a = geometry.to_vec();
            a.extend(model);
            a.extend(&extra);
            a.extend(["--out", here.to_str().unwrap()]);
            let o = mpiexec_command(p, command, &a);
            assert_eq!(o.status.code(), Some(0), "{command} -n {p}: {}", text(&o));
            for f in &files {
                same_file(&one.join(f), &here.join(f));
            }
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(here.join("run.json")).unwrap()).unwrap();
            assert_eq!(json["ranks"], p, "{command} -n {p}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
