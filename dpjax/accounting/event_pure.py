r"""Pure-DP epsilon of flattened events: each leaf's largest privacy loss, summed.

The counterpart of :mod:`dpjax.accounting.event_plds` for ``delta = 0``: where every leaf
is pure DP (Laplace, Poisson-subsampled Laplace, discrete pairs and their subsampling), the
composition is answered exactly by :func:`pure_epsilon` instead of a PLD.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.accounting import events as ev
from dpjax.accounting.event_plds import _PAIRS, DIRECTIONS, _discrete_pair
from dpjax.accounting.pld import discrete


def _pair_max_loss(p, q) -> float:
    """``max log(p / q)`` over the support of ``p`` (``inf`` where ``q`` vanishes on it)."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    on = p > 0
    if np.any(on & (q <= 0)):
        return math.inf
    return float(np.max(np.log(p[on]) - np.log(q[on]), initial=0.0))


def _leaf_pure_epsilon(leaf, relation: str) -> dict:
    """``{direction: epsilon_0}`` of a leaf's exact pair (``inf`` if it is not pure DP)."""
    dirs = DIRECTIONS[relation]
    shift = 2.0 if relation == "replace_one" else 1.0
    if isinstance(leaf, ev.Laplace):
        return dict.fromkeys(dirs, shift / float(leaf.noise_multiplier))
    pair = None if isinstance(leaf, (ev.PoissonSampled, ev.SampledWithoutReplacement)) else (
        _discrete_pair(leaf, relation)
    )
    if pair is not None:
        return dict.fromkeys(dirs, _pair_max_loss(*pair))
    if isinstance(leaf, ev.PoissonSampled) and relation != "replace_one":
        q, base = float(leaf.sampling_probability), leaf.event
        if isinstance(base, ev.Laplace):  # Balle, Barthe & Gaboardi 2018, Thm 10 (and add)
            e0 = 1.0 / float(base.noise_multiplier)
            return {
                "remove": math.log1p(q * math.expm1(e0)),
                "add": -math.log1p(-q * -math.expm1(-e0)),
            }
        if isinstance(base, _PAIRS):
            pair = _discrete_pair(base, relation)
            return {d: _pair_max_loss(*discrete.poisson_subsampled_pair(*pair, q, d)) for d in dirs}
    return dict.fromkeys(dirs, math.inf)


def pure_epsilon(leaves, relation: str) -> float:
    r"""Pure-DP epsilon of flattened leaves: ``max_direction sum_j count_j epsilon_j``.

    .. math:: \epsilon_0 = \max_{d} \sum_j k_j \sup L_j^{(d)}

    with ``sup L`` the largest loss of each leaf's *exact* pair: ``Delta / b`` for Laplace,
    ``log(1 + q (e^{1/b} - 1))`` (remove) and ``-log(1 - q + q e^{-1/b})`` (add) under Poisson
    subsampling (Balle, Barthe & Gaboardi 2018, Thm 10), the largest atom of a discrete pair.
    Pure DP composes by summing (Dwork & Roth 2014, Thm 3.14); padded by ``2^-40`` relative.

    Args:
      leaves: ``[(leaf event, count), ...]``.
      relation: the neighbouring relation.

    Returns:
      ``epsilon_0`` (``inf`` when some leaf is not known to be pure DP).
    """
    totals = dict.fromkeys(DIRECTIONS[relation], 0.0)
    for leaf, count in leaves:
        for d, e0 in _leaf_pure_epsilon(leaf, relation).items():
            totals[d] += count * e0
    return max(totals.values(), default=0.0) * (1.0 + 2.0**-40)
