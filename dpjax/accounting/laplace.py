r"""Privacy of the Laplace mechanism.

Pure DP: noise ``Lap(b)`` per coordinate with l1-sensitivity ``Delta_1`` is
``(Delta_1 / b)``-DP.  In one dimension the exact (epsilon, delta) profile
(App. F(b) of flipped-huber-mechanism; Balle et al. 2018) is

.. math:: \delta(\epsilon) = \left[1 - \exp\!\left(\tfrac12(\epsilon - \Delta / b)\right)\right]_+ ,

so the necessary and sufficient condition for (epsilon, delta)-DP is
``b >= Delta / (epsilon - 2 log(1 - delta))``.
"""

from __future__ import annotations

from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.certificate import (
    MARGIN,
    fail_closed,
    kernel_error,
    reported_delta,
    reported_epsilon,
)
from dpjax.numerics import float64_kernel, log1mexp, log1mexp_host, quotient

#: Documented error constant of :func:`log_delta_laplace` and :func:`log_delta_pure_dp`
#: (``|log delta_computed - log delta_true| <= ERROR (1 + |log delta|)``; both are
#: ``log1mexp`` of a gap accurate to a few ulps; largest measured ratio 1.2e-15 against
#: 60-digit mpmath, tests/accounting/test_fail_closed.py).
ERROR = kernel_error(4e-15)
#: Relative error of the closed-form epsilons below (two or three roundings).
EPSILON_ERROR = 2.0**-50


@float64_kernel
def pure_gap(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``epsilon - Delta / b`` with a compensated quotient.

    .. math:: \text{gap} = (\epsilon - q) - r,\qquad q + r = \Delta / b \text{ to } \sim 2^{-104}

    Near the pure-DP boundary the two terms cancel, and the profile
    ``1 - exp(gap / 2)`` (App. F(b) of flipped-huber-mechanism) is then decided by the
    last bits of ``b``: with ``q = fl(Delta / b)`` and the correction ``r`` of
    :func:`dpjax.numerics.quotient`, the gap is accurate to a few ulps of the *gap*
    (``epsilon - q`` is exact by Sterbenz's lemma when the terms are within a factor 2 of
    each other).

    Args:
      epsilon: ``epsilon >= 0``.
      scale: Laplace scale ``b > 0``.
      sensitivity: ``Delta > 0``.

    Returns:
      ``epsilon - Delta / b``, broadcast shape of the inputs.
    """
    q, r = quotient(sensitivity, scale)
    return (jnp.asarray(epsilon) - q) - r


@float64_kernel
def log_delta_laplace(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` of the 1-D Laplace mechanism; ``-inf`` for ``eps >= Delta / b``.

    .. math:: \delta(\epsilon) = \left[1 - \exp\!\left(\tfrac12(\epsilon - \Delta / b)
              \right)\right]_+

    (App. F(b) of flipped-huber-mechanism; Balle et al. 2018).  Uses :func:`pure_gap`, so
    the value is accurate even when ``delta`` is tiny (``b`` within a few ulps of the
    pure-DP scale).  Error :data:`ERROR`.

    Args:
      epsilon: ``epsilon >= 0``.
      scale: Laplace scale ``b > 0``.
      sensitivity: ``Delta > 0``.

    Returns:
      ``log delta(epsilon)``, broadcast shape of the inputs.

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> round(math.exp(float(log_delta_laplace(0.0, 1.0, 1.0))), 6)  # 1 - e^{-1/2}
      0.393469
    """
    x = 0.5 * pure_gap(epsilon, scale, sensitivity)
    inside = x < 0
    val = log1mexp(jnp.where(inside, x, -1.0))
    return fail_closed(jnp.where(inside, val, jnp.where(x >= 0, -jnp.inf, jnp.nan)))


@float64_kernel
def log_delta_laplace_host(epsilon, scale, sensitivity) -> np.ndarray:
    r"""Host (NumPy) twin of :func:`log_delta_laplace`, within its ``ERROR``.

    .. math:: \log\delta(\epsilon) = \log\big(1 - e^{x}\big),\qquad
              x = \tfrac12\Big(\epsilon - \frac{\Delta}{b}\Big) < 0

    (App. F(b) of flipped-huber-mechanism), ``-inf`` for ``x >= 0``.  The gap
    ``epsilon - Delta / b`` is computed exactly in rational arithmetic and rounded once
    (relative error ``u = 2^-53``), so ``x`` carries ``<= u |x|`` absolute, which moves
    ``log(1 - e^x)`` by at most ``u |x| e^x / (1 - e^x) <= u``; ``log1mexp`` adds a few
    ulps (:func:`dpjax.numerics.log1mexp_host`).  In all ``<= 4u (1 + |log
    delta|)``, within :data:`ERROR` (``4e-15``; the JAX kernel's
    constant, so the same certificate applies).

    Args:
      epsilon: ``epsilon >= 0`` (finite).
      scale: Laplace scale ``b > 0`` (finite).
      sensitivity: ``Delta > 0`` (finite).  All three broadcast.

    Returns:
      ``log delta(epsilon)`` as a float64 array.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(np.exp(log_delta_laplace_host(0.0, 1.0, 1.0))), 6)  # 1 - e^{-1/2}
      0.393469
    """
    gap = np.frompyfunc(
        lambda e, b, d: float(Fraction(e) - Fraction(d) / Fraction(b)), 3, 1
    )(*np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (epsilon, scale, sensitivity))))
    x = 0.5 * np.asarray(gap, dtype=np.float64)
    return np.where(x < 0, log1mexp_host(x), -np.inf)


@float64_kernel
@jax.jit
def delta_laplace(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``delta(epsilon)`` of the 1-D Laplace mechanism, reported as a certified upper bound.

    .. math:: \delta(\epsilon) = \left[1 - \exp\!\left(\tfrac12(\epsilon - \Delta / b)
              \right)\right]_+

    (App. F(b) of flipped-huber-mechanism) through
    :func:`dpjax.certificate.reported_delta` with :data:`ERROR`.  Jitted: one program (the
    same bits as its operations one by one).

    Args:
      epsilon: ``epsilon >= 0``.
      scale: Laplace scale ``b > 0``.
      sensitivity: ``Delta > 0``.

    Returns:
      An upper bound on ``delta(epsilon)``, never below the exact profile.
    """
    return reported_delta(log_delta_laplace(epsilon, scale, sensitivity), ERROR)


@float64_kernel
@jax.jit
def epsilon_laplace(delta: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""Least epsilon for the 1-D Laplace mechanism at ``delta (1 - MARGIN)``, rounded up.

    .. math:: \epsilon = \max\big(0,\ \Delta / b + 2 \log(1 - \delta (1 - \mathrm{MARGIN}))\big)

    (the inverse of App. F(b) of flipped-huber-mechanism), with ``Delta / b`` carried to
    ~2^-104 (:func:`dpjax.numerics.quotient`) and the sum rounded up by
    :data:`EPSILON_ERROR` (:func:`reported_epsilon`): at ``delta = 0`` this is the
    pure-DP ``Delta / b`` rounded up, never down.  Jitted: one program (the same bits as its
    operations one by one; the two-product of the quotient is exact with or without a fused
    multiply-add).

    Args:
      delta: target ``delta`` in ``[0, 1)``.
      scale: Laplace scale ``b > 0``.
      sensitivity: ``Delta > 0``.

    Returns:
      The certified epsilon, broadcast shape of the inputs.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> float(epsilon_laplace(0.0, 2.0, 1.0))  # Delta / b rounded up  # doctest: +ELLIPSIS
      0.500000000000000...
    """
    q, r = quotient(sensitivity, scale)
    eps = q + (r + 2.0 * jnp.log1p(-jnp.asarray(delta) * (1.0 - MARGIN)))
    return reported_epsilon(jnp.maximum(eps, 0.0), EPSILON_ERROR)


@float64_kernel
def scale_laplace(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""Least scale for 1-D (epsilon, delta)-DP.

    .. math:: b = \frac{\Delta}{\epsilon - 2\log(1 - \delta)}

    (the necessary and sufficient condition of App. F(b) of flipped-huber-mechanism;
    Corollary 6 of inid-noise-laplace-beats-gaussian has the K-dim analogue).  With
    ``delta = 0`` this is the pure-DP scale ``Delta / epsilon``.

    Args:
      epsilon: ``epsilon >= 0``.
      delta: ``delta`` in ``[0, 1)``.
      sensitivity: ``Delta > 0``.

    Returns:
      ``b``; ``inf`` at ``epsilon = delta = 0`` (infeasible).
    """
    denom = jnp.asarray(epsilon) - 2.0 * jnp.log1p(-jnp.asarray(delta))
    return jnp.asarray(sensitivity) / denom


@float64_kernel
def log_delta_pure_dp(epsilon: ArrayLike, epsilon0: ArrayLike) -> Array:
    r"""``log`` of the randomized-response profile, dominating every ``epsilon_0``-DP mechanism.

    .. math:: \delta(\epsilon) = \frac{e^{\epsilon_0} - e^{\epsilon}}{1 + e^{\epsilon_0}}
              = \frac{-\mathrm{expm1}(\epsilon - \epsilon_0)}{1 + e^{-\epsilon_0}}
              \quad (\epsilon < \epsilon_0),\qquad 0 \text{ beyond}

    (Kairouz, Oh & Viswanath 2015, Thm 3.3).  An upper bound on the profile of any
    ``epsilon_0``-DP mechanism (Table II of flipped-huber-mechanism uses it for pure-DP
    Laplace and staircase in K dimensions).  Error :data:`ERROR`.

    Args:
      epsilon: ``epsilon >= 0``.
      epsilon0: the pure-DP level ``epsilon_0 >= 0`` (e.g. ``Delta_1 / b`` for Laplace).

    Returns:
      ``log delta(epsilon)``; ``-inf`` for ``epsilon >= epsilon_0``.
    """
    x = jnp.asarray(epsilon) - jnp.asarray(epsilon0)
    inside = x < 0
    val = log1mexp(jnp.where(inside, x, -1.0)) - jnp.log1p(jnp.exp(-jnp.asarray(epsilon0)))
    return fail_closed(jnp.where(inside, val, jnp.where(x >= 0, -jnp.inf, jnp.nan)))


@float64_kernel
@jax.jit
def epsilon_pure_dp(delta: ArrayLike, epsilon0: ArrayLike) -> Array:
    r"""Least epsilon with :func:`log_delta_pure_dp` ``<= delta (1 - MARGIN)``, rounded up.

    .. math:: \epsilon = \max\big(0,\ \epsilon_0
              + \log(1 - \delta(1 - \text{MARGIN})(1 + e^{-\epsilon_0}))\big)

    (the inverse of the randomized-response profile; Kairouz, Oh & Viswanath 2015).  Jitted:
    one program (the same bits as its operations one by one).

    Args:
      delta: target ``delta`` in ``[0, 1)``.
      epsilon0: the pure-DP level ``epsilon_0 >= 0``.

    Returns:
      The certified epsilon, rounded up by :data:`EPSILON_ERROR`.
    """
    epsilon0 = jnp.asarray(epsilon0)
    level = jnp.asarray(delta) * (1.0 - MARGIN)
    eps = epsilon0 + jnp.log1p(-jnp.minimum(level * (1.0 + jnp.exp(-epsilon0)), 1.0))
    return reported_epsilon(jnp.maximum(eps, 0.0), EPSILON_ERROR)
