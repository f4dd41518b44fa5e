r"""Exact privacy profile of the Gaussian mechanism (Balle & Wang 2018).

For noise ``N(0, sigma^2)`` and l2-sensitivity ``Delta_2``, with
``mu = Delta_2 / sigma`` (eq. (29) of flipped-huber-mechanism; Lemma 1 of
inid-noise-laplace-beats-gaussian; Balle & Wang 2018, Thm. 8):

.. math:: \delta(\epsilon) = Q\!\left(\frac{\epsilon}{\mu} - \frac{\mu}{2}\right)
          - e^{\epsilon}\, Q\!\left(\frac{\epsilon}{\mu} + \frac{\mu}{2}\right).

It is exact (necessary and sufficient) in any dimension, and k-fold
composition of Gaussians is a Gaussian with ``mu_total = sqrt(sum mu_i^2)``.
All kernels are float64, jit/vmap/grad-safe and evaluate in log space.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting._certified import log_target
from dpjax.numerics import (
    Q_inv,
    bisect_monotone,
    float64_kernel,
    log1mexp,
    log_hockey_stick_straddle,
    log_mills_step,
    log_Q,
)


@float64_kernel
def log_delta_gaussian(epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` of the Gaussian mechanism (see module docstring).

    Args:
      epsilon: ``epsilon >= 0``.
      sigma: noise standard deviation ``sigma > 0``.
      sensitivity: l2-sensitivity ``Delta_2 > 0``.
    """
    return log_delta_gaussian_mu(epsilon, jnp.asarray(sensitivity) / jnp.asarray(sigma))


@float64_kernel
def log_delta_gaussian_mu(epsilon: ArrayLike, mu: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` as a function of ``mu = Delta_2 / sigma`` (mu-GDP)."""
    epsilon, mu = jnp.asarray(epsilon), jnp.asarray(mu)
    a = epsilon / mu - 0.5 * mu
    # a >= 0: with b = a + mu, (b^2 - a^2)/2 = epsilon, so t = log R(b) - log R(a);
    # a < 0 <= b (epsilon < mu^2 / 2): the linear (erf) form
    pos = a >= 0
    a_pos = jnp.where(pos, a, 1.0)
    t = log_mills_step(a_pos, jnp.where(pos, mu, 0.0))
    neg_t = t < 0
    tail = jnp.where(neg_t, log_Q(a_pos) + log1mexp(jnp.where(neg_t, t, -1.0)), -jnp.inf)
    a_neg = jnp.where(pos, -1.0, a)
    straddle = log_hockey_stick_straddle(a_neg, a_neg + mu, epsilon)
    return jnp.where(pos, tail, straddle)


@float64_kernel
def delta_gaussian(epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike) -> Array:
    """``delta(epsilon)`` of the Gaussian mechanism (exact; see module docstring)."""
    return jnp.exp(log_delta_gaussian(epsilon, sigma, sensitivity))


@float64_kernel
def epsilon_gaussian(
    delta: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike, num_iterations: int = 100
) -> Array:
    r"""Least ``epsilon`` with ``delta(epsilon) <= delta`` (certified upper end).

    ``delta(eps)`` decreases in ``eps``; bisection on
    ``[0, mu Q^{-1}(delta) + mu^2 / 2]`` (at the upper end
    ``delta(eps) <= Q(eps/mu - mu/2) = delta``) returns the end where the
    profile is ``<= delta (1 - MARGIN)`` (:mod:`dpjax.accounting._certified`).  ``delta = 0`` gives ``inf``.
    """
    delta = jnp.asarray(delta)
    mu = jnp.asarray(sensitivity) / jnp.asarray(sigma)
    level = log_target(delta)
    hi = jnp.maximum(mu * Q_inv(jnp.minimum(delta, 0.5)) + 0.5 * mu * mu, 0.0) * (1 + 1e-12) + 1e-300
    res = bisect_monotone(
        lambda e: log_delta_gaussian_mu(e, mu) <= level,
        good=hi,
        bad=jnp.zeros_like(hi),
        num_iterations=num_iterations,
    )
    at_zero = log_delta_gaussian_mu(jnp.zeros_like(hi), mu) <= level
    eps = jnp.where(at_zero, 0.0, res.good)
    return jnp.where(delta > 0, eps, jnp.inf)


@float64_kernel
def rho_gaussian(sigma: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""zCDP of the Gaussian mechanism: ``rho = Delta_2^2 / (2 sigma^2)`` (Bun & Steinke 2016, Prop. 1.6)."""
    return jnp.square(jnp.asarray(sensitivity) / jnp.asarray(sigma)) / 2.0
