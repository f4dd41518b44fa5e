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

from dpjax.numerics import float64_kernel, log1mexp

_SPLIT = 134217729.0  # 2^27 + 1, Veltkamp splitting constant for float64


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _two_product(a, b):
    """``a * b = p + e`` exactly (Dekker 1971), without an FMA."""
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, e


@float64_kernel
def pure_gap(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``epsilon - Delta / b`` with a compensated quotient.

    Near the pure-DP boundary the two terms cancel, and the profile
    ``1 - exp(gap / 2)`` is then decided by the last bits of ``b``:
    with ``q = fl(Delta / b)`` and the exact remainder ``r = Delta - q b``
    (Dekker's two-product), ``gap = (epsilon - q) - r / b`` is accurate to a
    few ulps of the *gap* (``epsilon - q`` is exact by Sterbenz's lemma when
    the terms are within a factor 2 of each other).
    """
    epsilon, scale, sensitivity = jnp.asarray(epsilon), jnp.asarray(scale), jnp.asarray(sensitivity)
    q = sensitivity / scale
    p, e = _two_product(q, scale)
    remainder = (sensitivity - p) - e
    return (epsilon - q) - remainder / scale


@float64_kernel
def log_delta_laplace(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` of the 1-D Laplace mechanism; ``-inf`` for ``eps >= Delta / b``.

    Uses :func:`pure_gap`, so the value is accurate even when ``delta`` is
    tiny (``b`` within a few ulps of the pure-DP scale).
    """
    x = 0.5 * pure_gap(epsilon, scale, sensitivity)
    inside = x < 0
    return jnp.where(inside, log1mexp(jnp.where(inside, x, -1.0)), -jnp.inf)


@float64_kernel
def delta_laplace(epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    """``delta(epsilon)`` of the 1-D Laplace mechanism (exact)."""
    return jnp.exp(log_delta_laplace(epsilon, scale, sensitivity))


@float64_kernel
def epsilon_laplace(delta: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""Least epsilon for the 1-D Laplace mechanism: ``max(0, Delta/b + 2 log(1 - delta))``."""
    eps = jnp.asarray(sensitivity) / jnp.asarray(scale) + 2.0 * jnp.log1p(-jnp.asarray(delta))
    return jnp.maximum(eps, 0.0)


@float64_kernel
def scale_laplace(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""Least scale for 1-D (epsilon, delta)-DP: ``b = Delta / (epsilon - 2 log(1 - delta))``.

    With ``delta = 0`` this is the pure-DP scale ``Delta / epsilon``
    (``inf`` at ``epsilon = delta = 0``: infeasible).
    """
    denom = jnp.asarray(epsilon) - 2.0 * jnp.log1p(-jnp.asarray(delta))
    return jnp.asarray(sensitivity) / denom
