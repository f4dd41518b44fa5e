r"""The one root-finding toolkit: fixed-iteration bisection, Illinois and a warm bracket.

Every search here is pure and jit/vmap-safe, and reports a :class:`Status` per point
(``dpjax.numerics.Status``, the enum shared with :mod:`solvers`) instead of raising, so
one infeasible point does not kill a grid (cf. ``optimistix/_solver/bisection.py``).

**Fixed-iteration bisection** (:func:`bisect_bracket`, :func:`bisect_monotone`; for
predicates that cannot be traced, or a first call that should compile only the predicate,
the host-driven :func:`dpjax.numerics.roots_host.bisect_host` and
:func:`~dpjax.numerics.roots_host.newton_host`).  Calibration asks "the least
scale at which the target is met" for a whole grid of targets at once.  A fixed number
of halvings does the same work at every grid point (no data-dependent trip count under
``vmap``), and the ``good`` end, where the predicate holds, is the answer, so it is
always on the safe side.  Bisect in log space by passing log-transformed ends and a
predicate that exponentiates.

**Calibration searches** (:func:`illinois`, :func:`warm_bracket`).  Calibrating a scale
through the PLD engine means finding the root of a decreasing ``F(x = log scale)``
(``F <= 0``: private) whose evaluation is a whole PLD composition, so evaluations are
what costs: Illinois regula falsi with Brent's nudge (8 evaluations for ``tol = 1e-7``
from a bracket of a factor 1.5 on the nearly linear ``F`` of calibration), and a
four-evaluation bracket from a warm start (the root and slope of the same search on a
coarser grid).  Both return the good end (``F <= 0``) with the auxiliary value of the
evaluation *at that point* (the certified ``log delta``): nothing is inferred, so the
value returned is the value of the returned scale.  ``f(x) -> (F, aux)`` has a single
call site in each loop (one compile).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from solvers import Status


class BisectionResult(NamedTuple):
    """Result of :func:`bisect_monotone`.

    Attributes:
      good: the end of the final bracket where the predicate holds (the *feasible* end;
        returned as the answer so that it is always safe).
      bad: the other end, where the predicate fails.
      status: per-point :class:`Status`: ``OPTIMAL`` when the bracket was valid,
        ``INFEASIBLE`` (fails at ``good``), ``BRACKET_TOO_SMALL`` (holds at ``bad``) or
        ``FAILED`` (a ``nan`` end).
    """

    good: Array
    bad: Array
    status: Array


def bisect_bracket(
    predicate: Callable[[Array], Array],
    good: ArrayLike,
    bad: ArrayLike,
    num_iterations: int = 100,
) -> tuple[Array, Array]:
    r"""The bare fixed-iteration bisection loop: ``num_iterations`` halvings of ``[good, bad]``.

    Each step evaluates the predicate once, at the arithmetic midpoint, and keeps the
    half whose ends still straddle the boundary:

    .. math:: m = \tfrac12 (g + b), \qquad (g, b) \leftarrow
              \begin{cases} (m, b) & \text{predicate}(m) \\ (g, m) & \text{otherwise.}
              \end{cases}

    No end checks and no status: the predicate is traced once (short compiles) and the
    caller checks or certifies the returned end (:func:`bisect_monotone` adds the checks).
    Generic numerics (no paper equation).

    Args:
      predicate: elementwise monotone boolean function (traceable), true on the ``good``
        side of a single boundary.
      good: end that should satisfy the predicate.
      bad: end that should violate it (broadcast with ``good``; the predicate's output
        must have the shape of the broadcast ends).
      num_iterations: static number of halvings.

    Returns:
      ``(good, bad)``: the final bracket, ``|bad - good| 2^{-num_iterations}`` wide.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> good, bad = bisect_bracket(lambda x: x * x <= 2.0, 0.0, 2.0, num_iterations=60)
      >>> round(float(good), 12)
      1.414213562373
    """
    good, bad = jnp.broadcast_arrays(jnp.asarray(good), jnp.asarray(bad))

    def body(_, carry):
        g, b = carry
        mid = 0.5 * (g + b)
        ok = predicate(mid)
        return jnp.where(ok, mid, g), jnp.where(ok, b, mid)

    return jax.lax.fori_loop(0, num_iterations, body, (good, bad))


def bisect_monotone(
    predicate: Callable[[Array], Array],
    good: ArrayLike,
    bad: ArrayLike,
    num_iterations: int = 100,
) -> BisectionResult:
    r"""Shrink ``[good, bad]`` around the boundary of a monotone predicate, with a status.

    :func:`bisect_bracket` (same formula) after checking both ends; the ``good`` end is
    returned, so the answer always satisfies the predicate (for calibration: private).

    Args:
      predicate: elementwise monotone boolean function (traceable).
      good: end that should satisfy the predicate.
      bad: end that should violate it.  Broadcast with ``good``.
      num_iterations: static number of halvings.

    Returns:
      ``BisectionResult(good, bad, status)``.  ``status`` is ``Status.INFEASIBLE`` if the
      predicate fails at ``good``, ``Status.BRACKET_TOO_SMALL`` if it holds at ``bad``
      (in both cases the ends are returned unchanged; in the second the true boundary
      lies beyond ``bad``), ``Status.FAILED`` if the bracket went ``nan``, else
      ``Status.OPTIMAL``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> res = bisect_monotone(lambda x: x <= jnp.array([0.25, -1.0]), jnp.zeros(2), jnp.ones(2))
      >>> [Status(int(s)).name for s in res.status]
      ['OPTIMAL', 'INFEASIBLE']
    """
    good, bad = jnp.broadcast_arrays(jnp.asarray(good), jnp.asarray(bad))
    ok_good = predicate(good)
    ok_bad = predicate(bad)
    status = jnp.where(
        ~ok_good,
        Status.INFEASIBLE,
        jnp.where(ok_bad, Status.BRACKET_TOO_SMALL, Status.OPTIMAL),
    ).astype(jnp.int32)
    g, b = bisect_bracket(predicate, good, bad, num_iterations)
    valid = status == Status.OPTIMAL
    g = jnp.where(valid, g, good)
    b = jnp.where(valid, b, bad)
    has_nan = jnp.isnan(g) | jnp.isnan(b)
    status = jnp.where(has_nan & valid, Status.FAILED, status)
    return BisectionResult(good=g, bad=b, status=status)


def least_feasible(
    predicate: Callable[[Array], Array], upper: ArrayLike, num_iterations: int = 100
) -> Array:
    r"""The least ``x`` in ``[0, upper]`` where ``predicate`` holds (it holds above a boundary).

    .. math:: x^* = \min\{x \in [0, \mathrm{upper}] : \mathrm{predicate}(x)\}

    by :func:`bisect_monotone` on ``[upper, 0]``: ``0`` where the predicate holds at 0,
    ``inf`` where it fails at ``upper``.  E.g. the least certified ``epsilon`` of a
    profile.  Generic numerics (no paper equation).

    Args:
      predicate: elementwise monotone boolean function (traceable).
      upper: upper end of the bracket (array).
      num_iterations: static number of halvings.

    Returns:
      ``x*``, shaped like ``upper``.
    """
    upper = jnp.asarray(upper)
    res = bisect_monotone(predicate, good=upper, bad=jnp.zeros_like(upper),
                          num_iterations=num_iterations)
    x = jnp.where(res.status == Status.OPTIMAL, res.good, jnp.inf)
    return jnp.where(res.status == Status.BRACKET_TOO_SMALL, 0.0, x)

class Root(NamedTuple):
    """Result of :func:`illinois` and :func:`warm_bracket`.

    Attributes:
      good: the feasible end (``F(good) <= 0``); the initial ``good`` unless the status
        is ``OPTIMAL`` or ``MAX_ITERATIONS`` (then the best feasible point found).
      aux: ``aux`` of the evaluation at ``good``.
      bad: the infeasible end of the final bracket (``nan`` when unknown).
      slope: secant slope of ``F`` between the last two ends (``nan`` when unknown).
      status: per-point :class:`Status`: ``OPTIMAL`` (bracket of width ``<= tol``),
        ``INFEASIBLE`` (``F(good) > 0``), ``BRACKET_TOO_SMALL`` (``F(bad) <= 0``: the
        root lies beyond ``bad``) or ``MAX_ITERATIONS`` (tolerance not reached).
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


def illinois(
    f: Callable[[Array], tuple[Array, Array]],
    good: ArrayLike,
    bad: ArrayLike,
    tol: ArrayLike,
    max_evaluations: int = 60,
) -> Root:
    r"""Illinois regula falsi for ``F(x) = 0`` on ``[bad, good]`` (either order) to width ``tol``.

    The first two evaluations check the ends (``F(good) <= 0 < F(bad)`` is required);
    each later one is at the secant point of the current ends, with the value kept at
    an end that survives twice halved (Illinois; Dowell & Jarratt 1971):

    .. math:: x = \frac{g\, m_b - b\, m_g}{m_b - m_g} \pm \tfrac{\mathrm{tol}}{2},

    nudged ``tol / 2`` towards the stale end (so that once the secant is accurate the
    bracket collapses in one step instead of creeping from one side; a forced bisection
    every few steps, tried, only added evaluations on smooth, convex and step-shaped test
    functions) and replaced by the midpoint when it leaves the bracket.  Generic numerics
    (no paper equation): the root search of :mod:`dpjax.calibration.scale_search`.

    Args:
      f: ``f(x) -> (F, aux)``, ``F`` decreasing across the bracket (traceable; ``aux`` any
        array, returned for the point kept).
      good: end with ``F(good) <= 0``.
      bad: end with ``F(bad) > 0``.
      tol: absolute tolerance on ``x`` (width of the final bracket).
      max_evaluations: static cap on the number of evaluations of ``f``.

    Returns:
      A :class:`Root`: the good end of a bracket of width ``<= tol``
      (``Status.OPTIMAL``), the best feasible point after ``max_evaluations``
      (``Status.MAX_ITERATIONS``), or the initial ends with ``Status.INFEASIBLE`` /
      ``Status.BRACKET_TOO_SMALL`` when the ends are not a bracket.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> r = illinois(lambda x: (2.0 - x * x, x), 2.0, 0.0, 1e-10)  # F decreasing
      >>> Status(int(r.status)).name, round(float(r.good), 9)
      ('OPTIMAL', 1.414213562)
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

    # i: evaluations; g/b: the ends, fg/fb their values, mg/mb the (Illinois-halved) values
    # the secant uses, ag the aux at g; last: side of the last point; f0/f1: F at the ends
    zero = jnp.zeros((), jnp.int32)
    c0 = dict(i=zero, g=good, fg=nan, ag=aux0, mg=nan, b=bad, fb=nan, mb=nan, last=zero,
              f0=nan, f1=nan)
    c = jax.lax.while_loop(cond, body, c0)
    status = jnp.where(
        c["f0"] > 0,
        Status.INFEASIBLE,
        jnp.where(
            c["f1"] <= 0,
            Status.BRACKET_TOO_SMALL,
            jnp.where(
                jnp.abs(c["g"] - c["b"]) <= tol, Status.OPTIMAL, Status.MAX_ITERATIONS
            ),
        ),
    ).astype(jnp.int32)
    resolved = (status == Status.OPTIMAL) | (status == Status.MAX_ITERATIONS)
    slope = (c["fb"] - c["fg"]) / (c["b"] - c["g"])
    return Root(
        good=jnp.where(resolved, c["g"], good),
        aux=c["ag"],
        bad=jnp.where(resolved, c["b"], nan),
        slope=jnp.where(resolved, slope, nan),
        status=status,
        evaluations=c["i"],
    )


def warm_bracket(
    f: Callable[[Array], tuple[Array, Array]], x0: ArrayLike, slope: ArrayLike, tol: ArrayLike
) -> Root:
    r"""Four evaluations from a warm start: a bracket of width ``tol``, or the best ends seen.

    The points are ``x0``; the Newton point ``x1``; the secant point ``x2`` of ``(x0, x1)``
    (``F``'s own slope, whatever the error of ``slope``); and ``x2 -+ tol / 2`` (good side
    where ``F`` decreases):

    .. math:: x_1 = x_0 - \frac{F(x_0)}{s}, \qquad
              x_2 = \frac{x_0 F(x_1) - x_1 F(x_0)}{F(x_1) - F(x_0)} .

    Generic numerics (no paper equation): the settling stage of the PLD scale calibration
    (:mod:`dpjax.calibration.scale_search`), warm-started from a coarser grid.

    Args:
      f: ``f(x) -> (F, aux)``, ``F`` monotone near ``x0`` (traceable).
      x0: warm start (e.g. the root of the same search on a coarser grid).
      slope: estimate ``s`` of ``dF/dx`` near the root (``nan`` or 0: not usable).
      tol: absolute tolerance on ``x`` (width of the bracket to certify).

    Returns:
      A :class:`Root`: ``Status.OPTIMAL`` when ``x2 -+ tol / 2`` bracket the root;
      otherwise ``Status.MAX_ITERATIONS`` with ``good`` / ``bad`` the best feasible /
      infeasible points seen (``nan`` if none): the ends for a fallback :func:`illinois`.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> r = warm_bracket(lambda x: (1.0 - x, x), 0.9, -1.0, 1e-8)
      >>> Status(int(r.status)).name, bool(r.good >= 1.0 >= r.bad)
      ('OPTIMAL', True)
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
        status=jnp.where(ok, Status.OPTIMAL, Status.MAX_ITERATIONS).astype(jnp.int32),
        evaluations=jnp.asarray(n, jnp.int32),
    )
