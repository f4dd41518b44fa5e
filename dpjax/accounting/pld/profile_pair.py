r"""A PLD dominating every mechanism whose privacy profile is below given values.

If a mechanism satisfies ``delta(eps) <= d(eps)`` for all ``eps >= 0`` *in both orders of
the neighbours*, then the pair built here dominates it for every ``alpha = e^eps >= 0``, so
it composes with any other PLD (Zhu, Dong & Wang 2022, Sec. 3: dominating pairs compose;
their Prop. on the pair of a privacy profile).  Construction, in ``x = e^eps``:

1. the lower convex envelope ``D(x)`` of the points ``(0, 1)`` and ``(e^{eps_k},
   min_{j <= k} d_j)``: convex, non-increasing, and above the true profile (which is convex
   in ``x``, equals 1 at ``x = 0`` and lies below every point);
2. the atoms of the pair whose hockey-stick curve is the chord interpolation of ``D`` on
   ``eps_i = i h``: ``Q``-masses ``B_{i-1} - B_i`` from the chord slopes ``B_i``, ``P = e^{eps_i}
   Q``, the rest of ``P`` at loss 0 and ``D(e^{eps_top})`` at ``+infinity``.

Every loss is ``>= 0``, so ``H_{1/alpha}(Q || P) >= delta(0)`` covers ``alpha < 1`` too.
Given the other order's bounds as well (``reverse``), the pair is two-sided: below ``x = 1``
its curve is ``1 - x + x r(-log x)``, so it keeps negative losses and ``T`` of them compose
to nearly what the exact pair does (:func:`_two_sided`; Poisson sampling of a composed event
under add or remove adjacency, :mod:`dpjax.accounting.events.plds`).  Used
for ``rho``-zCDP (Canonne, Kamath & Steinke 2020) and for sampling without replacement under
replace-one (Balle, Barthe & Gaboardi 2018, Thm 9: ``delta'(log(1 + g (e^eps - 1))) <= g
delta(eps)``).  Values are inflated by ``1e-9`` (relative) against rounding in the envelope.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax._batching import pad, padded_size
from dpjax.accounting.pld._pld import PLD, make
from dpjax.numerics import float64_kernel

__all__ = ["from_profile"]

_POINTS = 4001
#: Largest loss magnitude the grid keeps: ``e^{700}`` is finite in float64 (``exp``
#: overflows past 709.78, and a grid in ``x = e^eps`` beyond it is ``inf``/NaN).  A larger
#: ``epsilon_max`` is cut here: the profile's value at the cut goes to ``+infinity``, where a
#: loss ``L >= 700`` adds ``1 - e^{eps - L}`` of its mass to ``delta(eps)`` and ``+infinity``
#: adds all of it (sound; no looser than float64 rounding for ``eps`` below ~660).  A larger
#: ``reverse_max`` is cut the same way: the mass below ``-700`` moves up to it (sound).
LOSS_CAP = 700.0
#: The grid ends where the profile's bound first falls below ``SLOPE_FLOOR e^eps``: beyond,
#: the pair's ``Q``-masses (slopes ``~ delta / e^eps`` of the curve in ``x = e^eps``) would
#: leave float64's normal range and underflow to 0, lowering the curve; the bound there goes
#: to ``+infinity`` (sound).  Before the cut an underflowed slope costs at most ``2.3e-308``
#: per unit of ``x``, below ``1e-17`` of the curve's value, far inside its ``1e-9`` inflation.
SLOPE_FLOOR = 1e-290


def _lower_hull(x, y):
    """Vertices of the lower convex hull of points sorted by ``x`` (monotone chain)."""
    hx, hy = [], []
    for a, b in zip(x, y, strict=True):
        while len(hx) >= 2 and (hy[-1] - hy[-2]) * (a - hx[-2]) >= (b - hy[-2]) * (
            hx[-1] - hx[-2]
        ):
            hx.pop()
            hy.pop()
        hx.append(a)
        hy.append(b)
    return np.asarray(hx), np.asarray(hy)


def _monotone_bounds(delta_upper, eps: np.ndarray) -> np.ndarray:
    """``min_{j <= k} d(eps_j)`` of the bounds at ascending ``eps``, clipped to ``[0, 1]`` (a
    profile is non-increasing, so a bound at a smaller epsilon bounds every larger one)."""
    d = np.minimum.accumulate(np.clip(np.asarray(delta_upper(eps), np.float64), 0.0, 1.0))
    if np.any(np.isnan(d)):
        raise ValueError("from_profile: the profile bound is NaN")
    return d


@float64_kernel
def from_profile(delta_upper, epsilon_max: float, bin_width: float = 1e-4, reverse=None,
                 reverse_max: float | None = None) -> PLD:
    r"""PLD dominating every mechanism with ``delta(eps) <= delta_upper(eps)`` (module docstring).

    .. math:: \delta_{PLD}(\epsilon) = \operatorname{chord}_h \operatorname{conv}
              \{(0, 1), (e^{\epsilon_k}, \min_{j \le k} d(\epsilon_j))\}(e^\epsilon)
              \ \ge\ d\text{'s profile}

    Two-sided (``reverse`` given, :func:`_two_sided`): ``delta_upper`` bounds one order,
    ``H_{e^eps}(P || Q)``, and ``reverse`` the other, ``H_{e^eps}(Q || P)``, for ``eps >= 0``;
    below ``x = 1`` the curve is ``H_x(P || Q) = 1 - x + x H_{1/x}(Q || P)``, so the pair keeps
    losses down to ``-reverse_max`` instead of moving them up to ``0``, and ``T`` of them
    compose to far less (the negative losses offset the positive ones).

    Args:
      delta_upper: ``eps (NumPy array, >= 0) -> upper bounds on delta``, valid for both orders
        (one-sided) or for the order this PLD is of (with ``reverse``).
      epsilon_max: top of the loss grid (at most :data:`LOSS_CAP`);
        ``delta_upper(epsilon_max)`` goes to ``+infinity``.
      bin_width: grid spacing ``h`` (the losses are ``0, h, 2h, ...``; from about
        ``-reverse_max`` with ``reverse``).
      reverse: ``eps (NumPy array, >= 0) -> upper bounds on the other order's delta``, or
        ``None`` (one-sided).
      reverse_max: with ``reverse``: the least loss kept, at most :data:`LOSS_CAP` (the mass
        below is moved up to it).

    Returns:
      The pessimistic :class:`~dpjax.accounting.pld.PLD`.

    Raises:
      ValueError: ``delta_upper`` is NaN or not a privacy profile (``P``'s mass would exceed 1),
        or the pair's masses are not finite (fail closed).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import numpy as np
      >>> from dpjax.accounting.pld import delta_for_epsilon
      >>> rr = lambda e: np.maximum(0.0, (np.exp(1.0) - np.exp(e)) / (1 + np.exp(1.0)))
      >>> pld = from_profile(rr, 1.0, bin_width=1e-3)
      >>> float(delta_for_epsilon(pld, 0.0)) >= float(rr(np.zeros(1))[0])
      True
      >>> two = from_profile(rr, 1.0, bin_width=1e-3, reverse=rr, reverse_max=1.0)
      >>> int(two.lower), round(float(delta_for_epsilon(two, 0.0)), 4)  # losses down to -1
      (-1000, 0.4621)
    """
    h = float(bin_width)
    top = max(int(math.ceil(min(float(epsilon_max), LOSS_CAP) / h)), 1)
    coarse = np.linspace(0.0, top * h, min(_POINTS, top + 1))
    d = _monotone_bounds(delta_upper, coarse)
    small = np.flatnonzero(d < SLOPE_FLOOR * np.exp(coarse))
    if small.size:  # the grid ends there (SLOPE_FLOOR)
        top = min(top, max(int(math.ceil(coarse[small[0]] / h)), 1))
        keep = max(int(small[0]), 1) + 1
        coarse, d = coarse[:keep], d[:keep]
    if reverse is not None:
        two = _two_sided(d, coarse, top, reverse, reverse_max, h)
        if two is not None:
            return two
    hx, hy = _lower_hull(np.concatenate([[0.0], np.exp(coarse)]), np.concatenate([[1.0], d]))
    x = np.exp(np.arange(top + 1) * h)
    hull = np.interp(x, hx, hy)
    dd = np.minimum(hull * (1.0 + 1e-9) + 1e-300, 1.0)
    slopes = np.maximum((dd[:-1] - dd[1:]) / np.diff(x), 0.0)
    # convex: non-increasing slope magnitudes.  A dip is raised to the largest magnitude to
    # its right, so the curve, rebuilt from the top down, only rises.  (Until 2026-12-02 the
    # running minimum from the left lowered them instead: a hull flat to float64 for a while
    # before it drops far out -- a profile of 0.01 up to eps = 200, e.g. one Poisson coin
    # for 20 coordinates of little noise -- set every magnitude after the flat stretch to 0,
    # all of P's mass at loss 0, delta 1e-300 where the profile says 0.01.)
    slopes = np.maximum.accumulate(slopes[::-1])[::-1]
    q = slopes - np.append(slopes[1:], 0.0)
    p_up = x[1:] * q
    inf_mass = dd[-1]
    # fail closed: the pair's curve, rebuilt from its masses from the top down, at or above
    # the hull at every grid point (near delta = 1, where dd is capped, to 1e-9)
    rebuilt = inf_mass + np.append(np.cumsum((slopes * np.diff(x))[::-1])[::-1], 0.0)
    if not np.all(rebuilt >= np.minimum(hull, 1.0 - 1e-9)):
        raise ValueError("from_profile: the pair's curve falls below the profile's hull")
    p0 = 1.0 - inf_mass - float(np.sum(p_up))
    # a profile whose pair has all of P's mass at losses > 0 (D(1) + |D'(1)| = 1: e.g. a
    # bound linear near x = 1) leaves p0 = 0 exactly; the 1e-9 inflation of D and of its
    # slopes then takes up to 2e-9 of it, which is not an invalid bound (p0 is kept at 0)
    if not p0 >= -4e-9 or not np.all(np.isfinite(p_up)) or not math.isfinite(inf_mass):
        raise ValueError("from_profile: the profile bound is not a valid privacy profile")
    pmf = np.concatenate([[max(p0, 0.0)], p_up])
    return _assembled(h, 0, pmf, inf_mass)


def _assembled(h: float, lower: int, pmf: np.ndarray, inf_mass: float) -> PLD:
    """The pessimistic PLD, its pmf padded with zero mass above the top to a power of two:
    the law is unchanged and every bound of a search (a new top each) shares the compiled
    queries of one length."""
    return make(h, lower, pad(pmf, padded_size(pmf.size), fill=0.0), inf_mass, pessimistic=True)


def _two_sided(d, coarse, top: int, reverse, reverse_max, h: float) -> PLD | None:
    r"""The pair of :func:`from_profile` with the other order's bounds below ``x = 1``, or
    ``None`` where its check fails (the one-sided pair is then used: sound, looser).

    Above ``x = 1`` the curve is built as one-sided, in ``H = H_x(P || Q)``; below it in
    ``g = H - (1 - x) = x r(-log x)`` (no cancellation at small ``x``): the lower convex
    hull of ``(0, 0)``, ``(e^{-eps_k}, e^{-eps_k} r_k)`` and ``(1, min(d_0, r_0))`` (both
    bound the total variation), chords on ``x_i = e^{i h}``, inflated by ``1e-9`` (and
    ``1e-15 x`` below ``1``).  The ``Q``-masses are the drops of the slope magnitude
    (``1 - g'`` below ``1``, ``-H'`` above), the ``P``-masses ``x_i`` times them (a magnitude
    below one to its right raised to it).  Checked, else ``None``: ``P``'s total at most
    ``1 + 4e-9`` (as one-sided; a deficit goes to loss 0), which fails where the two orders'
    bounds meet at ``x = 1`` with a concave kink beyond rounding, and the pair's curve,
    rebuilt from its masses, at or above the hulls at every grid point on both sides.
    """
    bottom = max(int(math.ceil(min(float(reverse_max), LOSS_CAP) / h)), 1)
    back = np.linspace(0.0, bottom * h, min(_POINTS, bottom + 1))
    r = _monotone_bounds(reverse, back)
    v1 = min(float(d[0]), float(r[0]))
    xb = np.exp(-back[:0:-1])  # ascending in (0, 1)
    gx, gy = _lower_hull(np.concatenate([[0.0], xb, [1.0]]),
                         np.concatenate([[0.0], xb * r[:0:-1], [v1]]))
    hx, hy = _lower_hull(np.exp(coarse), np.minimum(d, v1))
    x_left = np.exp(np.arange(-bottom, 1) * h)
    x_right = np.exp(np.arange(0, top + 1) * h)
    g_hull = np.interp(x_left, gx, gy)
    h_hull = np.interp(x_right, hx, hy)
    gg = np.minimum(g_hull * (1.0 + 1e-9) + 1e-15 * x_left + 1e-300, x_left)
    dd = np.minimum(h_hull * (1.0 + 1e-9) + 1e-300, 1.0)
    dd[0] = gg[-1] = max(dd[0], gg[-1])
    # slope magnitudes of the chords: from (0, 1) to x_0, then between grid points
    m_left = 1.0 - np.diff(gg, prepend=0.0) / np.diff(x_left, prepend=0.0)
    m_right = np.maximum((dd[:-1] - dd[1:]) / np.diff(x_right), 0.0)
    # convex: non-increasing magnitudes, a dip (rounding; across x = 1, bounds of the two
    # orders that disagree) raised to the largest one to its right: the curve, rebuilt from
    # the top down, only rises, and P's total with it (checked below)
    raw = np.concatenate([np.clip(m_left, 0.0, 1.0), m_right])
    mags = np.maximum.accumulate(raw[::-1])[::-1]
    q = mags - np.append(mags[1:], 0.0)
    x = np.concatenate([x_left, x_right[1:]])
    inf_mass = float(dd[-1])
    rest = 1.0 - inf_mass - float(np.sum(x * q))  # P's total is 1 - rest
    if not rest >= -4e-9:  # NaN too: fail closed to the one-sided pair
        return None
    n = x_left.size
    q[n - 1] += max(rest, 0.0)  # P's rest (rounding) at loss 0: Q's the same
    # the curve of the pair (P = x q, Q = q, inf_mass at +infinity), rebuilt: H from the top
    # down above x = 1, g = H - (1 - x) from g(0) = -min(rest, 0) up below it
    above = np.append(np.cumsum(q[::-1])[::-1][1:], 0.0)  # slope magnitude right of x_i
    h_pair = inf_mass + np.append(np.cumsum((above[n - 1:-1] * np.diff(x_right))[::-1])[::-1],
                                  0.0)
    g_pair = -min(rest, 0.0) + np.cumsum(
        (1.0 - np.concatenate([[above[0] + q[0]], above[:n - 1]])) * np.diff(x_left, prepend=0.0))
    if not (np.all(h_pair >= h_hull) and np.all(g_pair >= g_hull)):
        return None
    return _assembled(h, -bottom, x * q, inf_mass)
