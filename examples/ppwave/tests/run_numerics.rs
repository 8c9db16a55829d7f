//! `--numerics` and `--subnormals` end to end: exact arithmetic gives the same bits on every
//! instruction set (`PPSTENCIL_SIMD`), backend and schedule; fast arithmetic is bit-identical
//! between serial, rayon and blocked runs and within a stated tolerance of exact; flushing
//! removes the subnormals that keeping leaves; run.json records what ran.

mod common;

use common::*;
use std::process::Command;

/// Runs the small problem (2D, or 3D with `--ny 12`) for `nt` steps with `extra` flags and
/// `PPSTENCIL_SIMD=simd` (when given); returns the final wavefield as f64 and run.json.
fn run(name: &str, nt: &str, simd: Option<&str>, extra: &[&str]) -> (Vec<f64>, serde_json::Value) {
    run_problem(name, &[SMALL, &["--nt", nt]].concat(), simd, extra)
}

/// Runs `ppwave run` with the `problem` flags, then `extra`, under `PPSTENCIL_SIMD=simd`
/// (when given); returns the final wavefield as f64 and run.json.
fn run_problem(
    name: &str,
    problem: &[&str],
    simd: Option<&str>,
    extra: &[&str],
) -> (Vec<f64>, serde_json::Value) {
    let out = scratch(name);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ppwave"));
    cmd.arg("run").args(problem).args(extra);
    cmd.args(["--out", out.to_str().expect("utf-8 path")]);
    if let Some(level) = simd {
        cmd.env("PPSTENCIL_SIMD", level);
    }
    let o = cmd.output().expect("ppwave starts");
    assert_ok(&o);
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    (p, read_json(&out.join("run.json")))
}

/// Keeps `p` as the first result, or asserts it has the first result's bits.
fn same_as_first(first: &mut Option<Vec<f64>>, p: Vec<f64>, what: &str) {
    match first {
        None => *first = Some(p),
        Some(f) => assert!(
            f.iter().zip(&p).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{what}: differs from the first run"
        ),
    }
}

const LEVELS: [Option<&str>; 4] = [None, Some("baseline"), Some("avx2"), Some("avx512")];

#[test]
fn exact_arithmetic_is_the_same_bits_on_every_instruction_set_backend_and_schedule() {
    for (dims, shape) in [("2d", &[][..]), ("3d", &["--ny", "12", "--src-y", "6"][..])] {
        for subnormals in ["keep", "flush"] {
            let mut reference = None;
            for (k, simd) in LEVELS.into_iter().enumerate() {
                for schedule in [
                    &["--backend", "serial"][..],
                    &[
                        "--backend",
                        "rayon",
                        "--threads",
                        "2",
                        "--time-block",
                        "off",
                    ],
                    &[
                        "--backend",
                        "rayon",
                        "--threads",
                        "2",
                        "--time-block",
                        "3:4",
                    ],
                ] {
                    let mut extra = vec!["--numerics", "exact", "--subnormals", subnormals];
                    extra.extend_from_slice(shape);
                    extra.extend_from_slice(schedule);
                    let name = format!("exact-{dims}-{subnormals}-{k}-{}", schedule.len());
                    let (p, json) = run(&name, "40", simd, &extra);
                    assert_eq!(json["numerics"]["arithmetic"], "exact");
                    assert_eq!(json["numerics"]["subnormals"], subnormals);
                    assert_ne!(
                        json["numerics"]["simd"], "avx512",
                        "exact runs 256 bits at most"
                    );
                    let what = format!("{dims} {subnormals} {simd:?} {schedule:?}");
                    same_as_first(&mut reference, p, &what);
                }
            }
        }
    }
}

/// Fast arithmetic: one result for every backend and schedule on one instruction set;
/// within 1e-5 of exact's largest value in f32 (1e-13 in f64) after 60 steps; on a CPU
/// without FMA (the baseline) exactly exact, as run.json says.
#[test]
fn fast_arithmetic_is_one_result_per_instruction_set_and_close_to_exact() {
    for (precision, tolerance) in [("f32", 1e-5), ("f64", 1e-13)] {
        let common = [
            "--precision",
            precision,
            "--absorb",
            "8",
            "--boundary",
            "pml",
        ];
        let (exact, _) = run(
            "fast-exact",
            "60",
            None,
            &[&["--numerics", "exact"][..], &common].concat(),
        );
        let peak = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(peak > 1e-3, "the wave propagated");
        for simd in LEVELS {
            let mut first: Option<Vec<f64>> = None;
            for schedule in [
                &["--backend", "serial"][..],
                &[
                    "--backend",
                    "rayon",
                    "--threads",
                    "2",
                    "--time-block",
                    "off",
                ],
                &[
                    "--backend",
                    "rayon",
                    "--threads",
                    "2",
                    "--time-block",
                    "4:6",
                ],
            ] {
                let extra = [&["--numerics", "fast"][..], &common, schedule].concat();
                let (p, json) = run("fast", "60", simd, &extra);
                let ran = json["numerics"]["arithmetic"]
                    .as_str()
                    .expect("recorded")
                    .to_string();
                assert_eq!(json["numerics"]["asked"]["arithmetic"], "fast");
                if simd == Some("baseline") {
                    assert_eq!(ran, "exact", "no FMA on the baseline");
                    assert!(p
                        .iter()
                        .zip(&exact)
                        .all(|(a, b)| a.to_bits() == b.to_bits()));
                } else {
                    let worst = p
                        .iter()
                        .zip(&exact)
                        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                    assert!(
                        worst <= tolerance * peak,
                        "{precision} {simd:?}: {worst:e} vs peak {peak:e}"
                    );
                }
                let what = format!("fast {precision} {simd:?} {schedule:?}");
                same_as_first(&mut first, p, &what);
            }
        }
    }
}

/// The leading edge of a wave decays below the smallest normal `f32` about 16 steps from
/// where it starts (each step multiplies it by about (kv2 / 12) = 1/300): on a 100 x 100 grid
/// after 20 steps, kept, some subnormals remain; flushed, none do, and the two runs agree
/// everywhere else to within the flushed values' size.
#[test]
fn flushing_removes_the_subnormals_that_keeping_leaves() {
    let subnormal = |v: &f64| (*v as f32).is_subnormal();
    let problem = [
        "--nz", "100", "--nx", "100", "--nt", "20", "--dt", "0.001", "--dh", "10", "--src-z", "50",
        "--src-x", "50", "--fpeak", "25", "--vmin", "2000",
    ];
    let run = |name: &str, mode: &str| run_problem(name, &problem, None, &["--subnormals", mode]);
    let (kept, _) = run("keep", "keep");
    let (flushed, json) = run("flush", "flush");
    assert_eq!(json["numerics"]["subnormals"], "flush");
    assert!(
        kept.iter().any(subnormal),
        "the run has subnormals to flush"
    );
    assert!(!flushed.iter().any(subnormal));
    let worst = kept
        .iter()
        .zip(&flushed)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst < 1e-30, "{worst:e}");
}
