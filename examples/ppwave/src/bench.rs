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
//!
//! Modules: `check` (the options, checked before anything runs), `stream` (the bandwidth
//! and compute roofs), `steps2d` (the 2D kernels and time steps timed on each backend),
//! `report2d` (the 2D tables, JSON and roofline) and `steps3d` (the 3D bench, `--ny`).

use anyhow::Result;
use ppstencil::exec::{cache_sizes, simd_for};
use ppstencil::solver::TimeBlock;
use std::path::PathBuf;
use std::time::Instant;

/// Returns a [`BadInput`](crate::BadInput) error (exit status 2) from the enclosing function.
macro_rules! bad {
    ($($t:tt)*) => {
        return Err(crate::BadInput(format!($($t)*)).into())
    };
}

mod check;
mod report2d;
mod steps2d;
mod steps3d;
mod stream;

pub use stream::triad_gbs;

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

/// Runs the benchmark and prints the report.
pub fn run(args: &BenchArgs) -> Result<()> {
    let numerics = crate::cli::numerics(args.numerics, args.subnormals);
    ppstencil::with_numerics(numerics, || run_with_numerics(args))
}

/// The vector unit the host kernels run with under this thread's numerics.
fn vector_unit() -> &'static str {
    simd_for(ppstencil::numerics().arithmetic == ppstencil::Arithmetic::Fast).name()
}

/// [`run`] under the numerics it set: the checks, then the 3D bench (`--ny`), or the 2D
/// report: head, bandwidth, kernels and steps, files.
fn run_with_numerics(args: &BenchArgs) -> Result<()> {
    let (backends, threads) = check::check(args)?;
    if let Some(ny) = args.ny {
        return steps3d::run_3d(args, ny, &backends, threads);
    }
    let cache = cache_sizes();
    let mut out = report2d::head(args, &cache, threads)?;
    // 1. Bandwidth.
    let len = stream::stream_bytes(args.stream_mib) / 8;
    let bandwidth = stream::measure(threads, len, args.repeat)?;
    let counting = report2d::counting(len);
    report2d::bandwidth_table(&mut out, &bandwidth, &counting)?;
    print!("{out}");
    out.clear();
    // 2. Kernels.
    let host = steps2d::host_fields(args.nz, args.nx)?;
    let measured = steps2d::measure(args, &backends, threads, &host)?;
    report2d::tables(&mut out, &measured, &bandwidth)?;
    print!("{out}");
    let report =
        report2d::json_report(args, &cache, threads, len, &counting, &bandwidth, &measured);
    report2d::write_files(args, &report, &bandwidth, &measured.kernels)
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

/// Bytes in binary units: `48 KiB`, `1.0 MiB`.
fn mib(bytes: usize) -> String {
    if bytes < 1 << 20 {
        format!("{:.0} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    }
}
