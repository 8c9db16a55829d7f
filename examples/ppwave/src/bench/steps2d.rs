//! The 2D bench's measurements: the four acoustic kernels and the whole time step (split,
//! fused, and blocked on the host backends) timed on each backend, and the hand-written C
//! reference's fused step.

use super::{time, BenchArgs};
use anyhow::Result;
use ppstencil::exec::cache_sizes;
use ppstencil::launch::{launch_in, Region, Stencil, StencilInfo};
use ppstencil::solver::blocking::{ring_split, wavefront_tiled, BlockPlan, StepShape, AUTO_DEPTH};
use ppstencil::solver::{Blocking, TimeBlock};
use ppstencil::{kernels, ExecutionSpace, HostField, MemSpaceHost, Rayon, ScalarField, Serial};

/// One kernel on one backend.
#[derive(Clone, Debug)]
pub(super) struct KernelRow {
    /// The kernel's name (`fd_step_4+tb` for the blocked step).
    pub(super) kernel: &'static str,
    /// The backend, with its threads (`rayon`, `c-openmp/4`).
    pub(super) backend: String,
    /// Threads of a host backend.
    pub(super) threads: Option<usize>,
    /// The kernel's figures from its IR.
    pub(super) info: StencilInfo,
    /// Points the kernel updates.
    pub(super) points: usize,
    /// Median time, s.
    pub(super) median_s: f64,
    /// Least time, s.
    pub(super) min_s: f64,
}

impl KernelRow {
    /// Compulsory bytes per point (f32).
    pub(super) fn bytes(&self) -> usize {
        self.info.bytes_per_point::<f32>()
    }
    /// Effective bandwidth, GB/s.
    pub(super) fn gbs(&self) -> f64 {
        (self.points * self.bytes()) as f64 / self.median_s / 1e9
    }
    /// Compute rate, GFlop/s.
    pub(super) fn gflops(&self) -> f64 {
        (self.points * self.info.flops_per_point) as f64 / self.median_s / 1e9
    }
}

/// One whole time step on one backend.
#[derive(Clone, Debug)]
pub(super) struct StepRow {
    /// The backend, with its threads.
    pub(super) backend: String,
    /// `split`, `fused` or `blocked`.
    pub(super) variant: &'static str,
    /// Median time per step, s.
    pub(super) median_s: f64,
    /// Grid points per second, in billions.
    pub(super) gpoints: f64,
    /// The blocked step's plan (variant `blocked`).
    pub(super) plan: Option<BlockPlan>,
}

/// Everything the 2D bench measured on the backends, and the backends skipped with why.
pub(super) struct Measured {
    /// Each kernel on each backend.
    pub(super) kernels: Vec<KernelRow>,
    /// Each time step on each backend.
    pub(super) steps: Vec<StepRow>,
    /// Backends not measured, and why.
    pub(super) skipped: Vec<(String, String)>,
}

/// Host fields of the benchmark: smooth, finite, not denormal values.
pub(super) struct HostFields {
    p: HostField,
    pold: HostField,
    v: HostField,
    kv2: HostField,
}

/// `(dt / dh)²` of the bench's fields.
pub(super) const DTDH2: f32 = 1.0e-7;

/// The bench's fields on an `nz × nx` grid.
pub(super) fn host_fields(nz: usize, nx: usize) -> Result<HostFields> {
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
    let mut steps = vec![
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
    let is_host = std::any::TypeId::of::<E::Memory>() == std::any::TypeId::of::<MemSpaceHost>();
    if let Some(plan) = blocked_plan(time_block, nz, nx)?.filter(|_| is_host) {
        let (row, step) = bench_blocked(space, backend, threads, host, repeat, plan)?;
        rows.push(row);
        steps.push(step);
    }
    Ok((rows, steps))
}

/// The blocked step of `plan` on `space`: a ring of three levels (pold, p, next) advanced
/// `plan.depth` steps per timed run, reported per step.
fn bench_blocked<E: ExecutionSpace>(
    space: &E,
    backend: &str,
    threads: Option<usize>,
    host: &HostFields,
    repeat: usize,
    plan: BlockPlan,
) -> Result<(KernelRow, StepRow)> {
    let [nz, nx] = host.p.shape();
    let dev = |f: &HostField| ScalarField::<E::Memory>::from_host(f);
    let kv2 = dev(&host.kv2)?;
    let mut ring = [
        dev(&host.pold)?,
        dev(&host.p)?,
        ScalarField::<E::Memory>::new(nz, nx)?,
    ];
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
        Ok(space.synchronize()?)
    })?;
    let per_step = block_s / plan.depth as f64;
    let points = (nz * nx) as f64;
    Ok((
        KernelRow {
            kernel: "fd_step_4+tb",
            backend: backend.to_string(),
            threads,
            info: kernels::FdStep4::INFO,
            points: Region::for_stencil(&kernels::FdStep4::INFO, [nz, 1, nx], &[])?.points(),
            median_s: per_step,
            min_s: block_min / plan.depth as f64,
        },
        StepRow {
            backend: backend.to_string(),
            variant: "blocked",
            median_s: per_step,
            gpoints: points / per_step / 1e9,
            plan: Some(plan),
        },
    ))
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
pub(super) fn blocked_plan(
    time_block: TimeBlock,
    nz: usize,
    nx: usize,
) -> Result<Option<BlockPlan>> {
    let shape = step_shape(nz, nx)?;
    let llc = cache_sizes().llc;
    Ok(match time_block.resolve(&shape, nz, llc)? {
        Blocking::On(plan) => Some(plan),
        Blocking::Off(_) if time_block == TimeBlock::Auto => Some(BlockPlan {
            depth: AUTO_DEPTH,
            band: BlockPlan::band_for(&shape, AUTO_DEPTH, llc),
            tile: None,
        }),
        Blocking::Off(_) => None,
    })
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

/// Times the kernels and the steps on each of `backends` (the C reference on 1 and
/// `threads` threads where it has OpenMP); a backend without a device, or whose run fails,
/// is skipped with the reason.
pub(super) fn measure(
    args: &BenchArgs,
    backends: &[&'static str],
    threads: usize,
    host: &HostFields,
) -> Result<Measured> {
    let mut kernel_rows = Vec::new();
    let mut step_rows = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for b in backends {
        let result = match *b {
            "serial" => bench_space(
                &Serial,
                "serial",
                Some(1),
                host,
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
                    host,
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
                // A failure of the C reference stops the bench (it is not a backend to skip).
                Ok(bench_c_counts(host, threads, args.repeat)?)
            }
            "cuda" => match ppstencil::Cuda::new() {
                Ok(space) => bench_space(&space, "cuda", None, host, args.repeat, TimeBlock::Off),
                Err(e) => {
                    skipped.push((b.to_string(), e.to_string()));
                    continue;
                }
            },
            "hip" => match ppstencil::Hip::new() {
                Ok(space) => bench_space(&space, "hip", None, host, args.repeat, TimeBlock::Off),
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
    Ok(Measured {
        kernels: kernel_rows,
        steps: step_rows,
        skipped,
    })
}

/// The C reference on one thread and, with OpenMP, on `threads` threads.
fn bench_c_counts(
    host: &HostFields,
    threads: usize,
    repeat: usize,
) -> Result<(Vec<KernelRow>, Vec<StepRow>)> {
    let mut rows = (Vec::new(), Vec::new());
    let counts = if threads > 1 && crate::cref::has_openmp() {
        vec![1, threads]
    } else {
        vec![1]
    };
    for t in counts {
        let (k, s) = bench_c(host, t, repeat)?;
        rows.0.push(k);
        rows.1.push(s);
    }
    Ok(rows)
}
