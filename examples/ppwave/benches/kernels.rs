//! Criterion benchmarks of the acoustic kernels, serial and rayon, with the hand-written
//! C/OpenMP fused step measured in the same run as the reference (feature `c-reference`, on by
//! default; without it the C group is skipped with a note).
//!
//! `cargo bench -p ppwave --features criterion` (grid: `PPSTENCIL_BENCH_GRID=NZxNX`,
//! default 1751x5001, the paper's). Throughput is in grid points per second.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ppstencil::{kernels, ExecutionSpace, HostField, Rayon, ScalarField, Serial};

fn grid() -> (usize, usize) {
    std::env::var("PPSTENCIL_BENCH_GRID")
        .ok()
        .and_then(|g| {
            let (z, x) = g.split_once('x')?;
            Some((z.trim().parse().ok()?, x.trim().parse().ok()?))
        })
        .unwrap_or((1751, 5001))
}

struct Fields {
    p: HostField,
    pold: HostField,
    v: HostField,
    kv2: HostField,
    pxx: HostField,
    pzz: HostField,
    pnew: HostField,
}

fn fields(nz: usize, nx: usize) -> Fields {
    let wave =
        |a: f32| move |z: usize, x: usize| 0.5 + 0.4 * (a * z as f32 + 0.013 * x as f32).sin();
    let zeros = || ScalarField::new(nz, nx).unwrap();
    Fields {
        p: ScalarField::from_fn(nz, nx, wave(0.011)).unwrap(),
        pold: ScalarField::from_fn(nz, nx, wave(0.017)).unwrap(),
        v: ScalarField::from_fn(nz, nx, |z, _| 1500.0 + (z % 1000) as f32).unwrap(),
        kv2: ScalarField::from_fn(nz, nx, |z, _| 0.2 + 1e-4 * (z % 1000) as f32).unwrap(),
        pxx: zeros(),
        pzz: zeros(),
        pnew: zeros(),
    }
}

fn kernels_on<E: ExecutionSpace<Memory = ppstencil::MemSpaceHost>>(
    c: &mut Criterion,
    space: &E,
    name: &str,
    f: &mut Fields,
) {
    let [nz, nx] = f.p.shape();
    let mut g = c.benchmark_group(format!("{name}/{nz}x{nx}"));
    g.throughput(Throughput::Elements((nz * nx) as u64));
    g.bench_function("fd_pxx", |b| {
        b.iter(|| kernels::fd_pxx(space, &mut f.pxx, &f.p).unwrap())
    });
    g.bench_function("fd_pzz", |b| {
        b.iter(|| kernels::fd_pzz(space, &mut f.pzz, &f.p).unwrap())
    });
    g.bench_function("fd_time", |b| {
        b.iter(|| {
            kernels::fd_time(
                space,
                &mut f.pnew,
                &f.p,
                &f.pold,
                &f.v,
                &f.pxx,
                &f.pzz,
                1e-7,
            )
            .unwrap()
        })
    });
    g.bench_function("step_split", |b| {
        b.iter(|| {
            kernels::fd_pxx(space, &mut f.pxx, &f.p).unwrap();
            kernels::fd_pzz(space, &mut f.pzz, &f.p).unwrap();
            kernels::fd_time(
                space,
                &mut f.pnew,
                &f.p,
                &f.pold,
                &f.v,
                &f.pxx,
                &f.pzz,
                1e-7,
            )
            .unwrap()
        })
    });
    g.bench_function("step_fused", |b| {
        b.iter(|| kernels::fd_step_4(space, &mut f.pnew, &f.p, &f.pold, &f.kv2).unwrap())
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let (nz, nx) = grid();
    let mut f = fields(nz, nx);
    let threads = rayon::current_num_threads();
    kernels_on(c, &Serial, "serial", &mut f);
    let pool = Rayon::with_threads(threads).unwrap();
    kernels_on(c, &pool, &format!("rayon{threads}"), &mut f);
    if !ppwave::cref::available() {
        eprintln!("c-openmp: skipped: {}", ppwave::cref::RefError::Unavailable);
        return;
    }
    let mut g = c.benchmark_group(format!("c-openmp/{nz}x{nx}"));
    g.throughput(Throughput::Elements((nz * nx) as u64));
    for t in [1, threads] {
        g.bench_function(format!("step_fused/{t}"), |b| {
            b.iter(|| {
                ppwave::cref::fd_step(
                    f.pnew.as_mut_slice(),
                    f.p.as_slice(),
                    f.pold.as_slice(),
                    f.kv2.as_slice(),
                    nz,
                    nx,
                    t,
                )
                .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
