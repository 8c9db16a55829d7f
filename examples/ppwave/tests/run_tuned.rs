//! `--time-block auto` with its band chosen by timing (`ppstencil::solver::tuning`), in 2D and
//! 3D: a run long enough tries the plan's band, a half and a quarter of it and the unblocked
//! step for two blocks each, keeps one of them, records all four in run.json, and gives
//! `--time-block off`'s wavefield and seismogram bit for bit; a shorter run or a fixed band is
//! not tuned.
//!
//! The grids are small, so `PPSTENCIL_LLC=2M` makes `auto` block them (fields beyond half of
//! it) in bands of 64 rows (planes) of 16 steps (the wavefront fits in a quarter of it).

mod common;

use common::*;
use std::path::Path;

/// Steps that the tuning may take at most a quarter of: 1 warm-up and 4 candidates x 2
/// rounds, 9 blocks of 16 steps, 4 times.
const TUNED_NT: usize = 16 * 9 * 4;

/// `ppwave run` with `PPSTENCIL_LLC=2M`: its wavefield, seismogram and run.json.
fn run(out: &Path, args: &[String]) -> (Vec<f32>, Vec<f32>, serde_json::Value) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ppwave"))
        .env("PPSTENCIL_LLC", "2M")
        .arg("run")
        .args(args)
        .args(["--out", out.to_str().expect("utf-8")])
        .output()
        .expect("ppwave starts");
    assert_ok(&o);
    let (_, p) = parse_npy_f32(&out.join("wavefield.npy"));
    let (_, s) = parse_npy_f32(&out.join("seismogram.npy"));
    (p, s, read_json(&out.join("run.json")))
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The problem of `dims` dimensions (a PML of 5 cells, receivers, rayon on 2 threads),
/// `nt` steps, `--time-block tb`.
fn args(dims: usize, nt: usize, tb: &str) -> Vec<String> {
    let grid = if dims == 2 {
        "--nz 300 --nx 300 --src-z 100 --src-x 150 --receivers 60:5:295:10"
    } else {
        "--nz 300 --ny 16 --nx 16 --src-z 120 --src-y 8 --src-x 8 --receivers 60:8:2:13:1"
    };
    format!(
        "{grid} --nt {nt} --dt 0.001 --dh 10 --fpeak 15 --vmin 2000 --layer 150:200:3000 \
         --absorb 5 --backend rayon --threads 2 --time-block {tb}"
    )
    .split_whitespace()
    .map(String::from)
    .collect()
}

#[test]
fn auto_times_three_bands_keeps_one_and_equals_the_unblocked_run_in_2d_and_3d() {
    for dims in [2, 3] {
        let band_key = if dims == 2 {
            "band_rows"
        } else {
            "band_planes"
        };
        let (p0, s0, _) = run(
            &scratch(&format!("tuned-{dims}d-off")),
            &args(dims, TUNED_NT, "off"),
        );
        let (p1, s1, json) = run(
            &scratch(&format!("tuned-{dims}d")),
            &args(dims, TUNED_NT, "auto"),
        );
        let tb = &json["time_blocking"];
        let trials = tb["band_trials"].as_array().expect("band_trials");
        let bands: Vec<u64> = trials.iter().filter_map(|t| t["band"].as_u64()).collect();
        assert_eq!(bands, [64, 32, 16], "{dims}D: {tb}");
        assert_eq!(trials.len(), 4, "{dims}D: {tb}");
        assert_eq!(trials[3]["unblocked"], true, "{dims}D: {tb}");
        for t in trials {
            assert_eq!(t["blocks"], 2, "{t}");
            assert!(t["ms_per_step"].as_f64().is_some_and(|ms| ms > 0.0), "{t}");
        }
        let what = tb["what"].as_str().unwrap();
        // The fastest candidate is kept: a band, or one step per pass.
        if tb["blocked"] == true {
            assert_eq!(tb["depth"], 16, "{tb}");
            let kept = tb[band_key].as_u64().expect("band");
            assert!(bands.contains(&kept), "{dims}D: kept {kept} of {bands:?}");
            assert!(what.contains(&format!("bands of {kept} rows")), "{what}");
        } else {
            assert!(what.contains("one step per pass timed fastest"), "{what}");
        }
        assert!(p0.iter().any(|&v| v != 0.0) && s0.iter().any(|&v| v != 0.0));
        assert!(bits(&p0) == bits(&p1), "{dims}D: wavefield");
        assert!(bits(&s0) == bits(&s1), "{dims}D: seismogram");
    }
}

#[test]
fn a_short_run_or_a_fixed_band_is_not_tuned() {
    for (name, nt, tb, band) in [
        ("short", TUNED_NT - 1, "auto", 64),
        ("fixed", TUNED_NT, "16:32", 32),
        ("depth", TUNED_NT, "16", 64),
    ] {
        let (_, _, json) = run(&scratch(&format!("untuned-{name}")), &args(2, nt, tb));
        let tb = &json["time_blocking"];
        assert_eq!(tb["band_trials"], serde_json::Value::Null, "{name}: {tb}");
        assert_eq!(tb["band_rows"], band, "{name}: {tb}");
    }
}

/// A 3D grid whose planes are too large for whole-plane bands under `PPSTENCIL_LLC=2M`, so
/// `auto` plans tiles of y: a run too short to time the tiled plan against the unblocked step
/// runs unblocked and says why; a long one times both (two candidates in run.json). Both give
/// `--time-block off`'s wavefield bit for bit.
#[test]
fn a_tiled_auto_plan_is_kept_only_where_it_was_timed() {
    let args = |nt: usize, tb: &str| -> Vec<String> {
        format!(
            "--nz 60 --ny 64 --nx 64 --src-z 30 --src-y 32 --src-x 32 --receivers 40:32:2:61:4 \
             --nt {nt} --dt 0.001 --dh 10 --vmin 2000 --backend rayon --threads 2 --time-block {tb}"
        )
        .split_whitespace()
        .map(String::from)
        .collect()
    };
    for (nt, candidates) in [(20, 0), (200, 2)] {
        let (p0, s0, _) = run(&scratch(&format!("tiled-off-{nt}")), &args(nt, "off"));
        let (p1, s1, json) = run(&scratch(&format!("tiled-auto-{nt}")), &args(nt, "auto"));
        let tb = &json["time_blocking"];
        let what = tb["what"].as_str().expect("what");
        if candidates == 0 {
            assert_eq!(tb["blocked"], false, "{tb}");
            assert!(what.contains("a tiled plan is kept only"), "{what}");
            assert_eq!(tb["band_trials"], serde_json::Value::Null, "{tb}");
        } else {
            let trials = tb["band_trials"].as_array().expect("band_trials");
            assert_eq!(trials.len(), candidates, "{tb}");
            assert_eq!(trials[1]["unblocked"], true, "{tb}");
        }
        assert!(p0.iter().any(|&v| v != 0.0));
        assert!(bits(&p0) == bits(&p1), "{nt} steps: wavefield");
        assert!(bits(&s0) == bits(&s1), "{nt} steps: seismogram");
    }
}
