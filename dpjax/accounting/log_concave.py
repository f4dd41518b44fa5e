r"""Exact 1-D privacy profile of any symmetric log-concave noise (Lemma 11).

For additive noise with a symmetric log-concave density ``g`` and sensitivity
``Delta`` (Lemma 11 / eq. (28) of flipped-huber-mechanism; Lemma 1 of
Sommer et al.), the mechanism is (epsilon, delta)-DP iff

.. math:: \delta(\epsilon) = \overline G\big(x^* - \tfrac{\Delta}{2}\big)
          - e^{\epsilon}\,\overline G\big(x^* + \tfrac{\Delta}{2}\big) \le \delta,
          \qquad x^* = \tilde\zeta_\Delta^{-1}(\epsilon)
          = \sup\{x : \tilde\zeta_\Delta(x) \le \epsilon\},

with the centred privacy loss ``zeta~_Delta(x) = psi(x + Delta/2) - psi(x - Delta/2)``
(``psi = -log g``), which is non-decreasing and odd.  Here ``x*`` is found
numerically by bisection on the (monotone) centred loss, so this kernel only
needs ``log_sf`` and the loss of the family: it is the independent check of
closed forms such as eq. (13) for the flipped Huber mechanism.

Accuracy: the difference is evaluated as
``log S(t1) + log(1 - exp(eps + log S(t2) - log S(t1)))``; its relative error is
about ``1e-16 (|log S(t1)| + eps) / (delta / S(t1))``, small unless delta is many
orders of magnitude below ``S(t1)``.  The result is insensitive to the error in
``x*`` (the integrand ``g(t1) - e^eps g(t2)`` vanishes at ``x*``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.numerics import bisect_monotone, float64_kernel, log1mexp


@float64_kernel
def centred_loss_inverse_numeric(
    epsilon: ArrayLike,
    centred_loss: Callable[[Array], Array],
    upper: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""``sup{x >= 0 : centred_loss(x) <= epsilon}`` by bisection on ``[0, upper]``.

    .. math:: x^* = \tilde\zeta_\Delta^{-1}(\epsilon)
              = \sup\{x : \tilde\zeta_\Delta(x) \le \epsilon\}

    (the right-continuous partial inverse of eq. (15) / Lemma 11 of
    flipped-huber-mechanism, for a family without a closed form).

    Args:
      epsilon: ``epsilon >= 0``.
      centred_loss: ``x -> psi(x + Delta/2) - psi(x - Delta/2)``, non-decreasing with
        ``centred_loss(0) = 0``.
      upper: a point with ``centred_loss(upper) > epsilon`` (broadcast against ``epsilon``).
      num_iterations: bisection steps (static).

    Returns:
      The feasible (left) end of the final bracket, a lower bound on ``x*``.
    """
    epsilon = jnp.asarray(epsilon)
    upper = jnp.broadcast_to(
        jnp.asarray(upper), jnp.broadcast_shapes(epsilon.shape, jnp.shape(upper))
    )
    res = bisect_monotone(
        lambda x: centred_loss(x) <= epsilon,
        good=jnp.zeros_like(upper),
        bad=upper,
        num_iterations=num_iterations,
    )
    return res.good


@float64_kernel
def log_delta_symmetric_log_concave(
    epsilon: ArrayLike,
    sensitivity: ArrayLike,
    log_sf: Callable[[Array], Array],
    centred_loss: Callable[[Array], Array],
    upper: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""``log delta(epsilon)`` of eq. (28) for symmetric log-concave noise (see module docstring).

    .. math:: \delta(\epsilon) = \overline G\big(x^* - \tfrac{\Delta}{2}\big)
              - e^{\epsilon}\,\overline G\big(x^* + \tfrac{\Delta}{2}\big),
              \qquad x^* = \tilde\zeta_\Delta^{-1}(\epsilon)

    (Lemma 11 / eq. (28) of flipped-huber-mechanism; Sommer, Meiser & Mohammadi 2019,
    Lemma 1), with ``x*`` from :func:`centred_loss_inverse_numeric`.

    Args:
      epsilon: ``epsilon >= 0``.
      sensitivity: ``Delta > 0``.
      log_sf: ``x -> log P(T > x)`` of the noise.
      centred_loss: ``x -> psi(x + Delta/2) - psi(x - Delta/2)`` at this ``Delta``.
      upper: a point where ``centred_loss(upper) > epsilon`` (bisection bracket).
      num_iterations: bisection steps (static).

    Returns:
      ``log delta(epsilon)``; ``-inf`` where the difference is not positive.

    Example:
      >>> import jax, jax.numpy as jnp, math; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.numerics import log_Q
      >>> ld = log_delta_symmetric_log_concave(  # N(0, 1), Delta = 1: the Gaussian profile
      ...     1.0, 1.0, log_sf=log_Q, centred_loss=lambda x: x, upper=10.0)
      >>> round(math.exp(float(ld)), 6)
      0.126937
    """
    epsilon = jnp.asarray(epsilon)
    half = 0.5 * jnp.asarray(sensitivity)
    x_star = centred_loss_inverse_numeric(epsilon, centred_loss, upper, num_iterations)
    log_s1 = log_sf(x_star - half)
    log_s2 = log_sf(x_star + half)
    t = epsilon + log_s2 - log_s1
    neg = t < 0
    return jnp.where(neg, log_s1 + log1mexp(jnp.where(neg, t, -1.0)), -jnp.inf)
