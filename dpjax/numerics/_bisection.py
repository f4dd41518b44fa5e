"""Fixed-iteration bisection for monotone predicates, fair under ``vmap``.

Calibration asks "the least scale at which the target is met" for a whole
grid of targets at once.  A fixed number of halvings does the same work at
every grid point (no data-dependent trip count under ``vmap``), and a status
code per point replaces exceptions, so one infeasible point does not kill
the grid (STYLE.md item 5; cf. ``optimistix/_solver/bisection.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

#: The predicate holds at the returned ``good`` end and fails at ``bad``.
STATUS_OK = 0
#: The predicate fails at both ends: no point of the bracket is feasible.
STATUS_INFEASIBLE = 1
#: The predicate holds at both ends: the boundary lies beyond ``bad``.
STATUS_BRACKET_TOO_SMALL = 2
#: The predicate returned nan somewhere that mattered.
STATUS_NAN = 3


class BisectionResult(NamedTuple):
    """Result of :func:`bisect_monotone`.

    Attributes:
      good: the end of the final bracket where the predicate holds (the
        *feasible* end; returned as the answer so that it is always safe).
      bad: the other end, where the predicate fails.
      status: per-point code, ``STATUS_OK`` when the bracket was valid.
    """

    good: Array
    bad: Array
    status: Array


def bisect_monotone(
    predicate: Callable[[Array], Array],
    good: ArrayLike,
    bad: ArrayLike,
    num_iterations: int = 100,
) -> BisectionResult:
    r"""Shrink ``[good, bad]`` around the boundary of a monotone predicate.

    ``predicate(x)`` must be a boolean array that is true on one side of a
    single boundary (the ``good`` side) and false on the other, elementwise.
    After ``num_iterations`` halvings the bracket width is
    ``|bad - good| / 2**num_iterations``; the ``good`` end is returned so the
    answer always satisfies the predicate (for calibration: always private).

    The midpoint is taken arithmetically; bisect in log-space by passing
    log-transformed endpoints and a predicate that exponentiates.

    Args:
      predicate: elementwise monotone boolean function (traceable).
      good: end that should satisfy the predicate.
      bad: end that should violate it.  Broadcast with ``good``.
      num_iterations: static number of halvings.

    Returns:
      ``BisectionResult(good, bad, status)``.  ``status`` is
      ``STATUS_INFEASIBLE`` if the predicate fails at ``good``,
      ``STATUS_BRACKET_TOO_SMALL`` if it holds at ``bad`` (then ``good`` is
      returned unchanged and the true boundary lies beyond ``bad``).
    """
    good, bad = jnp.broadcast_arrays(jnp.asarray(good), jnp.asarray(bad))
    ok_good = predicate(good)
    ok_bad = predicate(bad)
    status = jnp.where(
        ~ok_good,
        STATUS_INFEASIBLE,
        jnp.where(ok_bad, STATUS_BRACKET_TOO_SMALL, STATUS_OK),
    ).astype(jnp.int32)

    def body(_, carry):
        g, b = carry
        mid = 0.5 * (g + b)
        ok = predicate(mid)
        return jnp.where(ok, mid, g), jnp.where(ok, b, mid)

    g, b = jax.lax.fori_loop(0, num_iterations, body, (good, bad))
    valid = status == STATUS_OK
    g = jnp.where(valid, g, good)
    b = jnp.where(valid, b, bad)
    has_nan = jnp.isnan(g) | jnp.isnan(b)
    status = jnp.where(has_nan & valid, STATUS_NAN, status)
    return BisectionResult(good=g, bad=b, status=status)
