//! Shared helpers for the integration tests (see `tests/`).
//!
//! Everything here is written from the equations and file formats, independently of the code
//! under test: a tiny `.npy` reader, a random number generator, a plain-loop acoustic solver in
//! `f64`, its own Ricker wavelet and velocity model. The [`for_each_space!`] macro instantiates
//! a generic test function once per execution space compiled in, following the paper's
//! testing pattern (initialise on the host, copy into the space, run, copy back, assert on
//! the host).
#![warn(missing_docs)]

use ppstencil::{ExecutionSpace, MemSpaceHost};
use std::any::TypeId;
use std::path::PathBuf;

pub mod grid;
pub mod spaces;

/// Instantiates generic test functions `fn name<E: ExecutionSpace>(space: E)` once per
/// execution space compiled in: one module per space, one `#[test]` per function.
///
/// Adding a backend is one line here (and one constructor in [`spaces`]).
///
/// ```text
/// fn doubles<E: ExecutionSpace>(space: E) { /* ... */ }
/// ppstencil_tests::for_each_space!(doubles);
/// // → serial::doubles, rayon::doubles, rayon_2_threads_rows_of_1::doubles, ...
/// ```
#[macro_export]
macro_rules! for_each_space {
    ($($test:ident),* $(,)?) => {
        $crate::instantiate!(serial, $crate::spaces::serial(); $($test),*);
        $crate::instantiate!(rayon, $crate::spaces::rayon(); $($test),*);
        $crate::instantiate!(rayon_2_threads_rows_of_1, $crate::spaces::rayon_rows_of_1(); $($test),*);
        $crate::instantiate!(rayon_3_threads_rows_of_4, $crate::spaces::rayon_rows_of_4(); $($test),*);
        #[cfg(feature = "cuda")]
        $crate::instantiate!(cuda, $crate::spaces::cuda(); $($test),*);
        #[cfg(feature = "hip")]
        $crate::instantiate!(hip, $crate::spaces::hip(); $($test),*);
    };
}

/// One module `$module` with a `#[test]` per function, each run on the space `$make`
/// returns (`None` means "not available here": the test passes after a skip line).
#[macro_export]
macro_rules! instantiate {
    ($module:ident, $make:expr; $($test:ident),*) => {
        mod $module {
            $(
                #[test]
                fn $test() {
                    if let ::core::option::Option::Some(space) = $make {
                        super::$test(space);
                    }
                }
            )*
        }
    };
}

/// Whether `E` runs on host memory. Host backends must agree with `Serial` bit for bit;
/// device backends (different compilers, FMA contraction) within a few rounding errors.
pub fn is_host<E: ExecutionSpace>() -> bool {
    TypeId::of::<E::Memory>() == TypeId::of::<MemSpaceHost>()
}

/// A small, deterministic random number generator (xorshift64*), so the tests need no
/// dependency and every run sees the same numbers.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value; 0 is replaced).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// `n` values uniform in `[lo, hi)`, converted by `f`.
    pub fn vec<T>(&mut self, n: usize, lo: f64, hi: f64, f: impl Fn(f64) -> T) -> Vec<T> {
        (0..n).map(|_| f(self.uniform(lo, hi))).collect()
    }
}

/// Path of a file in `tests/fixtures/`.
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// Reads a little-endian float32, C-order `.npy` file (format versions 1 to 3): the shape and
/// the data. Written from the format's specification, independently of the library's writer.
pub fn read_npy_f32(bytes: &[u8]) -> Result<(Vec<usize>, Vec<f32>), String> {
    const MAGIC: &[u8] = b"\x93NUMPY";
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (missing \\x93NUMPY magic)".into());
    }
    let major = bytes[6];
    let (header_len, header_start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated .npy header".into());
            }
            let n = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
            (n as usize, 12)
        }
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let data_start = header_start + header_len;
    let header = bytes
        .get(header_start..data_start)
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|e| format!("header is not text: {e}"))?;
    let value_of = |key: &str| -> Result<&str, String> {
        let k = header
            .find(&format!("'{key}'"))
            .ok_or(format!("header has no '{key}': {header}"))?;
        let rest = &header[k + key.len() + 2..];
        let colon = rest.find(':').ok_or("malformed header")?;
        Ok(rest[colon + 1..].trim_start())
    };
    let descr = value_of("descr")?;
    if !descr.starts_with("'<f4'") {
        return Err(format!("expected dtype '<f4', found {descr}"));
    }
    if !value_of("fortran_order")?.starts_with("False") {
        return Err("expected C order (fortran_order: False)".into());
    }
    let shape_text = value_of("shape")?;
    let close = shape_text.find(')').ok_or("malformed shape")?;
    let shape = shape_text[1..close]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|e| format!("bad shape `{s}`: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let n: usize = shape.iter().product();
    let data = &bytes[data_start..];
    if data.len() != 4 * n {
        return Err(format!(
            "shape {shape:?} needs {} bytes of data, found {}",
            4 * n,
            data.len()
        ));
    }
    let values = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((shape, values))
}

/// A 2D acoustic problem, described independently of `ppstencil::WaveConfig`.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Rows.
    pub nz: usize,
    /// Columns.
    pub nx: usize,
    /// Time steps.
    pub nt: usize,
    /// Time step (s).
    pub dt: f64,
    /// Grid spacing (m).
    pub dh: f64,
    /// Source row and column.
    pub src: (usize, usize),
    /// Ricker peak frequency (Hz).
    pub fpeak: f64,
    /// Background velocity (m/s).
    pub vmin: f64,
    /// `(z0, z1, v)`: rows `[z0, z1)` get velocity `v`, applied in order.
    pub layers: Vec<(usize, usize, f64)>,
}

impl Problem {
    /// The parameters of `tests/fixtures/paper_code_wavefield_150x180.npy` (see its README).
    pub fn fixture() -> Self {
        Problem {
            nz: 150,
            nx: 180,
            nt: 300,
            dt: 0.0004,
            dh: 4.0,
            src: (60, 90),
            fpeak: 20.0,
            vmin: 1800.0,
            layers: vec![(100, 150, 2800.0)],
        }
    }

    /// The velocity at row `iz`.
    pub fn velocity(&self, iz: usize) -> f64 {
        self.layers
            .iter()
            .filter(|(z0, z1, _)| (*z0..*z1).contains(&iz))
            .map(|l| l.2)
            .next_back()
            .unwrap_or(self.vmin)
    }

    /// The zero-phase Ricker wavelet at step `it`: `(1 - 2a) e^{-a}`, `a = (π f t)²`,
    /// `t = it·dt`.
    pub fn ricker(&self, it: usize) -> f64 {
        let a = (std::f64::consts::PI * self.fpeak * it as f64 * self.dt).powi(2);
        (1.0 - 2.0 * a) * (-a).exp()
    }
}

/// The 4th-order second-difference weights `[w0, w1, w2]` for offsets 0, ±1, ±2, exactly:
/// `f'' ≈ (-f₋₂ + 16f₋₁ - 30f₀ + 16f₁ - f₂) / 12`.
pub const EXACT_WEIGHTS: [f64; 3] = [-30.0 / 12.0, 16.0 / 12.0, -1.0 / 12.0];

/// The same weights rounded to float32, as code that stores them in `float` constants (the
/// paper's) uses them. They do not sum to zero (`w0 + 2w1 + 2w2 ≈ 7.5e-8`), which shifts a
/// float32 simulation systematically away from the exact scheme.
pub const F32_WEIGHTS: [f64; 3] = [
    (-30.0f32 / 12.0) as f64,
    (16.0f32 / 12.0) as f64,
    (-1.0f32 / 12.0) as f64,
];

/// The final wavefield of `problem`, from plain loops in `f64` with [`EXACT_WEIGHTS`].
pub fn reference_wavefield(problem: &Problem) -> Vec<f64> {
    reference_wavefield_with_weights(problem, EXACT_WEIGHTS)
}

/// The final wavefield of `problem`, from plain loops in `f64`.
///
/// Each step sets `p[src] = ricker(it)`, then, on rows and columns `2..n-2`,
/// `pnew = 2p - pold + (v dt/dh)² (δxx p + δzz p)` with the second difference
/// `δxx f = w2 f₋₂ + w1 f₋₁ + w0 f₀ + w1 f₁ + w2 f₂` (unscaled, the `dh²` is in the
/// factor); the 2-cell border stays 0. Returns `p` after the last step (the last `pnew`),
/// row-major.
pub fn reference_wavefield_with_weights(problem: &Problem, w: [f64; 3]) -> Vec<f64> {
    let (nz, nx) = (problem.nz, problem.nx);
    let at = |iz: usize, ix: usize| iz * nx + ix;
    let r2 = (problem.dt / problem.dh).powi(2);
    let mut p = vec![0.0f64; nz * nx];
    let mut pold = vec![0.0f64; nz * nx];
    let mut pnew = vec![0.0f64; nz * nx];
    let d2 = |m2: f64, m1: f64, c: f64, p1: f64, p2: f64| {
        w[2] * m2 + w[1] * m1 + w[0] * c + w[1] * p1 + w[2] * p2
    };
    for it in 0..problem.nt {
        p[at(problem.src.0, problem.src.1)] = problem.ricker(it);
        for iz in 2..nz - 2 {
            let v = problem.velocity(iz);
            for ix in 2..nx - 2 {
                let lap_x = d2(
                    p[at(iz, ix - 2)],
                    p[at(iz, ix - 1)],
                    p[at(iz, ix)],
                    p[at(iz, ix + 1)],
                    p[at(iz, ix + 2)],
                );
                let lap_z = d2(
                    p[at(iz - 2, ix)],
                    p[at(iz - 1, ix)],
                    p[at(iz, ix)],
                    p[at(iz + 1, ix)],
                    p[at(iz + 2, ix)],
                );
                pnew[at(iz, ix)] =
                    2.0 * p[at(iz, ix)] - pold[at(iz, ix)] + r2 * v * v * (lap_x + lap_z);
            }
        }
        std::mem::swap(&mut pold, &mut p);
        std::mem::swap(&mut p, &mut pnew);
    }
    p
}

/// `max |a - b|` over two equally long sequences, in `f64`.
pub fn max_abs_diff(a: impl IntoIterator<Item = f64>, b: impl IntoIterator<Item = f64>) -> f64 {
    a.into_iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `max |a|`, in `f64`.
pub fn max_abs(a: impl IntoIterator<Item = f64>) -> f64 {
    a.into_iter().map(f64::abs).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_reader_parses_a_hand_written_file() {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        let mut header = header.to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        for v in [1.0f32, -2.0, 0.5, 3.25, 0.0, 7.0] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let (shape, data) = read_npy_f32(&bytes).expect("valid file");
        assert_eq!(shape, vec![2, 3]);
        assert_eq!(data, vec![1.0, -2.0, 0.5, 3.25, 0.0, 7.0]);
        bytes.pop();
        assert!(read_npy_f32(&bytes).unwrap_err().contains("needs 24 bytes"));
        assert!(read_npy_f32(b"PK\x03\x04 not npy").is_err());
    }

    #[test]
    fn velocity_model_applies_layers_in_order() {
        let p = Problem {
            layers: vec![(10, 20, 3000.0), (15, 30, 4000.0)],
            ..Problem::fixture()
        };
        assert_eq!(p.velocity(9), 1800.0);
        assert_eq!(p.velocity(10), 3000.0);
        assert_eq!(p.velocity(15), 4000.0);
        assert_eq!(p.velocity(29), 4000.0);
        assert_eq!(p.velocity(30), 1800.0);
    }

    #[test]
    fn ricker_starts_at_one_and_crosses_zero_where_a_is_one_half() {
        let p = Problem::fixture();
        assert_eq!(p.ricker(0), 1.0);
        // 1 - 2a = 0 at t = 1 / (π f √2) ≈ 11.25 ms: between steps 28 and 29 for dt = 0.4 ms.
        assert!(p.ricker(28) > 0.0 && p.ricker(29) < 0.0);
    }

    #[test]
    fn reference_solver_matches_two_steps_by_hand() {
        // Step 0 sets δ at the source and spreads it with the 4th-order weights: the source
        // becomes 2 - 5k, its 4 neighbours at distance 1 get k·16/12, at distance 2 -k/12
        // (k = (v dt/dh)²). Step 1 sets the source to ricker(1) = s1 and steps from
        // (p, pold = δ): centre = 2 s1 - 1 + k (-5 s1 + 4·(16/12)(16k/12) + 4·(1/12)(k/12)).
        let prob = Problem {
            nz: 9,
            nx: 9,
            nt: 2,
            dt: 0.001,
            dh: 10.0,
            src: (4, 4),
            fpeak: 10.0,
            vmin: 1000.0,
            layers: vec![],
        };
        let p = reference_wavefield(&prob);
        let k = (0.001f64 * 1000.0 / 10.0).powi(2);
        let s1 = prob.ricker(1);
        let centre = 2.0 * s1 - 1.0
            + k * (-5.0 * s1
                + 4.0 * (16.0 / 12.0) * (16.0 * k / 12.0)
                + 4.0 * (1.0 / 12.0) * (k / 12.0));
        assert!(
            (p[4 * 9 + 4] - centre).abs() < 1e-12,
            "{} vs {centre}",
            p[4 * 9 + 4]
        );
        assert!(p.iter().enumerate().all(|(i, &v)| {
            let (iz, ix) = (i / 9, i % 9);
            v == 0.0 || (2..7).contains(&iz) && (2..7).contains(&ix)
        }));
    }
}
