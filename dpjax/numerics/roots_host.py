r"""Host-driven root finding: the loop in Python/NumPy, each evaluation one compiled call.

The traced searches of :mod:`dpjax.numerics.roots` compile the whole loop with the
predicate inlined at every call site; here the loop runs on the host and only the
evaluation is compiled (or is itself a host computation, e.g. a PLD composition whose
grid size depends on the point).  Same rules: every evaluated point tightens a bracket
and only a point where the predicate was evaluated and held is returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np


def bisect_host(
    evaluate: Callable[[Any], tuple[Any, Any]], good, bad, num_iterations: int,
    good_aux: Any = None, *, geometric: bool = False, tol: float = 0.0,
) -> tuple[Any, Any, Any]:
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
      ``(good, aux at good, bad)``.

    Example:
      >>> bisect_host(lambda x: (x * x <= 2.0, x * x), 0.0, 2.0, 30)[0]
      1.4142135605216026
      >>> import numpy as np
      >>> g, _, _ = bisect_host(lambda x: (x * x >= np.array([2.0, 3.0]), None),
      ...                       np.full(2, 4.0), np.full(2, 1.0), 60, geometric=True, tol=1e-12)
      >>> [round(float(v), 9) for v in g]
      [1.414213562, 1.732050808]
    """
    scalar = np.ndim(good) == 0 and np.ndim(bad) == 0
    if scalar:
        good, bad = float(good), float(bad)
    else:
        good, bad = (np.array(v, dtype=np.float64) for v in np.broadcast_arrays(good, bad))
    for _ in range(num_iterations):
        width = np.abs(good - bad)
        if np.all(width <= (tol * np.abs(bad) if geometric else tol)):
            break
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
    return good, good_aux, bad


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
) -> tuple[np.ndarray, np.ndarray]:
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
      ``(good, converged)``: the least feasible point found and whether it is within
      ``tol`` of the root (verified by an evaluation on each side).

    Example:
      >>> import numpy as np
      >>> f = lambda x: (2.0 - x * x, -2.0 * x)  # feasible above sqrt(2)
      >>> g, ok = newton_host(f, np.array([2.0]), np.array([2.0]), np.array([0.0]))
      >>> round(float(g[0]), 12), bool(ok[0])
      (1.414213562373, True)
    """
    x = np.asarray(x0, dtype=np.float64).copy()
    good = np.asarray(good, dtype=np.float64).copy()
    bad = np.asarray(bad, dtype=np.float64).copy()
    held = np.zeros(x.shape, dtype=bool)  # F(good) <= 0 was evaluated, not assumed
    for _ in range(max_iterations):
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
    return good, held & ((good - bad <= tol) | (np.asarray(below) > 0))


def illinois_host(
    evaluate: Callable[[np.ndarray], np.ndarray],
    good: np.ndarray,
    bad: np.ndarray,
    tol: float,
    max_evaluations: int = 100,
    f_good: np.ndarray | None = None,
    f_bad: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
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
      ``(good, converged)``: per row the feasible end of the final bracket, and whether the
      bracket closed to ``tol`` with ``F(good) <= 0`` evaluated.

    Example:
      >>> import numpy as np
      >>> g, ok = illinois_host(lambda x: 2.0 - x * x, np.array([2.0]), np.array([0.0]), 1e-12)
      >>> round(float(g[0]), 11), bool(ok[0])
      (1.41421356237, True)
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
    return good, held & (np.abs(good - bad) <= tol)
