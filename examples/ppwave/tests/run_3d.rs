//! `ppwave run --ny N`: a 3D run writes (nz, ny, nx) fields equal to the library's 3D
//! simulator bit for bit, a seismogram (nt, nrec), the three-slice picture and run.json with
//! ny; bad 3D input is an error naming the flag, exit 2, nothing written.

mod common;

use common::*;
use ppstencil::solver::SourceMode;
use ppstencil::{Serial, WaveConfig, WaveSimulator};

/// The small problem made 3D: 40 x 20 x 50.
const NY: &[&str] = &["--ny", "20", "--src-y", "10"];

#[test]
fn a_3d_run_writes_3d_fields_equal_to_the_library() {
    let out = scratch("run-3d");
    let mut extra = NY.to_vec();
    extra.extend_from_slice(&[
        "--backend",
        "serial",
        "--source-mode",
        "add",
        "--absorb",
        "5",
        "--receivers",
        "10:10:0:49:7",
    ]);
    let o = run_small(&out, &extra);
    assert_ok(&o);
    let (header, p) = parse_npy_f32(&out.join("wavefield.npy"));
    assert!(header.contains("'shape': (40, 20, 50)"), "{header}");
    let (vh, v) = parse_npy_f32(&out.join("velocity.npy"));
    assert!(vh.contains("'shape': (40, 20, 50)"), "{vh}");
    // The layer 30:40:3000 covers rows 30.. of every plane.
    assert_eq!((v[29 * 1000 + 7], v[30 * 1000 + 7]), (2000.0, 3000.0));
    let (sh, s) = parse_npy_f32(&out.join("seismogram.npy"));
    assert!(sh.contains("'shape': (30, 8)"), "{sh}");
    let (w, h, _) = png_size(&out.join("wavefield.png"));
    assert!(w > 2 * h, "three slices side by side: {w} x {h}");
    let json = read_json(&out.join("run.json"));
    assert_eq!(json["ny"], 20);
    assert_eq!(json["src_y"], 10);
    assert_eq!(json["config"]["ny"], 20);
    // A 3D run's layer is the PML by default, as in 2D, and run.json records its profile.
    assert_eq!(json["boundary"], "pml");
    assert_eq!(json["pml"]["reflection"], 1e-4);
    assert_eq!(json["pml"]["alpha_default"], true);

    let config = WaveConfig {
        ny: 20,
        src_y: 10,
        source_mode: SourceMode::Add,
        absorb: 5,
        boundary: ppstencil::solver::Boundary::Pml,
        receivers_3d: (0..50).step_by(7).map(|x| (10, 10, x)).collect(),
        ..small_config(ppstencil::StepKernels::Fused)
    };
    let mut sim = WaveSimulator::<Serial, f32, 3>::with_config(Serial, config);
    sim.run().expect("library 3D run");
    let lib = sim.wavefield_host().expect("copy");
    assert!(lib.max_abs() > 0.0);
    assert_eq!(lib.as_slice(), &p[..]);
    assert_eq!(sim.seismogram().expect("traces").data, s);
}

/// `--time-block K:B` in 3D: the run is blocked in bands of z-planes, run.json records it,
/// and its wavefield and seismogram are `--time-block off`'s bit for bit (rayon, the sponge
/// and receivers in the bands); `auto` on this small grid stays unblocked and says why.
#[test]
fn a_blocked_3d_run_equals_the_unblocked_one_and_records_it() {
    let run = |name: &str, tb: &'static str, more: &[&'static str]| {
        let out = scratch(name);
        let mut extra = NY.to_vec();
        extra.extend_from_slice(&[
            "--backend",
            "rayon",
            "--threads",
            "2",
            "--absorb",
            "5",
            "--receivers",
            "10:10:0:49:7",
            "--time-block",
            tb,
        ]);
        extra.extend_from_slice(more);
        let o = run_small(&out, &extra);
        assert_ok(&o);
        let (_, p) = parse_npy_f32(&out.join("wavefield.npy"));
        let (_, s) = parse_npy_f32(&out.join("seismogram.npy"));
        (p, s, read_json(&out.join("run.json")))
    };
    // The sponge (with the PML, bands and tiles hold at least PML_HALO = 4 points).
    let sponge = ["--boundary", "sponge"];
    let (p0, s0, off) = run("run-3d-tb-off", "off", &sponge);
    let (p1, s1, on) = run("run-3d-tb-on", "4:3", &sponge);
    let (p2, _, auto) = run("run-3d-tb-auto", "auto", &sponge);
    // Tiles of y.
    let (p3, s3, tiled) = run("run-3d-tb-tiled", "4:3x5", &sponge);
    assert_eq!(tiled["time_block"], "4:3x5");
    assert_eq!(tiled["time_blocking"]["tile"], 5);
    assert_eq!(on["time_blocking"]["tile"], serde_json::Value::Null);
    assert_eq!(off["time_blocking"]["blocked"], false);
    assert_eq!(on["time_block"], "4:3");
    assert_eq!(on["time_blocking"]["blocked"], true);
    assert_eq!(on["time_blocking"]["depth"], 4);
    assert_eq!(on["time_blocking"]["band_planes"], 3);
    assert_eq!(auto["time_blocking"]["blocked"], false);
    let why = auto["time_blocking"]["what"].as_str().unwrap();
    assert!(why.contains("last-level cache"), "{why}");
    assert!(p0.iter().any(|&v| v != 0.0) && s0.iter().any(|&v| v != 0.0));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert!(
        bits(&p0) == bits(&p1) && bits(&p0) == bits(&p2),
        "wavefield"
    );
    assert!(bits(&s0) == bits(&s1), "seismogram");
    assert!(bits(&p0) == bits(&p3) && bits(&s0) == bits(&s3), "tiled");
}

#[test]
fn bad_3d_input_is_rejected_naming_the_flag_and_writes_nothing() {
    let with_ny = |extra: &[&'static str]| {
        let mut v = vec!["--ny", "20"];
        v.extend_from_slice(extra);
        v
    };
    let cases: Vec<(&str, Vec<&str>, &[&str])> = vec![
        (
            "src-y-without-ny",
            vec!["--src-y", "5"],
            &["--src-y applies only to a 3D run", "--ny"],
        ),
        (
            "src-y-border",
            with_ny(&["--src-y", "1"]),
            &["--src-y = 1", "2 <= src-y < 18"],
        ),
        (
            "ny-small",
            vec!["--ny", "4"],
            &["--ny = 4", "at least 5 planes"],
        ),
        (
            "receivers-y-outside",
            with_ny(&["--receivers", "10:20:0:10:1"]),
            &["--receivers = 10:20:0:10:1", "Y < 20"],
        ),
        (
            "receivers-x-outside",
            with_ny(&["--receivers", "10:3:0:50:1"]),
            &["--receivers = 10:3:0:50:1", "X1 < 50"],
        ),
        (
            "receivers-2d-line",
            with_ny(&["--receivers", "10:0:10:1"]),
            &["--receivers = 10:0:10:1", "Z:Y:X0:X1:STEP"],
        ),
        (
            "receivers-3d-line-in-2d",
            vec!["--receivers", "10:3:0:10:1"],
            &["--receivers = 10:3:0:10:1", "add --ny"],
        ),
        (
            "layer-outside",
            with_ny(&["--layer", "30:41:3000"]),
            &["--layer = 30:41:3000", "Z1 <= nz = 40"],
        ),
        (
            "absorb",
            with_ny(&["--absorb", "10"]),
            &["--absorb = 10", "40 x 20 x 50 grid: absorb <= 9"],
        ),
        (
            "memory",
            vec!["--ny", "3000", "--nz", "3000", "--nx", "3000"],
            &["--nz x --ny x --nx = 3000 x 3000 x 3000", "GiB"],
        ),
    ];
    for (name, extra, needles) in cases {
        assert_rejected(name, &extra, needles);
    }
}

#[test]
fn velocity_files_of_the_other_dimensionality_are_rejected() {
    let dir = scratch("vel-3d");
    std::fs::create_dir_all(&dir).expect("dir");
    let two = dir.join("v2.npy");
    let three = dir.join("v3.npy");
    let bytes = |n: usize| {
        (0..n)
            .flat_map(|_| 2000.0f32.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    write_raw_npy(&two, "<f4", "(40, 50)", &bytes(2000));
    write_raw_npy(&three, "<f4", "(40, 20, 50)", &bytes(40_000));
    let (two, three) = (two.to_str().unwrap(), three.to_str().unwrap());
    // The small problem's layer lies in the models; --vmin must go with --velocity, so the
    // cases start from the grid flags only.
    let bad = |name: &str, args: &[&str], needles: &[&str]| {
        let out = scratch(&format!("bad-{name}"));
        let mut all = vec!["run", "--nt", "5", "--out", out.to_str().unwrap()];
        all.extend_from_slice(args);
        let o = ppwave(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: `{err}` should mention `{n}`");
        }
        assert!(!out.exists());
    };
    bad(
        "v2-in-3d",
        &["--ny", "20", "--velocity", two],
        &["--velocity", "3D (nz, ny, nx)"],
    );
    bad(
        "v3-in-2d",
        &["--velocity", three],
        &["--velocity", "a 3D model needs --ny"],
    );
    bad(
        "v3-wrong-ny",
        &["--ny", "21", "--velocity", three],
        &["--ny = 21", "40 x 20 x 50"],
    );
    // The right one runs, its shape setting the grid.
    let out = scratch("v3-ok");
    let o = ppwave(&[
        "run",
        "--nt",
        "5",
        "--ny",
        "20",
        "--velocity",
        three,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let (header, _) = parse_npy_f32(&out.join("wavefield.npy"));
    assert!(header.contains("'shape': (40, 20, 50)"), "{header}");
}
