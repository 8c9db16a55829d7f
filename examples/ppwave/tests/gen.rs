//! `ppwave gen`: the generated code of the built-in stencils and of a user's stencil file, and its
//! errors.

mod common;

use common::*;

#[test]
fn gen_prints_the_generated_kernels() {
    let o = ppwave(&["gen", "--backend", "serial"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let adjoint = ppstencil::kernels::adjoint::ALL;
    assert!(
        adjoint.len() > 20,
        "the gradient of 8 orders in 2D and 3D and 6 more"
    );
    for info in ppstencil::kernels::ALL.iter().chain(adjoint) {
        assert!(
            text.contains(&format!("===== {} (serial)", info.name)),
            "{}",
            info.name
        );
    }
    // The generated row loop of fd_pxx: a loop over the row's blocks of columns, the
    // 5-point weights.
    assert!(text.contains("for cols in pxx.blocks() {"), "{text}");
    assert!(text.contains("for i in 0..pxx.len() {"), "{text}");
    assert!(text.contains("1.3333333333333333"), "{text}");

    let o = ppwave(&["gen", "--backend", "dsl", "--stencil", "fd_time"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("fn fd_time(pnew: out"), "{text}");
    assert!(!text.contains("fd_pxx"), "only the chosen stencil: {text}");

    // The adjoint's kernels too: the gradient's imaging condition of order 4, its Laplacian
    // written out (weights -1/12, 4/3 and -5/2 per axis: the centre -5 in 2D).
    let o = ppwave(&["gen", "--backend", "dsl", "--stencil", "fd_adjoint_grad_4"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("fn fd_adjoint_grad_4(g: inout, s: in, p: in)"),
        "{text}"
    );
    let body = "g[0, 0] = g[0, 0] + s[0, 0] * (-0.08333333333333333 * (p[0, -2] + p[0, 2]";
    assert!(
        text.contains(body) && text.contains("- 5.0 * p[0, 0]);"),
        "{text}"
    );
}

#[test]
fn gen_prints_the_code_of_a_users_stencil_file() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../stencils/heat.rs");
    for (backend, needles) in [
        (
            "serial",
            &[
                "impl HeatStep",
                "unew[i] = u__0_0[i]",
                "u__m1_0[i] + u__1_0[i]",
            ][..],
        ),
        (
            "cuda",
            &["__global__ void heat_step_f32(", "u_[u__i - u__nx]"][..],
        ),
        (
            "hip",
            &["__global__ void heat_step_f64(", "hip_runtime.h"][..],
        ),
        (
            "dsl",
            &["pub fn heat_step(unew: out, u: in, alpha: real)"][..],
        ),
    ] {
        let o = ppwave(&["gen", "--file", file, "--backend", backend]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(text.contains("===== heat_step"), "{text}");
        for n in needles {
            assert!(text.contains(n), "{backend}: missing `{n}` in {text}");
        }
    }

    let dir = scratch("gen-file");
    std::fs::create_dir_all(&dir).expect("dir");
    let bad = dir.join("bad.rs");
    std::fs::write(
        &bad,
        "ppstencil::stencil! {\n    fn f(o: out, p: in) {\n        o[0, 0] = q[0, 0];\n    }\n}\n",
    )
    .expect("write");
    let none = dir.join("none.rs");
    std::fs::write(&none, "fn main() {}\n").expect("write");
    let missing = dir.join("missing.rs");
    for (path, needle) in [
        (
            &bad,
            "line 3, column 19: invalid stencil: `q` is not declared",
        ),
        (&none, "no `stencil! { ... }` invocation found"),
        (&missing, "no such file"),
        (&dir, "is a directory"),
    ] {
        let o = ppwave(&["gen", "--file", path.to_str().expect("utf-8")]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(needle), "`{needle}` not in {err}");
    }
}

#[test]
fn gen_rejects_unknown_stencils_and_missing_backends() {
    let o = ppwave(&["gen", "--stencil", "fd_nope"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fd_nope") && err.contains("fd_pxx, fd_pzz"),
        "{err}"
    );

    for backend in ["cuda", "hip"] {
        let o = ppwave(&["gen", "--backend", backend, "--stencil", "fd_pxx"]);
        let embedded = ppstencil::kernels::ALL[1].source(backend).is_some();
        if embedded {
            assert!(o.status.success());
            assert!(String::from_utf8_lossy(&o.stdout).contains("fd_pxx"));
        } else {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success());
            assert!(
                err.contains(&format!("no {backend} source is embedded")),
                "{err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}
