r"""The standard shape ``FH(b, 1)`` of flipped Huber noise (flipped-huber-mechanism, Sec. III).

Loss (eq. (7)) and density (eqs. (8)-(9)):

.. math:: \rho_\alpha(t) = \begin{cases} \alpha|t| & |t| \le \alpha \\
          (t^2 + \alpha^2)/2 & |t| > \alpha \end{cases},\qquad
          g(t) = \frac{1}{\kappa} e^{-\rho_\alpha(t)/\gamma^2},\quad
          \kappa = \gamma\,\omega\, e^{-b^2/2},\quad b = \alpha/\gamma,

.. math:: \omega = 2\left[\sqrt{2\pi}\,Q(b) + \tfrac{2}{b}\sinh(b^2/2)\right].

A scale family: ``FH(b gamma, gamma^2) = gamma * FH(b, 1)``, so every quantity
is computed here for the standard shape ``FH(b, 1)`` (pure kernels shared with
:mod:`dpjax.accounting.flipped_huber` and :mod:`dpjax.calibration.flipped_huber`)
and rescaled by :class:`~dpjax.noise.flipped_huber.FlippedHuber`.  Never form
``omega`` (it overflows for ``b > 37``): with the half-masses

.. math:: A = \frac{1 - e^{-b^2}}{b} = \int_0^b e^{-bx}dx,\qquad
          B = \sqrt{2\pi}\,Q(b)\,e^{-b^2/2} = e^{-b^2} R(b) = \int_b^\infty e^{-(x^2+b^2)/2}dx

(``R`` the Mills ratio), ``omega e^{-b^2/2} = Z = 2 (A + B)`` is the normaliser
of ``exp(-rho_b)``, computed as ``log Z = log 2 + logaddexp(log A, log B)``.

Variance (eq. (11)) is evaluated in the cancellation-free form

.. math:: \sigma^2/\gamma^2 = \frac{(2/b^3)\,P(3, b^2) + B + b e^{-b^2}}{A + B},

where ``P(3, y) = 1 - e^{-y}(1 + y + y^2/2)`` (regularised incomplete gamma)
uses its power series for ``y < 1``; eq. (11) itself subtracts nearly equal
terms for small ``b``.  Fisher information (eq. (12)):
``gamma^2 I = (b + B) / (A + B)``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise._tail import erfinv_from_w, log1p_negative, log_q_inv
from dpjax.numerics import log1mexp, log_mills, log_Q, log_Q_inv, logaddexp
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2
from dpjax.numerics.lazy_scipy import special

_SQRT_2 = 1.4142135623730951


def _safe_b(b: Array) -> tuple[Array, Array]:
    """``(b > 0, b clamped to 1 where b == 0)`` for the double-where pattern."""
    pos = b > 0
    return pos, jnp.where(pos, b, 1.0)


def log_half_laplace_mass(b: ArrayLike) -> Array:
    r"""``log A``, the half-mass of the Laplace centre of ``exp(-rho_b)`` (eq. (9)).

    .. math:: A = \frac{1 - e^{-b^2}}{b} = \int_0^b e^{-bx}\,dx

    Args:
      b: shape ``b = alpha / gamma >= 0`` (``-inf`` at ``b = 0``).
    """
    b = jnp.asarray(b)
    pos, bs = _safe_b(b)
    return jnp.where(pos, jnp.log(-jnp.expm1(-bs * bs)) - jnp.log(bs), -jnp.inf)


def log_half_gauss_mass(b: ArrayLike) -> Array:
    r"""``log B``, the half-mass of the Gaussian tails of ``exp(-rho_b)`` (eq. (9)).

    .. math:: B = \sqrt{2\pi}\,Q(b)\,e^{-b^2/2} = \int_b^\infty e^{-(x^2 + b^2)/2}\,dx

    Args:
      b: shape ``b = alpha / gamma >= 0``.
    """
    b = jnp.asarray(b)
    return HALF_LOG_2PI + log_Q(b) - 0.5 * b * b


def log_half_masses_host(b) -> tuple[np.ndarray, np.ndarray]:
    r"""``(log A, log B)`` of :func:`log_half_laplace_mass` and :func:`log_half_gauss_mass` in
    NumPy (eq. (9) of flipped-huber-mechanism; host searches: nothing to compile).

    Args:
      b: shape ``b >= 0`` (NumPy array).
    """
    b = np.asarray(b, dtype=np.float64)
    bs = np.where(b > 0, b, 1.0)
    log_a = np.where(b > 0, np.log(-np.expm1(-bs * bs)) - np.log(bs), -np.inf)
    return log_a, HALF_LOG_2PI + special.log_ndtr(-b) - 0.5 * b * b


def log_normaliser(b: ArrayLike) -> Array:
    r"""``log Z(b)``, the normaliser of ``exp(-rho_b)`` (eq. (9) of flipped-huber-mechanism).

    .. math:: Z = \int e^{-\rho_b(x)}\,dx = 2 (A + B) = \omega\, e^{-b^2/2}

    Args:
      b: shape ``b = alpha / gamma >= 0``.
    """
    return LOG_2 + logaddexp(log_half_laplace_mass(b), log_half_gauss_mass(b))


def log_omega(b: ArrayLike) -> Array:
    r"""``log omega`` of eq. (9) of flipped-huber-mechanism, as ``log Z + b^2/2`` (no overflow).

    .. math:: \omega = 2\left[\sqrt{2\pi}\,Q(b) + \tfrac{2}{b}\sinh(b^2/2)\right]

    Args:
      b: shape ``b = alpha / gamma >= 0``.
    """
    b = jnp.asarray(b)
    return log_normaliser(b) + 0.5 * b * b


def standard_loss(x: ArrayLike, b: ArrayLike) -> Array:
    r"""The flipped Huber loss ``rho_b(x)`` of eq. (7) of flipped-huber-mechanism.

    .. math:: \rho_b(x) = b|x| \ (|x| \le b),\qquad (x^2 + b^2)/2 \ (|x| > b)

    Args:
      x: points.
      b: transition ``b >= 0`` (``alpha`` in the paper's units, or ``alpha / gamma``).
    """
    x, b = jnp.asarray(x), jnp.asarray(b)
    ax = jnp.abs(x)
    return jnp.where(ax <= b, b * ax, 0.5 * (x * x + b * b))


def flipped_huber_loss(t: ArrayLike, alpha: ArrayLike) -> Array:
    r"""The flipped Huber loss ``rho_alpha(t)`` of eq. (7) of flipped-huber-mechanism.

    .. math:: \rho_\alpha(t) = \alpha|t| \ (|t| \le \alpha),\qquad
              (t^2 + \alpha^2)/2 \ (|t| > \alpha)

    Args:
      t: points.
      alpha: transition ``alpha >= 0``.
    """
    return standard_loss(t, alpha)


def standard_log_sf(y: ArrayLike, b: ArrayLike) -> Array:
    r"""``log P(T > y)`` for ``T ~ FH(b, 1)`` (eq. (10) of flipped-huber-mechanism).

    .. math:: Z\,P(T > y) = \begin{cases}
        e^{-b^2/2}\sqrt{2\pi}\,Q(y) & y > b \\
        e^{-by}(1 - e^{-b(b - y)})/b + B & 0 \le y \le b \\
        Z - Z P(T > -y) & y < 0 \end{cases}

    Args:
      y: points (standard units, ``x / gamma``).
      b: shape ``b = alpha / gamma >= 0``.
    """
    y, b = jnp.broadcast_arrays(jnp.asarray(y), jnp.asarray(b))
    log_z = log_normaliser(b)
    ay = jnp.abs(y)
    gauss = ay > b
    y_g = jnp.where(gauss, ay, b + 1.0)
    log_gauss = HALF_LOG_2PI - 0.5 * b * b + log_Q(y_g)
    pos, bs = _safe_b(b)
    y_l = jnp.where(gauss, 0.0, ay)
    gap = bs * (bs - y_l)
    lap_ok = pos & (gap > 0) & ~gauss
    gap_s = jnp.where(lap_ok, gap, 1.0)
    log_lap_part = jnp.where(
        lap_ok, -bs * y_l + jnp.log(-jnp.expm1(-gap_s)) - jnp.log(bs), -jnp.inf
    )
    log_lap = logaddexp(log_lap_part, log_half_gauss_mass(b))
    upper = jnp.where(gauss, log_gauss, log_lap) - log_z  # log P(T > |y|) <= log 1/2
    return jnp.where(y >= 0, upper, log1mexp(jnp.minimum(upper, -LOG_2)))


def standard_log_sf_host(y, b) -> np.ndarray:
    r""":func:`standard_log_sf` in NumPy for ``y >= 0`` (eq. (10) of flipped-huber-mechanism;
    host searches: nothing to compile).

    .. math:: Z\,P(T > y) = e^{-b^2/2}\sqrt{2\pi}\,Q(y)\ (y > b),\qquad
              e^{-by}(1 - e^{-b(b - y)})/b + B\ (0 \le y \le b)

    Args:
      y: points ``y >= 0`` (standard units).
      b: shape ``b >= 0`` (NumPy arrays; the two broadcast).
    """
    y, b = np.asarray(y, dtype=np.float64), np.asarray(b, dtype=np.float64)
    log_a, log_b = log_half_masses_host(b)
    log_z = LOG_2 + np.logaddexp(log_a, log_b)
    bs = np.where(b > 0, b, 1.0)
    gap = bs * (bs - y)
    lap_ok = (b > 0) & (gap > 0)
    lap = np.where(lap_ok, -bs * y + np.log(-np.expm1(-np.where(lap_ok, gap, 1.0))), -np.inf)
    centre = np.logaddexp(lap - np.log(bs), log_b)
    gauss = HALF_LOG_2PI - 0.5 * b * b + special.log_ndtr(-y)
    return np.where(y > b, gauss, centre) - log_z


class _IsfConstants(NamedTuple):
    """Per-shape constants of the ``FH(b, 1)`` tail inverse (see :func:`standard_isf_log`)."""

    log_p_tail: Array  # log P(T > b): the Gaussian tails hold p <= P(T > b)
    log_z: Array  # log Z; with c = Z e^{b^2/2} / sqrt(2 pi), P(T > y) = Q(y) / c for y > b
    half_b2: Array  # b^2 / 2
    log_k: Array  # log k, k = b (A + B)
    log_one_minus_k: Array  # log(1 - k) = -b^2 + log(1 - b R(b))
    b_safe: Array  # b (1 where b = 0)
    pos: Array  # b > 0


#: Shape beyond which the constants of ``FH(b, 1)`` have reached their limits in every
#: float: ``e^{-b^2}`` underflows, ``log P(T > b) < -1e8``, ``k = 1``, ``1 - k = 0``.
_B_SATURATED = 1e4


def isf_constants(b: Array) -> _IsfConstants:
    r"""Constants of the tail inverse at shape ``b`` (any ``b`` in ``[0, inf]``).

    They are evaluated at ``min(b, 1e4)`` (``b^2`` overflows for ``b > 1.3e154`` in
    float64 and ``1.8e19`` in float32, and ``b = inf``, e.g. ``alpha = 1e308`` cast to
    float32, made ``log k = inf - inf``); only the final division uses the true ``b``,
    so ``b = inf`` is the Laplace limit of scale ``gamma / b = 0``.
    """
    bc = jnp.minimum(b, _B_SATURATED)
    log_z = log_normaliser(bc)
    log_b_mass = log_half_gauss_mass(bc)
    pos, bs = _safe_b(bc)
    return _IsfConstants(
        log_p_tail=log_b_mass - log_z,
        log_z=log_z,
        half_b2=0.5 * bc * bc,
        log_k=jnp.log(bs) + logaddexp(log_half_laplace_mass(bc), log_b_mass),
        log_one_minus_k=-bs * bs + jnp.log(_one_minus_x_mills(bs)),
        b_safe=jnp.where(pos, b, 1.0),
        pos=pos,
    )


def standard_isf(
    log_p: Array, q: Array, c: _IsfConstants, deep: bool = True, p: Array | None = None
) -> Array:
    r"""The ``y >= 0`` with ``P(T > y) = p`` for ``T ~ FH(b, 1)``, from ``log p`` and
    ``q = 1 - 2p`` (both given, so that each is accurate where it is used).

    .. math:: y = \begin{cases} Q^{-1}(p\,c) & p \le P(T > b) \\
              -\log(1 - k q)/b & \text{otherwise} \end{cases}

    with ``1 - k q`` formed as ``(1 - k) + 2 k p`` when ``k q >= 1/2``; ``deep=False``
    promises ``p >= 2^-13`` (then ``p c >= 2^-13``: :func:`.log_q_inv`'s main path
    suffices).  In float32 with ``deep=False`` every term is a positive normal float and
    one ``log`` serves both ends: ``w = -log(4 pc (1 - pc))`` of the Gaussian tail
    (:func:`.erfinv_from_w`) and ``log((1 - k) + 2 k p)``, with ``log1p(-k q)`` near the
    centre; ``p`` itself, when the caller has it (the samplers' main path: ``U / 2``), spares
    ``exp(log p)`` and leaves ``log p`` unevaluated.
    """
    if not deep and log_p.dtype == jnp.float32:  # p >= 2^-13: every term a normal float
        if p is None:
            p = jnp.exp(log_p)
        gauss = (p <= jnp.exp(c.log_p_tail)) | ~c.pos
        k = jnp.exp(c.log_k)
        kq = k * jnp.where(gauss, 0.5, q)
        near = kq < 0.5
        # Q^{-1}(pc) = sqrt2 erfinv(1 - 2pc), pc <= 1/2
        pc = jnp.where(gauss, p * jnp.exp(c.log_z + c.half_b2 - HALF_LOG_2PI), 0.25)
        far = jnp.exp(c.log_one_minus_k) + 2.0 * k * p  # (1 - k) + 2 k p
        log_gf = jnp.log(jnp.where(gauss, 4.0 * pc * (1.0 - pc), far))
        y_gauss = _SQRT_2 * erfinv_from_w(1.0 - 2.0 * pc, -log_gf)
        log_w = jnp.where(near, jnp.log1p(-jnp.where(near, kq, 0.0)), log_gf)
        return jnp.where(gauss, y_gauss, -log_w / c.b_safe)
    gauss = (log_p <= c.log_p_tail) | ~c.pos
    log_c = c.log_z + c.half_b2 - HALF_LOG_2PI
    kq = jnp.exp(c.log_k) * jnp.where(gauss, 0.5, q)
    near = kq < 0.5
    y_gauss = log_q_inv(jnp.where(gauss, log_p + log_c, -1.0), deep)
    log_far = logaddexp(c.log_one_minus_k, LOG_2 + c.log_k + jnp.where(gauss, -1.0, log_p))
    log_w = jnp.where(near, log1p_negative(-jnp.where(near, kq, 0.0)), log_far)
    return jnp.where(gauss, y_gauss, -log_w / c.b_safe)


def standard_isf_log(log_p: ArrayLike, b: ArrayLike) -> Array:
    r"""Inverse survival of ``FH(b, 1)`` from ``log p`` (eq. (23) of flipped-huber-mechanism).

    The ``y >= 0`` with ``P(T > y) = p`` for ``p <= 1/2``, accurate for ``p`` down to
    ``exp(-1e7)``:

    .. math:: y = \begin{cases} Q^{-1}\!\big(p\,Z e^{b^2/2}/\sqrt{2\pi}\big) & p \le P(T > b) \\
              -\log\!\big(1 - b(A+B)(1 - 2p)\big)/b & \text{otherwise} \end{cases}

    Args:
      log_p: ``log p`` (``0`` is returned for ``p >= 1/2``).
      b: shape ``b = alpha / gamma >= 0``.
    """
    log_p, b = jnp.broadcast_arrays(jnp.asarray(log_p), jnp.asarray(b))
    q = 1.0 - 2.0 * jnp.exp(jnp.minimum(log_p, -LOG_2))
    y = standard_isf(log_p, q, isf_constants(b))
    return jnp.where(log_p >= -LOG_2, 0.0, y)


def _one_minus_x_mills(x: Array) -> Array:
    r"""``1 - x R(x)`` (``= -R'(x) > 0``) for ``x >= 0``; relative accuracy ``~1e-16 x^2``."""
    return -jnp.expm1(jnp.log(x) + log_mills(x))


def _lower_gamma3_ratio(y: Array) -> Array:
    r"""``P(3, y) = 1 - e^{-y}(1 + y + y^2/2)``.

    The series ``e^{-y} sum_{k>=3} y^k/k!`` is used for ``y < 1``.
    """
    small = y < 1.0
    ys = jnp.where(small, y, 0.5)
    term = ys**3 / 6.0
    total = term
    for k in range(4, 24):
        term = term * ys / k
        total = total + term
    series = jnp.exp(-ys) * total
    yl = jnp.where(small, 1.0, y)
    direct = -jnp.expm1(-yl) - jnp.exp(-yl) * (yl + 0.5 * yl * yl)
    return jnp.where(small, series, direct)


def standard_variance(b: ArrayLike) -> Array:
    r"""Variance of ``FH(b, 1)`` (eq. (11) of flipped-huber-mechanism), cancellation-free.

    .. math:: \sigma^2/\gamma^2 = \frac{(2/b^3)\,P(3, b^2) + B + b e^{-b^2}}{A + B}

    with ``P(3, y) = 1 - e^{-y}(1 + y + y^2/2)`` by its power series for ``y < 1``.

    Args:
      b: shape ``b = alpha / gamma >= 0``.
    """
    b = jnp.asarray(b)
    pos, bs = _safe_b(b)
    log_a = log_half_laplace_mass(b)
    log_bm = log_half_gauss_mass(b)
    centre = jnp.where(pos, 2.0 * _lower_gamma3_ratio(bs * bs) / bs**3, 0.0)
    num = centre + jnp.exp(log_bm) + b * jnp.exp(-b * b)
    return num * jnp.exp(-logaddexp(log_a, log_bm))


def standard_variance_host(b) -> np.ndarray:
    r""":func:`standard_variance` in NumPy (eq. (11) of flipped-huber-mechanism; host
    searches: nothing to compile); ``P(3, b^2)`` by :func:`scipy.special.gammainc`.

    .. math:: v(b) = \frac{(2/b^3)\,P(3, b^2) + B + b e^{-b^2}}{A + B}

    Args:
      b: shape ``b >= 0`` (NumPy array).
    """
    b = np.asarray(b, dtype=np.float64)
    log_a, log_b = log_half_masses_host(b)
    bs = np.where(b > 0, b, 1.0)
    centre = np.where(b > 0, 2.0 * special.gammainc(3.0, bs * bs) / bs**3, 0.0)
    return (centre + np.exp(log_b) + b * np.exp(-b * b)) * np.exp(-np.logaddexp(log_a, log_b))


def standard_fisher_information(b: ArrayLike) -> Array:
    r"""Location Fisher information of ``FH(b, 1)`` (eq. (12) of flipped-huber-mechanism).

    .. math:: \gamma^2 I = \frac{b + B}{A + B}

    Args:
      b: shape ``b = alpha / gamma >= 0``.
    """
    b = jnp.asarray(b)
    log_a = log_half_laplace_mass(b)
    log_bm = log_half_gauss_mass(b)
    return (b + jnp.exp(log_bm)) * jnp.exp(-logaddexp(log_a, log_bm))


def _log_exprel_integral(c: Array, b: Array) -> Array:
    r"""``log int_0^b e^{c x} dx = log((e^{cb} - 1)/c)`` for any real ``c``, ``b > 0``."""
    cb = c * b
    big = jnp.abs(cb) > 1e-8
    cb_s = jnp.where(big, cb, 1.0)
    c_s = jnp.where(big, c, 1.0)
    pos = cb_s > 0
    pos_val = cb_s + log1mexp(-jnp.where(pos, cb_s, 1.0)) - jnp.log(jnp.where(pos, c_s, 1.0))
    neg_val = log1mexp(jnp.where(pos, -1.0, cb_s)) - jnp.log(jnp.where(pos, 1.0, -c_s))
    return jnp.where(big, jnp.where(pos, pos_val, neg_val), jnp.log(b) + 0.5 * cb)


def standard_log_mgf(s: ArrayLike, b: ArrayLike) -> Array:
    r"""``log E[e^{sT}]`` for ``T ~ FH(b, 1)`` (Sec. III-B.2 of flipped-huber-mechanism).

    .. math:: Z\,\mathbb{M}(s) = \int_0^b (e^{(s-b)x} + e^{-(s+b)x})dx
              + \sqrt{2\pi}\, e^{(s^2 - b^2)/2}\,[Q(b - s) + Q(b + s)].

    Args:
      s: argument of the moment generating function (standard units).
      b: shape ``b = alpha / gamma >= 0``.
    """
    s, b = jnp.broadcast_arrays(jnp.asarray(s), jnp.asarray(b))
    pos, bs = _safe_b(b)
    lap = jnp.where(
        pos,
        logaddexp(_log_exprel_integral(s - bs, bs), _log_exprel_integral(-s - bs, bs)),
        -jnp.inf,
    )
    gauss = HALF_LOG_2PI + 0.5 * (s * s - b * b) + logaddexp(log_Q(b - s), log_Q(b + s))
    return logaddexp(lap, gauss) - log_normaliser(b)


def theta_over_gamma(b: ArrayLike) -> Array:
    r"""The stochastic-dominance shift of Lemma 6 / eq. (22) of flipped-huber-mechanism.

    .. math:: \theta / \gamma = Q^{-1}\!\big(\sqrt{\pi/2} / \omega\big)

    (``FH <=_st N(theta, gamma^2)``), evaluated from ``log omega``.

    Args:
      b: shape ``b = alpha / gamma >= 0``.
    """
    return log_Q_inv(0.5 * jnp.log(jnp.pi / 2.0) - log_omega(b))
