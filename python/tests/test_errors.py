"""Every class of bad input raises (ValueError with the argument named, or ppstencil.Error for
what is not bad input) and nothing crashes the interpreter: each case also runs in a child
interpreter, whose exit status tells an exception (1) from a crash (a signal)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ppstencil as pps

V = np.full((40, 50), 2000.0, dtype=np.float32)
OK = dict(dh=10.0, nt=10, source=(20, 25), boundary="rigid")


def nan_model():
    v = V.copy()
    v[3, 4] = np.nan
    return v


def neg_model():
    v = V.copy()
    v[7, 1] = -1.0
    return v


# id, velocity (or a function making it), options over OK, exception, message part
CASES = [
    ("list-not-array", [[2000.0] * 5] * 5, {}, ValueError, "numpy.ndarray"),
    ("int-dtype", V.astype(np.int32), {}, ValueError, "float32 or float64"),
    ("float16-dtype", V.astype(np.float16), {}, ValueError, "float32 or float64"),
    ("complex-dtype", V.astype(np.complex64), {}, ValueError, "float32 or float64"),
    ("big-endian", V.astype(">f4"), {}, ValueError, "native byte order"),
    ("1d", V[0], {}, ValueError, "2 dimensions"),
    ("4d", V[None, None], {}, ValueError, "2 dimensions"),
    ("empty", np.zeros((0, 5), np.float32), {}, ValueError, "at least 1"),
    ("3d-one-plane", V[:, None, :], {}, ValueError, "ny > 1"),
    ("strided", V[:, ::2], {}, ValueError, "C-contiguous"),
    ("fortran", np.asfortranarray(V), {}, ValueError, "C-contiguous"),
    ("nan", nan_model(), {}, ValueError, r"velocity\[3, 4\] = nan"),
    ("negative", neg_model(), {}, ValueError, r"velocity\[7, 1\] = -1"),
    ("inf", np.full((40, 50), np.inf, np.float32), {}, ValueError, "finite"),
    ("too-small-grid", np.full((3, 50), 2000.0, np.float32), {"source": (1, 25)}, ValueError, "nz"),
    ("2d-model-3d-source", V, {"source": (20, 3, 25)}, ValueError, "shape"),
    ("3d-model-2d-receivers", np.full((20, 20, 20), 2000.0, np.float32),
     {"source": (10, 10, 10), "receivers": [(5, 5)]}, ValueError, r"\(n, 3\)"),
    ("receiver-outside", V, {"receivers": [(5, 50)]}, ValueError, "receiver"),
    ("receiver-negative", V, {"receivers": [(5, -1)]}, ValueError, "negative"),
    ("receiver-float", V, {"receivers": [(5.5, 3.0)]}, ValueError, "integers"),
    ("receiver-ragged", V, {"receivers": [(5, 1), (2,)]}, ValueError, "receivers"),
    ("receiver-string", V, {"receivers": "abc"}, ValueError, "integers"),
    ("source-in-border", V, {"source": (1, 25)}, ValueError, "source z"),
    ("source-outside", V, {"source": (20, 50)}, ValueError, "source x"),
    ("two-sources", V, {"source": [(20, 25), (20, 30)]}, ValueError, "one source"),
    ("nt-zero", V, {"nt": 0}, ValueError, "nt"),
    ("nt-negative", V, {"nt": -5}, ValueError, "nt"),
    ("dt-unstable", V, {"dt": 0.1}, ValueError, "CFL"),
    ("dt-nan", V, {"dt": float("nan")}, ValueError, "dt"),
    ("dt-negative", V, {"dt": -0.001}, ValueError, "dt"),
    ("dt-and-cfl", V, {"dt": 0.001, "cfl": 0.3}, ValueError, "not both"),
    ("cfl-zero", V, {"cfl": 0.0}, ValueError, "cfl"),
    ("cfl-too-big", V, {"cfl": 5.0}, ValueError, "CFL"),
    ("dh-zero", V, {"dh": 0.0}, ValueError, "dh"),
    ("fpeak-negative", V, {"fpeak": -1.0}, ValueError, "fpeak"),
    ("space-order-odd", V, {"space_order": 5}, ValueError, "space_order"),
    ("space-order-big", V, {"space_order": 18}, ValueError, "space_order"),
    ("split-order-8", V, {"space_order": 8, "kernels": "split"}, ValueError, "split"),
    ("kernels-bad", V, {"kernels": "fast"}, ValueError, "kernels"),
    ("boundary-bad", V, {"boundary": "open"}, ValueError, "boundary"),
    ("rigid-with-absorb", V, {"absorb": 10}, ValueError, "absorb"),
    ("pml-zero-absorb", V, {"boundary": "pml", "absorb": 0}, ValueError, "absorb"),
    ("pml-too-wide", V, {"boundary": "pml", "absorb": 30}, ValueError, "absorb"),
    ("pml-too-thin", V, {"boundary": "pml", "absorb": 2}, ValueError, "absorb"),
    ("pml-r-bad", V, {"boundary": "pml", "absorb": 10, "pml_r": 2.0}, ValueError, "pml_r"),
    ("pml-option-on-sponge", V, {"boundary": "sponge", "absorb": 10, "pml_degree": 2.0},
     ValueError, "pml_degree"),
    ("source-mode-bad", V, {"source_mode": "inject"}, ValueError, "source_mode"),
    ("delay-without-add", V, {"source_delay": 0.1}, ValueError, "source_delay"),
    ("precision-bad", V, {"precision": "f16"}, ValueError, "precision"),
    ("backend-bad", V, {"backend": "opencl"}, ValueError, "backend"),
    ("threads-zero", V, {"backend": "rayon", "threads": 0}, ValueError, "threads"),
    ("threads-on-serial", V, {"backend": "serial", "threads": 2}, ValueError, "threads"),
    ("time-block-bad", V, {"time_block": "sometimes"}, ValueError, "time_block"),
    ("time-block-zero", V, {"time_block": 0}, ValueError, "time_block"),
    ("time-block-over-nt", V, {"time_block": 11}, ValueError, "time_block"),
    ("numerics-bad", V, {"numerics": "ieee"}, ValueError, "numerics"),
    ("subnormals-bad", V, {"subnormals": "denormal"}, ValueError, "subnormals"),
    ("nt-not-int", V, {"nt": "ten"}, TypeError, "nt"),
]
if "cuda" not in pps.BACKENDS_BUILT:
    CASES.append(("cuda-not-built", V, {"backend": "cuda"}, pps.Error, "--features cuda"))
if "hip" not in pps.BACKENDS_BUILT:
    CASES.append(("hip-not-built", V, {"backend": "hip"}, pps.Error, "--features hip"))


@pytest.mark.parametrize("name,velocity,opts,exc,match", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(name, velocity, opts, exc, match):
    with pytest.raises(exc, match=match):
        pps.Simulation(velocity, **{**OK, **opts})
    # `run` reads the same arguments (a source becomes `sources`).
    run_opts = {**OK, **opts}
    source = run_opts.pop("source")
    if name != "two-sources":
        with pytest.raises(exc, match=match):
            pps.run(velocity, sources=[source], **run_opts)


def test_run_names_the_bad_shot():
    with pytest.raises(ValueError, match=r"shot 1 \(sources\[1\]\): invalid source z"):
        pps.run(V, dh=10.0, nt=5, sources=[(20, 25), (0, 25)], boundary="rigid")
    with pytest.raises(ValueError, match="no source"):
        pps.run(V, dh=10.0, nt=5, sources=np.zeros((0, 2), int), boundary="rigid")


def test_snapshot_steps_are_checked():
    for steps in ([0], [11], "x", [1.5]):
        with pytest.raises((ValueError, TypeError)):
            pps.run(V, dh=10.0, nt=10, sources=[(20, 25)], boundary="rigid", snapshots=steps)


def test_step_level_misuse():
    sim = pps.Simulation(V, **OK)
    for n in (0, -1, 11):
        with pytest.raises(ValueError, match="n"):
            sim.step(n)
    sim.step(10)
    with pytest.raises(pps.Error, match="reset"):
        sim.step()
    with pytest.raises(pps.Error, match="reset"):
        sim.run()
    with pytest.raises(pps.Error, match="reset"):
        sim.finish()


def test_no_case_crashes_the_interpreter():
    """Every bad input again in a child interpreter: each must raise its exception there
    (exit 0); a crash would end the child by a signal (a negative status), an unexpected
    exception or a silent success with status 3."""
    code = f"""
import sys
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
import test_errors as t
for name, velocity, opts, exc, match in t.CASES:
    try:
        t.pps.Simulation(velocity, **{{**t.OK, **opts}})
    except exc:
        continue
    print("no exception:", name)
    sys.exit(3)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
