//! The distributed solver against the single-process one, bit for bit: the parent test runs
//! this binary's `child` test under `mpiexec -n P` for P = 1..4; each child runs a set of
//! configurations, 2D and 3D (orders, source modes, the sponge and the PML spanning ranks,
//! sources and receivers on rank boundaries, uneven splits, a velocity file, both precisions, split
//! kernels) under every decomposition of P and compares with `WaveSimulator` on rank 0.

use ppstencil::dist::mpi::traits::*;
use ppstencil::dist::{mpi, DistributedSimulator};
use ppstencil::model::VelocityModel;
use ppstencil::solver::{Boundary, Dims, Layer, SourceMode, StepKernels, WaveConfig, WaveKernels};
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
        boundary: Boundary::Sponge,
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
        // The PML (halo 4: psi computed 2 cells into the halo), across ranks, with the
        // fused step at orders 8 and 2 (radius 1, halo 4) and the split kernels. 20 and 22
        // cells put the rank boundaries of the 3- and 4-way splits (rows 21, 16, columns 18,
        // 14) inside the layer, where the psi of the halo is read.
        WaveConfig {
            space_order: 8,
            absorb: 22,
            boundary: Boundary::Pml,
            source_mode: SourceMode::Add,
            ..base.clone()
        },
        WaveConfig {
            space_order: 2,
            absorb: 20,
            boundary: Boundary::Pml,
            src_z: 15,
            src_x: 15,
            ..base.clone()
        },
        WaveConfig {
            kernels: StepKernels::Split,
            absorb: 14,
            boundary: Boundary::Pml,
            ..base.clone()
        },
    ]
}

/// 3D configurations: 21 x 19 x 17 splits unevenly for P = 2, 3, 4 along every axis; plane
/// z = 11, row y = 10 and column x = 9 are the rank boundaries of the 2-way splits (21 = 11 +
/// 10, 19 = 10 + 9, 17 = 9 + 8), where the source sits and the receiver lines cross; the
/// layers of 6 and 8 cells span two ranks of the 3- and 4-way splits.
fn configs_3d() -> Vec<WaveConfig> {
    let (nz, ny, nx) = (21, 19, 17);
    let base = WaveConfig {
        nz,
        ny,
        nx,
        nt: 40,
        dt: 0.001,
        dh: 10.0,
        src_z: 11,
        src_y: 10,
        src_x: 9,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![Layer {
            z0: 14,
            z1: 17,
            velocity: 2600.0,
        }],
        receivers_3d: (2..15)
            .map(|x| (11, 10, x))
            .chain((2..19).map(|z| (z, 10, 9)))
            .chain((2..17).map(|y| (5, y, 4)))
            .collect(),
        boundary: Boundary::Sponge,
        ..WaveConfig::paper()
    };
    // A velocity file that differs at every point, so a misplaced model shows.
    let values = (0..nz * ny * nx)
        .map(|k| 1800.0 + ((k * 37) % 101) as f64 * 5.0)
        .collect();
    vec![
        base.clone(),
        WaveConfig {
            space_order: 8,
            source_mode: SourceMode::Add,
            absorb: 6,
            ..base.clone()
        },
        WaveConfig {
            space_order: 2,
            absorb: 8,
            src_z: 4,
            src_y: 3,
            src_x: 12,
            ..base.clone()
        },
        WaveConfig {
            absorb: 5,
            velocity: Some(VelocityModel::new_3d(nz, ny, nx, values).unwrap()),
            ..base.clone()
        },
        // An 8-cell PML is cut by the 4-way splits' planes 6 and 16 (z) and columns 5 and 13.
        WaveConfig {
            boundary: Boundary::Pml,
            absorb: 8,
            ..base.clone()
        },
        WaveConfig {
            boundary: Boundary::Pml,
            space_order: 8,
            source_mode: SourceMode::Add,
            absorb: 5,
            src_z: 5,
            src_y: 5,
            src_x: 12,
            ..base.clone()
        },
    ]
}

/// The automatic decomposition and every way to write `p` as a product of `D` parts.
fn parts_of<const D: usize>(p: usize) -> Vec<Option<[usize; D]>> {
    let mut all = vec![[1usize; D]];
    for a in 0..D {
        all = all
            .into_iter()
            .flat_map(|parts| {
                let left = p / parts.iter().product::<usize>();
                (1..=left)
                    .filter(move |q| left.is_multiple_of(*q))
                    .map(move |q| {
                        let mut next = parts;
                        next[a] = q;
                        next
                    })
            })
            .collect();
    }
    let mut v = vec![None];
    v.extend(
        all.into_iter()
            .filter(|parts| parts.iter().product::<usize>() == p)
            .map(Some),
    );
    v
}

fn compare<T: Real + mpi::datatype::Equivalence, const D: usize>(
    world: &mpi::topology::SimpleCommunicator,
    configs: Vec<WaveConfig>,
) where
    Dims<D>: WaveKernels<D>,
{
    for (i, c) in configs.into_iter().enumerate() {
        for parts in parts_of::<D>(world.size() as usize) {
            let comm = world.duplicate();
            let mut sim =
                DistributedSimulator::<Serial, T, D>::new(Serial, c.clone(), comm, parts).unwrap();
            let decomp = sim.decomposition().to_string();
            let (stats, results) = sim.run().unwrap();
            assert_eq!(stats.steps, c.nt);
            if let Some(res) = results {
                let mut reference = WaveSimulator::<Serial, T, D>::with_config(Serial, c.clone());
                reference.run().unwrap();
                let p = reference.wavefield_host().unwrap();
                let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
                let at = format!(
                    "{D}D config {i}, {} ranks as {decomp}, {}",
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
                assert!(s.nrec > 0, "{at}");
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
    // A failed assertion on one rank stops them all (the others would wait for its messages
    // for ever): the message first, then MPI_Abort.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        mpi::topology::SimpleCommunicator::world().abort(1);
    }));
    compare::<f32, 2>(&world, configs());
    compare::<f64, 2>(&world, configs());
    compare::<f32, 3>(&world, configs_3d());
    // f64 in 3D: one configuration (the index mapping is the element type's no more than in f32).
    compare::<f64, 3>(&world, configs_3d()[..1].to_vec());
    // A decomposition that does not match the ranks is an error on every rank, before any
    // message.
    let wrong = Some([world.size() as usize + 1, 1]);
    // A PML widens the halo to 4: ranks of 3 rows are thick enough for the radius 1 of
    // order 2 with the sponge, too thin with the PML.
    let ranks = world.size() as usize;
    if ranks > 1 {
        let thin = |boundary| WaveConfig {
            nz: 4 * ranks - 1,
            src_z: 2,
            absorb: 3,
            space_order: 2,
            boundary,
            layers: vec![],
            receivers: vec![(2, 10)],
            ..configs()[0].clone()
        };
        let parts = Some([ranks, 1]);
        let made =
            |c| DistributedSimulator::<Serial, f32>::new(Serial, c, world.duplicate(), parts);
        if let Err(e) = made(thin(Boundary::Sponge)) {
            panic!("{e}");
        }
        let e = made(thin(Boundary::Pml))
            .err()
            .expect("too thin for the PML's halo");
        assert!(
            e.to_string().contains("thinner than the halo width 4"),
            "{e}"
        );
    }
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
