r"""Offset Symmetric Gaussian Tails (OSGT) noise ``O(vartheta, rho^2)``.

Sadeghi & Korki 2022 ("Offset-symmetric Gaussians for differential privacy");
App. F(c) of flipped-huber-mechanism.  Parameters (the paper's symbols):

* ``vartheta`` (``\vartheta >= 0``): the offset; the density is a
  ``N(-vartheta, rho^2)`` density folded onto ``|t|``;
* ``rho`` (``\varrho > 0``): the scale.

.. math:: g(t) = \frac{1}{2 Q(k)\,\rho}\,\phi\!\left(\frac{|t| + \vartheta}{\rho}\right),
          \qquad k = \vartheta / \rho,

i.e. ``g`` is proportional to the product of a ``N(0, rho^2)`` and a Laplace
``L(0, rho^2 / vartheta)`` density (App. E-B).  ``|T|`` is ``N(-vartheta, rho^2)``
truncated to ``[0, inf)``, so with ``Z`` standard normal conditioned on ``Z > k``,
``|T| = rho (Z - k)``.  OSGT is a scale family with shape ``k``:
``O(vartheta, rho^2) = rho * O(k, 1)``; it is symmetric and log-concave.

Survival (``x >= 0``): ``P(T > x) = Q(k + x/rho) / (2 Q(k))``, evaluated as
``exp(L(x/rho)) / 2`` with
``L(h) = log Q(k + h) - log Q(k) = -h (k + h/2) + log R(k + h) - log R(k)``
(``R`` the Mills ratio; :func:`dpjax.numerics.log_mills_step`), which stays
accurate for the large ``k`` (up to 1e4) the calibration explores.

Variance: ``rho^2 (1 + k^2 - k phi(k) / Q(k))`` (= ``rho^2 E[(Z - k)^2 | Z > k]``).
That closed form cancels catastrophically for large ``k`` (``~2 / k^2`` left of
``1 + k^2``), so for ``k >= 3`` it is evaluated as the ratio of the integrals
``int s^n e^{-s} e^{-s^2 / (2 k^2)} ds`` (``n = 2, 0``; ``s = k (Z - k)``) by
32-point Gauss-Laguerre quadrature: ``v(k) = k^{-2} I_2 / I_0`` (relative
error below 1e-13 against 50-digit mpmath for ``k`` in ``[3, 1e4]``).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise import _shared
from dpjax.numerics import log_mills, log_mills_step, log_Q, log_Q_inv
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2
from dpjax.numerics.lazy_scipy import special

K_SERIES = 3.0


@functools.lru_cache(maxsize=1)
def laguerre32() -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.laguerre.laggauss(32)


def osgt_unit_variance(k: ArrayLike) -> Array:
    r"""``v(k) = E[(Z - k)^2 | Z > k] = 1 + k^2 - k / R(k)``: the variance of ``O(k, 1)``.

    Stable for every ``k >= 0`` (see module docstring): direct form below
    ``k = 3``, Gauss-Laguerre ratio of integrals above.  ``v(0) = 1``,
    ``v(k) ~ 2 / k^2`` as ``k -> inf`` (App. F(c) of flipped-huber-mechanism).

    Args:
      k: shape ``k = vartheta / rho >= 0``.
    """
    k = jnp.asarray(k)
    small = k < K_SERIES
    ks = jnp.where(small, k, 1.0)
    direct = 1.0 + ks * ks - ks * jnp.exp(-log_mills(ks))
    kl = jnp.where(small, K_SERIES, k)
    s, w = (jnp.asarray(a, kl.dtype) for a in laguerre32())
    damp = jnp.exp(-jnp.square(s) / (2.0 * jnp.square(kl[..., None])))
    i0 = jnp.sum(w * damp, axis=-1)
    i2 = jnp.sum(w * s * s * damp, axis=-1)
    big = i2 / i0 / jnp.square(kl)
    return jnp.where(small, direct, big)


def osgt_unit_variance_host(k) -> np.ndarray:
    r""":func:`osgt_unit_variance` in NumPy (App. F(c) of flipped-huber-mechanism; host
    searches: nothing to compile); the same two branches, ``1 + k^2 - k / R(k)`` below
    ``k = 3`` (``R`` through :func:`scipy.special.log_ndtr`), the Gauss-Laguerre ratio
    ``k^{-2} I_2 / I_0`` above.

    Args:
      k: shape ``k >= 0`` (NumPy array).
    """
    k = np.asarray(k, dtype=np.float64)
    small = k < K_SERIES
    ks = np.where(small, k, 1.0)
    direct = 1.0 + ks * ks - ks * np.exp(-(special.log_ndtr(-ks) + 0.5 * ks * ks + HALF_LOG_2PI))
    kl = np.where(small, K_SERIES, k)
    s, w = laguerre32()
    damp = np.exp(-np.square(s) / (2.0 * np.square(kl[..., None])))
    return np.where(small, direct, np.sum(w * s * s * damp, -1) / np.sum(w * damp, -1) / kl**2)


def osgt_log_tail_ratio(k: ArrayLike, h: ArrayLike) -> Array:
    r"""``L(h) = log Q(k + h) - log Q(k)`` for ``k, h >= 0`` (``<= 0``), without cancellation.

    .. math:: L(h) = -h\,(k + h/2) + \log R(k + h) - \log R(k).

    (``P(|T| > rho h) = exp(L(h))`` for ``T ~ O(k rho, rho^2)``.)

    Args:
      k: shape ``k = vartheta / rho >= 0``.
      h: distance ``|t| / rho >= 0``.
    """
    k, h = jnp.asarray(k), jnp.asarray(h)
    return -h * (k + 0.5 * h) + log_mills_step(k, h)


@functools.partial(jax.jit, static_argnames="num_newton")  # eagerly: a new loop at each call
def osgt_unit_tail_inverse(k: ArrayLike, log_p: ArrayLike, num_newton: int = 4) -> Array:
    r"""The ``h >= 0`` with ``L(h) = log_p`` (``log_p <= 0``): the quantile of ``|O(k, 1)|``.

    Starts from ``Q^{-1}(p Q(k)) - k`` and polishes by Newton steps on
    ``L`` (``L'(h) = -1 / R(k + h)``), so ``h`` is accurate in relative terms
    even where it is much smaller than ``k``.

    Args:
      k: shape ``k = vartheta / rho >= 0``.
      log_p: ``log p <= 0``, the tail probability of ``|T|``.
      num_newton: number of Newton steps (static).
    """
    k, log_p = jnp.asarray(k), jnp.asarray(log_p)
    h = jnp.maximum(log_Q_inv(log_p + log_Q(k)) - k, 0.0)
    finite = jnp.isfinite(log_p)
    lp = jnp.where(finite, log_p, -1.0)

    def newton(_, h):
        step = jnp.exp(log_mills(k + h)) * (osgt_log_tail_ratio(k, h) - lp)
        return jnp.maximum(jnp.where(jnp.isfinite(step), h + step, h), 0.0)

    h = jax.lax.fori_loop(0, num_newton, newton, jnp.where(finite, h, 0.0))
    return jnp.where(finite, h, jnp.inf)


class OSGT(NamedTuple):
    r"""OSGT noise ``O(vartheta, rho^2)`` (dpjax name ``osgt``; see the module docstring).

    .. math:: g(t) = \frac{1}{2 Q(k)\,\rho}\,\phi\!\left(\frac{|t| + \vartheta}{\rho}\right),
              \qquad k = \vartheta / \rho

    (App. F(c) of flipped-huber-mechanism; Sadeghi & Korki 2022).

    Attributes:
      vartheta: offset ``vartheta >= 0``.
      rho: scale ``rho > 0``.

    Example:
      >>> noise = OSGT(vartheta=0.0, rho=2.0)  # vartheta = 0: the Gaussian N(0, rho^2)
      >>> round(float(noise.variance), 12)
      4.0
    """

    vartheta: ArrayLike
    rho: ArrayLike

    name = "osgt"
    constraints = {"vartheta": ">= 0", "rho": "> 0"}

    @classmethod
    def from_scale(cls, scale: ArrayLike, shape: ArrayLike) -> OSGT:
        """``O(vartheta = shape * scale, rho = scale)``: the PLD engine's ``noise_fn``.

        Args:
          scale: ``rho``.
          shape: ``k = vartheta / rho``.
        """
        return cls(shape * scale, scale)

    @property
    def shape_k(self) -> Array:
        """``k = vartheta / rho``."""
        return jnp.asarray(self.vartheta) / jnp.asarray(self.rho)

    @property
    def variance(self) -> Array:
        """``rho^2 v(k)`` (:func:`osgt_unit_variance`)."""
        return jnp.square(jnp.asarray(self.rho)) * osgt_unit_variance(self.shape_k)

    def logpdf(self, x: ArrayLike) -> Array:
        r"""``log g(x) = -(|x| + vartheta)^2 / (2 rho^2) - log(2 rho sqrt(2 pi) Q(k))``.

        Args:
          x: points.
        """
        z = (jnp.abs(jnp.asarray(x)) + self.vartheta) / self.rho
        return -0.5 * z * z - HALF_LOG_2PI - jnp.log(self.rho) - LOG_2 - log_Q(self.shape_k)

    def _log_half_tail(self, ax: Array) -> Array:
        """``log P(T > ax)`` for ``ax >= 0``: ``L(ax / rho) - log 2`` (used by ``log_sf``)."""
        return osgt_log_tail_ratio(self.shape_k, ax / self.rho) - LOG_2

    log_sf = _shared.log_sf
    sf = _shared.sf
    cdf = _shared.cdf

    def quantile(self, u: ArrayLike) -> Array:
        r"""``G^{-1}(u) = sgn(u - 1/2) rho h(k, log(2 min(u, 1 - u)))`` (``h``: tail inverse).

        Args:
          u: probabilities in ``(0, 1)``.
        """
        u = jnp.asarray(u)
        upper = u >= 0.5
        tail = jnp.where(upper, 1.0 - u, u)
        h = osgt_unit_tail_inverse(self.shape_k, jnp.log(2.0 * tail))
        return jnp.where(upper, 1.0, -1.0) * self.rho * h

    def abs_isf(
        self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True, u=None
    ) -> Array:
        r"""``|x| = rho h(k, log U)`` with ``P(|T| > |x|) = U`` (``L(h) = log U``).

        Computed in the dtype of ``log_u`` (``log U = log1p(-(1 - U))`` keeps small ``h``
        accurate).

        Args:
          log_u: ``log U``.
          one_minus_u: ``1 - U`` (unused).
          deep: unused (one formula is accurate everywhere).
          u: ``U`` itself where the caller has it (the main path); unused here.
        """
        log_u = jnp.asarray(log_u)
        work = log_u.dtype
        h = osgt_unit_tail_inverse(jnp.asarray(self.shape_k).astype(work), log_u)
        return jnp.asarray(self.rho).astype(work) * h

    from_bits = _shared.from_bits
    sample = _shared.sample

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
        r"""``zeta_d(t) = ((|t + d| + vartheta)^2 - (|t| + vartheta)^2) / (2 rho^2)`` (Sec. II-C).

        Args:
          t: points.
          sensitivity: the shift ``d``.
        """
        t, d = jnp.asarray(t), jnp.asarray(sensitivity)
        a = jnp.abs(t + d) + self.vartheta
        b = jnp.abs(t) + self.vartheta
        return (a - b) * (a + b) / (2.0 * jnp.square(self.rho))

    def privacy_loss_inverse(self, epsilon: ArrayLike, sensitivity: ArrayLike) -> Array:
        r"""``t(epsilon) = sup{t : zeta_d(t) <= epsilon}`` for ``d > 0``, in closed form.

        ``zeta_d`` is continuous, piecewise linear and strictly increasing: slope
        ``d / rho^2`` for ``t >= 0`` and ``t <= -d``, ``(d + 2 vartheta) / rho^2`` between,
        ``zeta_d(0) = e_0 = d (d + 2 vartheta) / (2 rho^2) = -zeta_d(-d)``, so

        .. math:: t(\epsilon) = \begin{cases}
                  \epsilon\rho^2/d - \vartheta - d/2 & \epsilon \ge e_0 \\
                  \epsilon\rho^2/(d + 2\vartheta) - d/2 & |\epsilon| < e_0 \\
                  \epsilon\rho^2/d + \vartheta - d/2 & \epsilon \le -e_0
                  \end{cases}

        (the inverse of the loss of Sec. II-C of flipped-huber-mechanism for the OSGT density of
        its App. F(c); the engine's bisection fallback,
        :func:`dpjax.noise.privacy_loss.privacy_loss_inverse`, agrees to round-off).

        Args:
          epsilon: loss levels.
          sensitivity: the shift ``d > 0``.
        """
        e, d = jnp.asarray(epsilon), jnp.asarray(sensitivity)
        theta, rho2 = jnp.asarray(self.vartheta), jnp.square(jnp.asarray(self.rho))
        e0 = d * (d + 2.0 * theta) / (2.0 * rho2)
        outer = e * rho2 / d - 0.5 * d
        middle = e * rho2 / (d + 2.0 * theta) - 0.5 * d
        return jnp.where(e >= e0, outer - theta, jnp.where(e <= -e0, outer + theta, middle))
