//! Messages speak the user's terms: a library error names the flag typed (`--src-y`, not
//! `src_y`), 3D messages speak of planes and give all three sizes, numbers are printed
//! short, a bad `PPSTENCIL_LLC` fails before any size is chosen, an invalid `--time-block`
//! in a run names the flag, the value and the fix, and the 2D bench refuses
//! `--space-order`. Every refusal exits 2 and leaves no output.

mod common;

use common::*;
use std::process::Command;

/// `ppwave run ARGS --out <scratch>`: exit code and stderr, checked to leave no output.
fn refused(name: &str, args: &[&str], env: Option<(&str, &str)>) -> String {
    let out = scratch(&format!("msg-{name}"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ppwave"));
    cmd.arg("run")
        .args(args)
        .args(["--out", out.to_str().unwrap()]);
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let text = format!("{}{err}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?}: bad input exits 2; {text}"
    );
    assert!(!out.exists(), "{args:?} must leave no output");
    assert!(!text.contains("panicked"), "{text}");
    text
}

fn assert_mentions(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "`{text}` should mention `{n}`");
    }
}

/// No library field name (`src_y`, `nt =` without its flag) reaches the user.
fn assert_no_field_names(text: &str) {
    for field in [
        "src_y",
        "src_z",
        "src_x",
        " ny ",
        " ny = ",
        "invalid nt",
        "invalid dt",
    ] {
        assert!(!text.contains(field), "`{text}` names the field `{field}`");
    }
}

#[test]
fn library_errors_name_the_flag_typed() {
    let small = ["--nz", "40", "--nx", "40"];
    for (name, args, needles) in [
        (
            "src-y",
            &["--ny", "5", "--src-y", "9"][..],
            &["invalid --src-y = 9", "2 <= src-y < 3"][..],
        ),
        (
            "src-z",
            &["--src-z", "99999"][..],
            &["invalid --src-z = 99999", "src-z < 38"][..],
        ),
        ("nt", &["--nt", "0"][..], &["invalid --nt = 0"][..]),
        (
            "dt",
            &["--dt", "-1"][..],
            &["invalid --dt = -1", "greater than 0"][..],
        ),
        (
            "ny0",
            &["--ny", "0"][..],
            &["invalid --ny = 0", "use --ny = 1 for a 2D run"][..],
        ),
        (
            "absorb",
            &["--absorb", "30"][..],
            &["invalid --absorb = 30", "absorb <= 19"][..],
        ),
    ] {
        let args: Vec<&str> = small.iter().chain(args).copied().collect();
        let text = refused(name, &args, None);
        assert_mentions(&text, needles);
        assert_no_field_names(&text);
    }
}

#[test]
fn three_d_messages_speak_of_planes_and_give_three_sizes() {
    let cube = ["--nz", "40", "--ny", "40", "--nx", "40"];
    for (name, extra, needles) in [
        (
            "3d-src-z",
            &["--src-z", "99"][..],
            &["invalid --src-z = 99", "source plane along z"][..],
        ),
        (
            "3d-src-x",
            &["--src-x", "99"][..],
            &["invalid --src-x = 99", "source plane along x"][..],
        ),
        (
            "3d-absorb",
            &["--absorb", "30"][..],
            &["half the 40 x 40 x 40 grid"][..],
        ),
        (
            "3d-layer",
            &["--layer", "9:3:3000"][..],
            &["planes along z [Z0, Z1)"][..],
        ),
    ] {
        let args: Vec<&str> = cube.iter().chain(extra).copied().collect();
        let text = refused(name, &args, None);
        assert_mentions(&text, needles);
        assert!(
            !text.contains(" row") && !text.contains(" column"),
            "{text}"
        );
    }
    let text = refused("3d-nx", &["--nz", "40", "--ny", "40", "--nx", "3"], None);
    assert_mentions(&text, &["invalid --nx = 3", "at least 5 planes along x"]);
    let huge = "4294967296";
    let text = refused("3d-huge", &["--nz", huge, "--ny", huge, "--nx", huge], None);
    assert_mentions(
        &text,
        &["invalid --nz x --ny x --nx = 4294967296 x 4294967296 x 4294967296"],
    );
}

#[test]
fn numbers_are_printed_short() {
    for (name, args, needles) in [
        (
            "dt-tiny",
            &["--dt", "1e-300"][..],
            &["invalid --dt = 1e-300"][..],
        ),
        (
            "dt-huge",
            &["--dt", "1e300"][..],
            &["invalid --dt = 1e300", "= 1.6000e303"][..],
        ),
        ("dh-tiny", &["--dh", "1e-300"][..], &["/1e-300 = "][..]),
        (
            "vmin-huge",
            &["--vmin", "1e300"][..],
            &["= 1e300*0.0002/3"][..],
        ),
        (
            "fpeak-huge",
            &["--fpeak", "1e300"][..],
            &["invalid --fpeak = 1e300"][..],
        ),
        (
            "vmin-tiny",
            &["--vmin", "1e-300"][..],
            &["between 1.175494e-38 and"][..],
        ),
    ] {
        let text = refused(name, args, None);
        assert_mentions(&text, needles);
        assert!(!text.contains("0000000000"), "a long number: {text}");
        assert!(text.len() < 600, "{} characters: {text}", text.len());
    }
}

#[test]
fn a_bad_llc_override_fails_before_any_size_is_printed() {
    let text = refused(
        "llc",
        &["--nz", "40", "--nx", "40", "--nt", "2"],
        Some(("PPSTENCIL_LLC", "garbage")),
    );
    assert_mentions(
        &text,
        &["invalid PPSTENCIL_LLC = \"garbage\"", "PPSTENCIL_LLC=32M"],
    );
    assert!(!text.contains("using"), "{text}");
    assert!(!text.contains("MiB") && !text.contains("sysfs"), "{text}");
    assert_eq!(text.matches("PPSTENCIL_LLC =").count(), 1, "{text}");
}

#[test]
fn an_invalid_time_block_names_the_flag_the_value_and_the_fix() {
    for (name, dims) in [("tb-2d", &[][..]), ("tb-3d", &["--ny", "40"][..])] {
        let args: Vec<&str> = [
            "--nz",
            "40",
            "--nx",
            "40",
            "--nt",
            "4",
            "--time-block",
            "2:1",
        ]
        .iter()
        .chain(dims)
        .copied()
        .collect();
        let text = refused(name, &args, None);
        assert_mentions(
            &text,
            &[
                "invalid --time-block = 2:1",
                "use at least 2 ",
                "--time-block auto",
            ],
        );
        assert!(!text.contains("the simulation failed"), "{text}");
        if dims.is_empty() {
            assert_mentions(&text, &["rows"]);
        } else {
            assert_mentions(&text, &["planes along z"]);
            assert!(!text.contains(" row"), "{text}");
        }
    }
}
#[test]
fn the_2d_bench_refuses_space_order() {
    let o = ppwave(&[
        "bench",
        "--nz",
        "24",
        "--nx",
        "40",
        "--repeat",
        "1",
        "--backend",
        "serial",
        "--space-order",
        "8",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_mentions(&err, &["--space-order 8", "--ny N", "drop --space-order"]);
    assert!(
        o.stdout.is_empty(),
        "nothing runs: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}
