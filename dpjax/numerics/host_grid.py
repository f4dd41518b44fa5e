r"""Vectorised host (NumPy) twins of the traced bisection and zooming grid.

The traced searches (:func:`dpjax.numerics.bisect_bracket`,
:func:`dpjax.numerics.zoom_minimize`; their host bisection is
:func:`dpjax.numerics.bisect_host`) compile the whole loop with the objective inlined;
for a closed-form objective that NumPy evaluates in microseconds, the loop is cheaper on
the host than its compilation.  These run the same formulas over whole arrays of points
at once (every target times every grid point), in float64, with nothing compiled.
Generic numerics (no paper equation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpjax.numerics.constants import LOG_2


def log1mexp_host(x) -> np.ndarray:
    r"""``log(1 - e^x)`` for ``x <= 0`` in NumPy (``-inf`` at 0): the host twin of
    :func:`dpjax.numerics.log1mexp` (Maechler's two branches, split at ``-log 2``).

    .. math:: \log(1 - e^x) = \begin{cases} \log(-\mathrm{expm1}(x)) & x > -\log 2 \\
              \mathrm{log1p}(-e^x) & \text{otherwise} \end{cases}

    Args:
      x: ``x <= 0`` (larger values are clipped to 0).

    Example:
      >>> round(float(log1mexp_host(-1e-20)), 4)
      -46.0517
    """
    x = np.minimum(np.asarray(x, dtype=np.float64), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -LOG_2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_expm1_host(x) -> np.ndarray:
    r"""``log(e^x - 1)`` for ``x >= 0`` in NumPy (``-inf`` at 0): the host twin of
    :func:`dpjax.numerics.log_expm1`, ``x + log(1 - e^{-x})`` through :func:`log1mexp_host`.

    Args:
      x: ``x >= 0`` (smaller values are clipped to 0).

    Example:
      >>> round(float(log_expm1_host(1e-20)), 4), float(log_expm1_host(1000.0))
      (-46.0517, 1000.0)
    """
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    with np.errstate(invalid="ignore"):  # inf + log1p(-0) = inf
        return x + log1mexp_host(-x)


def zoom_minimize_array(
    objective: Callable[[np.ndarray], tuple[np.ndarray, Any]],
    grid: np.ndarray,
    num_rounds: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Row-wise zooming-grid minimisation (:func:`dpjax.numerics.zoom_minimize` on the host).

    Row ``n`` of ``grid`` is one problem.  Round 0 evaluates the row; round ``r > 0``
    evaluates ``m`` even points spanning the neighbours of round ``r - 1``'s minimum ``i``:

    .. math:: x^{(r)}_j = \ell + (u - \ell)\,\frac{j}{m - 1}, \qquad
              \ell = x^{(r-1)}_{\max(i - 1, 0)},\quad u = x^{(r-1)}_{\min(i + 1, m - 1)} ,

    keeping the best point over all rounds (strict improvement: ties keep the earlier
    point).  No smoothness or unimodality is assumed.

    Args:
      objective: ``points (n, m) -> (value (n, m), aux (n, m))``; ``inf`` marks an
        infeasible point.
      grid: ``(n, m)`` first-round points, increasing along each row.
      num_rounds: number of rounds (including the first).

    Returns:
      ``(x, value, aux)`` of the best point of each row (``value = inf`` and ``x``, ``aux``
      those of the row's first point where nothing was finite).

    Example:
      >>> grid = np.linspace(-1.0, 2.0, 9)[None, :]
      >>> x, v, _ = zoom_minimize_array(lambda p: (np.abs(p - 0.3), p), grid, 12)
      >>> round(float(x[0]), 6)
      0.3
    """
    pts = np.array(grid, dtype=np.float64)
    n, m = pts.shape
    rows = np.arange(n)
    frac = np.linspace(0.0, 1.0, m)
    best_x, best_v, best_aux = pts[:, 0].copy(), np.full(n, np.inf), None
    for _ in range(num_rounds):
        value, aux = objective(pts)
        value, aux = np.asarray(value, dtype=np.float64), np.asarray(aux, dtype=np.float64)
        if best_aux is None:
            best_aux = aux[:, 0].copy()
        i = np.argmin(value, axis=1)
        better = value[rows, i] < best_v
        best_x = np.where(better, pts[rows, i], best_x)
        best_v = np.where(better, value[rows, i], best_v)
        best_aux = np.where(better, aux[rows, i], best_aux)
        lo, hi = pts[rows, np.maximum(i - 1, 0)], pts[rows, np.minimum(i + 1, m - 1)]
        pts = lo[:, None] + (hi - lo)[:, None] * frac
    return best_x, best_v, best_aux
