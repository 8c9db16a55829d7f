//! The element type of fields: [`Real`], implemented for `f32` and `f64`.

use std::fmt::{Debug, Display};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A floating-point element type usable in fields and generated kernels.
///
/// Generated kernels use only these operations, so every backend computes the same thing for
/// `f32` and `f64`.
///
/// ```
/// use ppstencil::Real;
/// assert_eq!(<f32 as Real>::lit(0.5), 0.5f32);
/// assert_eq!(<f64 as Real>::NAME, "f64");
/// ```
pub trait Real:
    Copy
    + Send
    + Sync
    + Default
    + PartialOrd
    + Debug
    + Display
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// The Rust name, `"f32"` or `"f64"`.
    const NAME: &'static str;
    /// Zero.
    const ZERO: Self;
    /// Converts a constant (rounded to nearest).
    fn lit(x: f64) -> Self;
    /// Widens to `f64`.
    fn to_f64(self) -> f64;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Exponential.
    fn exp(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Smaller of two values.
    fn min(self, other: Self) -> Self;
    /// Larger of two values.
    fn max(self, other: Self) -> Self;
    /// Whether the value is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// `self * a + b` with one rounding (fused multiply-add). Generated kernels call it only
    /// in their fused arithmetic, which runs where the CPU has FMA instructions.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

macro_rules! impl_real {
    ($t:ty) => {
        impl Real for $t {
            const NAME: &'static str = stringify!($t);
            const ZERO: Self = 0.0;
            #[inline(always)]
            fn lit(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
        }
    };
}

impl_real!(f32);
impl_real!(f64);
