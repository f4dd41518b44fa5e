"""The one solution type every solver returns, and its status codes.

A :class:`Solution` is a ``NamedTuple`` (hence a JAX pytree): a jittable
solver can return it from inside ``jax.jit``; the cvxpy solver fills it
with NumPy values.  The residual in it is always the problem's own
:meth:`solvers.ConvexProblem.residual`, never a solver's self-report, so
solvers are judged by the same measure (cf. optimistix ``_solution.py``).
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple


class Status(enum.IntEnum):
    """Status code of a solve or of a search (an ``int32`` array inside ``jax.jit``).

    One vocabulary for the convex-programme backends (the ``status`` of a
    :class:`Solution`) and for vmapped root searches, which report a code per
    grid point instead of raising, so that one failed point does not kill a
    grid (dpjax re-exports it as ``dpjax.numerics.Status``).  An ``IntEnum``:
    members compare equal to their codes and can be used inside ``jnp.where``.
    """

    #: converged: the shared residual is within tolerance (a search: the bracket is
    #: resolved, the predicate holds at the returned end and fails at the other)
    OPTIMAL = 0
    #: backend returned a point whose shared residual exceeds tolerance
    INACCURATE = 1
    #: iteration limit reached (a search: evaluation budget spent before the tolerance)
    MAX_ITERATIONS = 2
    #: infeasible (a search: the predicate fails at the end that should satisfy it)
    INFEASIBLE = 3
    #: backend reports the problem unbounded
    UNBOUNDED = 4
    #: numerical failure (exception, NaN, solver error)
    FAILED = 5
    #: a search only: the predicate holds at the end that should violate it, so the
    #: boundary lies beyond the bracket
    BRACKET_TOO_SMALL = 6


class Residual(NamedTuple):
    """Parts of the KKT residual (all dimensionless, see ``ConvexProblem.residual``)."""

    stationarity: Any
    primal: Any
    dual: Any
    complementarity: Any
    total: Any


class Solution(NamedTuple):
    """What every backend returns.

    Attributes:
      x: primal point (1-D array).
      value: objective at ``x``, evaluated by the problem (not by the backend).
      status: :class:`Status` code (int32 array or int).
      residual: the problem's KKT residual at ``(x, multipliers)`` (``Residual``).
      inequality_multipliers: multipliers of ``g(x) <= 0`` in the problem's own
        (normalised) constraint form.
      equality_multipliers: multipliers of ``h(x) = 0``.
      stats: iterations and backend-specific entries (numeric only for jittable
        backends, so a Solution can leave ``jax.jit``; the cvxpy backend adds its
        name, solver status string and wall time).
    """

    x: Any
    value: Any
    status: Any
    residual: Residual
    inequality_multipliers: Any
    equality_multipliers: Any
    stats: dict

    @property
    def ok(self) -> bool:
        """``True`` when the status is :attr:`Status.OPTIMAL` (host-side check)."""
        import numpy as np

        return bool(np.all(np.asarray(self.status) == Status.OPTIMAL))


class RawResult(NamedTuple):
    """What a backend hands to :func:`solvers.solve` before the shared residual is applied."""

    x: Any
    inequality_multipliers: Any
    equality_multipliers: Any
    status: Any
    stats: dict
