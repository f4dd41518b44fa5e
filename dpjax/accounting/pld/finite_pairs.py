r"""Dominating pairs with finitely many outcomes, and their pessimistic PLDs.

A discrete pair is two arrays ``(p, q)`` of probabilities over the same outcomes; its
privacy loss is ``log(p / q)`` (``+inf`` where ``q = 0``; outcomes with ``p = 0`` carry no
``P``-mass and drop out of ``delta``).  The pairs here are exact:

* discrete Laplace ``DLap(a)`` at integer shift ``s`` (pmf ``tanh(a/2) e^{-a|k|}``;
  Ghazi et al. 2022 "Connect the dots", dp_accounting ``DiscreteLaplacePrivacyLoss``):
  losses ``a (|k - s| - |k|)`` with the two half-lines summed in closed form;
* discrete Gaussian ``N_Z(0, sigma^2)`` (Canonne, Kamath & Steinke 2020, Def. 1) at integer
  shift ``s``: losses ``(s^2 - 2 k s) / (2 sigma^2)`` on ``|k| <= K``; the mass beyond ``K``
  (``<= 2 e^{-K^2 / (2 sigma^2)} / (1 - e^{-K/sigma^2})``, below ``1e-300``) is put at
  ``+infinity`` (pessimistic);
* k-ary randomized response (replace-one; dp_accounting ``from_randomized_response``);
* generalised randomized response, the pair dominating every ``(epsilon, delta)``-DP mechanism
  (Kairouz, Oh & Viswanath 2015, Thm 2.4).

Poisson subsampling mixes the arrays (Zhu, Dong & Wang 2022, Thm 11): remove
``(q p + (1 - q) q_, q_)``, add ``(p, (1 - q) p + q q_)``; for pure DP this contains the
amplification ``log(1 + q (e^eps - 1))`` of Balle, Barthe & Gaboardi (2018, Thm 10) and is
exact.  Under replace-one the subsampled discrete noise mixes three shifts
(:func:`discrete_laplace_replace_pair`, :func:`discrete_gaussian_replace_pair`).
:func:`discrete_pld` hands the atoms to the connect-the-dots constructor.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.atoms import from_atoms
from dpjax.numerics import float64_kernel

__all__ = [
    "discrete_gaussian_pair",
    "discrete_gaussian_replace_pair",
    "discrete_laplace_pair",
    "discrete_laplace_replace_pair",
    "discrete_pld",
    "epsilon_delta_pair",
    "poisson_subsampled_pair",
    "randomized_response_pair",
]


@float64_kernel
def discrete_laplace_pair(noise_parameter: float, sensitivity: int = 1):
    r"""``(p, q)`` of ``DLap(a)`` vs ``s + DLap(a)``, exact (module docstring).

    .. math:: P(k \le 0) = \frac{1}{1 + e^{-a}},\quad P(k \ge s) = \frac{e^{-a s}}{1 + e^{-a}},
              \quad P(k) = \tanh(a/2) e^{-a k}\ (0 < k < s)

    Args:
      noise_parameter: ``a > 0``.
      sensitivity: integer shift ``s >= 1``.

    Returns:
      ``(p, q)``: NumPy float64 arrays over the outcomes ``k <= 0``, ``0 < k < s``, ``k >= s``.
    """
    a, s = float(noise_parameter), int(sensitivity)
    head = 1.0 / (1.0 + math.exp(-a))
    tail = math.exp(-a * s) * head
    k = np.arange(1, s, dtype=np.float64)
    mid_p = math.tanh(a / 2.0) * np.exp(-a * k)
    mid_q = math.tanh(a / 2.0) * np.exp(-a * (s - k))
    p = np.concatenate([[head], mid_p, [tail]])
    q = np.concatenate([[tail], mid_q, [head]])
    return p, q


#: Below this ``sigma`` the discrete Gaussian's mass off 0 is below ``e^{-1/(2 sigma^2)} <
#: e^{-5e199}`` (and ``sigma^2`` underflows float64): the pair is two point masses, ``0`` and
#: ``s``, exactly as far as any float64 can say (``delta = 1``: no privacy).
_POINT_MASS_SIGMA = 1e-100


@float64_kernel
def discrete_gaussian_pair(sigma: float, sensitivity: int = 1):
    r"""``(p, q)`` of ``N_Z(0, sigma^2)`` vs ``s + N_Z(0, sigma^2)`` on ``|k| <= K`` plus a ``+inf``
    outcome holding a bound on the mass beyond ``K`` (module docstring).

    .. math:: p_k = e^{-k^2/(2\sigma^2)} / Z,\qquad q_k = e^{-(k-s)^2/(2\sigma^2)} / Z

    ``Z`` is summed over ``|k| <= K`` (a lower bound: both masses are over-stated by the same
    factor ``<= 1 + 1e-300``, which only raises ``delta``).

    Args:
      sigma: ``sigma > 0`` (at most ``1e5``: the pmf is materialised).
      sensitivity: integer shift ``s >= 1``.

    Returns:
      ``(p, q)``: NumPy float64 arrays.
    """
    sigma, s = float(sigma), int(sensitivity)
    half = int(math.ceil(38.0 * sigma)) + s + 2  # e^{-K^2/2sigma^2} < 1e-313
    if sigma < _POINT_MASS_SIGMA:  # sigma^2 underflows: N_Z(0, sigma^2) is the point mass at 0
        k = np.arange(-half, half + s + 1, dtype=np.float64)
        p, q = (k == 0).astype(np.float64), (k == s).astype(np.float64)
        return np.append(p, 0.0), np.append(q, 0.0)
    k = np.arange(-half, half + s + 1, dtype=np.float64)
    log_z = _log_sum_exp(-np.square(np.arange(-half, half + 1.0)) / (2.0 * sigma**2))
    p = np.exp(-np.square(k) / (2.0 * sigma**2) - log_z)
    q = np.exp(-np.square(k - s) / (2.0 * sigma**2) - log_z)
    tail = 2.0 * math.exp(-(half**2) / (2.0 * sigma**2) - log_z) / -math.expm1(-half / sigma**2)
    return np.append(p, tail), np.append(q, 0.0)


def _log_sum_exp(x):
    m = float(np.max(x))
    return m + math.log(float(np.sum(np.exp(x - m))))


@float64_kernel
def randomized_response_pair(noise_parameter: float, num_buckets: int):
    r"""``(p, q)`` of k-ary randomized response on inputs ``x != x'`` (replace-one).

    .. math:: p = (1 - \rho + \rho/k,\ \rho/k,\ (k-2)\rho/k),\qquad
              q = (\rho/k,\ 1 - \rho + \rho/k,\ (k-2)\rho/k)

    over the outputs ``x``, ``x'`` and the others (dp_accounting ``from_randomized_response``).

    Args:
      noise_parameter: ``rho`` in ``[0, 1]`` (``0``: no privacy, a loss ``+inf``).
      num_buckets: ``k >= 2``.

    Returns:
      ``(p, q)``: NumPy float64 arrays.
    """
    r, k = float(noise_parameter), int(num_buckets)
    keep, other = 1.0 - r + r / k, r / k
    return np.array([keep, other, (k - 2) * other]), np.array([other, keep, (k - 2) * other])


@float64_kernel
def epsilon_delta_pair(epsilon: float, delta: float = 0.0):
    r"""``(p, q)`` dominating every ``(epsilon, delta)``-DP mechanism (Kairouz et al. 2015).

    .. math:: p = (\delta,\ \tfrac{(1-\delta) e^\epsilon}{1 + e^\epsilon},\
              \tfrac{1-\delta}{1 + e^\epsilon},\ 0),\qquad q = \text{reversed } p

    Args:
      epsilon: ``epsilon >= 0``.
      delta: ``delta`` in ``[0, 1]``.

    Returns:
      ``(p, q)``: NumPy float64 arrays (symmetric: ``q`` is ``p`` reversed).
    """
    e, d = float(epsilon), float(delta)
    hi = (1.0 - d) / (1.0 + math.exp(-e))  # no overflow of e^eps
    lo = (1.0 - d) - hi
    p = np.array([d, hi, lo, 0.0])
    return p, p[::-1].copy()


@float64_kernel
def poisson_subsampled_pair(p, q, sampling_rate: float, direction: str):
    r"""The Poisson-subsampled pair of a symmetric discrete pair (Zhu, Dong & Wang 2022, Thm 11).

    .. math:: \text{remove}: (r p + (1 - r) q,\ q),\qquad \text{add}: (p,\ (1 - r) p + r q)

    Args:
      p, q: the base pair (dominating in both directions).
      sampling_rate: ``r`` in ``[0, 1]``.
      direction: ``"remove"`` or ``"add"``.

    Returns:
      The subsampled ``(p, q)``.
    """
    r = float(sampling_rate)
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    if direction == "remove":
        return r * p + (1.0 - r) * q, q
    if direction == "add":
        return p, (1.0 - r) * p + r * q
    raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")


@float64_kernel
def discrete_laplace_replace_pair(noise_parameter: float, sensitivity: int, sampling_rate: float):
    r"""``(P, Q)`` of one Poisson-subsampled ``DLap(a)`` use under replace-one, exact.

    .. math:: P = (1 - r)\,X + r\,(X + s),\qquad Q = (1 - r)\,X + r\,(X - s)

    (the record's contribution ``s`` replaced by ``-s``; dp_accounting's ``REPLACE`` pair of
    a subsampled additive mechanism, which dp_accounting does not offer for discrete noise).
    For ``k >= s`` all three pmfs are proportional to ``e^{-a k}`` (and to ``e^{a k}`` for
    ``k <= -s``), so the loss is constant there and each half-line is one outcome, summed
    in closed form with ``h = 1 / (1 + e^{-a})``:

    .. math:: P(k \ge s) = h\,\big((1 - r) e^{-a s} + r\big),\quad
              Q(k \ge s) = h\,\big((1 - r) e^{-a s} + r e^{-2 a s}\big)

    and ``P(k <= -s) = Q(k >= s)``, ``Q(k <= -s) = P(k >= s)``; the outcomes ``|k| < s`` are
    listed one by one (pmf ``tanh(a/2) e^{-a|k|}``).

    Args:
      noise_parameter: ``a > 0``.
      sensitivity: the contribution bound ``s >= 1`` (integer).
      sampling_rate: ``r`` in ``(0, 1]``.

    Returns:
      ``(P, Q)``: NumPy float64 arrays over ``k <= -s``, ``-s < k < s``, ``k >= s``.

    Example:
      >>> p, q = discrete_laplace_replace_pair(1.0, 1, 1.0)  # r = 1: shift 2
      >>> bool(abs(p.sum() - 1) < 1e-15 and abs(q.sum() - 1) < 1e-15)
      True
    """
    a, s, r = float(noise_parameter), int(sensitivity), float(sampling_rate)
    h = 1.0 / (1.0 + math.exp(-a))
    e1, e2 = math.exp(-a * s), math.exp(-2.0 * a * s)
    hi_p, hi_q = h * ((1.0 - r) * e1 + r), h * ((1.0 - r) * e1 + r * e2)
    k = np.arange(1 - s, s, dtype=np.float64)
    c = math.tanh(a / 2.0)
    here = c * np.exp(-a * np.abs(k))
    mid_p = (1.0 - r) * here + r * c * np.exp(-a * np.abs(k - s))
    mid_q = (1.0 - r) * here + r * c * np.exp(-a * np.abs(k + s))
    return (np.concatenate([[hi_q], mid_p, [hi_p]]), np.concatenate([[hi_p], mid_q, [hi_q]]))


@float64_kernel
def discrete_gaussian_replace_pair(sigma: float, sensitivity: int, sampling_rate: float):
    r"""``(P, Q)`` of one Poisson-subsampled ``N_Z(0, sigma^2)`` use under replace-one.

    .. math:: P_k = (1 - r)\,p_k + r\,p_{k - s},\qquad Q_k = (1 - r)\,p_k + r\,p_{k + s}

    on ``|k| <= K + s`` with :func:`discrete_gaussian_pair`'s ``K`` and normaliser, plus a
    ``+inf`` outcome holding its bound on the mass of ``|X| > K`` (pessimistic).

    Args:
      sigma: ``sigma > 0`` (at most ``1e5``: the pmf is materialised).
      sensitivity: the contribution bound ``s >= 1`` (integer).
      sampling_rate: ``r`` in ``(0, 1]``.

    Returns:
      ``(P, Q)``: NumPy float64 arrays.
    """
    sigma, s, r = float(sigma), int(sensitivity), float(sampling_rate)
    half = int(math.ceil(38.0 * sigma)) + s + 2  # e^{-K^2/2sigma^2} < 1e-313
    k = np.arange(-half - s, half + s + 1, dtype=np.float64)
    if sigma < _POINT_MASS_SIGMA:  # the point mass at 0 (discrete_gaussian_pair)
        law = [(k == c).astype(np.float64) for c in (0.0, s, -s)]
        tail = 0.0
    else:
        log_z = _log_sum_exp(-np.square(np.arange(-half, half + 1.0)) / (2.0 * sigma**2))
        law = [np.exp(-np.square(k - c) / (2.0 * sigma**2) - log_z) for c in (0.0, s, -s)]
        tail = 2.0 * math.exp(-(half**2) / (2.0 * sigma**2) - log_z) / -math.expm1(
            -half / sigma**2)
    p = (1.0 - r) * law[0] + r * law[1]
    q = (1.0 - r) * law[0] + r * law[2]
    return np.append(p, tail), np.append(q, 0.0)


@float64_kernel
def discrete_pld(p, q, bin_width: float = 1e-4, pessimistic: bool = True) -> PLD:
    r"""PLD of a discrete pair: atoms ``(log(p_i / q_i), p_i)`` by connect-the-dots.

    .. math:: \delta(\epsilon) = \sum_i (p_i - e^\epsilon q_i)_+

    is reproduced exactly at the grid points and by chords in between (an upper bound,
    :func:`dpjax.accounting.pld.from_atoms`); ``pessimistic=False`` rounds losses down.

    Args:
      p, q: probabilities over the same outcomes (``q_i = 0 < p_i``: loss ``+inf``).
      bin_width: grid spacing ``h > 0``.
      pessimistic: upper (default) or lower discretisation.

    Returns:
      The :class:`~dpjax.accounting.pld.PLD`.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import delta_for_epsilon
      >>> pld = discrete_pld(*epsilon_delta_pair(1.0, 1e-6), bin_width=1e-3)
      >>> round(float(delta_for_epsilon(pld, 1.0)), 9)
      1e-06
    """
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    if p.shape != q.shape or np.any(~np.isfinite(p)) or np.any(p < 0) or np.any(q < 0):
        raise ValueError("p and q must be arrays of finite probabilities of one shape")
    keep = p > 0
    p, q = p[keep], q[keep]
    with np.errstate(divide="ignore"):
        losses = np.where(q > 0, np.log(p) - np.log(np.where(q > 0, q, 1.0)), np.inf)
    return from_atoms(losses, p, bin_width, pessimistic)
