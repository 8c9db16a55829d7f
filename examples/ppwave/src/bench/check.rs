//! The options of `ppwave bench` checked before anything runs: sizes, counts, the output
//! files (never replaced unasked), `--time-block` against the grid, the threads and the
//! backends.

use super::{steps2d, steps3d, BenchArgs};
use anyhow::Result;
use ppstencil::exec::cache_sizes;
use ppstencil::kernels;
use ppstencil::launch::Stencil;
use ppstencil::solver::TimeBlock;

/// The backends `--backend all` selects, in the order they are measured.
const BACKENDS: [&str; 5] = ["serial", "rayon", "c", "cuda", "hip"];

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
pub(super) fn check(args: &BenchArgs) -> Result<(Vec<&'static str>, usize)> {
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
        (None, tb) => steps2d::blocked_plan(tb, args.nz, args.nx)
            .map(|_| ())
            .map_err(bad),
        (Some(ny), tb) => {
            let Ok(shape) = steps3d::step_shape_3d(args.space_order_3d(), [args.nz, ny, args.nx])
            else {
                return Ok(());
            };
            tb.resolve(&shape, args.nz, cache_sizes().llc)
                .map(|_| ())
                .map_err(|e| bad(e.into()))
        }
    }
}

/// Whether a plot path asks for PNG (otherwise SVG).
fn is_png(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}
