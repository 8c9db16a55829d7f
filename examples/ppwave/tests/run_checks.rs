//! `ppwave run` never panics, aborts or writes a silently wrong result: buffers that grow with
//! nt are checked before the first step, parameters that do not fit the precision are refused,
//! a wavefield that stops being finite stops the run, and what the grid cannot carry is a
//! warning with the numbers.

mod common;

use common::*;
use ppstencil::io;

#[test]
fn step_counts_that_cannot_be_held_are_refused_before_the_first_step() {
    // Beyond the address space, beyond memory (with and without receivers).
    assert_rejected(
        "nt-max",
        &["--nt", "18446744073709551615"],
        &["invalid --nt = 18446744073709551615", "address"],
    );
    assert_rejected(
        "nt-huge",
        &["--nt", "100000000000"],
        &["invalid --nt = 100000000000", "GiB", "fewer steps"],
    );
    assert_rejected(
        "nt-huge-rec",
        &["--nt", "10000000000", "--receivers", "1:0:49:1"],
        &["invalid --nt = 10000000000", "50 receiver trace(s)"],
    );
}

#[test]
fn a_wavelet_that_overflows_is_refused_naming_its_flag() {
    // (π fpeak t)² overflows f32 from the second sample on: the paper's wavelet would be NaN.
    assert_rejected(
        "fpeak-huge",
        &["--fpeak", "1e25"],
        &["invalid --fpeak", "not finite in f32"],
    );
    // A delay of 1e154 s overflows even f64: the delay is named, not fpeak.
    assert_rejected(
        "delay-huge",
        &["--source-mode", "add", "--source-delay", "1e154"],
        &["invalid --source-delay", "not finite"],
    );
}

#[test]
fn values_that_vanish_in_the_run_precision_are_refused() {
    // (dt/dh)² = (1e-30 / 10)² = 1e-62: 0 in f32 (the wave would never move).
    assert_rejected(
        "dt-underflow",
        &["--dt", "1e-30"],
        &["invalid --dt", "underflows in f32", "--dh"],
    );
    // A float64 model value of 1e-50 m/s is 0 in f32: refused, though it is > 0.
    let model = scratch("tiny-v.npy");
    let mut m = gradient_model();
    m[(3, 4)] = 1e-50;
    io::write_npy(&model, &m).expect("write");
    let out = scratch("tiny-v-out");
    let o = ppwave(&[
        "run",
        "--velocity",
        model.to_str().unwrap(),
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
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--velocity") && err.contains("not a normal f32"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn options_that_do_not_apply_are_refused_not_recorded() {
    let model = scratch("vmin-model.npy");
    io::write_npy(&model, &gradient_model()).expect("write");
    let out = scratch("vmin-with-velocity");
    let base = [
        "run",
        "--velocity",
        model.to_str().unwrap(),
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
        "--out",
        out.to_str().unwrap(),
    ];
    let mut args = base.to_vec();
    args.extend(["--vmin", "3000"]);
    let o = ppwave(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--vmin applies only without --velocity"),
        "{err}"
    );
    // Without it, run.json does not claim a vmin.
    assert_ok(&ppwave(&base));
    let j = read_json(&out.join("run.json"));
    assert!(
        j["config"].get("vmin").is_none() && j["vmin"].is_null(),
        "{j}"
    );
    assert!(
        j["model"].as_str().unwrap().contains("--velocity file"),
        "{j}"
    );
}

#[test]
fn a_peak_frequency_the_grid_cannot_carry_is_a_warning_with_the_numbers() {
    // 2.5 x 200 Hz = 500 Hz; at 2000 m/s the wavelength is 4 m = 0.4 points of 10 m (by hand).
    // Nyquist of dt = 0.001 s is 500 Hz: 2.5 x 250 = 625 Hz is above it.
    let out = scratch("fpeak-warning");
    let o = run_small(&out, &["--fpeak", "250"]);
    assert_ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: --fpeak = 250"), "{err}");
    assert!(err.contains("0.320 grid points"), "{err}");
    assert!(
        err.contains("Nyquist frequency 1/(2 dt) = 5.0000e2 Hz"),
        "{err}"
    );
    let j = read_json(&out.join("run.json"));
    assert_eq!(j["warnings"].as_array().unwrap().len(), 2, "{j}");
    // The small problem's 25 Hz gets none (62.5 Hz: 3.2 points per wavelength).
    let out = scratch("fpeak-fine");
    let o = run_small(&out, &[]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    assert_eq!(
        read_json(&out.join("run.json"))["warnings"],
        serde_json::json!([])
    );
}

/// A source or receivers inside the absorbing layer: a warning naming the flag and the
/// points, not another flag's value (it once printed `--receivers = <fpeak>`).
#[test]
fn points_inside_the_layer_are_warnings_naming_their_flag() {
    let out = scratch("layer-warning");
    // SMALL's 40 x 50 grid, a 10-cell PML: row 5 lies in it (receivers at x = 20, 25, 30, X1
    // included), and so does column 4 (the source at row 20).
    let o = run_small(
        &out,
        &["--absorb", "10", "--receivers", "5:20:30:5", "--src-x", "4"],
    );
    assert_ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: --receivers: 3 of 3 receivers lie inside the 10-cell pml layer"),
        "{err}"
    );
    assert!(
        err.contains("warning: --src-x: the source (20, 4) lies inside the 10-cell pml layer"),
        "{err}"
    );
    assert!(!err.contains("--receivers = "), "{err}");
}

#[test]
fn negative_layer_rows_get_the_format_error_not_a_usage_error() {
    for (flag, value, needle) in [
        ("--layer", "-5:30:3000", "Z0 = `-5` is not a row number"),
        ("--receivers", "-1:0:10:1", "Z:X0:X1:STEP"),
    ] {
        let out = scratch("hyphen");
        let o = run_small(&out, &[flag, value]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(needle) && !err.contains("unexpected argument"),
            "{err}"
        );
    }
}

#[test]
fn too_many_threads_is_a_warning() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let many = (8 * cores).min(4096).to_string();
    let out = scratch("many-threads");
    let o = run_small(&out, &["--threads", &many]);
    assert_ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("warning: --threads = {many}")) && err.contains("cores"),
        "{err}"
    );
}

#[test]
fn a_finished_run_reports_a_finite_max() {
    // The NaN detection itself is tested in the library (a NaN planted in the field stops
    // the run at the step boundary); end to end, a finished run's max is finite and equals
    // the largest |p| of its wavefield.npy.
    let out = scratch("max-finite");
    assert_ok(&run_small(&out, &[]));
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    let max = p.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // f32 data: equal as f32 (JSON's text of the f64 may differ in the last bit).
    let reported = read_json(&out.join("run.json"))["max_abs_p"]
        .as_f64()
        .expect("a number");
    assert!(
        max > 0.0 && reported as f32 == max as f32,
        "{reported} vs {max}"
    );
}
