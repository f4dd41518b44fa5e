r"""Laplace noise ``Lap(0, b)`` (``b = scale``).

Density ``g(t) = exp(-|t| / b) / (2 b)``, variance ``2 b^2``; privacy loss
at shift ``d``: ``zeta_d(t) = (|t + d| - |t|) / b``, clipped to ``[-|d|/b, |d|/b]``
(App. F(b) of flipped-huber-mechanism), with a closed-form inverse.

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

from dpjax.noise import _shared
from dpjax.numerics.constants import LOG_HALF

#: Stand-in for ``+-infinity`` returned by the loss inverse beyond the loss range.
_BIG = 1e300


class Laplace(NamedTuple):
    r"""Centred Laplace noise with scale ``b`` (dpjax name ``laplace``).

    .. math:: g(t) = \frac{1}{2b} e^{-|t|/b}

    Attributes:
      scale: the scale ``b > 0``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> noise = Laplace(scale=1.0)
      >>> float(noise.variance)
      2.0
    """

    scale: ArrayLike

    name = "laplace"
    constraints = {"scale": "> 0"}

    from_scale = classmethod(_shared.scale_only)

    @property
    def variance(self) -> Array:
        """``2 b^2``."""
        return 2.0 * jnp.square(jnp.asarray(self.scale))

    def logpdf(self, x: ArrayLike) -> Array:
        """``log g(x) = -|x| / b - log(2 b)``.

        Args:
          x: points.
        """
        return -jnp.abs(jnp.asarray(x)) / self.scale - jnp.log(2.0 * self.scale)

    def log_sf(self, x: ArrayLike) -> Array:
        """``log P(T > x)``: ``log(1/2) - x/b`` for ``x >= 0``, ``log(1 - e^{x/b}/2)`` below.

        Args:
          x: points.
        """
        z = jnp.asarray(x) / self.scale
        pos = z >= 0
        zp = jnp.where(pos, z, 0.0)
        zn = jnp.where(pos, -1.0, z)
        return jnp.where(pos, LOG_HALF - zp, jnp.log1p(-0.5 * jnp.exp(zn)))

    sf = _shared.sf
    cdf = _shared.cdf

    def quantile(self, u: ArrayLike) -> Array:
        """``G^{-1}(u) = b log(2u)`` for ``u < 1/2``, ``-b log(2(1 - u))`` above.

        Args:
          u: probabilities in ``(0, 1)``.
        """
        u = jnp.asarray(u)
        low = u < 0.5
        u_lo = jnp.where(low, u, 0.25)
        u_hi = jnp.where(low, 0.75, u)
        return self.scale * jnp.where(low, jnp.log(2.0 * u_lo), -jnp.log(2.0 * (1.0 - u_hi)))

    def abs_isf(
        self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True, u=None
    ) -> Array:
        """``|x| = -b log U`` with ``P(|T| > |x|) = U``, in the dtype of ``log_u``.

        Args:
          log_u: ``log U``.
          one_minus_u: ``1 - U`` (unused).
          deep: unused (one formula is accurate everywhere).
          u: ``U`` itself where the caller has it (the main path); unused here.
        """
        log_u = jnp.asarray(log_u)
        return -jnp.asarray(self.scale).astype(log_u.dtype) * log_u

    from_bits = _shared.from_bits
    sample = _shared.sample

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
        """``zeta_d(t) = (|t + d| - |t|) / b`` (Sec. II-C of flipped-huber-mechanism).

        Args:
          t: points.
          sensitivity: the shift ``d``.
        """
        t = jnp.asarray(t)
        return (jnp.abs(t + sensitivity) - jnp.abs(t)) / self.scale

    def privacy_loss_inverse(self, epsilon: ArrayLike, sensitivity: ArrayLike) -> Array:
        r"""Right-continuous ``sup{t : zeta_d(t) <= epsilon}`` for ``d > 0``.

        .. math:: t(\epsilon) = \begin{cases} +\infty & \epsilon \ge d/b \\
                  (b\epsilon - d)/2 & -d/b \le \epsilon < d/b \\
                  -\infty & \epsilon < -d/b \end{cases}

        (``+-infinity`` returned as ``+-1e300``).

        Args:
          epsilon: loss levels.
          sensitivity: the shift ``d > 0``.
        """
        b, d = jnp.asarray(self.scale), sensitivity
        t = 0.5 * (b * epsilon - d)
        return jnp.where(epsilon >= d / b, _BIG, jnp.where(epsilon < -d / b, -_BIG, t))
