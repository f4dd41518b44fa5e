r"""Flipped Huber noise in DP-SGD: zCDP per coordinate (Theorem 9), Poisson-subsampled RDP.

A clipped per-example gradient ``g`` (``||g||_2 <= C`` in ``d`` coordinates) plus i.i.d.
``FH(alpha, gamma^2)`` noise per coordinate.  Theorem 9 of flipped-huber-mechanism makes
one coordinate with shift ``v`` ``(R_v(alpha) / (2 gamma^2), v^2 / (2 gamma^2))``-zCDP,
``R_v(alpha) = alpha^2 - ([alpha - v]_+)^2``; zCDP adds over the ``d`` coordinates
(Bun & Steinke 2016, Lemma 2.3) and ``v -> R_v(alpha)`` is concave and non-decreasing, so
over the l2 ball the worst shift spreads evenly (Jensen, ``mean |v_i| <= C / sqrt(d)``):

.. math:: \xi = \frac{d\, R_{C/\sqrt d}(\alpha)}{2\gamma^2},\qquad \eta = \frac{C^2}{2\gamma^2},
          \qquad \epsilon_{\text{RDP}}(a) = \xi + a\,\eta .

Poisson subsampling with rate ``q`` uses the general RDP amplification bound of Zhu &
Wang (2019, Theorem 6) at integer orders ``a``:

.. math:: e^{(a-1)\epsilon_q(a)} \le (1-q)^{a-1}(1 + (a-1) q)
          + \binom a2 q^2 (1-q)^{a-2} e^{\epsilon(2)}
          + \sum_{l=3}^{a} \binom al q^l (1-q)^{a-l}\, m_l ,

with ``m_l = max(3 e^{(l-1)\epsilon(l)}, e^{l \epsilon(l+1)})`` (the paper's term and the
variant autodp implements for general mechanisms: the larger of two valid bounds), and
never more than ``epsilon(a)`` (subsampling cannot hurt: joint quasi-convexity of the
Rényi divergence).  ``T`` steps add (``T (a-1) epsilon_q(a)``) and the Chernoff / RDP
conversion of Canonne, Kamath & Steinke (2020) gives ``epsilon(delta)``
(:func:`dpjax.accounting.pld.tail_bounds.epsilon_chernoff`).

Why not the PLD engine: a ``d``-dimensional flipped Huber mechanism under an l2 clip has
no known one-dimensional dominating pair, and the engine composes one-dimensional pairs;
this RDP route is certified (an upper bound) but looser.  Host (NumPy) code.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.rdp.subsampled_gaussian import RDP_ORDERS
from dpjax.certificate import log_target_host
from dpjax.noise.flipped_huber import standard_variance
from dpjax.numerics import (
    bisect_host,
    log_binomial_host,
    log_binomial_magnitude_host,
    logsumexp_host,
)
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U


def zcdp_parameters(alpha, gamma, dim: int, clip_norm: float = 1.0):
    r"""``(xi, eta)``-zCDP of one un-subsampled step (module docstring; Theorem 9).

    .. math:: \xi = \frac{d\,(\alpha^2 - [\alpha - C/\sqrt d]_+^2)}{2\gamma^2},\qquad
              \eta = \frac{C^2}{2\gamma^2}

    Args:
      alpha: transition ``alpha >= 0`` (array).
      gamma: scale ``gamma > 0`` (array).
      dim: the number of noised coordinates ``d``.
      clip_norm: the l2 clip norm ``C``.

    Returns:
      ``(xi, eta)``, NumPy arrays.

    Example:
      >>> [round(float(x), 6) for x in zcdp_parameters(0.0, 2.0, dim=100)]
      [0.0, 0.125]
    """
    alpha, gamma = np.asarray(alpha, np.float64), np.asarray(gamma, np.float64)
    v = clip_norm / math.sqrt(dim)
    r = alpha**2 - np.maximum(alpha - v, 0.0) ** 2
    two_g2 = 2.0 * gamma**2
    return dim * r / two_g2, clip_norm**2 / two_g2


def subsampled_log_moments(xi, eta, sampling_rate: float, orders=RDP_ORDERS):
    r"""Upper bounds on ``(a - 1) epsilon_q(a)`` of one Poisson-subsampled step (module docstring).

    Args:
      xi, eta: zCDP parameters of one step (arrays of one shape ``S``).
      sampling_rate: ``q`` in ``(0, 1]``.
      orders: integer Rényi orders ``a >= 2``.

    Returns:
      ``(lambdas, log_moments)``: ``lambdas = orders - 1`` and an array ``S + (orders,)``
      (NumPy), rounding padded up.
    """
    q = float(sampling_rate)
    xi = np.asarray(xi, np.float64)[..., None, None]
    eta = np.asarray(eta, np.float64)[..., None, None]
    a = np.asarray(orders, np.float64)
    a2 = a[:, None]
    base = ((a2 - 1.0) * (xi + a2 * eta))[..., 0]  # no amplification
    base = base * (1.0 + 64 * _U) + 64 * _U
    if q >= 1.0:
        return a - 1.0, base
    lq, l1q = math.log(q), math.log1p(-q)
    l = np.arange(int(a.max()) + 1, dtype=np.float64)[None, :]  # noqa: E741
    logc = log_binomial_host(a2, l)
    weight = logc + l * lq + np.maximum(a2 - l, 0.0) * l1q
    m_l = np.maximum(math.log(3.0) + (l - 1.0) * (xi + l * eta), l * (xi + (l + 1.0) * eta))
    terms = np.where((l >= 3) & (l <= a2), weight + m_l, -np.inf)
    first = np.broadcast_to((a2 - 1.0) * l1q + np.log1p((a2 - 1.0) * q), terms[..., :1].shape)
    second = np.log(a2 * (a2 - 1.0) / 2.0) + 2 * lq + (a2 - 2.0) * l1q + (xi + 2.0 * eta)
    allt = np.concatenate([first, np.broadcast_to(second, first.shape), terms], axis=-1)
    mag = np.abs(np.where(np.isfinite(allt), allt, 0.0)).max(axis=-1)
    mag = mag + log_binomial_magnitude_host(a)  # the log Gamma terms log C(a, l) cancels
    log_a = logsumexp_host(allt, axis=-1) + 256 * _U * (mag + 1.0) + math.log1p(1024 * _U)
    return a - 1.0, np.minimum(log_a, base)


def _epsilons(alpha, gamma, dim, clip_norm, sampling_rate, steps, delta) -> np.ndarray:
    """:func:`dp_sgd_epsilon_flipped_huber` elementwise over arrays ``alpha``, ``gamma``."""
    xi, eta = zcdp_parameters(alpha, gamma, dim, clip_norm)
    lam, log_a = subsampled_log_moments(xi, eta, sampling_rate)
    with jax.enable_x64(True):  # the float64 guard of on_host
        eps = tail_bounds.on_host(tail_bounds.epsilon_chernoff, float(steps) * log_a,
                                  float(log_target_host(delta)), lam)
    return np.where(np.isnan(eps), np.inf, eps)


def dp_sgd_epsilon_flipped_huber(alpha, gamma, dim, clip_norm, sampling_rate, steps,
                                 delta) -> float:
    """Certified epsilon at ``delta`` of ``steps`` Poisson-subsampled flipped Huber DP-SGD steps.

    The RDP accountant of the module docstring (Theorem 9 of flipped-huber-mechanism;
    Zhu & Wang 2019, Thm 6; Canonne, Kamath & Steinke 2020), at ``delta (1 - MARGIN)``.

    Args:
      alpha, gamma: the noise ``FH(alpha, gamma^2)`` per coordinate (absolute units).
      dim: the number of noised coordinates.
      clip_norm: the l2 clip norm ``C``.
      sampling_rate: ``q`` in ``(0, 1]``.
      steps: the number of steps ``T >= 1``.
      delta: the target ``delta`` in ``(0, 1)``.

    Returns:
      ``epsilon`` (a float; ``inf`` where nothing is certified).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> e = dp_sgd_epsilon_flipped_huber(0.0, 1.0, 10, 1.0, 1.0, 1, 1e-5)  # Gaussian, sigma 1
      >>> 4.0 < e < 5.5
      True
    """
    return float(_epsilons(alpha, gamma, dim, clip_norm, sampling_rate, steps, delta))


#: Grid of ``sqrt(d) alpha / gamma`` searched by :func:`calibrate_flipped_huber` (0: Gaussian).
SHAPE_GRID = np.concatenate([[0.0], np.logspace(-3.0, 1.5, 28)])


def _least_gammas(shapes, dim, clip_norm, q, steps, epsilon, delta, iterations=64):
    """Least ``gamma`` per shape (``alpha = shape gamma``) meeting the target, by geometric
    bisection over all shapes at once (:func:`dpjax.numerics.bisect_host`, to a relative
    width of 1e-8); privacy improves with ``gamma`` at fixed shape
    (``xi`` and ``eta`` non-increasing).  ``inf`` where ``gamma <= 1e8 C`` fails."""

    def ok(g):
        return _epsilons(shapes * g, g, dim, clip_norm, q, steps, delta) <= epsilon

    lo = np.full(shapes.shape, 1e-4 * clip_norm)
    hi = np.full(shapes.shape, 1e8 * clip_norm)
    feasible = ok(hi)
    hi = bisect_host(lambda g: (ok(g), None), hi, lo, iterations, geometric=True,
                           tol=1e-8).good
    return np.where(feasible, hi, np.inf)


def calibrate_flipped_huber(dim, clip_norm, sampling_rate, steps, epsilon, delta,
                            shapes=None):
    r"""Least-variance ``FH(alpha, gamma^2)`` per coordinate meeting ``(epsilon, delta)``.

    For each shape ``b = alpha / gamma`` on ``shapes`` (default :data:`SHAPE_GRID` over
    ``sqrt(d)``; ``b = 0`` is the Gaussian, which the PLD engine accounts tighter) the least
    ``gamma`` is found by bisection (privacy is monotone in ``gamma`` at fixed shape); the
    pair of least variance ``gamma^2 Var FH(b, 1)`` (eq. (11) of flipped-huber-mechanism)
    is returned, re-certified by :func:`dp_sgd_epsilon_flipped_huber`.

    Args:
      dim: noised coordinates ``d``.
      clip_norm: l2 clip ``C``.
      sampling_rate: ``q``.
      steps: ``T``.
      epsilon, delta: the target.
      shapes: the shapes ``b`` to search (default ``SHAPE_GRID / sqrt(d)``).

    Returns:
      ``(alpha, gamma, variance, epsilon_at)``.

    Raises:
      ValueError: no grid point is certified.
    """
    shapes = SHAPE_GRID / math.sqrt(dim) if shapes is None else np.asarray(shapes, np.float64)
    gammas = _least_gammas(shapes, dim, clip_norm, sampling_rate, steps, epsilon, delta)
    if not np.any(np.isfinite(gammas)):
        raise ValueError("flipped Huber: no certified noise found for this target")
    with jax.enable_x64(True):
        var = gammas**2 * np.asarray(standard_variance(jnp.asarray(shapes)), np.float64)
    i = int(np.argmin(np.where(np.isfinite(gammas), var, np.inf)))
    alpha, gamma, var = shapes[i] * gammas[i], gammas[i], var[i]
    eps_at = dp_sgd_epsilon_flipped_huber(alpha, gamma, dim, clip_norm, sampling_rate, steps, delta)
    if not eps_at <= epsilon:
        raise ValueError("flipped Huber: the calibrated noise failed its re-certification")
    return float(alpha), float(gamma), float(var), float(eps_at)
