//! Finite-difference weights by Fornberg's algorithm, in exact rational arithmetic.
//!
//! The DSL's derivative operators (`d2x(p, 8)`, `d2z(p, 8)`, `laplacian(p, 8)`) expand at
//! parse time into weighted sums of field taps; the weights come from here. They are computed
//! exactly as fractions of `i128` (every operation is checked, so an overflow is an error and
//! never a wrong weight) and converted to the nearest `f64` only at the end, by one correctly
//! rounded division.
//!
//! ```
//! use kernels_gen::fd::{central_second_derivative, Ratio};
//! // The paper's 4th-order weights w0, w1, w2 (taps 0, ±1, ±2).
//! let w = central_second_derivative(4).unwrap();
//! assert_eq!(w, vec![Ratio::new(-5, 2), Ratio::new(4, 3), Ratio::new(-1, 12)]);
//! ```
//!
//! Reference: B. Fornberg, "Generation of finite difference formulas on arbitrarily spaced
//! grids", Mathematics of Computation 51 (1988), 699–706.

use std::fmt;

/// Smallest space order the DSL accepts.
pub const MIN_ORDER: u64 = 2;
/// Largest space order the DSL accepts.
pub const MAX_ORDER: u64 = 16;

/// Every space order the DSL accepts, ascending: the even orders from [`MIN_ORDER`] to
/// [`MAX_ORDER`] (the rule of [`check_order`], as a list for code generated per order).
pub const SPACE_ORDERS: [u64; ((MAX_ORDER - MIN_ORDER) / 2 + 1) as usize] = {
    let mut orders = [0; ((MAX_ORDER - MIN_ORDER) / 2 + 1) as usize];
    let mut k = 0;
    while k < orders.len() {
        orders[k] = MIN_ORDER + 2 * k as u64;
        k += 1;
    }
    orders
};

/// An exact fraction `num / den` with `den > 0`, always in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// An overflow of `i128` in exact arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("exact finite-difference arithmetic overflowed i128")
    }
}

impl Ratio {
    /// Zero.
    pub const ZERO: Ratio = Ratio { num: 0, den: 1 };
    /// One.
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// `num / den` in lowest terms.
    ///
    /// # Panics
    /// If `den == 0` or the sign cannot be normalised (`i128::MIN`): constants only.
    pub fn new(num: i128, den: i128) -> Ratio {
        Ratio::reduced(num, den).expect("a fraction needs a nonzero denominator")
    }

    fn reduced(num: i128, den: i128) -> Option<Ratio> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        let (mut n, mut d) = (num / g, den / g);
        if d < 0 {
            n = n.checked_neg()?;
            d = d.checked_neg()?;
        }
        Some(Ratio { num: n, den: d })
    }

    /// An integer as a fraction.
    pub fn int(n: i128) -> Ratio {
        Ratio { num: n, den: 1 }
    }

    /// Numerator (carries the sign).
    pub fn num(self) -> i128 {
        self.num
    }

    /// Denominator (always positive).
    pub fn den(self) -> i128 {
        self.den
    }

    /// `self + o`, or `Overflow`.
    pub fn checked_add(self, o: Ratio) -> Result<Ratio, Overflow> {
        let g = gcd(self.den, o.den);
        let (a, b) = (self.den / g, o.den / g);
        let num = self
            .num
            .checked_mul(b)
            .and_then(|x| o.num.checked_mul(a).and_then(|y| x.checked_add(y)));
        let den = self.den.checked_mul(b);
        match (num, den) {
            (Some(n), Some(d)) => Ratio::reduced(n, d).ok_or(Overflow),
            _ => Err(Overflow),
        }
    }

    /// `self - o`, or `Overflow`.
    pub fn checked_sub(self, o: Ratio) -> Result<Ratio, Overflow> {
        self.checked_add(o.checked_neg()?)
    }

    /// `-self`, or `Overflow`.
    pub fn checked_neg(self) -> Result<Ratio, Overflow> {
        Ok(Ratio {
            num: self.num.checked_neg().ok_or(Overflow)?,
            den: self.den,
        })
    }

    /// `self * o`, or `Overflow` (cross-reduced first to keep numbers small).
    pub fn checked_mul(self, o: Ratio) -> Result<Ratio, Overflow> {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        let num = (self.num / g1).checked_mul(o.num / g2);
        let den = (self.den / g2).checked_mul(o.den / g1);
        match (num, den) {
            (Some(n), Some(d)) => Ratio::reduced(n, d).ok_or(Overflow),
            _ => Err(Overflow),
        }
    }

    /// `self / o`, or `Overflow` (also for a division by zero).
    pub fn checked_div(self, o: Ratio) -> Result<Ratio, Overflow> {
        if o.num == 0 {
            return Err(Overflow);
        }
        self.checked_mul(Ratio::reduced(o.den, o.num).ok_or(Overflow)?)
    }

    /// The nearest `f64` when numerator and denominator are exactly representable (below
    /// 2^53: one correctly rounded division, so `-1/12` gives the same bits as `-1.0 / 12.0`).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

/// Fornberg's algorithm: the weights `c[j]` such that
/// `f^(m)(at) ≈ Σ_j c[j] f(nodes[j])` for derivative order `m = deriv`, exact for polynomials
/// of degree `< nodes.len()`. Nodes must be distinct (in units of the grid spacing); the
/// error says which node repeats, or that the exact arithmetic overflowed.
///
/// ```
/// use kernels_gen::fd::{fornberg, Ratio};
/// // First derivative, one-sided on nodes 0, 1, 2: (-3/2, 2, -1/2).
/// let c = fornberg(1, &[0, 1, 2], 0).unwrap();
/// assert_eq!(c, vec![Ratio::new(-3, 2), Ratio::int(2), Ratio::new(-1, 2)]);
/// ```
pub fn fornberg(deriv: usize, nodes: &[i64], at: i64) -> Result<Vec<Ratio>, String> {
    let n = nodes.len();
    if n == 0 || deriv >= n {
        return Ok(vec![Ratio::ZERO; n]);
    }
    for (i, a) in nodes.iter().enumerate() {
        if nodes[..i].contains(a) {
            return Err(format!("node {a} is given twice; nodes must be distinct"));
        }
    }
    fornberg_weights(deriv, nodes, at).map_err(|e| e.to_string())
}

fn fornberg_weights(deriv: usize, nodes: &[i64], at: i64) -> Result<Vec<Ratio>, Overflow> {
    let n = nodes.len();
    let x = |i: usize| Ratio::int(i128::from(nodes[i]) - i128::from(at));
    // c[j][k]: weight of node j for derivative k, using the nodes seen so far.
    let mut c = vec![vec![Ratio::ZERO; deriv + 1]; n];
    c[0][0] = Ratio::ONE;
    let mut c1 = Ratio::ONE;
    let mut c4 = x(0);
    for i in 1..n {
        let mn = i.min(deriv);
        let mut c2 = Ratio::ONE;
        let c5 = c4;
        c4 = x(i);
        for j in 0..i {
            let c3 = x(i).checked_sub(x(j))?;
            c2 = c2.checked_mul(c3)?;
            if j == i - 1 {
                for k in (1..=mn).rev() {
                    let kk = Ratio::int(k as i128);
                    let t = kk
                        .checked_mul(c[i - 1][k - 1])?
                        .checked_sub(c5.checked_mul(c[i - 1][k])?)?;
                    c[i][k] = c1.checked_mul(t)?.checked_div(c2)?;
                }
                c[i][0] = c1
                    .checked_mul(c5)?
                    .checked_mul(c[i - 1][0])?
                    .checked_neg()?
                    .checked_div(c2)?;
            }
            for k in (1..=mn).rev() {
                let kk = Ratio::int(k as i128);
                c[j][k] = c4
                    .checked_mul(c[j][k])?
                    .checked_sub(kk.checked_mul(c[j][k - 1])?)?
                    .checked_div(c3)?;
            }
            c[j][0] = c4.checked_mul(c[j][0])?.checked_div(c3)?;
        }
        c1 = c2;
    }
    Ok(c.into_iter().map(|row| row[deriv]).collect())
}

/// Checks a space order: an even integer from [`MIN_ORDER`] to [`MAX_ORDER`]. The error
/// message says what is wrong and what to write.
pub fn check_order(order: u64) -> Result<usize, String> {
    if !(MIN_ORDER..=MAX_ORDER).contains(&order) || !order.is_multiple_of(2) {
        return Err(format!(
            "space order {order} is not supported: use an even order from {MIN_ORDER} to \
             {MAX_ORDER} (2, 4, 6, ..., 16); the stencil radius is order / 2"
        ));
    }
    Ok(order as usize)
}

/// The central second-derivative weights of even `order` (radius `m = order / 2`), as
/// `[w0, w1, ..., wm]`: `f''(0) h² ≈ w0 f(0) + Σ_k wk (f(k) + f(-k))`.
pub fn central_second_derivative(order: u64) -> Result<Vec<Ratio>, String> {
    let order = check_order(order)?;
    let m = (order / 2) as i64;
    // Nodes 0, 1, -1, 2, -2, ...: the weight of +k and -k are equal by symmetry.
    let nodes: Vec<i64> = std::iter::once(0)
        .chain((1..=m).flat_map(|k| [k, -k]))
        .collect();
    let c = fornberg(2, &nodes, 0).map_err(|e| format!("space order {order}: {e}"))?;
    let mut w = vec![c[0]];
    for k in 1..=m as usize {
        let (plus, minus) = (c[2 * k - 1], c[2 * k]);
        if plus != minus {
            return Err(format!(
                "order {order}: weights of ±{k} differ ({plus} vs {minus})"
            ));
        }
        w.push(plus);
    }
    Ok(w)
}

/// [`central_second_derivative`] rounded to `f64`.
pub fn central_second_derivative_f64(order: u64) -> Result<Vec<f64>, String> {
    Ok(central_second_derivative(order)?
        .into_iter()
        .map(Ratio::to_f64)
        .collect())
}

/// The central first-derivative weights of even `order` (radius `m = order / 2`) for the
/// offsets `-m..=m`, as `[w(-m), ..., w(0), ..., w(m)]`: `f'(0) h ≈ Σ_k w(k) f(k)`. They are
/// antisymmetric, `w(-k) = -w(k)`, and `w(0) = 0`.
///
/// ```
/// use kernels_gen::fd::{central_first_derivative, Ratio};
/// let w = central_first_derivative(2).unwrap();
/// assert_eq!(w, vec![Ratio::new(-1, 2), Ratio::ZERO, Ratio::new(1, 2)]);
/// ```
pub fn central_first_derivative(order: u64) -> Result<Vec<Ratio>, String> {
    let order = check_order(order)?;
    let m = (order / 2) as i64;
    let nodes: Vec<i64> = (-m..=m).collect();
    fornberg(1, &nodes, 0).map_err(|e| format!("space order {order}: {e}"))
}

/// The weights of the centred mixed second derivative `∂²f/∂a∂b` of even `order` as a
/// `(2m+1) × (2m+1)` table, `w[j][k]` for offsets `(j - m, k - m)` along `(a, b)`: the exact
/// product of the [`central_first_derivative`] weights along both axes.
pub fn central_mixed_derivative(order: u64) -> Result<Vec<Vec<Ratio>>, String> {
    let w = central_first_derivative(order)?;
    w.iter()
        .map(|&a| {
            w.iter()
                .map(|&b| {
                    a.checked_mul(b)
                        .map_err(|e| format!("space order {order}: {e}"))
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factorial(n: i128) -> i128 {
        (1..=n).product()
    }

    /// The closed form of the central second-derivative weights, an independent reference:
    /// `w_k = 2 (-1)^(k+1) (m!)² / (k² (m-k)! (m+k)!)`, `w_0 = -2 Σ_k w_k`.
    fn closed_form(order: u64) -> Vec<Ratio> {
        let m = (order / 2) as i128;
        let mut w = vec![Ratio::ZERO];
        for k in 1..=m {
            let sign = if k % 2 == 1 { 1 } else { -1 };
            // (m!)² / ((m-k)! (m+k)!) as a ratio, built stepwise to stay small.
            let mut r = Ratio::int(2 * sign);
            r = r.checked_div(Ratio::int(k * k)).unwrap();
            r = r
                .checked_mul(Ratio::new(
                    factorial(m),
                    factorial(m - k) * (m + 1..=m + k).product::<i128>(),
                ))
                .unwrap();
            w.push(r);
        }
        let mut sum = Ratio::ZERO;
        for x in &w[1..] {
            sum = sum.checked_add(*x).unwrap();
        }
        w[0] = sum.checked_mul(Ratio::int(-2)).unwrap();
        w
    }

    #[test]
    fn paper_fourth_order_weights() {
        let w = central_second_derivative_f64(4).unwrap();
        assert_eq!(w, vec![-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0]);
    }

    #[test]
    fn second_order_is_one_minus_two_one() {
        let w = central_second_derivative(2).unwrap();
        assert_eq!(w, vec![Ratio::int(-2), Ratio::int(1)]);
    }

    #[test]
    fn every_order_matches_the_closed_form_without_overflow() {
        for order in SPACE_ORDERS {
            let w = central_second_derivative(order).expect("no overflow up to order 16");
            assert_eq!(w, closed_form(order), "order {order}");
            // Consistency: Σ w = 0 (constants) and Σ k² w = 1 (x²/2 has f'' = 1).
            let (mut s0, mut s2) = (w[0], Ratio::ZERO);
            for (k, x) in w.iter().enumerate().skip(1) {
                s0 = s0
                    .checked_add(x.checked_mul(Ratio::int(2)).unwrap())
                    .unwrap();
                s2 = s2
                    .checked_add(x.checked_mul(Ratio::int(2 * (k * k) as i128)).unwrap())
                    .unwrap();
            }
            assert_eq!(s0, Ratio::ZERO);
            assert_eq!(s2, Ratio::int(2));
            // Small enough that `to_f64` is one correctly rounded division.
            for x in &w {
                assert!(x.num().abs() < 1 << 53 && x.den() < 1 << 53, "{x}");
            }
        }
        // Known 8th-order weights (e.g. Fornberg 1988, Table 1).
        let w8 = central_second_derivative(8).unwrap();
        assert_eq!(
            w8,
            vec![
                Ratio::new(-205, 72),
                Ratio::new(8, 5),
                Ratio::new(-1, 5),
                Ratio::new(8, 315),
                Ratio::new(-1, 560)
            ]
        );
    }

    #[test]
    fn fornberg_first_derivative_and_exactness() {
        let c = fornberg(1, &[-1, 0, 1], 0).unwrap();
        assert_eq!(c, vec![Ratio::new(-1, 2), Ratio::ZERO, Ratio::new(1, 2)]);
        // Third derivative on 5 nodes, exact for x³ (f''' = 6) evaluated off-centre.
        let nodes = [-2, -1, 0, 1, 2];
        let c = fornberg(3, &nodes, 1).unwrap();
        let mut sum = Ratio::ZERO;
        for (w, &x) in c.iter().zip(&nodes) {
            sum = sum
                .checked_add(w.checked_mul(Ratio::int(i128::from(x).pow(3))).unwrap())
                .unwrap();
        }
        assert_eq!(sum, Ratio::int(6));
    }

    #[test]
    fn space_orders_are_exactly_the_orders_check_order_accepts() {
        let accepted: Vec<u64> = (0..=100).filter(|&o| check_order(o).is_ok()).collect();
        assert_eq!(accepted, SPACE_ORDERS);
        assert_eq!(SPACE_ORDERS, [2, 4, 6, 8, 10, 12, 14, 16]);
    }

    #[test]
    fn bad_orders_are_rejected() {
        for bad in [0, 1, 3, 5, 15, 17, 18, 100] {
            let e = central_second_derivative(bad).unwrap_err();
            assert!(e.contains(&format!("space order {bad}")), "{e}");
            assert!(e.contains("even order from 2 to 16"), "{e}");
        }
    }

    #[test]
    fn ratio_arithmetic() {
        let a = Ratio::new(6, -4);
        assert_eq!((a.num(), a.den()), (-3, 2));
        assert_eq!(a.checked_add(Ratio::new(1, 2)).unwrap(), Ratio::int(-1));
        assert_eq!(a.to_string(), "-3/2");
        assert_eq!(Ratio::int(i128::MAX).checked_add(Ratio::ONE), Err(Overflow));
        assert_eq!(Ratio::ONE.checked_div(Ratio::ZERO), Err(Overflow));
    }
}
