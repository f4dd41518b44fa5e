r"""Privacy of the Laplace mechanism.

Pure DP: noise ``Lap(b)`` per coordinate with l1-sensitivity ``Delta_1`` is
``(Delta_1 / b)``-DP.  In one dimension the exact (epsilon, delta) profile
(App. F(b) of flipped-huber-mechanism; Balle et al. 2018) is

.. math:: \delta(\epsilon) = \left[1 - \exp\!\left(\tfrac12(\epsilon - \Delta / b)\right)\right]_+ ,

so the necessary and sufficient condition for (epsilon, delta)-DP is
``b >= Delta / (epsilon - 2 log(1 - delta))``.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.numerics import log1mexp


def log_delta_laplace(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` of the 1-D Laplace mechanism; ``-inf`` for ``eps >= Delta / b``."""
    x = 0.5 * (jnp.asarray(epsilon) - jnp.asarray(sensitivity) / jnp.asarray(scale))
    inside = x < 0
    return jnp.where(inside, log1mexp(jnp.where(inside, x, -1.0)), -jnp.inf)


def delta_laplace(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    """``delta(epsilon)`` of the 1-D Laplace mechanism (exact)."""
    return jnp.exp(log_delta_laplace(epsilon, scale, sensitivity))


def epsilon_laplace(delta: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""Least epsilon for the 1-D Laplace mechanism: ``max(0, Delta/b + 2 log(1 - delta))``."""
    eps = jnp.asarray(sensitivity) / jnp.asarray(scale) + 2.0 * jnp.log1p(-jnp.asarray(delta))
    return jnp.maximum(eps, 0.0)


def scale_laplace(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""Least scale for 1-D (epsilon, delta)-DP: ``b = Delta / (epsilon - 2 log(1 - delta))``.

    With ``delta = 0`` this is the pure-DP scale ``Delta / epsilon``
    (``inf`` at ``epsilon = delta = 0``: infeasible).
    """
    denom = jnp.asarray(epsilon) - 2.0 * jnp.log1p(-jnp.asarray(delta))
    return jnp.asarray(sensitivity) / denom
