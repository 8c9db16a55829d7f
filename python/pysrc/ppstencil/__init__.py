"""ppstencil from Python: the acoustic wave solver (2D and 3D) over numpy arrays, and the
stencil DSL's code generator.

- :func:`run` models one or many shots and returns seismograms ``(shots, nt, receivers)``,
  final wavefields and snapshots as numpy arrays.
- :class:`Simulation` is one shot advanced step by step (``sim.step(n)``,
  ``sim.wavefield``) for your own time loop.
- :func:`forward`, :func:`adjoint` (its exact transpose), :func:`gradient` (the misfit's
  gradient with respect to squared slowness, over shots, with optional checkpointing) and
  :func:`migrate` (the RTM image): the adjoint-state building blocks of RTM and FWI.
- :func:`gen` returns the code generated for a stencil DSL text, as ``ppwave gen`` prints it.

Units: velocities in m/s, grid spacing ``dh`` in m, time step ``dt`` in s, frequencies in Hz.
Grid indices count from 0 with z (depth) first: ``(z, x)`` in 2D, ``(z, y, x)`` in 3D, the
velocity model's shape being ``(nz, nx)`` or ``(nz, ny, nx)``.

Bad input raises ``ValueError`` (the message names the argument and the fix); other
failures raise :class:`Error`. Nothing is printed: what the grid cannot carry is issued as
:class:`GridWarning` and progress goes to an optional callback.
"""

from __future__ import annotations

import numpy as np

from ._native import (
    BACKENDS_BUILT,
    LIBRARY_VERSION,
    Error,
    GridWarning,
    RunResult,
    Simulation,
    __version__,
    adjoint,
    cfl_limit,
    forward,
    gen,
    gradient,
    migrate,
    run,
    stencil_names,
)

__all__ = [
    "BACKENDS_BUILT",
    "LIBRARY_VERSION",
    "Error",
    "GridWarning",
    "RunResult",
    "Simulation",
    "__version__",
    "adjoint",
    "cfl_limit",
    "forward",
    "gen",
    "gradient",
    "migrate",
    "receiver_line",
    "run",
    "stencil_names",
]


def receiver_line(z: int, x0: int, x1: int, step: int = 1, y: int | None = None) -> np.ndarray:
    """A horizontal line of receivers, as ``ppwave run --receivers Z:X0:X1:STEP`` (or
    ``Z:Y:X0:X1:STEP`` in 3D) makes it: row ``z`` (and plane ``y`` in 3D), columns ``x0``,
    ``x0 + step``, ... up to and including ``x1`` when the step lands on it.

    Returns an int64 array of shape ``(n, 2)`` (``(z, x)``), or ``(n, 3)`` (``(z, y, x)``)
    when ``y`` is given: the ``receivers`` argument of :func:`run` and :class:`Simulation`.
    """
    for name, v in (("z", z), ("x0", x0), ("x1", x1), ("step", step), ("y", y)):
        if v is not None and (not isinstance(v, (int, np.integer)) or v < 0):
            raise ValueError(f"invalid {name} = {v!r}: a grid index (a whole number >= 0)")
    if x0 > x1:
        raise ValueError(f"invalid x0 = {x0}: x0 must not be greater than x1 = {x1}")
    if step < 1:
        raise ValueError(f"invalid step = {step}: use a step of at least 1 column")
    xs = np.arange(x0, x1 + 1, step, dtype=np.int64)
    cols = [np.full_like(xs, z)] + ([np.full_like(xs, y)] if y is not None else []) + [xs]
    return np.stack(cols, axis=1)
