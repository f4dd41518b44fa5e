r"""Gaussian noise ``N(0, sigma^2)``.

Density ``g(t) = exp(-t^2 / (2 sigma^2)) / (sigma sqrt(2 pi))``; privacy loss
at shift ``d``: ``zeta_d(t) = (2 t d + d^2) / (2 sigma^2)`` (linear in ``t``), so its
inverse and its tail point are closed forms.

Sampling is inversion of the two-sided tail from a tail-exact uniform ``U``
(:mod:`dpjax.noise._tail`): ``|T| / sigma = Q^{-1}(U / 2)``, evaluated as
``sqrt(2) erfinv(1 - U)`` for ``U >= 1/2`` and as ``Q^{-1}(U / 2)`` below
(``ndtri`` on the main path, the Newton-polished log-space
:func:`dpjax.numerics.log_Q_inv` for deep draws): relative error below 3
machine epsilons in float32 and float64 (tested against mpmath),
so float32 samples reach ``|T| = Q^{-1}(2^-130) ~ 13.2 sigma``
(:func:`dpjax.noise.tail_floor`) instead of stopping at 5.4 sigma.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array
from jax.scipy.special import erfinv
from jax.typing import ArrayLike

from dpjax.noise import _shared
from dpjax.noise._tail import erfinv_from_w, log_q_inv
from dpjax.numerics import Q_inv, log_Q, log_Q_inv, log_Q_inv_host
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2

_SQRT_2 = 1.4142135623730951


class Gaussian(NamedTuple):
    r"""Centred Gaussian noise with standard deviation ``sigma`` (dpjax name ``gaussian``).

    .. math:: g(t) = \frac{1}{\sigma\sqrt{2\pi}} e^{-t^2 / (2\sigma^2)}

    Attributes:
      sigma: standard deviation ``sigma > 0``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> x = Gaussian(sigma=2.0).sample(jax.random.key(0), (3,), dtype=jnp.float32)
      >>> x.shape, x.dtype
      ((3,), dtype('float32'))
    """

    sigma: ArrayLike

    name = "gaussian"
    constraints = {"sigma": "> 0"}

    from_scale = classmethod(_shared.scale_only)

    @property
    def variance(self) -> Array:
        """``sigma^2``."""
        return jnp.square(jnp.asarray(self.sigma))

    def logpdf(self, x: ArrayLike) -> Array:
        """``log g(x) = -x^2 / (2 sigma^2) - log sigma - log(2 pi) / 2``.

        Args:
          x: points.
        """
        z = jnp.asarray(x) / self.sigma
        return -0.5 * z * z - jnp.log(self.sigma) - HALF_LOG_2PI

    def log_sf(self, x: ArrayLike) -> Array:
        """``log P(T > x) = log Q(x / sigma)``.

        Args:
          x: points.
        """
        return log_Q(jnp.asarray(x) / self.sigma)

    sf = _shared.sf
    cdf = _shared.cdf

    def quantile(self, u: ArrayLike) -> Array:
        """``G^{-1}(u) = -sigma Q^{-1}(u)``.

        Args:
          u: probabilities in ``(0, 1)``.
        """
        return -self.sigma * Q_inv(u)

    def abs_isf(
        self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True, u=None
    ) -> Array:
        r"""``|x|`` with ``P(|T| > |x|) = U``, from ``log U`` and ``1 - U`` (in their dtype).

        .. math:: |x| / \sigma = \begin{cases} \sqrt2\,\mathrm{erfinv}(1 - U) & U \ge 1/2 \\
                  Q^{-1}(U/2) \text{ from } \log U - \log 2 & U < 1/2 \end{cases}

        On the float32 main path, ``sqrt2 erfinv(1 - U)`` for every ``U`` with
        ``w = -log(U (2 - U))`` (:func:`dpjax.noise._tail.erfinv_from_w`): from ``U`` itself
        when given (one ``log``, as ``jax.random.normal``), else as ``-(log U + log1p(1 - U))``.

        Args:
          log_u: ``log U``.
          one_minus_u: ``1 - U``.
          deep: ``False`` promises ``U >= 2^-12`` (``ndtri`` suffices: :func:`.log_q_inv`).
          u: ``U`` itself where the caller has it (the main path: a normal float).
        """
        log_u, omu = jnp.asarray(log_u), jnp.asarray(one_minus_u)
        sigma = jnp.asarray(self.sigma).astype(log_u.dtype)
        if not deep and log_u.dtype == jnp.float32:  # the main path: jax.random.normal's cost
            if u is None:
                w = -(log_u + jnp.log1p(omu))  # -log(1 - (1 - U)^2) = -log(U (2 - U)), exact
            else:
                u = jnp.asarray(u)
                w = -jnp.log(u * (2.0 - u))  # U >= 2^-9 a normal float: a few ulps
            return sigma * (_SQRT_2 * erfinv_from_w(omu, w))
        centre = omu <= 0.5
        body = _SQRT_2 * erfinv(jnp.where(centre, omu, 0.5))
        tail = log_q_inv(jnp.where(centre, -1.0, log_u) - LOG_2, deep)
        return sigma * jnp.where(centre, body, tail)

    from_bits = _shared.from_bits
    sample = _shared.sample

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
        """``zeta_d(t) = log g(t) - log g(t + d) = (2 t d + d^2) / (2 sigma^2)`` (Sec. II-C).

        Args:
          t: points.
          sensitivity: the shift ``d``.
        """
        t, d = jnp.asarray(t), jnp.asarray(sensitivity)
        return (2.0 * t * d + d * d) / (2.0 * jnp.square(self.sigma))

    def privacy_loss_inverse(self, epsilon: ArrayLike, sensitivity: ArrayLike) -> Array:
        r"""The ``t`` with ``zeta_d(t) = epsilon``: ``t = epsilon sigma^2 / d - d / 2``.

        Args:
          epsilon: loss levels.
          sensitivity: the shift ``d > 0``.
        """
        s2 = jnp.square(jnp.asarray(self.sigma))
        return epsilon * s2 / sensitivity - 0.5 * sensitivity

    def tail_point(self, tail: ArrayLike) -> Array:
        r"""``t = sigma Q^{-1}(tail)``: ``log P(T > t) = log(tail)``.

        A Python (or NumPy) float takes the host :func:`dpjax.numerics.log_Q_inv_host`
        (nothing to compile, no SciPy to import); a traced ``tail`` (the
        tilted engine passes its tail level as data, one compiled program for every level)
        the Newton-polished :func:`dpjax.numerics.log_Q_inv`.  Either is only a placement
        of the grid's ends: the mass beyond them is evaluated exactly and sent to the ends.

        Args:
          tail: the probability left above ``t`` (e.g. ``1e-40``; a float or a traced scalar).
        """
        if isinstance(tail, jax.core.Tracer):
            return jnp.asarray(self.sigma) * log_Q_inv(jnp.log(tail))
        return jnp.asarray(self.sigma) * jnp.asarray(float(log_Q_inv_host(math.log(tail))))
