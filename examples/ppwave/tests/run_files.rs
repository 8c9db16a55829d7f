//! `ppwave run` with the files it reads and writes beyond the final wavefield: receivers and their
//! seismogram, velocity models, snapshots.

mod common;

use common::*;
use ppstencil::model::VelocityModel;
use ppstencil::receivers::ReceiverLine;
use ppstencil::solver::Layer;
use ppstencil::{io, HostField, StepKernels, WaveConfig};

#[test]
fn receivers_write_the_seismogram_of_the_library() {
    let out = scratch("receivers");
    let rfile = scratch("receivers.txt");
    std::fs::write(&rfile, "# z x\n30 10\n35, 40\n").expect("write");
    assert_ok(&run_small(
        &out,
        &[
            "--receivers",
            "5:5:45:5",
            "--receivers",
            "20:25:25:1",
            "--receiver-file",
            rfile.to_str().expect("utf-8"),
        ],
    ));
    // 9 + 1 + 2 receivers, 30 time samples.
    let (header, s) = parse_npy(&out.join("seismogram.npy"));
    assert_npy_header(&header, 30, 12);
    let mut config = small_config(StepKernels::Fused);
    config.add_receiver_line("5:5:45:5".parse::<ReceiverLine>().expect("line"));
    config.receivers.extend([(20, 25), (30, 10), (35, 40)]);
    let sim = library_run::<f32>(config);
    let want = sim.seismogram().expect("recorded");
    assert_eq!((want.nt, want.nrec), (30, 12));
    assert_eq!(s, as_f64(&want.data));
    // Receiver 9 sits on the source: its last sample is the final pressure there.
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    assert_eq!(s[29 * 12 + 9], p[20 * 50 + 25]);
    assert!(
        s.iter().any(|v| v.abs() > 1e-6),
        "the receivers recorded the wave"
    );
    // The gather picture: fixed size, RGB.
    assert_eq!(
        png_size(&out.join("seismogram.png")),
        (
            ppwave::figures::gather::GATHER_SIZE.0,
            ppwave::figures::gather::GATHER_SIZE.1,
            2
        )
    );
    let j = read_json(&out.join("run.json"));
    assert_eq!(j["receivers"], 12);
    assert_eq!(
        j["config"]["gather-gain"], "none",
        "the default gain, written out"
    );
    assert_eq!(
        j["config"]["receivers"],
        serde_json::json!(["5:5:45:5", "20:25:25:1"])
    );
    assert!(j["files"]
        .as_array()
        .expect("files")
        .contains(&"seismogram.png".into()));

    // Without receivers, no seismogram files.
    let none = scratch("no-receivers");
    assert_ok(&run_small(&none, &[]));
    assert!(!none.join("seismogram.npy").exists() && !none.join("seismogram.png").exists());
}

#[test]
fn velocity_file_round_trips_and_layers_apply_on_top() {
    let model = gradient_model();
    for (name, f32_file) in [("v64.npy", false), ("v32.npy", true)] {
        let path = scratch(name);
        if f32_file {
            let m32 = HostField::<f32>::from_fn(40, 50, |z, x| model[(z, x)] as f32).expect("f32");
            io::write_npy(&path, &m32).expect("write");
        } else {
            io::write_npy(&path, &model).expect("write");
        }
        let out = scratch(&format!("velocity-{name}"));
        let o = ppwave(&[
            "run",
            "--velocity",
            path.to_str().expect("utf-8"),
            "--nt",
            "30",
            "--dt",
            "0.001",
            "--dh",
            "10",
            "--src-z",
            "20",
            "--src-x",
            "25",
            "--fpeak",
            "25",
            "--layer",
            "35:40:3000",
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        assert_ok(&o);
        let mut config = WaveConfig {
            layers: vec![Layer {
                z0: 35,
                z1: 40,
                velocity: 3000.0,
            }],
            ..small_config(StepKernels::Fused)
        };
        config.set_velocity_model(
            VelocityModel::new(40, 50, model.as_slice().to_vec()).expect("valid"),
        );
        let sim = library_run::<f32>(config);
        let (header, p) = parse_npy(&out.join("wavefield.npy"));
        assert_npy_header(&header, 40, 50);
        assert_eq!(
            p,
            as_f64(&sim.wavefield_host().expect("copy").into_vec()),
            "{name}"
        );
        // The model written back: the file's values, the layer on top, no paper layers.
        let (_, v) = parse_npy(&out.join("velocity.npy"));
        for (k, &x) in v.iter().enumerate() {
            let want = if k / 50 >= 35 {
                3000.0
            } else {
                model.as_slice()[k] as f32 as f64
            };
            assert_eq!(x, want, "point {k}");
        }
        let j = read_json(&out.join("run.json"));
        assert_eq!((j["nz"].clone(), j["nx"].clone()), (40.into(), 50.into()));
        assert!(j["config"]["velocity"]
            .as_str()
            .expect("path")
            .ends_with(name));
    }

    // Without --layer the model is used as it is (the paper's layers would not even fit).
    let path = scratch("v-plain.npy");
    io::write_npy(&path, &model).expect("write");
    let out = scratch("velocity-plain");
    assert_ok(&ppwave(&[
        "run",
        "--velocity",
        path.to_str().expect("utf-8"),
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
        "--nz",
        "40",
        "--out",
        out.to_str().expect("utf-8"),
    ]));
    let (_, v) = parse_npy(&out.join("velocity.npy"));
    assert_eq!(
        v,
        as_f64(
            &model
                .as_slice()
                .iter()
                .map(|&x| x as f32)
                .collect::<Vec<_>>()
        )
    );
}

#[test]
fn snapshots_are_written_every_k_steps() {
    let out = scratch("snapshots");
    assert_ok(&run_small(&out, &["--snapshot-every", "10"]));
    let mut names: Vec<String> = std::fs::read_dir(out.join("snapshots"))
        .expect("snapshots dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "00010.npy",
            "00010.png",
            "00020.npy",
            "00020.png",
            "00030.npy",
            "00030.png"
        ]
    );
    for step in ["00010", "00020", "00030"] {
        let (header, _) = parse_npy(&out.join("snapshots").join(format!("{step}.npy")));
        assert_npy_header(&header, 40, 50);
        assert_eq!(
            png_size(&out.join("snapshots").join(format!("{step}.png"))),
            (1120, 856, 2),
            "the wavefield picture's size (see run.rs)"
        );
    }
    // The last frame is the final wavefield; an earlier one is the library's run of 10 steps.
    let (_, last) = parse_npy(&out.join("snapshots/00030.npy"));
    let (_, p) = parse_npy(&out.join("wavefield.npy"));
    assert_eq!(last, p);
    let (_, first) = parse_npy(&out.join("snapshots/00010.npy"));
    let ten = library_run::<f32>(WaveConfig {
        nt: 10,
        ..small_config(StepKernels::Fused)
    });
    assert_eq!(
        first,
        as_f64(&ten.wavefield_host().expect("copy").into_vec())
    );
    assert_eq!(read_json(&out.join("run.json"))["snapshots"], 3);
}

#[test]
fn an_out_directory_with_other_files_is_refused_and_left_alone() {
    let out = scratch("snapshot-fails");
    // What was there before (here a directory where frame 20 would go) is never mixed with
    // a run's outputs nor removed.
    std::fs::create_dir_all(out.join("snapshots/00020.npy")).expect("mkdir");
    let o = run_small(&out, &["--snapshot-every", "10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--out") && err.contains("--overwrite"),
        "{err}"
    );
    assert!(!out.join("wavefield.npy").exists());
    assert!(
        out.join("snapshots/00020.npy").is_dir(),
        "what was there before stays"
    );
}
