//! SIMD dispatch: which vector instruction set host kernels run with ([`simd`]) and the
//! wrapper that compiles a closure for it ([`vectorized`]). The row loops that use it live in
//! the `rows` module.

use std::sync::OnceLock;

/// The vector instruction set host kernels run with (see [`vectorized`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    /// The compilation target's baseline (SSE2 on x86_64 unless `-C target-cpu` says more).
    Baseline,
    /// 256-bit AVX2, chosen at run time on x86_64 CPUs that have it.
    Avx2,
}

impl Simd {
    /// `"baseline"` or `"avx2"`.
    pub fn name(self) -> &'static str {
        match self {
            Simd::Baseline => "baseline",
            Simd::Avx2 => "avx2",
        }
    }
}

/// The instruction set [`vectorized`] uses: AVX2 when the CPU has it (x86_64 only), unless the
/// environment variable `PPSTENCIL_SIMD=baseline` asks for the baseline (for comparisons).
/// Decided once per process.
pub fn simd() -> Simd {
    static LEVEL: OnceLock<Simd> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        if std::env::var("PPSTENCIL_SIMD").is_ok_and(|v| v.eq_ignore_ascii_case("baseline")) {
            return Simd::Baseline;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Simd::Avx2;
        }
        Simd::Baseline
    })
}

/// Runs `f` compiled for the widest vector unit [`simd`] allows.
///
/// Generated drivers wrap their row loops in this. `f` and the `#[inline(always)]` row
/// kernels it calls are inlined into a copy compiled with `#[target_feature(enable =
/// "avx2")]`, so one portable binary uses 256-bit vectors where the CPU has them. Only the
/// vector width changes: Rust never contracts `a * b + c` into an FMA, so results are
/// bit-identical to the baseline build.
#[inline(always)]
pub fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if simd() == Simd::Avx2 {
        // SAFETY: `simd()` returns `Avx2` only when the running CPU reports AVX2.
        return unsafe { with_avx2(f) };
    }
    f()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectorized_runs_the_closure() {
        assert_eq!(vectorized(|| 6 * 7), 42);
        assert!(matches!(simd(), Simd::Avx2 | Simd::Baseline));
    }
}
