r"""Staircase noise (Geng & Viswanath 2016).

"The optimal noise-adding mechanism in differential privacy", IEEE Trans. IT 62(2).

The optimal epsilon-DP additive noise for one real query (Sec. V-A, Fig. 3c and
Table II of flipped-huber-mechanism).  Parameters (GV's symbols in brackets):

* ``decay`` (``epsilon``): the log-ratio between consecutive steps, ``b = e^{-decay}``;
* ``width`` (``Delta``): the period of the staircase (the sensitivity it is designed for);
* ``gamma`` (``gamma`` in ``[0, 1]``): the fraction of each period at the higher level.

Density, for ``x >= 0`` written ``x = k width + r`` with ``k`` an integer and
``0 <= r < width`` (GV eq. (11); symmetric in ``x``):

.. math:: g(x) = a(\gamma)\, b^{k}\,\bigl(\mathbf 1[r < \gamma\Delta]
          + b\,\mathbf 1[r \ge \gamma\Delta]\bigr),
          \qquad a(\gamma) = \frac{1 - b}{2\Delta(\gamma + (1-\gamma) b)}.

Each period ``[k width, (k+1) width)`` holds mass ``b^k (1 - b) / 2``, so
``P(T > k width) = b^k / 2``.  It is a scale family in ``width`` at fixed
``(decay, gamma)``.  The variance (sums ``sum_k k^j b^k`` in closed form) is

.. math:: \sigma^2 = 2a\Delta^2\Big[\gamma S_2 + \gamma^2 S_1 + \tfrac{\gamma^3}{3} S_0
          + b\big((1-\gamma) S_2 + (1-\gamma^2) S_1 + \tfrac{1-\gamma^3}{3} S_0\big)\Big],

``S_0 = 1/(1-b)``, ``S_1 = b/(1-b)^2``, ``S_2 = b(1+b)/(1-b)^3`` (all terms
positive: no cancellation).  It is minimised by (GV Sec. IV, cost ``x^2``)

.. math:: \gamma^* = -\frac{b}{1-b} + \frac{(b - 2b^2 + 2b^4 - b^5)^{1/3}}{2^{1/3}(1-b)^2},

(:func:`staircase_optimal_gamma`).  Sampling is exact inversion of ``|T|``
(:meth:`Staircase.abs_isf`; the same law as GV's mixture of Sec. III-D: the
period ``G = floor(-log U / decay)`` is geometric with ``P(G = k) = (1-b) b^k``)
from a tail-exact uniform ``U`` (:mod:`dpjax.noise._tail`), so in float32 ``G``
reaches ``129 log 2 / decay`` periods instead of ``24 log 2 / decay``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise import _shared
from dpjax.numerics.constants import LOG_2


def staircase_optimal_gamma(decay: ArrayLike) -> Array:
    r"""``gamma^*(epsilon)`` minimising the variance (GV 2016; module docstring).

    GV's closed form cancels as ``decay -> 0``.  Since
    ``b - 2b^2 + 2b^4 - b^5 = b (1 - b)^3 (1 + b)``, it equals
    ``(cbrt(b (1 + b) / 2) - b) / (1 - b)``, and with ``b = e^{-epsilon}``

    .. math:: \gamma^* = \frac{e^{-\epsilon}\,\mathrm{expm1}\big((\epsilon
              + \mathrm{log1p}(\mathrm{expm1}(\epsilon)/2)) / 3\big)}{-\mathrm{expm1}(-\epsilon)},

    which has no cancellation (``-> 1/2 - epsilon/12 + epsilon^5/12960`` as
    ``epsilon -> 0``; below ``1e-4`` that expansion is used).  From ``epsilon = 1`` on,
    the same value is taken in log space, where ``expm1(epsilon)`` would overflow (``epsilon >
    709``): with ``y = (2 epsilon + log1p(e^{-epsilon}) - log 2) / 3`` (the argument above,
    ``log1p(expm1(epsilon)/2) = epsilon + log1p(e^{-epsilon}) - log 2``),

    .. math:: \log\gamma^* = \tfrac13\big(\mathrm{log1p}(e^{-\epsilon}) - \epsilon - \log 2\big)
              + \log(-\mathrm{expm1}(-y)) - \log(-\mathrm{expm1}(-\epsilon))

    (``gamma^* ~ (e^{-epsilon} / 2)^{1/3}``).  Beyond ``epsilon ~ 2200`` that underflows
    float64; ``gamma`` is then held at the least normal float (the variance, ``~gamma^2/3``,
    is 0 in float64 either way, and any ``gamma`` in ``[0, 1]`` is ``decay``-DP).

    Args:
      decay: GV's ``epsilon > 0`` (``b = e^{-decay}``).
    """
    e = jnp.asarray(decay)
    small = e < 1e-4
    large = e >= 1.0
    es = jnp.where(small | large, 1.0, e)
    num = jnp.exp(-es) * jnp.expm1((es + jnp.log1p(0.5 * jnp.expm1(es))) / 3.0)
    g = num / (-jnp.expm1(-es))
    el = jnp.where(large, e, 1.0)
    tail = jnp.log1p(jnp.exp(-el))
    y = (2.0 * el + tail - LOG_2) / 3.0
    log_g = (tail - el - LOG_2) / 3.0 + jnp.log(-jnp.expm1(-y)) - jnp.log(-jnp.expm1(-el))
    g_large = jnp.maximum(jnp.exp(log_g), jnp.finfo(jnp.result_type(log_g)).tiny)
    return jnp.where(small, 0.5 - e / 12.0 + e**5 / 12960.0, jnp.where(large, g_large, g))


def geometric_sums(decay: ArrayLike) -> tuple[Array, Array, Array, Array, Array]:
    r"""``(b, 1 - b, S_0, S_1, S_2)`` with ``b = e^{-decay}``: the sums of the staircase.

    .. math:: S_n = \sum_{k \ge 0} k^n b^k:\quad S_0 = \frac{1}{1-b},\quad
              S_1 = \frac{b}{(1-b)^2},\quad S_2 = \frac{b(1+b)}{(1-b)^3}

    (``1 - b`` as ``-expm1(-decay)``, accurate for small ``decay``; Geng & Viswanath 2016,
    used by the 1-D variance here and the 2-D staircase of inid-noise-laplace-beats-gaussian,
    Table II).

    Args:
      decay: ``decay > 0`` (array).

    Returns:
      The five arrays, shaped like ``decay``.
    """
    e = jnp.asarray(decay)
    b = jnp.exp(-e)
    omb = -jnp.expm1(-e)
    return b, omb, 1.0 / omb, b / omb**2, b * (1.0 + b) / omb**3


def staircase_unit_variance(decay: ArrayLike, gamma: ArrayLike) -> Array:
    r"""Variance of the staircase with ``width = 1`` (GV 2016; module docstring).

    .. math:: \sigma^2 = 2a\Big[\gamma S_2 + \gamma^2 S_1 + \tfrac{\gamma^3}{3} S_0
              + b\big((1-\gamma) S_2 + (1-\gamma^2) S_1 + \tfrac{1-\gamma^3}{3} S_0\big)\Big]

    with ``a = (1 - b) / (2 (\gamma + (1 - \gamma) b))``.  Both the bracket and
    ``\gamma + (1 - \gamma) b`` are divided by ``s = max(gamma, b)`` before they are
    formed, the ratios ``gamma / s`` and ``b / s`` taken in log space (``log b =
    -decay``), so a large ``decay`` (``b`` subnormal or below the float range, where
    ``b / gamma^*`` still matters: ``gamma^{*3} ~ b / 2``) gives the variance's float64
    value (``~gamma^2/3 + b/(3 gamma)``, 0 once it underflows) instead of ``0 / 0`` or a
    value that lost ``b``.

    Args:
      decay: GV's ``epsilon > 0`` (``b = e^{-decay}``).
      gamma: the high fraction ``gamma`` in ``[0, 1]``.
    """
    g = jnp.asarray(gamma)
    b, omb, s0, s1, s2 = geometric_sums(decay)
    log_g, log_b = jnp.log(g), -jnp.asarray(decay)
    log_s = jnp.maximum(log_g, log_b)
    high, low = jnp.exp(log_g - log_s), jnp.exp(log_b - log_s)  # gamma / s, b / s in [0, 1]
    inner = high * (s2 + g * s1 + g * g * s0 / 3.0) + low * (
        (1.0 - g) * s2 + (1.0 - g * g) * s1 + (1.0 - g**3) * s0 / 3.0
    )
    return omb * inner / (high + (1.0 - g) * low)


class Staircase(NamedTuple):
    r"""Staircase noise (dpjax name ``staircase``; Geng & Viswanath 2016, GV eq. (11)).

    .. math:: g(x) = a(\gamma)\, b^{k}\,\bigl(\mathbf 1[r < \gamma\Delta]
              + b\,\mathbf 1[r \ge \gamma\Delta]\bigr),\quad |x| = k\Delta + r,
              \quad b = e^{-\epsilon}

    Attributes:
      decay: GV's ``epsilon > 0``, the log-ratio between consecutive steps.
      width: GV's ``Delta > 0``, the period.
      gamma: the fraction of each period at the higher level, in ``[0, 1]``.

    Example:
      >>> noise = Staircase(decay=1.0, width=1.0, gamma=0.5)
      >>> float(noise.sf(0.0))
      0.5
    """

    decay: ArrayLike
    width: ArrayLike
    gamma: ArrayLike

    name = "staircase"
    constraints = {"decay": "> 0", "width": "> 0", "gamma": "in [0, 1]"}

    @property
    def variance(self) -> Array:
        """``width^2 v(decay, gamma)`` (:func:`staircase_unit_variance`)."""
        return jnp.square(jnp.asarray(self.width)) * staircase_unit_variance(self.decay, self.gamma)

    def _b(self) -> Array:
        return jnp.exp(-jnp.asarray(self.decay))

    def _log_a(self) -> Array:
        """``log a(gamma)`` (the density on ``[0, gamma width)``)."""
        b = self._b()
        return (
            jnp.log(-jnp.expm1(-jnp.asarray(self.decay)))
            - jnp.log(2.0 * self.width)
            - jnp.log(self.gamma + (1.0 - self.gamma) * b)
        )

    def _split(self, ax: Array) -> tuple[Array, Array]:
        """``|x| = k width + r`` with ``0 <= r < width``."""
        k = jnp.floor(ax / self.width)
        r = jnp.clip(ax - k * self.width, 0.0, self.width)
        return k, r

    def logpdf(self, x: ArrayLike) -> Array:
        """``log g(x) = log a(gamma) - decay (k + 1[r >= gamma width])`` (GV eq. (11)).

        Args:
          x: points.
        """
        k, r = self._split(jnp.abs(jnp.asarray(x)))
        level = k + jnp.where(r >= self.gamma * self.width, 1.0, 0.0)
        return self._log_a() - self.decay * level

    def _log_half_tail(self, ax: Array) -> Array:
        """``log P(T > ax)``, ``ax >= 0``: ``-k decay + log(1/2 - a (min(r, gw) + b (r-gw)_+))``."""
        k, r = self._split(ax)
        gw = self.gamma * self.width
        mass = jnp.exp(self._log_a()) * (jnp.minimum(r, gw) + self._b() * jnp.maximum(r - gw, 0.0))
        return -k * self.decay + jnp.log(0.5 - mass)

    log_sf = _shared.log_sf
    sf = _shared.sf
    cdf = _shared.cdf

    def quantile(self, u: ArrayLike) -> Array:
        r"""Inverse of the survival function: ``k = floor(-log(2p) / decay)``, ``p = min(u, 1-u)``,
        then the offset inside period ``k`` from the mass ``1/2 - p e^{k decay}`` it must hold.

        Args:
          u: probabilities in ``(0, 1)``.
        """
        u = jnp.asarray(u)
        upper = u >= 0.5
        p = jnp.where(upper, 1.0 - u, u)
        k = jnp.floor(-jnp.log(2.0 * p) / self.decay)
        q = jnp.clip(0.5 - p * jnp.exp(k * self.decay), 0.0, None)
        a = jnp.exp(self._log_a())
        gw = self.gamma * self.width
        r = jnp.where(q <= a * gw, q / a, gw + (q - a * gw) / (a * self._b()))
        ax = k * self.width + jnp.clip(r, 0.0, self.width)
        return jnp.where(upper, 1.0, -1.0) * ax

    def abs_isf(
        self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True, u=None
    ) -> Array:
        r"""``|x|`` with ``P(|T| > |x|) = U``, in the dtype of ``log_u`` (exact inversion;
        ``deep`` unused).

        ``P(|T| > k width) = b^k``, so the period is ``k = floor(-log U / decay)``; inside
        it the fraction of the period's mass above ``|x|`` is ``U / b^k = e^t``,
        ``t = log U + k decay`` in ``(-decay, 0]``, and the mass below it is
        ``m = expm1(t) / expm1(-decay)`` of the period.  With ``s = gamma + (1 - gamma) b``
        (the period's mass in units of ``a width``) the offset is
        ``r / width = m s`` if ``m s <= gamma``, else ``gamma + (m s - gamma) / b``.

        Args:
          log_u: ``log U``.
          one_minus_u: ``1 - U`` (unused).
          deep: unused (exact inversion everywhere).
          u: ``U`` itself where the caller has it (the main path); unused here.
        """
        log_u = jnp.asarray(log_u)
        work = log_u.dtype
        decay = jnp.asarray(self.decay).astype(work)
        gamma = jnp.asarray(self.gamma).astype(work)
        b = jnp.exp(-decay)
        k = jnp.floor(-log_u / decay)
        t = jnp.clip(log_u + k * decay, -decay, 0.0)
        ms = jnp.expm1(t) / jnp.expm1(-decay) * (gamma + (1.0 - gamma) * b)
        low = ms <= gamma
        r = jnp.where(low, ms, gamma + (ms - gamma) / jnp.where(low | (b == 0), 1.0, b))
        return jnp.asarray(self.width).astype(work) * (k + jnp.clip(r, 0.0, 1.0))

    from_bits = _shared.from_bits
    sample = _shared.sample

    privacy_loss = _shared.log_density_ratio
