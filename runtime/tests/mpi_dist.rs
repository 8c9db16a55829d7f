//! The distributed solver against the single-process one, bit for bit: the parent test runs
//! this binary's `child` test under `mpiexec -n P` for P = 1..4; each child runs a set of
//! configurations (orders, source modes, absorbing layer spanning ranks, sources and
//! receivers on rank boundaries, uneven splits, both precisions, split kernels) under every
//! decomposition of P and compares with `WaveSimulator` on rank 0.

use ppstencil::dist::mpi::traits::*;
use ppstencil::dist::{mpi, DistributedSimulator};
use ppstencil::solver::{Layer, SourceMode, StepKernels, WaveConfig};
use ppstencil::{Real, Serial, WaveSimulator};
use std::process::Command;

const CHILD: &str = "PPSTENCIL_MPI_CHILD";

/// The configurations: 61 x 53 splits unevenly for P = 2, 3, 4; row 31 and column 27 are
/// rank boundaries of the 2-way splits (31 = 61 - 30, 27 = 53 - 26).
fn configs() -> Vec<WaveConfig> {
    let base = WaveConfig {
        nz: 61,
        nx: 53,
        nt: 60,
        dt: 0.001,
        dh: 10.0,
        src_z: 31,
        src_x: 27,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![Layer {
            z0: 40,
            z1: 50,
            velocity: 2600.0,
        }],
        receivers: (2..51)
            .map(|x| (31, x))
            .chain((2..59).map(|z| (z, 27)))
            .collect(),
        // The distributed step has the sponge layer (the PML is single-process for now).
        boundary: ppstencil::solver::Boundary::Sponge,
        ..WaveConfig::paper()
    };
    vec![
        base.clone(),
        WaveConfig {
            space_order: 8,
            source_mode: SourceMode::Add,
            absorb: 12,
            src_z: 30,
            src_x: 26,
            ..base.clone()
        },
        WaveConfig {
            space_order: 2,
            absorb: 20,
            src_z: 15,
            src_x: 15,
            ..base.clone()
        },
        WaveConfig {
            kernels: StepKernels::Split,
            absorb: 5,
            ..base.clone()
        },
    ]
}

/// The automatic decomposition and every `a x b` with `a b = p`.
fn parts_of(p: usize) -> Vec<Option<[usize; 2]>> {
    let mut v = vec![None];
    for a in 1..=p {
        if p % a == 0 {
            v.push(Some([a, p / a]));
        }
    }
    v
}

fn compare<T: Real + mpi::datatype::Equivalence>(world: &mpi::topology::SimpleCommunicator) {
    for (i, c) in configs().into_iter().enumerate() {
        for parts in parts_of(world.size() as usize) {
            let comm = world.duplicate();
            let mut sim =
                DistributedSimulator::<Serial, T>::new(Serial, c.clone(), comm, parts).unwrap();
            let decomp = sim.decomposition().to_string();
            let (stats, results) = sim.run().unwrap();
            assert_eq!(stats.steps, c.nt);
            if let Some(res) = results {
                let mut reference = WaveSimulator::<Serial, T>::with_config(Serial, c.clone());
                reference.run().unwrap();
                let p = reference.wavefield_host().unwrap();
                let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
                let at = format!(
                    "config {i}, {} ranks as {decomp}, {}",
                    world.size(),
                    T::NAME
                );
                assert!(p.max_abs().to_f64() > 0.0, "{at}: nothing moved");
                assert!(
                    bits(p.as_slice()) == bits(res.wavefield.as_slice()),
                    "{at}: wavefields differ"
                );
                let s = reference.seismogram().unwrap();
                assert_eq!(
                    (s.nt, s.nrec),
                    (res.seismogram.nt, res.seismogram.nrec),
                    "{at}"
                );
                assert!(
                    bits(&s.data) == bits(&res.seismogram.data),
                    "{at}: seismograms differ"
                );
                println!("{at}: bit-identical");
            }
        }
    }
}

#[test]
#[ignore = "run by distributed_equals_one_process under mpiexec"]
fn child() {
    let universe = mpi::initialize().expect("MPI initialises once");
    let world = universe.world();
    compare::<f32>(&world);
    compare::<f64>(&world);
    // A decomposition that does not match the ranks is an error on every rank, before any
    // message.
    let wrong = Some([world.size() as usize + 1, 1]);
    let e = DistributedSimulator::<Serial, f32>::new(
        Serial,
        configs()[0].clone(),
        world.duplicate(),
        wrong,
    );
    assert!(e.is_err_and(|e| e.to_string().contains("MPI ranks")));
}

#[test]
fn distributed_equals_one_process() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for p in 1..=4 {
        let out = Command::new("mpiexec")
            .args(["-n", &p.to_string()])
            .arg(&exe)
            .args([
                "--exact",
                "child",
                "--include-ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .expect("mpiexec runs (install an MPI: .ci/mpi-toolchain)");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "mpiexec -n {p}:\n{text}");
        assert!(text.contains("bit-identical"), "mpiexec -n {p}:\n{text}");
    }
}
