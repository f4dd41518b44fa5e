r"""Exact Rényi moments of the Poisson-subsampled Gaussian and their RDP conversion (NumPy, host).

With ``mu = Delta / sigma`` and the standard normal density ``phi``, the order-``alpha``
moments ``A_alpha = E_Q[(P/Q)^alpha] = e^{(alpha - 1) D_alpha(P || Q)}`` of the two
dominating pairs of :mod:`.subsample` (Mironov, Talwar & Zhang 2019, Sec. 3.3) are

.. math:: A^{\text{remove}}_\alpha = \int \phi(z)\,
          \big(1 - q + q e^{\mu z - \mu^2/2}\big)^\alpha dz,\qquad
          A^{\text{add}}_\alpha = \int \phi(z)\,
          \big(1 - q + q e^{-\mu z - \mu^2/2}\big)^{1-\alpha} dz.

* **Integer orders** (:func:`gaussian_log_moments`): the binomial expansion of the remove
  moment, exact up to padded rounding; it also bounds the add moment (ibid., Thm 5).
* **Fractional orders** (:func:`gaussian_fractional_log_moments`): both moments by the
  trapezoidal rule in log space, **certified**: each integrand is analytic in the strip
  ``|Im z| < d`` with ``d = min(theta / mu, 1)``, ``theta = 1`` (``|Im(mu z)| < theta <
  pi / 2`` keeps ``1 - q + q e^{...}`` in the right half-plane, so its real power is
  analytic), and ``int |f(x + i b)| dx <= M`` with ``M = e^{d^2/2} A`` (remove:
  ``|1 - q + q e^w| <= 1 - q + q e^{Re w}``) or ``M = e^{d^2/2} cos(theta)^{1-alpha} A``
  (add: ``|.| >= cos(theta) (1 - q + q e^{Re w})``).  The trapezoidal sum ``I_h`` then
  satisfies ``|I_h - A| <= 2 M / (e^{2 pi d / h} - 1)`` (Trefethen & Weideman 2014,
  Thm 5.1), so ``A <= I_h / (1 - c)``, ``c = 2 e^{d^2/2} cos(theta)^{1-alpha} /
  (e^{2 pi d / h} - 1)``; the step ``h`` makes ``c <= e^{-50}``.
  The sum is truncated to ``z in [-R - mu/2, alpha mu + R]`` (``R = 10``), the terms left
  out bounded by Gaussian tail integrals (module code, :func:`_tails`) and added; every log-term is
  padded by its float64 rounding.  So each value is an upper bound on the exact moment;
  the reported moment is the **maximum over the two directions**.

:func:`gaussian_rdp_epsilon` turns the moments of ``T`` uses into epsilon by the
Canonne–Kamath–Steinke conversion of :mod:`.tail_bounds` (the formula of
``dp_accounting.rdp.compute_epsilon``) on :data:`RDP_ORDERS` and :data:`FRACTIONAL_ORDERS`,
a superset of dp_accounting's default orders, each moment exact (not a chord) up to
``Delta / sigma ~ 18``; beyond, where the trapezoidal sum would need more than
:data:`MAX_QUADRATURE_TERMS` terms, the fractional orders take the chord of the integer
moments around them (an upper bound: ``log A_alpha`` is convex in ``alpha``).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpjax.accounting.pld import tail_bounds
from dpjax.certificate import log_target_host
from dpjax.numerics import (
    float64_kernel,
    illinois_host,
    log_binomial_host,
    log_binomial_magnitude_host,
    log_expm1_host,
    log_Q_host,
    logsumexp_host,
)
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

#: Half-width (in standard deviations) of the truncated trapezoidal sum beyond the bulk.
_R = 10.0
#: ``mu |Im z| <= theta``: the strip of analyticity (``theta < pi / 2``).
_THETA = 1.0
#: ``-log`` of the strip error bound's relative size, before its ``cos(theta)`` factor.
_LOG_ERROR = 52.0

#: Integer Rényi orders of :func:`gaussian_log_moments`: ``2..64``, ``68..256`` (step 4) and
#: ``320..1024`` (step 64) -- a superset of the integer orders RDP accountants use.
RDP_ORDERS = np.concatenate(
    [np.arange(2, 65), np.arange(68, 257, 4), np.arange(320, 1025, 64)]
).astype(np.float64)
#: Fractional orders of :func:`gaussian_moment_bounds`: ``1.1 .. 10.9`` (step 0.1, those of
#: dp_accounting's RDP accountant; integers left out) and the half-integers ``11.5 .. 63.5``.
FRACTIONAL_ORDERS = np.concatenate(
    [
        np.setdiff1d(np.round(np.arange(11, 110) / 10.0, 1), np.arange(2, 11)),
        np.arange(11.5, 64.0, 1.0),
    ]
)
#: Largest ``orders x nodes`` of one trapezoidal sum (its arrays stay near 130 MB); beyond
#: it (``Delta / sigma`` above ~18) the fractional moments are chords of the integer ones.
MAX_QUADRATURE_TERMS = 2**24
#: The two groups of :data:`FRACTIONAL_ORDERS` integrated on their own grids (the step
#: shrinks with the largest order of a group).
_GROUPS = (FRACTIONAL_ORDERS[FRACTIONAL_ORDERS < 11.0], FRACTIONAL_ORDERS[FRACTIONAL_ORDERS > 11.0])


@float64_kernel
def gaussian_log_moments(sigma, sampling_rate, sensitivity=1.0, orders=RDP_ORDERS):
    r"""Certified upper bounds on the log-moments of one Poisson-subsampled Gaussian use.

    For integer orders ``alpha`` (Mironov, Talwar, Zhang 2019, Sec. 3.3),

    .. math:: \log A_\alpha = \log \sum_{k=0}^{\alpha} \binom{\alpha}{k} (1-q)^{\alpha-k} q^k
              e^{(k^2 - k) \mu^2 / 2},\qquad \mu = \Delta / \sigma,

    is ``(alpha - 1) D_alpha`` of the remove pair, i.e. ``log E_P[e^{lambda L}]`` at
    ``lambda = alpha - 1``; it also bounds the add pair's (ibid., Thm 5).  Evaluated in
    log space (``q = 1`` included: only ``k = alpha`` survives) and padded by the
    rounding of every term (``64 u`` times the sum of the magnitudes of its parts, the
    ``log Gamma`` terms of the binomial included) and
    of the sum, so that :mod:`.tail_bounds` certifies ``delta(eps)`` from
    ``T log A`` (NumPy, host).

    Args:
      sigma: noise standard deviation(s) ``sigma > 0`` (any shape ``S``).
      sampling_rate: ``q`` in ``(0, 1]``.
      sensitivity: l2-sensitivity ``Delta``.
      orders: integer orders ``alpha >= 2``.

    Returns:
      ``(lambdas, log_moments)``: ``lambdas = orders - 1`` and an array of shape
      ``S + (len(orders),)``.
    """
    mu2 = (np.asarray(sensitivity, np.float64) / np.asarray(sigma, np.float64)) ** 2
    q = float(sampling_rate)
    lq, l1q = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    a = np.asarray(orders, np.float64)[:, None]
    k = np.arange(int(a.max()) + 1, dtype=np.float64)[None, :]
    valid = k <= a
    logc = np.where(valid, log_binomial_host(a, k), 0)
    rest = a - k
    with np.errstate(invalid="ignore"):
        t_rest = np.where(rest > 0, rest * l1q, 0.0)  # (1-q)^0 = 1 also at q = 1
    t_q = k * lq
    base = np.where(valid, logc + t_rest + t_q, -np.inf)
    mag = np.abs(logc) + log_binomial_magnitude_host(a) + np.where(
        np.isfinite(t_rest), np.abs(t_rest), 0.0
    ) + np.abs(t_q)
    quad = ((k * k - k) / 2.0)[None] * mu2.reshape(-1, 1, 1)
    terms = base[None] + quad + 64.0 * _U * (mag[None] + quad + 1.0)
    log_a = logsumexp_host(terms, axis=-1) + math.log1p(1024.0 * _U)
    log_a = np.minimum(log_a, _log1p_of_excess(base, mag, quad, k >= 2.0))
    return a[:, 0] - 1.0, log_a.reshape(np.shape(mu2) + (a.shape[0],))


def _log1p_of_excess(base, mag, quad, keep):
    r"""``log A`` bounded through ``A - 1`` (a second certified bound on the binomial sum).

    .. math:: A - 1 = \sum_{k=2}^{\alpha} \binom{\alpha}{k} (1-q)^{\alpha-k} q^k
              \big(e^{(k^2 - k)\mu^2/2} - 1\big),\qquad \log A = \log(1 + (A - 1))

    (the binomial weights sum to one and the ``k = 0, 1`` terms vanish), every term
    positive: a small ``A - 1`` (``q -> 0``) keeps its relative precision, where the sum
    for ``A`` itself carries a pad of ``~1e-13`` absolute per use that ``T`` uses multiply.
    Each log-term is padded by ``64 u`` times its parts' magnitudes, the sum by ``4096 u``
    relative, ``log(1 + x)`` by ``8 u`` relative plus the least subnormal (its rounding, and
    an ``A - 1`` below the float64 range).

    Args:
      base: ``(orders, k)`` log-binomial terms ``log binom + (a-k) log(1-q) + k log q``
        (``-inf`` where ``k > alpha``); mag: their parts' magnitudes; quad: ``S + (1, k)``
        exponents ``(k^2 - k) mu^2 / 2``; keep: ``k >= 2``.

    Returns:
      Upper bounds on ``log A``, shape ``S + (orders,)`` (flattened ``S``).
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_em1 = log_expm1_host(quad)
        pad = 64.0 * _U * (mag[None] + quad + np.abs(np.where(keep, log_em1, 0.0)) + 1.0)
        terms = np.where(keep & np.isfinite(base)[None], base[None] + log_em1 + pad, -np.inf)
        log_excess = logsumexp_host(terms, axis=-1) + math.log1p(4096.0 * _U)
    return np.logaddexp(0.0, log_excess) * (1.0 + 8.0 * _U) + 5e-324


def _log_q(x):
    """``log Q(x)`` (upper normal tail, :func:`dpjax.numerics.log_Q_host`: a few ulps),
    padded up by ``1e-12 (1 + |log Q|)``."""
    v = log_Q_host(x)
    return v + 1e-12 * (1.0 + np.abs(v))


def _tails(a, mu, lq, l1q, z_lo, z_hi, remove: bool):
    r"""``log`` of a bound on ``h sum_k f(kh)`` over the nodes outside ``[z_lo, z_hi]``.

    Below ``z_lo <= -mu / 2`` both bases are on the side where the power is ``<= 1``, so
    ``f <= phi`` (increasing there): ``<= Q(-z_lo)``.  Above ``z_hi``: for remove
    (``z_hi >= alpha mu``) ``1 - q + q e^u <= c e^u``, ``c = q + (1 - q) e^{-u(z_hi)}``, so
    ``f <= c^alpha e^{alpha(alpha - 1) mu^2 / 2} phi(z - alpha mu)``; for add
    ``f <= min((1 - q)^{1 - alpha} phi(z), e^{alpha(alpha - 1) mu^2 / 2} phi(z - (alpha - 1) mu))``;
    both decreasing above ``z_hi``, so a sum is at most the integral (closed forms in ``Q``).
    """
    low = _log_q(-z_lo)
    if remove:
        u_hi = mu * z_hi - mu * mu / 2.0
        log_c = np.logaddexp(lq, l1q - u_hi)
        high = a * log_c + a * (a - 1.0) * mu * mu / 2.0 + _log_q(z_hi - a * mu)
    else:
        shifted = a * (a - 1.0) * mu * mu / 2.0 + _log_q(z_hi - (a - 1.0) * mu)
        flat = (a - 1.0) * -l1q + _log_q(z_hi) if np.isfinite(l1q) else np.inf
        high = np.minimum(shifted, flat)
    return np.logaddexp(low, high) + 8.0 * _U * (np.abs(low) + np.abs(high))


def _nodes(a_max: float, mu: float) -> tuple[float, float, int, int]:
    """``(d, h, k_lo, k_hi)``: the strip half-width, step and node range of the
    trapezoidal sum for orders up to ``a_max`` (module docstring)."""
    d = min(_THETA / mu, 1.0)
    # 2 pi d / h = _LOG_ERROR + (a_max - 1) log(1 / cos theta): the strip bound below e^-50
    h = 2.0 * math.pi * d / (_LOG_ERROR + (a_max - 1.0) * -math.log(math.cos(_THETA)))
    return d, h, math.floor(-(_R + mu / 2.0) / h), math.ceil((a_max * mu + _R) / h)


def _trapezoid(orders, mu: float, q: float):
    """Certified ``(log A_remove, log A_add)`` at ``orders`` (one grid; module docstring)."""
    a = np.asarray(orders, np.float64)[:, None]
    a_max = float(a.max())
    lq, l1q = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    d, h, k_lo, k_hi = _nodes(a_max, mu)
    z = (np.arange(k_lo, k_hi + 1, dtype=np.float64) * h)[None, :]
    log_phi = -0.5 * z * z - HALF_LOG_2PI
    mag_l1q = abs(l1q) if math.isfinite(l1q) else 0.0
    # rounding of each log-term: the exponents, the logaddexp of the base, the node k h
    mag = (0.5 * z * z + 1.0) + a * (abs(lq) + mag_l1q + mu * np.abs(z) + mu * mu + 1.0)
    pad = 64.0 * _U * mag + 4.0 * _U * (np.abs(z) + a * mu + mu) * (np.abs(z) + 1.0)
    log_h, n = math.log(h), z.shape[-1]
    total_pad = math.log1p(4.0 * (n + 16) * _U) + 4.0 * _U * abs(log_h)
    # strip bound: A <= I_h / (1 - c), c = 2 e^{d^2/2} cos(theta)^{1-alpha} / (e^{2 pi d/h} - 1)
    log_c = (
        LOG_2 + d * d / 2.0 - (a[:, 0] - 1.0) * math.log(math.cos(_THETA))
        - 2.0 * math.pi * d / h
    )
    strip = -np.log1p(-np.exp(log_c))
    out = []
    for remove in (True, False):
        sign = 1.0 if remove else -1.0
        base = np.logaddexp(l1q, lq + sign * mu * z - mu * mu / 2.0)
        power = a if remove else 1.0 - a
        terms = log_phi + power * base + pad
        # max-shifted sum (its rounding is within total_pad); an infinite top is not
        # shifted, so that +inf stays +inf and an empty sum stays -inf (never NaN)
        top = np.max(terms, axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        body = np.log(np.sum(np.exp(terms - top), axis=-1)) + top[:, 0] + log_h + total_pad
        tails = _tails(a[:, 0], mu, lq, l1q, float(z[0, 0]), float(z[0, -1]), remove)
        out.append(np.logaddexp(body, tails) + 8.0 * _U * np.abs(body) + strip)
    return out[0], out[1]


def _chord(orders, mu: float, q: float) -> np.ndarray:
    r"""Certified ``log A`` at fractional ``orders`` from the integer moments around them.

    .. math:: \log A_\alpha \le (1 - w)\,\log A_{\lfloor\alpha\rfloor}
              + w\,\log A_{\lceil\alpha\rceil},\qquad w = \alpha - \lfloor\alpha\rfloor

    ``log A_alpha = log E_Q[e^{alpha L}]`` is a cumulant generating function, convex in
    ``alpha`` (Hölder), for each direction and so for their maximum; ``log A_1 = 0``; the
    integer moments are :func:`gaussian_log_moments`'s upper bounds of both directions
    (all ``>= 0``), and the chord's rounding is padded by ``8 u`` relative.
    """
    a = np.asarray(orders, np.float64)
    lo, hi = np.floor(a), np.floor(a) + 1.0
    ints = np.arange(2.0, hi.max() + 1.0)
    _, log_int = gaussian_log_moments(1.0 / mu, q, 1.0, ints)
    table = np.concatenate([[0.0], log_int])  # orders 1, 2, ..., max
    w = a - lo
    with np.errstate(invalid="ignore"):  # an infinite moment stays infinite (w > 0)
        out = (1.0 - w) * table[(lo - 1).astype(int)] + w * table[(hi - 1).astype(int)]
    return out * (1.0 + 8.0 * _U)


@functools.lru_cache(maxsize=256)
def _fractional_cached(mu: float, q: float) -> np.ndarray:
    """Certified ``max(log A_remove, log A_add)`` on :data:`FRACTIONAL_ORDERS` (cached):
    the trapezoidal sums, or the chord of the integer moments (:func:`_chord`) for a group
    whose sum would exceed :data:`MAX_QUADRATURE_TERMS` terms (``mu`` large: the nodes
    grow like ``alpha mu^2``)."""
    parts = []
    for orders in _GROUPS:
        _, _, k_lo, k_hi = _nodes(float(orders.max()), mu)
        if (k_hi - k_lo + 1) * orders.size > MAX_QUADRATURE_TERMS:
            parts.append(_chord(orders, mu, q))
        else:
            parts.append(np.maximum(*_trapezoid(orders, mu, q)))
    out = np.concatenate(parts)
    out.setflags(write=False)
    return out


@float64_kernel
def gaussian_fractional_log_moments(sigma, sampling_rate, sensitivity=1.0):
    r"""Certified log-moments of one subsampled Gaussian use at :data:`FRACTIONAL_ORDERS`.

    .. math:: \log A_\alpha = \max\big(\log A^{\text{remove}}_\alpha,\
              \log A^{\text{add}}_\alpha\big)

    both integrals (module docstring) by the trapezoidal rule with its strip error bound
    (Trefethen & Weideman 2014, Thm 5.1), truncation tails and rounding added: upper bounds
    on the exact moments of both adjacencies (Zhu, Dong & Wang 2022, Thm 11), to ~1e-13
    relative.

    Args:
      sigma: noise standard deviation(s) ``sigma > 0`` (any shape ``S``).
      sampling_rate: ``q`` in ``(0, 1]``.
      sensitivity: l2-sensitivity ``Delta``.

    Returns:
      ``(lambdas, log_moments)``: ``lambdas = FRACTIONAL_ORDERS - 1`` and an array of shape
      ``S + (len(FRACTIONAL_ORDERS),)`` (NumPy).

    Example:
      >>> lam, log_a = gaussian_fractional_log_moments(1.0, 1.0)  # q = 1: e^{lambda alpha/2}
      >>> bool(abs(log_a[0] - 0.1 * 1.1 / 2) < 1e-12)
      True
    """
    mu = np.asarray(sensitivity, np.float64) / np.asarray(sigma, np.float64)
    q = float(sampling_rate)
    flat = [_fractional_cached(float(m), q) for m in mu.reshape(-1)]
    log_a = np.stack(flat).reshape(mu.shape + (len(FRACTIONAL_ORDERS),))
    return FRACTIONAL_ORDERS - 1.0, log_a


@float64_kernel
def gaussian_moment_bounds(sigma, sampling_rate, sensitivity=1.0):
    r"""Log-moment bounds of one subsampled Gaussian use at integer *and* fractional orders.

    .. math:: \log A_\alpha,\quad \alpha \in \text{RDP\_ORDERS} \cup \text{FRACTIONAL\_ORDERS}

    The integer orders of :func:`gaussian_log_moments` followed by the fractional ones of
    :func:`gaussian_fractional_log_moments` (exact up to certified quadrature error; Mironov,
    Talwar & Zhang 2019 for the moments).

    Args:
      sigma, sampling_rate, sensitivity: as in :func:`gaussian_log_moments`.

    Returns:
      ``(lambdas, log_moments)`` as :func:`gaussian_log_moments`, fractional orders appended
      (read-only arrays for scalar arguments: those are memoised, so that the certificate of
      an epsilon and the epsilon itself compute the moments once).
    """
    if all(np.ndim(v) == 0 for v in (sigma, sampling_rate, sensitivity)):
        return _scalar_moment_bounds(float(sigma), float(sampling_rate), float(sensitivity))
    return _moment_bounds(sigma, sampling_rate, sensitivity)


def _moment_bounds(sigma, sampling_rate, sensitivity):
    """:func:`gaussian_moment_bounds` computed (integer orders, then fractional ones)."""
    lam, log_a = gaussian_log_moments(sigma, sampling_rate, sensitivity)
    lam_f, log_f = gaussian_fractional_log_moments(sigma, sampling_rate, sensitivity)
    return np.concatenate([lam, lam_f]), np.concatenate([log_a, log_f], -1)


@functools.lru_cache(maxsize=256)
def _scalar_moment_bounds(sigma: float, sampling_rate: float, sensitivity: float):
    """:func:`_moment_bounds` of one ``(sigma, q, Delta)``, memoised (read-only arrays)."""
    out = _moment_bounds(sigma, sampling_rate, sensitivity)
    for a in out:
        a.flags.writeable = False
    return out


def _kl_bound(lam, total):
    """``min_alpha D_alpha`` of the composition, padded up: an upper bound on its KL."""
    return np.min(total / lam, axis=-1) * (1.0 + 64.0 * _U)


@float64_kernel
def rdp_epsilon(lambdas, total_log_moments, delta):
    r"""Certified epsilon at ``delta`` from composed log-moments (RDP conversion, NumPy out).

    .. math:: \epsilon = \min_\lambda \frac{\log M(\lambda) + \log c(\lambda)
              - \log\delta}{\lambda},\qquad
              c(\lambda) = \frac{\lambda^\lambda}{(1 + \lambda)^{1 + \lambda}}

    (Canonne, Kamath & Steinke 2020, Prop. 12, at ``lambda = alpha - 1``: the formula of
    ``dp_accounting.rdp.compute_epsilon``), at ``delta (1 - MARGIN)``; ``0`` where ``delta^2
    >= 1 - e^{-min D_alpha}`` (``delta(0)`` is the total variation, at most ``sqrt(1 -
    e^{-KL})`` and ``KL <= D_alpha``; Bretagnolle & Huber 1979, as dp_accounting does).

    Args:
      lambdas: ``alpha - 1 > 0`` (last axis of ``total_log_moments``).
      total_log_moments: upper bounds on ``log E_P[e^{lambda L}] = (alpha - 1) D_alpha`` of the
        whole composition (per-use moments times their counts, summed).
      delta: target ``delta`` in ``(0, 1)`` (broadcast against the leading axes).

    Returns:
      ``epsilon``: a float for scalar input, else a NumPy array.

    Example:
      >>> import jax, numpy as np; jax.config.update("jax_enable_x64", True)
      >>> lam = np.arange(1.0, 200.0)  # Gaussian, mu = 1: log M = lambda (lambda + 1) / 2
      >>> round(rdp_epsilon(lam, lam * (lam + 1) / 2, 1e-5), 3)
      4.753
    """
    lam, total = np.asarray(lambdas, np.float64), np.asarray(total_log_moments, np.float64)
    log_delta = log_target_host(np.asarray(delta, np.float64))
    eps = tail_bounds.on_host(tail_bounds.epsilon_chernoff, total, log_delta, lam)
    zero = np.exp(2.0 * np.asarray(log_delta)) >= -np.expm1(-_kl_bound(lam, total)) * (
        1.0 + 64.0 * _U
    )
    eps = np.where(zero, 0.0, eps)
    return eps if eps.ndim else float(eps)


@float64_kernel
def rdp_log_delta(lambdas, total_log_moments, epsilon):
    """Certified ``log delta(epsilon)`` from composed log-moments (NumPy out).

    The Chernoff / RDP conversion of :mod:`.tail_bounds` (Canonne, Kamath & Steinke 2020),
    and at most the total variation bound ``sqrt(1 - e^{-min D_alpha})`` (Bretagnolle &
    Huber 1979).

    Args:
      lambdas, total_log_moments: as in :func:`rdp_epsilon`.
      epsilon: ``epsilon >= 0``.

    Returns:
      ``log delta``, a NumPy array.
    """
    lam, total = np.asarray(lambdas, np.float64), np.asarray(total_log_moments, np.float64)
    eps = np.asarray(epsilon, np.float64)
    chernoff = tail_bounds.on_host(tail_bounds.log_delta_chernoff, total, eps, lam)
    with np.errstate(divide="ignore"):
        tv = 0.5 * np.log(-np.expm1(-_kl_bound(lam, total))) * (1.0 - 64.0 * _U) + 64.0 * _U
    return np.minimum(chernoff, tv)


@float64_kernel
def gaussian_rdp_epsilon(sigma, sampling_rate, compositions, delta, sensitivity=1.0):
    r"""Certified RDP epsilon of ``T`` Poisson-subsampled Gaussian uses at ``delta`` (NumPy).

    .. math:: \epsilon = \min_\alpha \frac{T \log A_\alpha}{\alpha - 1}
              + \log\frac{\alpha - 1}{\alpha} - \frac{\log\delta + \log\alpha}{\alpha - 1}

    (Canonne, Kamath & Steinke 2020 on the moments of :func:`gaussian_moment_bounds`), at
    ``delta (1 - MARGIN)``; ``0`` where ``delta^2 >= 1 - e^{-T D_alpha}`` for some order
    (``delta(0)`` is the total variation, at most ``sqrt(1 - e^{-KL})`` and ``KL <= D_alpha``;
    Bretagnolle & Huber 1979, as dp_accounting does).  A certified upper bound, never above
    dp_accounting's RDP accountant on the same (or fewer) orders, up to rounding pads.

    Args:
      sigma: noise standard deviation(s) ``sigma > 0``.
      sampling_rate: ``q`` in ``(0, 1]``.
      compositions: ``T >= 1``.
      delta: target ``delta`` in ``(0, 1)``.
      sensitivity: l2-sensitivity ``Delta``.

    Returns:
      ``epsilon``: a float for scalar input, else a NumPy array.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(gaussian_rdp_epsilon(1.0, 0.01, 1000, 1e-5), 3)  # dp_accounting RDP: 2.101
      2.101
    """
    lam, log_a = gaussian_moment_bounds(sigma, sampling_rate, sensitivity)
    return rdp_epsilon(lam, float(compositions) * log_a, delta)


@float64_kernel
def gaussian_rdp_log_delta(sigma, sampling_rate, compositions, epsilon, sensitivity=1.0):
    """Certified ``log delta(epsilon)`` of ``T`` Poisson-subsampled Gaussian uses (NumPy out).

    The Chernoff/RDP conversion of :mod:`.tail_bounds` (Canonne, Kamath & Steinke 2020) on
    the moments ``T log A_alpha`` of :func:`gaussian_moment_bounds`, and at most the total
    variation bound ``sqrt(1 - e^{-T min D_alpha})`` (Bretagnolle & Huber 1979).

    Args:
      sigma, sampling_rate, compositions, sensitivity: as in :func:`gaussian_rdp_epsilon`.
      epsilon: ``epsilon >= 0``.

    Returns:
      ``log delta``, a NumPy array.
    """
    lam, log_a = gaussian_moment_bounds(sigma, sampling_rate, sensitivity)
    return rdp_log_delta(lam, float(compositions) * log_a, epsilon)


@float64_kernel
def gaussian_rdp_sigma(epsilon, delta, sampling_rate, compositions, sensitivity=1.0):
    """Least sigma whose RDP estimate meets ``(epsilon, delta)``, to a bracket (NumPy).

    Illinois (:func:`dpjax.numerics.illinois_host`) on ``log sigma`` within
    ``[1e-3, 1e4] Delta`` for ``F = log epsilon_RDP(sigma) - log epsilon``
    (:func:`gaussian_rdp_epsilon`), to a bracket ratio of ``1 + 1e-6`` (or 24 evaluations),
    from a bracket found
    by doubling steps around the moments accountant's estimate
    ``q sqrt(2 T log(1/delta)) Delta / epsilon``: a bracket for the engine's calibration,
    checked by the caller (the RDP delta at the returned sigma).

    Args:
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      sampling_rate, compositions, sensitivity: as in :func:`gaussian_rdp_epsilon`.

    Returns:
      The upper end of the bracket (meets the target where any sigma up to ``1e4 Delta``
      does), broadcast shape of the targets.
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    shape = epsilon.shape
    eps, dl = epsilon.ravel(), delta.ravel()
    with np.errstate(divide="ignore"):
        log_eps = np.log(eps)

    def gap(x):
        got = np.asarray(
            gaussian_rdp_epsilon(np.exp(x), sampling_rate, compositions, dl, sensitivity), float
        ).reshape(eps.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.log(got) - log_eps
        # the sign is the comparison itself (no rounding of the logs decides it)
        return np.where(got <= eps, np.minimum(f, 0.0), np.maximum(f, 1e-300))

    # a first bracket by doubling steps from the moments accountant's estimate
    # q sqrt(2 T log(1/delta)) Delta / epsilon (Abadi et al. 2016), within [1e-3, 1e4] Delta
    # (the quadrature's nodes grow as (Delta / sigma)^2: tiny sigmas are costly)
    x_min, x_max = math.log(1e-3 * sensitivity), math.log(1e4 * sensitivity)
    with np.errstate(divide="ignore"):
        start = np.log(
            float(sampling_rate) * np.sqrt(2.0 * float(compositions) * -np.log(dl)) / eps
        ) + math.log(sensitivity)
    x = np.clip(np.nan_to_num(start, nan=0.0), x_min, x_max)
    f = gap(x)
    good = np.where(f <= 0, x, x_max)
    bad = np.where(f <= 0, x_min, x)
    f_good = np.where(f <= 0, f, -np.inf)
    f_bad = np.where(f <= 0, np.inf, f)
    step = LOG_2
    for _ in range(24):
        open_good, open_bad = np.isinf(f_good) & (good > bad), np.isinf(f_bad) & (bad < good)
        todo = (open_good & (x < x_max)) | (open_bad & (x > x_min))
        if not np.any(todo):
            break
        # only the rows still missing an end move (the others are evaluated again at
        # their last point: cached moments)
        x = np.where(todo, np.clip(np.where(open_good, x + step, x - step), x_min, x_max), x)
        f = np.where(todo, gap(x), np.nan)
        new_good, new_bad = todo & (f <= 0), todo & (f > 0)
        good, f_good = np.where(new_good, x, good), np.where(new_good, f, f_good)
        bad, f_bad = np.where(new_bad, x, bad), np.where(new_bad, f, f_bad)
        step *= 2.0
    good = illinois_host(
        gap, good, bad, tol=1e-6, max_evaluations=24, f_good=f_good, f_bad=f_bad
    ).good
    return np.exp(good).reshape(shape)
