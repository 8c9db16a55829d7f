//! Unit tests of the front end: the IR it lowers to and the errors it reports.

use super::*;
use crate::ir::{BinOp, Domain, Expr, ParamKind, Stmt};

/// The IR as the parser lowers it, before the arithmetic pass (`crate::simplify`).
fn as_written(src: &str) -> syn::Result<Vec<Stencil>> {
    let tokens: TokenStream = src.parse().expect("lexes");
    Ok(StencilFile::parse
        .parse2(tokens)?
        .0
        .into_iter()
        .map(|(s, _)| s)
        .collect())
}

fn one(src: &str) -> Stencil {
    let mut v = as_written(src).expect("parses");
    assert_eq!(v.len(), 1);
    v.remove(0)
}

fn err(src: &str) -> String {
    as_written(src).expect_err("must fail").to_string()
}

const PXX: &str = "pub fn fd_pxx(pxx: out, p: in) {
    pxx[0, 0] = -1.0/12.0*p[0,-2] + 4.0/3.0*p[0,-1] - 5.0/2.0*p[0,0] + 4.0/3.0*p[0,1] - 1.0/12.0*p[0,2];
}";

#[test]
fn parses_fd_pxx_with_folded_coefficients() {
    let s = one(PXX);
    assert_eq!(s.name, "fd_pxx");
    assert_eq!(s.type_name(), "FdPxx");
    assert!(s.public);
    assert_eq!(s.radius(), 2);
    assert_eq!(s.halo(), vec![0, 2]);
    assert_eq!(s.outputs(), vec![0]);
    assert_eq!(s.inputs(), vec![1]);
    assert_eq!(s.taps().len(), 5);
    // 5 multiplications and 4 additions/subtractions; divisions of constants are folded.
    assert_eq!(s.flops_per_point(), 9);
    assert_eq!(s.bytes_per_point(4), 8);
    let Stmt::Assign { value, .. } = &s.body[0] else {
        panic!("expected an assignment")
    };
    let mut lits = Vec::new();
    value.walk(&mut |e| {
        if let Expr::Lit(v) = e {
            lits.push(*v)
        }
    });
    assert_eq!(
        lits,
        vec![-1.0 / 12.0, 4.0 / 3.0, 2.5, 4.0 / 3.0, 1.0 / 12.0]
    );
}

#[test]
fn precedence_and_associativity() {
    let s =
        one("fn f(o: out, a: in, b: in, c: real) { o[0,0] = a[0,0] - b[0,0] - c * a[0,0] / c; }");
    // ((a - b) - ((c * a) / c))
    let Stmt::Assign { value, .. } = &s.body[0] else {
        panic!()
    };
    match value {
        Expr::Binary(BinOp::Sub, l, r) => {
            assert!(matches!(**l, Expr::Binary(BinOp::Sub, _, _)));
            assert!(matches!(**r, Expr::Binary(BinOp::Div, _, _)));
        }
        other => panic!("unexpected tree {other:?}"),
    }
    assert_eq!(s.flops_per_point(), 4);
    assert_eq!(s.radius(), 0);
    assert_eq!(s.bytes_per_point(8), 24);
}

#[test]
fn lets_point_domain_and_functions() {
    let s = one(
        "#[at(iz, ix)] fn src(p: inout, v: real, iz: index, ix: index) {
        let a = sqrt(4.0) * v;
        p[0, 0] = p[0, 0] + max(a, 0.0);
    }",
    );
    assert_eq!(s.domain, Domain::Point(vec![2, 3]));
    assert_eq!(s.locals, vec!["a".to_string()]);
    let Stmt::Let { value, .. } = &s.body[0] else {
        panic!()
    };
    assert_eq!(
        *value,
        Expr::Binary(
            BinOp::Mul,
            Box::new(Expr::Lit(2.0)),
            Box::new(Expr::Scalar(1))
        )
    );
    assert_eq!(s.fields_read(), 1);
    assert_eq!(s.fields_written(), 1);
}

#[test]
fn several_stencils_and_docs() {
    let v = parse_str("/// Copies.\nfn a(o: out, q: in) { o[0,0] = q[0,0]; } fn b(o: out, q: in) { o[0,0] = q[1,-1]; }")
        .expect("parses");
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].doc, vec![" Copies.".to_string()]);
    assert_eq!(v[1].radius(), 1);
}

/// A profile (`in(x)`, `in(z)`, `in(y)`): its axis in the IR, among the inputs in
/// declaration order, read at offsets along its axis, and no compulsory bytes per point.
#[test]
fn parses_profiles_along_each_axis() {
    let s = one(
        "fn f(o: out, ax: in(x), p: in, az: in(z)) { o[0, 0] = ax[0, -1] * p[0, 0] + az[2, 0]; }",
    );
    assert_eq!(s.params[1].kind, ParamKind::Profile(2));
    assert_eq!(s.params[3].kind, ParamKind::Profile(0));
    assert_eq!(s.inputs(), vec![1, 2, 3]);
    assert_eq!((s.profile_axis(1), s.profile_axis(2)), (Some(2), None));
    assert_eq!(s.radii(), [2, 0, 1]);
    // o written, p read: 8 bytes in f32; the profiles are not per-point traffic.
    assert_eq!(s.bytes_per_point(4), 8);
    let s3 = one("fn g(o: out, ay: in(y)) { o[0, 0, 0] = ay[0, 1, 0]; }");
    assert_eq!(s3.params[1].kind, ParamKind::Profile(1));
    let s1 = one("fn h(o: out, ax: in(x)) { o[0] = ax[-1]; }");
    assert_eq!(s1.params[1].kind, ParamKind::Profile(2));
}

/// Every misuse of a profile is an error naming the fix.
#[test]
fn rejects_misused_profiles() {
    let cases = [
        // Unknown axis, or none.
        ("fn f(o: out, a: in(w)) { o[0, 0] = a[0, 0]; }", "in(x)"),
        ("fn f(o: out, a: in()) { o[0, 0] = a[0, 0]; }", "in(x)"),
        ("fn f(o: out, a: in(x z)) { o[0, 0] = a[0, 0]; }", "in(x)"),
        // An axis the stencil does not have.
        (
            "fn f(o: out, a: in(y)) { o[0, 0] = a[0, 0]; }",
            "this stencil is 2D",
        ),
        (
            "fn f(o: out, a: in(z)) { o[0] = a[0]; }",
            "this stencil is 1D",
        ),
        // Read across its axis.
        (
            "fn f(o: out, a: in(x)) { o[0, 0] = a[1, 0]; }",
            "profile along x",
        ),
        (
            "fn f(o: out, a: in(z)) { o[0, 0, 0] = a[0, -1, 0]; }",
            "profile along z",
        ),
        // Written, read without an offset, differentiated, never used.
        (
            "fn f(o: out, a: in(x)) { o[0, 0] = 1.0; a[0, 0] = 2.0; }",
            "declared `in`",
        ),
        (
            "fn f(o: out, a: in(x)) { o[0, 0] = a; }",
            "read it at an offset",
        ),
        (
            "fn f(o: out, a: in(x)) { o[0, 0] = d2x(a, 2); }",
            "derivative operators take `in` fields",
        ),
        (
            "fn f(o: out, a: in(x), p: in) { o[0, 0] = p[0, 0]; }",
            "never used",
        ),
    ];
    for (src, want) in cases {
        let e = err(src);
        assert!(e.contains(want), "{src}: {e}");
    }
}

#[test]
fn rejects_writing_an_input() {
    let e = err("fn f(a: in, o: out) { o[0,0] = 1.0; a[0,0] = 2.0; }");
    assert!(e.contains("declared `in`"), "{e}");
}

#[test]
fn rejects_undeclared_name() {
    let e = err("fn f(o: out) { o[0,0] = q[0,0]; }");
    assert!(e.contains("`q` is not declared"), "{e}");
}

#[test]
fn rejects_non_constant_offset() {
    let e = err("fn f(o: out, p: in) { o[0,0] = p[0, i]; }");
    assert!(e.contains("offsets must be integer constants"), "{e}");
}

#[test]
fn rejects_assignment_off_centre_or_to_scalars() {
    assert!(err("fn f(o: out, p: in) { o[0,1] = p[0,0]; }").contains("only the point it is at"));
    assert!(err("fn f(o: out, s: real) { s = 1.0; o[0,0] = 1.0; }").contains("scalar parameter"));
    assert!(err("fn f(o: out) { o = 1.0; }").contains("o[0, 0]"));
}

#[test]
fn rejects_unknown_function() {
    let e = err("fn f(o: out, p: in) { o[0,0] = tanh(p[0,0]); }");
    assert!(
        e.contains("unknown function `tanh`") && e.contains("sqrt"),
        "{e}"
    );
}

#[test]
fn rejects_reading_outputs_and_racy_inout() {
    assert!(err("fn f(o: out) { o[0,0] = o[0,0]; }").contains("declared `out`"));
    assert!(err("fn f(o: inout) { o[0,0] = o[0,1]; }").contains("race"));
}

#[test]
fn d2x_of_order_4_is_the_papers_fd_pxx() {
    let hand = one(PXX);
    let op = one("pub fn fd_pxx(pxx: out, p: in) { pxx[0, 0] = d2x(p, 4); }");
    assert_eq!(op, hand);
    let hand_z = one("fn f(o: out, p: in) { o[0, 0] = -1.0/12.0*p[-2,0] + 4.0/3.0*p[-1,0] - 5.0/2.0*p[0,0] + 4.0/3.0*p[1,0] - 1.0/12.0*p[2,0]; }");
    assert_eq!(one("fn f(o: out, p: in) { o[0, 0] = d2z(p, 4); }"), hand_z);
}

#[test]
fn laplacian_is_d2x_plus_d2z() {
    let lap = one("fn f(o: out, p: in) { o[0, 0] = laplacian(p, 6); }");
    let sum = one("fn f(o: out, p: in) { o[0, 0] = d2x(p, 6) + d2z(p, 6); }");
    assert_eq!(lap, sum);
    assert_eq!(lap.radius(), 3);
    assert_eq!(lap.halo(), vec![3, 3]);
    // 2 × (7 taps: 7 multiplications + 6 additions) + 1 addition.
    assert_eq!(lap.flops_per_point(), 27);
    // Distinct taps: 7 along x and 7 along z sharing the centre.
    assert_eq!(lap.taps().len(), 13);
    assert_eq!(lap.bytes_per_point(4), 8);
}

#[test]
fn derivative_radius_flops_follow_the_order() {
    for order in crate::fd::SPACE_ORDERS.map(|o| o as usize) {
        let s = one(&format!(
            "fn f(o: out, p: in, q: in, k: real) {{ o[0, 0] = 2.0 * p[0, 0] - q[0, 0] + k * d2x(p, {order}); }}"
        ));
        assert_eq!(s.radius(), order / 2, "order {order}");
        assert_eq!(s.halo(), vec![0, order / 2]);
        // (order + 1) taps: order + 1 multiplications and order additions, plus 4.
        assert_eq!(s.flops_per_point(), 2 * order + 1 + 4);
        assert_eq!(s.taps().len(), order + 2);
    }
    // The weights are Fornberg's: order 8's outermost tap is -1/560.
    let s = one("fn f(o: out, p: in) { o[0, 0] = d2x(p, 8); }");
    let Stmt::Assign { value, .. } = &s.body[0] else {
        panic!()
    };
    let mut lits = Vec::new();
    value.walk(&mut |e| {
        if let Expr::Lit(v) = e {
            lits.push(*v)
        }
    });
    assert_eq!(lits.first(), Some(&(-1.0 / 560.0)));
    assert_eq!(lits.last(), Some(&(1.0 / 560.0))); // subtracted
    assert_eq!(lits.len(), 9);
}

#[test]
fn rejects_bad_derivative_calls() {
    let f = |body: &str| {
        err(&format!(
            "fn f(o: out, p: in, u: inout, k: real) {{ u[0, 0] = k; o[0, 0] = {body}; }}"
        ))
    };
    for bad in ["0", "1", "3", "15", "17", "18"] {
        let e = f(&format!("d2x(p, {bad})"));
        assert!(
            e.contains(&format!("space order {bad} is not supported"))
                && e.contains("even order from 2 to 16"),
            "{e}"
        );
    }
    assert!(f("d2z(p, k)").contains("integer literal"));
    assert!(f("d2z(p, 4.0)").contains("integer literal"));
    assert!(f("d2z(p, 2 + 2)").contains("two arguments"));
    assert!(f("d2x(p, 4u8)").contains("suffix"));
    assert!(f("d2x(p)").contains("needs the space order"));
    assert!(f("d2x(p, 4, 6)").contains("two arguments"));
    assert!(f("laplacian(q, 4)").contains("`q` is not a declared field"));
    assert!(f("laplacian(o, 4)").contains("declared `out`"));
    assert!(f("laplacian(u, 4)").contains("race"));
    assert!(f("laplacian(k, 4)").contains("scalar, not a field"));
    assert!(f("laplacian(p[0, 1], 4)").contains("without an offset"));
    assert!(f("lapl(p, 4)").contains("derivative operators d2x, d2y, d2z, laplacian, d1x"));
}

#[test]
fn rejects_structural_mistakes() {
    assert!(err("fn f(o: out, p: in) { }").contains("never written"));
    assert!(err("fn f(p: in) { }").contains("no output field"));
    assert!(err("fn f(o: out, p: in) { o[0,0] = p; }").contains("read it at an offset"));
    assert!(err("fn f(o: out, p: in) { o[0,0] = p[0]; }").contains("2 offsets"));
    assert!(err("fn f(o: out, p: floaty) { o[0,0] = 1.0; }").contains("unknown parameter kind"));
    assert!(err("fn f(o: out) { o[0,0] = 1.0; o[0,0] = 2.0; }").contains("assigned twice"));
    assert!(err("fn f(o: out, i: index) { o[0,0] = 1.0; }").contains("not used"));
    assert!(err("fn f(o: out) { o[0,0] = 1.0 }").contains("`;`"));
    assert!(err("fn f(o: out) { o[0,0] = 1.0f32; }").contains("suffix"));
    assert!(err("fn f(o: out, o: in) { o[0,0] = 1.0; }").contains("twice"));
    assert!(err("").contains("empty"));
}

/// The (line, column) of an error's span, for checking where it points.
fn at(src: &str) -> (usize, usize) {
    let e = parse_str(src).expect_err("must fail");
    let start = e.span().start();
    (start.line, start.column)
}

#[test]
fn constants_folding_to_inf_or_nan_are_errors_at_their_span() {
    let src = "fn f(o: out, p: in) { o[0, 0] = 1.0 / 0.0 * p[0, 0]; }";
    let e = err(src);
    assert!(e.contains("gives inf") && e.contains("division"), "{e}");
    assert_eq!(at(src), (1, src.find('/').unwrap()));
    let src = "fn f(o: out, p: in) { o[0, 0] = p[0, 0] * sqrt(-1.0); }";
    assert!(err(src).contains("gives NaN"), "{}", err(src));
    assert_eq!(at(src), (1, src.find("sqrt").unwrap()));
    assert!(err("fn f(o: out) { o[0, 0] = 1e400; }").contains("`1e400` gives inf"));
    assert!(err("fn f(o: out) { o[0, 0] = 0.0 - 1e308 * 10.0; }").contains("`*` gives inf"));
    // Finite in f64 but not in f32, for which every stencil is also generated.
    let e = err("fn f(o: out, p: in) { o[0, 0] = 1e300 * p[0, 0]; }");
    assert!(e.contains("does not fit in f32"), "{e}");
    // Large intermediate values that fold back into range are fine.
    let s = one("fn f(o: out, p: in) { o[0, 0] = 1e300 / 1e299 * p[0, 0]; }");
    assert!(
        matches!(&s.body[0], Stmt::Assign { value: Expr::Binary(_, l, _), .. } if **l == Expr::Lit(10.0))
    );
}

#[test]
fn raw_identifiers_keywords_and_unsafe_names_are_refused_with_the_reason() {
    let e = err("fn f(r#type: out) { r#type[0, 0] = 1.0; }");
    assert!(
        e.contains("raw identifiers are not supported") && e.contains("`type_`"),
        "{e}"
    );
    assert!(err("fn f(o: out) { let r#fn = 1.0; o[0, 0] = r#fn; }").contains("raw identifiers"));
    assert!(err("fn f(self: out) { self[0, 0] = 1.0; }").contains("Rust keyword"));
    assert!(err("fn f(o: out, in: in) { o[0, 0] = in[0, 0]; }").contains("Rust keyword"));
    assert!(err("fn r#type(o: out) { o[0, 0] = 1.0; }").contains("raw identifiers"));
    for name in ["Ok", "None", "NULL", "FdPxx", "_Ok"] {
        let e = err(&format!(
            "fn f(o: out) {{ let {name} = 1.0; o[0, 0] = {name}; }}"
        ));
        assert!(e.contains("start with a lowercase letter"), "{name}: {e}");
    }
    assert!(err("fn f(o: out, space: real) { o[0, 0] = space; }").contains("generated code"));
    assert!(err("fn f(o: out, grid: in) { o[0, 0] = grid[0, 0]; }").contains("generated code"));
    assert!(err("fn f(o: out, p__q: in) { o[0, 0] = p__q[0, 0]; }").contains("`__`"));
    assert!(err("fn f(_: out) { }").contains("`_` cannot name"));
    // C words, CUDA built-ins and C macros are fine: the C backends rename every user name.
    one("fn f(sqrt: out, blockDim: in, null: real) { let int = blockDim[0, 0]; sqrt[0, 0] = int * null; }");
    // Index parameters only meet the launch function's names.
    one("#[at(iz, ix)] fn f(p: inout, v: real, iz: index, ix: index) { p[0, 0] = v; }");
}

#[test]
fn stencil_names_are_snake_case_and_give_distinct_marker_types() {
    let e = err("fn FooBar(o: out) { o[0, 0] = 1.0; }");
    assert!(e.contains("snake_case") && e.contains("`foo_bar`"), "{e}");
    assert!(err("fn foo_(o: out) { o[0, 0] = 1.0; }").contains("snake_case"));
    let e = err("fn fd_step4(o: out) { o[0, 0] = 1.0; } fn fd_step_4(o: out) { o[0, 0] = 2.0; }");
    assert!(
        e.contains("`fd_step4` and `fd_step_4` would both generate the marker type `FdStep4`"),
        "{e}"
    );
}

#[test]
fn doc_comments_are_split_into_lines() {
    let s = one("#[doc = \"first\\n#define x 1\\rthird\"] fn f(o: out) { o[0, 0] = 1.0; }");
    assert_eq!(s.doc, ["first", "#define x 1", "third"]);
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = |open: &str, close: &str| {
        format!(
            "fn f(o: out, p: in) {{ o[0, 0] = {}p[0, 0]{}; }}",
            open.repeat(2000),
            close.repeat(2000)
        )
    };
    for src in [
        deep("(", ")"),
        deep("-", ""),
        deep("sqrt(", ")"),
        deep("- (", ")"),
    ] {
        let e = err(&src);
        assert!(e.contains(&format!("at most {MAX_NESTING} levels")), "{e}");
    }
    // At the limit it still works.
    let ok = format!(
        "fn f(o: out, p: in) {{ o[0, 0] = {}p[0, 0]{}; }}",
        "(".repeat(MAX_NESTING),
        ")".repeat(MAX_NESTING)
    );
    one(&ok);
}

#[test]
fn a_flat_sum_of_20000_terms_is_parsed_and_emitted_in_linear_time() {
    // On a thread with a small, fixed stack (2 MiB; rustc runs proc macros with more):
    // every stage walks the 20,000-deep left-nested chain without deep recursion.
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(flat_sum_of_20000_terms)
        .expect("spawn")
        .join()
        .expect("no panic and no stack overflow");
}

fn flat_sum_of_20000_terms() {
    let terms: Vec<String> = (0..20_000)
        .map(|k| format!("{}.0 * p[0, {}]", k % 7 + 1, k % 5))
        .collect();
    let src = format!("fn f(o: out, p: in) {{ o[0, 0] = {}; }}", terms.join(" + "));
    let start = std::time::Instant::now();
    let s = one(&src);
    assert_eq!(s.flops_per_point(), 2 * 20_000 - 1);
    let c = crate::emit::c::emit(&s, crate::emit::c::Dialect::Cuda);
    let dsl = crate::emit::dsl::print(&s);
    let rust = crate::emit::rust::host_source(&s, "serial");
    let tokens = crate::emit::rust::emit_stencil(&s, &dsl, &[]);
    // Each output grows linearly: a few dozen bytes per term.
    for (what, len) in [("C", c.len()), ("DSL", dsl.len()), ("Rust", rust.len())] {
        assert!(len < 2 * 40 * 20_000 + 20_000, "{what}: {len} bytes");
    }
    assert!(!tokens.is_empty());
    drop(s);
    // Quadratic work took 11 s for 10,000 terms (44 s for these 20,000); linear work
    // takes about a second in a debug build. The bound is generous for shared machines.
    let took = start.elapsed();
    assert!(took.as_secs() < 15, "took {took:?}");
}

#[test]
fn rust_habits_get_the_dsl_way_to_write_them() {
    let f = |body: &str| err(&format!("fn f(o: out, p: in) {{ o[0, 0] = {body}; }}"));
    let e = f("d2x(d2x(p, 2), 2)");
    assert!(
        e.contains("derivatives do not nest") && e.contains("second"),
        "{e}"
    );
    assert!(!e.contains("add `d2x: in`"), "{e}");
    let e = f("p[0, 0].sqrt()");
    assert!(e.contains("write `sqrt(x)` instead of `x.sqrt()`"), "{e}");
    let e = f("(p[0, 0] + 1.0).exp()");
    assert!(e.contains("write `exp(x)`"), "{e}");
    let e = f("p[0, 0].tanh()");
    assert!(
        e.contains("method calls are not part of the DSL") && e.contains("sqrt, abs"),
        "{e}"
    );
    let e = f("p[0, 0] ^ 2");
    assert!(
        e.contains("`^` is not a power") && e.contains("`x * x`"),
        "{e}"
    );
    let e = f("p[0, 0] ** 2.0");
    assert!(e.contains("`**` is not a power"), "{e}");
    let e = f("p[0, 0] % 2.0");
    assert!(e.contains("`%` (remainder) is not supported"), "{e}");
    let e = f("max(p[0, 0] % 2.0, 1.0)");
    assert!(e.contains("`%` (remainder)"), "{e}");
    let e = f("if p[0, 0] > 0.0 { 1.0 } else { 2.0 }");
    assert!(e.contains("no branches") && e.contains("max(a, b)"), "{e}");
    let e = err("fn f(o: out, p: in) { if true { o[0, 0] = 1.0; } }");
    assert!(
        e.contains("no branches") && !e.contains("add `if: out`"),
        "{e}"
    );
    let e = f("p[0, 0] > 0.0");
    assert!(e.contains("comparisons"), "{e}");
}
