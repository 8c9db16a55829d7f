//! `ppwave bench`: the roofline report.
//!
//! 1. Measures the machine's practical memory bandwidth in this process with STREAM-style
//!    copy (`a = b`) and triad (`a = b + s c`) loops over `f64` arrays of at least 4 x the
//!    last-level cache each, on one thread and on the rayon pool, and the compute peak with a
//!    loop of separate f32 multiplies and adds (no FMA, like the kernels) on the same threads.
//! 2. Times every acoustic kernel (`fd_pxx`, `fd_pzz`, `fd_time`, and the fused `fd_step_4`;
//!    `add_source` is excluded, as in the paper) on every selected backend: the median of
//!    `--repeat` runs after one warm-up run.
//! 3. Converts times with the figures kernels-gen derived from each stencil's IR
//!    (`StencilInfo::bytes_per_point`, `flops_per_point`) into GB/s, GFlop/s and % of the
//!    measured triad bandwidth at the same thread count, and times the whole time step, split
//!    (the paper's three kernels) and fused, in Gpoints/s.
//!
//! The hand-written C/OpenMP fused step ([`cref`](crate::cref), feature `c-reference`) runs in
//! the same process as a reference; without it the report says so and how to enable it. Results go to stdout as a table, and optionally to JSON (`--json`) and a
//! roofline plot (`--plot`, SVG or PNG by the file's extension; drawn by
//! [`figures::roofline`](mod@crate::figures::roofline)).

use crate::figures::{self, roofline};
use anyhow::{Context, Result};
use ppstencil::exec::{cache_sizes, simd_for, vectorized};
use ppstencil::launch::{launch_in, Region, Stencil, StencilInfo};
use ppstencil::solver::blocking::{ring_split, wavefront_tiled, BlockPlan, StepShape, AUTO_DEPTH};
use ppstencil::solver::TimeBlock;
use ppstencil::{kernels, ExecutionSpace, HostField, MemSpaceHost, Rayon, ScalarField, Serial};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `ppwave bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Grid rows (the paper's grid is 1751 x 5001; the default 4096 x 4096 makes each
    /// kernel's fields several times larger than a 32 MiB last-level cache).
    #[arg(long, default_value_t = 4096)]
    pub nz: usize,
    /// Grid columns.
    #[arg(long, default_value_t = 4096)]
    pub nx: usize,
    /// Planes along y: measure the 3D fused step (`fd_step_3d_<order>`) on an nz x ny x nx
    /// grid instead of the 2D kernels (e.g. --nz 512 --ny 512 --nx 512; backends serial,
    /// rayon, cuda, hip).
    #[arg(long)]
    pub ny: Option<usize>,
    /// Space order of the 3D fused step (with --ny): even, 2 to 16 [default: 8]. The 2D
    /// bench measures the order-4 kernels of the paper and refuses it.
    #[arg(long)]
    pub space_order: Option<usize>,
    /// Backends to measure, comma-separated: serial, rayon, c (the hand-written C/OpenMP
    /// reference), cuda, hip, or all. Backends without a device are reported and skipped.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub backend: Vec<String>,
    /// Threads of the rayon pool and of the C reference (default: rayon's default, one per
    /// core or RAYON_NUM_THREADS).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Timed runs per measurement (after one warm-up run); the median is reported.
    #[arg(long, default_value_t = 10)]
    pub repeat: usize,
    /// Size of each STREAM array in MiB (default: 4 x the last-level cache, at least 64).
    #[arg(long)]
    pub stream_mib: Option<usize>,
    /// Rows per rayon task (default: the runtime's choice, see `Rayon::chunk_rows`).
    #[arg(long)]
    pub chunk_rows: Option<usize>,
    /// Temporal blocking of the blocked step measured beside the single fused step on the
    /// host backends: auto (the plan `ppwave run` would use; on a 2D grid that fits in the
    /// cache, blocks of AUTO_DEPTH = 16 steps; in 3D (--ny), none where a run would not block,
    /// saying why), K (steps per block), K:B (and rows per band, z-planes in 3D), K:BxW (and
    /// tiles of W points along y in 3D, x in 2D), or off.
    /// In 3D the blocked and single steps are timed interleaved, round by round.
    #[arg(long, default_value = "auto", value_parser = crate::cli::parse_time_block)]
    pub time_block: TimeBlock,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Replace an existing --json or --plot file (without it, an existing file is refused
    /// before anything runs).
    #[arg(long)]
    pub overwrite: bool,
    /// Draw the roofline (bandwidth and compute roofs, kernels as points) to this file: SVG,
    /// or PNG when the name ends in .png.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Arithmetic of the host kernels, as `ppwave run --numerics` [default: exact].
    #[arg(long, value_enum)]
    pub numerics: Option<crate::cli::ArithmeticArg>,
    /// Subnormals on the host kernels, as `ppwave run --subnormals` [default: flush].
    #[arg(long, value_enum)]
    pub subnormals: Option<crate::cli::SubnormalsArg>,
}

impl BenchArgs {
    /// The space order of the 3D step: `--space-order`, 8 where it is not given.
    pub fn space_order_3d(&self) -> usize {
        self.space_order.unwrap_or(8)
    }
}

/// One measured bandwidth figure.
#[derive(Clone, Copy, Debug)]
struct Bandwidth {
    threads: usize,
    copy_gbs: f64,
    triad_gbs: f64,
    /// Compute peak of the same threads ([`addmul_peak`]).
    addmul_gflops: f64,
}

/// One kernel on one backend.
#[derive(Clone, Debug)]
struct KernelRow {
    kernel: &'static str,
    backend: String,
    threads: Option<usize>,
    info: StencilInfo,
    points: usize,
    median_s: f64,
    min_s: f64,
}

impl KernelRow {
    fn bytes(&self) -> usize {
        self.info.bytes_per_point::<f32>()
    }
    fn gbs(&self) -> f64 {
        (self.points * self.bytes()) as f64 / self.median_s / 1e9
    }
    fn gflops(&self) -> f64 {
        (self.points * self.info.flops_per_point) as f64 / self.median_s / 1e9
    }
}

/// One whole time step on one backend.
#[derive(Clone, Debug)]
struct StepRow {
    backend: String,
    variant: &'static str,
    median_s: f64,
    gpoints: f64,
    /// The blocked step's plan (variant `blocked`).
    plan: Option<BlockPlan>,
}

const BACKENDS: [&str; 5] = ["serial", "rayon", "c", "cuda", "hip"];

/// Returns a [`BadInput`](crate::BadInput) error (exit status 2) from the enclosing function.
macro_rules! bad {
    ($($t:tt)*) => {
        return Err(crate::BadInput(format!($($t)*)).into())
    };
}

/// Checks that `path` (the file of option `flag`) can be written, without changing it: its
/// directory exists and is writable, and it is not a directory. A file created by the probe
/// is removed again.
fn check_writable(flag: &str, path: &std::path::Path) -> Result<()> {
    let shown = path.display();
    if path.is_dir() {
        bad!("{flag} {shown}: is a directory; give a file name");
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        bad!(
            "{flag} {shown}: the directory {} does not exist; create it or choose another path",
            dir.display()
        );
    }
    let existed = path.exists();
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => bad!("{flag} {shown}: cannot be written ({e}); choose a writable path"),
    }
}

/// Checks the options; returns the selected backends and the thread count.
fn check(args: &BenchArgs) -> Result<(Vec<&'static str>, usize)> {
    if let (None, Some(order)) = (args.ny, args.space_order) {
        bad!(
            "--space-order {order} applies only to the 3D bench (--ny N): the 2D bench measures \
             the paper's order-4 kernels; add --ny N to measure the order-{order} 3D step, or \
             drop --space-order"
        );
    }
    let min = 2 * kernels::FdPxx::INFO.radius + 1;
    for (name, n) in [("--nz", args.nz), ("--nx", args.nx)] {
        if n < min {
            bad!(
                "{name} {n} is too small for the radius-{} stencils: use at least {min} \
                 (the default is 4096)",
                kernels::FdPxx::INFO.radius
            );
        }
    }
    let fields_bytes = args
        .nz
        .checked_mul(args.nx)
        .and_then(|n| n.checked_mul(4 * 8))
        .filter(|b| *b <= isize::MAX as usize);
    if fields_bytes.is_none() {
        bad!(
            "--nz {} x --nx {} is too large: the benchmark's eight f32 fields would not fit \
             in memory; use a smaller grid",
            args.nz,
            args.nx
        );
    }
    if let Err(e) = ppstencil::exec::llc_from_env() {
        bad!("{e}");
    }
    if args.repeat == 0 {
        bad!("--repeat 0: use at least 1 timed run (the median of the runs is reported)");
    }
    if args.chunk_rows == Some(0) {
        bad!("--chunk-rows 0: use at least 1 row per rayon task (or leave it out for the default)");
    }
    if args.stream_mib == Some(0) {
        bad!("--stream-mib 0: use at least 1 MiB per STREAM array (default: 4 x the LLC)");
    }
    if let Some(path) = &args.plot {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !(ext.eq_ignore_ascii_case("svg") || is_png(path)) {
            bad!(
                "--plot {}: the picture is written as SVG or PNG; use a file name ending in .svg or .png",
                path.display()
            );
        }
    }
    // Memory: the grid's fields and the STREAM arrays (three of f64) are allocated whole.
    if let (Some(avail), Some(fields)) = (crate::run::available_memory(), fields_bytes) {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        if fields as u64 > avail {
            bad!(
                "--nz {} x --nx {} needs about {:.1} GiB for the benchmark's eight f32 fields, but only {:.1} GiB of memory is available; use a smaller grid",
                args.nz, args.nx, gib(fields as u64), gib(avail)
            );
        }
        if let Some(m) = args.stream_mib {
            let need = (m as u64).checked_mul(3 << 20);
            if need.is_none_or(|n| n > avail) {
                bad!(
                    "--stream-mib {m}: the three STREAM arrays need {} MiB, but only {:.1} GiB of memory is available; use --stream-mib {} or less (default: 4 x the LLC, at least 64)",
                    3u128 * m as u128, gib(avail), avail / (3 << 20)
                );
            }
        }
    }
    // Output files: checked before the benchmark, not after it; never replaced unasked.
    for (flag, path) in [("--json", &args.json), ("--plot", &args.plot)] {
        if let Some(path) = path {
            if !args.overwrite && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
                bad!(
                    "{flag} {}: the file exists; choose a new name, or add --overwrite to replace it",
                    path.display()
                );
            }
            check_writable(flag, path)?;
        }
    }
    check_time_block(args)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    if threads == 0 || threads > cores {
        bad!("--threads {threads}: this machine has {cores} hardware threads; use 1 to {cores}");
    }
    let mut chosen = Vec::new();
    for b in &args.backend {
        let b = b.trim().to_ascii_lowercase();
        if b == "all" {
            chosen.extend(BACKENDS);
        } else if let Some(known) = BACKENDS.iter().find(|k| **k == b) {
            chosen.push(*known);
        } else {
            bad!(
                "--backend {b}: unknown backend; use serial, rayon, c, cuda, hip or all \
                 (comma-separated)"
            );
        }
    }
    chosen.sort_by_key(|b| BACKENDS.iter().position(|k| k == b));
    chosen.dedup();
    Ok((chosen, threads))
}

/// Median and minimum of `repeat` timed runs of `f` after one warm-up run.
fn time(repeat: usize, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    f()?;
    let mut t = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let start = Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64());
    }
    Ok(median_min(t))
}

/// Median and minimum of the times `t` (at least one).
fn median_min(mut t: Vec<f64>) -> (f64, f64) {
    t.sort_by(f64::total_cmp);
    let median = if t.len() % 2 == 1 {
        t[t.len() / 2]
    } else {
        0.5 * (t[t.len() / 2 - 1] + t[t.len() / 2])
    };
    (median.max(1e-12), t[0])
}

/// Bytes of each STREAM array: `mib` MiB (`--stream-mib`), by default 4 × the last-level
/// cache and at least 64 MiB.
fn stream_bytes(mib: Option<usize>) -> usize {
    mib.map_or_else(|| (4 * cache_sizes().llc).max(64 << 20), |m| m << 20)
}

/// The STREAM triad of `threads` threads in GB/s (arrays of the default size, the median of
/// `repeat` runs after a warm-up), for programs that report their timings beside the
/// bandwidth of the moment (`examples/pml_cost.rs`).
pub fn triad_gbs(threads: usize, repeat: usize) -> Result<f64> {
    Ok(stream(threads, stream_bytes(None) / 8, repeat)?.triad_gbs)
}

/// STREAM copy and triad on `threads` threads (one contiguous block per thread, as OpenMP's
/// static schedule), on `len`-element `f64` arrays.
fn stream(threads: usize, len: usize, repeat: usize) -> Result<Bandwidth> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the STREAM thread pool")?;
    let block = len.div_ceil(threads);
    let (mut a, mut b, mut c) = (vec![0.0f64; len], vec![0.0f64; len], vec![0.0f64; len]);
    // First touch on the threads that will use the memory, with non-zero values.
    pool.install(|| {
        (
            a.par_chunks_mut(block),
            b.par_chunks_mut(block),
            c.par_chunks_mut(block),
        )
            .into_par_iter()
            .for_each(|(a, b, c)| {
                a.fill(1.0);
                b.fill(2.0);
                c.fill(0.5);
            })
    });
    let s = 3.0f64;
    let (copy, _) = time(repeat, || {
        pool.install(|| {
            a.par_chunks_mut(block)
                .zip(b.par_chunks(block))
                .for_each(|(a, b)| vectorized(false, |_| a.copy_from_slice(b)))
        });
        Ok(())
    })?;
    let (triad, _) = time(repeat, || {
        pool.install(|| {
            (
                a.par_chunks_mut(block),
                b.par_chunks(block),
                c.par_chunks(block),
            )
                .into_par_iter()
                .for_each(|(a, b, c)| {
                    vectorized(false, |_| {
                        for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                            *a = b + s * c;
                        }
                    })
                })
        });
        Ok(())
    })?;
    std::hint::black_box(&a);
    let bytes = (len * 8) as f64;
    Ok(Bandwidth {
        threads,
        copy_gbs: 2.0 * bytes / copy / 1e9,
        triad_gbs: 3.0 * bytes / triad / 1e9,
        addmul_gflops: addmul_peak(&pool, threads, repeat)?,
    })
}

/// Independent values of the compute-peak loop: enough chains to hide the latency of the
/// multiply and the add at every vector width the kernels use.
const PEAK_LANES: usize = 64;
/// Iterations of the compute-peak loop per thread (2 flop per value each).
const PEAK_ITERS: usize = 1 << 18;

/// The compute roof: f32 GFlop/s of `threads` threads each updating [`PEAK_LANES`] values as
/// `a = a * m + c` [`PEAK_ITERS`] times, with the kernels' vector unit
/// ([`vectorized`]) and, like them, a separate multiply and add (Rust never fuses them).
fn addmul_peak(pool: &rayon::ThreadPool, threads: usize, repeat: usize) -> Result<f64> {
    let work = || {
        vectorized(false, |_| {
            let (m, c) = std::hint::black_box((0.999_999f32, 1.0e-6f32));
            let mut acc = [1.0f32; PEAK_LANES];
            for _ in 0..PEAK_ITERS {
                for a in acc.iter_mut() {
                    *a = *a * m + c;
                }
            }
            std::hint::black_box(acc)
        })
    };
    let (median, _) = time(repeat, || {
        pool.install(|| {
            (0..threads).into_par_iter().for_each(|_| {
                work();
            })
        });
        Ok(())
    })?;
    Ok((2 * PEAK_LANES * PEAK_ITERS * threads) as f64 / median / 1e9)
}

/// Host fields of the benchmark: smooth, finite, not denormal values.
struct HostFields {
    p: HostField,
    pold: HostField,
    v: HostField,
    kv2: HostField,
}

const DTDH2: f32 = 1.0e-7;

fn host_fields(nz: usize, nx: usize) -> Result<HostFields> {
    let wave =
        |a: f32| move |z: usize, x: usize| 0.5 + 0.4 * (a * z as f32 + 0.013 * x as f32).sin();
    let p = ScalarField::from_fn(nz, nx, wave(0.011))?;
    let pold = ScalarField::from_fn(nz, nx, wave(0.017))?;
    let v = ScalarField::from_fn(nz, nx, |z, _| 1500.0 + (z % 1000) as f32)?;
    let kv2 = ScalarField::from_fn(nz, nx, |z, _| {
        let v = 1500.0 + (z % 1000) as f32;
        DTDH2 * v * v
    })?;
    Ok(HostFields { p, pold, v, kv2 })
}

/// Times the four kernels and the two steps on execution space `space`.
fn bench_space<E: ExecutionSpace>(
    space: &E,
    backend: &str,
    threads: Option<usize>,
    host: &HostFields,
    repeat: usize,
    time_block: TimeBlock,
) -> Result<(Vec<KernelRow>, Vec<StepRow>)> {
    let [nz, nx] = host.p.shape();
    let dev = |f: &HostField| ScalarField::<E::Memory>::from_host(f);
    let (p, pold, v, kv2) = (
        dev(&host.p)?,
        dev(&host.pold)?,
        dev(&host.v)?,
        dev(&host.kv2)?,
    );
    let zeros = || ScalarField::<E::Memory>::new(nz, nx);
    let (mut pxx, mut pzz, mut pnew) = (zeros()?, zeros()?, zeros()?);
    let sync = || space.synchronize();
    let mut rows = Vec::new();
    let mut row = |info: StencilInfo, (median_s, min_s): (f64, f64)| -> Result<()> {
        rows.push(KernelRow {
            kernel: info.name,
            backend: backend.to_string(),
            threads,
            info,
            points: Region::for_stencil(&info, [nz, 1, nx], &[])?.points(),
            median_s,
            min_s,
        });
        Ok(())
    };
    row(
        kernels::FdPxx::INFO,
        time(repeat, || {
            kernels::fd_pxx(space, &mut pxx, &p)?;
            Ok(sync()?)
        })?,
    )?;
    row(
        kernels::FdPzz::INFO,
        time(repeat, || {
            kernels::fd_pzz(space, &mut pzz, &p)?;
            Ok(sync()?)
        })?,
    )?;
    row(
        kernels::FdTime::INFO,
        time(repeat, || {
            kernels::fd_time(space, &mut pnew, &p, &pold, &v, &pxx, &pzz, DTDH2)?;
            Ok(sync()?)
        })?,
    )?;
    let fused = time(repeat, || {
        kernels::fd_step_4(space, &mut pnew, &p, &pold, &kv2)?;
        Ok(sync()?)
    })?;
    row(kernels::FdStep4::INFO, fused)?;
    let (split, _) = time(repeat, || {
        kernels::fd_pxx(space, &mut pxx, &p)?;
        kernels::fd_pzz(space, &mut pzz, &p)?;
        kernels::fd_time(space, &mut pnew, &p, &pold, &v, &pxx, &pzz, DTDH2)?;
        Ok(sync()?)
    })?;
    let points = (nz * nx) as f64;
    let steps = vec![
        StepRow {
            backend: backend.to_string(),
            variant: "split",
            median_s: split,
            gpoints: points / split / 1e9,
            plan: None,
        },
        StepRow {
            backend: backend.to_string(),
            variant: "fused",
            median_s: fused.0,
            gpoints: points / fused.0 / 1e9,
            plan: None,
        },
    ];
    let mut steps = steps;
    let is_host = std::any::TypeId::of::<E::Memory>() == std::any::TypeId::of::<MemSpaceHost>();
    if let Some(plan) = blocked_plan(time_block, nz, nx)?.filter(|_| is_host) {
        // A ring of three levels (pold, p, next), advanced `plan.depth` steps per timed run.
        let mut ring = [dev(&host.pold)?, dev(&host.p)?, zeros()?];
        let shape = step_shape(nz, nx)?;
        let mut level = 0;
        let (block_s, block_min) = time(repeat, || {
            space.install(|| {
                wavefront_tiled(&shape, &plan, plan.depth, |j, band, cols| {
                    let (out, ins) = ring_split(&mut ring, (level + j + 2) % 3);
                    launch_in::<kernels::FdStep4, E, f32>(
                        space,
                        band,
                        cols,
                        &mut [out],
                        &[ins[0], ins[1], &kv2],
                        &[],
                    )
                })
            })?;
            level += plan.depth;
            Ok(sync()?)
        })?;
        let per_step = block_s / plan.depth as f64;
        rows.push(KernelRow {
            kernel: "fd_step_4+tb",
            backend: backend.to_string(),
            threads,
            info: kernels::FdStep4::INFO,
            points: Region::for_stencil(&kernels::FdStep4::INFO, [nz, 1, nx], &[])?.points(),
            median_s: per_step,
            min_s: block_min / plan.depth as f64,
        });
        steps.push(StepRow {
            backend: backend.to_string(),
            variant: "blocked",
            median_s: per_step,
            gpoints: points / per_step / 1e9,
            plan: Some(plan),
        });
    }
    Ok((rows, steps))
}

/// The shape of the fused order-4 step for the schedule: radius from the IR, three levels,
/// the IR's compulsory bytes per point.
fn step_shape(nz: usize, nx: usize) -> Result<StepShape> {
    let info = kernels::FdStep4::INFO;
    Ok(StepShape::for_stencil(&info, 3, nz, nx * info.bytes_per_point::<f32>())?.with_axis1(nx)?)
}

/// The plan of the blocked step `--time-block` asks for (`None`: off). `auto` takes the
/// plan a run starts from (a long run then times its band against a half and a quarter of it,
/// `ppstencil::solver::tuning`; the bench does not: `--time-block K:B` measures another band),
/// or blocks of [`AUTO_DEPTH`] steps where the run would not block.
fn blocked_plan(time_block: TimeBlock, nz: usize, nx: usize) -> Result<Option<BlockPlan>> {
    let shape = step_shape(nz, nx)?;
    let llc = cache_sizes().llc;
    Ok(match time_block {
        TimeBlock::Off => None,
        TimeBlock::Auto => Some(BlockPlan::auto(&shape, nz, llc).unwrap_or(BlockPlan {
            depth: AUTO_DEPTH,
            band: BlockPlan::band_for(&shape, AUTO_DEPTH, llc),
            tile: None,
        })),
        TimeBlock::Depth(k) => Some(BlockPlan::new(
            &shape,
            k,
            BlockPlan::band_for(&shape, k, llc),
        )?),
        TimeBlock::Fixed(plan) => Some(plan.checked(&shape)?),
    })
}

/// Refuses, before anything runs, a `--time-block` depth or band the grid cannot take: the
/// plan the blocked step would use in 2D, and the same check at `--space-order` in 3D (a
/// grid the 3D step cannot take at all is reported by the 3D bench's own checks).
fn check_time_block(args: &BenchArgs) -> Result<()> {
    let bad = |e: anyhow::Error| {
        anyhow::Error::new(crate::BadInput(format!(
            "--time-block {}: {e}; choose a deeper band, a smaller depth, or auto",
            args.time_block.name()
        )))
    };
    match (args.ny, args.time_block) {
        (_, TimeBlock::Off | TimeBlock::Auto) => Ok(()),
        (None, tb) => blocked_plan(tb, args.nz, args.nx).map(|_| ()).map_err(bad),
        (Some(ny), tb) => {
            let Ok(shape) = step_shape_3d(args.space_order_3d(), [args.nz, ny, args.nx]) else {
                return Ok(());
            };
            let llc = cache_sizes().llc;
            match tb {
                TimeBlock::Depth(k) => {
                    BlockPlan::new(&shape, k, BlockPlan::band_for(&shape, k, llc)).map(|_| ())
                }
                TimeBlock::Fixed(p) => p.checked(&shape).map(|_| ()),
                TimeBlock::Off | TimeBlock::Auto => Ok(()),
            }
            .map_err(|e| bad(e.into()))
        }
    }
}

/// The C reference's fused step on `threads` threads.
fn bench_c(host: &HostFields, threads: usize, repeat: usize) -> Result<(KernelRow, StepRow)> {
    let [nz, nx] = host.p.shape();
    let mut pnew = vec![0.0f32; nz * nx];
    let (p, pold, kv2) = (host.p.as_slice(), host.pold.as_slice(), host.kv2.as_slice());
    let (median_s, min_s) = time(repeat, || {
        crate::cref::fd_step(&mut pnew, p, pold, kv2, nz, nx, threads)?;
        Ok(())
    })?;
    let backend = format!("c-openmp/{threads}");
    let info = kernels::FdStep4::INFO;
    Ok((
        KernelRow {
            kernel: info.name,
            backend: backend.clone(),
            threads: Some(threads),
            info,
            points: Region::for_stencil(&info, [nz, 1, nx], &[])?.points(),
            median_s,
            min_s,
        },
        StepRow {
            backend,
            variant: "fused",
            median_s,
            gpoints: (nz * nx) as f64 / median_s / 1e9,
            plan: None,
        },
    ))
}

/// Bytes in binary units: `48 KiB`, `1.0 MiB`.
fn mib(bytes: usize) -> String {
    if bytes < 1 << 20 {
        format!("{:.0} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    }
}

/// Runs the benchmark and prints the report.
pub fn run(args: &BenchArgs) -> Result<()> {
    let numerics = crate::cli::numerics(args.numerics, args.subnormals);
    ppstencil::with_numerics(numerics, || run_with_numerics(args))
}

/// The vector unit the host kernels run with under this thread's numerics.
fn vector_unit() -> &'static str {
    simd_for(ppstencil::numerics().arithmetic == ppstencil::Arithmetic::Fast).name()
}

/// [`run`] under the numerics it set.
fn run_with_numerics(args: &BenchArgs) -> Result<()> {
    let (backends, threads) = check(args)?;
    if let Some(ny) = args.ny {
        return run_3d(args, ny, &backends, threads);
    }
    let cache = cache_sizes();
    let (nz, nx) = (args.nz, args.nx);
    let field_bytes = nz * nx * 4;
    let smallest_set = kernels::FdPxx::INFO.bytes_per_point::<f32>() / 4 * field_bytes;
    let mut out = String::new();
    let cache_src = if cache.detected {
        format!(
            "read from /sys/devices/system/cpu/cpu0/cache; LLC {}",
            cache.llc_source
        )
    } else {
        "not readable; typical values assumed".to_string()
    };
    writeln!(
        out,
        "ppwave bench: {nz} x {nx} f32 grid, {} per field; caches L1d {}, L2 {}, LLC {} ({cache_src})",
        mib(field_bytes),
        mib(cache.l1d),
        mib(cache.l2),
        mib(cache.llc)
    )?;
    let ratio = smallest_set as f64 / cache.llc as f64;
    writeln!(
        out,
        "  fd_pxx's working set is {} = {ratio:.1} x the LLC{}",
        mib(smallest_set),
        if ratio < 4.0 {
            " (below 4 x: partly cache-resident, not a memory-bandwidth measurement)"
        } else {
            ""
        }
    )?;
    writeln!(
        out,
        "  vector unit: {}; rayon pool: {threads} threads; {} timed runs after one warm-up, median reported",
        vector_unit(),
        args.repeat
    )?;

    // 1. Bandwidth.
    let len = stream_bytes(args.stream_mib) / 8;
    let mut bandwidth = vec![stream(1, len, args.repeat)?];
    if threads > 1 {
        bandwidth.push(stream(threads, len, args.repeat)?);
    }
    let bw_for = |t: usize| {
        bandwidth
            .iter()
            .find(|b| b.threads == t)
            .map(|b| b.triad_gbs)
    };
    let counting = format!(
        "STREAM convention: copy counts 2 and triad 3 arrays x 8 B per element (f64 arrays of {} \
         each); the extra read of the destination line caused by write-allocate is not counted, \
         so the true traffic is 3/2 (copy) and 4/3 (triad) of these figures",
        mib(len * 8)
    );
    writeln!(out, "\nMemory bandwidth ({counting}):")?;
    writeln!(
        out,
        "  {:>7}  {:>10}  {:>10}  {:>16}",
        "threads", "copy GB/s", "triad GB/s", "add+mul GFlop/s"
    )?;
    for b in &bandwidth {
        writeln!(
            out,
            "  {:>7}  {:>10.1}  {:>10.1}  {:>16.1}",
            b.threads, b.copy_gbs, b.triad_gbs, b.addmul_gflops
        )?;
    }
    print!("{out}");
    out.clear();

    // 2. Kernels.
    let host = host_fields(nz, nx)?;
    let mut kernel_rows = Vec::new();
    let mut step_rows = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for b in &backends {
        let result = match *b {
            "serial" => bench_space(
                &Serial,
                "serial",
                Some(1),
                &host,
                args.repeat,
                args.time_block,
            ),
            "rayon" => {
                let mut pool = Rayon::with_threads(threads)?;
                if let Some(rows) = args.chunk_rows {
                    pool = pool.chunk_rows(rows);
                }
                bench_space(
                    &pool,
                    "rayon",
                    Some(threads),
                    &host,
                    args.repeat,
                    args.time_block,
                )
            }
            "c" => {
                if !crate::cref::available() {
                    skipped.push((
                        b.to_string(),
                        crate::cref::RefError::Unavailable.to_string(),
                    ));
                    continue;
                }
                let mut rows = (Vec::new(), Vec::new());
                let counts = if threads > 1 && crate::cref::has_openmp() {
                    vec![1, threads]
                } else {
                    vec![1]
                };
                for t in counts {
                    let (k, s) = bench_c(&host, t, args.repeat)?;
                    rows.0.push(k);
                    rows.1.push(s);
                }
                Ok(rows)
            }
            "cuda" => match ppstencil::Cuda::new() {
                Ok(space) => bench_space(&space, "cuda", None, &host, args.repeat, TimeBlock::Off),
                Err(e) => {
                    skipped.push((b.to_string(), e.to_string()));
                    continue;
                }
            },
            "hip" => match ppstencil::Hip::new() {
                Ok(space) => bench_space(&space, "hip", None, &host, args.repeat, TimeBlock::Off),
                Err(e) => {
                    skipped.push((b.to_string(), e.to_string()));
                    continue;
                }
            },
            _ => continue,
        };
        match result {
            Ok((k, s)) => {
                kernel_rows.extend(k);
                step_rows.extend(s);
            }
            Err(e) => skipped.push((b.to_string(), format!("{e:#}"))),
        }
    }

    writeln!(
        out,
        "\nKernels (bytes/point = compulsory traffic from the IR: fields read + fields written, x 4 B; \
         % = of the triad bandwidth at the same thread count):"
    )?;
    writeln!(
        out,
        "  {:<12} {:<13} {:>4} {:>7} {:>6} {:>10} {:>8} {:>8} {:>8}",
        "kernel", "backend", "B/pt", "flop/pt", "AI", "median ms", "GB/s", "GFlop/s", "% triad"
    )?;
    for r in &kernel_rows {
        let pct = r.threads.and_then(bw_for).map(|bw| 100.0 * r.gbs() / bw);
        writeln!(
            out,
            "  {:<12} {:<13} {:>4} {:>7} {:>6.2} {:>10.3} {:>8.1} {:>8.1} {:>8}",
            r.kernel,
            r.backend,
            r.bytes(),
            r.info.flops_per_point,
            r.info.arithmetic_intensity::<f32>(),
            r.median_s * 1e3,
            r.gbs(),
            r.gflops(),
            pct.map_or("n/a".to_string(), |p| format!("{p:.0} %"))
        )?;
    }
    writeln!(out, "\nWhole time step (Gpoints/s = nz x nx / step time; split = fd_pxx + fd_pzz + fd_time, fused = fd_step_4, \
         blocked = fd_step_4 with temporal blocking, time per step = block time / steps per block; \
         its GB/s above is effective: 16 B/point x steps / time, and may exceed the triad):")?;
    writeln!(
        out,
        "  {:<13} {:>8} {:>10} {:>10}",
        "backend", "variant", "median ms", "Gpoints/s"
    )?;
    for s in &step_rows {
        writeln!(
            out,
            "  {:<13} {:>8} {:>10.3} {:>10.3}{}",
            s.backend,
            s.variant,
            s.median_s * 1e3,
            s.gpoints,
            s.plan.map_or(String::new(), |p| format!(
                "   ({} steps per block, bands of {} rows{})",
                p.depth,
                p.band,
                p.tile
                    .map_or(String::new(), |w| format!(", tiles of {w} columns"))
            ))
        )?;
    }
    let speedups = fused_speedups(&step_rows);
    for (backend, x) in &speedups {
        writeln!(out, "  {backend}: fused / split = {x:.2} x")?;
    }
    let blocked = ratios(&step_rows, "blocked", "fused");
    for (backend, x) in &blocked {
        writeln!(out, "  {backend}: blocked / fused = {x:.2} x")?;
    }
    for (b, why) in &skipped {
        writeln!(out, "\n{b}: skipped: {why}")?;
    }
    print!("{out}");

    let report = json!({
        "grid": { "nz": nz, "nx": nx, "element": "f32", "field_bytes": field_bytes },
        "cache": { "l1d_bytes": cache.l1d, "l2_bytes": cache.l2, "llc_bytes": cache.llc, "detected": cache.detected, "llc_source": cache.llc_source.to_string() },
        "simd": vector_unit(),
        "numerics": { "arithmetic": ppstencil::numerics().arithmetic.name(), "subnormals": ppstencil::numerics().subnormals.name() },
        "threads": threads,
        "repeat": args.repeat,
        "bandwidth_bytes_counted": counting,
        "bandwidth": bandwidth.iter().map(|b| json!({
            "threads": b.threads, "copy_gbs": b.copy_gbs, "triad_gbs": b.triad_gbs,
            "addmul_gflops": b.addmul_gflops,
            "array_bytes": len * 8,
        })).collect::<Vec<Value>>(),
        "kernels": kernel_rows.iter().map(|r| json!({
            "kernel": r.kernel,
            "backend": r.backend,
            "threads": r.threads,
            "points": r.points,
            "bytes_per_point": r.bytes(),
            "flops_per_point": r.info.flops_per_point,
            "arithmetic_intensity": r.info.arithmetic_intensity::<f32>(),
            "median_s": r.median_s,
            "min_s": r.min_s,
            "gbs": r.gbs(),
            "gflops": r.gflops(),
            "pct_of_triad": r.threads.and_then(bw_for).map(|bw| 100.0 * r.gbs() / bw),
        })).collect::<Vec<Value>>(),
        "steps": step_rows.iter().map(|s| json!({
            "backend": s.backend, "variant": s.variant, "median_s": s.median_s,
            "gpoints_per_s": s.gpoints,
            "time_block": s.plan.map(|p| json!({ "depth": p.depth, "band_rows": p.band, "tile": p.tile })),
        })).collect::<Vec<Value>>(),
        "blocked_over_fused": blocked.iter().map(|(b, x)| (b.clone(), json!(x)))
            .collect::<serde_json::Map<String, Value>>(),
        "fused_over_split": speedups.iter().map(|(b, x)| (b.clone(), json!(x)))
            .collect::<serde_json::Map<String, Value>>(),
        "skipped": skipped.iter().map(|(b, why)| json!({ "backend": b, "reason": why }))
            .collect::<Vec<Value>>(),
    });
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
        println!("\nwrote {}", path.display());
    }
    if let Some(path) = &args.plot {
        figures::write(path, &roofline_figure(&bandwidth, &kernel_rows))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Whether a plot path asks for PNG (otherwise SVG).
fn is_png(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

/// Fused over split step rate, per backend that has both.
fn fused_speedups(steps: &[StepRow]) -> Vec<(String, f64)> {
    ratios(steps, "fused", "split")
}

/// Step rate of variant `over` divided by that of variant `under`, per backend that has
/// both.
fn ratios(steps: &[StepRow], over: &str, under: &str) -> Vec<(String, f64)> {
    steps
        .iter()
        .filter(|s| s.variant == under)
        .filter_map(|u| {
            steps
                .iter()
                .find(|o| o.variant == over && o.backend == u.backend)
                .map(|o| (u.backend.clone(), o.gpoints / u.gpoints))
        })
        .collect()
}

/// The roofline of the measured bandwidths and kernels: one roof per thread count (triad
/// bandwidth, add+mul peak), one point per kernel and backend, coloured like the roof of its
/// thread count (GPU points take a colour of their own).
fn roofline_figure(bandwidth: &[Bandwidth], rows: &[KernelRow]) -> roofline::Roofline {
    let roofs = bandwidth
        .iter()
        .map(|b| roofline::Roof {
            label: format!(
                "{} thread{}",
                b.threads,
                if b.threads == 1 { "" } else { "s" }
            ),
            gbs: b.triad_gbs,
            gflops: b.addmul_gflops,
        })
        .collect();
    let points = rows
        .iter()
        .map(|r| roofline::RoofPoint {
            label: format!("{} {}: {:.1} GB/s", r.kernel, r.backend, r.gbs()),
            ai: r.info.arithmetic_intensity::<f32>(),
            gflops: r.gflops(),
            roof: bandwidth
                .iter()
                .position(|b| Some(b.threads) == r.threads)
                .unwrap_or(bandwidth.len()),
        })
        .collect();
    roofline::Roofline {
        title: "Roofline of the f32 kernels".into(),
        note: format!(
            "Roofs measured in this run: slope = STREAM triad\n\
             (f64 arrays), flat = a loop of separate f32\n\
             multiplies and adds (no FMA, like the kernels;\n\
             vector unit: {}). AI = flop / compulsory bytes\n\
             (fields read + written, from the stencil IR).",
            vector_unit()
        ),
        roofs,
        points,
    }
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
fn step_shape_3d(order: usize, [nz, ny, nx]: [usize; 3]) -> Result<StepShape> {
    let info = kernels::fd_step_3d_info(order)?;
    Ok(
        StepShape::for_stencil(info, 3, nz, ny * nx * info.bytes_per_point::<f32>())?
            .with_axis1(ny)?,
    )
}

/// `ppwave bench --ny N`: the triad bandwidth on 1 and `threads` threads, then the 3D fused
/// step of `--space-order` on each backend, with the IR's bytes and flops per point and the
/// % of the triad measured in this run.
fn run_3d(args: &BenchArgs, ny: usize, backends: &[&'static str], threads: usize) -> Result<()> {
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
    let len = stream_bytes(args.stream_mib) / 8;
    let mut bandwidth = vec![stream(1, len, args.repeat)?];
    if threads > 1 {
        bandwidth.push(stream(threads, len, args.repeat)?);
    }
    for b in &bandwidth {
        println!(
            "  triad on {} thread(s): {:.1} GB/s",
            b.threads, b.triad_gbs
        );
    }
    let wave = |a: f32| {
        move |k: usize| {
            let (z, x) = (k / (ny * nx), k % nx);
            0.5 + 0.4 * (a * z as f32 + 0.013 * x as f32).sin()
        }
    };
    let field = |f: &dyn Fn(usize) -> f32| {
        ScalarField::from_vec_shape([nz, ny, nx], (0..nz * ny * nx).map(f).collect())
    };
    let host = [
        field(&wave(0.011))?,
        field(&wave(0.017))?,
        field(&|k| {
            let v = 1500.0 + (k / (ny * nx) % 1000) as f32;
            DTDH2 * v * v
        })?,
    ];
    let points = Region::for_stencil(&info, [nz, ny, nx], &[])?.points() as f64;
    // The blocked step (host backends): the plan a run would use, or the one asked for.
    let shape = step_shape_3d(order, [nz, ny, nx])?;
    let plan = match args.time_block {
        TimeBlock::Off => None,
        TimeBlock::Auto => match BlockPlan::auto_or_why(&shape, nz, cache.llc) {
            Ok(plan) => Some(plan),
            Err(why) => {
                println!("  blocked step not measured: a run would not block ({why}); force one with --time-block K, K:B or K:BxW");
                None
            }
        },
        TimeBlock::Depth(k) => Some(BlockPlan::new(
            &shape,
            k,
            BlockPlan::band_for(&shape, k, cache.llc),
        )?),
        TimeBlock::Fixed(p) => Some(p.checked(&shape)?),
    };
    if let Some(p) = plan {
        println!(
            "  blocked = {name} with temporal blocking: {} steps per block, bands of {} z-planes{} ({} in flight of {} per plane), timed interleaved with {} single steps; time per step = block time / {}",
            p.depth,
            p.band,
            p.tile.map_or(String::new(), |w| format!(", tiles of {w} y-rows")),
            p.rows_in_flight(&shape),
            mib(shape.row_bytes),
            p.depth,
            p.depth
        );
    }
    println!(
        "  {:<13} {:>8} {:>10} {:>8} {:>8} {:>10} {:>8}",
        "backend", "step", "median ms", "GB/s", "GFlop/s", "Gpoints/s", "% triad"
    );
    let mut rows = Vec::new();
    let mut speedups = Vec::new();
    for b in backends {
        let ((median, blocked), t) = match *b {
            "serial" => (time_3d(&Serial, order, &host, args.repeat, plan)?, Some(1)),
            "rayon" => {
                let pool = Rayon::with_threads(threads)?;
                (
                    time_3d(&pool, order, &host, args.repeat, plan)?,
                    Some(threads),
                )
            }
            "cuda" => match ppstencil::Cuda::new() {
                Ok(space) => (time_3d(&space, order, &host, args.repeat, None)?, None),
                Err(e) => {
                    println!("  {b}: skipped ({e})");
                    continue;
                }
            },
            "hip" => match ppstencil::Hip::new() {
                Ok(space) => (time_3d(&space, order, &host, args.repeat, None)?, None),
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
