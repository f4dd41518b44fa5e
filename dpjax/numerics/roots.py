r"""The one root-finding toolkit: bisection, Illinois and a warm Newton bracket (jit/vmap-safe).

**Fixed-iteration bisection** (:func:`bisect_monotone`).  Fixed-iteration bisection for monotone predicates, fair under ``vmap``.

Calibration asks "the least scale at which the target is met" for a whole
grid of targets at once.  A fixed number of halvings does the same work at
every grid point (no data-dependent trip count under ``vmap``), and a status
code per point replaces exceptions, so one infeasible point does not kill
the grid (STYLE.md item 5; cf. ``optimistix/_solver/bisection.py``).

**Calibration searches** (:func:`illinois`, :func:`warm_bracket`).  Calibrating a scale means finding the root of a decreasing function ``F`` of
``x = log scale`` (``F <= 0``: private) whose evaluation is a whole PLD
composition, so evaluations are what costs.  Two pure, jit/vmap-safe pieces:

* :func:`illinois`: Illinois regula falsi on a bracket ``[bad, good]`` with
  an absolute tolerance on ``x``; every secant point is nudged ``tol / 2``
  towards the stale end, so once the secant is accurate the bracket collapses
  in one step instead of creeping from one side (Brent's rule); a secant
  point outside the bracket is replaced by the midpoint.  On the nearly
  linear ``F`` of calibration it needs 8 evaluations for ``tol = 1e-7`` from a
  bracket of a factor 1.5 (a forced bisection every few steps, tried, only
  added evaluations on smooth, convex and step-shaped test functions).
* :func:`warm_bracket`: from a warm start ``x0`` and a slope (e.g. the
  root and secant slope of the same search on a coarser grid) one evaluation
  at ``x0``, one Newton step, one secant step, and the two points
  ``x2 -+ tol / 2``: four evaluations certify a bracket of width ``tol`` when
  the warm start is good; otherwise the best known ends are returned for a
  fallback :func:`illinois`.

Both return the good end (``F <= 0``) with the auxiliary value of the
evaluation *at that point* (the certified ``log delta``): nothing is
inferred, so the value returned is the value of the returned scale.
``f(x) -> (F, aux)`` has a single call site in each loop (one compile).
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


#: ``status`` codes: 0 bracket resolved; 1 infeasible at ``good``; 2 feasible at
#: ``bad`` (the root lies beyond the bracket); 3 tolerance not reached in the budget.
OK, INFEASIBLE_GOOD, FEASIBLE_BAD, NOT_CONVERGED = 0, 1, 2, 3


class Root(NamedTuple):
    """Result of a search.

    Attributes:
      good: the feasible end (``F(good) <= 0``); the initial ``good`` unless ``status == 0``
        or ``3`` (then the best feasible point found).
      aux: ``aux`` of the evaluation at ``good``.
      bad: the infeasible end of the final bracket (``nan`` when unknown).
      slope: secant slope of ``F`` between the last two ends (``nan`` when unknown).
      status: see the codes above.
      evaluations: number of evaluations of ``f``.
    """

    good: Array
    aux: Array
    bad: Array
    slope: Array
    status: Array
    evaluations: Array


def _nan_aux(f, x):
    """A ``nan`` placeholder shaped like ``f``'s auxiliary value."""
    _, aux = jax.eval_shape(f, x)
    return jnp.full(aux.shape, jnp.nan, aux.dtype)


def illinois(f, good, bad, tol, max_evaluations: int = 60) -> Root:
    """Illinois regula falsi for ``F(x) = 0`` on ``[bad, good]`` (either order) to width ``tol``.

    ``f(x) -> (F, aux)``; ``F(good) <= 0 < F(bad)`` is required (checked: status 1 / 2).
    Returns the good end of a bracket of width ``<= tol`` (status 0) or the best
    feasible point after ``max_evaluations`` (status 3).
    """
    good = jnp.asarray(good, jnp.float64)
    bad = jnp.asarray(bad, jnp.float64)
    tol = jnp.asarray(tol, jnp.float64)
    nan = jnp.full_like(good, jnp.nan)
    aux0 = _nan_aux(f, good)

    def bracket_known(c):
        i, f0, f1 = c["i"], c["f0"], c["f1"]
        return ~((i >= 1) & (f0 > 0)) & ~((i >= 2) & (f1 <= 0))

    def cond(c):
        width = jnp.abs(c["g"] - c["b"])
        go = (c["i"] < 2) | ((c["i"] < max_evaluations) & (width > tol))
        return go & bracket_known(c)

    def body(c):
        i, g, b = c["i"], c["g"], c["b"]
        lo, hi = jnp.minimum(g, b), jnp.maximum(g, b)
        mg, mb = c["mg"], c["mb"]
        sec = (g * mb - b * mg) / (mb - mg)
        ok = jnp.isfinite(sec) & (sec > lo) & (sec < hi)
        x = jnp.where(ok, sec, 0.5 * (lo + hi))
        stale = jnp.where(c["last"] == 1, b, g)
        nudge = jnp.where(c["last"] == 0, 0.0, 0.5 * tol * jnp.sign(stale - x))
        x = jnp.clip(x + nudge, lo + 0.25 * tol, hi - 0.25 * tol)
        x = jnp.where(i == 0, g, jnp.where(i == 1, b, x))
        fx, ax = f(x)
        start = i < 2
        on_good = fx <= 0
        upd_g = (i == 0) | (~start & on_good)
        upd_b = (i == 1) | (~start & ~on_good)
        n = dict(c)
        n["g"] = jnp.where(upd_g, x, g)
        n["fg"] = jnp.where(upd_g, fx, c["fg"])
        n["ag"] = jnp.where(upd_g, ax, c["ag"])
        n["mg"] = jnp.where(upd_g, fx, mg)
        n["b"] = jnp.where(upd_b, x, b)
        n["fb"] = jnp.where(upd_b, fx, c["fb"])
        n["mb"] = jnp.where(upd_b, fx, mb)
        # Illinois: the end that survives twice has its value halved
        n["mb"] = jnp.where(~start & on_good & (c["last"] == 1), 0.5 * n["mb"], n["mb"])
        n["mg"] = jnp.where(~start & ~on_good & (c["last"] == -1), 0.5 * n["mg"], n["mg"])
        n["last"] = jnp.where(start, 0, jnp.where(on_good, 1, -1)).astype(jnp.int32)
        n["f0"] = jnp.where(i == 0, fx, c["f0"])
        n["f1"] = jnp.where(i == 1, fx, c["f1"])
        n["i"] = i + 1
        return n

    c0 = dict(
        i=jnp.zeros((), jnp.int32),
        g=good,
        fg=nan,
        ag=aux0,
        mg=nan,
        b=bad,
        fb=nan,
        mb=nan,
        last=jnp.zeros((), jnp.int32),
        f0=nan,
        f1=nan,
    )
    c = jax.lax.while_loop(cond, body, c0)
    status = jnp.where(
        c["f0"] > 0,
        INFEASIBLE_GOOD,
        jnp.where(
            c["f1"] <= 0,
            FEASIBLE_BAD,
            jnp.where(jnp.abs(c["g"] - c["b"]) <= tol, OK, NOT_CONVERGED),
        ),
    ).astype(jnp.int32)
    resolved = (status == OK) | (status == NOT_CONVERGED)
    slope = (c["fb"] - c["fg"]) / (c["b"] - c["g"])
    return Root(
        good=jnp.where(resolved, c["g"], good),
        aux=c["ag"],
        bad=jnp.where(resolved, c["b"], nan),
        slope=jnp.where(resolved, slope, nan),
        status=status,
        evaluations=c["i"],
    )


def warm_bracket(f, x0, slope, tol) -> Root:
    """Four evaluations from a warm start: ``F(x0)``; the Newton point ``x1 = x0 - F(x0) /
    slope``; the secant point ``x2`` of ``(x0, x1)`` (``F``'s own slope, whatever the error
    of ``slope``); and ``x2 -+ tol / 2`` (good side where ``F`` decreases).

    Status 0 when ``x2 -+ tol / 2`` bracket the root; otherwise status 3 and ``good`` /
    ``bad`` are the best feasible / infeasible points seen (``nan`` if none): the ends
    for a fallback :func:`illinois`.
    """
    x0 = jnp.asarray(x0, jnp.float64)
    tol = jnp.asarray(tol, jnp.float64)
    slope = jnp.asarray(slope, jnp.float64)
    nan = jnp.full_like(x0, jnp.nan)
    aux0 = _nan_aux(f, x0)
    usable = jnp.isfinite(slope) & (slope != 0)
    # direction in which F decreases (towards private); F of a scale decreases in the scale
    up = jnp.where(usable, -jnp.sign(slope), 1.0)

    def body(i, c):
        xs, fs, ax = c
        step = -fs[0] / jnp.where(usable, slope, 1.0)
        x1 = x0 + jnp.where(usable & jnp.isfinite(step), step, 0.0)
        sec = (xs[0] * fs[1] - xs[1] * fs[0]) / (fs[1] - fs[0])
        x2 = jnp.where(jnp.isfinite(sec), sec, x1)
        x = jnp.select([i == 0, i == 1, i == 2], [x0, x1, x2 + 0.5 * tol * up], x2 - 0.5 * tol * up)
        fx, a = f(x)
        return xs.at[i].set(x), fs.at[i].set(fx), ax.at[i].set(a)

    n = 4
    xs = jnp.full((n,), jnp.nan)
    fs = jnp.full((n,), jnp.nan)
    ax = jnp.broadcast_to(aux0, (n,) + aux0.shape)
    xs, fs, ax = jax.lax.fori_loop(0, n, body, (xs, fs, ax))
    feasible = fs <= 0
    key = xs * up  # larger key = further towards the private side
    gi = jnp.argmin(jnp.where(feasible, key, jnp.inf))
    bi = jnp.argmax(jnp.where(fs > 0, key, -jnp.inf))
    has_g, has_b = jnp.any(feasible), jnp.any(fs > 0)
    ok = feasible[2] & (fs[3] > 0)
    return Root(
        good=jnp.where(has_g, xs[gi], nan),
        aux=ax[gi],
        bad=jnp.where(has_b, xs[bi], nan),
        slope=jnp.where(ok, (fs[3] - fs[2]) / (xs[3] - xs[2]), slope),
        status=jnp.where(ok, OK, NOT_CONVERGED).astype(jnp.int32),
        evaluations=jnp.asarray(n, jnp.int32),
    )
