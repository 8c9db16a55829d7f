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

use crate::ir::{Expr, Func};

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
}

/// Prints `e` into `out`.
pub fn print(syntax: &impl Syntax, e: &Expr, out: &mut String) {
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
