//! CPU emulation of the generated GPU source, checked against the serial backend.
//!
//! The exact CUDA-C and HIP-C text embedded in each acoustic kernel's metadata is compiled by
//! the host C++ compiler against `tests/gpu/emulation_shim.h` (qualifiers defined away,
//! `threadIdx`/`blockIdx`/`blockDim` as thread-locals, a launcher looping over blocks and
//! threads), with AddressSanitizer, and launched with the grid the runtime computes
//! (`ppstencil::device::launch_dims`). Every field, outputs and inputs, border included, must
//! come back bit for bit equal to the serial backend's, for grids that are not multiples of the
//! block size: this exercises the kernels' real index arithmetic and guards.
//!
//! Needs `g++`; without it the tests skip visibly (a failure with `PPSTENCIL_REQUIRE_GPU=1`).

use ppstencil::device::{launch_dims, BlockSize};
use ppstencil::kernels::{
    AddSource, AddSource3d, FdAbsorb, FdAbsorb3d, FdKv2, FdKv23d, FdPxx, FdPzz, FdStep10, FdStep12,
    FdStep14, FdStep16, FdStep2, FdStep3d10, FdStep3d12, FdStep3d14, FdStep3d16, FdStep3d2,
    FdStep3d4, FdStep3d6, FdStep3d8, FdStep4, FdStep6, FdStep8, FdTime, InjectSource,
    InjectSource3d, PmlPsi, PmlPsi3d, PmlPsi3dX, PmlPsi3dXy, PmlPsi3dXz, PmlPsi3dY, PmlPsi3dYz,
    PmlPsi3dZ, PmlPsiX, PmlPsiZ, PmlUpdate, PmlUpdate3d, PmlUpdate3dX, PmlUpdate3dXy,
    PmlUpdate3dXz, PmlUpdate3dY, PmlUpdate3dYz, PmlUpdate3dZ, PmlUpdateX, PmlUpdateZ,
};
use ppstencil::launch::{Region, Stencil, StencilInfo, Window};
use ppstencil::Real;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gpu-emulation")
}

/// The dispatch code calling `kernel` with the fields and reals held by the harness.
fn dispatch(info: &StencilInfo) -> String {
    let mut out = String::new();
    for (ty, arr, rarr) in [("f32", "F32", "R32"), ("f64", "F64", "R64")] {
        let mut args = vec!["g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8]".to_string()];
        let nfields = info.outputs.len() + info.inputs.len();
        for k in 0..nfields {
            args.push(format!("{arr} + {k} * n"));
        }
        for k in 0..info.reals.len() {
            args.push(format!("{rarr}[{k}]"));
        }
        // Each field's window: the whole grid (oz, oy, ox = 0, the grid's ny, nx).
        for _ in 0..nfields {
            args.push("0, 0, 0, g[1], g[2]".to_string());
        }
        let _ = writeln!(
            out,
            "    if (!strcmp(kernel, \"{name}_{ty}\")) {{ ppemu_launch(grid, block, [&] {{ {name}_{ty}({args}); }}); return 0; }}",
            name = info.name,
            args = args.join(", ")
        );
    }
    out
}

const HARNESS_MAIN: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static float *F32; static double *F64; static float *R32; static double *R64;

static int run(const char *kernel, const long long *g, ppemu_dim3 grid, ppemu_dim3 block, long long n)
{
DISPATCH
    fprintf(stderr, "unknown kernel %s\n", kernel);
    return 2;
}

// usage: kernel nz ny nx z0 z1 y0 y1 x0 x1 gx gy bx by nfields nreals in out
int main(int argc, char **argv)
{
    if (argc != 19) { fprintf(stderr, "bad arguments\n"); return 2; }
    const char *kernel = argv[1];
    long long g[9];
    for (int k = 0; k < 9; ++k) g[k] = atoll(argv[2 + k]);
    ppemu_dim3 grid{(unsigned)atoi(argv[11]), (unsigned)atoi(argv[12]), 1};
    ppemu_dim3 block{(unsigned)atoi(argv[13]), (unsigned)atoi(argv[14]), 1};
    long long nfields = atoll(argv[15]), nreals = atoll(argv[16]);
    long long n = g[0] * g[1] * g[2], total = nfields * n + nreals;
    std::vector<double> in(total);
    FILE *f = fopen(argv[17], "rb");
    if (!f || fread(in.data(), sizeof(double), total, f) != (size_t)total) { fprintf(stderr, "read\n"); return 2; }
    fclose(f);
    std::vector<float> f32(nfields * n + 1), r32(nreals + 1);
    std::vector<double> f64(nfields * n + 1), r64(nreals + 1);
    for (long long k = 0; k < nfields * n; ++k) { f32[k] = (float)in[k]; f64[k] = in[k]; }
    for (long long k = 0; k < nreals; ++k) { r32[k] = (float)in[nfields * n + k]; r64[k] = in[nfields * n + k]; }
    F32 = f32.data(); F64 = f64.data(); R32 = r32.data(); R64 = r64.data();
    int rc = run(kernel, g, grid, block, n);
    if (rc) return rc;
    bool single = strstr(kernel, "_f32") != nullptr;
    std::vector<double> out(nfields * n);
    for (long long k = 0; k < nfields * n; ++k) out[k] = single ? (double)f32[k] : f64[k];
    f = fopen(argv[18], "wb");
    if (!f || fwrite(out.data(), sizeof(double), out.size(), f) != out.size()) { fprintf(stderr, "write\n"); return 2; }
    fclose(f);
    return 0;
}
"#;

/// Compiles the harness around the embedded `backend` sources of every acoustic kernel and
/// of the 1D and 3D test stencils ([`EXTRA`]).
fn build_harness(backend: &str) -> Option<PathBuf> {
    let dir = scratch();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let mut src = String::new();
    let _ = writeln!(src, "#include \"{}\"", shim().display());
    let mut dispatches = String::new();
    for info in ppstencil::kernels::ALL.iter().chain(EXTRA) {
        let text = info
            .source(backend)
            .unwrap_or_else(|| panic!("{}: no {backend} source embedded", info.name));
        src.push_str(text);
        dispatches.push_str(&dispatch(info));
    }
    src.push_str(&HARNESS_MAIN.replace("DISPATCH", &dispatches));
    let cpp = dir.join(format!("harness_{backend}.cpp"));
    std::fs::write(&cpp, src).expect("write harness");
    let bin = dir.join(format!("harness_{backend}"));
    let status = Command::new("g++")
        .args([
            "-std=c++17",
            "-O1",
            "-g",
            "-ffp-contract=off",
            "-Wall",
            "-Werror",
        ])
        .args(["-Wno-unused-parameter", "-Wno-unused-variable"])
        .args(["-fsanitize=address,undefined", "-fno-sanitize-recover=all"])
        .arg(&cpp)
        .arg("-o")
        .arg(&bin)
        .status();
    match status {
        Ok(s) if s.success() => Some(bin),
        Ok(s) => panic!("g++ failed ({s}) on {}", cpp.display()),
        Err(e) => {
            kernels_gen::build::skip_missing_tool(&format!("g++ ({e})"), "apt-get install g++");
            None
        }
    }
}

fn shim() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("gpu/emulation_shim.h")
}

/// Deterministic values in [0.5, 1.5).
fn values<T: Real>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            T::lit(0.5 + (s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// Runs stencil `S` on the serial backend and on the emulated GPU kernel; returns the number
/// of points compared.
fn check<S: Stencil, T: Real>(
    bin: &Path,
    tag: &str,
    nz: usize,
    nx: usize,
    indices: &[usize],
    block: BlockSize,
) -> usize {
    check_shape::<S, T>(bin, tag, [nz, 1, nx], indices, block)
}

/// [`check`] on a field of shape `[nz, ny, nx]` (`[1, 1, n]` for 1D stencils).
fn check_shape<S: Stencil, T: Real>(
    bin: &Path,
    tag: &str,
    shape: [usize; 3],
    indices: &[usize],
    block: BlockSize,
) -> usize {
    let info = &S::INFO;
    let grid = Region::for_stencil(info, shape, indices).expect("valid grid");
    let n: usize = shape.iter().product();
    let nx = shape[2];
    let (no, ni, nr) = (info.outputs.len(), info.inputs.len(), info.reals.len());
    let fields: Vec<Vec<T>> = (0..no + ni).map(|k| values(n, 17 + k as u64)).collect();
    let reals: Vec<T> = values(nr, 99);

    // Reference: the serial backend.
    let mut expected = fields.clone();
    {
        let (outs, ins) = expected.split_at_mut(no);
        let mut outs: Vec<&mut [T]> = outs.iter_mut().map(|v| v.as_mut_slice()).collect();
        let ins: Vec<&[T]> = ins.iter().map(|v| v.as_slice()).collect();
        let wins = vec![Window::full(shape); no + ni];
        S::serial(&grid, &wins, &mut outs, &ins, &reals).expect("serial");
    }

    // The emulated GPU kernel, launched with the runtime's grid computation.
    let dims = launch_dims(&grid, block).expect("dims");
    let dir = scratch();
    let input = dir.join(format!("{tag}.in"));
    let output = dir.join(format!("{tag}.out"));
    let bytes: Vec<u8> = fields
        .iter()
        .flatten()
        .chain(reals.iter())
        .flat_map(|v| v.to_f64().to_ne_bytes())
        .collect();
    std::fs::write(&input, bytes).expect("write input");
    let kernel = format!("{}_{}", info.name, T::NAME);
    let (sh, lo, hi) = (grid.shape, grid.lo, grid.hi);
    let g = [
        sh[0], sh[1], sh[2], lo[0], hi[0], lo[1], hi[1], lo[2], hi[2],
    ];
    let out = Command::new(bin)
        .arg(&kernel)
        .args(g.iter().map(|v| v.to_string()))
        .args([dims.grid[0], dims.grid[1], dims.block[0], dims.block[1]].map(|v| v.to_string()))
        .args([(no + ni).to_string(), nr.to_string()])
        .arg(&input)
        .arg(&output)
        .output()
        .expect("run harness");
    assert!(
        out.status.success(),
        "{kernel} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let raw = std::fs::read(&output).expect("read output");
    let got: Vec<T> = raw
        .chunks_exact(8)
        .map(|c| T::lit(f64::from_ne_bytes(c.try_into().expect("8 bytes"))))
        .collect();
    assert_eq!(got.len(), (no + ni) * n);

    let names: Vec<&str> = info.outputs.iter().chain(info.inputs).copied().collect();
    let mut max_rel = 0.0f64;
    for (f, name) in names.iter().enumerate() {
        for k in 0..n {
            let (e, g) = (expected[f][k].to_f64(), got[f * n + k].to_f64());
            let rel = (e - g).abs() / e.abs().max(f64::MIN_POSITIVE);
            max_rel = max_rel.max(rel);
            assert!(
                e.to_bits() == g.to_bits(),
                "{kernel} ({tag}): field `{name}` differs at row {}, column {}: serial {e:e}, GPU source {g:e}",
                k / nx,
                k % nx
            );
        }
    }
    assert!(max_rel <= 1e-6, "{kernel}: max relative error {max_rel:e}");
    grid.points()
}

/// Grid shapes (rows, columns) and blocks: none of the interiors is a multiple of its block,
/// one grid is smaller than a block, and `1 x 1` blocks launch one thread per point.
const CASES: &[(usize, usize, u32, u32)] = &[
    (37, 45, 32, 8),
    (13, 70, 5, 3),
    (9, 9, 1, 1),
    (6, 7, 32, 8),
    (40, 11, 64, 2),
];

/// Extra shapes for the high-order kernels (radius up to 8), again not multiples of the block.
const LARGE: &[(usize, usize, u32, u32)] = &[(41, 53, 32, 8), (19, 30, 7, 5)];

fn check_all(backend: &str) {
    let Some(bin) = build_harness(backend) else {
        return;
    };
    let points = check_2d(&bin, backend);
    assert_every_acoustic_kernel_is_checked();
    assert!(points > 1000, "{points} points compared");
    let nd = check_1d_and_3d(&bin, backend) + check_3d_acoustic(&bin, backend);
    assert!(nd > 1000, "{nd} 1D/3D points compared");
}

/// The 2D acoustic kernels on [`CASES`] (the high-order ones also on [`LARGE`]); returns the
/// number of points compared.
fn check_2d(bin: &Path, backend: &str) -> usize {
    let mut points = 0;
    for (c, &(nz, nx, bx, by)) in CASES.iter().enumerate() {
        let block = BlockSize::new(bx, by).expect("block");
        let tag = |k: &str| format!("{backend}-{k}-{c}");
        let src = [nz / 2, nx / 2];
        points += check::<AddSource, f32>(bin, &tag("src32"), nz, nx, &src, block);
        points += check::<AddSource, f64>(bin, &tag("src64"), nz, nx, &src, block);
        points += check::<FdPxx, f32>(bin, &tag("pxx32"), nz, nx, &[], block);
        points += check::<FdPxx, f64>(bin, &tag("pxx64"), nz, nx, &[], block);
        points += check::<FdPzz, f32>(bin, &tag("pzz32"), nz, nx, &[], block);
        points += check::<FdPzz, f64>(bin, &tag("pzz64"), nz, nx, &[], block);
        points += check::<FdTime, f32>(bin, &tag("time32"), nz, nx, &[], block);
        points += check::<FdTime, f64>(bin, &tag("time64"), nz, nx, &[], block);
        points += check::<FdKv2, f32>(bin, &tag("kv2_32"), nz, nx, &[], block);
        points += check::<FdKv2, f64>(bin, &tag("kv2_64"), nz, nx, &[], block);
        points += check::<FdStep4, f32>(bin, &tag("step32"), nz, nx, &[], block);
        points += check::<FdStep4, f64>(bin, &tag("step64"), nz, nx, &[], block);
    }
    // The higher-order fused steps and the solver's helpers, on every case large enough for
    // their radius (orders 2..16 need up to 17 x 17 points).
    macro_rules! interior {
        ($($ty:ident),*) => {$(
            for (c, &(nz, nx, bx, by)) in CASES.iter().chain(LARGE).enumerate() {
                let r = <$ty as Stencil>::INFO.radius;
                if nz <= 2 * r || nx <= 2 * r {
                    continue;
                }
                let block = BlockSize::new(bx, by).expect("block");
                let name = <$ty as Stencil>::INFO.name;
                points += check::<$ty, f32>(bin, &format!("{backend}-{name}-32-{c}"), nz, nx, &[], block);
                points += check::<$ty, f64>(bin, &format!("{backend}-{name}-64-{c}"), nz, nx, &[], block);
            }
        )*};
    }
    interior!(
        FdStep2, FdStep6, FdStep8, FdStep10, FdStep12, FdStep14, FdStep16, FdAbsorb, PmlPsi,
        PmlUpdate, PmlPsiX, PmlPsiZ, PmlUpdateX, PmlUpdateZ
    );
    for (c, &(nz, nx, bx, by)) in CASES.iter().enumerate() {
        let block = BlockSize::new(bx, by).expect("block");
        let src = [nz / 2, nx / 2];
        let tag = format!("{backend}-inject-{c}");
        points += check::<InjectSource, f32>(bin, &format!("{tag}-32"), nz, nx, &src, block);
        points += check::<InjectSource, f64>(bin, &format!("{tag}-64"), nz, nx, &src, block);
    }
    points
}

/// The acoustic kernels [`check_2d`] and [`check_3d_acoustic`] check are all of them.
fn assert_every_acoustic_kernel_is_checked() {
    let mut checked = Vec::new();
    for info in [
        AddSource::INFO,
        FdPxx::INFO,
        FdPzz::INFO,
        FdTime::INFO,
        FdKv2::INFO,
        FdStep4::INFO,
        FdStep2::INFO,
        FdStep6::INFO,
        FdStep8::INFO,
        FdStep10::INFO,
        FdStep12::INFO,
        FdStep14::INFO,
        FdStep16::INFO,
        InjectSource::INFO,
        FdAbsorb::INFO,
        PmlPsi::INFO,
        PmlUpdate::INFO,
        PmlPsiX::INFO,
        PmlPsiZ::INFO,
        PmlUpdateX::INFO,
        PmlUpdateZ::INFO,
        AddSource3d::INFO,
        InjectSource3d::INFO,
        FdKv23d::INFO,
        FdAbsorb3d::INFO,
        FdStep3d2::INFO,
        FdStep3d4::INFO,
        FdStep3d6::INFO,
        FdStep3d8::INFO,
        FdStep3d10::INFO,
        FdStep3d12::INFO,
        FdStep3d14::INFO,
        FdStep3d16::INFO,
        PmlPsi3d::INFO,
        PmlUpdate3d::INFO,
        PmlPsi3dX::INFO,
        PmlPsi3dY::INFO,
        PmlPsi3dZ::INFO,
        PmlUpdate3dX::INFO,
        PmlUpdate3dY::INFO,
        PmlUpdate3dZ::INFO,
        PmlPsi3dXy::INFO,
        PmlPsi3dXz::INFO,
        PmlPsi3dYz::INFO,
        PmlUpdate3dXy::INFO,
        PmlUpdate3dXz::INFO,
        PmlUpdate3dYz::INFO,
    ] {
        checked.push(info.name);
    }
    checked.sort_unstable();
    let mut all: Vec<&str> = ppstencil::kernels::ALL.iter().map(|i| i.name).collect();
    all.sort_unstable();
    assert_eq!(checked, all, "every acoustic kernel is checked");
}

/// The 1D and 3D test stencils, on shapes that are not multiples of the block; returns the
/// number of points compared.
fn check_1d_and_3d(bin: &Path, backend: &str) -> usize {
    let mut nd = 0;
    for (c, &(n, bx, by)) in [(37usize, 32u32, 8u32), (100, 7, 3), (5, 1, 1)]
        .iter()
        .enumerate()
    {
        let block = BlockSize::new(bx, by).expect("block");
        let tag = |k: &str| format!("{backend}-1d-{k}-{c}");
        nd += check_shape::<Heat1d, f32>(bin, &tag("heat32"), [1, 1, n], &[], block);
        nd += check_shape::<Heat1d, f64>(bin, &tag("heat64"), [1, 1, n], &[], block);
        nd += check_shape::<Kick1d, f32>(bin, &tag("kick32"), [1, 1, n], &[n / 2], block);
    }
    for (c, &(nz, ny, nx, bx, by)) in [
        (11usize, 13usize, 37usize, 32u32, 8u32),
        (9, 10, 9, 5, 3),
        (7, 17, 12, 1, 1),
        (12, 9, 70, 64, 2),
    ]
    .iter()
    .enumerate()
    {
        let block = BlockSize::new(bx, by).expect("block");
        let tag = |k: &str| format!("{backend}-3d-{k}-{c}");
        let shape = [nz, ny, nx];
        nd += check_shape::<Lap3d, f32>(bin, &tag("lap32"), shape, &[], block);
        nd += check_shape::<Lap3d, f64>(bin, &tag("lap64"), shape, &[], block);
        nd += check_shape::<Mixed3d, f32>(bin, &tag("mixed32"), shape, &[], block);
        nd += check_shape::<Mixed3d, f64>(bin, &tag("mixed64"), shape, &[], block);
        nd += check_shape::<Kick3d, f64>(
            bin,
            &tag("kick64"),
            shape,
            &[nz / 2, ny / 2, nx / 2],
            block,
        );
    }
    nd
}

/// The 3D acoustic kernels, on 3D shapes that are not multiples of the block and hold the
/// largest radius (8); returns the number of points compared.
fn check_3d_acoustic(bin: &Path, backend: &str) -> usize {
    const SHAPES_3D: [(usize, usize, usize, u32, u32); 2] =
        [(19, 18, 21, 8, 4), (18, 23, 40, 32, 8)];
    let mut nd = 0;
    macro_rules! acoustic_3d {
        ($($ty:ident),*) => {$(
            for (c, &(nz, ny, nx, bx, by)) in SHAPES_3D.iter().enumerate() {
                let block = BlockSize::new(bx, by).expect("block");
                let name = <$ty as Stencil>::INFO.name;
                let at: &[usize] = if <$ty as Stencil>::INFO.point { &[9, 8, 10] } else { &[] };
                let shape = [nz, ny, nx];
                nd += check_shape::<$ty, f32>(bin, &format!("{backend}-{name}-32-{c}"), shape, at, block);
                nd += check_shape::<$ty, f64>(bin, &format!("{backend}-{name}-64-{c}"), shape, at, block);
            }
        )*};
    }
    acoustic_3d!(
        AddSource3d,
        InjectSource3d,
        FdKv23d,
        FdAbsorb3d,
        FdStep3d2,
        FdStep3d4,
        FdStep3d6,
        FdStep3d8,
        FdStep3d10,
        FdStep3d12,
        FdStep3d14,
        FdStep3d16,
        PmlPsi3d,
        PmlUpdate3d,
        PmlPsi3dX,
        PmlPsi3dY,
        PmlPsi3dZ,
        PmlUpdate3dX,
        PmlUpdate3dY,
        PmlUpdate3dZ,
        PmlPsi3dXy,
        PmlPsi3dXz,
        PmlPsi3dYz,
        PmlUpdate3dXy,
        PmlUpdate3dXz,
        PmlUpdate3dYz
    );
    nd
}

ppstencil::stencil! {
    /// 1D explicit heat step.
    fn heat1d(unew: out, u: in, r: real) {
        unew[0] = u[0] + r * d2x(u, 2);
    }
    /// 1D point update.
    #[at(ix)]
    fn kick1d(u: inout, a: real, ix: index) {
        u[0] = u[0] + a;
    }
    /// 3D order-4 Laplacian with first derivatives along every axis.
    fn lap3d(o: out, p: in, q: in, k: real) {
        o[0, 0, 0] = k * laplacian(p, 4) + d1x(q, 2) - d1y(q, 4) + d1z(q, 6);
    }
    /// Mixed second derivatives, different orders (radii) per operator.
    fn mixed3d(o: out, p: in) {
        o[0, 0, 0] = d2xz(p, 2) + d2xy(p, 4) - d2yz(p, 2) + d2y(p, 6);
    }
    /// 3D point update.
    #[at(iz, iy, ix)]
    fn kick3d(u: inout, a: real, iz: index, iy: index, ix: index) {
        u[0, 0, 0] = u[0, 0, 0] * a;
    }
}

/// The 1D and 3D stencils above, compiled into the harness beside the acoustic kernels.
const EXTRA: &[StencilInfo] = &[
    Heat1d::INFO,
    Kick1d::INFO,
    Lap3d::INFO,
    Mixed3d::INFO,
    Kick3d::INFO,
];

#[test]
fn generated_cuda_c_matches_serial_on_cpu_emulation() {
    check_all("cuda");
}

#[test]
fn generated_hip_c_matches_serial_on_cpu_emulation() {
    check_all("hip");
}

/// The emulation would notice a kernel that ignores its guard: dropping the guard from the
/// source makes AddressSanitizer or the comparison fail.
#[test]
fn emulation_detects_a_missing_guard() {
    let info = FdPxx::INFO;
    let text = info.source("cuda").expect("cuda source");
    let broken = text.replace("if (ix >= x1 || iz >= z1) {\n        return;\n    }\n", "");
    assert_ne!(broken, text, "the guard was found and removed");
    let dir = scratch().join("broken");
    std::fs::create_dir_all(&dir).expect("dir");
    let cpp = dir.join("broken.cpp");
    let main = "int main() { static float out[6 * 40], in[6 * 40]; \
                ppemu_launch(ppemu_dim3{2, 1, 1}, ppemu_dim3{32, 8, 1}, [&] { fd_pxx_f32(6, 1, 40, 2, 4, 0, 1, 2, 38, out, in, 0, 0, 0, 1, 40, 0, 0, 0, 1, 40); }); \
                return 0; }\n";
    std::fs::write(
        &cpp,
        format!("#include \"{}\"\n{broken}\n{main}", shim().display()),
    )
    .expect("write");
    let bin = dir.join("broken");
    let built = Command::new("g++")
        .args([
            "-std=c++17",
            "-O1",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
        ])
        .arg(&cpp)
        .arg("-o")
        .arg(&bin)
        .status();
    let Ok(built) = built else {
        return; // no g++: the main tests already fail or skip with the reason.
    };
    assert!(built.success());
    let run = Command::new(&bin).output().expect("run");
    assert!(
        !run.status.success(),
        "an unguarded kernel writing past the field went unnoticed"
    );
}
