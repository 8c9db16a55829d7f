//! The one infix expression printer shared by every text backend (Rust, C, DSL).
//!
//! The backends differ only in how they spell the leaves and calls: a constant's literal
//! (`T::lit(0.5)`, `0.5f`, `0.5`), a name, a field read (`p__0_m1[i]`, `p_[i - 1]`, `p[0, -1]`)
//! and a function call (`x.sqrt()` or `sqrtf(x)`). Those are the methods of [`Syntax`].
//! Operators, parentheses and the evaluation order come from the IR alone, through the single
//! precedence rule [`crate::ir::Expr::precedence`] / [`crate::ir::BinOp::needs_parens`], so every
//! backend rounds exactly as the IR says.
//!
//! The printer writes into one buffer and walks left-nested chains (`a + b + c + ...`, the
//! shape of every sum the parser builds) with a loop, not by recursion: printing takes time
//! linear in the expression's size and stack depth bounded by the source nesting, which the
//! parser limits ([`crate::parse::MAX_NESTING`]).
//!
//! What does not live here: statements, declarations and names of generated locals (each
//! emitter's own business).

use crate::ir::{BinOp, Expr, Func};

/// How a function call is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallStyle {
    /// `name(a, b)` (C, DSL).
    Function,
    /// `a.name(b)` (Rust: methods of `Real`). The receiver is parenthesised unless atomic,
    /// since a method call binds tighter than a unary minus.
    Method,
}

/// The spelling of leaves and calls in one target language.
pub trait Syntax {
    /// Writes constant `v` (finite; the parser refuses others).
    fn lit(&self, out: &mut String, v: f64);
    /// Writes `real` parameter number `param`.
    fn scalar(&self, out: &mut String, param: usize);
    /// Writes `let` local number `local`.
    fn local(&self, out: &mut String, local: usize);
    /// Writes a read of field parameter `field` at `offset` from the current point.
    fn read(&self, out: &mut String, field: usize, offset: &[i32]);
    /// The function's name in this language.
    fn func(&self, f: Func) -> String;
    /// Function or method calls.
    fn call_style(&self) -> CallStyle;
    /// Whether sums are printed with fused multiply-adds (`a.mul_add(b, c)` for `a * b + c`,
    /// see [`print()`]); only the Rust backend's fused arithmetic does.
    fn fused(&self) -> bool {
        false
    }
}

/// Longest sum printed with fused multiply-adds: each product term nests one call, and a
/// longer sum is printed as written.
pub const MAX_FUSED_TERMS: usize = 64;

/// Prints `e` into `out`. Under a [`Syntax::fused`] spelling, a sum of at most
/// [`MAX_FUSED_TERMS`] terms with products among them is printed with one fused
/// multiply-add per product.
pub fn print(syntax: &impl Syntax, e: &Expr, out: &mut String) {
    if syntax.fused() && print_fused_sum(syntax, e, out) {
        return;
    }
    match e {
        Expr::Lit(v) => syntax.lit(out, *v),
        Expr::Scalar(p) => syntax.scalar(out, *p),
        Expr::Local(l) => syntax.local(out, *l),
        Expr::Read { field, offset } => syntax.read(out, *field, offset),
        // A nested negation or negative constant is parenthesised: `--x` is a decrement in C.
        Expr::Neg(a) => {
            out.push('-');
            wrapped(syntax, a, !a.is_atom(), out);
        }
        Expr::Binary(..) => {
            // The left spine, top down: `((a + b) - c) + d` gives [(+, d), (-, c), (+, b)], a.
            let mut spine = Vec::new();
            let mut cur = e;
            let (first, first_wrap) = loop {
                let Expr::Binary(op, a, b) = cur else {
                    unreachable!("the spine walks binary nodes only")
                };
                spine.push((*op, &**b));
                let wrap = op.needs_parens(a, false);
                if wrap || !matches!(**a, Expr::Binary(..)) {
                    break (&**a, wrap);
                }
                cur = a;
            };
            wrapped(syntax, first, first_wrap, out);
            for (op, b) in spine.into_iter().rev() {
                out.push(' ');
                out.push_str(op.symbol());
                out.push(' ');
                // Floating-point `+` and `*` are not associative: a right operand of equal
                // precedence keeps its parentheses, so the code rounds as the IR says.
                wrapped(syntax, b, op.needs_parens(b, true), out);
            }
        }
        Expr::Call(f, args) => match syntax.call_style() {
            CallStyle::Function => {
                out.push_str(&syntax.func(*f));
                out.push('(');
                for (k, a) in args.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    print(syntax, a, out);
                }
                out.push(')');
            }
            CallStyle::Method => {
                wrapped(syntax, &args[0], !args[0].is_atom(), out);
                out.push('.');
                out.push_str(&syntax.func(*f));
                out.push('(');
                for (k, a) in args[1..].iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    print(syntax, a, out);
                }
                out.push(')');
            }
        },
    }
}

/// Prints the sum `e` (a left-nested chain of `+` and `-`) folding each product term into
/// the running sum with a fused multiply-add: `t0 + a * b - c * d` is
/// `(-c).mul_add(d, a.mul_add(b, t0))`, which rounds once per product where the written
/// sum rounds twice; products are never reordered. Returns `false`, printing nothing, when
/// `e` is not such a sum (no product term, or more than [`MAX_FUSED_TERMS`] terms).
fn print_fused_sum(syntax: &impl Syntax, e: &Expr, out: &mut String) -> bool {
    let mut terms: Vec<(BinOp, &Expr)> = Vec::new();
    let mut cur = e;
    while let Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) = cur {
        terms.push((*op, b));
        cur = a;
        if terms.len() >= MAX_FUSED_TERMS {
            return false;
        }
    }
    let product = |t: &Expr| matches!(t, Expr::Binary(BinOp::Mul, ..));
    if terms.is_empty() || !(product(cur) || terms.iter().any(|(_, t)| product(t))) {
        return false;
    }
    terms.reverse();
    let text = |e: &Expr| to_string(syntax, e);
    // `a` as the receiver of `.mul_add`, negated when the product is subtracted.
    let receiver = |a: &Expr, negate: bool| -> String {
        match (a, negate) {
            (Expr::Lit(v), true) => to_string(syntax, &Expr::Lit(-v)),
            (_, true) if a.is_atom() => format!("(-{})", text(a)),
            (_, true) => format!("(-({}))", text(a)),
            (_, false) if a.is_atom() => text(a),
            (_, false) => format!("({})", text(a)),
        }
    };
    let fma = |a: &Expr, b: &Expr, negate: bool, acc: &str| {
        format!("{}.mul_add({}, {acc})", receiver(a, negate), text(b))
    };
    let mut rest = terms.iter();
    let mut acc = match (cur, terms[0]) {
        // `a * b ± t1`, `t1` no product: `a.mul_add(b, ±t1)`.
        (Expr::Binary(BinOp::Mul, a, b), (op, t1)) if !product(t1) => {
            rest.next();
            let t1 = match op {
                BinOp::Sub if t1.is_atom() => format!("-{}", text(t1)),
                BinOp::Sub => format!("-({})", text(t1)),
                _ => text(t1),
            };
            fma(a, b, false, &t1)
        }
        _ => text(cur),
    };
    for &(op, t) in rest {
        acc = match t {
            Expr::Binary(BinOp::Mul, a, b) => fma(a, b, op == BinOp::Sub, &acc),
            _ => {
                let wrap = op.needs_parens(t, true);
                let t = if wrap {
                    format!("({})", text(t))
                } else {
                    text(t)
                };
                format!("{acc} {} {t}", op.symbol())
            }
        };
    }
    out.push_str(&acc);
    true
}

/// [`print()`] into a new string.
pub fn to_string(syntax: &impl Syntax, e: &Expr) -> String {
    let mut out = String::new();
    print(syntax, e, &mut out);
    out
}

fn wrapped(syntax: &impl Syntax, e: &Expr, wrap: bool, out: &mut String) {
    if wrap {
        out.push('(');
        print(syntax, e, out);
        out.push(')');
    } else {
        print(syntax, e, out);
    }
}

/// Writes `v` with Rust's shortest round-trip formatting, with `.0` added to integers, using
/// `{:?}` (`1e-7`) when `debug`, else `{}` (`0.0000001`).
pub fn decimal(v: f64, debug: bool) -> String {
    let text = if debug {
        format!("{v:?}")
    } else {
        format!("{v}")
    };
    if text.contains('.') || text.contains('e') || !v.is_finite() {
        text
    } else {
        format!("{text}.0")
    }
}
