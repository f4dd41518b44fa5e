r"""Newton polish of the KKT system in relative coordinates: a solver that refines another's point.

An interior-point method stops at a barrier parameter ``mu > 0``; on the
central path every cone carries the same complementarity ``mu``, so a
coordinate ``x_i`` whose terms ``f_i`` in the objective are a small share of
``f`` is displaced by a *relative* amount of order ``mu / f_i``.  With a
relative duality gap ``g`` and ``m`` cones (``mu ~ g f / m``) the relative
error of ``x_i`` is about ``g / (m share_i)``: the optimal *value* is exact to
``g`` but the low-share coordinates are not (Clarabel at ``g = 1e-12`` on the
power allocation, K = 1000: 6e-4 relative error for the quadratic profile;
O(1) for the exponential profile from K ~ 40; ``bench/bench_solvers_allocation.py``).
No reformulation removes this (the central path is invariant under the cone
automorphisms a rescaling applies) and float64 bounds ``g`` from below.

The polish takes a point ``(x_0, lambda_0, nu_0)`` (by default the cvxpy IPM
point) as the start of Newton's method on the KKT system of the constraints
found active there (``lambda_j > 0`` and ``lambda_j >= |g_j|``),

.. math::
   x_i \partial_i L(x, \lambda, \nu) = 0, \quad g_A(x) = 0, \quad h(x) = 0,
   \qquad x = x_0 \odot e^{z},

in log coordinates ``z`` (positive variables), with every stationarity row
divided by its own scale ``|x_i \partial_i f| + |x_i \partial_i (\lambda^T g + \nu^T h)|``
before the dense solve.  Each row is then resolved to rounding *relative to
its own terms*, which is what the componentwise residual
(:meth:`solvers.ConvexProblem.componentwise_stationarity`) measures.
Derivatives come from ``jax`` (the problem's own objective and constraints),
so nothing about the solution is assumed and any :class:`solvers.ConvexProblem`
with positive variables can be polished.  Damped Newton: a step is taken
when it lowers the 2-norm of the row-scaled KKT vector (backtracking by
halves, at most 40); far from the solution a coordinate moves by about
``1/p`` in log per step for power-type terms, then convergence is quadratic.
The polished point is kept only if its componentwise merit is below the
start's.  Dense Jacobian (``n`` JVPs) and LU, the whole loop under
``lax.while_loop`` in one ``jax.jit`` (one compilation per problem size):
meant for the reference at ``n`` up to a few thousand.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from solvers._solution import RawResult, Status
from solvers._solver import IterativeSolver, Solver, require_hooks


class PolishState(NamedTuple):
    """State of :class:`KKTPolish` (all float64 arrays but the counters and flags).

    Attributes:
      u: ``(z, lambda, nu)`` stacked: log-coordinates of ``x = x0 e^z``, the
        multipliers (those of inactive rows are carried but read as 0), ``nu``.
      best_u: the ``u`` with the lowest merit so far.
      best: that merit.
      merit0: the merit of the start.
      iterations: accepted Newton steps.
      stop: ``True`` once a step failed (not finite, or no decrease in 40 halvings).
      x0: the start point (origin of the log coordinates).
      active: the inequality rows held as equalities.
    """

    u: Array
    best_u: Array
    best: Array
    merit0: Array
    iterations: Array
    stop: Array
    x0: Array
    active: Array


def _unpack(x0, active, u):
    n, m = x0.shape[0], active.shape[0]
    x = x0 * jnp.exp(u[:n])
    lam = jnp.where(active, u[n:n + m], 0.0)
    return x, lam, u[n + m:]


def _constraint_terms(problem, lam, nu):
    return lambda y: (jnp.vdot(lam, problem.inequality_constraints(y))
                      + jnp.vdot(nu, problem.equality_constraints(y)))


def _kkt(problem, x0, active, u):
    """``[x * grad_x L;  g_j (active) or lambda_j (inactive);  h]`` at ``x = x0 e^z``."""
    x, lam, nu = _unpack(x0, active, u)
    stat = x * jax.grad(problem.lagrangian)(x, lam, nu)
    g = problem.inequality_constraints(x)
    return jnp.concatenate([stat, jnp.where(active, g, u[x0.shape[0]:x0.shape[0] + lam.shape[0]]),
                            problem.equality_constraints(x)])


def _newton_step(problem, x0, active, u):
    """Newton step on the row- and column-equilibrated KKT system; its merit norm and row scales.

    Solved with XLA's LU inside the jitted loop (NumPy's threaded BLAS is
    erratic on oversubscribed cores: ``bench/bench_solvers_allocation.py``).
    """
    x, lam, nu = _unpack(x0, active, u)
    gf = jnp.abs(x * jax.grad(problem.objective)(x))
    gc = jnp.abs(x * jax.grad(_constraint_terms(problem, lam, nu))(x))
    tiny = jnp.finfo(u.dtype).tiny
    rows = jnp.concatenate([jnp.maximum(gf + gc, tiny), jnp.ones(u.shape[0] - x.shape[0], u.dtype)])
    kkt = lambda v: _kkt(problem, x0, active, v)  # noqa: E731
    f, jac = kkt(u), jax.jacfwd(kkt)(u)
    a = jac / rows[:, None]
    cols = jnp.max(jnp.abs(a), axis=0)
    cols = jnp.where(cols > 0, cols, 1.0)
    step = -jnp.linalg.solve(a / cols[None, :], f / rows) / cols
    return step, jnp.linalg.norm(f / rows), rows


def _evaluate(problem, x0, active, u, rows):
    """``(||KKT(u) / rows||_2, merit)``: the damped-Newton norm of one iteration (rows fixed)
    and ``max(componentwise stationarity, |g_A|, max(g, 0), |h|, max(-lambda, 0))``."""
    norm = jnp.linalg.norm(_kkt(problem, x0, active, u) / rows)
    x, lam, nu = _unpack(x0, active, u)
    g = problem.inequality_constraints(x)
    h = problem.equality_constraints(x)
    parts = jnp.stack([
        problem.componentwise_stationarity(x, lam, nu),
        jnp.max(jnp.where(active, jnp.abs(g), 0.0), initial=0.0),
        jnp.max(jnp.maximum(g, 0.0), initial=0.0),
        jnp.max(jnp.abs(h), initial=0.0),
        jnp.max(jnp.maximum(-lam, 0.0), initial=0.0),
    ])
    m = jnp.max(parts)
    norm = jnp.where(jnp.isfinite(norm), norm, jnp.inf)
    return norm, jnp.where(jnp.isfinite(m) & jnp.all(jnp.isfinite(x)), m, jnp.inf)


def _default_start() -> Solver:
    from solvers.cvxpy_reference import CvxpySolver

    return CvxpySolver(polish=False)


@dataclasses.dataclass(frozen=True)
class KKTPolish(IterativeSolver):
    r"""Damped Newton on the KKT system from another solver's point (module docstring).

    Each step solves the row- and column-equilibrated Newton system of
    ``F(u) = [x * grad_x L; g_A; lambda_I; h]`` at ``x = x_0 e^z`` and is
    accepted when ``||F(u + t du) / rows||_2 < ||F(u) / rows||_2`` for the
    first ``t`` in ``1, 1/2, ..., 2^-39``.

    Args:
      start: the solver whose answer is polished (default: the cvxpy
        reference without its own polish).  Only an ``OPTIMAL`` or
        ``MAX_ITERATIONS`` answer is polished; others are returned as they are.
      max_iter: Newton steps at most.
      target: stop once the merit is below this.

    ``solve`` runs on the host (the start may be cvxpy); :meth:`run` (from
    ``(x, lam, nu)``) is jittable.  ``stats`` gain ``polish_iterations``,
    ``merit_before`` (the start's componentwise merit), ``merit_after`` and
    ``polished``.
    """

    start: Any = dataclasses.field(default_factory=_default_start)
    max_iter: int = 100
    target: float = 1e-15

    name = "kkt-polish"
    jittable = False
    requires = ("objective", "inequality_constraints", "equality_constraints", "lagrangian",
                "componentwise_stationarity")

    def init(self, problem: Any, start: Any = None) -> PolishState:
        """The state at ``start = (x, lam, nu)``: active set by complementarity, merit there.

        Args:
          problem: a :class:`solvers.ConvexProblem` with positive variables.
          start: the triple ``(x, lam, nu)`` to polish.
        """
        if start is None:
            raise TypeError(f"solver {self.name!r}: run needs a start (x, lam, nu)")
        x, lam, nu = start
        x0 = jnp.asarray(x, jnp.float64)
        lam0 = jnp.reshape(jnp.asarray(lam, jnp.float64), (-1,))
        nu0 = jnp.reshape(jnp.asarray(nu, jnp.float64), (-1,))
        valid = jnp.all(jnp.isfinite(x0)) & jnp.all(x0 > 0)
        g0 = problem.inequality_constraints(x0)
        active = (lam0 > 0) & (lam0 >= jnp.abs(g0))  # complementarity decides the active set
        lam0 = jnp.where(active, lam0, 0.0)
        u = jnp.concatenate([jnp.zeros(x0.shape[0]), lam0, nu0])
        merit0 = _evaluate(problem, x0, active, u, jnp.ones(u.shape[0]))[1]
        merit0 = jnp.where(valid, merit0, jnp.inf)
        return PolishState(u, u, merit0, merit0, jnp.zeros((), jnp.int32), ~valid, x0, active)

    def step(self, problem: Any, state: PolishState) -> PolishState:
        """One damped Newton step (backtracking by halves on the row-scaled KKT norm).

        Args:
          problem: the problem.
          state: the current state.
        """
        x0, active, u = state.x0, state.active, state.u
        step, norm0, rows = _newton_step(problem, x0, active, u)
        finite = jnp.all(jnp.isfinite(step)) & jnp.isfinite(norm0)

        def bt_cond(c):
            return ~c[2] & (c[1] < 40)

        def bt_body(c):
            t, k, _, _ = c
            norm, merit = _evaluate(problem, x0, active, u + t * step, rows)
            found = norm < norm0
            return jnp.where(found, t, 0.5 * t), k + 1, found, merit

        t, _, found, merit = jax.lax.while_loop(
            bt_cond, bt_body, (jnp.ones((), u.dtype), jnp.where(finite, 0, 40), False,
                               jnp.full((), jnp.inf, u.dtype)))
        accept = finite & found
        u_new = jnp.where(accept, u + t * step, u)
        better = accept & (merit < state.best)
        return state._replace(
            u=u_new, best_u=jnp.where(better, u_new, state.best_u),
            best=jnp.where(better, merit, state.best),
            iterations=state.iterations + accept.astype(jnp.int32), stop=~accept)

    def terminate(self, problem: Any, state: PolishState) -> Array:
        """Stop after a failed step, at the target merit, or after ``max_iter`` steps.

        Args:
          problem: the problem (unused).
          state: the current state.
        """
        return state.stop | (state.best <= self.target) | (state.iterations >= self.max_iter)

    def postprocess(self, problem: Any, state: PolishState) -> RawResult:
        """The best point as a :class:`RawResult` (``FAILED`` if its merit is not finite).

        Args:
          problem: the problem (unused).
          state: the final state.
        """
        x, lam, nu = best_point(state)
        status = jnp.where(jnp.isfinite(state.best), Status.OPTIMAL, Status.FAILED)
        return RawResult(x, lam, nu, status.astype(jnp.int32), _info(state))

    def polish(self, problem: Any, x, lam, nu) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        """Polish ``(x, lam, nu)`` on the host (the loop jitted once per problem size).

        Args:
          problem: a :class:`solvers.ConvexProblem` whose variables are positive.
          x: the start point (1-D, NumPy or JAX).
          lam: its inequality multipliers.
          nu: its equality multipliers.

        Returns:
          ``(x, lam, nu, info)`` with ``info = {"polish_iterations", "merit_before",
          "merit_after", "polished"}``; the input point when the polish does not help.
        """
        x0 = np.asarray(x, dtype=np.float64)
        lam0 = np.asarray(lam, dtype=np.float64).reshape(-1)
        nu0 = np.asarray(nu, dtype=np.float64).reshape(-1)
        if x0.ndim != 1 or not np.all(np.isfinite(x0)) or np.any(x0 <= 0):
            return x0, lam0, nu0, {"polish_iterations": 0, "merit_before": np.inf,
                                   "merit_after": np.inf, "polished": False}
        require_hooks(self, problem, self.requires)
        state = _run_jit(problem, x0, lam0, nu0, self.max_iter, self.target)
        x_, lam_, nu_ = (np.asarray(v) for v in best_point(state))
        info = {k: v.item() for k, v in _info(state).items()}
        return x_, lam_, nu_, info

    def solve(self, problem: Any, start: Any = None, **options) -> RawResult:
        """Solve with ``self.start``, then polish its point (host driver).

        Args:
          problem: the problem.
          start: must be ``None`` (the start solver provides the point).
          **options: configuration fields (``start``, ``max_iter``, ``target``) for this call.
        """
        if start is not None:
            raise TypeError(f"solver {self.name!r} takes its start from its start solver")
        solver = self.replace(**options)
        raw = solver.start.solve(problem)
        if int(np.asarray(raw.status)) not in (Status.OPTIMAL, Status.MAX_ITERATIONS):
            return raw
        x, lam, nu, info = solver.polish(problem, raw.x, raw.inequality_multipliers,
                                         raw.equality_multipliers)
        return RawResult(x=x, inequality_multipliers=np.asarray(lam, dtype=np.float64),
                         equality_multipliers=np.asarray(nu, dtype=np.float64),
                         status=raw.status, stats={**raw.stats, **info})


def best_point(state: PolishState) -> tuple[Array, Array, Array]:
    """``(x, lam, nu)`` at the lowest merit found: the start when no step improved on it.

    ``best_u`` starts at the start's ``u`` and moves only to a strictly lower
    merit, so it is the polished point exactly when ``best < merit0``.

    Args:
      state: a :class:`PolishState`.
    """
    return _unpack(state.x0, state.active, state.best_u)


def _info(state: PolishState) -> dict:
    return {"polish_iterations": state.iterations, "merit_before": state.merit0,
            "merit_after": state.best, "polished": state.best < state.merit0}


@functools.partial(jax.jit, static_argnames=("max_iter", "target"))
def _run_jit(problem, x, lam, nu, max_iter, target):
    return KKTPolish(start=None, max_iter=max_iter, target=target).run(problem, (x, lam, nu))


__all__ = ["KKTPolish", "PolishState", "best_point"]
