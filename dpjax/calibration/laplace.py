r"""Least Laplace scale meeting a target.

* One dimension, (epsilon, delta): ``b = Delta / (epsilon - 2 log(1 - delta))``
  (necessary and sufficient; App. F(b) of flipped-huber-mechanism).
* ``dim > 1`` or ``delta = 0``: pure DP with l1 budget, ``b = Delta_1 / epsilon``
  (sufficient for any delta; Table II of flipped-huber-mechanism).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from dpjax.accounting.laplace import ERROR, log_delta_laplace, scale_laplace
from dpjax.certificate import MARGIN, certify_scale, log_target, reported_delta
from dpjax.numerics import float64_kernel


@jax.jit
@float64_kernel
def scale_laplace_1d(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike):
    """Least 1-D Laplace scale for (epsilon, delta); returns ``(b, delta_at_b, certified)``.

    ``b`` is the closed form at the margin-reduced target, re-checked with the exact
    profile (compensated at the pure-DP boundary) and nudged up if rounding made it fail;
    ``delta_at_b`` is the reported upper bound.
    """
    epsilon, delta, sensitivity = jnp.broadcast_arrays(
        jnp.asarray(epsilon), jnp.asarray(delta), jnp.asarray(sensitivity)
    )
    # closed form at the margin-reduced target, then the certificate
    b = scale_laplace(epsilon, delta * (1.0 - MARGIN), sensitivity)
    b, log_d, ok = certify_scale(
        lambda s: log_delta_laplace(epsilon, s, sensitivity), b, log_target(delta)
    )
    return b, reported_delta(log_d, ERROR), ok


@jax.jit
@float64_kernel
def scale_laplace_pure(epsilon: ArrayLike, l1_sensitivity: ArrayLike):
    r"""Pure-DP Laplace scale ``b = Delta_1 / epsilon`` (then ``delta(epsilon) = 0`` in any dimension)."""
    return jnp.asarray(l1_sensitivity) / jnp.asarray(epsilon)
