r"""The discrete Laplace mechanism on integer queries: ``f(D) + K``, ``P(K = k) = tanh(a/2)
e^{-a |k|}`` (dp_accounting's ``DiscreteLaplaceDpEvent``; Ghosh, Roughgarden & Sundararajan
2012, the two-sided geometric mechanism).

Parameter ``noise_parameter`` ``a > 0`` (dp_accounting's name; larger is *less* noise: the
scale is ``1 / a``), integer sensitivity ``Delta``.  Exact profile of the atoms

.. math:: \delta(\epsilon) = \sum_k \big(P(k) - e^{\epsilon} P(k - \Delta)\big)_+,

``a Delta``-DP (pure) under add-or-remove, ``2 a Delta`` under replace-one; accounted and
calibrated through :class:`~dpjax.accounting.PLDAccountant` under any relation, ``T`` uses
and Poisson subsampling (:mod:`dpjax.mechanisms._discrete`).  Variance
``2 e^{-a} / (1 - e^{-a})^2``.
"""

from __future__ import annotations

import numpy as np

from dpjax.accounting import events as ev
from dpjax.mechanisms._discrete import calibrate_discrete, discrete_mechanism
from dpjax.mechanisms._spec import Query

NAME = "discrete-laplace"
PARAM = "noise_parameter"


def _event(a: float, sens: int) -> ev.Event:
    return ev.DiscreteLaplace(a, sens)


def _variance(a: np.ndarray) -> np.ndarray:
    r"""``2 e^{-a} / (1 - e^{-a})^2`` (of ``P(k) = tanh(a/2) e^{-a|k|}``)."""
    a = np.asarray(a, np.float64)
    with np.errstate(over="ignore"):
        return 2.0 * np.exp(-a) / np.expm1(-a) ** 2


def _guess(epsilon, delta, sens):
    """The scale ``1 / a`` of pure ``epsilon``-DP (``a Delta = epsilon``) halved: a start."""
    eps = np.maximum(np.asarray(epsilon, np.float64), 1e-3)
    return sens / eps


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query):
    r"""Largest ``a`` (least noise) with the certified ``delta(epsilon) <= delta``.

    Bisection on the scale ``1 / a`` (privacy improves with it), the accountant's exact
    profile re-checked at the returned ``a`` (rounded toward the private side).

    Args:
      epsilon, delta: the targets.
      query: integer sensitivity, ``T`` uses, optional rate ``q``, relation.
    """
    return calibrate_discrete(
        NAME, PARAM, epsilon, delta, query, event=_event,
        from_scale=lambda s: np.nextafter(1.0 / np.asarray(s, np.float64), 0.0),
        guess=_guess, variance=_variance, hi_limit=1e8,
    )


SUMMARY = "discrete Laplace (two-sided geometric) on integer queries; exact atoms, any relation"
MECHANISM = discrete_mechanism(
    NAME, PARAM, SUMMARY,
    'Ghosh, Roughgarden and Sundararajan, "Universally utility-maximizing privacy '
    'mechanisms" (SIAM J. Comput. 41(6), 2012)',
    calibrate, _event,
)
