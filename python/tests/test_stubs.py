"""The type stubs (`_native.pyi`) agree with the extension as built (mypy's stubtest: every
name, parameter and default), and the example type-checks against them in strict mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mypy():
    try:
        import mypy  # noqa: F401
    except ImportError:
        if os.environ.get("PPSTENCIL_REQUIRE_TOOLS") == "1":  # CI installs every tool
            pytest.fail("mypy is not installed (pip install mypy)")
        pytest.skip("mypy is not installed (pip install mypy): the stubs are not checked")

    def call(*args: str) -> None:
        done = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                              cwd=PYTHON_DIR, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr

    return call


def test_stubs_match_the_extension(mypy):
    mypy("mypy.stubtest", "ppstencil")


def test_example_type_checks(mypy):
    mypy("mypy", "--strict", "--ignore-missing-imports", "--no-incremental",
         "examples/layered_shot.py", "bench/overhead.py")
