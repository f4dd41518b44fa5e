r"""Composed sensitivities and budgets, rounded up exactly, and the pure-DP dominating pair.

``T`` uses of a mechanism compose: ``T`` Gaussian releases at ``l2`` sensitivity
``Delta`` are one release at ``Delta sqrt(T)``; ``T`` pure ``epsilon``-DP releases are
``T epsilon``-DP (Table II of flipped-huber-mechanism).  Both are rounded up in exact
rational arithmetic (a rounded-down budget would be an unsound certificate), and a pure
``epsilon_0``-DP mechanism's profile is bounded by randomized response's.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import numpy as np

from dpjax.accounting.laplace import ERROR as PURE_DP_ERROR
from dpjax.accounting.laplace import log_delta_pure_dp
from dpjax.certificate import reported_delta

#: The randomized-response profile and its report as one compiled program (op by op, a
#: first call compiled each of its operations on its own).
_pure_dp_reported = jax.jit(lambda e, e0: reported_delta(log_delta_pure_dp(e, e0), PURE_DP_ERROR))


def composed_sensitivity(value, compositions: int) -> float:
    r"""``value * sqrt(T)`` rounded up: the sensitivity of ``T`` composed Gaussian uses.

    Exactly the least float64 ``x`` with ``x^2 >= value^2 T`` in rational arithmetic
    (``T`` may exceed float64's exact integers); ``T`` Gaussian releases at ``l2``
    sensitivity ``Delta`` are one release at ``Delta sqrt(T)``.

    Args:
      value: the per-use sensitivity ``Delta``.
      compositions: ``T``.
    """
    x = float(value) * math.sqrt(float(compositions))
    bound = Fraction(float(value)) ** 2 * compositions
    while Fraction(x) ** 2 < bound:
        x = math.nextafter(x, math.inf)
    return x


def pure_dp_delta(epsilon, epsilon0) -> np.ndarray:
    r"""The randomized-response bound of an ``epsilon_0``-DP mechanism, reported (upper bound).

    .. math:: \delta(\epsilon) \le \frac{e^{\epsilon_0} - e^{\epsilon}}{1 + e^{\epsilon_0}}

    (the dominating pair of any ``epsilon_0``-DP mechanism, Kairouz et al. 2015;
    :func:`dpjax.accounting.laplace.log_delta_pure_dp`).

    Args:
      epsilon: the epsilons to evaluate at.
      epsilon0: the pure-DP budget ``epsilon_0``.
    """
    return np.asarray(_pure_dp_reported(epsilon, epsilon0))


def composed_budget(compositions: int, value, scale) -> np.ndarray:
    r"""``T * value / scale`` rounded up (exactly, in rational arithmetic).

    The pure-DP epsilon of ``T`` uses (e.g. ``T Delta_1 / b`` of Laplace noise, Table II of
    flipped-huber-mechanism), elementwise over array ``value`` / ``scale``.

    Args:
      compositions: ``T``.
      value: e.g. the sensitivity ``Delta_1``.
      scale: e.g. the Laplace scale ``b``.
    """

    def one(v: float, s: float) -> float:
        exact = compositions * Fraction(v) / Fraction(s)
        try:
            x = float(exact)  # correctly rounded (may round down)
        except OverflowError:
            return math.inf
        return math.nextafter(x, math.inf) if Fraction(x) < exact else x

    return np.vectorize(one, otypes=[np.float64])(
        np.asarray(value, np.float64), np.asarray(scale, np.float64)
    )


def amplified_budget(epsilon0, sampling_rate: float, compositions: int) -> np.ndarray:
    r"""The pure-DP epsilon of ``T`` Poisson-subsampled uses of an ``epsilon_0``-DP release,
    rounded up.

    .. math:: \epsilon = T \log\big(1 + q (e^{\epsilon_0} - 1)\big)

    (amplification by Poisson subsampling under add or remove adjacency, Balle, Barthe &
    Gaboardi 2018, Thm 10; then basic composition, Table II of flipped-huber-mechanism) as
    ``log1p(q expm1(epsilon_0))`` (no cancellation for small budgets or rates), above
    ``epsilon_0 = 700`` as ``logaddexp(log(1 - q), log q + epsilon_0)`` (no overflow), padded by
    ``2^-48`` relative: that covers the rounding of its operations and of an ``epsilon_0``
    one rounding from exact (``tests/mechanisms/test_composition.py`` checks it against
    50-digit arithmetic for ``q >= 1e-9``).

    Args:
      epsilon0: the pure-DP budget ``epsilon_0`` of one release (rounded up or one
        correctly rounded operation from its exact value).
      sampling_rate: ``q`` in ``(0, 1)``.
      compositions: ``T``.
    """
    q = float(sampling_rate)
    x = np.asarray(epsilon0, np.float64)
    per_use = np.where(
        x <= 700.0,
        np.log1p(q * np.expm1(np.minimum(x, 700.0))),
        np.logaddexp(np.log1p(-q), np.log(q) + x),
    )
    return float(compositions) * per_use * (1.0 + 2.0**-48)
