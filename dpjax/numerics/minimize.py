r"""Fixed-iteration 1-D minimisation, fair under ``vmap``: a zooming grid and golden section.

The calibrations search a noise *shape* for the least variance, with the least private
scale found per shape by bisection (:mod:`dpjax.numerics.roots`).  The variance as a
function of the shape need not be smooth (the optimum may sit on a kink where two
privacy constraints bind together), so the shape search assumes no derivative:

* :func:`zoom_minimize`: evaluate a grid of points (one vectorised call), keep the best
  point seen, and zoom into the two cells around the grid minimum with an even grid of
  the same size; a fixed number of rounds (the bracket shrinks by ``(m - 1) / 2`` per
  round for ``m`` points).  No unimodality is assumed within the first grid.
* :func:`golden_section`: the classic golden-section search for a unimodal function.

Both run a fixed number of steps (the same work at every point of a vmapped grid) and
trace the objective once.  :func:`zoom_minimize_array` is the zooming grid's NumPy twin
for closed-form objectives (every row of a table at once, nothing compiled).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

#: ``1 / phi = (sqrt 5 - 1) / 2``, the golden-section ratio.
INV_PHI = 0.6180339887498949


class ZoomResult(NamedTuple):
    """Result of :func:`zoom_minimize`.

    Attributes:
      x: the best point evaluated (``x0`` if no value was below ``inf``).
      value: the objective there (``inf`` if none was finite).
      aux: the auxiliary output of the objective there (``aux0`` if none).
    """

    x: Array
    value: Array
    aux: Any


def zoom_minimize(
    objective: Callable[[Array], tuple[Array, Any]],
    grid: ArrayLike,
    num_rounds: int,
    x0: ArrayLike,
    aux0: Any,
) -> ZoomResult:
    r"""Minimise ``objective`` over an interval by a zooming grid (no smoothness assumed).

    Round 0 evaluates the ``m`` points of ``grid``; round ``r > 0`` evaluates ``m`` even
    points spanning the neighbours of round ``r - 1``'s minimum ``i``:

    .. math:: x^{(r)}_j = \ell + (u - \ell)\,\frac{j}{m - 1}, \qquad
              \ell = x^{(r-1)}_{\max(i - 1, 0)},\quad u = x^{(r-1)}_{\min(i + 1, m - 1)} .

    The best point over all rounds is kept (strict improvement, so ties keep the
    earlier point).  Generic numerics (no paper equation): the shape searches of the
    1-D calibrations (Sec. V of flipped-huber-mechanism: least variance over the
    shape, each shape at its least private scale).

    Args:
      objective: ``objective(x) -> (value, aux)`` for a scalar point ``x`` (traceable;
        vmapped over a round's points); ``inf`` marks an infeasible point.
      grid: 1-D array of the first round's points (increasing).
      num_rounds: static number of rounds (including the first).
      x0: point returned when no value is below ``inf``.
      aux0: auxiliary value returned then (shaped like ``objective``'s ``aux``).

    Returns:
      A :class:`ZoomResult` ``(x, value, aux)`` of the best point evaluated.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> grid = jnp.linspace(-1.0, 2.0, 9)
      >>> res = zoom_minimize(lambda x: (jnp.abs(x - 0.3), x), grid, 12, 0.0, 0.0)
      >>> round(float(res.x), 6)
      0.3
    """
    grid = jnp.asarray(grid)
    m = grid.shape[0]
    frac = jnp.linspace(0.0, 1.0, m)

    def round_(r, carry):
        lo, hi, best_x, best_value, best_aux = carry
        pts = jnp.where(r == 0, grid, lo + (hi - lo) * frac)
        value, aux = jax.vmap(objective)(pts)
        i = jnp.argmin(value)
        better = value[i] < best_value
        return (
            pts[jnp.maximum(i - 1, 0)],
            pts[jnp.minimum(i + 1, m - 1)],
            jnp.where(better, pts[i], best_x),
            jnp.where(better, value[i], best_value),
            jax.tree_util.tree_map(lambda a, b: jnp.where(better, a[i], b), aux, best_aux),
        )

    init = (
        grid[0],
        grid[-1],
        jnp.asarray(x0, grid.dtype),
        jnp.asarray(jnp.inf, grid.dtype),
        jax.tree_util.tree_map(jnp.asarray, aux0),
    )
    _, _, x, value, aux = jax.lax.fori_loop(0, num_rounds, round_, init)
    return ZoomResult(x, value, aux)


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


def golden_section(
    f: Callable[[Array], Array], lo: ArrayLike, hi: ArrayLike, num_iterations: int
) -> tuple[Array, Array]:
    r"""Golden-section search for the minimum of a unimodal ``f`` on ``[lo, hi]`` (elementwise).

    Each step compares ``f`` at the two interior points and keeps the sub-interval holding
    the smaller value (ties keep the left one):

    .. math:: c = b - \varphi^{-1}(b - a), \quad d = a + \varphi^{-1}(b - a), \qquad
              [a, b] \leftarrow \begin{cases} [a, d] & f(c) \le f(d) \\ [c, b] &
              \text{otherwise,} \end{cases}

    shrinking the bracket by ``1 / phi ~ 0.618`` per step.  Generic numerics (no paper
    equation).

    Args:
      f: elementwise objective (traceable), unimodal on the bracket.
      lo: left end (array; broadcast with ``hi``).
      hi: right end.
      num_iterations: static number of steps.

    Returns:
      ``(a, b)``: the final bracket around the minimiser.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> a, b = golden_section(lambda x: (x - 0.25) ** 2, 0.0, 1.0, 60)
      >>> round(float(0.5 * (a + b)), 8)
      0.25
    """
    lo, hi = jnp.broadcast_arrays(jnp.asarray(lo), jnp.asarray(hi))

    def body(_, carry):
        a, b = carry
        c = b - INV_PHI * (b - a)
        d = a + INV_PHI * (b - a)
        left = f(c) <= f(d)
        return jnp.where(left, a, c), jnp.where(left, d, b)

    return jax.lax.fori_loop(0, num_iterations, body, (lo, hi))
