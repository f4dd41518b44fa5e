r"""Newton polish of the KKT system in relative coordinates (CPU, NumPy + ``jax`` derivatives).

An interior-point method stops at a barrier parameter ``mu > 0``; on the
central path every cone carries the same complementarity ``mu``, so a
coordinate ``x_i`` whose terms ``f_i`` in the objective are a small share of
``f`` is displaced by a *relative* amount of order ``mu / f_i``.  With a
relative duality gap ``g`` and ``m`` cones (``mu ~ g f / m``) the relative
error of ``x_i`` is about ``g / (m share_i)``: the optimal *value* is exact to
``g`` but the low-share coordinates are not (measured with Clarabel at
``g = 1e-12`` on the power allocation, K = 1000: 6e-4 relative error for
the quadratic profile; O(1) for the exponential profile from K ~ 40).  No
reformulation removes this (the central path is invariant under the cone
automorphisms a rescaling applies) and float64 bounds ``g`` from below.

The polish takes the IPM point as the start of Newton's method on the KKT
system of the constraints the IPM found active,

.. math::
   x_i \partial_i L(x, \lambda, \nu) = 0, \quad g_A(x) = 0, \quad h(x) = 0,
   \qquad x = x_0 \odot e^{z},

in log coordinates ``z`` (positive variables), with every stationarity row
divided by its own scale ``|x_i \partial_i f| + |x_i \partial_i (\lambda^T g + \nu^T h)|``
before the dense solve.  Each row is then resolved to rounding *relative to
its own terms*, which is what the componentwise residual
(:meth:`solvers.ConvexProblem.componentwise_stationarity`) measures.
Derivatives come from ``jax`` (the problem's own objective and constraints),
so nothing about the solution is assumed.  Damped Newton: a step is taken
when it lowers the 2-norm of the row-scaled KKT vector (backtracking by
halves); far from the solution a coordinate moves by about ``1/p`` in log
per step for power-type terms, then convergence is quadratic.  The polished
point is kept only if its multipliers stay ``>= 0`` and its componentwise
merit is below the IPM point's.  Dense Jacobian (``n`` JVPs) and LU inside
``jax.jit`` (one compilation per problem size): meant for the reference at
``n`` up to a few thousand.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


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


@jax.jit
def _newton_step(problem, x0, active, u):
    """Newton step on the row- and column-equilibrated KKT system; its merit norm and row scales.

    Solved with XLA's LU inside the jit (NumPy's threaded BLAS is erratic on
    oversubscribed cores: 30-170 ms for n = 200 measured).
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


@jax.jit
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


def kkt_polish(problem, x, lam, nu, *, max_iter: int = 100, target: float = 1e-15):
    """Polish an IPM point ``(x, lam, nu)`` of ``problem`` (module docstring).

    Damped Newton: each step is accepted when it lowers the 2-norm of the
    row-scaled KKT vector (backtracking by halves); the result is kept only
    if the componentwise merit (max of componentwise stationarity, active
    constraint values, violations, negative multipliers) ends below the IPM
    point's.

    Args:
      problem: a :class:`solvers.ConvexProblem` whose variables are positive.
      x, lam, nu: the IPM point and multipliers (NumPy arrays).
      max_iter: Newton iterations at most.
      target: stop once the merit is below this.

    Returns:
      ``(x, lam, nu, info)`` with ``info = {"polish_iterations", "merit_before",
      "merit_after", "polished"}``; the input point when the polish does not help.
    """
    x0 = np.asarray(x, dtype=np.float64)
    lam0 = np.asarray(lam, dtype=np.float64).reshape(-1)
    nu0 = np.asarray(nu, dtype=np.float64).reshape(-1)
    info = {"polish_iterations": 0, "merit_before": np.inf, "merit_after": np.inf,
            "polished": False}
    if x0.ndim != 1 or not np.all(np.isfinite(x0)) or np.any(x0 <= 0):
        return x0, lam0, nu0, info
    g0 = np.asarray(problem.inequality_constraints(jnp.asarray(x0)))
    active = (lam0 > 0) & (lam0 >= np.abs(g0))  # complementarity decides the active set
    lam0 = np.where(active, lam0, 0.0)
    n = x0.size
    xj, aj = jnp.asarray(x0), jnp.asarray(active)
    u = np.concatenate([np.zeros(n), lam0, nu0])
    ones = jnp.ones(u.size)
    merit0 = float(_evaluate(problem, xj, aj, jnp.asarray(u), ones)[1])
    info["merit_before"] = info["merit_after"] = merit0
    best_u, best = u, merit0
    for it in range(max_iter):
        if best <= target:
            break
        step, norm0, rows = _newton_step(problem, xj, aj, jnp.asarray(u))
        step, norm0 = np.asarray(step), float(norm0)
        if not (np.all(np.isfinite(step)) and np.isfinite(norm0)):
            break
        t, cand = 1.0, None
        for _ in range(40):
            trial = u + t * step
            norm, m = (float(v) for v in _evaluate(problem, xj, aj, jnp.asarray(trial), rows))
            if norm < norm0:
                cand = trial
                break
            t *= 0.5
        if cand is None:
            break
        u = cand
        info["polish_iterations"] = it + 1
        if m < best:
            best_u, best = u, m
    if best < merit0:
        x_, lam_, nu_ = (np.asarray(v) for v in _unpack(xj, aj, jnp.asarray(best_u)))
        info.update(merit_after=best, polished=True)
        return x_, lam_, nu_, info
    return x0, lam0, nu0, info
