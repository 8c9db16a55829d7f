//! Shot-parallel gradients, images and misfits against the single-process sums, bit for
//! bit: the parent test runs this binary's `child` test under `mpiexec -n P` for P = 1..4
//! (five shots: an uneven last batch for every P > 1); each rank compares its result with the
//! single-process one, and a failure on one rank is an error on every rank.

use ppstencil::dist::mpi;
use ppstencil::dist::mpi::traits::*;
use ppstencil::solver::{Boundary, Dims, Shot, SourceMode, Storage, WaveKernels, WaveOperator};
use ppstencil::{Error, Real, Serial, WaveConfig};
use std::process::Command;

const CHILD: &str = "PPSTENCIL_MPI_CHILD";

/// A small survey's configuration, 2D or 3D, order 4, a sponge, receivers on one row.
fn config(dims: usize) -> WaveConfig {
    let base = WaveConfig {
        nz: 30,
        nx: 34,
        nt: 50,
        dt: 0.001,
        dh: 10.0,
        src_z: 8,
        src_x: 10,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![],
        source_mode: SourceMode::Add,
        absorb: 6,
        boundary: Boundary::Sponge,
        receivers: (4..30).map(|x| (20, x)).collect(),
        ..WaveConfig::paper()
    };
    match dims {
        3 => WaveConfig {
            nz: 20,
            ny: 18,
            nx: 22,
            nt: 30,
            src_y: 9,
            receivers: vec![],
            receivers_3d: (4..18).map(|x| (14, 9, x)).collect(),
            ..base
        },
        _ => base,
    }
}

/// A deterministic stream of values in [-0.5, 0.5) (a linear congruential generator).
fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

/// Five shots' sources, wavelets and observed traces on `op`.
fn survey<T: Real, const D: usize>(
    op: &WaveOperator<Serial, T, D>,
) -> Vec<([usize; D], Vec<T>, Vec<T>)>
where
    Dims<D>: WaveKernels<D>,
{
    let (nt, nrec) = (op.steps(), op.receivers());
    (0..5)
        .map(|i| {
            let source: [usize; D] = std::array::from_fn(|a| 8 + 2 * i + a);
            let wavelet = op.source_wavelet(source).unwrap();
            let scale = wavelet.iter().fold(0.0f64, |m, w| m.max(w.to_f64().abs()));
            let observed = noise(i as u64 + 1, nt * nrec)
                .into_iter()
                .map(|v| T::lit(v * scale))
                .collect();
            (source, wavelet, observed)
        })
        .collect()
}

/// Every rank's shot-parallel results equal the single-process ones bit for bit.
fn compare<T: Real, const D: usize>(world: &impl Communicator)
where
    Dims<D>: WaveKernels<D>,
{
    let op = WaveOperator::<Serial, T, D>::new(Serial, config(D)).unwrap();
    let data = survey(&op);
    let shots: Vec<Shot<'_, T, D>> = data
        .iter()
        .map(|(s, w, o)| Shot {
            source: *s,
            wavelet: w,
            observed: o,
        })
        .collect();
    let bytes = 3 * 2 * op.field_bytes();
    for storage in [Storage::Full, Storage::Checkpoints { bytes }] {
        let one = op.misfit_gradient_shots(&shots, storage).unwrap();
        let many = op.misfit_gradient_ranks(&shots, storage, world).unwrap();
        assert_eq!(
            one.misfit.to_bits(),
            many.misfit.to_bits(),
            "misfit {storage:?}"
        );
        assert!(one.traces == many.traces, "traces {storage:?}");
        assert!(
            one.gradient.as_slice() == many.gradient.as_slice(),
            "gradient {storage:?}"
        );
        assert_eq!(one.recomputed_steps, many.recomputed_steps);
        assert_eq!(one.checkpoints, many.checkpoints);
        let one = op.image_shots(&shots, storage).unwrap();
        let many = op.image_ranks(&shots, storage, world).unwrap();
        assert!(
            one.gradient.as_slice() == many.gradient.as_slice(),
            "image {storage:?}"
        );
        assert_eq!(one.misfit.to_bits(), many.misfit.to_bits());
    }
    let one = op.misfit_shots(&shots).unwrap();
    assert!(one > 0.0);
    assert_eq!(
        one.to_bits(),
        op.misfit_ranks(&shots, world).unwrap().to_bits()
    );
    // The last rank stops at its first step: every rank returns an error, that rank its own.
    let last = world.size() - 1;
    let mut stopped = WaveOperator::<Serial, T, D>::new(Serial, config(D)).unwrap();
    if world.rank() == last {
        stopped.set_monitor(|k| {
            Err(Error::Stopped {
                steps: k,
                reason: "test".into(),
            })
        });
    }
    let e = stopped
        .misfit_gradient_ranks(&shots, Storage::Full, world)
        .expect_err("a rank failed");
    match e {
        Error::Stopped { steps: 1, .. } if world.rank() == last => {}
        Error::OtherRank { rank } if world.rank() != last => assert_eq!(rank, last as usize),
        e => panic!("rank {}: {e}", world.rank()),
    }
}

#[test]
#[ignore = "run by shots_over_ranks_equal_one_process under mpiexec"]
fn child() {
    let universe = mpi::initialize().expect("MPI initialises once");
    let world = universe.world();
    // A failed assertion on one rank stops them all (the others would wait for it).
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        mpi::topology::SimpleCommunicator::world().abort(1);
    }));
    compare::<f64, 2>(&world);
    compare::<f32, 2>(&world);
    compare::<f32, 3>(&world);
    if world.rank() == 0 {
        println!("{} ranks: bit-identical", world.size());
    }
}

#[test]
fn shots_over_ranks_equal_one_process() {
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
