"""Models one shot on a layered model and plots the shot gather.

    python python/examples/layered_shot.py [OUT.png]

Three layers (1800, 2600 and 3600 m/s) under a water-like top, a surface source and a line
of receivers 10 m deep; a PML on every side. Writes the gather (and a snapshot of the
wavefield) as a PNG with matplotlib's Agg backend; nothing is shown on screen.
"""

from __future__ import annotations

import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import ppstencil as pps  # noqa: E402


def layered_model(nz: int = 240, nx: int = 480) -> np.ndarray:
    """Velocities in m/s, shape (nz, nx): layers with a dipping second interface."""
    v = np.empty((nz, nx), dtype=np.float32)
    z = np.arange(nz)[:, None]
    x = np.arange(nx)[None, :]
    dip = 120 + (x - nx // 2) // 8  # the second interface dips to the right
    v[...] = 1500.0
    v[np.broadcast_to(z >= 40, v.shape)] = 1800.0
    v[np.broadcast_to(z >= dip, v.shape)] = 2600.0
    v[np.broadcast_to(z >= 190, v.shape)] = 3600.0
    return v


def main(out: str = "layered_shot.png") -> None:
    v = layered_model()
    dh = 5.0  # m
    nz, nx = v.shape
    absorb = 30
    source = (absorb + 2, nx // 2)
    receivers = pps.receiver_line(absorb + 2, absorb, nx - absorb - 1, 2)
    t0 = time.perf_counter()
    result = pps.run(
        v,
        dh=dh,
        nt=2600,
        fpeak=25.0,  # Hz
        sources=[source],
        receivers=receivers,
        absorb=absorb,
        source_mode="add",  # a physical point source (a delayed Ricker wavelet)
        snapshots=[700],
    )
    elapsed = time.perf_counter() - t0
    assert result.snapshots is not None  # asked for with `snapshots`
    gather = result.seismograms[0]  # (nt, receivers)
    offsets = (receivers[:, 1] - source[1]) * dh

    fig, (ax_v, ax_g) = plt.subplots(1, 2, figsize=(12, 5), width_ratios=[1.1, 1])
    extent_v = [0, nx * dh, nz * dh, 0]
    ax_v.imshow(v, cmap="viridis", extent=extent_v, aspect="auto")
    snap = result.snapshots[0, 0]
    clip_s = np.percentile(np.abs(snap), 99.5) or 1.0
    ax_v.imshow(snap, cmap="gray", extent=extent_v, aspect="auto", alpha=0.5,
                vmin=-clip_s, vmax=clip_s)
    ax_v.plot(source[1] * dh, source[0] * dh, "r*", ms=12)
    ax_v.set(title=f"Model and wavefield after {700 * result.dt:.3f} s",
             xlabel="x [m]", ylabel="depth [m]")

    gained = gather * result.times[:, None] ** 2  # t^2 gain: the later reflections show
    clip = np.percentile(np.abs(gained), 98.0) or 1.0
    ax_g.imshow(gained, cmap="gray", aspect="auto", vmin=-clip, vmax=clip,
                extent=[offsets[0], offsets[-1], result.times[-1], result.times[0]])
    ax_g.set(title="Shot gather (pressure, t² gain)", xlabel="offset [m]", ylabel="time [s]")
    fig.suptitle(f"ppstencil: {nz} x {nx} grid, {result.nt} steps of {result.dt * 1e3:.3f} ms "
                 f"in {elapsed:.2f} s on {result.backend}")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
