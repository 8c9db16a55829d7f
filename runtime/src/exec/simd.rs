//! SIMD dispatch: which vector instruction set host kernels run with ([`simd`]) and the
//! wrapper that compiles a closure for it ([`vectorized`]). The row loops that use it live in
//! the `rows` module.

use std::sync::OnceLock;

/// The vector instruction set host kernels run with (see [`vectorized`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    /// The compilation target's baseline (SSE2 on x86_64, NEON on aarch64).
    Baseline,
    /// 256-bit AVX2 with FMA, chosen at run time on x86_64 CPUs that have both.
    Avx2,
    /// 512-bit AVX-512 (F, VL) with AVX2 and FMA, chosen at run time on x86_64 CPUs that
    /// have them.
    Avx512,
}

impl Simd {
    /// `"baseline"`, `"avx2"` or `"avx512"`.
    pub fn name(self) -> &'static str {
        match self {
            Simd::Baseline => "baseline",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }

    /// The widest set the running CPU has.
    fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("fma") {
                if has!("avx512f") && has!("avx512vl") {
                    return Simd::Avx512;
                }
                return Simd::Avx2;
            }
        }
        Simd::Baseline
    }
}

/// The environment variable that caps the instruction set (`baseline`, `avx2`, `avx512`),
/// for comparisons and for testing the narrower paths on a wider CPU.
pub const SIMD_ENV: &str = "PPSTENCIL_SIMD";

/// The instruction set [`vectorized`] uses: the widest the CPU has (detected at run time), capped
/// by `PPSTENCIL_SIMD` when it names a narrower one. Decided once per process.
pub fn simd() -> Simd {
    static LEVEL: OnceLock<Simd> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let cpu = Simd::detect();
        let cap = std::env::var(SIMD_ENV).ok().and_then(|v| {
            [Simd::Baseline, Simd::Avx2, Simd::Avx512]
                .into_iter()
                .find(|s| v.eq_ignore_ascii_case(s.name()))
        });
        cap.map_or(cpu, |cap| cap.min(cpu))
    })
}

/// Whether [`vectorized`] runs fused multiply-adds for `fused = true` on this CPU: where it
/// has FMA in hardware (x86_64 with AVX2 and FMA, every aarch64). Elsewhere fused requests
/// run the exact arithmetic.
pub fn fma_available() -> bool {
    cfg!(target_arch = "aarch64") || simd() >= Simd::Avx2
}

/// The instruction set [`vectorized`] runs a launch with: [`simd`] for the fused arithmetic,
/// at most AVX2 for the exact one.
pub fn simd_for(fused: bool) -> Simd {
    if fused {
        simd()
    } else {
        simd().min(Simd::Avx2)
    }
}

/// Runs `f(fused)` compiled for the widest vector unit [`simd`] allows.
///
/// Generated drivers wrap their row loops in this (through `run_rows`). `f` and the
/// `#[inline(always)]` row kernels it calls are inlined into a copy compiled with the
/// chosen `target_feature`s, so one portable binary uses the CPU's vectors. `fused` asks for
/// fused multiply-adds: `f` gets `true` only where [`fma_available`], as a constant of the
/// copy it runs in, so each copy keeps one arithmetic. Exact requests run 256-bit AVX2 at
/// most and never contract, so their results are bit-identical on every CPU; fused ones run
/// AVX-512 where present.
#[inline(always)]
pub fn vectorized<R>(fused: bool, f: impl FnOnce(bool) -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    match (simd_for(fused), fused) {
        // SAFETY (each arm): `simd()` returns a level only when the running CPU reports
        // every feature of the copy called for it (`Simd::detect`).
        // The closures are inlined into each copy, with `f`, which callers mark
        // `#[inline(always)]` too: what is not inlined runs compiled for the baseline.
        (Simd::Avx512, true) => {
            return unsafe {
                with_avx512_fma(
                    #[inline(always)]
                    || f(true),
                )
            };
        }
        (Simd::Avx2, true) => {
            return unsafe {
                with_avx2_fma(
                    #[inline(always)]
                    || f(true),
                )
            }
        }
        (Simd::Avx2, false) => {
            return unsafe {
                with_avx2(
                    #[inline(always)]
                    || f(false),
                )
            }
        }
        (Simd::Baseline, _) | (Simd::Avx512, false) => {}
    }
    f(cfg!(target_arch = "aarch64") && fused)
}

/// `f`, inlined into a function compiled with AVX2 enabled.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f`, inlined into a function compiled with AVX2 and FMA enabled.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn with_avx2_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f`, inlined into a function compiled with AVX-512 (F, VL), AVX2 and FMA enabled.
///
/// # Safety
/// The CPU must support AVX-512F, AVX-512VL, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn with_avx512_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectorized_runs_the_closure_with_the_arithmetic_the_cpu_has() {
        assert_eq!(vectorized(false, |fused| (6 * 7, fused)), (42, false));
        assert_eq!(vectorized(true, |fused| fused), fma_available());
        let cpu = Simd::detect();
        assert!(simd() <= cpu);
        if std::env::var(SIMD_ENV).is_err() {
            assert_eq!(simd(), cpu);
        }
    }
}
