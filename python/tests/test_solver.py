"""The solver from Python without the reference binary: the step-level object against `run`,
backends, blocking and precisions against each other, the derived time step, callbacks,
the GIL released while steps run, Ctrl-C, and what is copied."""

from __future__ import annotations

import _thread
import threading
import time
import tracemalloc
import warnings

import numpy as np
import pytest

import ppstencil as pps
from conftest import layered_2d, layered_3d

COMMON = dict(dh=10.0, dt=0.001, fpeak=12.0, absorb=12)


def test_run_shapes_and_metadata(model2d):
    rec = pps.receiver_line(15, 20, 70, 5)
    r = pps.run(model2d, nt=80, sources=[(30, 40), (35, 50)], receivers=rec,
                snapshots=[80, 10, 10], **COMMON)
    assert r.seismograms.shape == (2, 80, len(rec)) and r.seismograms.dtype == np.float32
    assert r.wavefields.shape == (2, *model2d.shape)
    assert r.snapshots.shape == (2, 2, *model2d.shape)
    assert r.snapshot_steps.tolist() == [10, 80]
    np.testing.assert_array_equal(r.snapshots[:, 1], r.wavefields)
    np.testing.assert_allclose(r.times, np.arange(1, 81) * 0.001)
    assert r.sources.tolist() == [[30, 40], [35, 50]]
    assert r.receivers.tolist() == rec.tolist()
    assert r.dt == 0.001 and r.nt == 80 and r.shape == list(model2d.shape)
    assert len(r.wall_time_s) == 2 and all(w > 0 for w in r.wall_time_s)
    assert r.precision == "f32" and r.backend == "rayon" and r.threads >= 1
    assert "RunResult" in repr(r)
    # One shot: the same arrays with a leading axis of 1; a lone point is one shot.
    one = pps.run(model2d, nt=80, sources=(35, 50), receivers=rec, **COMMON)
    np.testing.assert_array_equal(one.seismograms[0], r.seismograms[1])


def test_step_level_equals_run(model2d):
    rec = pps.receiver_line(15, 20, 70, 5)
    r = pps.run(model2d, nt=100, sources=[(30, 40)], receivers=rec, snapshots=[33], **COMMON)
    sim = pps.Simulation(model2d, nt=100, source=(30, 40), receivers=rec, **COMMON)
    assert sim.steps_done == 0 and not sim.finished
    assert np.count_nonzero(sim.wavefield) == 0
    assert sim.step() == 1
    assert sim.step(32) == 33
    np.testing.assert_array_equal(sim.wavefield, r.snapshots[0, 0])
    assert sim.previous_wavefield.shape == tuple(model2d.shape)
    with pytest.raises(pps.Error, match="in progress"):
        sim.seismogram
    frames = sim.run(snapshots=[50, 20])
    assert frames.shape == (1, *model2d.shape)  # step 20 had already run
    assert sim.finished and sim.steps_done == 100 and sim.previous_wavefield is None
    np.testing.assert_array_equal(sim.wavefield, r.wavefields[0])
    np.testing.assert_array_equal(sim.seismogram, r.seismograms[0])
    assert sim.wall_time_s > 0
    with pytest.raises(pps.Error, match="finished"):
        sim.step()
    sim.reset()
    assert sim.steps_done == 0 and not sim.finished
    sim.run()
    np.testing.assert_array_equal(sim.seismogram, r.seismograms[0])


def test_finish_early_keeps_the_steps_run(model2d):
    rec = [(15, 30), (15, 60)]
    sim = pps.Simulation(model2d, nt=50, source=(30, 40), receivers=rec, **COMMON)
    sim.step(20)
    sim.finish()
    assert sim.finished and sim.seismogram.shape == (20, 2)
    full = pps.run(model2d, nt=50, sources=[(30, 40)], receivers=rec, **COMMON)
    np.testing.assert_array_equal(sim.seismogram, full.seismograms[0, :20])


def test_backends_blocking_and_threads_agree(model2d):
    base = pps.run(model2d, nt=70, sources=[(30, 40)], backend="serial", time_block="off",
                   **COMMON)
    for opts in [dict(backend="rayon"), dict(threads=2, time_block="7:6"),
                 dict(time_block=3)]:
        r = pps.run(model2d, nt=70, sources=[(30, 40)], **opts, **COMMON)
        np.testing.assert_array_equal(r.wavefields, base.wavefields, err_msg=str(opts))
    assert pps.run(model2d, nt=70, sources=[(30, 40)], time_block="7:6",
                   **COMMON).blocking.startswith("blocked")


def test_f64_and_float64_models(model2d):
    r32 = pps.run(model2d, nt=60, sources=[(30, 40)], **COMMON)
    r64 = pps.run(model2d, nt=60, sources=[(30, 40)], precision="f64", **COMMON)
    assert r64.wavefields.dtype == np.float64
    np.testing.assert_allclose(r64.wavefields, r32.wavefields, atol=1e-4 * np.abs(r64.wavefields).max())
    # A float64 model in an f32 run: the same as the float32 model it rounds to.
    r = pps.run(model2d.astype(np.float64), nt=60, sources=[(30, 40)], **COMMON)
    np.testing.assert_array_equal(r.wavefields, r32.wavefields)


def test_dt_from_the_cfl(model2d):
    sim = pps.Simulation(model2d, dh=10.0, nt=5, source=(30, 40))
    limit = pps.cfl_limit(4, 2)
    assert sim.dt == pytest.approx(0.5 * limit * 10.0 / float(model2d.max()))
    assert sim.cfl == pytest.approx(0.5 * limit)
    sim = pps.Simulation(model2d, dh=10.0, nt=5, source=(30, 40), cfl=0.3)
    assert sim.cfl == pytest.approx(0.3)
    assert pps.cfl_limit(8, 3) < pps.cfl_limit(4, 3) < pps.cfl_limit(4, 2)


def test_3d_step_level_and_run(model3d):
    rec = pps.receiver_line(10, 4, 30, 2, y=17)
    r = pps.run(model3d, dh=12.0, nt=40, dt=0.0012, sources=[(14, 16, 19)], receivers=rec, absorb=8)
    sim = pps.Simulation(model3d, dh=12.0, nt=40, dt=0.0012, source=(14, 16, 19),
                         receivers=rec, absorb=8, time_block=4)
    assert sim.ndim == 3 and sim.shape == list(model3d.shape) and sim.source == [14, 16, 19]
    sim.step(13)
    sim.run()
    np.testing.assert_array_equal(sim.wavefield, r.wavefields[0])
    np.testing.assert_array_equal(sim.seismogram, r.seismograms[0])
    assert sim.receivers.shape == (len(rec), 3)


def test_progress_callback(model2d):
    seen = []
    pps.run(model2d, nt=30, sources=[(30, 40), (30, 50)], time_block="off",
            progress=lambda done, total: seen.append((done, total)), **COMMON)
    assert seen == [(k, 60) for k in range(1, 61)]
    sim = pps.Simulation(model2d, nt=30, source=(30, 40), time_block="5:8", **COMMON)
    calls = []
    sim.run(progress=lambda d, n: calls.append(d))
    assert calls[-1] == 30 and calls == sorted(calls) and len(calls) <= 30


def test_progress_exception_stops_the_run(model2d):
    class Stop(Exception):
        pass

    def stop(done, total):
        if done == 5:
            raise Stop("enough")

    sim = pps.Simulation(model2d, nt=30, source=(30, 40), time_block="off", **COMMON)
    with pytest.raises(Stop):
        sim.run(progress=stop)
    assert sim.steps_done == 5 and not sim.finished
    sim.step(3)  # still usable
    assert sim.steps_done == 8


def big_simulation(nt: int = 1_000_000) -> pps.Simulation:
    v = np.full((300, 300), 2500.0, dtype=np.float32)
    return pps.Simulation(v, dh=10.0, nt=nt, dt=0.001, source=(150, 150), boundary="rigid",
                          backend="serial", time_block="off")


def test_ctrl_c_interrupts_a_long_run():
    sim = big_simulation()
    timer = threading.Timer(0.3, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.run()
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    assert elapsed < 5.0, elapsed
    done = sim.steps_done
    assert 0 < done < sim.nt and not sim.finished
    assert sim.step(2) == done + 2  # the run goes on where it stopped


def test_the_gil_is_released_while_steps_run():
    """A counting thread keeps counting while `step` runs: with the GIL held it would get at
    most a switch interval (5 ms) at the call's edges. The call is sized to last about 0.3 s
    on the machine at hand, and the count compared with the thread's own rate while the main
    thread sleeps, so the test holds on fast and slow hosts alike."""
    sim = big_simulation()
    ticks = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    start = time.monotonic()
    sim.step(20)
    per_step = (time.monotonic() - start) / 20
    steps = max(20, int(0.3 / per_step))
    t = threading.Thread(target=count)
    t.start()
    try:
        before = ticks[0]
        time.sleep(0.1)
        rate = (ticks[0] - before) / 0.1  # ticks per second with the GIL free
        before = ticks[0]
        start = time.monotonic()
        sim.step(steps)
        elapsed = time.monotonic() - start
        during = ticks[0] - before
    finally:
        stop.set()
        t.join()
    assert elapsed > 0.1, (elapsed, steps)
    # Held, the thread would count for at most ~0.01 s of the call; released, for most of it.
    assert during > 0.25 * rate * elapsed, (during, rate, elapsed)


def test_the_model_is_read_in_place_and_copied_once_by_the_library():
    """Zero-copy, honestly: the package makes no numpy copy of a float32/float64 C-ordered
    model (numpy's allocations are traced by tracemalloc: none the model's size); the
    library then holds its own copy in the run's precision (its fields own their memory),
    so the simulation does not share memory with the array and later changes to the array
    do not reach it."""
    v = np.full((1000, 1000), 2500.0, dtype=np.float32)  # 4 MB
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        sim = pps.Simulation(v, dh=10.0, nt=2, source=(500, 500), boundary="rigid",
                             backend="serial")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - before < v.nbytes // 4, (peak - before, v.nbytes)
    copy = sim.velocity
    assert not np.shares_memory(copy, v)
    v[:] = 1.0
    np.testing.assert_array_equal(sim.velocity, copy)
    # A model that needs converting (Fortran order) is refused rather than copied silently.
    with pytest.raises(ValueError, match="np.ascontiguousarray"):
        pps.Simulation(np.asfortranarray(copy), dh=10.0, nt=2, source=(500, 500))


def test_returned_arrays_are_owned_and_writable(model2d):
    sim = pps.Simulation(model2d, nt=3, source=(30, 40), **COMMON)
    w = sim.wavefield
    assert w.flags.c_contiguous and w.flags.writeable
    w[:] = 7.0  # a copy: the simulation is not touched
    assert np.count_nonzero(sim.wavefield) == 0


def test_grid_warnings_are_warnings_not_prints(model2d, capsys):
    with pytest.warns(pps.GridWarning, match="fpeak"):
        sim = pps.Simulation(model2d, dh=10.0, nt=5, dt=0.001, source=(30, 40), fpeak=80.0)
    assert any("fpeak" in w for w in sim.warnings)
    with pytest.warns(pps.GridWarning, match="inside the 12-cell pml layer"):
        pps.run(model2d, nt=5, sources=[(30, 40)], receivers=[(2, 40)], **COMMON)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pps.run(model2d, nt=5, sources=[(30, 40)], receivers=[(30, 50)], **COMMON)
    sim.run()
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_receiver_line_matches_ppwave_lines():
    np.testing.assert_array_equal(pps.receiver_line(10, 0, 20, 5)[:, 1], [0, 5, 10, 15, 20])
    assert pps.receiver_line(3, 1, 2, y=4).tolist() == [[3, 4, 1], [3, 4, 2]]
    with pytest.raises(ValueError):
        pps.receiver_line(3, 5, 1)
    with pytest.raises(ValueError):
        pps.receiver_line(3, 1, 5, step=0)
    with pytest.raises(ValueError):
        pps.receiver_line(-1, 1, 5)


def test_version_and_backends():
    assert pps.__version__ and pps.LIBRARY_VERSION
    assert {"serial", "rayon"} <= set(pps.BACKENDS_BUILT)


def test_sim_repr(model2d):
    sim = pps.Simulation(model2d, nt=3, source=(30, 40), **COMMON)
    assert "Simulation 2D" in repr(sim)
    assert sim.precision == "f32" and sim.backend == "rayon" and sim.dh == 10.0
    assert sim.blocking is not None and sim.threads >= 1 and sim.nt == 3
    assert layered_2d().shape == tuple(sim.shape) and layered_3d().ndim == 3


def test_one_simulation_from_two_threads_raises_instead_of_racing():
    """While one thread runs steps (GIL released), another thread's use of the same
    Simulation is refused (the object is borrowed: RuntimeError), not run concurrently."""
    sim = big_simulation(nt=10_000)
    errors = []
    running = threading.Event()

    def other():
        running.wait()
        deadline = time.monotonic() + 5.0
        while not errors and time.monotonic() < deadline:
            try:
                sim.wavefield
            except RuntimeError as e:  # pyo3's "already mutably borrowed"
                errors.append(str(e))
        try:
            sim.step(1)
        except (RuntimeError, pps.Error) as e:  # pps.Error if the run finished meanwhile
            errors.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    running.set()
    sim.step(10_000)
    t.join()
    assert len(errors) == 2 and "borrow" in errors[0], errors
    assert sim.steps_done == 10_000
