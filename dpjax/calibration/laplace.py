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
    r"""Least 1-D Laplace scale for ``(epsilon, delta)``, certified.

    The closed form (App. F(b) of flipped-huber-mechanism; necessary and sufficient) at the
    margin-reduced target

    .. math:: b = \frac{\Delta}{\epsilon - 2 \log(1 - \delta (1 - \mathrm{MARGIN}))},

    re-checked with the exact profile (compensated at the pure-DP boundary) and nudged up
    if rounding made it fail (:func:`dpjax.certificate.certify_scale`).

    Args:
      epsilon: target ``epsilon >= 0``.
      delta: target ``delta`` in ``[0, 1)``.
      sensitivity: ``Delta > 0``.  All three broadcast.

    Returns:
      ``(b, delta_at_b, certified)``; ``delta_at_b`` is the reported upper bound.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> b, delta_at, ok = scale_laplace_1d(1.0, 0.0, 1.0)
      >>> round(float(b), 12), bool(ok)
      (1.0, True)
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
    r"""Pure-DP Laplace scale ``b = Delta_1 / epsilon`` (``delta(epsilon) = 0`` in any dimension).

    The l1 budget of Table II of flipped-huber-mechanism (Theorem 5 of
    inid-noise-laplace-beats-gaussian with equal scales):

    .. math:: b = \Delta_1 / \epsilon .

    Args:
      epsilon: target ``epsilon > 0``.
      l1_sensitivity: ``Delta_1 > 0`` (broadcast with ``epsilon``).

    Returns:
      The scale ``b``.
    """
    return jnp.asarray(l1_sensitivity) / jnp.asarray(epsilon)
