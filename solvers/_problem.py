r"""The problem side of the solver interface: data + objective + constraints + one residual.

A problem is a frozen dataclass registered as a JAX pytree (its fields are
arrays).  It states

* ``objective(x)`` -- a convex scalar function of a 1-D array ``x``;
* ``inequality_constraints(x)`` -- an array ``g(x)``, feasible iff ``g(x) <= 0``,
  written in **dimensionless** form (e.g. ``sum(a / x**q) / c - 1``) so that
  violations are comparable across problems;
* ``equality_constraints(x)`` -- ``h(x) = 0`` (default: none);
* ``variable_scale(x)`` -- the diagonal ``D`` in which stationarity is
  measured (default ``1``; positive variables spanning orders of magnitude
  should use ``|x|``, i.e. relative coordinates).

From these the base class defines the one optimality measure every solver
is judged by, the KKT residual (all parts dimensionless):

.. math::
   r_{stat} &= \|D \nabla_x L(x, \lambda, \nu)\|_\infty / s, \quad
   L = f + \lambda^\top g + \nu^\top h, \quad
   s = \max(|f(x)|, \|D \nabla f(x)\|_\infty) \\
   r_{primal} &= \max(\max_j g_j(x)_+, \max_k |h_k(x)|) \\
   r_{dual} &= \max_j (-\lambda_j)_+ / s \\
   r_{comp} &= \max_j |\lambda_j g_j(x)| / s

and ``total = max`` of the four.  Gradients come from ``jax.grad`` of the
Lagrangian (one reverse pass; no dense Jacobian), so a new problem gets the
residual for free.

A problem with a sharper certificate (e.g. a duality gap from a closed-form
dual) may override :meth:`ConvexProblem.residual`; it must stay a function
of ``(x, multipliers)`` only, so that every solver is still judged by the
same measure.

A problem holds no algorithm.  Solvers read what they need through hooks
(plain methods or attributes, named in each solver's ``requires``):
``cvxpy_model(cp)`` (the problem in cvxpy; ``cp`` is the lazily imported
module) for :class:`solvers.CvxpySolver`, ``closed_form()`` for
:class:`solvers.ClosedForm`, derivatives in relative coordinates and pair
structure for :class:`solvers.BarrierNewton`; ``default_solver()`` names the
solver that ``solve(problem, "jax")`` uses.  A solver given a problem that
lacks one of its hooks raises ``NotImplementedError`` naming it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array

from solvers._solution import Residual


class ConvexProblem:
    r"""Base class of every problem in :mod:`solvers`: data + objective + constraints + residual.

    Subclasses are frozen dataclasses registered as pytrees and implement
    ``objective`` (and the constraints they have); the KKT residual of the
    module docstring is shared by every solver.
    """

    #: short name used in messages and stats
    name: str = "problem"

    # --- to be provided by each problem -------------------------------------------------
    def objective(self, x: Array) -> Array:  # pragma: no cover - abstract
        """``f(x)``, convex and scalar.

        Args:
          x: 1-D point.
        """
        raise NotImplementedError

    def inequality_constraints(self, x: Array) -> Array:
        """``g(x)`` with ``g(x) <= 0`` feasible (dimensionless); default: none.

        Args:
          x: 1-D point.
        """
        return jnp.zeros((0,), dtype=jnp.result_type(x))

    def equality_constraints(self, x: Array) -> Array:
        """``h(x)`` with ``h(x) = 0`` feasible (dimensionless); default: none.

        Args:
          x: 1-D point.
        """
        return jnp.zeros((0,), dtype=jnp.result_type(x))

    def variable_scale(self, x: Array) -> Array:
        """Diagonal scaling ``D`` of the stationarity residual (default: ones).

        Args:
          x: 1-D point.
        """
        return jnp.ones_like(x)

    # --- shared by all solvers ----------------------------------------------------------
    def lagrangian(self, x: Array, lam: Array, nu: Array) -> Array:
        r"""``L(x, lambda, nu) = f(x) + lambda^T g(x) + nu^T h(x)``.

        Args:
          x: 1-D point.
          lam: multipliers of ``g``.
          nu: multipliers of ``h``.
        """
        return (
            self.objective(x)
            + jnp.vdot(lam, self.inequality_constraints(x))
            + jnp.vdot(nu, self.equality_constraints(x))
        )

    def _kkt_point(self, x, lam, nu):
        """``(x, g(x), h(x), lam, nu, variable_scale(x))``, missing multipliers as zeros."""
        x = jnp.asarray(x)
        g = self.inequality_constraints(x)
        h = self.equality_constraints(x)
        lam = jnp.zeros_like(g) if lam is None else jnp.asarray(lam, dtype=g.dtype)
        nu = jnp.zeros_like(h) if nu is None else jnp.asarray(nu, dtype=h.dtype)
        return x, g, h, lam, nu, self.variable_scale(x)

    def residual(self, x: Array, lam: Array | None = None, nu: Array | None = None) -> Residual:
        r"""The KKT residual at ``(x, lam, nu)`` (module docstring); jit/vmap-safe.

        ``total = max(stationarity, primal, dual, complementarity)``, every part dimensionless.

        Args:
          x: 1-D point.
          lam: multipliers of ``g`` (``None``: zeros).
          nu: multipliers of ``h`` (``None``: zeros).
        """
        x, g, h, lam, nu, d = self._kkt_point(x, lam, nu)
        f = self.objective(x)
        grad_f = jax.grad(self.objective)(x)
        grad_l = jax.grad(self.lagrangian)(x, lam, nu)
        tiny = jnp.finfo(jnp.result_type(x)).tiny
        scale = jnp.maximum(jnp.maximum(jnp.abs(f), _amax(d * grad_f)), tiny)
        stat = _amax(d * grad_l) / scale
        primal = jnp.maximum(_amax(jnp.maximum(g, 0.0)), _amax(jnp.abs(h)))
        dual = _amax(jnp.maximum(-lam, 0.0)) / scale
        comp = _amax(jnp.abs(lam * g)) / scale
        total = jnp.max(jnp.stack([stat, primal, dual, comp]))
        return Residual(stat, primal, dual, comp, total)

    def componentwise_stationarity(
        self, x: Array, lam: Array | None = None, nu: Array | None = None
    ) -> Array:
        r"""``max_i |D_i d_i L| / (|D_i d_i f| + |D_i d_i (lambda^T g + nu^T h)|)``; jit/vmap-safe.

        Stationarity of each coordinate relative to *its own* terms (0 where
        both vanish).  The global :meth:`residual` divides by ``|f|``, so a
        coordinate whose terms are a share ``1e-12`` of ``f`` can be off by
        O(1) and still pass; this measure cannot (for positive variables and
        ``D = |x|`` it is about the relative error of ``x_i`` times an O(1)
        factor).  Problems that promise per-coordinate accuracy fold it into
        their residual (e.g. :class:`solvers.PowerAllocation`).

        Args:
          x: 1-D point.
          lam: multipliers of ``g`` (``None``: zeros).
          nu: multipliers of ``h`` (``None``: zeros).
        """
        x, g, h, lam, nu, d = self._kkt_point(x, lam, nu)
        gf = d * jax.grad(self.objective)(x)
        gc = d * jax.grad(
            lambda y: (
                jnp.vdot(lam, self.inequality_constraints(y))
                + jnp.vdot(nu, self.equality_constraints(y))
            )
        )(x)
        den = jnp.abs(gf) + jnp.abs(gc)
        ratio = jnp.abs(gf + gc) / jnp.where(den > 0, den, 1.0)
        return _amax(jnp.where(den > 0, ratio, 0.0))


def _amax(v: Array) -> Array:
    """``max |v|`` with 0 for empty arrays."""
    v = jnp.abs(v).ravel()
    return jnp.max(v, initial=0.0)
