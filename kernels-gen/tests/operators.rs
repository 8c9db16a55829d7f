//! The derivative operators in 1D, 2D and 3D: weights against hand-derived ones, and
//! exactness on polynomials of the degree each order integrates exactly, evaluated from the
//! IR the parser builds (an independent reference: the polynomials' derivatives by hand).

use kernels_gen::fd::{central_first_derivative, central_mixed_derivative, Ratio};
use kernels_gen::ir::{zyx, Expr, Stmt};
use kernels_gen::parse_str;

/// Evaluates the single assignment of `src` with field `p` given by `f(dz, dy, dx)` (the
/// offset in `[dz, dy, dx]`, absent axes 0).
fn eval_assign(src: &str, f: &dyn Fn([f64; 3]) -> f64) -> f64 {
    let s = parse_str(src).expect("parses").remove(0);
    let value = s
        .body
        .iter()
        .find_map(|st| match st {
            Stmt::Assign { value, .. } => Some(value),
            Stmt::Let { .. } => None,
        })
        .expect("an assignment");
    eval(value, f)
}

fn eval(e: &Expr, f: &dyn Fn([f64; 3]) -> f64) -> f64 {
    match e {
        Expr::Lit(v) => *v,
        Expr::Read { offset, .. } => f(zyx(offset).map(f64::from)),
        Expr::Neg(a) => -eval(a, f),
        Expr::Binary(op, a, b) => op.eval(eval(a, f), eval(b, f)),
        other => panic!("unexpected node {other:?}"),
    }
}

#[test]
fn first_derivative_weights_are_the_textbook_ones() {
    let r = |n, d| Ratio::new(n, d);
    assert_eq!(
        central_first_derivative(2).unwrap(),
        vec![r(-1, 2), Ratio::ZERO, r(1, 2)]
    );
    assert_eq!(
        central_first_derivative(4).unwrap(),
        vec![r(1, 12), r(-2, 3), Ratio::ZERO, r(2, 3), r(-1, 12)]
    );
    // Mixed = products of the first-derivative weights along both axes.
    let m = central_mixed_derivative(2).unwrap();
    assert_eq!(m[0], vec![r(1, 4), Ratio::ZERO, r(-1, 4)]);
    assert_eq!(m[1], vec![Ratio::ZERO; 3]);
    assert_eq!(m[2], vec![r(-1, 4), Ratio::ZERO, r(1, 4)]);
    let w4 = central_first_derivative(4).unwrap();
    let m4 = central_mixed_derivative(4).unwrap();
    for j in 0..5 {
        for k in 0..5 {
            assert_eq!(m4[j][k], w4[j].checked_mul(w4[k]).unwrap());
        }
    }
    assert!(central_first_derivative(3).is_err());
    assert!(central_first_derivative(18).is_err());
}

#[test]
fn d1_d2_and_mixed_expand_to_the_hand_taps() {
    // d1x order 2 in 1D: (u[1] - u[-1]) / 2, zero centre weight left out.
    let s = parse_str("fn f(o: out, u: in) { o[0] = d1x(u, 2); }")
        .unwrap()
        .remove(0);
    let hand = parse_str("fn f(o: out, u: in) { o[0] = -0.5 * u[-1] + 0.5 * u[1]; }")
        .unwrap()
        .remove(0);
    assert_eq!(s.body, hand.body);
    assert_eq!((s.dims, s.radii()), (1, [0, 0, 1]));
    // d2xz order 2 in 2D: the four corners, weights ±1/4.
    let s = parse_str("fn f(o: out, p: in) { o[0, 0] = d2xz(p, 2); }")
        .unwrap()
        .remove(0);
    let hand = parse_str(
        "fn f(o: out, p: in) { o[0, 0] = 0.25 * p[-1, -1] - 0.25 * p[-1, 1] - 0.25 * p[1, -1] + 0.25 * p[1, 1]; }",
    )
    .unwrap()
    .remove(0);
    assert_eq!(s.body, hand.body);
    // 3D: radii per axis follow the operators.
    let s = parse_str("fn f(o: out, p: in) { o[0, 0, 0] = d2x(p, 8) + d1y(p, 4) + d2z(p, 2); }")
        .unwrap()
        .remove(0);
    assert_eq!((s.dims, s.radii(), s.radius()), (3, [1, 2, 4], 4));
    // The 3D laplacian is d2x + d2y + d2z, in that order.
    let lap = parse_str("fn f(o: out, p: in) { o[0, 0, 0] = laplacian(p, 6); }").unwrap();
    let sum = parse_str("fn f(o: out, p: in) { o[0, 0, 0] = d2x(p, 6) + d2y(p, 6) + d2z(p, 6); }")
        .unwrap();
    assert_eq!(lap[0].body, sum[0].body);
}

/// `x^a y^b z^c` and its derivatives by hand, at the point (z, y, x) = (0.3, -0.7, 0.45)
/// with unit spacing.
fn mono(e: [i32; 3]) -> impl Fn([f64; 3]) -> f64 {
    let at: [f64; 3] = [0.3, -0.7, 0.45];
    move |o: [f64; 3]| (0..3).map(|a| (at[a] + o[a]).powi(e[a])).product()
}

fn deriv(e: [i32; 3], d: [i32; 3]) -> f64 {
    let at: [f64; 3] = [0.3, -0.7, 0.45];
    (0..3)
        .map(|a| {
            let (n, k) = (e[a], d[a]);
            if k > n {
                return 0.0;
            }
            let c: f64 = (0..k).map(|j| f64::from(n - j)).product();
            c * at[a].powi(n - k)
        })
        .product()
}

#[test]
fn operators_are_exact_on_polynomials_of_their_degree() {
    let close = |got: f64, want: f64, what: &str| {
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{what}: {got} vs {want}"
        );
    };
    for order in [2, 4, 6, 8] {
        // First derivatives: exact up to degree `order`; second: up to `order + 1`.
        for (op, axis, d, dims) in [
            ("d1x", 2, 1, 1),
            ("d2x", 2, 2, 1),
            ("d1x", 2, 1, 2),
            ("d1z", 0, 1, 2),
            ("d2z", 0, 2, 2),
            ("d1y", 1, 1, 3),
            ("d2y", 1, 2, 3),
            ("d1z", 0, 1, 3),
        ] {
            let zeros = vec!["0"; dims].join(", ");
            let src = format!("fn f(o: out, p: in) {{ o[{zeros}] = {op}(p, {order}); }}");
            let max_deg = if d == 1 { order } else { order + 1 };
            for deg in 0..=max_deg {
                let mut e = [0; 3];
                e[axis] = deg;
                let mut dd = [0; 3];
                dd[axis] = d;
                close(
                    eval_assign(&src, &mono(e)),
                    deriv(e, dd),
                    &format!("{op} order {order} on degree {deg} ({dims}D)"),
                );
            }
        }
        // Mixed: exact on x^a z^b (and pairs in 3D) with a, b <= order.
        for (op, a1, a2, dims) in [
            ("d2xz", 2, 0, 2),
            ("d2xz", 2, 0, 3),
            ("d2xy", 2, 1, 3),
            ("d2yz", 1, 0, 3),
        ] {
            let zeros = vec!["0"; dims].join(", ");
            let src = format!("fn f(o: out, p: in) {{ o[{zeros}] = {op}(p, {order}); }}");
            for da in [0, 1, order / 2, order] {
                for db in [0, 1, order] {
                    let mut e = [0; 3];
                    e[a1] = da;
                    e[a2] = db;
                    let mut dd = [0; 3];
                    dd[a1] = 1;
                    dd[a2] = 1;
                    close(
                        eval_assign(&src, &mono(e)),
                        deriv(e, dd),
                        &format!("{op} order {order} on degrees {da}, {db} ({dims}D)"),
                    );
                }
            }
        }
        // The 3D laplacian of x^2 y^2 z^2 (degree 2 per axis).
        let src = format!("fn f(o: out, p: in) {{ o[0, 0, 0] = laplacian(p, {order}); }}");
        let e = [2, 2, 2];
        let want = deriv(e, [2, 0, 0]) + deriv(e, [0, 2, 0]) + deriv(e, [0, 0, 2]);
        close(eval_assign(&src, &mono(e)), want, "laplacian");
    }
    // And they are not exact one degree beyond (the test can fail).
    let src = "fn f(o: out, p: in) { o[0] = d1x(p, 2); }";
    let e = [0, 0, 3];
    assert!((eval_assign(src, &mono(e)) - deriv(e, [0, 0, 1])).abs() > 0.1);
}

#[test]
fn dimension_errors_point_at_the_span_and_say_how_to_write_it() {
    let err = |src: &str| parse_str(src).unwrap_err().to_string();
    let e = err("fn f(o: out, p: in) { o[0, 0] = d2y(p, 4); }");
    assert!(
        e.contains("`d2y` differentiates along y") && e.contains("2D"),
        "{e}"
    );
    let e = err("fn f(o: out, p: in) { o[0] = d2z(p, 4); }");
    assert!(e.contains("along z") && e.contains("1D"), "{e}");
    let e = err("fn f(o: out, p: in) { o[0] = d2xy(p, 2); }");
    assert!(e.contains("along y"), "{e}");
    let e = err("fn f(o: out, p: in) { o[0, 0, 0] = p[0, 0]; }");
    assert!(
        e.contains("this stencil is 3D") && e.contains("p[dz, dy, dx]"),
        "{e}"
    );
    let e = err("fn f(o: out, p: in) { o[0] = p[0, 1]; }");
    assert!(
        e.contains("this stencil is 1D") && e.contains("p[dx]"),
        "{e}"
    );
    let e = err("fn f(o: out, p: in) { o[0, 0, 0, 0] = p[0, 0, 0, 0]; }");
    assert!(e.contains("1, 2 or 3 dimensions"), "{e}");
    let e = err("#[at(iz, ix)] fn f(o: inout, iz: index, ix: index) { o[0, 0, 0] = 1.0; }");
    assert!(
        e.contains("`#[at(...)]` takes 3 index parameters") && e.contains("iz, iy, ix"),
        "{e}"
    );
    let e = err("fn f(o: out, p: in) { let a = d2x(p, 2); o[0, 0] = a + p[0]; }");
    assert!(e.contains("this stencil is 2D"), "{e}");
    // A stencil with only derivatives takes its dimensionality from its output.
    let s = parse_str("fn f(o: out, p: in) { let a = laplacian(p, 2); o[0, 0, 0] = a; }")
        .unwrap()
        .remove(0);
    assert_eq!((s.dims, s.radii()), (3, [1, 1, 1]));
}
