//! The 3D acoustic solver (`WaveSimulator<E, T, 3>`): the fused 3D step against a hand loop,
//! serial and rayon bit-identical, the CFL limit by hand, bad 3D parameters, and the
//! additive point source against the analytic 3D solution `s(t - r/c) / (4π r)` with its
//! convergence rates in dh (orders 2 and 4).

use ppstencil::kernels::fd_step_3d_of_order;
use ppstencil::solver::{cfl_limit_in, SourceMode};
use ppstencil::{
    Error, ExecutionSpace, HostField, MemSpaceHost, Param, Rayon, Serial, WaveConfig, WaveSimulator,
};
use ppstencil_tests::for_each_space;
use std::f64::consts::PI;

/// A small 3D configuration: absorbing layer, additive source, receivers, order 8.
fn small3() -> WaveConfig {
    WaveConfig {
        nz: 30,
        ny: 26,
        nx: 34,
        nt: 60,
        dt: 0.001,
        dh: 10.0,
        src_z: 12,
        src_y: 13,
        src_x: 15,
        fpeak: 15.0,
        vmin: 2000.0,
        layers: vec![ppstencil::solver::Layer {
            z0: 20,
            z1: 30,
            velocity: 3000.0,
        }],
        space_order: 8,
        absorb: 6,
        // The sponge here; `with_pml` makes it the PML.
        boundary: ppstencil::solver::Boundary::Sponge,
        source_mode: SourceMode::Add,
        receivers_3d: vec![(8, 13, 5), (20, 4, 30)],
        ..WaveConfig::paper()
    }
}

/// `c` with a PML as its absorbing layer (its `absorb` cells, the default profile).
fn with_pml(c: WaveConfig) -> WaveConfig {
    WaveConfig {
        boundary: ppstencil::solver::Boundary::Pml,
        ..c
    }
}

fn run3<E: ExecutionSpace<Memory = MemSpaceHost>>(
    space: E,
    c: WaveConfig,
) -> (HostField<f32, 3>, Vec<f32>) {
    let mut sim = WaveSimulator::<E, f32, 3>::with_config(space, c);
    sim.run().expect("3D run");
    let p = sim.wavefield_host().expect("wavefield");
    let s = sim.seismogram().expect("seismogram").data.clone();
    (p, s)
}

#[test]
fn serial_and_rayon_are_bit_identical_in_3d() {
    for c in [
        small3(),
        with_pml(small3()),
        WaveConfig {
            source_mode: SourceMode::Set,
            space_order: 4,
            absorb: 0,
            ..small3()
        },
    ] {
        let (a, sa) = run3(Serial, c.clone());
        let (b, sb) = run3(Rayon::with_threads(2).unwrap(), c);
        assert_eq!(a.shape(), [30, 26, 34]);
        assert!(a.max_abs() > 1e-6, "the wave must have propagated");
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a.as_slice()), bits(b.as_slice()));
        assert_eq!(bits(&sa), bits(&sb));
        assert_eq!(sa.len(), 60 * 2);
    }
}

/// Every execution space (host pools of several shapes; CUDA and HIP, emulated or real, with
/// their features) runs the 3D solver bit for bit as `Serial` does: the wavefield and the
/// seismogram, with the absorbing layer (the sponge), the additive source and order 8.
fn the_3d_solver_matches_serial<E: ExecutionSpace>(space: E) {
    matches_serial(space, small3());
}

/// [`the_3d_solver_matches_serial`] with the PML: its 3D kernels on every backend.
fn the_3d_pml_matches_serial<E: ExecutionSpace>(space: E) {
    matches_serial(space, with_pml(small3()));
}

/// The wavefield and seismogram of `c` on `space` equal `Serial`'s bit for bit.
fn matches_serial<E: ExecutionSpace>(space: E, c: WaveConfig) {
    let (want, traces) = run3(Serial, c.clone());
    let mut sim = WaveSimulator::<E, f32, 3>::with_config(space, c);
    sim.run().expect("3D run");
    let got = sim.wavefield_host().expect("copy");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(got.as_slice()), bits(want.as_slice()));
    assert_eq!(bits(&sim.seismogram().expect("traces").data), bits(&traces));
}

for_each_space!(the_3d_solver_matches_serial, the_3d_pml_matches_serial);

/// One fused 3D step of order 2 against a hand loop: `2p - pold + kv2 (sum over the three
/// axes of p[-1] - 2 p + p[+1])`, in f64 on random data.
#[test]
fn the_3d_step_is_the_3d_laplacian_by_hand() {
    let [nz, ny, nx] = [7, 9, 11];
    let n = nz * ny * nx;
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mk = |v: Vec<f64>| HostField::<f64, 3>::from_vec_shape([nz, ny, nx], v).unwrap();
    let p = mk((0..n).map(|_| rnd()).collect());
    let pold = mk((0..n).map(|_| rnd()).collect());
    let kv2 = mk((0..n).map(|_| rnd()).collect());
    let mut pnew = mk(vec![0.0; n]);
    fd_step_3d_of_order(&Serial, 2, &mut pnew, &p, &pold, &kv2).unwrap();
    let at =
        |f: &HostField<f64, 3>, z: usize, y: usize, x: usize| f.as_slice()[(z * ny + y) * nx + x];
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let got = at(&pnew, z, y, x);
                let inside = (1..nz - 1).contains(&z)
                    && (1..ny - 1).contains(&y)
                    && (1..nx - 1).contains(&x);
                if !inside {
                    assert_eq!(got, 0.0, "the border stays zero");
                    continue;
                }
                let c = at(&p, z, y, x);
                let lap = (at(&p, z - 1, y, x) - 2.0 * c + at(&p, z + 1, y, x))
                    + (at(&p, z, y - 1, x) - 2.0 * c + at(&p, z, y + 1, x))
                    + (at(&p, z, y, x - 1) - 2.0 * c + at(&p, z, y, x + 1));
                let want = 2.0 * c - at(&pold, z, y, x) + at(&kv2, z, y, x) * lap;
                assert!(
                    (got - want).abs() < 1e-14,
                    "({z}, {y}, {x}): {got} vs {want}"
                );
            }
        }
    }
}

/// The 3D CFL limit by hand: order 2's weights (1, -2, 1) sum to 4 in magnitude, so the
/// limit is `2 / sqrt(3 · 4) = 1/sqrt(3)`; a run just above it is refused naming dt.
#[test]
fn the_3d_cfl_limit_is_one_over_root_three_at_order_2() {
    let limit = cfl_limit_in(2, 3).unwrap();
    assert!((limit - 1.0 / 3f64.sqrt()).abs() < 1e-15);
    let mut c = WaveConfig {
        space_order: 2,
        layers: vec![],
        absorb: 0,
        ..small3()
    };
    c.dt = 1.01 * limit * c.dh / c.vmin;
    match c.validate() {
        Err(Error::InvalidParameter { param, valid, .. }) => {
            assert_eq!(param, Param::TimeStep);
            assert!(valid.contains("3D"), "{valid}");
        }
        other => panic!("{other:?}"),
    }
    c.dt = 0.99 * limit * c.dh / c.vmin;
    c.validate().expect("below the limit");
    // The same dt is stable in 2D (limit 1/sqrt(2)): the limit is the dimensionality's.
    assert!(cfl_limit_in(2, 2).unwrap() > 1.01 * limit);
}

#[test]
fn bad_3d_parameters_name_the_parameter() {
    type Mutation = Box<dyn Fn(&mut WaveConfig)>;
    let cases: Vec<(Mutation, Param, &str)> = vec![
        (Box::new(|c| c.ny = 8), Param::Ny, "at least 9 planes"),
        (
            Box::new(|c| {
                c.boundary = ppstencil::solver::Boundary::Pml;
                c.absorb = 4;
            }),
            Param::Absorb,
            "absorb >= 5",
        ),
        (Box::new(|c| c.ny = 0), Param::Ny, "ny = 1 for a 2D run"),
        (Box::new(|c| c.src_y = 3), Param::SourceY, "4 <= src_y < 22"),
        (
            Box::new(|c| c.src_y = 22),
            Param::SourceY,
            "4 <= src_y < 22",
        ),
        (
            Box::new(|c| c.absorb = 13),
            Param::Absorb,
            "30 x 26 x 34 grid: absorb <= 12",
        ),
        (
            Box::new(|c| c.receivers_3d = vec![(3, 26, 3)]),
            Param::Receiver,
            "0 <= y < 26",
        ),
        (
            Box::new(|c| c.receivers = vec![(3, 3)]),
            Param::Receivers,
            "(z, y, x) receivers",
        ),
        (
            Box::new(|c| {
                c.velocity = Some(
                    ppstencil::model::VelocityModel::new(30, 34, vec![2000.0; 30 * 34]).unwrap(),
                )
            }),
            Param::VelocityModel,
            "a 3D run needs a 3D velocity model",
        ),
        (
            Box::new(|c| {
                c.velocity = Some(
                    ppstencil::model::VelocityModel::new_3d(30, 25, 34, vec![2000.0; 30 * 25 * 34])
                        .unwrap(),
                )
            }),
            Param::VelocityModel,
            "must match the grid 30 x 26 x 34",
        ),
        (
            Box::new(|c| c.layers[0].z1 = 31),
            Param::Layer,
            "Z1 <= nz = 30",
        ),
    ];
    for (bad, want, needle) in cases {
        let mut c = small3();
        bad(&mut c);
        match c.validate() {
            Err(Error::InvalidParameter { param, valid, .. }) => {
                assert_eq!(param, want, "{valid}");
                assert!(
                    valid.contains(needle),
                    "`{valid}` should contain `{needle}`"
                );
            }
            other => panic!("{want:?}: expected an invalid parameter, got {other:?}"),
        }
    }
    // The 2D side: src_y and (z, y, x) receivers without ny, and a 3D simulator of a 2D
    // config (and the reverse), are errors before any step.
    let two = WaveConfig {
        src_y: 5,
        ..WaveConfig::paper()
    };
    assert!(matches!(
        two.validate(),
        Err(Error::InvalidParameter {
            param: Param::SourceY,
            ..
        })
    ));
    let mut sim =
        WaveSimulator::<Serial, f32, 3>::with_config(Serial, WaveConfig { ny: 1, ..small3() });
    assert!(matches!(
        sim.run(),
        Err(Error::InvalidParameter {
            param: Param::Ny,
            ..
        })
    ));
    let mut sim = WaveSimulator::<Serial>::with_config(Serial, small3());
    assert!(matches!(
        sim.run(),
        Err(Error::InvalidParameter {
            param: Param::Ny,
            ..
        })
    ));
}

/// Ricker wavelet delayed by `t0`, written out here independently of the library.
fn ricker(t: f64, f: f64, t0: f64) -> f64 {
    let a = (PI * f * (t - t0)).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// The analytic 3D pressure at distance `r` for the source term `c² s(t) δ(x)` of
/// `p_tt = c² (∇²p + s δ)`: the Green's function of `(1/c²) ∂tt - ∇²` is
/// `δ(t - r/c) / (4π r)`, so `p = s(t - r/c) / (4π r)` (no tail, unlike 2D).
fn analytic(r: f64, t: f64, c: f64, f: f64, t0: f64) -> f64 {
    ricker(t - r / c, f, t0) / (4.0 * PI * r)
}

/// Runs the homogeneous 3D problem (c = 2000 m/s, 20 Hz Ricker, receiver 200 m from the
/// source along x, 0.25 s window, walls far enough that no reflection reaches the receiver
/// in the window) and returns (relative L2 error of the trace, analytic peak).
fn trace_error(dh: f64, order: usize, cfl: f64) -> (f64, f64) {
    let (c, f) = (2000.0, 20.0);
    let t0 = 1.5 / f;
    let r = 200.0;
    let t_end = 0.25;
    let dt = cfl * dh / c;
    let nt = (t_end / dt).round() as usize;
    let rad = order / 2;
    // Source 250 m from every wall but +x (400 m): the first reflection travels >= 500 m.
    let cells = |m: f64| (m / dh).round() as usize;
    let (nz, ny, nx) = (
        cells(500.0) + 1 + 2 * rad,
        cells(500.0) + 1 + 2 * rad,
        cells(650.0) + 1 + 2 * rad,
    );
    let (sz, sy, sx) = (cells(250.0) + rad, cells(250.0) + rad, cells(250.0) + rad);
    let config = WaveConfig {
        nz,
        ny,
        nx,
        nt,
        dt,
        dh,
        src_z: sz,
        src_y: sy,
        src_x: sx,
        fpeak: f,
        vmin: c,
        layers: vec![],
        space_order: order,
        source_mode: SourceMode::Add,
        receivers_3d: vec![(sz, sy, sx + cells(r))],
        ..WaveConfig::paper()
    };
    let mut sim = WaveSimulator::<Rayon, f64, 3>::with_config(Rayon::new(), config);
    let start = std::time::Instant::now();
    sim.run().expect("runs");
    let seis = sim.seismogram().expect("recorded");
    let (mut e2, mut a2, mut peak) = (0.0, 0.0, 0.0f64);
    for it in 0..nt {
        let a = analytic(r, seis.time(it), c, f, t0);
        let n = seis.get(it, 0).expect("sample");
        e2 += (n - a).powi(2);
        a2 += a * a;
        peak = peak.max(a.abs());
    }
    let err = (e2 / a2).sqrt();
    eprintln!(
        "3D dh {dh} order {order} cfl {cfl} grid {nz}x{ny}x{nx} nt {nt}: rel L2 error {err:.4e} peak {peak:.4e} ({:.2?})",
        start.elapsed()
    );
    (err, peak)
}

#[test]
fn additive_source_matches_the_analytic_3d_solution() {
    // Order 8, dh = 10 m (10 points per peak wavelength), CFL 0.2: measured 1.62 %.
    let (err, peak) = trace_error(10.0, 8, 0.2);
    assert!(err < 0.02, "relative L2 error {err:.3e} >= 2 %");
    // s = 1 at its peak: 1 / (4π 200) = 3.98e-4, the physical amplitude of the scaling.
    assert!((peak - 1.0 / (4.0 * PI * 200.0)).abs() < 1e-6, "{peak}");
}

/// Halving dh divides the error by about 2^order (small CFL: the spatial error dominates).
/// dh = 10 m and 5 m (10 and 20 points per peak wavelength). Release only (seconds there,
/// minutes in debug): `cargo test --release -p ppstencil-tests --test solver_3d -- --ignored`.
#[test]
#[ignore]
fn the_3d_error_falls_at_the_expected_rate_when_the_grid_is_refined() {
    // Measured: order 2 0.472 -> 0.115 (rate 2.04), order 4 0.0625 -> 0.00335 (rate 4.22).
    for (order, lo, hi) in [(2, 1.7, 2.8), (4, 3.3, 5.0)] {
        let coarse = trace_error(10.0, order, 0.1).0;
        let fine = trace_error(5.0, order, 0.1).0;
        let rate = (coarse / fine).log2();
        assert!(
            (lo..hi).contains(&rate),
            "order {order}: rate {rate:.2} ({coarse:.3e} -> {fine:.3e})"
        );
    }
}

/// The 3D setters of `WaveSimulator` and a receiver line of a 3D run: the line's receivers
/// land in plane `y` (not `y = 0`, the border), each receiver's last sample is the
/// wavefield read back at its point, and in a homogeneous model the receivers on either
/// side of the source record the same trace (to rounding).
#[test]
fn a_3d_run_set_up_with_the_3d_setters_records_a_receiver_line_in_its_plane() {
    let line: ppstencil::receivers::ReceiverLine = "10:9:4:16:6".parse().expect("line");
    let mut sim = WaveSimulator::<Serial, f32, 3>::new(Serial);
    sim.set_dimensions_3d(21, 19, 21)
        .set_source_position_3d(10, 9, 10)
        .set_time_steps(25)
        .set_time_step(0.001)
        .set_space_step(10.0)
        .set_vmin(2000.0)
        .clear_velocity_layers()
        .clear_receivers()
        .add_receiver_line(line);
    sim.run().expect("3D run");
    let seis = sim.seismogram().expect("seismogram").clone();
    assert_eq!(seis.nrec, 3);
    assert_eq!(seis.nt, 25);
    assert_eq!(seis.positions, [[10, 9, 4], [10, 9, 10], [10, 9, 16]]);
    let p = sim.wavefield_host().expect("wavefield");
    for (r, &(z, y, x)) in [(10, 9, 4), (10, 9, 10), (10, 9, 16)].iter().enumerate() {
        assert_eq!(seis.get(24, r), Some(p[(z, y, x)]), "receiver {r}");
    }
    let (left, right) = (seis.trace(0), seis.trace(2));
    let peak = left.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!(peak > 0.0, "the wave reached the receivers");
    for (a, b) in left.iter().zip(&right) {
        assert!((a - b).abs() <= 1e-5 * peak, "{a} vs {b}");
    }
}

/// A seismogram written with `Seismogram::write_npy` reads back (with the crate's reader)
/// as an `nt × nrec` array of the same samples.
#[test]
fn a_seismogram_round_trips_through_npy() {
    let mut sim = WaveSimulator::<Serial, f32, 3>::with_config(Serial, small3());
    sim.run().expect("3D run");
    let seis = sim.seismogram().expect("seismogram");
    let path = std::env::temp_dir().join(format!("ppstencil-seis-{}.npy", std::process::id()));
    seis.write_npy(&path).expect("write");
    let back = ppstencil::io::read_npy::<f32, 2>(&path).expect("read");
    std::fs::remove_file(&path).ok();
    assert_eq!(back.shape(), [seis.nt, seis.nrec]);
    assert_eq!(back.as_slice(), &seis.data[..]);
    assert!(back.max_abs() > 0.0);
}

/// A cloned host field holds the same values and is independent of the original.
#[test]
fn a_cloned_host_field_is_an_independent_copy() {
    let a =
        HostField::<f32, 3>::from_shape_fn([2, 3, 4], |[z, y, x]| (z * 100 + y * 10 + x) as f32)
            .expect("field");
    let mut b = a.clone();
    assert_eq!(b.as_slice(), a.as_slice());
    assert_eq!(b.shape(), [2, 3, 4]);
    b[(1, 2, 3)] = -1.0;
    assert_eq!(a[(1, 2, 3)], 123.0);
    assert_eq!(b[(1, 2, 3)], -1.0);
}
