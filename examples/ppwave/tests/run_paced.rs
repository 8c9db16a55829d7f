//! Pacing (`PPSTENCIL_PACING`): a run whose blocks switch between all of the pool's threads
//! and one fewer gives the wavefield and seismogram of an unpaced run bit for bit, in 2D and
//! 3D, blocked or not, and run.json records the steps run narrow; a bad value is refused
//! with the variable, the value and the values accepted, and nothing is written.

mod common;

use common::*;
use std::path::Path;

/// `ppwave run` with `PPSTENCIL_PACING=pacing`: the process's output.
fn ppwave_paced(pacing: &str, args: &[String]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ppwave"))
        .env("PPSTENCIL_PACING", pacing)
        .arg("run")
        .args(args)
        .output()
        .expect("ppwave starts")
}

/// The wavefield's and the seismogram's bits and run.json of a run into `out`.
fn run(out: &Path, pacing: &str, args: &[String]) -> (Vec<u32>, Vec<u32>, serde_json::Value) {
    let mut args = args.to_vec();
    args.extend(["--out".into(), out.to_str().expect("utf-8").into()]);
    assert_ok(&ppwave_paced(pacing, &args));
    let bits = |name: &str| -> Vec<u32> {
        let (_, v) = parse_npy_f32(&out.join(name));
        v.iter().map(|x| x.to_bits()).collect()
    };
    let json = read_json(&out.join("run.json"));
    (bits("wavefield.npy"), bits("seismogram.npy"), json)
}

/// A small problem of `dims` dimensions with a sponge and receivers on rayon.
fn args(dims: usize, threads: usize, tb: &str) -> Vec<String> {
    let grid = if dims == 2 {
        "--nz 120 --nx 100 --src-z 50 --src-x 50 --receivers 30:5:95:10"
    } else {
        "--nz 48 --ny 20 --nx 20 --src-z 20 --src-y 10 --src-x 10 --receivers 12:10:2:17:3"
    };
    format!(
        "{grid} --nt 61 --dt 0.001 --dh 10 --fpeak 15 --vmin 2000 --layer 30:48:3000 \
         --absorb 6 --boundary sponge --source-mode add --backend rayon --threads {threads} \
         --time-block {tb}"
    )
    .split_whitespace()
    .map(String::from)
    .collect()
}

#[test]
fn switching_width_at_every_block_changes_no_bit_and_is_recorded() {
    for dims in [2, 3] {
        for threads in [2, 3] {
            for tb in ["off", "5"] {
                let a = args(dims, threads, tb);
                let tag = format!("paced-{dims}d-{threads}-{tb}");
                let (p, s, json) = run(&scratch(&format!("{tag}-off")), "off", &a);
                let (pa, sa, json_a) = run(&scratch(&format!("{tag}-alt")), "alternate", &a);
                assert!(p == pa && s == sa, "{tag}: the same bits");
                assert!(json["pacing"].is_null(), "{tag}: {}", json["pacing"]);
                let narrow = json_a["pacing"]["narrow_steps"].as_u64().expect("steps");
                assert!(narrow > 0 && narrow < 61, "{tag}: {narrow} narrow steps");
                let want = threads as u64 - 1;
                assert_eq!(json_a["pacing"]["narrow_threads"].as_u64(), Some(want));
            }
        }
    }
    // One thread: nothing to narrow.
    let (_, _, json) = run(&scratch("paced-one"), "alternate", &args(2, 1, "off"));
    assert!(json["pacing"].is_null(), "{}", json["pacing"]);
}

#[test]
fn a_bad_pacing_value_is_refused_naming_the_variable_and_writes_nothing() {
    for (name, value) in [("word", "sometimes"), ("number", "1"), ("case", "OFF x")] {
        let out = scratch(&format!("paced-bad-{name}"));
        let mut a = args(2, 2, "off");
        a.extend(["--out".into(), out.to_str().expect("utf-8").into()]);
        let o = ppwave_paced(value, &a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{value}: exits 2: {err}");
        let quoted = format!("invalid PPSTENCIL_PACING = \"{value}\"");
        assert!(err.contains(&quoted), "{value}: {err}");
        assert!(
            err.contains("PPSTENCIL_PACING=auto") && err.contains("off"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "{value}: a refused run writes nothing");
    }
}
