"""The package's results equal the Rust library's bit for bit: the reference is the `ppwave`
binary (an independent program on the same library), run on the same inputs (the model
written as .npy, the same options), its .npy outputs compared with the package's arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ppstencil as pps
from conftest import layered_2d, layered_3d


def same(a: np.ndarray, b: np.ndarray) -> None:
    """Equal bit for bit: same dtype, shape and bytes (NaN-safe, -0.0 told from 0.0)."""
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), f"max |diff| = {np.max(np.abs(a.astype(np.float64) - b)):.3e}"


def write_receivers(path: Path, rec: np.ndarray) -> Path:
    path.write_text("".join(f"{z} {x}\n" for z, x in rec))
    return path


CASES_2D = [
    # id, python options, ppwave flags
    (
        "pml-f32-rayon",
        dict(boundary="pml", absorb=12, precision="f32", backend="rayon"),
        ["--absorb", "12", "--boundary", "pml", "--precision", "f32", "--backend", "rayon"],
    ),
    (
        "sponge-f64-serial-add",
        dict(boundary="sponge", absorb=10, precision="f64", backend="serial",
             source_mode="add", source_delay=0.03),
        ["--absorb", "10", "--boundary", "sponge", "--precision", "f64", "--backend", "serial",
         "--source-mode", "add", "--source-delay", "0.03"],
    ),
    (
        "rigid-split-off-threads2",
        dict(boundary="rigid", space_order=4, kernels="split", time_block="off", threads=2),
        ["--boundary", "rigid", "--space-order", "4", "--kernels", "split",
         "--time-block", "off", "--threads", "2"],
    ),
    (
        "rigid-order8-blocked",
        dict(boundary="rigid", space_order=8, time_block="4:8"),
        ["--boundary", "rigid", "--space-order", "8", "--time-block", "4:8"],
    ),
    (
        "fast-keep-blocked",
        dict(boundary="pml", absorb=12, numerics="fast", subnormals="keep", time_block="4:8"),
        ["--absorb", "12", "--numerics", "fast", "--subnormals", "keep", "--time-block", "4:8"],
    ),
    (
        "sponge-fast-serial",
        dict(boundary="sponge", absorb=10, numerics="fast", backend="serial"),
        ["--absorb", "10", "--boundary", "sponge", "--numerics", "fast", "--backend", "serial"],
    ),
    (
        "pml-order6-blocked-f64",
        dict(boundary="pml", absorb=14, space_order=6, time_block=5, precision="f64",
             pml_r=1e-3, pml_degree=3.0, pml_alpha=20.0),
        ["--absorb", "14", "--space-order", "6", "--time-block", "5", "--precision", "f64",
         "--pml-r", "0.001", "--pml-degree", "3", "--pml-alpha", "20"],
    ),
]


@pytest.mark.parametrize("name,opts,flags", CASES_2D, ids=[c[0] for c in CASES_2D])
def test_2d_equals_ppwave(ppwave, tmp_path, name, opts, flags):
    # The model's dtype need not be the run's: float64 models in f32 runs are rounded as
    # ppwave rounds them.
    v = layered_2d(dtype=np.float64 if "f64" in name or "split" in name else np.float32)
    np.save(tmp_path / "v.npy", v)
    rec = pps.receiver_line(16, 3, 86, 7)
    write_receivers(tmp_path / "rec.txt", rec)
    nt, dt, dh, fpeak, src = 150, 0.0011, 10.0, 14.0, (30, 41)
    r = pps.run(v, dh=dh, nt=nt, dt=dt, fpeak=fpeak, sources=[src], receivers=rec,
                snapshots=[37, 100], **opts)
    out = tmp_path / "out"
    ppwave("run", "--velocity", tmp_path / "v.npy", "--receiver-file", tmp_path / "rec.txt",
           "--nt", nt, "--dt", repr(dt), "--dh", repr(dh), "--fpeak", repr(fpeak),
           "--src-z", src[0], "--src-x", src[1], "--out", out, *flags)
    same(r.wavefields[0], np.load(out / "wavefield.npy"))
    same(r.seismograms[0], np.load(out / "seismogram.npy"))
    assert np.abs(r.seismograms).max() > 0
    # The snapshots against a second ppwave run writing every 37th step: step 37 is in both.
    out2 = tmp_path / "out2"
    ppwave("run", "--velocity", tmp_path / "v.npy", "--nt", 37, "--dt", repr(dt),
           "--dh", repr(dh), "--fpeak", repr(fpeak), "--src-z", src[0], "--src-x", src[1],
           "--snapshot-every", 37, "--out", out2, *flags)
    same(r.snapshots[0, 0], np.load(out2 / "snapshots" / "00037.npy"))
    same(r.snapshots[0, 0], np.load(out2 / "wavefield.npy"))


def test_2d_step_level_equals_ppwave(ppwave, tmp_path):
    """A user's own loop (`step` in uneven chunks, reading the wavefield between) ends at
    ppwave's wavefield and seismogram, with temporal blocking on."""
    v = layered_2d()
    np.save(tmp_path / "v.npy", v)
    rec = pps.receiver_line(20, 25, 85, 3)
    write_receivers(tmp_path / "rec.txt", rec)
    sim = pps.Simulation(v, dh=10.0, nt=120, dt=0.001, fpeak=12.0, source=(35, 45),
                         receivers=rec, absorb=12, time_block="6:10")
    for n in (1, 7, 30, 2, 80):
        sim.step(n)
        _ = sim.wavefield
    assert sim.finished and sim.steps_done == 120
    out = tmp_path / "out"
    ppwave("run", "--velocity", tmp_path / "v.npy", "--receiver-file", tmp_path / "rec.txt",
           "--nt", 120, "--dt", "0.001", "--dh", "10", "--fpeak", "12", "--src-z", 35,
           "--src-x", 45, "--absorb", 12, "--time-block", "6:10", "--out", out)
    same(sim.wavefield, np.load(out / "wavefield.npy"))
    same(sim.seismogram, np.load(out / "seismogram.npy"))
    same(sim.velocity, np.load(out / "velocity.npy"))


@pytest.mark.parametrize("precision,numerics", [("f32", "exact"), ("f64", "exact"), ("f32", "fast")])
def test_3d_equals_ppwave(ppwave, tmp_path, precision, numerics):
    dtype = np.float32 if precision == "f32" else np.float64
    v = layered_3d(dtype=dtype)
    np.save(tmp_path / "v.npy", v)
    nz, ny, nx = v.shape
    rec = pps.receiver_line(12, 4, 33, 4, y=17)
    nt, dt, dh, src = 60, 0.0012, 12.0, (14, 16, 19)
    r = pps.run(v, dh=dh, nt=nt, dt=dt, fpeak=9.0, sources=[src], receivers=rec,
                absorb=8, precision=precision, numerics=numerics, snapshots=[20])
    out = tmp_path / "out"
    ppwave("run", "--velocity", tmp_path / "v.npy", "--ny", ny, "--receivers", "12:17:4:33:4",
           "--nt", nt, "--dt", repr(dt), "--dh", repr(dh), "--fpeak", "9",
           "--src-z", src[0], "--src-y", src[1], "--src-x", src[2], "--absorb", 8,
           "--precision", precision, "--numerics", numerics, "--out", out)
    same(r.wavefields[0], np.load(out / "wavefield.npy"))
    same(r.seismograms[0], np.load(out / "seismogram.npy"))
    assert r.wavefields.shape == (1, nz, ny, nx)
    assert np.abs(r.seismograms).max() > 0


def test_many_shots_equal_ppwave_shots(ppwave, tmp_path):
    """`sources` with several shots against `ppwave run --shots` (f32, one model)."""
    v = layered_2d()
    np.save(tmp_path / "v.npy", v)
    rec = pps.receiver_line(15, 10, 80, 10)
    write_receivers(tmp_path / "rec.txt", rec)
    shots = np.array([[30, 20], [30, 45], [40, 70]])
    (tmp_path / "shots.txt").write_text("".join(f"{z} {x}\n" for z, x in shots))
    r = pps.run(v, dh=10.0, nt=90, dt=0.001, sources=shots, receivers=rec, absorb=12,
                wavefields=False)
    assert r.wavefields is None and r.seismograms.shape == (3, 90, len(rec))
    out = tmp_path / "out"
    ppwave("run", "--velocity", tmp_path / "v.npy", "--receiver-file", tmp_path / "rec.txt",
           "--shots", tmp_path / "shots.txt", "--nt", 90, "--dt", "0.001", "--dh", "10",
           "--absorb", 12, "--out", out)
    for k in range(3):
        same(r.seismograms[k], np.load(out / f"shot-{k + 1:04d}" / "seismogram.npy"))
    assert not np.array_equal(r.seismograms[0], r.seismograms[1])
