r"""Truncated Laplace noise (Geng, Ding, Guo & Kumar 2020).

"Tight analysis of privacy and utility tradeoff in approximate differential
privacy" (AISTATS 2020): the optimal (epsilon, delta) additive noise for one
real query in the high-privacy regime; a comparator in Sec. V-A / Fig. 3a of
flipped-huber-mechanism.  Parameters:

* ``scale`` (GDGK's ``lambda > 0``): the Laplace scale;
* ``bound`` (GDGK's ``A > 0``): the truncation point; support ``[-A, A]``.

.. math:: g(t) = \frac{e^{-|t|/\lambda}}{2\lambda(1 - e^{-A/\lambda})}\,\mathbf 1[|t| \le A].

A scale family with shape ``c = A / lambda``: ``TL(lambda, A) = lambda * TL(1, c)``;
symmetric and log-concave (as an extended-valued density).  With
``D = 1 - e^{-c}``: survival ``P(T > x) = (e^{-x/lambda} - e^{-c}) / (2D)`` for
``0 <= x <= A``; variance ``lambda^2 v(c)``,
``v(c) = (2 - e^{-c}(c^2 + 2c + 2)) / D = 2 P(3, c) / D`` (``P`` the regularised
lower incomplete gamma function, which keeps ``v(c) ~ c^2 / 3`` accurate as
``c -> 0``).  Sampling is exact inversion of the truncated exponential:
``|T| = -lambda log(e^{-c} + U D)``, ``U ~ U(0, 1]`` tail-exact
(:mod:`dpjax.noise._tail`), with an independent sign; the support is bounded,
so no tail is truncated, and samples are clipped to ``[-A, A]`` in the output dtype.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import gammainc
from jax.typing import ArrayLike

from dpjax.noise import _shared
from dpjax.noise._base import sample_dtype
from dpjax.noise._tail import (
    log1p_negative,
    random_words,
    symmetric_from_bits,
    working_dtype,
)
from dpjax.numerics import log1mexp
from dpjax.numerics.constants import LOG_2
from dpjax.numerics.lazy_scipy import special


def truncated_laplace_unit_variance(c: ArrayLike) -> Array:
    r"""``v(c) = 2 P(3, c) / (1 - e^{-c})``: the variance of ``TL(1, c)`` (-> 2 as c grows).

    ``P`` is the regularised lower incomplete gamma function (GDGK 2020; module docstring).

    Args:
      c: shape ``c = A / lambda > 0``.
    """
    c = jnp.asarray(c)
    return 2.0 * gammainc(3.0, c) / (-jnp.expm1(-c))


def truncated_laplace_unit_log_variance_host(log_c) -> np.ndarray:
    r"""``log v(c)`` of :func:`truncated_laplace_unit_variance` in NumPy, from ``log c``
    (``v(c) = 2 P(3, c) / (1 - e^{-c})``, GDGK 2020; host searches: nothing to compile).

    Args:
      log_c: ``log c`` (NumPy array).
    """
    c = np.exp(np.asarray(log_c, dtype=np.float64))
    return np.log(2.0 * special.gammainc(3.0, c) / -np.expm1(-c))


class TruncatedLaplace(NamedTuple):
    r"""Laplace noise truncated to ``[-A, A]`` (dpjax name ``truncated-laplace``; GDGK 2020).

    .. math:: g(t) = \frac{e^{-|t|/\lambda}}{2\lambda(1 - e^{-A/\lambda})}\,\mathbf 1[|t| \le A]

    Attributes:
      scale: GDGK's ``lambda > 0``, the Laplace scale.
      bound: GDGK's ``A > 0``, the truncation point.

    Example:
      >>> noise = TruncatedLaplace(scale=1.0, bound=2.0)
      >>> float(noise.sf(2.0))
      0.0
    """

    scale: ArrayLike
    bound: ArrayLike

    name = "truncated-laplace"
    constraints = {"scale": "> 0", "bound": "> 0"}

    @property
    def shape_c(self) -> Array:
        """``c = A / lambda``."""
        return jnp.asarray(self.bound) / jnp.asarray(self.scale)

    @property
    def variance(self) -> Array:
        """``lambda^2 v(c)`` (:func:`truncated_laplace_unit_variance`)."""
        return jnp.square(jnp.asarray(self.scale)) * truncated_laplace_unit_variance(self.shape_c)

    def _log_norm(self) -> Array:
        """``log(2 lambda D)``."""
        return LOG_2 + jnp.log(self.scale) + log1mexp(-self.shape_c)

    def logpdf(self, x: ArrayLike) -> Array:
        """``log g(x) = -|x| / lambda - log(2 lambda D)`` on ``[-A, A]``, ``-inf`` outside.

        Args:
          x: points.
        """
        ax = jnp.abs(jnp.asarray(x))
        return jnp.where(ax <= self.bound, -ax / self.scale - self._log_norm(), -jnp.inf)

    def _log_half_tail(self, ax: Array) -> Array:
        """``log P(T > ax)`` for ``ax >= 0`` (``-inf`` beyond ``A``)."""
        z = jnp.minimum(ax / self.scale, self.shape_c)
        inside = z < self.shape_c
        core = (
            -z
            + log1mexp(jnp.where(inside, z - self.shape_c, -1.0))
            - LOG_2
            - log1mexp(-self.shape_c)
        )
        return jnp.where(inside, core, -jnp.inf)

    log_sf = _shared.log_sf
    sf = _shared.sf
    cdf = _shared.cdf

    def _abs_quantile(self, w: Array) -> Array:
        """``-lambda log(e^{-c} + w D)``, ``w`` in ``[0, 1]``: quantile of ``|T|`` at ``1 - w``."""
        c = self.shape_c
        d = -jnp.expm1(-c)
        big_w = w > 0.5
        # near w = 1 use log1p(-(1 - w) D) to keep small |T| accurate
        near_one = -jnp.log1p(-jnp.where(big_w, 1.0 - w, 0.0) * d)
        # c - log1p(w (e^c - 1)) keeps A - |T| accurate near the bound (w -> 0)
        w_far = jnp.where(big_w, 0.5, w)
        moderate = c < 700.0
        far = jnp.where(
            moderate,
            c - jnp.log1p(w_far * jnp.expm1(jnp.where(moderate, c, 1.0))),
            -jnp.log(jnp.exp(-c) + w_far * d),
        )
        return self.scale * jnp.where(big_w, near_one, far)

    def quantile(self, u: ArrayLike) -> Array:
        r"""``G^{-1}(u) = sgn(u - 1/2) (-lambda) log(e^{-c} + 2 min(u, 1-u) D)``.

        Args:
          u: probabilities in ``(0, 1)``.
        """
        u = jnp.asarray(u)
        upper = u >= 0.5
        tail = jnp.where(upper, 1.0 - u, u)
        return jnp.where(upper, 1.0, -1.0) * self._abs_quantile(2.0 * tail)

    def abs_isf(
        self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True, u=None
    ) -> Array:
        r"""``|x| = -lambda log(e^{-c} + U D)`` with ``P(|T| > |x|) = U`` (in ``log_u``'s dtype).

        With ``v = log U + log expm1(c)``:

        .. math:: \frac{|x|}{\lambda} = \begin{cases}
                  -\mathrm{log1p}(-(1 - U) D) & U \ge 1/2 \\
                  -\log U - \log(1 - e^{-c}) - \mathrm{log1p}(e^{-v}) & v > 0 \\
                  c - \mathrm{log1p}(e^{v}) & v \le 0 \end{cases}

        (no cancellation: ``|x|`` is accurate near 0, near the bound ``A`` and for
        ``c`` up to the largest float), clipped to ``[0, A]``.

        Args:
          log_u: ``log U``.
          one_minus_u: ``1 - U``.
          deep: unused.
          u: ``U`` itself where the caller has it (the main path); unused here.
        """
        log_u, omu = jnp.asarray(log_u), jnp.asarray(one_minus_u)
        work = log_u.dtype
        lam = jnp.asarray(self.scale).astype(work)
        c = jnp.asarray(self.shape_c).astype(work)
        log1mexp_c = log1mexp(-c)  # log D
        centre = omu <= 0.5
        near_zero = -log1p_negative(-jnp.where(centre, omu, 0.0) * jnp.exp(log1mexp_c))
        lu = jnp.where(centre, -1.0, log_u)
        v = lu + c + log1mexp_c
        up = v > 0
        laplace_like = -lu - log1mexp_c - jnp.log1p(jnp.exp(-jnp.where(up, v, 0.0)))
        near_bound = c - jnp.log1p(jnp.exp(jnp.where(up, 0.0, v)))
        z = jnp.where(centre, near_zero, jnp.where(up, laplace_like, near_bound))
        return jnp.clip(lam * z, 0.0, jnp.asarray(self.bound).astype(work))

    def from_bits(self, bits: ArrayLike, dtype=None) -> Array:
        """Samples as a deterministic function of their random words (:mod:`dpjax.noise._tail`).

        ``|x|`` is clipped to the largest value of ``dtype`` that is ``<= A``, so a
        rounded sample never leaves the support ``[-A, A]``.

        Args:
          bits: the :class:`~dpjax.noise.TailWords` of the batch.
          dtype: output dtype (default: JAX's default float).
        """
        dtype = sample_dtype(dtype)
        x = symmetric_from_bits(bits, dtype, self.abs_isf)
        work = working_dtype(dtype)
        bound = jnp.asarray(self.bound).astype(work)
        top = bound.astype(dtype)
        top = jnp.where(top.astype(work) > bound, jnp.nextafter(top, jnp.zeros_like(top)), top)
        return jnp.clip(x, -top, top)

    def _sample(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array:
        """Exact inversion (module docstring), ``U`` tail-exact (:mod:`dpjax.noise._tail`), in
        ``dtype``; never outside ``[-A, A]``.  One compiled program per shape and dtype
        (:func:`dpjax.noise._shared.compiled_sampler`).

        Args:
          key: a JAX PRNG key.
          shape: the sample shape.
          dtype: output dtype (default: JAX's default float).
        """
        dtype = sample_dtype(dtype)
        return self.from_bits(random_words(key, shape, dtype), dtype)

    sample = _shared.compiled_sampler(_sample)

    privacy_loss = _shared.log_density_ratio
