"""Input validation shared by every public entry point.

Each check raises ``ValueError`` naming the argument, the offending value and
what is allowed (DESIGN.md, "Errors").  Checks run on concrete host values
(the façade layer); kernels themselves never branch on data.

Only real numbers are numbers here: strings (``"0.3"``), booleans and
complex values are rejected rather than converted.  Positive quantities
(scales, sensitivities) must be *normal* float64 numbers: XLA flushes
subnormals (below ``2.2250738585072014e-308``) to zero, which would turn a
noise scale into "no noise" inside a kernel.
"""

from __future__ import annotations

import numpy as np

#: Smallest positive normal float64 (XLA flushes anything smaller to zero).
TINY = float(np.finfo(np.float64).tiny)
#: Largest composition count accepted (it is converted to float64 for closed forms).
MAX_COMPOSITIONS = 10**300


def _as_array(name: str, value) -> np.ndarray:
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raw = None
    if raw is None or raw.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be a real number or array of real numbers (not a string, boolean "
            f"or complex), got {value!r}"
        )
    arr = raw.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got {value!r}")
    return arr


def _first_bad(arr: np.ndarray, bad: np.ndarray):
    return arr[bad].flat[0] if np.ndim(arr) else float(arr)


def _subnormal(arr: np.ndarray) -> np.ndarray:
    return (arr > 0) & (arr < TINY)


def _raise(name: str, allowed: str, arr: np.ndarray, bad: np.ndarray):
    value = _first_bad(arr, bad)
    note = (
        f" (a subnormal float64, which XLA flushes to 0; the least positive value allowed is "
        f"{TINY!r})"
        if 0 < abs(value) < TINY
        else ""
    )
    raise ValueError(f"{name} must {allowed}, got {value!r}{note}")


def epsilon(value, name: str = "epsilon") -> np.ndarray:
    """epsilon >= 0 and finite (``inf`` is not a privacy guarantee); 0 or a normal float64."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0) | _subnormal(arr)
    if np.any(bad):
        _raise(name, "be finite and >= 0", arr, bad)
    return arr


def delta(value, name: str = "delta") -> np.ndarray:
    """delta in [0, 1): 0 or a normal float64."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr >= 1) | _subnormal(arr)
    if np.any(bad):
        _raise(name, "lie in [0, 1)", arr, bad)
    return arr


def positive(value, name: str) -> np.ndarray:
    """A finite real ``>= 2.2250738585072014e-308`` (scales, sensitivities: normal float64)."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < TINY)
    if np.any(bad):
        _raise(name, "be finite and > 0", arr, bad)
    return arr


def nonnegative(value, name: str) -> np.ndarray:
    """A finite real that is 0 or a normal float64 ``>= 2.2e-308`` (e.g. a flipped Huber alpha)."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0) | _subnormal(arr)
    if np.any(bad):
        _raise(name, "be finite and >= 0", arr, bad)
    return arr


def positive_int(value, name: str, maximum: int | None = None) -> int:
    """An integer ``>= 1`` (and ``<= maximum`` if given): dimensions, numbers of compositions."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be an integer in [1, {maximum:.0e}], got {value!r}")
    return int(value)


def probability(value, name: str) -> float:
    """A sampling rate in (0, 1] (a normal float64, >= 2.2e-308)."""
    arr = _as_array(name, value)
    if arr.ndim or not np.isfinite(arr) or not (TINY <= arr <= 1):
        raise ValueError(f"{name} must be a single number in (0, 1] (>= {TINY!r}), got {value!r}")
    return float(arr)


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together or raise a ValueError naming the shapes."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from None
