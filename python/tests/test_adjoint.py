"""The adjoint-state functions: `adjoint` is the exact transpose of `forward` (the
dot-product identity, 2D and 3D, f64 and f32), `gradient` is the same bit for bit with and
without checkpoints and sums the shots, and `migrate` equals `ppwave migrate`'s image.npy
bit for bit on the same data (the Rust library through an independent program). The
`progress` callback sees every time step of a call and stops it by raising; Ctrl-C stops a
long gradient."""

from __future__ import annotations

import _thread
import threading
import time

import numpy as np
import pytest

import ppstencil as pps


def random_model(shape, seed):
    rng = np.random.default_rng(seed)
    return np.ascontiguousarray(rng.uniform(1800.0, 2600.0, shape))


@pytest.mark.parametrize("precision,tol", [("f64", 1e-12), ("f32", 1e-5)])
@pytest.mark.parametrize("dims", [2, 3])
def test_adjoint_is_the_transpose_of_forward(precision, tol, dims):
    rng = np.random.default_rng(7 + dims)
    if dims == 2:
        shape, source, rec = (20, 24), (9, 11), [(5, 16), (13, 6), (14, 18)]
    else:
        shape, source, rec = (10, 11, 12), (5, 5, 6), [(3, 4, 8), (7, 6, 3)]
    v = random_model(shape, 3)
    dtype = np.float64 if precision == "f64" else np.float32
    common = dict(dh=10.0, dt=0.0008, source=source, receivers=rec, absorb=3,
                  precision=precision, backend="serial")
    m = rng.uniform(-1, 1, 30)
    fm = pps.forward(v.astype(dtype), wavelet=m, **common)
    assert fm.shape == (30, len(rec)) and fm.dtype == dtype
    d = rng.uniform(-1, 1, fm.shape) + fm / np.sqrt(np.mean(fm.astype(np.float64) ** 2))
    fd = pps.adjoint(v.astype(dtype), traces=d, **common)
    assert fd.shape == (30,)
    lhs = float(np.dot(fm.astype(np.float64).ravel(), d.ravel()))
    rhs = float(np.dot(m, fd.astype(np.float64)))
    assert abs(lhs - rhs) <= tol * max(abs(lhs), abs(rhs)), (lhs, rhs)


def test_gradient_is_the_same_with_checkpoints_and_sums_the_shots():
    v = random_model((20, 24), 5)
    rng = np.random.default_rng(1)
    rec = [(5, 16), (13, 6), (14, 18)]
    sources = [(9, 11), (6, 17)]
    observed = rng.uniform(-1e-3, 1e-3, (2, 24, 3))
    common = dict(dh=10.0, dt=0.001, receivers=rec, absorb=4, fpeak=25.0, backend="serial")
    j, g = pps.gradient(v, sources=sources, observed=observed, **common)
    assert g.shape == v.shape and g.dtype == np.float64 and np.any(g != 0)
    pair = 2 * v.size * 8
    jc, gc = pps.gradient(v, sources=sources, observed=observed, memory=2 * pair, **common)
    assert jc == j and gc.tobytes() == g.tobytes()
    parts = [pps.gradient(v, sources=[s], observed=observed[i:i + 1], **common)
             for i, s in enumerate(sources)]
    assert parts[0][0] + parts[1][0] == j
    assert (parts[0][1] + parts[1][1]).tobytes() == g.tobytes()
    with pytest.raises(ValueError, match="memory budget"):
        pps.gradient(v, sources=sources, observed=observed, memory=pair - 1, **common)


def test_bad_input_raises_value_error():
    v = random_model((20, 24), 5)
    common = dict(dh=10.0, dt=0.001, receivers=[(5, 16)], absorb=4, backend="serial")
    obs = np.zeros((1, 24, 1))
    with pytest.raises(ValueError, match="observed"):
        pps.gradient(v, sources=[(9, 11)], observed=np.zeros((1, 24, 2)), **common)
    with pytest.raises(ValueError, match="2 sources"):
        pps.gradient(v, sources=[(9, 11), (9, 12)], observed=obs, **common)
    bad = obs.copy()
    bad[0, 3, 0] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        pps.migrate(v, sources=[(9, 11)], observed=bad, **common)
    with pytest.raises(ValueError, match="float64"):
        pps.forward(v, source=(9, 11), wavelet=np.zeros(24, np.float32), dh=10.0, dt=0.001,
                    receivers=[(5, 16)], absorb=4)
    with pytest.raises(ValueError, match="pml"):
        pps.forward(v, source=(9, 11), wavelet=np.zeros(24), dh=10.0, dt=0.001,
                    receivers=[(5, 16)], absorb=4, boundary="pml")


def test_migrate_equals_ppwave_migrate(ppwave, tmp_path):
    nz, nx, nt = 40, 48, 220
    v_true = np.full((nz, nx), 2000.0)
    v_true[20:] = 2800.0
    v_mig = np.full((nz, nx), 2000.0)
    np.save(tmp_path / "true.npy", v_true)
    np.save(tmp_path / "mig.npy", v_mig)
    (tmp_path / "shots.txt").write_text("4 12\n4 34\n")
    geometry = ["--nt", nt, "--dt", "0.001", "--dh", "10", "--fpeak", "25", "--absorb", "6",
                "--space-order", "4", "--receivers", "4:6:42:2", "--backend", "serial",
                "--precision", "f64", "--source-mode", "add", "--boundary", "sponge",
                "--shots", tmp_path / "shots.txt"]
    ppwave("run", *geometry, "--velocity", tmp_path / "true.npy", "--out", tmp_path / "data")
    ppwave("migrate", *geometry, "--velocity", tmp_path / "mig.npy", "--data",
           tmp_path / "data", "--out", tmp_path / "image")
    want = np.load(tmp_path / "image" / "image.npy")
    observed = np.stack([np.load(tmp_path / "data" / f"shot-{n:04}" / "seismogram.npy")
                         for n in (1, 2)])
    got = pps.migrate(v_mig, dh=10.0, dt=0.001, sources=[(4, 12), (4, 34)],
                      observed=observed, receivers=pps.receiver_line(4, 6, 42, 2),
                      fpeak=25.0, absorb=6, backend="serial")
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert np.abs(got).max() > 0


SMALL = dict(dh=10.0, dt=0.001, receivers=[(5, 16), (13, 6), (14, 18)], absorb=4,
             backend="serial")


def test_progress_counts_every_time_step():
    """``progress(steps)`` is called after every step with the call's steps so far: ``nt``
    for ``forward`` and ``adjoint`` (one sweep each); a gradient or image runs, for each
    shot, a forward sweep of ``nt`` steps and an adjoint sweep of ``nt`` steps, so
    ``shots * 2 * nt`` with full storage and more with checkpoints (the forward steps run
    again); the results are those of a call without the callback."""
    v = random_model((20, 24), 5)
    nt, shots = 24, 2
    seen = []
    fm = pps.forward(v, source=(9, 11), wavelet=np.ones(nt), progress=seen.append, **SMALL)
    assert seen == list(range(1, nt + 1))
    assert fm.tobytes() == pps.forward(v, source=(9, 11), wavelet=np.ones(nt), **SMALL).tobytes()
    seen.clear()
    pps.adjoint(v, source=(9, 11), traces=fm, progress=seen.append, **SMALL)
    assert seen == list(range(1, nt + 1))
    rng = np.random.default_rng(3)
    survey = dict(sources=[(9, 11), (6, 17)], observed=rng.uniform(-1e-3, 1e-3, (shots, nt, 3)),
                  fpeak=25.0, **SMALL)
    for f in (pps.gradient, pps.migrate):
        seen.clear()
        got = f(v, progress=seen.append, **survey)
        assert seen == list(range(1, shots * 2 * nt + 1)), f.__name__
        want = f(v, **survey)
        assert np.asarray(got[-1] if f is pps.gradient else got).tobytes() == np.asarray(
            want[-1] if f is pps.gradient else want).tobytes()
    seen.clear()
    pps.gradient(v, memory=2 * 2 * v.size * 8, progress=seen.append, **survey)
    assert len(seen) > shots * 2 * nt
    assert seen == list(range(1, len(seen) + 1))


@pytest.mark.parametrize("memory", [None, 2 * 2 * 20 * 24 * 8])
def test_an_exception_from_progress_stops_the_call_and_is_raised(memory):
    """The callback's exception reaches the caller as it was raised (the same object), the
    callback is not called again, and nothing is returned."""

    class Stop(Exception):
        pass

    v = random_model((20, 24), 5)
    nt = 24
    observed = np.zeros((1, nt, 3))
    for stop_at in (1, nt, nt + 5):
        seen, raised = [], Stop(f"enough at {stop_at}")

        def progress(k):
            seen.append(k)
            if k == stop_at:
                raise raised

        result = None
        with pytest.raises(Stop) as e:
            result = pps.gradient(v, sources=[(9, 11)], observed=observed, memory=memory,
                                  progress=progress, **SMALL)
        assert e.value is raised and result is None
        assert seen == list(range(1, stop_at + 1))
    with pytest.raises(ZeroDivisionError):
        pps.forward(v, source=(9, 11), wavelet=np.ones(nt), progress=lambda k: 1 / 0, **SMALL)


@pytest.mark.parametrize("backend", ["serial", "rayon"])
def test_ctrl_c_interrupts_a_long_gradient(backend):
    """Ctrl-C (``interrupt_main`` from a timer thread after 0.3 s) stops a checkpointed
    gradient sized to take at least 8 s on the machine at hand, in a quarter of that.

    The time of a step comes from two short gradients of the same kind: their steps counted
    by ``progress``, their times measured without it, and the differences taken so that a
    call's fixed costs cancel. The extra steps are mostly forward steps run again, the
    cheapest kind, so ``2 * nt`` such steps take no longer than the long call's forward and
    adjoint sweeps alone. With rayon the steps run on the pool's threads, where Python sees
    no signals: the calling thread checks for them."""
    v = np.full((160, 160), 2500.0)
    rec = [(20, x) for x in range(20, 140, 20)]
    common = dict(dh=10.0, dt=0.001, sources=[(80, 80)], receivers=rec, absorb=10,
                  memory=4 * 2 * v.size * 8, backend=backend)

    def measured(nt):
        observed = np.zeros((1, nt, len(rec)))
        steps = []
        pps.gradient(v, observed=observed, progress=steps.append, **common)
        start = time.monotonic()
        pps.gradient(v, observed=observed, **common)
        return steps[-1], time.monotonic() - start

    (s1, t1), (s2, t2) = measured(100), measured(800)
    per_step = max((t2 - t1) / (s2 - s1), 1e-7)
    nt = max(1000, int(8.0 / (2 * per_step)))
    at_least = 2 * nt * per_step
    observed = np.zeros((1, nt, len(rec)))
    timer = threading.Timer(0.3, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            pps.gradient(v, observed=observed, **common)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    assert elapsed < at_least / 4, (elapsed, at_least)
