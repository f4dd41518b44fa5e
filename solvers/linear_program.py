r"""A small linear programme: maximise ``w^T x`` subject to ``A x <= b``, ``0 <= x <= u``.

Written as the convex problem ``min -w^T x`` with the dimensionless constraints
``A x / b - 1 <= 0`` (rows with ``b > 0``), ``-x <= 0`` and ``x / u - 1 <= 0``
(finite ``u``), so it shares the KKT residual of :class:`solvers.ConvexProblem`.
Solved by the ``cvxpy`` backend (hook ``cvxpy_model``); no JAX solver.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from solvers._problem import ConvexProblem
from solvers.cvxpy_reference import CvxpyModel


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class LinearProgram(ConvexProblem):
    """``max w^T x  s.t.  A x <= b,  0 <= x <= upper`` (module docstring).

    Attributes:
      weights: objective weights ``w``, shape ``(n,)``.
      matrix: ``A``, shape ``(k, n)``.
      bound: ``b > 0``, shape ``(k,)``.
      upper: upper bounds (``inf``: none), shape ``(n,)``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from solvers import LinearProgram, solve
      >>> lp = LinearProgram.create([1.0, 1.0], [[1.0, 2.0]], [2.0], upper=[1.0, 10.0])
      >>> sol = solve(lp, "cvxpy")
      >>> [round(float(v), 6) for v in sol.x], int(sol.status)
      ([1.0, 0.5], 0)
    """

    weights: Array
    matrix: Array
    bound: Array
    upper: Array

    name = "linear-program"

    @classmethod
    def create(cls, weights, matrix, bound, upper=None) -> LinearProgram:
        """Build and validate the programme (``b > 0``, finite ``A`` and ``w``).

        Args:
          weights: ``w``.
          matrix: ``A``.
          bound: ``b``.
          upper: upper bounds (default none).

        Raises:
          ValueError: shapes or values out of range.
        """
        w = np.asarray(weights, dtype=np.float64)
        a = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
        b = np.atleast_1d(np.asarray(bound, dtype=np.float64))
        u = np.full_like(w, np.inf) if upper is None else np.asarray(upper, dtype=np.float64)
        if w.ndim != 1 or a.shape != (b.size, w.size) or u.shape != w.shape:
            raise ValueError("LinearProgram: need w (n,), A (k, n), b (k,), upper (n,)")
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(a)) and np.all(b > 0)
                and np.all(u > 0)):
            raise ValueError("LinearProgram: A and w finite, b > 0 and upper > 0")
        return cls(jnp.asarray(w), jnp.asarray(a), jnp.asarray(b), jnp.asarray(u))

    @property
    def num_variables(self) -> int:
        """Number of variables ``n``."""
        return int(self.weights.shape[0])

    def objective(self, x: Array) -> Array:
        """``-w^T x``."""
        return -jnp.vdot(self.weights, x)

    def inequality_constraints(self, x: Array) -> Array:
        """``[A x / b - 1, -x, x / u - 1]`` (the last only where ``u`` is finite: else ``-1``)."""
        finite = jnp.isfinite(self.upper)
        box = jnp.where(finite, x / jnp.where(finite, self.upper, 1.0) - 1.0, -1.0)
        return jnp.concatenate([self.matrix @ x / self.bound - 1.0, -x, box])

    def cvxpy_model(self, cp) -> CvxpyModel:
        """The programme in cvxpy; multipliers mapped to the dimensionless constraints."""
        n = self.num_variables
        a, b, u = (np.asarray(v) for v in (self.matrix, self.bound, self.upper))
        x = cp.Variable(n)
        finite = np.isfinite(u)
        rows = cp.multiply(1.0 / b, a @ x) <= 1.0
        low = x >= 0
        cons = [rows, low]
        if finite.any():
            cons.append(x[np.flatnonzero(finite)] <= u[finite])
        prob = cp.Problem(cp.Maximize(np.asarray(self.weights) @ x), cons)

        def recover():
            lam_box = np.zeros(n)
            if finite.any():
                lam_box[finite] = np.asarray(cons[2].dual_value) * u[finite]
            lam = np.concatenate([np.asarray(rows.dual_value), np.asarray(low.dual_value),
                                  lam_box])
            return np.asarray(x.value), lam, np.zeros(0)

        return CvxpyModel(prob, recover)
