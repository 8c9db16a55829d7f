"""Type stubs of the Rust extension ``ppstencil._native`` (re-exported by ``ppstencil``).

Units: velocities [m/s], ``dh`` [m], ``dt`` [s], ``fpeak`` [Hz], ``pml_alpha`` [1/s].
Grid indices count from 0, z (depth) first: ``(z, x)`` in 2D, ``(z, y, x)`` in 3D.
"""

from typing import Callable, Literal, Optional, Sequence, Union, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "Error",
    "GridWarning",
    "LIBRARY_VERSION",
    "__version__",
    "BACKENDS_BUILT",
    "Simulation",
    "RunResult",
    "run",
    "cfl_limit",
    "gen",
    "stencil_names",
    "forward",
    "adjoint",
    "gradient",
    "migrate",
]
__version__: str
#: Version of the Rust library (``ppstencil`` crate) this build wraps.
LIBRARY_VERSION: str
#: Backends this build has: always "serial" and "rayon"; "cuda"/"hip" with those features.
BACKENDS_BUILT: list[str]

_Boundary = Literal["pml", "sponge", "rigid"]
_Precision = Literal["f32", "f64", "float32", "float64"]
_Backend = Literal["serial", "rayon", "cuda", "hip"]
_Kernels = Literal["fused", "split"]
_SourceMode = Literal["set", "add"]
_Numerics = Literal["exact", "fast"]
_Subnormals = Literal["flush", "keep"]
_GenBackend = Literal["serial", "rayon", "cuda", "hip", "dsl"]
_Points = Union[npt.ArrayLike, Sequence[int], Sequence[Sequence[int]]]
_Progress = Callable[[int, int], object]
# ``progress(steps)`` of the adjoint functions: the call's time steps so far.
_StepProgress = Callable[[int], object]

class Error(Exception):
    """A failure that is not bad input: a backend this build does not have, no device, a
    wavefield that stopped being finite, a call out of order. Bad input raises ValueError."""

class GridWarning(UserWarning):
    """What the grid cannot carry (the run is still valid): too few points per wavelength,
    a wavelet above the Nyquist frequency of ``dt``, a source or receivers inside the
    absorbing layer."""

@final
class Simulation:
    """One shot, advanced step by step, for your own time loop. The run is prepared (every
    parameter checked, fields allocated) when the object is made; see the module
    documentation of each parameter in ``help(ppstencil.Simulation)``."""

    def __new__(
        cls,
        velocity: npt.NDArray[np.floating],
        *,
        dh: float,
        nt: int,
        source: _Points,
        receivers: Optional[_Points] = None,
        dt: Optional[float] = None,
        cfl: Optional[float] = None,
        fpeak: float = 10.0,
        boundary: _Boundary = "pml",
        absorb: Optional[int] = None,
        space_order: int = 4,
        kernels: _Kernels = "fused",
        source_mode: _SourceMode = "set",
        source_delay: Optional[float] = None,
        pml_r: Optional[float] = None,
        pml_degree: Optional[float] = None,
        pml_alpha: Optional[float] = None,
        precision: _Precision = "f32",
        backend: _Backend = "rayon",
        threads: Optional[int] = None,
        time_block: Union[str, int, None] = None,
        numerics: _Numerics = "exact",
        subnormals: _Subnormals = "flush",
    ) -> Simulation: ...
    def step(self, n: int = 1) -> int:
        """Runs ``n`` more steps (GIL released); returns the steps done. Step ``nt``
        finishes the run."""
    def run(
        self,
        snapshots: Optional[Sequence[int]] = None,
        progress: Optional[_Progress] = None,
    ) -> Optional[npt.NDArray[np.floating]]:
        """Runs the remaining steps and finishes; returns the snapshots
        ``(len(steps), *shape)`` when ``snapshots`` is given."""
    def finish(self) -> None:
        """Ends the run before step ``nt`` (the seismogram holds the steps run)."""
    def reset(self) -> None:
        """Starts over from step 0 with the same parameters."""
    @property
    def wavefield(self) -> npt.NDArray[np.floating]:
        """The pressure after the steps run (a new array of ``shape``)."""
    @property
    def previous_wavefield(self) -> Optional[npt.NDArray[np.floating]]:
        """The pressure one step earlier, while the run is in progress."""
    @property
    def seismogram(self) -> npt.NDArray[np.floating]:
        """Traces ``(steps, receivers)`` once the run is finished (raises Error before)."""
    @property
    def velocity(self) -> npt.NDArray[np.floating]:
        """The model the run uses [m/s], in its precision."""
    @property
    def steps_done(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def nt(self) -> int: ...
    @property
    def dt(self) -> float:
        """Time step [s]."""
    @property
    def dh(self) -> float:
        """Grid spacing [m]."""
    @property
    def shape(self) -> list[int]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def source(self) -> list[int]: ...
    @property
    def receivers(self) -> npt.NDArray[np.int64]: ...
    @property
    def cfl(self) -> float:
        """``max(velocity) * dt / dh``."""
    @property
    def precision(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def threads(self) -> Optional[int]: ...
    @property
    def blocking(self) -> Optional[str]: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def wall_time_s(self) -> Optional[float]: ...

@final
class RunResult:
    """The results of :func:`run`, one entry per shot along the first axis."""

    seismograms: npt.NDArray[np.floating]
    """Traces ``(shots, nt, receivers)``; sample k at time ``(k + 1) * dt``."""
    wavefields: Optional[npt.NDArray[np.floating]]
    """Final wavefields ``(shots, *shape)``, or None with ``wavefields=False``."""
    snapshots: Optional[npt.NDArray[np.floating]]
    """``(shots, len(snapshot_steps), *shape)``, or None without snapshots."""
    snapshot_steps: npt.NDArray[np.int64]
    times: npt.NDArray[np.float64]
    """Sample times of the seismograms [s]."""
    dt: float
    dh: float
    nt: int
    shape: list[int]
    sources: npt.NDArray[np.int64]
    receivers: npt.NDArray[np.int64]
    wall_time_s: list[float]
    mpoints_per_s: list[float]
    blocking: Optional[str]
    warnings: list[str]
    precision: str
    backend: str
    threads: Optional[int]

def run(
    velocity: npt.NDArray[np.floating],
    *,
    dh: float,
    nt: int,
    sources: _Points,
    receivers: Optional[_Points] = None,
    snapshots: Optional[Sequence[int]] = None,
    wavefields: bool = True,
    progress: Optional[_Progress] = None,
    dt: Optional[float] = None,
    cfl: Optional[float] = None,
    fpeak: float = 10.0,
    boundary: _Boundary = "pml",
    absorb: Optional[int] = None,
    space_order: int = 4,
    kernels: _Kernels = "fused",
    source_mode: _SourceMode = "set",
    source_delay: Optional[float] = None,
    pml_r: Optional[float] = None,
    pml_degree: Optional[float] = None,
    pml_alpha: Optional[float] = None,
    precision: _Precision = "f32",
    backend: _Backend = "rayon",
    threads: Optional[int] = None,
    time_block: Union[str, int, None] = None,
    numerics: _Numerics = "exact",
    subnormals: _Subnormals = "flush",
) -> RunResult:
    """Models one or many shots with one model and returns the seismograms, final
    wavefields and snapshots as numpy arrays."""

def cfl_limit(space_order: int = 4, dims: int = 2) -> float:
    """The largest stable ``max(velocity) * dt / dh`` of the scheme."""

def gen(
    dsl: Optional[str] = None,
    backend: _GenBackend = "serial",
    stencil: Optional[str] = None,
) -> str:
    """The code generated for a DSL text (or the built-in kernels), as ``ppwave gen``."""

def stencil_names(dsl: Optional[str] = None) -> list[str]:
    """The stencils' names of a DSL text (or of the built-in kernels)."""

def forward(
    velocity: npt.NDArray[np.floating],
    *,
    dh: float,
    dt: float,
    source: _Points,
    wavelet: npt.NDArray[np.float64],
    receivers: _Points,
    boundary: Literal["sponge", "rigid"] = "sponge",
    absorb: Optional[int] = None,
    space_order: int = 4,
    precision: _Precision = "f64",
    backend: Literal["serial", "rayon"] = "rayon",
    threads: Optional[int] = None,
    progress: Optional[_StepProgress] = None,
) -> npt.NDArray[np.floating]:
    """``F m``: the traces ``(nt, receivers)`` of the wavelet ``wavelet`` (``nt`` values
    added at ``source`` after each step) with the additive source. ``progress(steps)`` is
    called after every time step (``nt`` in all); Ctrl-C, or an exception it raises, stops
    the call and is raised."""

def adjoint(
    velocity: npt.NDArray[np.floating],
    *,
    dh: float,
    dt: float,
    source: _Points,
    traces: npt.NDArray[np.float64],
    receivers: _Points,
    boundary: Literal["sponge", "rigid"] = "sponge",
    absorb: Optional[int] = None,
    space_order: int = 4,
    precision: _Precision = "f64",
    backend: Literal["serial", "rayon"] = "rayon",
    threads: Optional[int] = None,
    progress: Optional[_StepProgress] = None,
) -> npt.NDArray[np.floating]:
    """``F* d``: the exact adjoint of :func:`forward`, ``(nt,)`` from traces
    ``(nt, receivers)``: ``<F m, d> = <m, F* d>`` to rounding. ``progress`` as
    :func:`forward`'s."""

def gradient(
    velocity: npt.NDArray[np.floating],
    *,
    dh: float,
    dt: float,
    sources: _Points,
    observed: npt.NDArray[np.float64],
    receivers: _Points,
    wavelets: Optional[npt.NDArray[np.float64]] = None,
    fpeak: float = 10.0,
    source_delay: Optional[float] = None,
    memory: Optional[int] = None,
    boundary: Literal["sponge", "rigid"] = "sponge",
    absorb: Optional[int] = None,
    space_order: int = 4,
    precision: _Precision = "f64",
    backend: Literal["serial", "rayon"] = "rayon",
    threads: Optional[int] = None,
    progress: Optional[_StepProgress] = None,
) -> tuple[float, npt.NDArray[np.floating]]:
    """``(misfit, gradient)``: ``J = 1/2 sum ||F m - d_obs||^2`` over the shots
    (``observed`` ``(shots, nt, receivers)``) and its gradient with respect to the squared
    slowness [s^2/m^2] at every grid point; ``memory`` [bytes] bounds the stored forward
    wavefield (binomial checkpoints, the same result bit for bit). ``progress(steps)`` is
    called after every time step of every forward, adjoint and recomputed (checkpoint)
    sweep of every shot (``shots * 2 * nt`` in all with full storage, more with
    checkpoints); Ctrl-C, or an exception it raises, stops the call and is raised."""

def migrate(
    velocity: npt.NDArray[np.floating],
    *,
    dh: float,
    dt: float,
    sources: _Points,
    observed: npt.NDArray[np.float64],
    receivers: _Points,
    wavelets: Optional[npt.NDArray[np.float64]] = None,
    fpeak: float = 10.0,
    source_delay: Optional[float] = None,
    memory: Optional[int] = None,
    boundary: Literal["sponge", "rigid"] = "sponge",
    absorb: Optional[int] = None,
    space_order: int = 4,
    precision: _Precision = "f64",
    backend: Literal["serial", "rayon"] = "rayon",
    threads: Optional[int] = None,
    progress: Optional[_StepProgress] = None,
) -> npt.NDArray[np.floating]:
    """The reverse-time-migrated image (the grid's shape), as ``ppwave migrate`` writes it
    without ``--laplacian``. ``progress`` as :func:`gradient`'s."""
