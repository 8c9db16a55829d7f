//! Results that would be silently zero are warned about (stderr and run.json's `warnings`)
//! or refused: receivers on the grid's border, whose traces are all zeros; a source delay
//! past the end of the run.

mod common;

use common::*;

#[test]
fn receivers_on_the_border_are_warned_about_and_do_record_zeros() {
    let out = scratch("zeros-border");
    let o = run_small(
        &out,
        &["--receivers", "0:5:45:20", "--receivers", "20:0:0:1"],
    );
    assert_ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: --receivers: 4 of the 4 receivers") && err.contains("only zeros"),
        "{err}"
    );
    let j = read_json(&out.join("run.json"));
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("only zeros")),
        "{j}"
    );
    // The warning is true: every trace is zero.
    let (_, s) = parse_npy(&out.join("seismogram.npy"));
    assert!(s.iter().all(|&v| v == 0.0));
    // Receivers inside: no such warning.
    let inside = scratch("zeros-inside");
    let o = run_small(&inside, &["--receivers", "5:5:45:20"]);
    assert_ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("only zeros"));
}

#[test]
fn a_source_delay_past_the_run_is_refused_or_warned_about() {
    // 30 steps of 1 ms: the run ends at 0.03 s; the 25 Hz wavelet spans 0.06 s each side.
    assert_rejected(
        "delay-past-end",
        &["--source-mode", "add", "--source-delay", "0.5"],
        &["--source-delay", "nothing would ever be injected"],
    );
    let out = scratch("zeros-late-peak");
    let o = run_small(&out, &["--source-mode", "add", "--source-delay", "0.05"]);
    assert_ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: --source-delay = 0.05"), "{err}");
    let j = read_json(&out.join("run.json"));
    assert!(j["max_abs_p"].as_f64().unwrap() > 0.0);
    assert!(j["warnings"].to_string().contains("--source-delay"));
}
