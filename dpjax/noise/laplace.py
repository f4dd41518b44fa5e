r"""Laplace noise ``Lap(0, b)`` (``b = scale``).

Density ``g(t) = exp(-|t| / b) / (2 b)``, variance ``2 b^2``; privacy loss
at shift ``d``: ``zeta_d(t) = (|t + d| - |t|) / b``, clipped to ``[-|d|/b, |d|/b]``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise._base import sample_dtype

_LOG_HALF = -0.6931471805599453


class Laplace(NamedTuple):
    """Centred Laplace noise with scale ``b`` (``scale``)."""

    scale: ArrayLike

    @property
    def variance(self) -> Array:
        return 2.0 * jnp.square(jnp.asarray(self.scale))

    def logpdf(self, x: ArrayLike) -> Array:
        return -jnp.abs(jnp.asarray(x)) / self.scale - jnp.log(2.0 * self.scale)

    def log_sf(self, x: ArrayLike) -> Array:
        """``log P(T > x)``: ``log(1/2) - x/b`` for ``x >= 0``, ``log(1 - e^{x/b}/2)`` below."""
        z = jnp.asarray(x) / self.scale
        pos = z >= 0
        zp = jnp.where(pos, z, 0.0)
        zn = jnp.where(pos, -1.0, z)
        return jnp.where(pos, _LOG_HALF - zp, jnp.log1p(-0.5 * jnp.exp(zn)))

    def sf(self, x: ArrayLike) -> Array:
        return jnp.exp(self.log_sf(x))

    def cdf(self, x: ArrayLike) -> Array:
        return jnp.exp(self.log_sf(-jnp.asarray(x)))

    def quantile(self, u: ArrayLike) -> Array:
        """``G^{-1}(u) = b log(2u)`` for ``u < 1/2``, ``-b log(2(1 - u))`` above."""
        u = jnp.asarray(u)
        low = u < 0.5
        u_lo = jnp.where(low, u, 0.25)
        u_hi = jnp.where(low, 0.75, u)
        return self.scale * jnp.where(low, jnp.log(2.0 * u_lo), -jnp.log(2.0 * (1.0 - u_hi)))

    def sample(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array:
        dtype = sample_dtype(dtype)
        return jnp.asarray(self.scale, dtype) * jax.random.laplace(key, shape, dtype)

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
        """``zeta_d(t) = (|t + d| - |t|) / b``."""
        t = jnp.asarray(t)
        return (jnp.abs(t + sensitivity) - jnp.abs(t)) / self.scale
