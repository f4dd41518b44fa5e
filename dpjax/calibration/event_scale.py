r"""Calibration on the certified profile of an event: bisection on one scale parameter.

For a mechanism described by an event of :mod:`dpjax.accounting.events` whose privacy
improves monotonically with one scale ``s`` (a noise multiplier, a standard deviation,
``1 / a`` of discrete Laplace), the least certified scale for a target is

.. math:: s^\star = \min\{s : \hat\delta_s(\epsilon) \le \delta\},

with ``hat delta_s`` the certified ``delta(epsilon)`` of
:class:`~dpjax.accounting.PLDAccountant` under the neighbouring relation (exact pairs,
pessimistic discretisation).  The search brackets ``s*`` geometrically from a guess and
bisects in ``log s`` to a relative width ``rtol``; the returned scale is the certified end
of the bracket (Illinois steps on ``log(-log delta)`` against ``log s``, about linear for
tails like ``e^{-c s^2}`` or ``e^{-c s}``; bisection where the profile is exactly 0 or 1)
and is re-checked by a fresh accountant before it is returned (fail closed:
:class:`~dpjax.errors.CertificationError` otherwise).  A step only asks whether a scale meets
the target, so it asks the accountant's decision query (``get_delta(epsilon, target=delta)``:
no tilted refinement or RDP bound below the target, which decides exactly as the tightest
answer does); the re-check asks for the tightest answer.  A host loop: one accountant query per
step, for the event families whose accounting lives in the accountant (discrete noise,
neighbouring relations other than add-or-remove under Poisson subsampling).

Coarse to fine (``coarse > 1``): the whole search first runs at ``coarse * bin_width``, whose
grids are ``coarse`` times shorter, and its answer ``s_c`` (certified at that width) starts
a second search at ``bin_width`` with bracketing steps ``1 + rtol``, squared after each step.
A connect-the-dots profile on the finer grid is about as tight or tighter, so ``s_c`` usually
meets the target there too and ``s_c / (1 + rtol)`` usually misses it: two fine queries
close the bracket, and the contract (a final bracket of relative width ``rtol`` at
``bin_width``, re-checked) is the one search's.  Where the coarse answer is off, the growing
steps reach the fine bracket in a few more queries.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from dpjax.accounting import PLDAccountant
from dpjax.errors import CertificationError, InfeasibleTargetError

__all__ = ["COARSE", "calibrate_event_scale", "event_answer", "event_delta", "least_event_scale"]

#: Relative width of the final bracket (the returned scale exceeds the least certified one
#: by at most this factor).
RTOL = 1e-5
#: The bin-width factor of the coarse first search that callers with long grids ask for
#: (``coarse=COARSE``: Poisson-subsampled continuous noise under a relation).
COARSE = 16.0


def event_delta(event, epsilon: float, relation: str, bin_width: float = 1e-4,
                target: float = 0.0) -> float:
    """Certified ``delta(epsilon)`` of ``event`` under ``relation`` (a fresh accountant).

    Args:
      event: a dpjax event.
      epsilon: ``epsilon >= 0``.
      relation: the neighbouring relation (:data:`~dpjax.accounting.events.RELATIONS`).
      bin_width: the accountant's loss-grid spacing.
      target: refine no further once the certified ``delta`` is at most this
        (:meth:`~dpjax.accounting.PLDAccountant.get_delta`; default ``0``: the tightest).

    Returns:
      The certified ``delta`` (NaN raises :class:`CertificationError`).
    """
    acc = PLDAccountant(relation, bin_width).compose(event)
    out = acc.get_delta(float(epsilon), target=float(target))
    if math.isnan(out):
        raise CertificationError("the accountant's delta is NaN: dpjax cannot certify it")
    return out


def event_answer(event, what: str, x, relation: str, bin_width: float = 1e-4) -> np.ndarray:
    """The accountant's certified ``delta`` at each epsilon (``what = "profile"``) or
    ``epsilon`` at each delta (``what = "epsilon"``) of ``event`` under ``relation``.

    Args:
      event: a dpjax event.
      what: ``"profile"`` or ``"epsilon"``.
      x: the epsilons or deltas (array).
      relation: the neighbouring relation.
      bin_width: the accountant's loss-grid spacing.

    Returns:
      NumPy float64 of ``x``'s shape (NaN raises :class:`CertificationError`).
    """
    acc = PLDAccountant(relation, bin_width).compose(event)
    ask = acc.get_delta if what == "profile" else acc.get_epsilon
    got = np.vectorize(lambda v: ask(float(v)), otypes=[np.float64])(np.asarray(x, np.float64))
    if np.any(np.isnan(got)):
        raise CertificationError("the accountant's answer is NaN: dpjax cannot certify it")
    return got


def _squared_steps(step: float):
    """The bracketing steps of the fine pass after a coarse one: ``step``, ``step^2``,
    ``step^4``, ... (the coarse answer is close, so the first steps are small)."""
    while True:
        yield step
        step *= step


def least_event_scale(build: Callable[[float], object], eps: float, dlt: float, relation: str,
                      guess: float, *, name: str, lo_limit: float = 1e-6,
                      hi_limit: float = 1e12, rtol: float = RTOL, bin_width: float = 1e-4,
                      step: float = 4.0, coarse: float = 1.0) -> tuple[float, float]:
    """The bracket search of :func:`calibrate_event_scale` for one target, without its
    re-check: ``(scale, delta)``, the certified end of the final bracket and the accountant's
    delta there (a survey ranking candidates calls this; an answer is re-checked).

    Args:
      build: ``s -> event`` (privacy non-decreasing in ``s``).
      eps, dlt: the target (floats).
      relation: the neighbouring relation.
      guess: the starting scale.
      name: the mechanism's name, for messages.
      lo_limit, hi_limit: the scale range searched.
      rtol: relative width of the final bracket.
      bin_width: the accountant's loss-grid spacing.
      step: the factor of each bracketing step away from ``guess``.
      coarse: ``> 1``: first the whole search at ``coarse * bin_width`` (cheap grids), then
        at ``bin_width`` from its answer (module docstring); ``1``: one search.

    Raises:
      InfeasibleTargetError: no scale up to ``hi_limit`` meets the target.
    """
    if coarse > 1.0:
        guess, _ = least_event_scale(build, eps, dlt, relation, guess, name=name,
                                     lo_limit=lo_limit, hi_limit=hi_limit, rtol=rtol,
                                     bin_width=coarse * bin_width, step=step)
        steps = _squared_steps(1.0 + rtol)
    else:
        steps = itertools.repeat(step)

    def ok(s):  # whether s meets the target: no refinement below it (the re-check has it)
        d = event_delta(build(s), eps, relation, bin_width, target=dlt)
        return d <= dlt, d

    def gap(d):  # log(-log target) - log(-log delta): about linear in log s for tails
        # e^{-c s^2} (Gaussian) or e^{-c s} (Laplace); -inf at delta = 0, +inf at delta = 1
        # and for a target of 0
        if dlt == 0.0:
            return math.inf if d > 0.0 else -math.inf
        if d <= 0.0:
            return -math.inf
        if d >= 1.0:
            return math.inf
        return math.log(-math.log(dlt)) - math.log(-math.log(d))

    hi = min(max(float(guess), lo_limit), hi_limit)
    good, d_hi = ok(hi)
    lo = d_lo = None
    while not good:
        if hi >= hi_limit:
            raise InfeasibleTargetError(
                f"{name}: no scale up to {hi_limit:g} meets (epsilon={eps:g}, delta={dlt:g}) "
                f"under relation {relation!r}"
            )
        lo, d_lo = hi, d_hi
        hi = min(next(steps) * hi, hi_limit)
        good, d_hi = ok(hi)
    while lo is None:
        if hi <= lo_limit:  # even the least scale searched meets the target
            return hi, d_hi
        cand = max(hi / next(steps), lo_limit)
        good, d = ok(cand)
        if good:
            hi, d_hi = cand, d
        else:
            lo, d_lo = cand, d
    # Illinois (regula falsi) on f(x) = log delta(e^x) - log delta_target, the certified end
    # kept; a bisection step where a value is infinite (pure DP: delta exactly 0)
    # a bisection step after three steps that did not halve the bracket (a profile that drops
    # by orders of magnitude over a small change of scale -- mass at large losses, one
    # Poisson coin for many coordinates -- stalls regula falsi on one side)
    f_lo, f_hi, side, slow = gap(d_lo), gap(d_hi), 0, 0
    while hi / lo - 1.0 > rtol and not (dlt > 0.0 and d_hi >= dlt * (1.0 - rtol)):
        x_lo, x_hi = math.log(lo), math.log(hi)
        w = x_hi - x_lo
        if slow < 3 and math.isfinite(f_lo) and math.isfinite(f_hi) and f_lo > f_hi:
            x = (x_lo * f_hi - x_hi * f_lo) / (f_hi - f_lo)
            x = min(max(x, x_lo + 1e-3 * w), x_hi - 1e-3 * w)
        else:
            x, slow = 0.5 * (x_lo + x_hi), 0
        mid = math.exp(x)
        if not lo < mid < hi:
            break
        good, d_mid = ok(mid)
        if good:
            hi, d_hi, f_hi = mid, d_mid, gap(d_mid)
            f_lo = 0.5 * f_lo if side == 1 else f_lo
            side = 1
        else:
            lo, f_lo = mid, gap(d_mid)
            f_hi = 0.5 * f_hi if side == -1 else f_hi
            side = -1
        slow = slow + 1 if math.log(hi / lo) > 0.5 * w else 0
    return hi, d_hi


def calibrate_event_scale(
    build: Callable[[float], object],
    epsilon: np.ndarray,
    delta: np.ndarray,
    relation: str,
    guess,
    *,
    name: str,
    lo_limit: float = 1e-6,
    hi_limit: float = 1e12,
    rtol: float = RTOL,
    bin_width: float = 1e-4,
    step: float = 4.0,
    coarse: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Least certified scale ``s`` with ``delta_s(epsilon) <= delta``, per target (module doc).

    Args:
      build: ``s -> event`` (privacy non-decreasing in ``s``).
      epsilon, delta: validated, broadcast float64 target arrays.
      relation: the neighbouring relation.
      guess: a starting scale per target (array broadcast with the targets, or a number).
      name: the mechanism's name, for messages.
      lo_limit, hi_limit: the scale range searched (``lo_limit`` is returned when even it
        meets the target; beyond ``hi_limit``: infeasible).
      rtol: relative width of the final bracket.
      bin_width: the accountant's loss-grid spacing.
      step: the factor of each bracketing step away from ``guess``.
      coarse: the bin width factor of a first, coarse search (:func:`least_event_scale`).

    Returns:
      ``(scale, delta_at)`` arrays shaped like the targets: ``delta_at`` is the certified
      profile at the returned scale, re-evaluated by a fresh accountant, ``<= delta``.

    Raises:
      InfeasibleTargetError: no scale up to ``hi_limit`` meets a target.
      CertificationError: the re-check at the returned scale fails.
    """
    eps, dlt, g = np.broadcast_arrays(np.asarray(epsilon, np.float64),
                                      np.asarray(delta, np.float64),
                                      np.asarray(guess, np.float64))
    scale, delta_at = np.empty(eps.shape), np.empty(eps.shape)
    for i in np.ndindex(eps.shape):
        s, _ = least_event_scale(build, float(eps[i]), float(dlt[i]), relation, float(g[i]),
                                 name=name, lo_limit=lo_limit, hi_limit=hi_limit, rtol=rtol,
                                 bin_width=bin_width, step=step, coarse=coarse)
        check = event_delta(build(s), float(eps[i]), relation, bin_width)  # re-check
        if not check <= dlt[i]:
            raise CertificationError(
                f"{name}: the re-check at the calibrated scale {s!r} gives delta {check!r} > "
                f"{float(dlt[i])!r}"
            )
        scale[i], delta_at[i] = s, check
    return scale, delta_at
