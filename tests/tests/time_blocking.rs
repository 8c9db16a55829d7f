//! Temporal blocking: a blocked run equals the unblocked loop bit for bit (wavefield and
//! seismogram), for every space order, uneven grids, small forced bands (many bands and
//! blocks, bands crossing the source, the receivers and the absorbing layer), set and add
//! sources, the sponge and the PML, f32 and f64, serial and rayon; snapshots and a user's mixed `step` /
//! `step_block` loop; a user's own two-level stencil (heat) blocked through the same API; and
//! bad input. In 3D (bands of z-planes) the same: every order, uneven grids, bands crossing
//! the source, the receivers and the sponge, set and add sources, f32 and f64, serial and
//! rayon; and tiled along y (x in 2D) as well, `K:BxW`: every order, both sources, sponge,
//! tiles narrower than the skew and not dividing the axis, serial/rayon, f32/f64.

use ppstencil::launch::{launch_in, launch_in_region, Stencil};
use ppstencil::solver::blocking::{ring_split, wavefront, BlockPlan, StepShape};
use ppstencil::solver::{Blocking, Dims, SourceMode, TimeBlock, WaveKernels};
use ppstencil::{
    stencil, Arithmetic, ExecutionSpace, HostField, MemSpaceHost, Numerics, Rayon, Real, Serial,
    Subnormals, WaveConfig, WaveSimulator,
};

/// An uneven grid with a layer, receivers on a line through the source, in the absorbing
/// layer and on the border, a source off-centre.
fn config(order: usize, mode: SourceMode, absorb: usize, time_block: TimeBlock) -> WaveConfig {
    let (nz, nx) = (53, 47);
    let mut receivers: Vec<(usize, usize)> = (0..nx).step_by(3).map(|x| (21, x)).collect();
    receivers.extend([(0, 5), (2, 40), (nz - 1, 7), (50, 3), (21, 17), (37, 30)]);
    WaveConfig {
        nz,
        nx,
        nt: 75, // crosses the whole-field check at 64: a block boundary
        dt: 0.0005,
        dh: 5.0,
        src_z: 21,
        src_x: 17,
        fpeak: 30.0,
        vmin: 2000.0,
        layers: vec![ppstencil::solver::Layer {
            z0: 30,
            z1: 53,
            velocity: 2600.0,
        }],
        space_order: order,
        absorb,
        source_mode: mode,
        receivers,
        time_block,
        // The sponge: its strips are applied band by band in a blocked step.
        boundary: ppstencil::solver::Boundary::Sponge,
        ..WaveConfig::paper()
    }
}

fn bits<T: Real>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Runs `c` unblocked and blocked on `space` in `D` dimensions; asserts the blocked run did
/// block and that both wavefields and seismograms are equal bit for bit.
fn same_bits_in<E: ExecutionSpace<Memory = MemSpaceHost> + Clone, T: Real, const D: usize>(
    space: &E,
    c: &WaveConfig,
) where
    Dims<D>: WaveKernels<D>,
{
    let mut off = WaveSimulator::<E, T, D>::with_config(
        space.clone(),
        WaveConfig {
            time_block: TimeBlock::Off,
            ..c.clone()
        },
    );
    off.run().expect("unblocked run");
    let mut on = WaveSimulator::<E, T, D>::with_config(space.clone(), c.clone());
    on.run().expect("blocked run");
    assert!(
        matches!(on.blocking(), Some(Blocking::On(_))),
        "{:?}",
        on.blocking()
    );
    let (a, b) = (off.wavefield_host().unwrap(), on.wavefield_host().unwrap());
    assert!(a.max_abs().to_f64() > 1e-6, "the wave must have propagated");
    let what = format!(
        "{D}D order {} {:?} absorb {} {:?} {} {}",
        c.space_order,
        c.source_mode,
        c.absorb,
        c.time_block,
        E::NAME,
        T::NAME
    );
    assert!(
        bits(a.as_slice()) == bits(b.as_slice()),
        "wavefield: {what}"
    );
    let (sa, sb) = (off.seismogram().unwrap(), on.seismogram().unwrap());
    assert_eq!((sa.nt, sa.nrec), (sb.nt, sb.nrec));
    assert!(
        sa.data.iter().any(|v| v.to_f64() != 0.0),
        "receivers recorded the wave"
    );
    assert!(bits(&sa.data) == bits(&sb.data), "seismogram: {what}");
}

/// [`same_bits_in`] in 2D.
fn same_bits<E: ExecutionSpace<Memory = MemSpaceHost> + Clone, T: Real>(space: &E, c: &WaveConfig) {
    same_bits_in::<E, T, 2>(space, c);
}

/// A small uneven 3D grid (order 16 needs 17 points along each axis) with a layer, the
/// source off-centre, receivers on a line of z through the source, in the sponge and on the
/// border.
fn config3(order: usize, mode: SourceMode, absorb: usize, time_block: TimeBlock) -> WaveConfig {
    let (nz, ny, nx) = (31, 19, 17);
    let mut receivers_3d: Vec<(usize, usize, usize)> =
        (0..nz).step_by(2).map(|z| (z, 9, 8)).collect();
    receivers_3d.extend([
        (0, 0, 0),
        (2, 17, 3),
        (nz - 1, 9, 8),
        (25, 1, 15),
        (13, 4, 11),
    ]);
    WaveConfig {
        nz,
        ny,
        nx,
        nt: 70, // crosses the whole-field check at 64: a block boundary
        src_z: 13,
        src_y: 9,
        src_x: 8,
        layers: vec![ppstencil::solver::Layer {
            z0: 20,
            z1: 31,
            velocity: 2600.0,
        }],
        receivers: Vec::new(),
        receivers_3d,
        ..config(order, mode, absorb, time_block)
    }
}

fn fixed(depth: usize, band: usize) -> TimeBlock {
    TimeBlock::Fixed(BlockPlan {
        depth,
        band,
        tile: None,
    })
}

#[test]
fn every_order_both_sources_serial_f32() {
    for order in (2..=16).step_by(2) {
        let r = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            for (depth, band) in [(5, r), (8, r + 3)] {
                same_bits::<_, f32>(&Serial, &config(order, mode, 6, fixed(depth, band)));
            }
        }
    }
}

#[test]
fn rayon_and_f64_and_rigid_border() {
    let rayon = Rayon::with_threads(2).unwrap();
    let small_tasks = Rayon::with_threads(2).unwrap().chunk_rows(1);
    for order in [2, 4, 8, 16] {
        let r = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            same_bits::<_, f32>(&rayon, &config(order, mode, 6, fixed(7, r + 1)));
            same_bits::<_, f32>(&small_tasks, &config(order, mode, 0, fixed(3, r)));
            same_bits::<_, f64>(&rayon, &config(order, mode, 5, fixed(6, 2 * r)));
            same_bits::<_, f64>(&Serial, &config(order, mode, 0, TimeBlock::Depth(16)));
        }
    }
}

/// A depth of the whole run, and a band larger than the grid (one band per step).
#[test]
fn extreme_plans() {
    for (depth, band) in [(75, 2), (75, 1000), (1, 2), (2, 1)] {
        let c = config(4, SourceMode::Set, 6, fixed(depth, band.max(2)));
        same_bits::<_, f32>(&Serial, &c);
    }
}

/// Snapshots cut blocks: the frames of a blocked run are the unblocked run's, at the same
/// steps.
#[test]
fn snapshots_and_progress_match() {
    let frames = |tb: TimeBlock| {
        let c = WaveConfig {
            snapshot_every: Some(7),
            ..config(6, SourceMode::Add, 6, tb)
        };
        let mut sim = WaveSimulator::<Serial>::with_config(Serial, c);
        let (mut seen, mut progress) = (Vec::new(), Vec::new());
        sim.run_with(
            |done, _| progress.push(done),
            |step, p| {
                seen.push((step, bits(p.as_slice())));
                Ok(())
            },
        )
        .unwrap();
        (seen, progress)
    };
    let (a, pa) = frames(TimeBlock::Off);
    let (b, pb) = frames(fixed(5, 3));
    assert_eq!(a.len(), 75 / 7);
    assert!(a == b, "snapshots differ");
    assert_eq!(pa, (1..=75).collect::<Vec<_>>());
    assert_eq!(pa, pb);
}

/// A user's loop mixing `step` and `step_block` equals `run()`; blocks stop at `nt`.
#[test]
fn a_user_loop_of_blocks_and_steps() {
    let c = config(8, SourceMode::Set, 6, fixed(4, 4));
    let mut whole = WaveSimulator::<Serial>::with_config(
        Serial,
        WaveConfig {
            time_block: TimeBlock::Off,
            ..c.clone()
        },
    );
    whole.run().unwrap();
    let mut user = WaveSimulator::<Serial>::with_config(Serial, c);
    user.prepare().unwrap();
    let mut k = 1;
    while user.steps_done() < user.time_steps() {
        // The contract: k steps, cut at nt and at the next multiple of 64.
        let before = user.steps_done();
        let want = k.min(75 - before).min(64 - before % 64);
        assert_eq!(user.step_block(k).unwrap(), before + want - 1, "k = {k}");
        if user.steps_done() < user.time_steps() {
            assert_eq!(user.step().unwrap(), before + want);
        }
        k = k % 9 + 1;
    }
    assert!(user.step_block(3).is_err(), "all steps have run");
    user.finish().unwrap();
    assert!(
        bits(whole.wavefield_host().unwrap().as_slice())
            == bits(user.wavefield_host().unwrap().as_slice())
    );
    assert!(bits(&whole.seismogram().unwrap().data) == bits(&user.seismogram().unwrap().data));
}

#[test]
fn bad_input_is_an_error_naming_the_fix() {
    let err = |tb: TimeBlock| {
        let mut sim =
            WaveSimulator::<Serial>::with_config(Serial, config(8, SourceMode::Set, 0, tb));
        sim.run().expect_err("must be refused").to_string()
    };
    let e = err(TimeBlock::Depth(76));
    assert!(e.contains("nt = 75") && e.contains("depth <= 75"), "{e}");
    let e = err(fixed(4, 3));
    assert!(e.contains("at least 4 rows (lag 4)"), "{e}");
    let e = err(fixed(0, 3));
    assert!(e.contains("at least 1 time step"), "{e}");
    let e = "4:x".parse::<TimeBlock>().unwrap_err().to_string();
    assert!(e.contains("K:B"), "{e}");
    let mut split = config(4, SourceMode::Set, 0, TimeBlock::Depth(4));
    split.kernels = ppstencil::StepKernels::Split;
    let e = WaveSimulator::<Serial>::with_config(Serial, split.clone())
        .run()
        .unwrap_err()
        .to_string();
    assert!(e.contains("split kernels"), "{e}");
    // Auto falls back, saying why; the run is the unblocked one.
    split.time_block = TimeBlock::Auto;
    let mut sim = WaveSimulator::<Serial>::with_config(Serial, split);
    sim.run().unwrap();
    assert!(
        matches!(sim.blocking(), Some(Blocking::Off(why)) if why.contains("split")),
        "{:?}",
        sim.blocking()
    );
    // Auto on a grid that fits in the cache: unblocked, and it says so.
    let mut sim = WaveSimulator::<Serial>::with_config(
        Serial,
        config(4, SourceMode::Set, 0, TimeBlock::Auto),
    );
    sim.run().unwrap();
    assert!(
        matches!(sim.blocking(), Some(Blocking::Off(why)) if why.contains("cache")),
        "{:?}",
        sim.blocking()
    );
}

/// 3D, bands of z-planes: every order, both sources, with and without the sponge, bands of
/// the radius (one band holds the source plane, others the receivers' and the layer's) and
/// larger, serial f32.
#[test]
fn every_order_both_sources_serial_f32_3d() {
    for order in (2..=16).step_by(2) {
        let r = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            for (depth, band, absorb) in [(5, r, 4), (9, r + 2, 0)] {
                same_bits_in::<_, f32, 3>(
                    &Serial,
                    &config3(order, mode, absorb, fixed(depth, band)),
                );
            }
        }
    }
}

/// 3D on rayon (whole planes and small tasks), in f64, and a depth from the cache.
#[test]
fn rayon_and_f64_3d() {
    let rayon = Rayon::with_threads(2).unwrap();
    let small_tasks = Rayon::with_threads(2).unwrap().chunk_rows(1);
    for order in [2, 8, 16] {
        let r = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            same_bits_in::<_, f32, 3>(&rayon, &config3(order, mode, 4, fixed(7, r + 1)));
            same_bits_in::<_, f32, 3>(&small_tasks, &config3(order, mode, 0, fixed(3, r)));
            same_bits_in::<_, f64, 3>(&rayon, &config3(order, mode, 5, fixed(6, 2 * r)));
        }
    }
    same_bits_in::<_, f64, 3>(
        &Serial,
        &config3(4, SourceMode::Add, 4, TimeBlock::Depth(16)),
    );
}

fn tiled(depth: usize, band: usize, tile: usize) -> TimeBlock {
    TimeBlock::Fixed(BlockPlan {
        depth,
        band,
        tile: Some(tile),
    })
}

/// 3D, bands of z-planes tiled along y (`K:BxW`): every order, both sources, with and
/// without the sponge, tiles of the radius (narrower than a block's skew `depth · r`), widths
/// that do not divide the 19 - 2r rows of y, and one wider than the axis; serial f32.
#[test]
fn tiles_of_y_every_order_both_sources_serial_f32_3d() {
    for order in (2..=16).step_by(2) {
        let r = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            for (depth, band, tile, absorb) in [
                (5, r, r, 4),
                (7, r + 2, r + 3, 0),
                (4, r + 1, 2 * r + 1, 5),
                (3, r, 40, 4),
            ] {
                same_bits_in::<_, f32, 3>(
                    &Serial,
                    &config3(order, mode, absorb, tiled(depth, band, tile)),
                );
            }
        }
    }
}

/// Tiles on rayon (whole launches and small tasks), in f64, in 3D (tiles of y) and 2D
/// (tiles of x: the same generic sweep), crossing the source, receivers and sponge.
#[test]
fn tiles_on_rayon_f64_and_in_2d() {
    let rayon = Rayon::with_threads(2).unwrap();
    let small_tasks = Rayon::with_threads(2).unwrap().chunk_rows(1);
    for order in [2, 8, 16] {
        let r = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            same_bits_in::<_, f32, 3>(&rayon, &config3(order, mode, 4, tiled(7, r + 1, r + 2)));
            same_bits_in::<_, f32, 3>(&small_tasks, &config3(order, mode, 0, tiled(3, r, r)));
            same_bits_in::<_, f64, 3>(&rayon, &config3(order, mode, 5, tiled(6, 2 * r, 3 * r)));
            same_bits::<_, f32>(&rayon, &config(order, mode, 6, tiled(7, r + 1, r + 4)));
            same_bits::<_, f64>(&Serial, &config(order, mode, 0, tiled(5, r, r)));
            same_bits::<_, f32>(
                &small_tasks,
                &config(order, mode, 6, tiled(9, r, 2 * r + 1)),
            );
        }
    }
}

/// Bad tiles: narrower than the radius, or than the PML's lag of 4, are refused naming the
/// fix; the plan that ran is what was asked for.
#[test]
fn bad_tiles_are_errors_naming_the_fix() {
    let e = WaveSimulator::<Serial, f32, 3>::with_config(
        Serial,
        config3(8, SourceMode::Set, 0, tiled(4, 4, 3)),
    )
    .run()
    .unwrap_err()
    .to_string();
    assert!(e.contains("at least 4 points (radius 4)"), "{e}");
    let pml = WaveConfig {
        boundary: ppstencil::solver::Boundary::Pml,
        ..config3(8, SourceMode::Set, 6, tiled(4, 4, 3))
    };
    let e = WaveSimulator::<Serial, f32, 3>::with_config(Serial, pml)
        .run()
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least 4 points (radius 4)"), "{e}");
    let mut sim = WaveSimulator::<Serial, f32, 3>::with_config(
        Serial,
        config3(4, SourceMode::Set, 0, tiled(4, 3, 5)),
    );
    sim.run().unwrap();
    assert_eq!(
        sim.blocking(),
        Some(&Blocking::On(BlockPlan {
            depth: 4,
            band: 3,
            tile: Some(5)
        }))
    );
    assert!(sim
        .blocking()
        .unwrap()
        .to_string()
        .contains("tiles of 5 points"));
}

/// 3D bad input and auto: a band below the radius is refused naming the fix; auto on a grid
/// that fits in the cache runs unblocked and says so.
#[test]
fn bad_input_and_auto_in_3d() {
    let e = WaveSimulator::<Serial, f32, 3>::with_config(
        Serial,
        config3(8, SourceMode::Set, 0, fixed(4, 3)),
    )
    .run()
    .unwrap_err()
    .to_string();
    assert!(e.contains("at least 4 rows (lag 4)"), "{e}");
    let mut sim = WaveSimulator::<Serial, f32, 3>::with_config(
        Serial,
        config3(8, SourceMode::Set, 0, TimeBlock::Auto),
    );
    sim.run().unwrap();
    assert!(
        matches!(sim.blocking(), Some(Blocking::Off(why)) if why.contains("fit in half the last-level cache")),
        "{:?}",
        sim.blocking()
    );
}

/// The PML inside a blocked run: `psi` and the update on each band, no band or tile stopping
/// inside the layer's slab across its axis (the slab plus 4 rows), the steps lagging only the
/// fused step's radius; every order, set and add source, bands as short as the radius and
/// bands crossing the layer's side strips, serial and rayon, f32 and f64. A band shorter than
/// the radius is refused naming the fix.
#[test]
fn a_pml_run_is_blocked_bit_identically() {
    let pml = |order: usize, mode: SourceMode, tb: TimeBlock| WaveConfig {
        boundary: ppstencil::solver::Boundary::Pml,
        ..config(order, mode, 12, tb)
    };
    for order in (2..=16).step_by(2) {
        let lag = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            same_bits::<_, f32>(&Serial, &pml(order, mode, fixed(5, lag)));
        }
    }
    let rayon = Rayon::with_threads(2).unwrap();
    let small_tasks = Rayon::with_threads(2).unwrap().chunk_rows(1);
    same_bits::<_, f32>(&rayon, &pml(4, SourceMode::Add, fixed(7, 9)));
    same_bits::<_, f32>(&small_tasks, &pml(2, SourceMode::Set, fixed(16, 4)));
    same_bits::<_, f64>(&rayon, &pml(8, SourceMode::Add, fixed(3, 4)));
    same_bits::<_, f64>(&Serial, &pml(6, SourceMode::Set, TimeBlock::Depth(16)));
    // 3D: the PML's boxes cut into bands of z-planes (y: 19 points hold no tile stop outside
    // the layer's slabs, so each step's tiles jump from one end to the other).
    let pml3 = |order: usize, mode: SourceMode, tb: TimeBlock| WaveConfig {
        boundary: ppstencil::solver::Boundary::Pml,
        ..config3(order, mode, 6, tb)
    };
    for order in [2, 4, 8] {
        let lag = order / 2;
        for mode in [SourceMode::Set, SourceMode::Add] {
            same_bits_in::<_, f32, 3>(&Serial, &pml3(order, mode, fixed(5, lag)));
        }
    }
    same_bits_in::<_, f64, 3>(&small_tasks, &pml3(6, SourceMode::Add, fixed(7, 5)));
    // Tiles of y (x in 2D): no tile stops inside the layer's slabs along y either; tiles as
    // narrow as the radius, and widths that do not divide the axis.
    for order in [2, 4, 8] {
        let lag = order / 2;
        for (mode, plan) in [
            (SourceMode::Set, tiled(5, lag, lag)),
            (SourceMode::Add, tiled(4, lag + 1, 7)),
        ] {
            same_bits_in::<_, f32, 3>(&Serial, &pml3(order, mode, plan));
        }
    }
    same_bits_in::<_, f64, 3>(&small_tasks, &pml3(4, SourceMode::Set, tiled(6, 4, 5)));
    same_bits::<_, f32>(&Serial, &pml(4, SourceMode::Add, tiled(6, 4, 9)));
    same_bits::<_, f64>(&rayon, &pml(8, SourceMode::Set, tiled(5, 5, 13)));
    let e = WaveSimulator::<Serial>::with_config(Serial, pml(8, SourceMode::Add, fixed(4, 3)))
        .run()
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least 4 rows"), "{e}");
}

stencil! {
    /// A user's explicit heat step: two time levels, radius 1.
    pub fn heat(unew: out, u: in, alpha: real) {
        unew[0, 0] = u[0, 0] + alpha * (u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0]);
    }

    /// The same in 3D, 4th order in space (radius 2).
    pub fn heat3(unew: out, u: in, alpha: real) {
        unew[0, 0, 0] = u[0, 0, 0] + alpha * laplacian(u, 4);
    }
}

/// The initial heat field: a hot spot and a warm border (the border never changes and both
/// buffers of the ring hold it).
fn heat_init(nz: usize, nx: usize) -> HostField<f64> {
    HostField::from_fn(nz, nx, |z, x| {
        let border = z == 0 || x == 0 || z == nz - 1 || x == nx - 1;
        if border {
            0.5
        } else if (z, x) == (nz / 3, nx / 2) {
            100.0
        } else {
            0.0
        }
    })
    .unwrap()
}

/// The user's heat step blocked with the same schedule as the solver's step (a ring of 2
/// levels, radius from the IR), on serial and rayon, equals the plain loop of the generated
/// function bit for bit.
#[test]
fn a_user_two_level_stencil_runs_blocked() {
    let (nz, nx, steps, alpha) = (41, 29, 37, 0.2);
    // The reference: the generated function, one step at a time, swapping.
    let mut u = heat_init(nz, nx);
    let mut unew = heat_init(nz, nx);
    for _ in 0..steps {
        heat(&Serial, &mut unew, &u, alpha).unwrap();
        u.swap(&mut unew);
    }
    let shape = StepShape::for_stencil(&Heat::INFO, 2, nz, nx * 16).unwrap();
    assert_eq!((shape.radius, shape.domain.clone()), (1, 1..nz - 1));
    fn blocked<E: ExecutionSpace<Memory = MemSpaceHost>>(
        space: &E,
        shape: &StepShape,
        plan: BlockPlan,
        steps: usize,
        alpha: f64,
    ) -> HostField<f64> {
        let (nz, nx) = (shape.domain.end + 1, 29);
        let mut ring = [heat_init(nz, nx), heat_init(nz, nx)];
        let mut done = 0;
        while done < steps {
            let k = plan.depth.min(steps - done);
            wavefront(shape, &plan, k, |j, rows| {
                // Level done + j + 1 goes to slot (done + j + 1) % 2.
                let (out, ins) = ring_split(&mut ring, (done + j + 1) % 2);
                launch_in::<Heat, E, f64>(space, rows, 1..nx - 1, &mut [out], &[ins[0]], &[alpha])
            })
            .unwrap();
            done += k;
        }
        let [a, b] = ring;
        if steps.is_multiple_of(2) {
            a
        } else {
            b
        }
    }
    for plan in [
        BlockPlan::new(&shape, 5, 1).unwrap(),
        BlockPlan::new(&shape, 8, 3).unwrap(),
        BlockPlan::new(&shape, 37, 100).unwrap(),
    ] {
        for got in [
            blocked(&Serial, &shape, plan, steps, alpha),
            blocked(&Rayon::with_threads(2).unwrap(), &shape, plan, steps, alpha),
        ] {
            assert!(
                u.as_slice()[(nz / 3) * nx + nx / 2 + 3] > 0.0,
                "heat spread"
            );
            assert!(
                bits(u.as_slice()) == bits(got.as_slice()),
                "heat blocked {plan:?}"
            );
        }
    }
}

/// A user's 3D heat step (radius 2 from the IR) blocked in bands of z-planes through the
/// same schedule (`wavefront`, `ring_split`, `launch_in_region` on `[planes, rows, cols]`),
/// serial and rayon, equals the plain loop of the generated function bit for bit.
#[test]
fn a_user_3d_stencil_runs_blocked_in_bands_of_planes() {
    let ([nz, ny, nx], steps, alpha) = ([23, 9, 11], 19, 0.05);
    let init = || {
        HostField::<f64, 3>::from_vec_shape(
            [nz, ny, nx],
            (0..nz * ny * nx)
                .map(|k| {
                    if k == (nz / 3 * ny + 4) * nx + 5 {
                        100.0
                    } else {
                        0.25
                    }
                })
                .collect(),
        )
        .unwrap()
    };
    let mut u = init();
    let mut unew = init();
    for _ in 0..steps {
        heat3(&Serial, &mut unew, &u, alpha).unwrap();
        u.swap(&mut unew);
    }
    let shape = StepShape::for_stencil(&Heat3::INFO, 2, nz, ny * nx * 16).unwrap();
    assert_eq!((shape.radius, shape.domain.clone()), (2, 2..nz - 2));
    fn blocked<E: ExecutionSpace<Memory = MemSpaceHost>>(
        space: &E,
        shape: &StepShape,
        plan: BlockPlan,
        [_, ny, nx]: [usize; 3],
        init: &dyn Fn() -> HostField<f64, 3>,
        steps: usize,
        alpha: f64,
    ) -> HostField<f64, 3> {
        let mut ring = [init(), init()];
        let mut done = 0;
        while done < steps {
            let k = plan.depth.min(steps - done);
            wavefront(shape, &plan, k, |j, planes| {
                let (out, ins) = ring_split(&mut ring, (done + j + 1) % 2);
                launch_in_region::<Heat3, E, f64, 3>(
                    space,
                    [planes, 2..ny - 2, 2..nx - 2],
                    &mut [out],
                    &[ins[0]],
                    &[alpha],
                )
            })
            .unwrap();
            done += k;
        }
        let [a, b] = ring;
        if steps.is_multiple_of(2) {
            a
        } else {
            b
        }
    }
    for plan in [
        BlockPlan::new(&shape, 4, 2).unwrap(),
        BlockPlan::new(&shape, 7, 5).unwrap(),
        BlockPlan::new(&shape, 19, 100).unwrap(),
    ] {
        for got in [
            blocked(&Serial, &shape, plan, [nz, ny, nx], &init, steps, alpha),
            blocked(
                &Rayon::with_threads(2).unwrap(),
                &shape,
                plan,
                [nz, ny, nx],
                &init,
                steps,
                alpha,
            ),
        ] {
            assert!(
                u.as_slice()[(nz / 3 * ny + 4) * nx + 8] > 0.25,
                "heat spread"
            );
            assert!(
                bits(u.as_slice()) == bits(got.as_slice()),
                "3D heat blocked {plan:?}"
            );
        }
    }
}

/// The fused arithmetic (`Arithmetic::Fast`), with subnormals kept and flushed: blocked and
/// unblocked runs, serial and rayon, 2D and 3D, every other order, stay bit-identical within
/// the mode (the same generated row loops run in every schedule).
#[test]
fn fast_arithmetic_and_both_subnormal_modes_are_blocked_bit_identically() {
    let rayon = Rayon::with_threads(2).unwrap();
    for arithmetic in [Arithmetic::Fast, Arithmetic::Exact] {
        for subnormals in [Subnormals::Keep, Subnormals::Flush] {
            let numerics = Numerics {
                arithmetic,
                subnormals,
            };
            for order in [2, 8, 16] {
                let r = order / 2;
                let mode = SourceMode::Add;
                let c = WaveConfig {
                    numerics,
                    ..config(order, mode, 6, fixed(5, r + 1))
                };
                same_bits::<_, f32>(&Serial, &c);
                same_bits::<_, f64>(&rayon, &c);
                let c3 = WaveConfig {
                    numerics,
                    ..config3(order, mode, 4, fixed(4, r))
                };
                same_bits_in::<_, f32, 3>(&rayon, &c3);
            }
        }
    }
}
