r"""Zero-concentrated DP to (epsilon, delta)-DP.

``rho``-zCDP means ``D_alpha(P || Q) <= alpha rho`` for every ``alpha > 1``.

* Bun & Steinke 2016, Prop. 1.3 / Lemma 3.5 (used by Sec. VI of
  flipped-huber-mechanism): ``epsilon = rho + 2 sqrt(rho log(1/delta))``.
* Canonne, Kamath & Steinke 2020 ("The discrete Gaussian for differential
  privacy", Prop. 12 / Cor. 13), tighter: for any ``alpha > 1``

  .. math:: \delta = \frac{\exp((\alpha - 1)(\alpha\rho - \epsilon))}{\alpha - 1}
            \left(1 - \frac1\alpha\right)^{\alpha},

  minimised over ``alpha``.  Every ``alpha`` gives a valid bound, so a
  minimum over a fixed grid is certified (it can only be conservative).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.certificate import fail_closed
from dpjax.numerics import float64_kernel

# log-spaced orders 1 + 10^{-4} .. 1 + 10^{6}; the bound is smooth in alpha,
# and a grid minimum is always a valid (conservative) bound.
_ALPHAS = 1.0 + np.logspace(-4, 6, 4001)


@float64_kernel
def epsilon_from_zcdp_bun_steinke(rho: ArrayLike, delta: ArrayLike) -> Array:
    r"""``epsilon = rho + 2 sqrt(rho log(1/delta))`` (Bun & Steinke 2016, Prop. 1.3 / Lemma 3.5).

    .. math:: \epsilon = \rho + 2\sqrt{\rho \log(1/\delta)}

    (the conversion Sec. VI-A of flipped-huber-mechanism uses for composition).

    Args:
      rho: zCDP parameter ``rho >= 0``.
      delta: ``delta`` in ``(0, 1)``.

    Returns:
      ``epsilon``, broadcast shape of the inputs.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(epsilon_from_zcdp_bun_steinke(0.5, 1e-5)), 4)
      5.2985
    """
    rho, delta = jnp.asarray(rho), jnp.asarray(delta)
    return rho + 2.0 * jnp.sqrt(rho * -jnp.log(delta))


def _log_delta_cks(rho, epsilon, alpha):
    return (
        (alpha - 1.0) * (alpha * rho - epsilon)
        - jnp.log(alpha - 1.0)
        + alpha * jnp.log1p(-1.0 / alpha)
    )


@float64_kernel
def log_delta_from_zcdp(rho: ArrayLike, epsilon: ArrayLike) -> Array:
    r"""``log delta`` from ``rho``-zCDP at ``epsilon`` (Canonne, Kamath & Steinke 2020, Cor. 13).

    .. math:: \log\delta = \min_{\alpha \in A}\ (\alpha - 1)(\alpha\rho - \epsilon)
              - \log(\alpha - 1) + \alpha \log(1 - 1/\alpha)

    over a fixed grid ``A`` of orders ``1 + 10^-4 .. 1 + 10^6`` (each a valid bound), capped
    at 0; in log space so that a tiny bound is never rounded to ``delta = 0``.

    Args:
      rho: zCDP parameter ``rho >= 0``.
      epsilon: ``epsilon >= 0`` (broadcast against ``rho``).

    Returns:
      ``log delta``; NaN input gives 0 (fail closed).
    """
    rho, epsilon = jnp.asarray(rho)[..., None], jnp.asarray(epsilon)[..., None]
    alpha = jnp.asarray(_ALPHAS)
    log_d = jnp.min(_log_delta_cks(rho, epsilon, alpha), axis=-1)
    return fail_closed(log_d, rho[..., 0], epsilon[..., 0])


@float64_kernel
def delta_from_zcdp(rho: ArrayLike, epsilon: ArrayLike) -> Array:
    r"""``delta`` from ``rho``-zCDP at ``epsilon`` (Canonne, Kamath & Steinke 2020), capped at 1.

    .. math:: \delta = \min_{\alpha > 1}
              \frac{\exp((\alpha - 1)(\alpha\rho - \epsilon))}{\alpha - 1}
              \left(1 - \frac1\alpha\right)^{\alpha}

    (:func:`log_delta_from_zcdp`, exponentiated).

    Args:
      rho: zCDP parameter ``rho >= 0``.
      epsilon: ``epsilon >= 0``.

    Returns:
      ``delta`` in ``[0, 1]``.
    """
    return jnp.exp(log_delta_from_zcdp(rho, epsilon))


@float64_kernel
def epsilon_from_zcdp(rho: ArrayLike, delta: ArrayLike) -> Array:
    r"""Least ``epsilon`` from ``rho``-zCDP at ``delta`` (Canonne, Kamath & Steinke 2020, Cor. 13).

    .. math:: \epsilon = \min_\alpha\ \alpha\rho + \frac{\alpha \log(1 - 1/\alpha)
              - \log(\alpha - 1) - \log\delta}{\alpha - 1}

    over the fixed grid of orders (every order gives a valid bound).  Never larger than
    the Bun-Steinke value (:func:`epsilon_from_zcdp_bun_steinke`); floored at 0.

    Args:
      rho, delta: as in :func:`epsilon_from_zcdp_bun_steinke`.

    Returns:
      The least ``epsilon`` over the grid, broadcast shape of ``rho`` and ``delta``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(epsilon_from_zcdp(0.5, 1e-5)), 4)  # Bun-Steinke gives 5.2985
      4.7284
    """
    rho, delta = jnp.asarray(rho)[..., None], jnp.asarray(delta)[..., None]
    a = jnp.asarray(_ALPHAS)
    eps = a * rho + (a * jnp.log1p(-1.0 / a) - jnp.log(a - 1.0) - jnp.log(delta)) / (a - 1.0)
    return jnp.maximum(jnp.min(eps, axis=-1), 0.0)
