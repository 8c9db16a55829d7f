"""Shared fixtures: small velocity models and the `ppwave` binary, the independent reference
the package's results are compared with bit for bit."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def find_ppwave() -> tuple[Path | None, str]:
    """The ppwave binary: $PPWAVE if set, else the newest of the repository's release and
    debug builds and one on PATH; with the reason when there is none."""
    env = os.environ.get("PPWAVE")
    if env:
        p = Path(env)
        if p.is_file() and os.access(p, os.X_OK):
            return p, ""
        return None, f"PPWAVE={env} is not an executable file"
    candidates = [
        REPO / "target" / "release" / "ppwave",
        REPO / "target" / "debug" / "ppwave",
    ]
    which = shutil.which("ppwave")
    if which:
        candidates.append(Path(which))
    found = [c for c in candidates if c.is_file() and os.access(c, os.X_OK)]
    if not found:
        return None, (
            "no ppwave binary (the reference for the bit-for-bit tests): build it with "
            "`cargo build --release -p ppwave` or set PPWAVE=/path/to/ppwave"
        )
    return max(found, key=lambda c: c.stat().st_mtime), ""


@pytest.fixture(scope="session")
def ppwave():
    """A function running `ppwave ARGS...` and returning its output directory; skips (or
    fails, with PPSTENCIL_REQUIRE_TOOLS=1 as CI sets) without the binary."""
    binary, why = find_ppwave()
    if binary is None:
        if os.environ.get("PPSTENCIL_REQUIRE_TOOLS") == "1":
            pytest.fail(why)
        pytest.skip(why)

    def call(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(binary), *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=300,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"ppwave {' '.join(map(str, args))} failed ({done.returncode}):\n{done.stderr}"
            )
        return done

    call.binary = binary
    return call


def layered_2d(nz: int = 70, nx: int = 90, dtype=np.float32) -> np.ndarray:
    """Three layers (2000, 2600, 3200 m/s) with a gentle lateral gradient, so that every
    row and column differ."""
    z = np.arange(nz)[:, None]
    x = np.arange(nx)[None, :]
    v = np.where(z < nz // 3, 2000.0, np.where(z < 2 * nz // 3, 2600.0, 3200.0)) + 2.0 * x
    return np.ascontiguousarray(v, dtype=dtype)


def layered_3d(nz: int = 40, ny: int = 34, nx: int = 38, dtype=np.float32) -> np.ndarray:
    z = np.arange(nz)[:, None, None]
    y = np.arange(ny)[None, :, None]
    x = np.arange(nx)[None, None, :]
    v = np.where(z < nz // 2, 2000.0, 2800.0) + 3.0 * x + 1.5 * y
    return np.ascontiguousarray(v, dtype=dtype)


@pytest.fixture
def model2d() -> np.ndarray:
    return layered_2d()


@pytest.fixture
def model3d() -> np.ndarray:
    return layered_3d()
