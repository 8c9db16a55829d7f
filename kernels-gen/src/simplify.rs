//! The arithmetic pass between the parser and every emitter: IR in, IR out.
//!
//! Every sum in a stencil body (a chain of `+`, `-` and unary `-`, through parentheses) is
//! read as a list of terms `c · x` (a constant coefficient times the rest, or a lone
//! constant), and rewritten when that saves work:
//! - **like terms collected**: `c0 p + … + c0 p` → `(2 c0) p` (the coefficients added in `f64`
//!   and rounded once, as every folded constant is), terms that cancel dropped;
//! - **equal coefficients factored**: `w p[-k] + … + w p[k]` → `w · (p[-k] + p[k])`, and
//!   `w p[k] - w p[-k]` → `w · (p[k] - p[-k])`, grouping the terms whose coefficients agree in
//!   magnitude (a coefficient of 1 needs no factoring);
//! - **constants folded** into one.
//!
//! The pass is generic over equations (it sees terms, not physics). A sum in which nothing
//! merges or factors is left exactly as written, so its rounding is the author's. Where a sum
//! is rewritten its terms keep the order of their first appearance, and every backend emits
//! the rewritten IR, so the backends still agree bit for bit with each other. Sums and
//! products are walked with loops along their chains; recursion follows only the source
//! nesting that the parser bounds.

use crate::emit::infix::{self, CallStyle, Syntax};
use crate::ir::{BinOp, Expr, Func, Stencil, Stmt};
use std::collections::HashMap;

/// Simplifies every statement of `s` in place (see the module documentation).
pub fn simplify(s: &mut Stencil) {
    for stmt in &mut s.body {
        match stmt {
            Stmt::Let { value, .. } | Stmt::Assign { value, .. } => simplify_expr(value),
        }
    }
}

/// Simplifies one expression in place.
pub fn simplify_expr(e: &mut Expr) {
    if is_sum(e) {
        simplify_sum(e);
    } else {
        simplify_children(e);
    }
}

/// Folds `e` when its operands became constants (as the parser folds constant operations):
/// a binary operation of two constants, or a call with constant arguments.
fn fold(e: &mut Expr) {
    let value = match e {
        Expr::Binary(op, a, b) => match (&**a, &**b) {
            (Expr::Lit(x), Expr::Lit(y)) => op.eval(*x, *y),
            _ => return,
        },
        Expr::Call(f, args) if args.iter().all(|a| matches!(a, Expr::Lit(_))) => {
            let values: Vec<f64> = args
                .iter()
                .map(|a| match a {
                    Expr::Lit(v) => *v,
                    _ => unreachable!("all constants"),
                })
                .collect();
            f.eval(&values)
        }
        _ => return,
    };
    *e = Expr::Lit(value);
}

fn is_sum(e: &Expr) -> bool {
    matches!(e, Expr::Binary(BinOp::Add | BinOp::Sub, ..) | Expr::Neg(_))
}

/// The coefficient and rest of a term: `c * x` and `x * c` give `(c, x)`, anything else
/// `(1, e)`.
fn split_term(e: &Expr) -> (f64, &Expr) {
    match e {
        Expr::Binary(BinOp::Mul, a, b) => match (&**a, &**b) {
            (Expr::Lit(c), x) | (x, Expr::Lit(c)) => (*c, x),
            _ => (1.0, e),
        },
        _ => (1.0, e),
    }
}

/// The mutable counterpart of [`split_term`]'s rest.
fn term_rest_mut(e: &mut Expr) -> &mut Expr {
    let side = match &*e {
        Expr::Binary(BinOp::Mul, a, _) if matches!(**a, Expr::Lit(_)) => Some(true),
        Expr::Binary(BinOp::Mul, _, b) if matches!(**b, Expr::Lit(_)) => Some(false),
        _ => None,
    };
    match (side, e) {
        (Some(right), Expr::Binary(_, a, b)) => {
            if right {
                b
            } else {
                a
            }
        }
        (_, e) => e,
    }
}

/// The terms of the sum `e` with their signs, left to right, as references.
fn terms(e: &Expr) -> Vec<(f64, &Expr)> {
    let mut out = Vec::new();
    let mut stack = vec![(1.0, e)];
    while let Some((sign, e)) = stack.pop() {
        match e {
            Expr::Binary(BinOp::Add, a, b) => {
                stack.push((sign, b));
                stack.push((sign, a));
            }
            Expr::Binary(BinOp::Sub, a, b) => {
                stack.push((-sign, b));
                stack.push((sign, a));
            }
            Expr::Neg(a) => stack.push((-sign, a)),
            term => out.push((sign, term)),
        }
    }
    out
}

/// The terms of the sum `e`, taken out of it (left to right, as [`terms`] lists them; their
/// signs are [`terms`]' business).
fn take_terms(e: Expr) -> Vec<Expr> {
    let take = |b: &mut Box<Expr>| std::mem::replace(&mut **b, Expr::Lit(0.0));
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(mut e) = stack.pop() {
        match &mut e {
            Expr::Binary(BinOp::Add | BinOp::Sub, a, b) => {
                stack.push(take(b));
                stack.push(take(a));
            }
            Expr::Neg(a) => stack.push(take(a)),
            _ => out.push(e),
        }
    }
    out
}

/// A term after collecting like terms: its summed coefficient, where its rest is, and
/// whether it is the constant term.
struct Collected {
    coef: f64,
    /// Index of the term, in the order [`terms`] lists them, whose rest this is.
    first: usize,
    constant: bool,
}

/// How a sum is rewritten: the collected terms in order of first appearance, and the terms
/// (by index into `collected`) in each group of equal coefficient magnitude.
struct Plan {
    collected: Vec<Collected>,
    groups: Vec<Vec<usize>>,
}

/// Decides whether the sum with these terms is worth rewriting (or must be: `folded`), and
/// how.
fn plan(terms: &[(f64, &Expr)], folded: bool) -> Option<Plan> {
    let mut collected: Vec<Collected> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut merged = false;
    for (k, &(sign, e)) in terms.iter().enumerate() {
        let (c, rest, constant) = match e {
            Expr::Lit(v) => (sign * v, e, true),
            _ => {
                let (c, rest) = split_term(e);
                (sign * c, rest, false)
            }
        };
        let key = if constant { String::new() } else { key(rest) };
        match by_key.get(&key) {
            Some(&i) => {
                collected[i].coef += c;
                merged = true;
            }
            None => {
                by_key.insert(key, collected.len());
                collected.push(Collected {
                    coef: c,
                    first: k,
                    constant,
                });
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_coef: HashMap<u64, usize> = HashMap::new();
    for (i, t) in collected.iter().enumerate() {
        if t.coef == 0.0 {
            continue;
        }
        let magnitude = t.coef.abs();
        if t.constant || magnitude == 1.0 {
            groups.push(vec![i]);
            continue;
        }
        match by_coef.get(&magnitude.to_bits()) {
            Some(&g) => groups[g].push(i),
            None => {
                by_coef.insert(magnitude.to_bits(), groups.len());
                groups.push(vec![i]);
            }
        }
    }
    let factored = groups.iter().any(|g| g.len() > 1);
    // Two constants are like terms: `merged` covers them.
    (folded || merged || factored).then_some(Plan { collected, groups })
}

fn simplify_sum(e: &mut Expr) {
    // Terms first, bottom up: their rests may hold sums of their own.
    let mut folded = false;
    let mut stack = vec![&mut *e];
    while let Some(node) = stack.pop() {
        match node {
            Expr::Binary(BinOp::Add | BinOp::Sub, a, b) => {
                stack.push(b);
                stack.push(a);
            }
            Expr::Neg(a) => stack.push(a),
            term => {
                let was_constant = matches!(term, Expr::Lit(_));
                simplify_expr(term_rest_mut(term));
                fold(term);
                folded |= !was_constant && matches!(term, Expr::Lit(_));
            }
        }
    }
    // A term that became a constant is folded into the sum's constant, as the parser folds.
    let Some(plan) = plan(&terms(e), folded) else {
        return;
    };
    let mut rests: Vec<Option<Expr>> = take_terms(std::mem::replace(e, Expr::Lit(0.0)))
        .into_iter()
        .map(Some)
        .collect();
    let mut take_rest = |k: usize| -> Expr {
        let mut t = rests[k].take().expect("each term is used once");
        std::mem::replace(term_rest_mut(&mut t), Expr::Lit(0.0))
    };
    let mut sum: Option<Expr> = None;
    for group in &plan.groups {
        let lead = &plan.collected[group[0]];
        let (sign, item) = if lead.constant {
            (lead.coef.signum(), Expr::Lit(lead.coef.abs()))
        } else if group.len() == 1 && lead.coef.abs() == 1.0 {
            (lead.coef.signum(), take_rest(lead.first))
        } else {
            let mut inner = take_rest(lead.first);
            for &i in &group[1..] {
                let t = &plan.collected[i];
                let op = if t.coef.signum() == lead.coef.signum() {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                inner = Expr::Binary(op, Box::new(inner), Box::new(take_rest(t.first)));
            }
            let magnitude = lead.coef.abs();
            (
                lead.coef.signum(),
                Expr::Binary(BinOp::Mul, Box::new(Expr::Lit(magnitude)), Box::new(inner)),
            )
        };
        sum = Some(match sum {
            None if sign < 0.0 => negate(item),
            None => item,
            Some(acc) => {
                let op = if sign < 0.0 { BinOp::Sub } else { BinOp::Add };
                Expr::Binary(op, Box::new(acc), Box::new(item))
            }
        });
    }
    *e = sum.unwrap_or(Expr::Lit(0.0));
}

/// `-x`, with a constant factor negated instead where there is one: `-(0.2 * s)` is
/// written `-0.2 * s`.
fn negate(mut x: Expr) -> Expr {
    match &mut x {
        Expr::Lit(v) => Expr::Lit(-*v),
        Expr::Binary(BinOp::Mul, a, _) if matches!(**a, Expr::Lit(_)) => {
            if let Expr::Lit(v) = &mut **a {
                *v = -*v;
            }
            x
        }
        _ => Expr::Neg(Box::new(x)),
    }
}

/// Simplifies the operands of a product or quotient chain (walked along its left spine),
/// or the arguments of a call.
fn simplify_children(e: &mut Expr) {
    let mut depth = 0;
    let mut cur = &mut *e;
    loop {
        match cur {
            Expr::Binary(BinOp::Mul | BinOp::Div, a, b) => {
                simplify_expr(b);
                cur = a;
                depth += 1;
            }
            Expr::Call(_, args) => {
                args.iter_mut().for_each(simplify_expr);
                fold(cur);
                break;
            }
            other => {
                if is_sum(other) {
                    simplify_sum(other);
                }
                break;
            }
        }
    }
    // Constants that met along the spine fold from the bottom up, as far as they reach (a
    // spine of constants is rare: the parser folds those it sees).
    while depth > 0 {
        let mut node = &mut *e;
        for _ in 1..depth {
            match node {
                Expr::Binary(_, a, _) => node = a,
                _ => unreachable!("the spine walked above"),
            }
        }
        fold(node);
        if !matches!(node, Expr::Lit(_)) {
            break;
        }
        depth -= 1;
    }
}

/// A text that two rests share exactly when they are the same expression.
fn key(e: &Expr) -> String {
    infix::to_string(&Key, e)
}

/// The spelling of [`key`]: parameters and locals by index, constants by their bits.
struct Key;

impl Syntax for Key {
    fn lit(&self, out: &mut String, v: f64) {
        out.push_str(&format!("#{:x}", v.to_bits()));
    }
    fn scalar(&self, out: &mut String, param: usize) {
        out.push_str(&format!("$s{param}"));
    }
    fn local(&self, out: &mut String, local: usize) {
        out.push_str(&format!("$l{local}"));
    }
    fn read(&self, out: &mut String, field: usize, offset: &[i32]) {
        out.push_str(&format!("$f{field}{offset:?}"));
    }
    fn func(&self, f: Func) -> String {
        f.name().to_string()
    }
    fn call_style(&self) -> CallStyle {
        CallStyle::Function
    }
}

#[cfg(test)]
mod tests {

    use crate::emit::dsl;

    fn simplified(body: &str) -> String {
        let mut params = vec!["o: out", "p: in"];
        for (name, decl) in [("q[", "q: in"), ("a", "a: real")] {
            if body.contains(name) {
                params.push(decl);
            }
        }
        let params = params.join(", ");
        let src = format!("fn f({params}) {{ o[0, 0] = {body}; }}");
        let s = &crate::parse::parse_str(&src).unwrap()[0];
        let dsl = dsl::print(s);
        let start = dsl.find("o[0, 0] = ").unwrap() + "o[0, 0] = ".len();
        dsl[start..dsl.rfind(';').unwrap()].to_string()
    }

    #[test]
    fn symmetric_pairs_are_factored_and_the_centre_collected() {
        assert_eq!(
            simplified(
                "0.5 * p[0, -1] + 0.125 * p[0, 0] + 0.5 * p[0, 1] + 0.125 * p[0, 0] \
                 + 0.5 * p[-1, 0] + 0.5 * p[1, 0]"
            ),
            "0.5 * (p[0, -1] + p[0, 1] + p[-1, 0] + p[1, 0]) + 0.25 * p[0, 0]"
        );
    }

    #[test]
    fn antisymmetric_pairs_are_factored_with_their_signs() {
        assert_eq!(
            simplified("-0.5 * p[0, -1] + 0.5 * p[0, 1]"),
            "-0.5 * (p[0, -1] - p[0, 1])"
        );
        assert_eq!(
            simplified("a - 2.0 * p[0, 1] - 2.0 * q[0, 0]"),
            "a - 2.0 * (p[0, 1] + q[0, 0])"
        );
    }

    #[test]
    fn sums_without_anything_to_merge_keep_their_grouping() {
        for body in [
            "a + (p[0, 0] + q[0, 0])",
            "2.0 * p[0, 0] - q[0, 0] + a * (p[0, 1] + p[0, -1])",
            "p[0, 0] - (q[0, 0] - p[0, 1])",
            "-p[0, 0] + q[0, 0] * a",
        ] {
            assert_eq!(simplified(body), body);
        }
    }

    #[test]
    fn cancelling_terms_and_constants_fold() {
        assert_eq!(simplified("p[0, 0] + 1.0 - p[0, 0] + 2.0"), "3.0");
        assert_eq!(simplified("p[0, 0] - p[0, 0]"), "0.0");
        assert_eq!(
            simplified("a * (q[0, 0] + q[0, 0]) + p[0, 1]"),
            "a * (2.0 * q[0, 0]) + p[0, 1]"
        );
    }

    #[test]
    fn sums_inside_products_and_calls_are_simplified() {
        assert_eq!(
            simplified("sqrt(3.0 * p[0, 1] + 3.0 * p[0, -1]) / (a + 1.0 + 1.0)"),
            "sqrt(3.0 * (p[0, 1] + p[0, -1])) / (a + 2.0)"
        );
    }

    /// The 3D order-8 step `2 p - pold + kv2 ∇²p`: the 25 taps of the Laplacian (the centre
    /// three times as written) become four groups of six symmetric taps (5 additions and one
    /// multiplication each) and the centre once (one multiplication), joined by 4 additions:
    /// 29 operations; with the step's 4 (`2 *`, `-`, `+`, `kv2 *`), 33 instead of 57.
    #[test]
    fn the_3d_order_8_step_costs_33_operations() {
        let src = "fn s(o: out, p: in, q: in, k: in) { \
                   o[0, 0, 0] = 2.0 * p[0, 0, 0] - q[0, 0, 0] + k[0, 0, 0] * laplacian(p, 8); }";
        let s = &crate::parse::parse_str(src).unwrap()[0];
        assert_eq!(s.flops_per_point(), 33);
        let dsl = dsl::print(s);
        assert!(
            dsl.contains("-0.0017857142857142857 * (p[0, 0, -4] + p[0, 0, 4] + p[0, -4, 0] + p[0, 4, 0] + p[-4, 0, 0] + p[4, 0, 0])"),
            "{dsl}"
        );
        // The centre once, its weight the sum of the three axes' (-205/72 each, in f64).
        let centre = 3.0 * (-205.0f64 / 72.0);
        assert!((centre + 8.541666666666668).abs() < 1e-15);
        assert!(dsl.contains("- 8.541666666666668 * p[0, 0, 0]"), "{dsl}");
    }

    /// A sum of 20,000 terms (a left-nested chain that deep) collects to its 5 distinct
    /// taps in linear time, on a thread with a small stack.
    #[test]
    fn a_long_chain_collects_without_deep_recursion() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let terms: Vec<String> = (0..20_000)
                    .map(|k| format!("{}.0 * p[0, {}]", k % 7 + 1, k % 5))
                    .collect();
                let body = terms.join(" + ");
                let s = simplified(&body);
                // Each tap's coefficient is the sum of its terms' (k % 7 + 1).
                let mut coef = [0u64; 5];
                for k in 0..20_000u64 {
                    coef[(k % 5) as usize] += k % 7 + 1;
                }
                let expected: Vec<String> = (0..5)
                    .map(|j| format!("{}.0 * p[0, {j}]", coef[j]))
                    .collect();
                assert_eq!(s, expected.join(" + "));
            })
            .expect("spawn")
            .join()
            .expect("no panic and no stack overflow");
    }
}
