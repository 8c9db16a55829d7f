//! The roofs of `ppwave bench`: STREAM-style copy and triad bandwidth on `f64` arrays, and
//! the compute peak of a loop of separate f32 multiplies and adds, each on one thread and on
//! the pool.

use super::time;
use anyhow::{Context, Result};
use ppstencil::exec::{cache_sizes, vectorized};
use rayon::prelude::*;

/// One measured bandwidth figure.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bandwidth {
    /// Threads of the measurement.
    pub(super) threads: usize,
    /// STREAM copy, GB/s.
    pub(super) copy_gbs: f64,
    /// STREAM triad, GB/s.
    pub(super) triad_gbs: f64,
    /// Compute peak of the same threads ([`addmul_peak`]).
    pub(super) addmul_gflops: f64,
}

/// The roofs on one thread and, when `threads > 1`, on `threads` threads, on `len`-element
/// arrays.
pub(super) fn measure(threads: usize, len: usize, repeat: usize) -> Result<Vec<Bandwidth>> {
    let mut bandwidth = vec![stream(1, len, repeat)?];
    if threads > 1 {
        bandwidth.push(stream(threads, len, repeat)?);
    }
    Ok(bandwidth)
}

/// Bytes of each STREAM array: `mib` MiB (`--stream-mib`), by default 4 × the last-level
/// cache and at least 64 MiB.
pub(super) fn stream_bytes(mib: Option<usize>) -> usize {
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
