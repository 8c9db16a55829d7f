//! The 2D bench's report: the head (grid, caches, vector unit), the bandwidth table, the
//! kernel and step tables with their ratios, the JSON file (`--json`) and the roofline
//! picture (`--plot`).

use super::steps2d::{KernelRow, Measured, StepRow};
use super::stream::Bandwidth;
use super::{mib, vector_unit, BenchArgs};
use crate::figures::{self, roofline};
use anyhow::{Context, Result};
use ppstencil::exec::CacheSizes;
use ppstencil::kernels;
use ppstencil::launch::Stencil;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The report's head: the grid and its field size, the caches, fd_pxx's working set against
/// the last-level cache, the vector unit, the pool and the runs.
pub(super) fn head(args: &BenchArgs, cache: &CacheSizes, threads: usize) -> Result<String> {
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
    Ok(out)
}

/// The STREAM convention of the bandwidth figures, for arrays of `len` f64.
pub(super) fn counting(len: usize) -> String {
    format!(
        "STREAM convention: copy counts 2 and triad 3 arrays x 8 B per element (f64 arrays of {} \
         each); the extra read of the destination line caused by write-allocate is not counted, \
         so the true traffic is 3/2 (copy) and 4/3 (triad) of these figures",
        mib(len * 8)
    )
}

/// The bandwidth table: copy, triad and the compute peak per thread count.
pub(super) fn bandwidth_table(
    out: &mut String,
    bandwidth: &[Bandwidth],
    counting: &str,
) -> Result<()> {
    writeln!(out, "\nMemory bandwidth ({counting}):")?;
    writeln!(
        out,
        "  {:>7}  {:>10}  {:>10}  {:>16}",
        "threads", "copy GB/s", "triad GB/s", "add+mul GFlop/s"
    )?;
    for b in bandwidth {
        writeln!(
            out,
            "  {:>7}  {:>10.1}  {:>10.1}  {:>16.1}",
            b.threads, b.copy_gbs, b.triad_gbs, b.addmul_gflops
        )?;
    }
    Ok(())
}

/// The triad bandwidth measured on `t` threads.
fn triad_for(bandwidth: &[Bandwidth], t: usize) -> Option<f64> {
    bandwidth
        .iter()
        .find(|b| b.threads == t)
        .map(|b| b.triad_gbs)
}

/// The kernel table, the step table, the step rates' ratios and the backends skipped.
pub(super) fn tables(out: &mut String, m: &Measured, bandwidth: &[Bandwidth]) -> Result<()> {
    let (kernel_rows, step_rows, skipped) = (&m.kernels, &m.steps, &m.skipped);
    let bw_for = |t: usize| triad_for(bandwidth, t);
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
    for r in kernel_rows {
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
    for s in step_rows {
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
    let speedups = fused_speedups(step_rows);
    for (backend, x) in &speedups {
        writeln!(out, "  {backend}: fused / split = {x:.2} x")?;
    }
    let blocked = ratios(step_rows, "blocked", "fused");
    for (backend, x) in &blocked {
        writeln!(out, "  {backend}: blocked / fused = {x:.2} x")?;
    }
    for (b, why) in skipped {
        writeln!(out, "\n{b}: skipped: {why}")?;
    }
    Ok(())
}

/// The JSON report (`--json`): everything the tables show, with the raw figures.
pub(super) fn json_report(
    args: &BenchArgs,
    cache: &CacheSizes,
    threads: usize,
    len: usize,
    counting: &str,
    bandwidth: &[Bandwidth],
    m: &Measured,
) -> Value {
    let (nz, nx) = (args.nz, args.nx);
    let field_bytes = nz * nx * 4;
    let (kernel_rows, step_rows, skipped) = (&m.kernels, &m.steps, &m.skipped);
    let bw_for = |t: usize| triad_for(bandwidth, t);
    let speedups = fused_speedups(step_rows);
    let blocked = ratios(step_rows, "blocked", "fused");
    json!({
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
    })
}

/// Writes the JSON report to `--json` and the roofline to `--plot`, if asked.
pub(super) fn write_files(
    args: &BenchArgs,
    report: &Value,
    bandwidth: &[Bandwidth],
    kernel_rows: &[KernelRow],
) -> Result<()> {
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
        println!("\nwrote {}", path.display());
    }
    if let Some(path) = &args.plot {
        figures::write(path, &roofline_figure(bandwidth, kernel_rows))?;
        println!("wrote {}", path.display());
    }
    Ok(())
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
