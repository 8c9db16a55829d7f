//! `ppwave bench`: the roofline report.
//!
//! 1. Measures the machine's practical memory bandwidth in this process with STREAM-style
//!    copy (`a = b`) and triad (`a = b + s c`) loops over `f64` arrays of at least 4 x the
//!    last-level cache each, on one thread and on the rayon pool.
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
//! roofline plot (`--plot`, SVG or PNG by the file's extension).

use crate::plot::{self, Anchor, Rgb, Shape};
use anyhow::{bail, Context, Result};
use ppstencil::exec::{cache_sizes, simd, vectorized};
use ppstencil::launch::{Region, Stencil, StencilInfo};
use ppstencil::{kernels, ExecutionSpace, HostField, Rayon, ScalarField, Serial};
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
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw the roofline (bandwidth lines, kernels as points) to this file: SVG, or PNG when
    /// the name ends in .png.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// One measured bandwidth figure.
#[derive(Clone, Copy, Debug)]
struct Bandwidth {
    threads: usize,
    copy_gbs: f64,
    triad_gbs: f64,
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
}

const BACKENDS: [&str; 5] = ["serial", "rayon", "c", "cuda", "hip"];

/// Checks the options; returns the selected backends and the thread count.
fn check(args: &BenchArgs) -> Result<(Vec<&'static str>, usize)> {
    let min = 2 * kernels::FdPxx::INFO.radius + 1;
    for (name, n) in [("--nz", args.nz), ("--nx", args.nx)] {
        if n < min {
            bail!(
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
        bail!(
            "--nz {} x --nx {} is too large: the benchmark's eight f32 fields would not fit \
             in memory; use a smaller grid",
            args.nz,
            args.nx
        );
    }
    if args.repeat == 0 {
        bail!("--repeat 0: use at least 1 timed run (the median of the runs is reported)");
    }
    if args.chunk_rows == Some(0) {
        bail!(
            "--chunk-rows 0: use at least 1 row per rayon task (or leave it out for the default)"
        );
    }
    if args.stream_mib == Some(0) {
        bail!("--stream-mib 0: use at least 1 MiB per STREAM array (default: 4 x the LLC)");
    }
    if let Some(path) = &args.plot {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !(ext.eq_ignore_ascii_case("svg") || is_png(path)) {
            bail!(
                "--plot {}: the picture is written as SVG or PNG; use a file name ending in .svg or .png",
                path.display()
            );
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    if threads == 0 || threads > cores {
        bail!("--threads {threads}: this machine has {cores} hardware threads; use 1 to {cores}");
    }
    let mut chosen = Vec::new();
    for b in &args.backend {
        let b = b.trim().to_ascii_lowercase();
        if b == "all" {
            chosen.extend(BACKENDS);
        } else if let Some(known) = BACKENDS.iter().find(|k| **k == b) {
            chosen.push(*known);
        } else {
            bail!(
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
    t.sort_by(f64::total_cmp);
    let median = if t.len() % 2 == 1 {
        t[t.len() / 2]
    } else {
        0.5 * (t[t.len() / 2 - 1] + t[t.len() / 2])
    };
    Ok((median.max(1e-12), t[0]))
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
                .for_each(|(a, b)| vectorized(|| a.copy_from_slice(b)))
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
                    vectorized(|| {
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
    })
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
        },
        StepRow {
            backend: backend.to_string(),
            variant: "fused",
            median_s: fused.0,
            gpoints: points / fused.0 / 1e9,
        },
    ];
    Ok((rows, steps))
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
    let (backends, threads) = check(args)?;
    let cache = cache_sizes();
    let (nz, nx) = (args.nz, args.nx);
    let field_bytes = nz * nx * 4;
    let smallest_set = kernels::FdPxx::INFO.bytes_per_point::<f32>() / 4 * field_bytes;
    let mut out = String::new();
    let cache_src = if cache.detected {
        "read from /sys/devices/system/cpu/cpu0/cache"
    } else {
        "not readable; typical values assumed"
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
        simd().name(),
        args.repeat
    )?;

    // 1. Bandwidth.
    let stream_bytes = args
        .stream_mib
        .map_or_else(|| (4 * cache.llc).max(64 << 20), |m| m << 20);
    let len = stream_bytes / 8;
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
        "  {:>7}  {:>10}  {:>10}",
        "threads", "copy GB/s", "triad GB/s"
    )?;
    for b in &bandwidth {
        writeln!(
            out,
            "  {:>7}  {:>10.1}  {:>10.1}",
            b.threads, b.copy_gbs, b.triad_gbs
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
            "serial" => bench_space(&Serial, "serial", Some(1), &host, args.repeat),
            "rayon" => {
                let mut pool = Rayon::with_threads(threads)?;
                if let Some(rows) = args.chunk_rows {
                    pool = pool.chunk_rows(rows);
                }
                bench_space(&pool, "rayon", Some(threads), &host, args.repeat)
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
                Ok(space) => bench_space(&space, "cuda", None, &host, args.repeat),
                Err(e) => {
                    skipped.push((b.to_string(), e.to_string()));
                    continue;
                }
            },
            "hip" => match ppstencil::Hip::new() {
                Ok(space) => bench_space(&space, "hip", None, &host, args.repeat),
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
        "  {:<8} {:<13} {:>4} {:>7} {:>6} {:>10} {:>8} {:>8} {:>8}",
        "kernel", "backend", "B/pt", "flop/pt", "AI", "median ms", "GB/s", "GFlop/s", "% triad"
    )?;
    for r in &kernel_rows {
        let pct = r.threads.and_then(bw_for).map(|bw| 100.0 * r.gbs() / bw);
        writeln!(
            out,
            "  {:<8} {:<13} {:>4} {:>7} {:>6.2} {:>10.3} {:>8.1} {:>8.1} {:>8}",
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
    writeln!(out, "\nWhole time step (Gpoints/s = nz x nx / step time; split = fd_pxx + fd_pzz + fd_time, fused = fd_step_4):")?;
    writeln!(
        out,
        "  {:<13} {:>8} {:>10} {:>10}",
        "backend", "variant", "median ms", "Gpoints/s"
    )?;
    for s in &step_rows {
        writeln!(
            out,
            "  {:<13} {:>8} {:>10.3} {:>10.3}",
            s.backend,
            s.variant,
            s.median_s * 1e3,
            s.gpoints
        )?;
    }
    let speedups = fused_speedups(&step_rows);
    for (backend, x) in &speedups {
        writeln!(out, "  {backend}: fused / split = {x:.2} x")?;
    }
    for (b, why) in &skipped {
        writeln!(out, "\n{b}: skipped: {why}")?;
    }
    print!("{out}");

    let report = json!({
        "grid": { "nz": nz, "nx": nx, "element": "f32", "field_bytes": field_bytes },
        "cache": { "l1d_bytes": cache.l1d, "l2_bytes": cache.l2, "llc_bytes": cache.llc, "detected": cache.detected },
        "simd": simd().name(),
        "threads": threads,
        "repeat": args.repeat,
        "bandwidth_bytes_counted": counting,
        "bandwidth": bandwidth.iter().map(|b| json!({
            "threads": b.threads, "copy_gbs": b.copy_gbs, "triad_gbs": b.triad_gbs,
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
        })).collect::<Vec<Value>>(),
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
        let (w, h, shapes) = roofline(&bandwidth, &kernel_rows);
        if is_png(path) {
            plot::png(path, w, h, &shapes)?;
        } else {
            std::fs::write(path, plot::svg(w, h, &shapes))
                .with_context(|| format!("cannot write the plot to {}", path.display()))?;
        }
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
    steps
        .iter()
        .filter(|s| s.variant == "split")
        .filter_map(|split| {
            steps
                .iter()
                .find(|f| f.variant == "fused" && f.backend == split.backend)
                .map(|f| (split.backend.clone(), f.gpoints / split.gpoints))
        })
        .collect()
}

/// A log-log roofline: GFlop/s against flops per byte, one line per measured bandwidth and
/// one point per kernel and backend, as a picture of `(width, height, shapes)`.
fn roofline(bandwidth: &[Bandwidth], rows: &[KernelRow]) -> (usize, usize, Vec<Shape>) {
    const BLACK: Rgb = [0, 0, 0];
    const GRID: Rgb = [221, 221, 221];
    const COLORS: [Rgb; 6] = [
        [31, 119, 180],
        [214, 39, 40],
        [44, 160, 44],
        [148, 103, 189],
        [255, 127, 14],
        [140, 86, 75],
    ];
    let (w, h, left, bottom, top, right) = (800.0, 480.0, 70.0, 50.0, 30.0, 290.0);
    let (x_lo, x_hi) = (0.05f64, 5.0f64);
    let max_flops = rows
        .iter()
        .map(KernelRow::gflops)
        .chain(bandwidth.iter().map(|b| b.triad_gbs * x_hi))
        .fold(1.0, f64::max);
    let (y_lo, y_hi) = (0.1f64, 10f64.powf(max_flops.log10().ceil()));
    let px = |x: f64| {
        left + (x.log10() - x_lo.log10()) / (x_hi.log10() - x_lo.log10()) * (w - left - right)
    };
    let py = |y: f64| {
        h - bottom - (y.log10() - y_lo.log10()) / (y_hi.log10() - y_lo.log10()) * (h - bottom - top)
    };
    let text = |at: (f64, f64), t: String, color: Rgb, anchor: Anchor| Shape::Text {
        at,
        text: t,
        color,
        anchor,
        vertical: false,
    };
    let (x0, x1, y0, y1) = (px(x_lo), px(x_hi), py(y_lo), py(y_hi));
    let mut shapes = vec![text(
        ((left + w - right) / 2.0, 18.0),
        "Roofline: GFlop/s = AI x measured triad GB/s".into(),
        BLACK,
        Anchor::Middle,
    )];
    let mut decade = y_lo;
    while decade <= y_hi * 1.001 {
        let y = py(decade);
        shapes.push(Shape::Line {
            from: (x0, y),
            to: (x1, y),
            color: GRID,
            width: 1,
        });
        shapes.push(text(
            (x0 - 4.0, y + 4.0),
            format!("{decade}"),
            BLACK,
            Anchor::End,
        ));
        decade *= 10.0;
    }
    for x in [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0] {
        let xp = px(x);
        shapes.push(Shape::Line {
            from: (xp, y1),
            to: (xp, y0),
            color: GRID,
            width: 1,
        });
        shapes.push(text((xp, y0 + 16.0), format!("{x}"), BLACK, Anchor::Middle));
    }
    shapes.push(Shape::Rect {
        at: (x0, y1),
        size: (x1 - x0, y0 - y1),
        color: BLACK,
    });
    shapes.push(text(
        ((x0 + x1) / 2.0, h - 10.0),
        "arithmetic intensity (flop / compulsory byte)".into(),
        BLACK,
        Anchor::Middle,
    ));
    shapes.push(Shape::Text {
        at: (20.0, (y0 + y1) / 2.0),
        text: "GFlop/s".into(),
        color: BLACK,
        anchor: Anchor::Middle,
        vertical: true,
    });
    // Triad labels at the lines' right ends, pushed apart when the bandwidths are close.
    let mut label_ys: Vec<f64> = Vec::new();
    for (i, b) in bandwidth.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let end = py(b.triad_gbs * x_hi);
        let mut label_y = end + 4.0;
        while label_ys.iter().any(|y| (y - label_y).abs() < 12.0) {
            label_y += 12.0;
        }
        label_ys.push(label_y);
        shapes.push(Shape::Line {
            from: (x0, py((b.triad_gbs * x_lo).max(y_lo))),
            to: (x1, end),
            color: c,
            width: 2,
        });
        shapes.push(text(
            (x1 + 6.0, label_y),
            format!("triad {} thr: {:.1} GB/s", b.threads, b.triad_gbs),
            c,
            Anchor::Start,
        ));
    }
    // Points carry a number; the legend beside the plot names them (labels next to the
    // points would overlap: several kernels share one arithmetic intensity).
    let legend_top = label_ys.iter().copied().fold(py(y_hi), f64::max) + 24.0;
    for (i, r) in rows.iter().enumerate() {
        let ai = r.info.arithmetic_intensity::<f32>();
        let (cx, cy) = (px(ai), py(r.gflops().max(y_lo)));
        let c = if r.threads == Some(1) {
            COLORS[0]
        } else {
            COLORS[1]
        };
        shapes.push(Shape::Dot {
            at: (cx, cy),
            r: 4.0,
            color: c,
        });
        let side = if i % 2 == 0 { -1.0 } else { 1.0 };
        shapes.push(text(
            (
                cx + side * 7.0,
                cy + 4.0 + 10.0 * ((i / 2 % 3) as f64 - 1.0),
            ),
            format!("{}", i + 1),
            c,
            if side < 0.0 {
                Anchor::End
            } else {
                Anchor::Start
            },
        ));
        shapes.push(text(
            (x1 + 6.0, legend_top + 13.0 * i as f64),
            format!(
                "{:>2} {} {}: {:.0} GB/s",
                i + 1,
                r.kernel,
                r.backend,
                r.gbs()
            ),
            c,
            Anchor::Start,
        ));
    }
    (w as usize, h as usize, shapes)
}
