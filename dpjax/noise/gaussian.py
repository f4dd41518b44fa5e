r"""Gaussian noise ``N(0, sigma^2)``.

Density ``g(t) = exp(-t^2 / (2 sigma^2)) / (sigma sqrt(2 pi))``; privacy loss
at shift ``d``: ``zeta_d(t) = (2 t d + d^2) / (2 sigma^2)`` (linear in ``t``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise._base import sample_dtype
from dpjax.numerics import Q_inv, log_Q

_HALF_LOG_2PI = 0.9189385332046727


class Gaussian(NamedTuple):
    """Centred Gaussian noise with standard deviation ``sigma``."""

    sigma: ArrayLike

    @property
    def variance(self) -> Array:
        return jnp.square(jnp.asarray(self.sigma))

    def logpdf(self, x: ArrayLike) -> Array:
        z = jnp.asarray(x) / self.sigma
        return -0.5 * z * z - jnp.log(self.sigma) - _HALF_LOG_2PI

    def log_sf(self, x: ArrayLike) -> Array:
        """``log P(T > x) = log Q(x / sigma)``."""
        return log_Q(jnp.asarray(x) / self.sigma)

    def sf(self, x: ArrayLike) -> Array:
        return jnp.exp(self.log_sf(x))

    def cdf(self, x: ArrayLike) -> Array:
        return jnp.exp(log_Q(-jnp.asarray(x) / self.sigma))

    def quantile(self, u: ArrayLike) -> Array:
        """``G^{-1}(u) = -sigma Q^{-1}(u)``."""
        return -self.sigma * Q_inv(u)

    def sample(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array:
        dtype = sample_dtype(dtype)
        return jnp.asarray(self.sigma, dtype) * jax.random.normal(key, shape, dtype)

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
        """``zeta_d(t) = log g(t) - log g(t + d) = (2 t d + d^2) / (2 sigma^2)``."""
        t, d = jnp.asarray(t), jnp.asarray(sensitivity)
        return (2.0 * t * d + d * d) / (2.0 * jnp.square(self.sigma))
