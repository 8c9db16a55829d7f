"""`ppstencil.gen`: the code generated for DSL text, the same text `ppwave gen` prints."""

from __future__ import annotations

import pytest

import ppstencil as pps

HEAT = """
/// One explicit step of the heat equation.
pub fn heat_step(unew: out, u: in, alpha: real) {
    unew[0, 0] = u[0, 0] + alpha * (u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0]);
}
fn heat3d(unew: out, u: in, alpha: real) {
    unew[0, 0, 0] = u[0, 0, 0] + alpha * laplacian(u, 2);
}
"""
RUST_FILE = "use ppstencil::stencil;\n\nstencil! {" + HEAT + "}\n"
BACKENDS = ["serial", "rayon", "cuda", "hip", "dsl"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_gen_equals_ppwave_gen(ppwave, tmp_path, backend):
    f = tmp_path / "heat.rs"
    f.write_text(RUST_FILE)
    expected = ppwave("gen", "--file", f, "--backend", backend).stdout
    assert pps.gen(RUST_FILE, backend) == expected
    # The DSL alone (what goes between the braces of `stencil!`) gives the same text.
    assert pps.gen(HEAT, backend) == expected
    one = ppwave("gen", "--file", f, "--backend", backend, "--stencil", "heat3d").stdout
    assert pps.gen(HEAT, backend, stencil="heat3d") == one


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtin_kernels_equal_ppwave_gen(ppwave, backend):
    assert pps.gen(None, backend) == ppwave("gen", "--backend", backend).stdout


def test_gen_without_reference():
    text = pps.gen(HEAT, "rayon")
    assert text.startswith("// ===== heat_step (rayon): radius 1,")
    assert "heat3d" in text
    assert "__global__" in pps.gen(HEAT, "cuda")
    assert pps.stencil_names(HEAT) == ["heat_step", "heat3d"]
    assert "fd_step_4" in pps.stencil_names()
    assert "fd_adjoint_grad_4" in pps.stencil_names()
    assert pps.gen(backend="dsl", stencil="fd_step_4").startswith("// ===== fd_step_4 (dsl)")


@pytest.mark.parametrize(
    "text,backend,stencil,match",
    [
        (HEAT, "opencl", None, "backend"),
        (HEAT, "rust", None, "backend"),
        (HEAT, "serial", "nope", "unknown stencil `nope`; valid names: heat_step, heat3d"),
        ("fn f(o: out, p: in) { o[0, 0] = p[0, 1] }", "serial", None, "line 1"),
        ("fn f(o: out, p: in) { o[1, 0] = p[0, 0]; }", "serial", None, r"\[0, 0\]"),
        ("fn f(o: out, p: in) { o[0, 0] = q[0, 0]; }", "serial", None, "q"),
        ("", "serial", None, "empty"),
        ("stencil! { fn broken( }", "serial", None, "line 1"),
        ("this is not { a stencil", "serial", None, "line"),
    ],
)
def test_gen_errors_are_value_errors(text, backend, stencil, match):
    with pytest.raises(ValueError, match=match):
        pps.gen(text, backend, stencil)
