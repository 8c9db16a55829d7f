//! The hand-written C/OpenMP reference of the fused acoustic step (`csrc/fd_step.c`), compiled
//! by `build.rs` with `-O3 -march=native -fopenmp -ffp-contract=off` when the cargo feature
//! `c-reference` is on (the default), to measure the generated Rust kernels against in the
//! same run (`ppwave bench`, `cargo bench -p ppwave --features criterion`).
//!
//! This module holds only the safe wrapper over the C function and the check that it agrees
//! with the generated kernel bit for bit; the timing lives in [`bench`](mod@crate::bench).
//! Without the feature, or without a C compiler, every call returns [`RefError::Unavailable`],
//! whose message says how to get the reference.

use std::fmt;

/// Why the reference cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefError {
    /// Not compiled: the feature `c-reference` was off, or no C compiler was found.
    Unavailable,
    /// Slices of the wrong length or a grid smaller than 5 x 5.
    BadShape(String),
}

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefError::Unavailable if cfg!(feature = "c-reference") => write!(
                f,
                "the C reference was not built (no C compiler found when building ppwave; \
                 install gcc or clang and rebuild)"
            ),
            RefError::Unavailable => write!(
                f,
                "the C reference was not built (ppwave was built without the feature \
                 `c-reference`; rebuild with `--features c-reference`)"
            ),
            RefError::BadShape(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for RefError {}

#[cfg(ppref)]
extern "C" {
    fn ppref_has_openmp() -> i32;
    fn ppref_fd_step_f32(
        pnew: *mut f32,
        p: *const f32,
        pold: *const f32,
        kv2: *const f32,
        nz: usize,
        nx: usize,
        threads: i32,
    );
}

/// Whether the reference was compiled (feature `c-reference` on and a C compiler found).
pub fn available() -> bool {
    cfg!(ppref)
}

/// Whether the reference was compiled with OpenMP (otherwise it runs on one thread).
pub fn has_openmp() -> bool {
    #[cfg(ppref)]
    {
        // SAFETY: a pure function without arguments.
        unsafe { ppref_has_openmp() != 0 }
    }
    #[cfg(not(ppref))]
    false
}

/// The fused step in C: `pnew = 2 p - pold + kv2 (pxx + pzz)` on rows and columns `2..n-2`
/// of `nz x nx` row-major fields, on `threads` OpenMP threads.
pub fn fd_step(
    pnew: &mut [f32],
    p: &[f32],
    pold: &[f32],
    kv2: &[f32],
    nz: usize,
    nx: usize,
    threads: usize,
) -> Result<(), RefError> {
    let len = nz.saturating_mul(nx);
    if nz < 5 || nx < 5 {
        return Err(RefError::BadShape(format!(
            "grid {nz} x {nx} is too small for the radius-2 step: use at least 5 x 5"
        )));
    }
    if [pnew.len(), p.len(), pold.len(), kv2.len()] != [len; 4] {
        return Err(RefError::BadShape(format!(
            "every field must hold nz * nx = {len} values"
        )));
    }
    let threads = i32::try_from(threads.max(1)).unwrap_or(i32::MAX);
    #[cfg(ppref)]
    {
        // SAFETY: all four slices hold nz * nx elements (checked above) and nz, nx >= 5, so
        // every index the C loop touches (rows 0..nz, columns 0..nx) is in bounds; `pnew`
        // is a unique borrow, so it does not alias the inputs (C's `restrict`).
        unsafe {
            ppref_fd_step_f32(
                pnew.as_mut_ptr(),
                p.as_ptr(),
                pold.as_ptr(),
                kv2.as_ptr(),
                nz,
                nx,
                threads,
            );
        }
        Ok(())
    }
    #[cfg(not(ppref))]
    {
        let _ = threads;
        Err(RefError::Unavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(ppref)]
    #[test]
    fn matches_the_generated_kernel_bit_for_bit() {
        use ppstencil::{kernels, HostField, ScalarField, Serial};
        let (nz, nx) = (13, 17);
        let f = |a: f32| move |z: usize, x: usize| (a * z as f32 + 0.37 * x as f32).sin();
        let p: HostField = ScalarField::from_fn(nz, nx, f(0.3)).unwrap();
        let pold: HostField = ScalarField::from_fn(nz, nx, f(0.7)).unwrap();
        let kv2: HostField =
            ScalarField::from_fn(nz, nx, |z, x| 0.1 + 0.01 * (z + x) as f32).unwrap();
        let mut rust: HostField = ScalarField::new(nz, nx).unwrap();
        kernels::fd_step_4(&Serial, &mut rust, &p, &pold, &kv2).unwrap();
        let mut c = vec![0.0f32; nz * nx];
        fd_step(
            &mut c,
            p.as_slice(),
            pold.as_slice(),
            kv2.as_slice(),
            nz,
            nx,
            2,
        )
        .unwrap();
        assert_eq!(rust.as_slice(), &c[..]);
        assert!(c.iter().any(|v| *v != 0.0));
    }

    #[cfg(not(ppref))]
    #[test]
    fn without_the_kernel_fd_step_says_how_to_get_it() {
        let v = vec![0.0f32; 25];
        let mut o = v.clone();
        let e = fd_step(&mut o, &v, &v, &v, 5, 5, 1).unwrap_err();
        assert_eq!(e, RefError::Unavailable);
        let fix = if cfg!(feature = "c-reference") {
            "install gcc or clang"
        } else {
            "--features c-reference"
        };
        assert!(e.to_string().contains(fix), "{e}");
        assert!(!available() && !has_openmp());
    }

    #[test]
    fn bad_shapes_are_errors() {
        let v = vec![0.0f32; 16];
        let mut o = v.clone();
        let e = fd_step(&mut o, &v, &v, &v, 4, 4, 1).unwrap_err();
        assert!(e.to_string().contains("at least 5 x 5"), "{e}");
        let mut o = vec![0.0f32; 30];
        let e = fd_step(&mut o, &v, &v, &v, 5, 6, 1).unwrap_err();
        assert!(e.to_string().contains("30"), "{e}");
    }
}
