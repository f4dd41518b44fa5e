r"""Pure JAX kernels of inid-noise-laplace-beats-gaussian (no validation, no I/O).

All functions are shape-polymorphic in the profile (last axis = coordinates),
jit/vmap-safe, and handle zero-sensitivity coordinates (``lambda_i = 0``:
scale 0, no noise, no privacy cost).  Symbols: ``lam`` = lambda (profile),
``mu`` = mu0 (GDP parameter of P2), ``budget`` = the Laplace l1 budget
(``epsilon``, or ``epsilon - log(1 - delta)`` for Corollary 6), ``p`` = error
power, ``w`` = error weights.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.scipy.special import gammaln
from jax.typing import ArrayLike

from dpjax.numerics import float64_kernel, log1mexp


def gaussian_abs_moment(p: ArrayLike) -> Array:
    r"""``E|Z|^p = sqrt(2^p / pi) Gamma((p + 1) / 2)`` for ``Z ~ N(0, 1)`` (proof of Theorem 4).

    Args:
      p: the error power ``p > 0``.

    Returns:
      ``E|Z|^p``.
    """
    p = jnp.asarray(p)
    return jnp.exp(0.5 * p * jnp.log(2.0) - 0.5 * jnp.log(jnp.pi) + gammaln(0.5 * (p + 1.0)))


def laplace_abs_moment(p: ArrayLike) -> Array:
    r"""``E|T|^p = Gamma(p + 1)`` for ``T ~ Lap(0, 1)`` (proof of Theorem 5).

    Args:
      p: the error power ``p > 0``.

    Returns:
      ``E|T|^p``.
    """
    return jnp.exp(gammaln(jnp.asarray(p) + 1.0))


def _logs(lam: Array, w: Array) -> tuple[Array, Array, Array]:
    """``(lambda > 0, log lambda (0 where lambda = 0), log w)``, ``w`` broadcast to ``lambda``."""
    pos = lam > 0
    return pos, jnp.log(jnp.where(pos, lam, 1.0)), jnp.log(jnp.broadcast_to(w, lam.shape))


def _power_scales(lam, bound, p, w, k: float) -> Array:
    r"""Least ``sum_i w_i s_i^p`` subject to ``sum_i lambda_i^k / s_i^k <= bound^k``.

    .. math:: s_i = \left(\frac{\lambda_i^k}{w_i}\right)^{\frac{1}{p+k}}
              \frac{S^{1/k}}{\text{bound}}, \qquad
              S = \sum_j \lambda_j^{\frac{kp}{p+k}} w_j^{\frac{k}{p+k}}

    (``s_i = 0`` where ``lambda_i = 0``), in logs: ``k = 2`` is :func:`gaussian_scales`
    (``bound = mu``), ``k = 1`` :func:`laplace_scales` (``bound`` = the l1 budget).

    Args:
      lam: the profile ``lambda`` (last axis = coordinates).
      bound: ``mu`` or the budget (one per profile).
      p: the error power ``p > 0``.
      w: error weights ``w_i > 0``.
      k: ``2.0`` or ``1.0``.
    """
    lam, bound, p, w = (jnp.asarray(v) for v in (lam, bound, p, w))
    pos, log_lam, log_w = _logs(lam, w)
    terms = jnp.where(pos, jnp.exp((k * p * log_lam + k * log_w) / (p + k)), 0.0)
    s = jnp.sum(terms, axis=-1, keepdims=True)
    root = jnp.sqrt(s) if k == 2.0 else s
    scale = jnp.exp((k * log_lam - log_w) / (p + k)) * root / jnp.expand_dims(bound, -1)
    return jnp.where(pos, scale, 0.0)


@float64_kernel
def gaussian_scales(lam: ArrayLike, mu: ArrayLike, p: ArrayLike = 2.0, w: ArrayLike = 1.0) -> Array:
    r"""Optimal i.n.i.d. Gaussian standard deviations for the weighted ``l_p^p`` error.

    Minimises ``sum_i w_i E|T_i|^p`` subject to ``sum_i lambda_i^2 / sigma_i^2 <= mu^2``
    (problem (P3), generalised in the proof of Theorem 4):

    .. math:: \sigma_i = \left(\frac{\lambda_i^2}{w_i}\right)^{\frac{1}{p+2}}
              \frac{\sqrt{S}}{\mu}, \qquad
              S = \sum_j \lambda_j^{\frac{2p}{p+2}} w_j^{\frac{2}{p+2}} ,

    eq. (9) for ``w = 1`` and Theorem 4 (``sigma_i^2 = lambda_i ||lambda||_1 / mu^2``)
    for ``p = 2``.  Weights: Remark 4 (``w = alpha^2`` is the paper's weighted MSE
    ``sum alpha_i^2 E T_i^2``; see :func:`dpjax.inid.gaussian_design`).

    Args:
      lam: the profile ``lambda`` (last axis = coordinates; zeros get scale 0).
      mu: the GDP parameter ``mu`` (``mu0`` of (P2)).
      p: the error power ``p > 0``.
      w: error weights ``w_i > 0``.

    Returns:
      ``sigma``, shaped like ``lam``.
    """
    return _power_scales(lam, mu, p, w, 2.0)


@float64_kernel
def laplace_scales(
    lam: ArrayLike, budget: ArrayLike, p: ArrayLike = 2.0, w: ArrayLike = 1.0
) -> Array:
    r"""Optimal i.n.i.d. Laplace scales for the weighted ``l_p^p`` error.

    Minimises ``sum_i w_i E|T_i|^p`` subject to ``sum_i lambda_i / b_i <= budget``
    (problem (P4), generalised in the proof of Theorem 5):

    .. math:: b_i = \left(\frac{\lambda_i}{w_i}\right)^{\frac{1}{p+1}}
              \frac{S}{\text{budget}}, \qquad
              S = \sum_j \lambda_j^{\frac{p}{p+1}} w_j^{\frac{1}{p+1}} ,

    eq. (12) for ``w = 1``, Theorem 5 (``b_i = lambda_i^{1/3} ||lambda^{2/3}||_1 / eps``)
    for ``p = 2``; with ``budget = epsilon - log(1 - delta)`` Corollary 6.

    Args:
      lam, p, w: as in :func:`gaussian_scales`.
      budget: the l1 loss budget.

    Returns:
      ``b``, shaped like ``lam``.
    """
    return _power_scales(lam, budget, p, w, 1.0)


@float64_kernel
def gaussian_mu_of(lam: ArrayLike, sigma: ArrayLike) -> Array:
    r"""Lemma 3: ``mu = sqrt(sum_i lambda_i^2 / sigma_i^2)`` (zero-sensitivity terms are 0).

    Args:
      lam: the profile ``lambda`` (last axis = coordinates).
      sigma: the scales ``sigma``.

    Returns:
      ``mu`` (the last axis reduced).
    """
    lam, sigma = jnp.asarray(lam), jnp.asarray(sigma)
    pos = lam > 0
    ratio = jnp.where(pos, lam / jnp.where(pos, sigma, 1.0), 0.0)
    return jnp.sqrt(jnp.sum(ratio * ratio, axis=-1))


@float64_kernel
def laplace_loss_of(lam: ArrayLike, b: ArrayLike) -> Array:
    r"""Maximal privacy loss of i.n.i.d. Laplace: ``sum_i lambda_i / b_i`` (proof of Theorem 5).

    Args:
      lam: the profile ``lambda`` (last axis = coordinates).
      b: the scales ``b``.

    Returns:
      The loss (the last axis reduced).
    """
    lam, b = jnp.asarray(lam), jnp.asarray(b)
    pos = lam > 0
    return jnp.sum(jnp.where(pos, lam / jnp.where(pos, b, 1.0), 0.0), axis=-1)


@float64_kernel
def log_delta_laplace_corollary6(epsilon: ArrayLike, max_loss: ArrayLike) -> Array:
    r"""``log`` of the Corollary 6 bound ``[1 - exp(epsilon - sum lambda_i / b_i)]_+``.

    An upper bound on the i.n.i.d. Laplace profile ``delta(epsilon)`` (proof of
    Corollary 6: the privacy loss never exceeds ``L = sum lambda_i / b_i``).
    ``-inf`` when ``L <= epsilon`` (pure DP).

    Args:
      epsilon: ``epsilon >= 0``.
      max_loss: the maximal loss ``L``.

    Returns:
      ``log [1 - e^{epsilon - L}]_+``.
    """
    x = jnp.asarray(epsilon) - jnp.asarray(max_loss)
    neg = x < 0
    return jnp.where(neg, log1mexp(jnp.where(neg, x, -1.0)), -jnp.inf)


def expected_error(scales: ArrayLike, moment: ArrayLike, p: ArrayLike, w: ArrayLike = 1.0) -> Array:
    r"""``E sum_i w_i |T_i|^p = m_p sum_i w_i s_i^p`` for a scale family with ``E|T/s|^p = m_p``.

    The weighted ``l_p^p`` error of Remark 4 of inid-noise-laplace-beats-gaussian.

    Args:
      scales: the scales ``s`` (last axis = coordinates).
      moment: ``m_p`` (:func:`gaussian_abs_moment`, :func:`laplace_abs_moment`).
      p: the error power.
      w: error weights.

    Returns:
      The expected error (the last axis reduced).
    """
    scales = jnp.asarray(scales)
    return jnp.asarray(moment) * jnp.sum(jnp.asarray(w) * scales ** jnp.asarray(p), axis=-1)
