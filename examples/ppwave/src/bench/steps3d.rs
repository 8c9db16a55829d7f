//! The 3D bench (`ppwave bench --ny N`): the triad bandwidth on 1 and `threads` threads,
//! then the 3D fused step of `--space-order` on each backend, single and (host backends)
//! blocked, timed interleaved, with the IR's bytes and flops per point and the % of the
//! triad measured in this run.

use super::stream::{self, Bandwidth};
use super::{median_min, mib, BenchArgs};
use anyhow::{Context, Result};
use ppstencil::exec::{cache_sizes, CacheSizes};
use ppstencil::launch::{Region, StencilInfo};
use ppstencil::solver::blocking::{ring_split, wavefront_tiled, BlockPlan, StepShape};
use ppstencil::solver::{Blocking, TimeBlock};
use ppstencil::{kernels, ExecutionSpace, Rayon, ScalarField, Serial};
use serde_json::json;
use std::time::Instant;

/// A host field of the 3D bench.
type Field3 = ScalarField<ppstencil::MemSpaceHost, f32, 3>;

/// Blocked over fused step rate, per backend label.
type Speedups = Vec<(String, f64)>;

/// Runs the 3D bench and prints its table; writes `--json` if asked.
pub(super) fn run_3d(
    args: &BenchArgs,
    ny: usize,
    backends: &[&'static str],
    threads: usize,
) -> Result<()> {
    let (nz, nx, order) = (args.nz, args.nx, args.space_order_3d());
    let info = check_3d(args, ny)?;
    let name = info.name;
    let cache = cache_sizes();
    let field_bytes = nz * ny * nx * 4;
    println!(
        "ppwave bench (3D): {nz} x {ny} x {nx} f32 grid, {} per field = {:.1} x the LLC ({}); {name}: {} B/pt, {} flop/pt (from the IR); {} timed runs after one warm-up, median reported",
        mib(field_bytes),
        field_bytes as f64 / cache.llc as f64,
        mib(cache.llc),
        info.bytes_per_point::<f32>(),
        info.flops_per_point,
        args.repeat
    );
    let len = stream::stream_bytes(args.stream_mib) / 8;
    let bandwidth = stream::measure(threads, len, args.repeat)?;
    for b in &bandwidth {
        println!(
            "  triad on {} thread(s): {:.1} GB/s",
            b.threads, b.triad_gbs
        );
    }
    let host = host_fields_3d([nz, ny, nx])?;
    let shape = step_shape_3d(order, [nz, ny, nx])?;
    let plan = blocked_plan_3d(args, &shape, &cache, name)?;
    let (rows, speedups) = measure_3d(args, backends, threads, &host, plan, &bandwidth, &info)?;
    for (label, x) in &speedups {
        println!("  {label}: blocked / fused = {x:.2} x (interleaved)");
    }
    if let Some(path) = &args.json {
        let v = json!({
            "grid": [nz, ny, nx], "space_order": order, "kernel": name,
            "bytes_per_point": info.bytes_per_point::<f32>(), "flops_per_point": info.flops_per_point,
            "bandwidth": bandwidth.iter().map(|b| json!({"threads": b.threads, "triad_gbs": b.triad_gbs})).collect::<Vec<_>>(),
            "steps": rows,
            "blocked_over_fused": speedups.iter().map(|(b, x)| (b.clone(), json!(x))).collect::<serde_json::Map<_, _>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(())
}

/// Checks the 3D bench's order and grid (each axis holds the stencil, the four f32 fields
/// fit in memory); returns the step's figures.
fn check_3d(args: &BenchArgs, ny: usize) -> Result<StencilInfo> {
    let (nz, nx, order) = (args.nz, args.nx, args.space_order_3d());
    ppstencil::solver::check_space_order(order)
        .map_err(|e| crate::BadInput(format!("--space-order {order}: {e}")))?;
    let name = format!("fd_step_3d_{order}");
    let Some(info) = kernels::ALL.iter().find(|i| i.name == name).copied() else {
        bad!("--space-order {order}: no 3D fused kernel {name}");
    };
    let min = order + 1;
    for (flag, n) in [("--nz", nz), ("--ny", ny), ("--nx", nx)] {
        if n < min {
            bad!("{flag} {n} is too small for the order-{order} 3D step: use at least {min}");
        }
    }
    let bytes = nz
        .checked_mul(ny)
        .and_then(|n| n.checked_mul(nx))
        .and_then(|n| n.checked_mul(4 * 4));
    let avail = crate::run::available_memory();
    if bytes.is_none() || bytes.zip(avail).is_some_and(|(b, a)| b as u64 > a) {
        bad!(
            "--nz {nz} x --ny {ny} x --nx {nx}: the four f32 fields of the 3D step would not fit in memory; use a smaller grid"
        );
    }
    Ok(info)
}

/// The 3D bench's host fields: `p`, `pold` (smooth waves along z and x) and `kv2`.
fn host_fields_3d([nz, ny, nx]: [usize; 3]) -> Result<[Field3; 3]> {
    let wave = |a: f32| {
        move |k: usize| {
            let (z, x) = (k / (ny * nx), k % nx);
            0.5 + 0.4 * (a * z as f32 + 0.013 * x as f32).sin()
        }
    };
    let field = |f: &dyn Fn(usize) -> f32| {
        ScalarField::from_vec_shape([nz, ny, nx], (0..nz * ny * nx).map(f).collect())
    };
    Ok([
        field(&wave(0.011))?,
        field(&wave(0.017))?,
        field(&|k| {
            let v = 1500.0 + (k / (ny * nx) % 1000) as f32;
            super::steps2d::DTDH2 * v * v
        })?,
    ])
}

/// The blocked step measured on the host backends: the plan a run would use, or the one
/// asked for (`None`: off, or `auto` where a run would not block, saying why). Prints it.
fn blocked_plan_3d(
    args: &BenchArgs,
    shape: &StepShape,
    cache: &CacheSizes,
    name: &str,
) -> Result<Option<BlockPlan>> {
    let plan = match args.time_block.resolve(shape, args.nz, cache.llc)? {
        Blocking::On(plan) => Some(plan),
        Blocking::Off(why) => {
            if args.time_block == TimeBlock::Auto {
                let why = why.strip_prefix("auto: ").unwrap_or(&why);
                println!("  blocked step not measured: a run would not block ({why}); force one with --time-block K, K:B or K:BxW");
            }
            None
        }
    };
    if let Some(p) = plan {
        println!(
            "  blocked = {name} with temporal blocking: {} steps per block, bands of {} z-planes{} ({} in flight of {} per plane), timed interleaved with {} single steps; time per step = block time / {}",
            p.depth,
            p.band,
            p.tile.map_or(String::new(), |w| format!(", tiles of {w} y-rows")),
            p.rows_in_flight(shape),
            mib(shape.row_bytes),
            p.depth,
            p.depth
        );
    }
    Ok(plan)
}

/// Times the 3D step on each backend, prints a row per step variant and returns the rows
/// (for JSON) and each host backend's blocked / fused ratio.
fn measure_3d(
    args: &BenchArgs,
    backends: &[&'static str],
    threads: usize,
    host: &[Field3; 3],
    plan: Option<BlockPlan>,
    bandwidth: &[Bandwidth],
    info: &StencilInfo,
) -> Result<(Vec<serde_json::Value>, Speedups)> {
    let (order, name) = (args.space_order_3d(), info.name);
    let [nz, ny, nx] = host[0].shape();
    let points = Region::for_stencil(info, [nz, ny, nx], &[])?.points() as f64;
    println!(
        "  {:<13} {:>8} {:>10} {:>8} {:>8} {:>10} {:>8}",
        "backend", "step", "median ms", "GB/s", "GFlop/s", "Gpoints/s", "% triad"
    );
    let mut rows = Vec::new();
    let mut speedups = Vec::new();
    for b in backends {
        let ((median, blocked), t) = match *b {
            "serial" => (time_3d(&Serial, order, host, args.repeat, plan)?, Some(1)),
            "rayon" => {
                let pool = Rayon::with_threads(threads)?;
                (
                    time_3d(&pool, order, host, args.repeat, plan)?,
                    Some(threads),
                )
            }
            "cuda" => match ppstencil::Cuda::new() {
                Ok(space) => (time_3d(&space, order, host, args.repeat, None)?, None),
                Err(e) => {
                    println!("  {b}: skipped ({e})");
                    continue;
                }
            },
            "hip" => match ppstencil::Hip::new() {
                Ok(space) => (time_3d(&space, order, host, args.repeat, None)?, None),
                Err(e) => {
                    println!("  {b}: skipped ({e})");
                    continue;
                }
            },
            _ => continue,
        };
        let label = t.map_or(b.to_string(), |t| format!("{b}/{t}"));
        let variants = [("fused", Some(median)), ("blocked", blocked)];
        for (variant, median) in variants.into_iter().filter_map(|(v, m)| Some((v, m?))) {
            // Effective GB/s: the compulsory bytes of every step over the time per step (a
            // blocked step may exceed the triad).
            let gbs = points * info.bytes_per_point::<f32>() as f64 / median / 1e9;
            let gflops = points * info.flops_per_point as f64 / median / 1e9;
            let pct = t
                .and_then(|t| bandwidth.iter().find(|x| x.threads == t))
                .map(|x| 100.0 * gbs / x.triad_gbs);
            println!(
                "  {:<13} {:>8} {:>10.3} {:>8.1} {:>8.1} {:>10.3} {:>8}",
                label,
                variant,
                median * 1e3,
                gbs,
                gflops,
                points / median / 1e9,
                pct.map_or("n/a".to_string(), |p| format!("{p:.0} %"))
            );
            rows.push(json!({
                "backend": b, "threads": t, "kernel": name, "variant": variant,
                "time_block": (variant == "blocked").then(|| plan.map(|p| json!({"depth": p.depth, "band_planes": p.band, "tile": p.tile}))).flatten(),
                "median_s": median, "gbs": gbs,
                "gflops": gflops, "gpoints_per_s": points / median / 1e9, "pct_of_triad": pct,
            }));
        }
        if let Some(blocked) = blocked {
            speedups.push((label, median / blocked));
        }
    }
    Ok((rows, speedups))
}

/// The 3D fused step `fd_step_3d_<order>` on `space`, on a ring of three levels made from
/// the host fields `p`, `pold` (and `kv2`) moved to the space: each of `repeat` rounds (after
/// one warm-up round) times `k` single steps and then, with a `plan` (host backends), one
/// blocked sweep of the same `k = plan.depth` steps in bands of the plan's z-planes,
/// interleaved so that both see the same machine (`k = 1` without a plan). Returns the
/// median time per step of each (the blocked one `None` without a plan).
fn time_3d<E: ExecutionSpace>(
    space: &E,
    order: usize,
    host: &[ScalarField<ppstencil::MemSpaceHost, f32, 3>; 3],
    repeat: usize,
    plan: Option<BlockPlan>,
) -> Result<(f64, Option<f64>)> {
    let dev = |f: &ScalarField<ppstencil::MemSpaceHost, f32, 3>| {
        ScalarField::<E::Memory, f32, 3>::from_host(f)
    };
    let [nz, ny, nx] = host[0].shape();
    let kv2 = dev(&host[2])?;
    let mut ring = [
        dev(&host[1])?,
        dev(&host[0])?,
        ScalarField::<E::Memory, f32, 3>::zeros([nz, ny, nx])?,
    ];
    let shape = step_shape_3d(order, [nz, ny, nx])?;
    let r = shape.radius;
    let k = plan.map_or(1, |p| p.depth);
    let (mut level, mut single, mut blocked) = (0, Vec::new(), Vec::new());
    for round in 0..=repeat {
        let start = Instant::now();
        for j in 0..k {
            let (out, ins) = ring_split(&mut ring, (level + j + 2) % 3);
            kernels::fd_step_3d_of_order(space, order, out, ins[0], ins[1], &kv2)?;
        }
        space.synchronize()?;
        level += k;
        let t = start.elapsed().as_secs_f64() / k as f64;
        if round > 0 {
            single.push(t);
        }
        if let Some(plan) = plan {
            let start = Instant::now();
            space.install(|| {
                wavefront_tiled(&shape, &plan, k, |j, band, cols| {
                    let (out, ins) = ring_split(&mut ring, (level + j + 2) % 3);
                    let region = [band, cols, r..nx - r];
                    kernels::fd_step_3d_in(space, order, region, out, ins[0], ins[1], &kv2)
                })
            })?;
            space.synchronize()?;
            level += k;
            let t = start.elapsed().as_secs_f64() / k as f64;
            if round > 0 {
                blocked.push(t);
            }
        }
    }
    let blocked = (!blocked.is_empty()).then(|| median_min(blocked).0);
    Ok((median_min(single).0, blocked))
}

/// The shape of the 3D fused step of `order` for the schedule: radius from the IR, three
/// levels, a z-plane of the IR's compulsory bytes per point.
pub(super) fn step_shape_3d(order: usize, [nz, ny, nx]: [usize; 3]) -> Result<StepShape> {
    let info = kernels::fd_step_3d_info(order)?;
    Ok(
        StepShape::for_stencil(info, 3, nz, ny * nx * info.bytes_per_point::<f32>())?
            .with_axis1(ny)?,
    )
}
