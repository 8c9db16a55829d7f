//! [`TimeLevels`]: the three time levels of a leapfrog time loop (`previous`, `current`,
//! `next`) and their rotation, so that a user's own loop advances one step with one call and
//! cannot rotate them in the wrong order.

use crate::{MemorySpace, Real, Result, ScalarField};

/// The fields of a second-order-in-time loop: the level before (`previous`), the level now
/// (`current`) and scratch for the level after (`next`). [`advance`](Self::advance) computes
/// `next` from the two others and rotates `previous ← current ← next` by swapping buffers
/// (no copy, no allocation), so a loop is one call per step. Points a step does not write
/// (outside its stencil's domain) keep what their buffer held: keep them equal in the
/// initial levels (zero, as [`zeros`](Self::zeros) makes them).
///
/// ```
/// use ppstencil::{stencil, MemSpaceHost, Serial, TimeLevels};
/// stencil! {
///     /// One leapfrog step of the 1D wave equation with Courant number squared `c2`.
///     fn wave_1d(pnew: out, p: in, pold: in, c2: real) {
///         pnew[0] = 2.0 * p[0] - pold[0] + c2 * (p[-1] - 2.0 * p[0] + p[1]);
///     }
/// }
/// let mut levels = TimeLevels::<MemSpaceHost, f64, 1>::zeros([21])?;
/// levels.current_mut().as_mut_slice()[10] = 1.0;
/// for _ in 0..5 {
///     levels.advance(|next, now, before| wave_1d(&Serial, next, now, before, 0.25))?;
/// }
/// assert!(levels.current().max_abs() > 0.0);
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub struct TimeLevels<M: MemorySpace, T: Real, const D: usize> {
    previous: ScalarField<M, T, D>,
    current: ScalarField<M, T, D>,
    next: ScalarField<M, T, D>,
}

impl<M: MemorySpace, T: Real, const D: usize> TimeLevels<M, T, D> {
    /// Three zero fields of `shape` (a wave at rest).
    pub fn zeros(shape: [usize; D]) -> Result<Self> {
        Ok(TimeLevels {
            previous: ScalarField::zeros(shape)?,
            current: ScalarField::zeros(shape)?,
            next: ScalarField::zeros(shape)?,
        })
    }

    /// The levels `previous` and `current` as given, and a zero scratch field for the next
    /// one (of `current`'s shape).
    pub fn from_fields(
        previous: ScalarField<M, T, D>,
        current: ScalarField<M, T, D>,
    ) -> Result<Self> {
        let next = ScalarField::zeros(current.shape())?;
        Ok(TimeLevels {
            previous,
            current,
            next,
        })
    }

    /// Runs one step: `step(next, current, previous)` writes the next level, then the levels
    /// rotate (`previous ← current ← next`, the old `previous` becoming the scratch). When
    /// `step` fails, nothing rotates and its error is returned.
    pub fn advance<R>(
        &mut self,
        step: impl FnOnce(
            &mut ScalarField<M, T, D>,
            &ScalarField<M, T, D>,
            &ScalarField<M, T, D>,
        ) -> Result<R>,
    ) -> Result<R> {
        let r = step(&mut self.next, &self.current, &self.previous)?;
        std::mem::swap(&mut self.previous, &mut self.current);
        std::mem::swap(&mut self.current, &mut self.next);
        Ok(r)
    }

    /// The level now (after the last [`advance`](Self::advance)).
    pub fn current(&self) -> &ScalarField<M, T, D> {
        &self.current
    }

    /// The level now, to set initial conditions or add a source between steps.
    pub fn current_mut(&mut self) -> &mut ScalarField<M, T, D> {
        &mut self.current
    }

    /// The level one step before [`current`](Self::current).
    pub fn previous(&self) -> &ScalarField<M, T, D> {
        &self.previous
    }

    /// The level one step before, to set initial conditions.
    pub fn previous_mut(&mut self) -> &mut ScalarField<M, T, D> {
        &mut self.previous
    }

    /// The two levels `(previous, current)`, giving back the buffers.
    pub fn into_fields(self) -> (ScalarField<M, T, D>, ScalarField<M, T, D>) {
        (self.previous, self.current)
    }
}
