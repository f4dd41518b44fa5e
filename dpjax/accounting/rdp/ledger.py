r"""The RDP bound of an event ledger from the *exact* moments of its leaves (NumPy, host).

dp_accounting's RDP accountant composes Rényi divergences ``D_alpha`` of its events and
converts them to ``epsilon(delta)``; this module does the same with certified upper bounds
on the exact moments ``log A_alpha = (alpha - 1) D_alpha`` of every leaf it knows in closed
form or by certified quadrature, on :data:`~dpjax.accounting.rdp.laplace.ORDERS` (a
superset of dp_accounting's orders):

* ``Gaussian(sigma)`` (shift ``Delta``: 1, or 2 under ``replace_one``): ``alpha (alpha - 1)
  Delta^2 / (2 sigma^2)``, exact;
* ``Laplace(b)``: Mironov's closed form (:mod:`~dpjax.accounting.rdp.laplace`);
* ``PoissonSampled(q, Gaussian | Laplace)`` (not ``replace_one``): the maximum over both
  adjacencies of the subsampled pair's moments
  (:func:`~dpjax.accounting.rdp.subsampled_gaussian.gaussian_moment_bounds`,
  :func:`~dpjax.accounting.rdp.laplace.laplace_log_moments`);
* ``ZCDP(rho)``: ``alpha (alpha - 1) rho`` (Bun & Steinke 2016, Def. 1.1);
* ``Noise(name, params)`` (not subsampled): the certified moments of that family
  (:func:`~dpjax.accounting.rdp.families.family_log_moments`; ``+inf``, a vacuous
  bound, for truncated Laplace).

Moments add under composition;
:func:`~dpjax.accounting.rdp.subsampled_gaussian.rdp_epsilon` converts (Canonne, Kamath &
Steinke 2020).  A ledger with any other leaf has no bound here (``None``): its PLD answer
stands.  :class:`~dpjax.accounting.PLDAccountant` reports the
minimum of both, so it is never above the RDP accountant on the events both support.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.accounting import events as ev
from dpjax.accounting.events.plds import staircase_as_pure_dp, subnormal_scale
from dpjax.accounting.rdp.families import family_log_moments
from dpjax.accounting.rdp.laplace import ORDERS, laplace_log_moments, laplace_log_moments_lower
from dpjax.accounting.rdp.subsampled_gaussian import (
    gaussian_moment_bounds,
    rdp_epsilon,
    rdp_log_delta,
)
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U


def _quadratic(scale2: float) -> np.ndarray:
    """``alpha (alpha - 1) scale2`` on :data:`ORDERS`, padded up by its rounding (``inf``
    where it overflows)."""
    with np.errstate(over="ignore"):
        return ORDERS * (ORDERS - 1.0) * np.float64(scale2) * (1.0 + 8.0 * _U)


@float64_kernel
def leaf_log_moments(leaf, relation: str, laplace=laplace_log_moments) -> np.ndarray | None:
    """Certified ``log A_alpha`` on :data:`ORDERS` of one use of ``leaf``, or ``None``.

    Args:
      leaf: a leaf event (as :func:`~dpjax.accounting.events.plds.flatten` returns).
      relation: ``"add_remove"``, ``"add"``, ``"remove"`` or ``"replace_one"``.
      laplace: the (subsampled) Laplace moments
        (:func:`~dpjax.accounting.rdp.laplace.laplace_log_moments`; its lower bounds
        :func:`~dpjax.accounting.rdp.laplace.laplace_log_moments_lower` for
        :func:`leaf_log_moments_lower`).

    Returns:
      The moments (NumPy), or ``None`` where no exact moments are known here.
    """
    shift = 2.0 if relation == "replace_one" else 1.0
    if subnormal_scale(leaf):
        return None  # XLA flushes the scale to zero: no moment bound (the PLD answer stands)
    if isinstance(leaf, ev.Gaussian):
        m = np.float64(shift) / np.float64(leaf.noise_multiplier)  # may overflow to inf
        with np.errstate(over="ignore"):
            return _quadratic(m * m / 2.0)
    if isinstance(leaf, ev.Laplace):
        return laplace(float(leaf.noise_multiplier), None, shift)[1]
    if isinstance(leaf, ev.ZCDP):
        return _quadratic(float(leaf.rho))
    if isinstance(leaf, ev.Noise):
        if staircase_as_pure_dp(leaf, relation) is not leaf:
            return None  # a staircase off its width: no moments of the one-shift pair
        moments = family_log_moments(ev.noise_family(leaf), shift)
        return None if moments is None else moments[1]
    if isinstance(leaf, ev.PoissonSampled) and relation != "replace_one":
        q, base = float(leaf.sampling_probability), leaf.event
        if q == 0.0:
            return np.zeros(len(ORDERS))
        if isinstance(base, ev.Gaussian):
            return gaussian_moment_bounds(float(base.noise_multiplier), q)[1]
        if isinstance(base, ev.Laplace):
            return laplace(float(base.noise_multiplier), q)[1]
    return None


@float64_kernel
def leaf_log_moments_lower(leaf, relation: str) -> np.ndarray:
    """Cheap lower bounds, on :data:`ORDERS`, on the moments :func:`leaf_log_moments` returns.

    :func:`leaf_log_moments` with the (subsampled) Laplace moments' cheap lower bounds
    (:func:`~dpjax.accounting.rdp.laplace.laplace_log_moments_lower`; the upper ones take a
    fine quadrature); the other moments there are closed forms or memoised, and are their
    own lower bound.  ``0`` (``D_alpha >= 0``) for a noise family's leaf (its moments are a
    quadrature) and where :func:`leaf_log_moments` has none (any value is below that
    vacuous bound).

    Args:
      leaf, relation: as in :func:`leaf_log_moments`.

    Returns:
      The lower bounds (NumPy), never above :func:`leaf_log_moments`.
    """
    one = None
    if not isinstance(leaf, ev.Noise):
        one = leaf_log_moments(leaf, relation, laplace_log_moments_lower)
    return np.zeros(len(ORDERS)) if one is None else one


@float64_kernel
def ledger_log_moments(leaves, relation: str, leaf_moments=leaf_log_moments) -> np.ndarray | None:
    r"""``sum_j count_j log A_alpha(leaf_j)`` on :data:`ORDERS`, or ``None``.

    .. math:: \log A_\alpha(\text{ledger}) = \sum_j K_j \log A_\alpha(\text{leaf}_j)

    Args:
      leaves: ``[(leaf, count), ...]`` (:func:`~dpjax.accounting.events.plds.flatten`).
      relation: the neighbouring relation.
      leaf_moments: the moments of one leaf (:func:`leaf_log_moments`, the upper bounds;
        :func:`leaf_log_moments_lower` sums their lower bounds the same way).

    Returns:
      The composed moments, or ``None`` if some leaf has none here.
    """
    total = np.zeros(len(ORDERS))
    for leaf, count in leaves:
        one = leaf_moments(leaf, relation)
        if one is None:
            return None
        total = total + float(count) * one
    return total * (1.0 + 4.0 * len(leaves) * _U)


@float64_kernel
def ledger_rdp_epsilon(leaves, relation: str, delta: float) -> float:
    """Certified RDP epsilon of the ledger at ``delta`` (``inf`` without exact moments).

    Args:
      leaves, relation: as in :func:`ledger_log_moments`.
      delta: ``delta`` in ``(0, 1)``.

    Returns:
      ``epsilon`` (:func:`~dpjax.accounting.rdp.subsampled_gaussian.rdp_epsilon`).
    """
    return _rdp_epsilon(ledger_log_moments(leaves, relation), delta)


def _rdp_epsilon(total, delta: float) -> float:
    """``epsilon(delta)`` of composed moments ``total`` (``inf`` for ``None``, NaN or
    ``delta = 0``)."""
    if total is None or not delta > 0.0:
        return math.inf
    eps = float(rdp_epsilon(ORDERS - 1.0, total, delta))
    return math.inf if math.isnan(eps) else eps


@float64_kernel
def ledger_rdp_delta(leaves, relation: str, epsilon: float) -> float:
    """Certified RDP ``delta(epsilon)`` of the ledger (``1`` without exact moments).

    Args:
      leaves, relation: as in :func:`ledger_log_moments`.
      epsilon: ``epsilon >= 0``.

    Returns:
      ``delta`` (:func:`~dpjax.accounting.rdp.subsampled_gaussian.rdp_log_delta`), at most 1.
    """
    return _rdp_delta(ledger_log_moments(leaves, relation), epsilon)


def _rdp_delta(total, epsilon: float) -> float:
    """``delta(epsilon)`` of composed moments ``total`` (``1`` for ``None`` or NaN)."""
    if total is None:
        return 1.0
    log_delta = float(rdp_log_delta(ORDERS - 1.0, total, epsilon))
    return 1.0 if math.isnan(log_delta) else float(np.exp(min(log_delta, 0.0)))


#: Relative margin of :func:`ledger_rdp_delta_exceeds` and :func:`ledger_rdp_epsilon_exceeds`
#: (the conversions of the lower and the upper moments round alike; this covers the rest).
EXCEEDS_MARGIN = 1e-9


@float64_kernel
def ledger_rdp_delta_exceeds(leaves, relation: str, epsilon: float, value: float) -> bool:
    r"""Whether :func:`ledger_rdp_delta` is certainly above ``value``, decided cheaply.

    .. math:: \delta_{\text{RDP}}(\underline{\log A}) > v\,(1 + 10^{-9})
              \ \Rightarrow\ \delta_{\text{RDP}}(\log A) > v

    The same conversion of the composed lower bounds :func:`leaf_log_moments_lower`: it is
    non-decreasing in every moment, and those are never above the moments
    :func:`ledger_rdp_delta` composes.  :meth:`dpjax.accounting.PLDAccountant.get_delta`
    asks it with its PLD answer as ``value`` and skips the exact moments where it says
    ``True`` (the RDP bound could not lower the answer): the same answer, without the fine
    quadrature of a subsampled Laplace leaf at every step of a search.

    Args:
      leaves, relation, epsilon: as in :func:`ledger_rdp_delta`.
      value: the ``delta`` to compare with.

    Returns:
      ``True`` only if :func:`ledger_rdp_delta` would return more than ``value``
      (``False`` decides nothing).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting import events as ev
      >>> leaves = [(ev.PoissonSampled(0.2, ev.Laplace(2.0)), 10)]
      >>> exact = ledger_rdp_delta(leaves, "add_remove", 0.5)
      >>> ledger_rdp_delta_exceeds(leaves, "add_remove", 0.5, 0.999 * exact)
      True
      >>> ledger_rdp_delta_exceeds(leaves, "add_remove", 0.5, exact)
      False
    """
    lower = ledger_log_moments(leaves, relation, leaf_log_moments_lower)
    return _rdp_delta(lower, epsilon) > float(value) * (1.0 + EXCEEDS_MARGIN)


@float64_kernel
def ledger_rdp_epsilon_exceeds(leaves, relation: str, delta: float, value: float) -> bool:
    """Whether :func:`ledger_rdp_epsilon` is certainly above ``value``, decided cheaply.

    :func:`ledger_rdp_delta_exceeds` for the epsilon side (the conversion
    :func:`~dpjax.accounting.rdp.subsampled_gaussian.rdp_epsilon` is non-decreasing in every
    moment too); :meth:`dpjax.accounting.PLDAccountant.get_epsilon` asks it with its PLD
    answer.

    Args:
      leaves, relation, delta: as in :func:`ledger_rdp_epsilon`.
      value: the ``epsilon`` to compare with.

    Returns:
      ``True`` only if :func:`ledger_rdp_epsilon` would return more than ``value``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting import events as ev
      >>> leaves = [(ev.PoissonSampled(0.2, ev.Laplace(2.0)), 10)]
      >>> exact = ledger_rdp_epsilon(leaves, "add_remove", 1e-6)
      >>> ledger_rdp_epsilon_exceeds(leaves, "add_remove", 1e-6, 0.999 * exact)
      True
      >>> ledger_rdp_epsilon_exceeds(leaves, "add_remove", 1e-6, exact)
      False
    """
    lower = ledger_log_moments(leaves, relation, leaf_log_moments_lower)
    return _rdp_epsilon(lower, delta) > float(value) * (1.0 + EXCEEDS_MARGIN)


@float64_kernel
def family_rdp_epsilon(noise, compositions, delta, sensitivity=1.0):
    r"""Certified RDP epsilon of ``T`` uses of ``noise`` at ``delta`` (``inf`` where unknown).

    .. math:: \epsilon = \min_\alpha \frac{T \log A_\alpha + \log c(\alpha - 1)
              - \log\delta}{\alpha - 1}

    on the moments of :func:`~dpjax.accounting.rdp.families.family_log_moments`
    (:func:`~dpjax.accounting.rdp.subsampled_gaussian.rdp_epsilon`; Canonne, Kamath & Steinke 2020).

    Args:
      noise, sensitivity: as in
        :func:`~dpjax.accounting.rdp.families.family_log_moments`.
      compositions: ``T >= 1`` (e.g. the ``K`` coordinates of a K-dim corner shift).
      delta: ``delta`` in ``(0, 1)`` (array).

    Returns:
      ``epsilon`` (NumPy, ``delta``'s shape).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax import noise
      >>> fh = noise.make("flipped-huber", alpha=0.0, gamma=2.0)  # N(0, 4)
      >>> round(float(family_rdp_epsilon(fh, 50, 1e-5)), 6)  # dp_accounting RDP: 22.019852
      22.019852
    """
    moments = family_log_moments(noise, sensitivity)
    if moments is None:
        return np.full(np.shape(delta), np.inf)
    eps = np.asarray(rdp_epsilon(moments[0], float(compositions) * moments[1], delta))
    return np.where(np.isnan(eps), np.inf, eps)


@float64_kernel
def family_rdp_delta(noise, compositions, epsilon, sensitivity=1.0):
    """Certified RDP ``delta(epsilon)`` of ``T`` uses of ``noise`` (``1`` where unknown).

    The conversion :func:`~dpjax.accounting.rdp.subsampled_gaussian.rdp_log_delta` of ``T`` times
    :func:`~dpjax.accounting.rdp.families.family_log_moments`.

    Args:
      noise, sensitivity: as in
        :func:`~dpjax.accounting.rdp.families.family_log_moments`.
      compositions: ``T >= 1``.
      epsilon: ``epsilon >= 0`` (array).

    Returns:
      ``delta`` in ``[0, 1]`` (NumPy, ``epsilon``'s shape).
    """
    moments = family_log_moments(noise, sensitivity)
    if moments is None:
        return np.ones(np.shape(epsilon))
    log_d = np.asarray(rdp_log_delta(moments[0], float(compositions) * moments[1], epsilon))
    return np.where(np.isnan(log_d), 1.0, np.exp(np.minimum(log_d, 0.0)))
