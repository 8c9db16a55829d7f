"""The cost of calling the solver from Python against `ppwave run`'s time loop, on the same
problem in one process run: the paper's grid (1751 x 5001, its layers, source and dt) with
fewer steps, f32, rigid border, rayon, `time_block` auto, as `ppwave run` runs it by default.

    python python/bench/overhead.py --ppwave target/release/ppwave [--nt 200] [--repeat 3]

Each repetition runs `ppwave run` (its time loop: run.json's wall_time_s, measured by the
library from `prepare` to `finish`) and then `ppstencil.run` (timed around the whole Python
call: reading the model, preparing, the steps, the results made numpy arrays; and the
library's own time of its loop, RunResult.wall_time_s); the order alternates between
repetitions. Prints the minimum (the least disturbed on a shared machine) and the median of
each, their ratios, and whether the wavefields are equal bit for bit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import ppstencil as pps


def paper_model() -> np.ndarray:
    v = np.full((1751, 5001), 1500.0, dtype=np.float32)
    v[750:1125] = 3000.0
    v[1125:] = 4800.0
    return v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ppwave", required=True, help="the ppwave binary (a release build)")
    ap.add_argument("--nt", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    v = paper_model()
    loop_ppwave, call_py, loop_py = [], [], []
    equal = True
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(a.repeat):
            out = Path(tmp) / f"run{k}"

            def with_ppwave() -> None:
                subprocess.run(
                    [a.ppwave, "run", "--nt", str(a.nt), "--out", str(out)],
                    check=True, capture_output=True,
                )
                loop_ppwave.append(json.loads((out / "run.json").read_text())["wall_time_s"])

            def with_python() -> pps.RunResult:
                t0 = time.perf_counter()
                r = pps.run(v, dh=3.0, nt=a.nt, dt=0.0002, sources=[(625, 2500)],
                            boundary="rigid", wavefields=True)
                call_py.append(time.perf_counter() - t0)
                loop_py.append(r.wall_time_s[0])
                return r

            if k % 2 == 0:
                with_ppwave()
                r = with_python()
            else:
                r = with_python()
                with_ppwave()
            assert r.wavefields is not None
            equal &= np.load(out / "wavefield.npy").tobytes() == r.wavefields[0].tobytes()
            print(f"repeat {k + 1}: ppwave loop {loop_ppwave[-1]:.3f} s, "
                  f"Python call {call_py[-1]:.3f} s (its loop {loop_py[-1]:.3f} s)", flush=True)
    print(f"grid 1751 x 5001, nt {a.nt}, f32, rayon ({r.threads} threads), {r.blocking}")
    for name, f in (("minimum", min), ("median", statistics.median)):
        base = f(loop_ppwave)
        print(f"{name:8} ppwave time loop {base:.3f} s | Python call {f(call_py):.3f} s, "
              f"ratio {f(call_py) / base:.3f} | its library loop {f(loop_py):.3f} s, "
              f"ratio {f(loop_py) / base:.3f}")
    print(f"wavefields equal bit for bit: {equal}")


if __name__ == "__main__":
    main()
