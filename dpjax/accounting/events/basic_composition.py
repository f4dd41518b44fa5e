r"""The basic-composition cap of flattened events: each leaf's ``(epsilon_j, delta_j)``, summed.

The counterpart of :mod:`dpjax.accounting.events.plds` for the corner of the profile that a
loss grid cannot resolve exactly: where every leaf is ``(epsilon_j, delta_j)``-DP with a
known exact ``epsilon_j`` (pure DP: Laplace, Poisson-subsampled Laplace, discrete pairs and
their subsampling, ``EpsilonDelta``), the ledger is ``(E, D)``-DP with

.. math:: E = \sum_j k_j \epsilon_j,\qquad D = 1 - \prod_j (1 - \delta_j)^{k_j}

(Dwork & Roth 2014, Thm 3.16; ``D`` is the exact mass at ``+infinity`` of the composed
generalised randomized-response pairs of Kairouz, Oh & Viswanath 2015, so at ``E`` the
bound is tight).  :func:`pure_cap` returns float64 upper bounds on both, rounded up only
as far as needed: rational parts (``Delta / b``, ``a s``, a given ``epsilon``, the
``delta_j``) are summed exactly in :class:`fractions.Fraction` and rounded up once; a
transcendental ``epsilon_j`` (``log(1 + q (e^{eps} - 1))``, randomized response) is
padded by its float64 error bound (a few ulps, module code) before the exact sum.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dpjax.accounting import events as ev
from dpjax.accounting.events.plds import DIRECTIONS, PAIRS
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

#: Up to this many ``(epsilon, delta)`` uses, ``D`` is computed in exact rationals.
_EXACT_USES = 64


def _up(x: float, ulps: float) -> float:
    """``x (1 + ulps u)`` rounded up (``x >= 0``): a float above ``x`` by its error bound."""
    if not math.isfinite(x):
        return math.inf
    return math.nextafter(x * (1.0 + ulps * _U), math.inf) if x > 0.0 else 0.0


def fraction_up(x: Fraction) -> float:
    """The least float64 ``>= x`` (``inf`` beyond the largest float)."""
    try:
        f = float(x)  # correctly rounded, either way
    except OverflowError:
        return math.inf
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def _ratio(num, den) -> Fraction | float:
    """``num / den`` of two floats, exact (``inf`` for a zero denominator)."""
    den = Fraction(float(den))
    return math.inf if den == 0 else Fraction(float(num)) / den


def _subsampled(e0, q: float, direction: str) -> float:
    r"""Upper bound on ``epsilon`` of a Poisson-subsampled ``e0``-DP pair (float).

    .. math:: \text{remove: } \log(1 + q (e^{\epsilon_0} - 1)),\qquad
              \text{add: } -\log(1 - q (1 - e^{-\epsilon_0}))

    (Balle, Barthe & Gaboardi 2018, Thm 10, and its add twin), increasing in ``e0`` (so an
    upper bound of ``e0`` may be plugged in).  Each of the four float64 operations is within
    one ulp (two ``u``); the relative error they carry to the result is at most
    ``(6 + 2 e0) u`` (remove: ``expm1`` amplifies a relative error of its argument by at most
    ``1 + e0``, ``log1p`` damps one of its own) or ``(6 + 4 kappa) u`` with
    ``kappa = s / ((1 - s) y)``, ``s = q (1 - e^{-e0})``, ``y`` the result (add); padded by
    twice that.
    """
    e0 = fraction_up(e0) if isinstance(e0, Fraction) else float(e0)
    if direction == "remove":
        y = math.log1p(q * math.expm1(e0)) if e0 < 709.0 else math.inf
        return _up(y, 2.0 * (6.0 + 2.0 * e0))
    s = q * -math.expm1(-e0)
    y = -math.log1p(-s)
    kappa = s / ((1.0 - s) * y) if y > 0.0 else 1.0
    return _up(y, 2.0 * (6.0 + 4.0 * kappa))


def _leaf_cap(leaf, relation: str) -> dict:
    """``{direction: (epsilon_j, delta_j)}`` of one leaf: exact ``Fraction`` s where rational,
    padded floats where not, ``(inf, 0)`` where the leaf is not known to be approximately
    pure (a Gaussian, a discrete Gaussian, ...)."""
    dirs = DIRECTIONS[relation]
    shift = 2 if relation == "replace_one" else 1
    none = dict.fromkeys(dirs, (math.inf, Fraction(0)))
    if isinstance(leaf, ev.RandomizedResponse) and relation == "replace_special":
        return _rr_special_cap(leaf)
    base = _base_cap(leaf, shift)
    if base is not None:
        return dict.fromkeys(dirs, base)
    if isinstance(leaf, ev.PoissonSampled) and relation != "replace_one":
        q, inner = float(leaf.sampling_probability), leaf.event
        if q == 0.0:
            return dict.fromkeys(dirs, (Fraction(0), Fraction(0)))
        cap = _base_cap(inner, shift) if isinstance(inner, (ev.Laplace,) + PAIRS) else None
        if cap is None or cap[1] != 0 or cap[0] == math.inf:
            return none
        if q == 1.0:
            return dict.fromkeys(dirs, cap)
        return {d: (_subsampled(cap[0], q, d), Fraction(0)) for d in dirs}
    return none


def _rr_special_cap(leaf) -> dict:
    r"""``{direction: (epsilon, 0)}`` of randomized response against the special record.

    .. math:: \epsilon_{\text{remove}} = \log(k (1 - \rho) + \rho),\qquad
              \epsilon_{\text{add}} = \log(1 / \rho)

    (the largest losses of ``(R(x), uniform)`` and its reverse; ``rho = 0``: ``inf`` for
    add), each padded by its float64 error bound."""
    rho, k = float(leaf.noise_parameter), leaf.num_buckets
    if k == 1:
        return dict.fromkeys(("remove", "add"), (Fraction(0), Fraction(0)))
    remove = _up(math.log(k * (1.0 - rho) + rho), 8.0)
    add = _up(-math.log(rho), 4.0) if rho > 0.0 else math.inf
    return {"remove": (remove, Fraction(0)), "add": (add, Fraction(0))}


def _base_cap(leaf, shift: int):
    """``(epsilon, delta)`` of a leaf that is not sampled, or ``None`` if it has none here."""
    if isinstance(leaf, ev.Laplace):
        return _ratio(shift, leaf.noise_multiplier), Fraction(0)
    if isinstance(leaf, ev.DiscreteLaplace):  # losses a (|k - s| - |k|): at most a s
        return shift * leaf.sensitivity * Fraction(float(leaf.noise_parameter)), Fraction(0)
    if isinstance(leaf, ev.EpsilonDelta):
        return Fraction(float(leaf.epsilon)), Fraction(float(leaf.delta))
    if isinstance(leaf, ev.RandomizedResponse):  # log((1 - rho + rho / k) / (rho / k))
        rho, k = float(leaf.noise_parameter), leaf.num_buckets
        if k == 1:
            return Fraction(0), Fraction(0)
        if rho == 0.0:
            return math.inf, Fraction(0)
        return _up(math.log1p(k * (1.0 - rho) / rho), 8.0), Fraction(0)
    return None


def pure_cap(leaves, relation: str) -> tuple[float, float]:
    r"""``(E, D)``: float64 upper bounds on the basic composition of the leaves' caps.

    .. math:: E = \max_d \sum_j k_j \epsilon_j^{(d)},\qquad
              D = 1 - \prod_j (1 - \delta_j)^{k_j}

    with ``epsilon_j`` the largest loss of each leaf's *exact* pair: ``Delta / b`` for
    Laplace, ``a s Delta`` for discrete Laplace, ``epsilon`` of ``EpsilonDelta``,
    ``log(1 + q (e^{eps} - 1))`` (remove) and ``-log(1 - q + q e^{-eps})`` (add) under
    Poisson subsampling (Balle, Barthe & Gaboardi 2018, Thm 10); ``delta_j`` that of
    ``EpsilonDelta`` (module docstring).  So ``delta(epsilon) <= D`` for every
    ``epsilon >= E`` (``D = 0``: pure DP, and ``delta(epsilon) = 0`` there).  Sums are
    exact in rationals and rounded up once: ``E`` is the least float64 above the exact sum
    of the leaves' (exact or padded) values, e.g. exactly ``3.0`` for three ``Laplace(1)``.

    Args:
      leaves: ``[(leaf event, count), ...]``.
      relation: the neighbouring relation.

    Returns:
      ``(E, D)``; ``E = inf`` when some leaf is not known to be ``(epsilon, delta)``-DP.
    """
    totals = dict.fromkeys(DIRECTIONS[relation], Fraction(0))
    deltas = []
    for leaf, count in leaves:
        caps = _leaf_cap(leaf, relation)
        for d in totals:
            e, _ = caps[d]
            if totals[d] != math.inf:
                totals[d] = math.inf if e == math.inf else totals[d] + count * Fraction(e)
        delta = max(caps[d][1] for d in totals)
        if delta:
            deltas.append((delta, count))
    eps = max((fraction_up(t) if t != math.inf else math.inf for t in totals.values()),
              default=0.0)
    return eps, _composed_delta(deltas)


def _composed_delta(deltas) -> float:
    r"""Upper bound on ``1 - prod_j (1 - delta_j)^{k_j}``: exact (rounded up once) for up to
    :data:`_EXACT_USES` uses, else ``-expm1(sum_j k_j log1p(-delta_j))`` with every rounding
    padded (``log1p`` and the products within 2 ``u`` each, the sum within ``n u``)."""
    if not deltas:
        return 0.0
    if any(d >= 1 for d, _ in deltas):
        return 1.0
    if sum(k for _, k in deltas) <= _EXACT_USES:
        keep = Fraction(1)
        for d, k in deltas:
            keep *= (1 - d) ** k
        return fraction_up(1 - keep)
    terms = [k * math.log1p(-fraction_up(d)) for d, k in deltas]
    log_keep = sum(terms) * (1.0 + (4.0 + len(terms)) * _U)  # more negative: D larger
    return min(_up(-math.expm1(log_keep), 4.0), 1.0)
