//! Numerics of host kernels: whether `a * b + c` may be fused into one rounding (FMA), and
//! whether subnormal numbers are flushed to zero. A per-thread setting ([`numerics`],
//! [`with_numerics`]) that every launch reads on the launching thread and carries to the
//! tasks it runs on other threads, so a pool's workers compute as the caller asked.

use std::cell::Cell;

/// How host kernels round `a * b + c`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    /// Every operation rounded as the IR writes it: no contraction, 256-bit vectors at most.
    /// Bit-identical on every CPU and to the GPU backends and their software emulation.
    #[default]
    Exact,
    /// `a * b + c` fused into one rounding where the CPU has FMA, with the widest vector
    /// unit it has (AVX-512, AVX2, NEON), chosen at run time. Results differ from `Exact`
    /// by a few units in the last place per operation; serial, rayon and blocked runs stay
    /// bit-identical to each other. On a CPU without FMA it is `Exact`.
    Fast,
}

/// What host kernels do with subnormal numbers (magnitudes below the smallest normal, about
/// 1.2e-38 in `f32`), which x86 CPUs compute up to a hundred times slower than normal ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Subnormals {
    /// IEEE 754: kept and computed exactly.
    #[default]
    Keep,
    /// Flushed to zero, as inputs and as results (x86 FTZ and DAZ, aarch64 FZ) while a
    /// kernel runs; the thread's own mode is restored after it. A wave's decaying tails
    /// become zeros instead of slowing every step that touches them.
    Flush,
}

/// The numerics of host kernel launches. [`Numerics::IEEE`] (exact, subnormals kept) is what
/// a thread starts with; the acoustic solver runs with its configuration's, by default
/// [`Numerics::default`] (exact, subnormals flushed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Numerics {
    /// Fused or exact arithmetic.
    pub arithmetic: Arithmetic,
    /// Subnormals kept or flushed.
    pub subnormals: Subnormals,
}

impl Numerics {
    /// Exact arithmetic with IEEE subnormals: every backend bit-identical.
    pub const IEEE: Numerics = Numerics {
        arithmetic: Arithmetic::Exact,
        subnormals: Subnormals::Keep,
    };
}

/// The solver's default: exact arithmetic, subnormals flushed.
impl Default for Numerics {
    fn default() -> Self {
        Numerics {
            arithmetic: Arithmetic::Exact,
            subnormals: Subnormals::Flush,
        }
    }
}

impl Arithmetic {
    /// `"exact"` or `"fast"`.
    pub fn name(self) -> &'static str {
        match self {
            Arithmetic::Exact => "exact",
            Arithmetic::Fast => "fast",
        }
    }
}

impl Subnormals {
    /// `"keep"` or `"flush"`.
    pub fn name(self) -> &'static str {
        match self {
            Subnormals::Keep => "keep",
            Subnormals::Flush => "flush",
        }
    }
}

thread_local! {
    static CURRENT: Cell<Numerics> = const { Cell::new(Numerics::IEEE) };
}

/// The numerics this thread launches host kernels with.
pub fn numerics() -> Numerics {
    CURRENT.with(Cell::get)
}

/// Runs `f` with this thread's launches using `n`; the previous setting is restored when `f`
/// returns or panics.
///
/// ```
/// use ppstencil::{numerics, with_numerics, Arithmetic, Numerics, Subnormals};
/// let fast = Numerics { arithmetic: Arithmetic::Fast, subnormals: Subnormals::Flush };
/// assert_eq!(with_numerics(fast, numerics), fast);
/// assert_eq!(numerics(), Numerics::IEEE);
/// ```
pub fn with_numerics<R>(n: Numerics, f: impl FnOnce() -> R) -> R {
    /// Puts the saved setting back on drop.
    struct Restore(Numerics);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(n)));
    f()
}

/// While alive, this thread's floating-point unit flushes subnormals (see
/// [`Subnormals::Flush`]); dropping it restores the mode it found.
pub(crate) struct FlushScope {
    saved: Option<usize>,
}

impl FlushScope {
    /// Sets the flush mode if `flush` (else does nothing).
    #[inline(always)]
    pub(crate) fn enter(flush: bool) -> FlushScope {
        FlushScope {
            saved: flush.then(fpu::flush),
        }
    }
}

impl Drop for FlushScope {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(saved) = self.saved {
            fpu::restore(saved);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod fpu {
    /// MXCSR's flush-to-zero (results) and denormals-are-zero (inputs) bits.
    const FTZ_DAZ: u32 = 0x8000 | 0x0040;

    /// Sets FTZ and DAZ; returns the previous MXCSR.
    #[inline(always)]
    pub(super) fn flush() -> usize {
        let mut csr: u32 = 0;
        // SAFETY: `stmxcsr` stores the 32-bit MXCSR into `csr`, which is valid for writes;
        // SSE is part of every x86_64 CPU.
        unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack)) };
        let flushed = csr | FTZ_DAZ;
        // SAFETY: `ldmxcsr` loads a valid MXCSR (the current one with two mode bits set).
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &flushed, options(nostack)) };
        csr as usize
    }

    /// Puts back an MXCSR saved by [`flush`].
    #[inline(always)]
    pub(super) fn restore(saved: usize) {
        let csr = saved as u32;
        // SAFETY: `csr` is the MXCSR this thread had before `flush`.
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack)) };
    }
}

#[cfg(target_arch = "aarch64")]
mod fpu {
    /// FPCR's flush-to-zero bit (inputs and results).
    const FZ: u64 = 1 << 24;

    /// Sets FZ; returns the previous FPCR.
    #[inline(always)]
    pub(super) fn flush() -> usize {
        let fpcr: u64;
        // SAFETY: reading FPCR has no side effect.
        unsafe { std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack)) };
        // SAFETY: writes the current FPCR with the FZ mode bit set.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) fpcr | FZ, options(nostack)) };
        fpcr as usize
    }

    /// Puts back an FPCR saved by [`flush`].
    #[inline(always)]
    pub(super) fn restore(saved: usize) {
        // SAFETY: `saved` is the FPCR this thread had before `flush`.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) saved as u64, options(nostack)) };
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod fpu {
    /// No flush mode on this architecture: subnormals are kept.
    pub(super) fn flush() -> usize {
        0
    }

    /// Nothing to restore.
    pub(super) fn restore(_: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest positive normal `f32` halved: a subnormal, unless flushed.
    fn halved_min_positive() -> f32 {
        std::hint::black_box(f32::MIN_POSITIVE) * std::hint::black_box(0.5f32)
    }

    #[test]
    fn flush_scope_flushes_subnormals_and_restores_the_mode() {
        assert_eq!(halved_min_positive(), f32::MIN_POSITIVE / 2.0);
        {
            let _keep = FlushScope::enter(false);
            assert!(halved_min_positive() > 0.0);
        }
        {
            let _flush = FlushScope::enter(true);
            if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
                assert_eq!(halved_min_positive(), 0.0);
                // Inputs too: a subnormal operand reads as zero.
                let tiny = std::hint::black_box(f32::from_bits(1));
                assert_eq!(tiny * std::hint::black_box(2.0f32), 0.0);
            }
        }
        assert_eq!(halved_min_positive(), f32::MIN_POSITIVE / 2.0);
    }

    #[test]
    fn with_numerics_is_scoped_and_survives_a_panic() {
        let fast = Numerics {
            arithmetic: Arithmetic::Fast,
            subnormals: Subnormals::Keep,
        };
        assert_eq!(numerics(), Numerics::IEEE);
        let caught = std::panic::catch_unwind(|| with_numerics(fast, || panic!("inside")));
        assert!(caught.is_err());
        assert_eq!(numerics(), Numerics::IEEE);
        assert_eq!(
            with_numerics(fast, || with_numerics(Numerics::default(), numerics)),
            Numerics::default()
        );
    }
}
