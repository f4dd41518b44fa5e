r"""The one root-finding module: every search of dpjax, traced or host-driven, one result type.

Every search returns a :class:`Root` (``good``, ``aux``, ``bad``, ``slope``, ``status``,
``evaluations``) and reports a :class:`Status` per point (``dpjax.numerics.Status``, the
enum shared with :mod:`solvers`) instead of raising, so one infeasible point does not
kill a grid (cf. ``optimistix/_solver/bisection.py``).  The ``good`` end, where the
predicate was evaluated and held, is the answer, so it is always on the safe side.

**Traced searches** (pure, jit/vmap-safe).  *Fixed-iteration bisection*
(:func:`bisect_bracket`, the bare loop; :func:`bisect_monotone`, with end checks;
:func:`least_feasible`).  Calibration asks "the least scale at which the target is met"
for a whole grid of targets at once: a fixed number of halvings does the same work at
every grid point (no data-dependent trip count under ``vmap``).  Bisect in log space by
passing log-transformed ends and a predicate that exponentiates.  *Calibration searches*
(:func:`illinois`, :func:`warm_bracket`): calibrating a scale through the PLD engine
means finding the root of a decreasing ``F(x = log scale)`` (``F <= 0``: private) whose
evaluation is a whole PLD composition, so evaluations are what costs: Illinois regula
falsi with Brent's nudge (8 evaluations for ``tol = 1e-7`` from a bracket of a factor 1.5
on the nearly linear ``F`` of calibration), and a four-evaluation bracket from a warm
start (the root and slope of the same search on a coarser grid).  Both return the good
end with the auxiliary value of the evaluation *at that point* (the certified ``log
delta``): nothing is inferred, so the value returned is the value of the returned scale.
``f(x) -> (F, aux)`` has a single call site in each loop (one compile).

**Host-driven searches** (:func:`bisect_host`, :func:`newton_host`,
:func:`illinois_host`, :func:`least_integer_host`): the same rules with the loop in
Python/NumPy and only the evaluation compiled (or itself a host computation, e.g. a PLD
composition whose grid size depends on the point), for predicates that cannot be traced
or a first call that should compile only the predicate.  Every evaluated point tightens
a bracket and only a point where the predicate was evaluated and held is returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from solvers import Status


class Root(NamedTuple):
    """The result of every search in this module, traced or host-driven.

    Attributes:
      good: the feasible end (``F(good) <= 0``, or where the predicate holds): the answer,
        always on the safe side.  The initial ``good`` unless the search moved it.
      aux: the auxiliary value of the evaluation at ``good`` (``None`` for a search whose
        predicate has none).
      bad: the infeasible end of the final bracket (``nan`` when unknown).
      slope: secant slope of ``F`` between the last two ends (``nan`` when the search has
        no function values: the bisections).
      status: per-point :class:`Status`: ``OPTIMAL`` (bracket resolved to the tolerance,
        the predicate evaluated at ``good``), ``INFEASIBLE`` (fails at ``good``),
        ``BRACKET_TOO_SMALL`` (holds at ``bad``: the root lies beyond it), ``FAILED`` (a
        ``nan`` end) or ``MAX_ITERATIONS`` (the evaluation budget spent before a
        tolerance: every fixed-iteration loop without end checks, :func:`bisect_bracket`
        and :func:`bisect_host` with ``tol = 0``, reports it; its caller certifies).
      evaluations: number of evaluations of the function or predicate.
    """

    good: Any
    aux: Any
    bad: Any
    slope: Any
    status: Any
    evaluations: Any


def bisect_bracket(
    predicate: Callable[[Array], Array],
    good: ArrayLike,
    bad: ArrayLike,
    num_iterations: int = 100,
) -> Root:
    r"""The bare fixed-iteration bisection loop: ``num_iterations`` halvings of ``[good, bad]``.

    Each step evaluates the predicate once, at the arithmetic midpoint, and keeps the
    half whose ends still straddle the boundary:

    .. math:: m = \tfrac12 (g + b), \qquad (g, b) \leftarrow
              \begin{cases} (m, b) & \text{predicate}(m) \\ (g, m) & \text{otherwise.}
              \end{cases}

    No end checks: the predicate is traced once (short compiles), the status is
    ``MAX_ITERATIONS`` (the budget spent, the ends unchecked) and the caller checks or
    certifies the returned end (:func:`bisect_monotone` adds the checks).
    Generic numerics (no paper equation).

    Args:
      predicate: elementwise monotone boolean function (traceable), true on the ``good``
        side of a single boundary.
      good: end that should satisfy the predicate.
      bad: end that should violate it (broadcast with ``good``; the predicate's output
        must have the shape of the broadcast ends).
      num_iterations: static number of halvings.

    Returns:
      A :class:`Root`: ``good`` and ``bad`` the final bracket, ``|bad - good|
      2^{-num_iterations}`` wide; ``aux`` ``None``, ``slope`` ``nan``, ``status``
      ``MAX_ITERATIONS``, ``evaluations`` ``num_iterations``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> r = bisect_bracket(lambda x: x * x <= 2.0, 0.0, 2.0, num_iterations=60)
      >>> round(float(r.good), 12)
      1.414213562373
    """
    good, bad = jnp.broadcast_arrays(jnp.asarray(good), jnp.asarray(bad))

    def body(_, carry):
        g, b = carry
        mid = 0.5 * (g + b)
        ok = predicate(mid)
        return jnp.where(ok, mid, g), jnp.where(ok, b, mid)

    g, b = jax.lax.fori_loop(0, num_iterations, body, (good, bad))
    return Root(good=g, aux=None, bad=b, slope=jnp.full_like(g, jnp.nan),
                status=jnp.full(g.shape, Status.MAX_ITERATIONS, jnp.int32),
                evaluations=jnp.asarray(num_iterations, jnp.int32))


def bisect_monotone(
    predicate: Callable[[Array], Array], good: ArrayLike, bad: ArrayLike, *,
    num_iterations: int = 100,
) -> Root:
    r"""Shrink ``[good, bad]`` around the boundary of a monotone predicate, with a status.

    :func:`bisect_bracket` (same formula) after checking both ends; the ``good`` end is
    returned, so the answer always satisfies the predicate (for calibration: private).
    The end checks are the loop's first two passes (then its halvings), so the compiled
    program holds the predicate once.

    Args:
      predicate: elementwise monotone boolean function (traceable).
      good: end that should satisfy the predicate.
      bad: end that should violate it.  Broadcast with ``good``.
      num_iterations: static number of halvings.

    Returns:
      A :class:`Root` (``aux`` ``None``, ``slope`` ``nan``).  ``status`` is
      ``Status.INFEASIBLE`` if the predicate fails at ``good``,
      ``Status.BRACKET_TOO_SMALL`` if it holds at ``bad``
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

    def body(i, carry):
        # pass 0 checks good, pass 1 bad, then the halvings of bisect_bracket
        g, b, ok_good, ok_bad = carry
        mid = 0.5 * (g + b)
        ok = jnp.asarray(predicate(jnp.where(i == 0, good, jnp.where(i == 1, bad, mid))), bool)
        halve = i >= 2
        return (jnp.where(halve & ok, mid, g), jnp.where(halve & ~ok, mid, b),
                jnp.where(i == 0, ok, ok_good), jnp.where(i == 1, ok, ok_bad))

    unchecked = jnp.zeros(good.shape, bool)
    g, b, ok_good, ok_bad = jax.lax.fori_loop(
        0, num_iterations + 2, body, (good, bad, unchecked, unchecked))
    status = jnp.where(
        ~ok_good,
        Status.INFEASIBLE,
        jnp.where(ok_bad, Status.BRACKET_TOO_SMALL, Status.OPTIMAL),
    ).astype(jnp.int32)
    valid = status == Status.OPTIMAL
    g = jnp.where(valid, g, good)
    b = jnp.where(valid, b, bad)
    has_nan = jnp.isnan(g) | jnp.isnan(b)
    status = jnp.where(has_nan & valid, Status.FAILED, status)
    return Root(good=g, aux=None, bad=b, slope=jnp.full_like(g, jnp.nan),
                status=status.astype(jnp.int32),
                evaluations=jnp.asarray(num_iterations + 2, jnp.int32))


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


# host-driven searches: the loop in Python/NumPy, each evaluation one (compiled) call


def bisect_host(
    evaluate: Callable[[Any], tuple[Any, Any]], good, bad, num_iterations: int,
    good_aux: Any = None, *, geometric: bool = False, tol: float = 0.0,
) -> Root:
    r""":func:`bisect_bracket` (same formula) as a Python loop, for predicates that cannot be
    traced (e.g. a PLD composition whose grid size depends on the point).  No end checks.

    .. math:: m = \tfrac12 (g + b)\ \text{(or } \sqrt{g b}\text{, geometric)},\qquad
              (g, b) \leftarrow (m, b)\ \text{if the predicate holds at } m,
              \text{ else } (g, m)

    Scalar ends run the loop on Python floats (``aux`` may be any object); array ends
    bisect every element at once (``evaluate`` is called on the array of midpoints and
    ``aux``, when given, is an array of their shape).

    Args:
      evaluate: ``evaluate(x) -> (holds, aux)`` on a Python float (or a float64 array).
      good: end where the predicate holds.
      bad: end where it fails.
      num_iterations: most halvings.
      good_aux: ``aux`` at ``good`` (returned where ``good`` never moves).
      geometric: bisect at the geometric midpoint ``sqrt(g b)`` (positive ends), i.e. in
        log space.
      tol: stop early once every bracket is at most ``tol`` wide (relative to ``|bad|``
        when ``geometric``).

    Returns:
      A :class:`Root` (Python floats for scalar ends, else NumPy arrays): ``good``, ``aux``
      at ``good``, ``bad``; ``status`` ``OPTIMAL`` where the bracket closed to ``tol``,
      else ``MAX_ITERATIONS`` (always with ``tol = 0``: a fixed number of halvings);
      ``slope`` ``nan``; ``evaluations`` the number of calls of ``evaluate``.

    Example:
      >>> bisect_host(lambda x: (x * x <= 2.0, x * x), 0.0, 2.0, 30).good
      1.4142135605216026
      >>> import numpy as np
      >>> r = bisect_host(lambda x: (x * x >= np.array([2.0, 3.0]), None),
      ...                 np.full(2, 4.0), np.full(2, 1.0), 60, geometric=True, tol=1e-12)
      >>> [round(float(v), 9) for v in r.good], [Status(int(c)).name for c in r.status]
      ([1.414213562, 1.732050808], ['OPTIMAL', 'OPTIMAL'])
    """
    scalar = np.ndim(good) == 0 and np.ndim(bad) == 0
    if scalar:
        good, bad = float(good), float(bad)
    else:
        good, bad = (np.array(v, dtype=np.float64) for v in np.broadcast_arrays(good, bad))

    def closed():
        return np.abs(good - bad) <= (tol * np.abs(bad) if geometric else tol)

    evaluations = 0
    for _ in range(num_iterations):
        if np.all(closed()):
            break
        evaluations += 1
        mid = (math.sqrt(good * bad) if scalar else np.sqrt(good * bad)) if geometric else (
            0.5 * (good + bad))
        holds, aux = evaluate(mid)
        if scalar:
            if holds:
                good, good_aux = mid, aux
            else:
                bad = mid
            continue
        holds = np.asarray(holds, dtype=bool)
        if good_aux is not None:
            good_aux = np.where(holds, aux, good_aux)
        good, bad = np.where(holds, mid, good), np.where(holds, bad, mid)
    status = np.where((tol > 0) & closed(), Status.OPTIMAL, Status.MAX_ITERATIONS)
    return Root(good=good, aux=good_aux, bad=bad, slope=math.nan,
                status=int(status) if scalar else status.astype(np.int32),
                evaluations=evaluations)


def least_integer_host(holds: Callable[[int], bool], lo: int, hi: int) -> int:
    r"""The least integer ``k`` in ``[lo, hi]`` where a monotone predicate holds.

    .. math:: k^* = \min\{k \in [\mathrm{lo}, \mathrm{hi}] : \mathrm{holds}(k)\}

    by bisection on the integers (``holds`` false below ``k*`` and true from it on; it is
    trusted to hold at ``hi`` and is evaluated about ``log2(hi - lo)`` times).  Generic
    numerics (no paper equation).

    Args:
      holds: ``k -> bool``, monotone.
      lo: least candidate.
      hi: a candidate where ``holds`` is true.

    Returns:
      ``k*`` (``hi`` when no smaller candidate holds).

    Example:
      >>> least_integer_host(lambda k: k * k >= 50, 0, 100)
      8
    """
    lo, hi = int(lo), int(hi)
    if holds(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def newton_host(
    evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    x0: np.ndarray,
    good: np.ndarray,
    bad: np.ndarray,
    tol: float = 1e-12,
    max_iterations: int = 60,
) -> Root:
    r"""Safeguarded Newton on ``F(x) <= 0`` (feasible above the root) driven from the host.

    .. math:: x_{k+1} = x_k - F(x_k) / F'(x_k)

    kept inside the bracket ``(bad, good)`` that every evaluation tightens (a point with
    ``F <= 0`` becomes ``good``, one with ``F > 0`` becomes ``bad``); a step leaving the
    bracket is replaced by the midpoint (at most one unit above ``bad``); every step moves
    by at least ``tol / 2`` (down from a feasible point, up from an infeasible one: near
    the root the sign of ``F`` is float noise and ulp-sized steps stall).  A point has
    converged when its bracket is narrower than ``tol`` or ``F(good - tol) > 0`` (one last
    evaluation verifies it).  ``F`` need not be monotone, only change sign once.  Only
    ``good`` is returned: a point where ``F`` was evaluated and held.  One jitted
    ``evaluate`` (a vector kernel, compiled once) serves every iteration, so the compile
    is that of ``F`` alone.  Generic numerics (no paper
    equation).

    Args:
      evaluate: ``x -> (F(x), F'(x))`` on a float64 vector (elementwise).
      x0: start points.
      good: feasible ends (``F <= 0``; ``inf`` allowed when unknown).
      bad: infeasible ends (``F > 0``).
      tol: bracket width at which a point has converged.
      max_iterations: most evaluations.

    Returns:
      A :class:`Root` of NumPy arrays: ``good`` the least feasible point found, ``bad``
      the greatest infeasible one, ``slope`` ``F'`` at the last point; ``status``
      ``OPTIMAL`` where ``good`` is within ``tol`` of the root (verified by an
      evaluation on each side), ``INFEASIBLE`` where no evaluated point was feasible,
      else ``MAX_ITERATIONS``; ``aux`` ``None``.

    Example:
      >>> import numpy as np
      >>> f = lambda x: (2.0 - x * x, -2.0 * x)  # feasible above sqrt(2)
      >>> r = newton_host(f, np.array([2.0]), np.array([2.0]), np.array([0.0]))
      >>> round(float(r.good[0]), 12), Status(int(r.status[0])).name
      (1.414213562373, 'OPTIMAL')
    """
    x = np.asarray(x0, dtype=np.float64).copy()
    good = np.asarray(good, dtype=np.float64).copy()
    bad = np.asarray(bad, dtype=np.float64).copy()
    held = np.zeros(x.shape, dtype=bool)  # F(good) <= 0 was evaluated, not assumed
    evaluations, slope = 1, np.full(x.shape, np.nan)
    for _ in range(max_iterations):
        evaluations += 1
        gap, slope = (np.asarray(v, dtype=np.float64) for v in evaluate(x))
        ok = gap <= 0
        held |= ok
        good = np.where(ok, np.minimum(good, x), good)
        bad = np.where(ok, bad, np.maximum(bad, x))
        if np.all(good - bad <= tol):
            break
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = x - gap / slope
        step = np.where(ok, np.minimum(step, x - 0.5 * tol), np.maximum(step, x + 0.5 * tol))
        inside = (step > bad) & (step < good) & np.isfinite(step)
        fallback = np.minimum(0.5 * (bad + good), bad + 1.0)
        x = np.where(inside, step, fallback)
    below, _ = evaluate(good - tol)
    converged = held & ((good - bad <= tol) | (np.asarray(below) > 0))
    return Root(good=good, aux=None, bad=bad, slope=slope,
                status=_host_status(converged, held), evaluations=evaluations)


def _host_status(converged: np.ndarray, held: np.ndarray) -> np.ndarray:
    """``OPTIMAL`` where converged, ``INFEASIBLE`` where no feasible point was evaluated,
    else ``MAX_ITERATIONS`` (int32, the codes of :class:`Status`)."""
    return np.where(converged, Status.OPTIMAL,
                    np.where(held, Status.MAX_ITERATIONS, Status.INFEASIBLE)).astype(np.int32)


def illinois_host(
    evaluate: Callable[[np.ndarray], np.ndarray],
    good: np.ndarray,
    bad: np.ndarray,
    tol: float,
    max_evaluations: int = 100,
    f_good: np.ndarray | None = None,
    f_bad: np.ndarray | None = None,
) -> Root:
    r"""Illinois (regula falsi) on ``F(x) <= 0`` driven from the host, vectorised over rows.

    .. math:: x = g - F(g) \frac{g - b}{F(g) - F(b)}

    on the bracket ``(good, bad)`` of each row (``F(good) <= 0 < F(bad)``), the end that
    survives twice having its value halved (Dowell & Jarratt 1971); the midpoint replaces
    the secant point while an end has no finite value (e.g. ``F = +inf``), and every point
    is kept ``tol / 4`` inside the bracket.  Every evaluation tightens the bracket; rows stop when
    ``|good - bad| <= tol``.  Generic numerics (no paper equation): the host twin of
    :func:`dpjax.numerics.illinois`, for an ``F`` that is itself a NumPy computation.

    Args:
      evaluate: ``x -> F(x)`` on a float64 vector (elementwise; ``+inf`` allowed).
      good: ends where ``F <= 0`` is expected (evaluated first; a row where it fails keeps
        ``good`` and is reported unconverged).
      bad: ends where ``F > 0`` is expected (a row where ``F(bad) <= 0`` returns ``bad``
        as its feasible end).
      tol: bracket width at which a row has converged.
      max_evaluations: most evaluations (each evaluates every row).
      f_good, f_bad: ``F`` at the ends where the caller has it (not evaluated again);
        ``-inf`` / ``+inf`` stand for an end not evaluated (the first steps then bisect
        until both ends are evaluated points); the caller vouches for their signs.

    Returns:
      A :class:`Root` of NumPy arrays: per row the feasible end ``good`` and the other end
      ``bad`` of the final bracket, ``slope`` the secant of the (Illinois-scaled) end
      values; ``status`` ``OPTIMAL`` where the bracket closed to ``tol`` with
      ``F(good) <= 0`` evaluated (a row feasible at ``bad`` included: its bracket is
      ``bad`` itself), ``INFEASIBLE`` where ``F(good) > 0``, else ``MAX_ITERATIONS``;
      ``aux`` ``None``.

    Example:
      >>> import numpy as np
      >>> r = illinois_host(lambda x: 2.0 - x * x, np.array([2.0]), np.array([0.0]), 1e-12)
      >>> round(float(r.good[0]), 11), Status(int(r.status[0])).name
      (1.41421356237, 'OPTIMAL')
    """
    good = np.asarray(good, dtype=np.float64).copy()
    bad = np.asarray(bad, dtype=np.float64).copy()
    evaluations = (f_good is None) + (f_bad is None)
    f_good = np.asarray(evaluate(good) if f_good is None else f_good, dtype=np.float64)
    f_bad = np.asarray(evaluate(bad) if f_bad is None else f_bad, dtype=np.float64)
    held = f_good <= 0
    # feasible already at the bad end: it is the answer
    low = f_bad <= 0
    good, f_good, held = np.where(low, bad, good), np.where(low, f_bad, f_good), held | low
    active = held & ~low & (np.abs(good - bad) > tol)
    m_good, m_bad = f_good.copy(), f_bad.copy()
    last = np.zeros(good.shape, dtype=np.int8)  # +1: the last point was good, -1: bad
    for _ in range(max_evaluations - evaluations):
        if not np.any(active):
            break
        evaluations += 1
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x = good - m_good * (good - bad) / (m_good - m_bad)
        lo, hi = np.minimum(good, bad), np.maximum(good, bad)
        # bisect while an end has no finite value (or the secant leaves the bracket); a
        # point is kept a quarter tolerance inside, so an end sitting on the root closes it
        secant = np.isfinite(m_good) & np.isfinite(m_bad) & (x >= lo) & (x <= hi)
        x = np.where(secant, x, 0.5 * (good + bad))
        x = np.clip(x, lo + 0.25 * tol, hi - 0.25 * tol)
        x = np.where(active, x, good)
        fx = np.asarray(evaluate(x), dtype=np.float64)
        on_good = active & (fx <= 0)
        on_bad = active & ~(fx <= 0)
        # Illinois: the end kept twice in a row has its value halved
        m_bad = np.where(on_good & (last == 1), 0.5 * m_bad, m_bad)
        m_good = np.where(on_bad & (last == -1), 0.5 * m_good, m_good)
        good, m_good = np.where(on_good, x, good), np.where(on_good, fx, m_good)
        bad, m_bad = np.where(on_bad, x, bad), np.where(on_bad, fx, m_bad)
        last = np.where(on_good, 1, np.where(on_bad, -1, last)).astype(np.int8)
        active &= np.abs(good - bad) > tol
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (m_good - m_bad) / (good - bad)
    converged = held & (np.abs(good - bad) <= tol)
    return Root(good=good, aux=None, bad=bad, slope=slope,
                status=_host_status(converged, held), evaluations=evaluations)
