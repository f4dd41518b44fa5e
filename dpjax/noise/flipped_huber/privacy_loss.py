r"""The privacy loss of flipped Huber noise at a shift and its inverse (flipped-huber-mechanism).

For ``P = T`` and ``Q = T - Delta`` with ``T ~ FH(alpha, gamma^2)`` the loss is
``zeta_Delta(t) = (rho_alpha(t + Delta) - rho_alpha(t)) / gamma^2`` (Sec. II-C), and
its centred form ``zeta~_Delta(x) = zeta_Delta(x - Delta/2)`` is odd and
non-decreasing (eq. (25)).  Its right-continuous partial inverse (eq. (15)) gives
the point ``t(eps) = zeta~^{-1}(eps) - Delta/2`` where the loss crosses ``eps``,
which is all the exact profile (eq. (14)/(16)) and the pessimistic PLD
(:mod:`dpjax.accounting.pld.discretise`) need.  Both are evaluated in standard
units ``b = alpha / gamma``, ``D = Delta / gamma`` (a scale family).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise.flipped_huber.standard import flipped_huber_loss
from dpjax.numerics import float64_kernel


@float64_kernel
def centred_privacy_loss(
    t: ArrayLike, sensitivity: ArrayLike, alpha: ArrayLike, gamma: ArrayLike
) -> Array:
    r"""Centred privacy loss ``zeta~_Delta(t)`` (eq. (25) of flipped-huber-mechanism).

    .. math:: \tilde\zeta_\Delta(t) = \frac{\rho_\alpha(t + \Delta/2)
              - \rho_\alpha(t - \Delta/2)}{\gamma^2}

    Equal to the piecewise closed form (25); where both arguments lie in the
    same Gaussian tail it is evaluated as ``t Delta / gamma^2`` (no cancellation).

    Args:
      t: points (the centre of the two shifted arguments).
      sensitivity: the shift ``Delta > 0``.
      alpha: transition ``alpha >= 0``.
      gamma: scale ``gamma > 0``.

    Returns:
      ``zeta~_Delta(t)``, odd and non-decreasing in ``t``.
    """
    t, d, alpha = jnp.asarray(t), jnp.asarray(sensitivity), jnp.asarray(alpha)
    hi, lo = t + 0.5 * d, t - 0.5 * d
    same_tail = ((hi > alpha) & (lo > alpha)) | ((hi < -alpha) & (lo < -alpha))
    diff = flipped_huber_loss(hi, alpha) - flipped_huber_loss(lo, alpha)
    return jnp.where(same_tail, t * d, diff) / jnp.square(jnp.asarray(gamma))


def _standard_inverse(nu: Array, b: Array, D: Array) -> Array:
    """``x*`` of eq. (15) for ``nu >= 0`` in standard units (``gamma = 1``)."""
    pos = b > 0
    bs = jnp.where(pos, b, 1.0)
    lvl2 = jnp.minimum(2.0 * b - D, D) * b
    c2 = (b > 0.5 * D) & (nu < lvl2)
    lo3 = 0.5 * (jnp.square(jnp.maximum(2.0 * b, D)) - 2.0 * b * D)
    nu1 = 0.5 * (jnp.square(jnp.maximum(D - b, 0.0)) + 2.0 * b * D)
    nu2 = 0.5 * (D + 2.0 * b) * D
    c1 = (b < 0.5 * D) & (nu < 0.5 * (D - 2.0 * b) * D)
    c3 = ~c1 & ~c2 & (nu >= lo3) & (nu < nu1)
    c4 = ~c1 & ~c2 & ~c3 & (nu >= nu1) & (nu < nu2)
    j_plus = jnp.sqrt(2.0 * (nu + b * D)) - 0.5 * D - b
    j_minus = jnp.sqrt(2.0 * jnp.maximum(nu - b * D, 0.0)) - 0.5 * D + b
    lin = nu / D
    return jnp.where(c2 & pos, nu / (2.0 * bs), jnp.where(c3, j_plus, jnp.where(c4, j_minus, lin)))


@float64_kernel
def centred_privacy_loss_inverse(
    nu: ArrayLike, sensitivity: ArrayLike, alpha: ArrayLike, gamma: ArrayLike
) -> Array:
    r"""Right-continuous partial inverse ``sup{t : zeta~_Delta(t) <= nu}`` (eq. (15)).

    .. math:: \tilde\zeta_\Delta^{-1}(\nu) = \begin{cases}
       \gamma^2\nu / (2\alpha) & |\nu| < ((2\alpha - \Delta)\wedge\Delta)\alpha/\gamma^2 \\
       \mathcal J(\nu, \alpha) & |\nu| \in [((2\alpha\vee\Delta)^2 - 2\alpha\Delta)/(2\gamma^2),
          \nu_1) \\
       \mathcal J(\nu, -\alpha) & |\nu| \in [\nu_1, \nu_2) \\
       \gamma^2\nu / \Delta & \text{otherwise} \end{cases}

    with ``J(nu, a) = sgn(nu)(sqrt(2(gamma^2 |nu| + a Delta)) - Delta/2 - a)``
    (eq. (15) of flipped-huber-mechanism).  For ``nu < 0`` the odd extension is
    returned (the inverse at a plateau level is its right end for ``nu >= 0``).

    Args:
      nu: loss levels.
      sensitivity: the shift ``Delta > 0``.
      alpha: transition ``alpha >= 0``.
      gamma: scale ``gamma > 0``.

    Returns:
      The centred point ``x*`` with ``zeta~_Delta(x*) = nu`` (right end of a plateau).
    """
    nu, d, gamma = jnp.asarray(nu), jnp.asarray(sensitivity), jnp.asarray(gamma)
    b, D = jnp.asarray(alpha) / gamma, d / gamma
    x = _standard_inverse(jnp.abs(nu), b, D)
    return gamma * jnp.where(nu >= 0, x, -x)


__all__ = ["centred_privacy_loss", "centred_privacy_loss_inverse"]
