r"""Least Laplace scale meeting a target.

* One dimension, (epsilon, delta): ``b = Delta / (epsilon - 2 log(1 - delta))``
  (necessary and sufficient; App. F(b) of flipped-huber-mechanism).
* ``dim > 1`` or ``delta = 0``: pure DP with l1 budget, ``b = Delta_1 / epsilon``
  (sufficient for any delta; Table II of flipped-huber-mechanism).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from dpjax.accounting.laplace import (
    ERROR,
    log_delta_laplace,
    log_delta_laplace_host,
    scale_laplace,
)
from dpjax.certificate import (
    MARGIN,
    certify_scale,
    certify_scale_host,
    log_target,
    log_target_host,
    reported_delta,
    reported_delta_host,
)
from dpjax.numerics import float64_kernel

#: Most targets :func:`scale_laplace_1d_host` takes (its gap is exact rational arithmetic,
#: one Python operation per target); larger batches take :func:`scale_laplace_1d`.
HOST_MAX_SIZE = 256


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


@float64_kernel
def scale_laplace_1d_host(epsilon, delta, sensitivity):
    r""":func:`scale_laplace_1d` on the host (NumPy, exact rational gap): no compiled program.

    The same closed form at the margin-reduced target,

    .. math:: b = \frac{\Delta}{\epsilon - 2 \log(1 - \delta (1 - \mathrm{MARGIN}))},

    re-checked with :func:`dpjax.accounting.laplace.log_delta_laplace_host` and nudged up
    where rounding made it fail (:func:`dpjax.certificate.certify_scale_host`, the nudges of
    :func:`dpjax.certificate.certify_scale`); the reported delta is padded by the kernel's
    ``ERROR`` (:func:`dpjax.certificate.reported_delta_host`).

    Args:
      epsilon: target ``epsilon >= 0`` (finite).
      delta: target ``delta`` in ``[0, 1)``.
      sensitivity: ``Delta > 0``.  All three broadcast; NumPy arrays.

    Returns:
      ``(b, delta_at_b, certified)`` as NumPy arrays; entries whose closed form is not a
      finite positive scale are not certified.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> b, delta_at, ok = scale_laplace_1d_host(1.0, 0.0, 1.0)
      >>> float(b), bool(ok)
      (1.0, True)
    """
    eps, dlt, sens = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (epsilon, delta, sensitivity))
    )
    with np.errstate(divide="ignore"):
        b0 = sens / (eps - 2.0 * np.log1p(-(dlt * (1.0 - MARGIN))))
    usable = np.isfinite(b0) & (b0 > 0)
    b0 = np.where(usable, b0, 1.0)
    b, log_d, ok = certify_scale_host(
        lambda s: log_delta_laplace_host(eps, s, sens), b0, log_target_host(dlt)
    )
    with np.errstate(invalid="ignore"):
        delta_at = reported_delta_host(log_d, ERROR * (1.0 + np.abs(log_d)))
    return b, delta_at, ok & usable


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
