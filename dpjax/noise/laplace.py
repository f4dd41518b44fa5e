r"""Laplace noise ``Lap(0, b)`` (``b = scale``).

Density ``g(t) = exp(-|t| / b) / (2 b)``, variance ``2 b^2``; privacy loss
at shift ``d``: ``zeta_d(t) = (|t + d| - |t|) / b``, clipped to ``[-|d|/b, |d|/b]``.

Sampling is inversion of the two-sided tail from a tail-exact uniform ``U``
(:mod:`dpjax.noise._tail`): ``|T| = -b log U``, with ``log U`` resolved far below
the float's resolution, so float32 samples reach ``129 log 2 ~ 89.4`` scales
(:func:`dpjax.noise.tail_floor`) instead of stopping at ``24 log 2``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise._tail import symmetric_from_bits, symmetric_sample

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

    def abs_isf(self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True) -> Array:
        """``|x| = -b log U`` with ``P(|T| > |x|) = U`` (``1 - U`` and ``deep`` unused)."""
        log_u = jnp.asarray(log_u)
        return -jnp.asarray(self.scale).astype(log_u.dtype) * log_u

    def from_bits(self, bits: ArrayLike, dtype=None) -> Array:
        """Samples as a deterministic function of their random words (:mod:`dpjax.noise._tail`)."""
        return symmetric_from_bits(bits, dtype, self.abs_isf)

    def sample(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array:
        """``Lap(0, b)`` draws in ``dtype``, tails exact down to ``tail_floor(dtype)``."""
        return symmetric_sample(key, shape, dtype, self.abs_isf)

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
        """``zeta_d(t) = (|t + d| - |t|) / b``."""
        t = jnp.asarray(t)
        return (jnp.abs(t + sensitivity) - jnp.abs(t)) / self.scale
