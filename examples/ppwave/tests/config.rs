//! `ppwave run --config FILE`: TOML config files, flags overriding them, and errors naming the key.

mod common;

use common::*;
use ppstencil::StepKernels;

/// The SMALL problem as a config file.
const SMALL_TOML: &str = r#"
nz = 40
nx = 50
nt = 20
dt = 0.001
dh = 10
src-z = 20
src-x = 25
fpeak = 25
vmin = 2000
layer = ["30:40:3000"]
backend = "serial"
"#;

#[test]
fn config_file_is_read_and_flags_override_it() {
    let dir = scratch("config");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let toml = dir.join("run.toml");
    // `out` is relative to the file's directory.
    std::fs::write(&toml, format!("{SMALL_TOML}out = \"result\"\n")).expect("write");
    let o = ppwave(&[
        "run",
        "--config",
        toml.to_str().expect("utf-8"),
        "--nt",
        "30",
    ]);
    assert_ok(&o);
    let out = dir.join("result");
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    let want = library_wavefield(small_config(StepKernels::Fused));
    assert_eq!(
        p,
        as_f64(&want),
        "nt = 30 from the flag, the rest from the file"
    );
    let j = read_json(&out.join("run.json"));
    assert_eq!(
        (j["nt"].clone(), j["backend"].clone()),
        (30.into(), "serial".into())
    );

    // run.json's "config" object is a config file: turned into TOML, it repeats the run.
    let config = &j["config"];
    assert_eq!(config["nt"], 30);
    assert_eq!(config["layer"], serde_json::json!(["30:40:3000"]));
    assert!(config.get("config").is_none());
    let again = dir.join("again.toml");
    let mut config = config.clone();
    config["out"] = dir.join("again").to_str().expect("utf-8").into();
    std::fs::write(&again, toml::to_string(&config).expect("as TOML")).expect("write");
    assert_ok(&ppwave(&[
        "run",
        "--config",
        again.to_str().expect("utf-8"),
    ]));
    let (_, q) = parse_npy(&dir.join("again/wavefield.npy"));
    assert_eq!(p, q);
}

#[test]
fn bad_config_files_name_the_key_and_write_nothing() {
    let dir = scratch("bad-config");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "typo",
            "space_order = 8",
            &["unknown key `space_order`", "did you mean `space-order`?"],
        ),
        (
            "typo2",
            "absorbing = 8",
            &["unknown key `absorbing`", "did you mean `absorb`?"],
        ),
        (
            "type",
            "absorb = \"4\"",
            &["`absorb = \"4\"`", "a whole number"],
        ),
        (
            "float",
            "snapshot-every = 2.5",
            &["`snapshot-every = 2.5`", "a whole number"],
        ),
        (
            "list",
            "receivers = \"1:2:3:1\"",
            &["`receivers = \"1:2:3:1\"`", "an array of \"Z:X0:X1:STEP\""],
        ),
        (
            "enum",
            "precision = \"f16\"",
            &["`precision", "\"f32\", \"f64\""],
        ),
        ("syntax", "nz = = 4", &["not valid TOML"]),
        // A value from the file that fails a range check says where it came from.
        (
            "range",
            "space-order = 3",
            &["--space-order = 3", "`space-order` is set in --config"],
        ),
    ];
    for (name, line, needles) in cases {
        let toml = dir.join(format!("{name}.toml"));
        std::fs::write(&toml, format!("{SMALL_TOML}{line}\n")).expect("write");
        let out = dir.join(format!("out-{name}"));
        let o = ppwave(&[
            "run",
            "--config",
            toml.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{name}: `{err}` should mention `{n}`");
        }
        assert!(!out.exists(), "{name}: no output");
    }
    assert_rejected(
        "config-missing",
        &["--config", "/nonexistent/run.toml"],
        &["--config", "run.toml", "cannot read"],
    );
}

#[test]
fn a_run_json_repeats_its_run() {
    let first = scratch("json-first");
    assert_ok(&run_small(
        &first,
        &["--receivers", "5:5:45:5", "--space-order", "6"],
    ));
    let json = first.join("run.json");
    // Its "out" is the first run's directory: a new --out is needed (never the same files).
    let o = ppwave(&["run", "--config", json.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--out") && err.contains("run.json"), "{err}");
    let second = scratch("json-second");
    assert_ok(&ppwave(&[
        "run",
        "--config",
        json.to_str().unwrap(),
        "--out",
        second.to_str().unwrap(),
    ]));
    for f in ["wavefield.npy", "seismogram.npy", "velocity.npy"] {
        assert_eq!(
            std::fs::read(first.join(f)).unwrap(),
            std::fs::read(second.join(f)).unwrap(),
            "{f}: the same run"
        );
    }
    // The same options, but for --out.
    let (mut a, mut b) = (
        read_json(&json)["config"].clone(),
        read_json(&second.join("run.json"))["config"].clone(),
    );
    a["out"] = serde_json::Value::Null;
    b["out"] = serde_json::Value::Null;
    assert_eq!(a, b);
    // JSON that is not a ppwave run.json says what to pass.
    let other = scratch("json-other.json");
    std::fs::write(&other, "{\"nz\": 40}").unwrap();
    let o = ppwave(&["run", "--config", other.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a run.json written by ppwave") && err.contains("TOML"),
        "{err}"
    );
}
