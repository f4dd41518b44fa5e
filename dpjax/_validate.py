"""Input validation shared by every public entry point.

Each check raises ``ValueError`` naming the argument, the offending value and
what is allowed (DESIGN.md, "Errors").  Checks run on concrete host values
(the façade layer); kernels themselves never branch on data.
"""

from __future__ import annotations

import numpy as np


def _as_array(name: str, value) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a real number or array of real numbers, got {value!r}"
        ) from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got {value!r}")
    return arr


def _first_bad(arr: np.ndarray, bad: np.ndarray):
    return arr[bad].flat[0] if np.ndim(arr) else float(arr)


def epsilon(value, name: str = "epsilon") -> np.ndarray:
    """epsilon >= 0 and finite (``inf`` is not a privacy guarantee)."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0)
    if np.any(bad):
        raise ValueError(f"{name} must be finite and >= 0, got {_first_bad(arr, bad)!r}")
    return arr


def delta(value, name: str = "delta") -> np.ndarray:
    """delta in [0, 1)."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr >= 1)
    if np.any(bad):
        raise ValueError(f"{name} must lie in [0, 1), got {_first_bad(arr, bad)!r}")
    return arr


def positive(value, name: str) -> np.ndarray:
    """A finite, strictly positive real (scales, sensitivities)."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr <= 0)
    if np.any(bad):
        raise ValueError(f"{name} must be finite and > 0, got {_first_bad(arr, bad)!r}")
    return arr


def nonnegative(value, name: str) -> np.ndarray:
    """A finite real >= 0 (e.g. a flipped Huber alpha)."""
    arr = _as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0)
    if np.any(bad):
        raise ValueError(f"{name} must be finite and >= 0, got {_first_bad(arr, bad)!r}")
    return arr


def positive_int(value, name: str) -> int:
    """An integer >= 1 (dimensions, numbers of compositions)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def probability(value, name: str) -> float:
    """A sampling rate in (0, 1]."""
    arr = _as_array(name, value)
    if arr.ndim or not np.isfinite(arr) or not (0 < arr <= 1):
        raise ValueError(f"{name} must be a single number in (0, 1], got {value!r}")
    return float(arr)


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together or raise a ValueError naming the shapes."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from None
