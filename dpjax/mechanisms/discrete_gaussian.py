r"""The discrete Gaussian mechanism on integer queries: ``f(D) + K``, ``P(K = k) propto
e^{-k^2 / (2 sigma^2)}`` (Canonne, Kamath & Steinke 2020; dp_accounting's discrete Gaussian
privacy loss).

Parameter ``sigma > 0`` (the scale of the kernel; the variance is at most ``sigma^2``),
integer sensitivity ``Delta``.  Exact profile of the atoms

.. math:: \delta(\epsilon) = \sum_k \big(P(k) - e^{\epsilon} P(k - \Delta)\big)_+

(the pair's far tail bounded in closed form: :func:`dpjax.accounting.pld.finite_pairs.
discrete_gaussian_pair`), accounted and calibrated through
:class:`~dpjax.accounting.PLDAccountant` under any relation (replace-one: shift
``2 Delta``), ``T`` uses and Poisson subsampling (:mod:`dpjax.mechanisms._discrete`).
"""

from __future__ import annotations

import numpy as np

from dpjax.accounting import events as ev
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._discrete import calibrate_discrete, discrete_mechanism
from dpjax.mechanisms._spec import Query

NAME = "discrete-gaussian"
PARAM = "sigma"
#: The largest sigma of :class:`~dpjax.accounting.events.DiscreteGaussian`.
SIGMA_MAX = 1e5


def _event(sigma: float, sens: int) -> ev.Event:
    return ev.DiscreteGaussian(sigma, sens)


def _variance_one(sigma: float) -> float:
    r"""``sum_k k^2 e^{-k^2/(2 sigma^2)} / sum_k e^{-k^2/(2 sigma^2)}`` (``<= sigma^2``,
    Canonne et al. 2020, Cor. 9; summed to ``|k| <= 40 sigma + 40``)."""
    k = np.arange(0, int(40 * sigma) + 41, dtype=np.float64)
    w = np.exp(-k * k / (2.0 * sigma * sigma))
    w[1:] *= 2.0
    return min(float(np.sum(k * k * w) / np.sum(w)), sigma * sigma)


def _variance(sigma: np.ndarray) -> np.ndarray:
    return np.vectorize(_variance_one, otypes=[float])(np.asarray(sigma, np.float64))


def _guess(epsilon, delta, sens):
    """The continuous Gaussian's classical sigma ``Delta sqrt(2 log(1.25/delta)) / epsilon``."""
    eps = np.maximum(np.asarray(epsilon, np.float64), 1e-3)
    dlt = np.clip(np.asarray(delta, np.float64), 1e-300, 0.5)
    return np.minimum(sens * np.sqrt(2.0 * np.log(1.25 / dlt)) / eps, SIGMA_MAX)


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query):
    r"""Least ``sigma`` with the certified ``delta(epsilon) <= delta`` (bisection, re-checked).

    ``delta = 0`` is infeasible (the losses are unbounded), as is a target needing
    ``sigma > 1e5`` (the event's range).

    Args:
      epsilon, delta: the targets.
      query: integer sensitivity, ``T`` uses, optional rate ``q``, relation.
    """
    if np.any(np.asarray(delta) == 0):
        raise InfeasibleTargetError(
            f"{NAME}: delta = 0 is infeasible (the privacy loss is unbounded)")
    return calibrate_discrete(
        NAME, PARAM, epsilon, delta, query, event=_event,
        from_scale=lambda s: np.asarray(s, np.float64), guess=_guess, variance=_variance,
        hi_limit=SIGMA_MAX,
    )


SUMMARY = "discrete Gaussian on integer queries (Canonne et al. 2020); exact atoms, any relation"
MECHANISM = discrete_mechanism(
    NAME, PARAM, SUMMARY,
    'Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy" (NeurIPS 2020)',
    calibrate, _event,
)
