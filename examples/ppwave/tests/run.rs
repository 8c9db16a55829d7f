//! `ppwave run` end to end: the outputs of a small run and every solver option (space order,
//! absorbing layer, source mode, precision), each checked against the library run of the same
//! problem.

mod common;

use common::*;
use ppstencil::solver::SourceMode;
use ppstencil::{Rayon, StepKernels, WaveConfig, WaveSimulator};

#[test]
fn small_run_writes_its_files_and_matches_the_library() {
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
        [
            "run.json",
            "velocity.npy",
            "velocity.png",
            "wavefield.npy",
            "wavefield.png"
        ]
    );

    // The final wavefield equals the library's serial run of the same problem.
    let (header, p) = parse_npy_f32(&out.join("wavefield.npy"));
    assert_npy_header(&header, 40, 50);
    let expect = library_wavefield(small_config(StepKernels::Fused));
    assert!(expect.iter().any(|v| v.abs() > 1e-3), "the wave propagated");
    assert_eq!(p, expect);

    // The velocity model: 2000 m/s above row 30, 3000 m/s from row 30 down.
    let (header, v) = parse_npy_f32(&out.join("velocity.npy"));
    assert_npy_header(&header, 40, 50);
    for (k, &x) in v.iter().enumerate() {
        assert_eq!(x, if k / 50 < 30 { 2000.0 } else { 3000.0 }, "point {k}");
    }

    // The PNG signature and its IHDR, 8-bit RGB: the 50 x 40 grid drawn 900 x 720 (longest
    // side 900 px), plus 90 px of depth axis and 130 of colour bar, 60 px of x axis and 76 of
    // title band.
    let png = std::fs::read(out.join("wavefield.png")).expect("png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(
        u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
        1120
    );
    assert_eq!(
        u32::from_be_bytes([png[20], png[21], png[22], png[23]]),
        856
    );
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
    let mut sim =
        WaveSimulator::<Rayon>::with_config(Rayon::new(), small_config(StepKernels::Fused));
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

#[test]
fn space_order_8_matches_the_library_and_uses_its_own_cfl_limit() {
    let out = scratch("order8");
    assert_ok(&run_small(&out, &["--space-order", "8"]));
    let (header, p) = parse_npy(&out.join("wavefield.npy"));
    assert_npy_header(&header, 40, 50);
    let want = library_run::<f32>(WaveConfig {
        space_order: 8,
        ..small_config(StepKernels::Fused)
    });
    let want = want.wavefield_host().expect("copy").into_vec();
    assert_eq!(p, as_f64(&want));
    // Order 4 and order 8 differ (a different stencil really ran).
    let (_, p4) = parse_npy(&out_of_default_run("order8"));
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

#[test]
fn absorbing_layer_removes_most_of_the_boundary_reflection() {
    // 60 x 60 cells of 10 m, 2000 m/s, 25 Hz (80 m = 8 cells per wavelength), source in the
    // middle; after 0.3 s the direct wave has left the grid and only reflections remain.
    let energy = |absorb: &str, boundary: &[&str], kind: &str| {
        let out = scratch(&format!("absorb-{absorb}-{kind}"));
        let mut args = vec![
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
        ];
        args.extend_from_slice(boundary);
        let o = ppwave(&args);
        assert_ok(&o);
        let json = read_json(&out.join("run.json"));
        assert_eq!(json["absorb"], absorb.parse::<u32>().expect("n"));
        assert_eq!(json["boundary"], kind);
        assert_eq!(json["config"]["boundary"], kind);
        if kind == "pml" {
            // The defaults, recorded: R = 1e-4, N = 2, alpha = pi fpeak.
            assert_eq!(json["pml"]["reflection"], 1e-4);
            assert_eq!(json["pml"]["degree"], 2.0);
            let alpha = json["pml"]["alpha_max"].as_f64().expect("alpha");
            assert!(
                (alpha - std::f64::consts::PI * 25.0).abs() < 1e-9,
                "{alpha}"
            );
        } else {
            assert!(json["pml"].is_null());
        }
        let (_, p) = parse_npy(&out.join("wavefield.npy"));
        p.iter().map(|v| v * v).sum::<f64>()
    };
    let rigid = energy("0", &[], "rigid");
    let sponge = energy("16", &["--boundary", "sponge"], "sponge");
    let pml = energy("16", &[], "pml");
    assert!(rigid > 0.0);
    assert!(
        sponge < 0.05 * rigid,
        "absorbing layer left {sponge:e} of {rigid:e}"
    );
    // The PML (the default kind with --absorb) leaves far less than the sponge.
    assert!(pml < 0.01 * sponge, "pml left {pml:e}, sponge {sponge:e}");
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
        ..small_config(StepKernels::Fused)
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
fn f64_precision_writes_float64_and_agrees_with_f32() {
    let out64 = scratch("f64");
    assert_ok(&run_small(&out64, &["--precision", "f64"]));
    let (header, p64) = parse_npy(&out64.join("wavefield.npy"));
    assert!(header.contains("'<f8'"), "{header}");
    let want = library_run::<f64>(small_config(StepKernels::Fused));
    assert_eq!(p64, want.wavefield_host().expect("copy").into_vec());
    let (_, p32) = parse_npy(&out_of_default_run("f64"));
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
