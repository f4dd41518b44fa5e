r"""Least-variance truncated Laplace noise meeting (epsilon, delta) in one dimension, certified.

Truncated Laplace is a scale family with shape ``c = A / lambda``
(:mod:`dpjax.noise.truncated_laplace`); it is log-concave and symmetric, so
at fixed ``c`` the exact profile (:mod:`dpjax.accounting.truncated_laplace`)
increases with ``mu = Delta / lambda``.  By structure:

1. per shape ``c``, the largest feasible ``mu`` by fixed-iteration bisection on ``log mu``
   (:func:`dpjax.numerics.bisect_bracket`);
2. the variance ``(Delta / mu)^2 v(c)`` minimised over ``log c`` by a zooming grid
   (:func:`dpjax.numerics.zoom_minimize`);
3. the result re-certified (nudged along the scale if rounding made it fail).

GDGK 2020's closed form (``lambda = Delta / epsilon``,
``A = lambda log(1 + (e^epsilon - 1) / (2 delta))``;
:func:`dpjax.accounting.truncated_laplace.truncated_laplace_gdgk`) lies exactly on
the boundary ``delta(epsilon) = delta``; the search returns at most its
variance (slightly less: ``mu`` may exceed ``epsilon`` by ``O(delta)``), certified
with the margin of :mod:`dpjax.certificate`.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from dpjax._batching import call_padded
from dpjax.accounting.truncated_laplace import (
    ERROR,
    log_delta_truncated_laplace,
    log_delta_truncated_laplace_unit,
)
from dpjax.certificate import certify_scale, log_target, reported_delta
from dpjax.noise.truncated_laplace import truncated_laplace_unit_variance
from dpjax.numerics import bisect_bracket, float64_kernel, zoom_minimize

_LOG_MU_MIN = -200.0
C_MIN, C_MAX = 1e-3, 2e3


def _largest_log_mu(epsilon, log_level, c, num_iterations):
    """Bisection on ``log mu`` in ``[-200, log 2c]`` (at ``mu = 2c`` the supports are disjoint)."""
    good, _ = bisect_bracket(
        lambda log_mu: log_delta_truncated_laplace_unit(epsilon, c, jnp.exp(log_mu)) <= log_level,
        jnp.full_like(c, _LOG_MU_MIN),
        jnp.log(2.0 * c),
        num_iterations,
    )
    return good


def _objective(log_c, epsilon, log_level, sensitivity, num_iterations):
    """Least variance at shape ``c = exp(log_c)`` and its scale ``lambda``."""
    c = jnp.exp(log_c)
    scale = sensitivity * jnp.exp(-_largest_log_mu(epsilon, log_level, c, num_iterations))
    return jnp.square(scale) * truncated_laplace_unit_variance(c), scale


@partial(jax.jit, static_argnames=("num_points", "num_rounds", "num_iterations"))
def _search(epsilon, delta, sensitivity, num_points, num_rounds, num_iterations):
    """Zooming grid on ``log c`` per target (:func:`dpjax.numerics.zoom_minimize`):
    ``(c, lambda)``."""
    log_level = log_target(delta)
    grid = jnp.log(C_MIN) + (jnp.log(C_MAX) - jnp.log(C_MIN)) * jnp.linspace(0.0, 1.0, num_points)

    def per_target(eps, lvl, sens):
        best = zoom_minimize(
            lambda lc: _objective(lc, eps, lvl, sens, num_iterations),
            grid,
            num_rounds,
            x0=0.0,
            aux0=1.0,
        )
        return jnp.exp(best.x), best.aux

    return jax.vmap(per_target)(epsilon, log_level, sensitivity)


@float64_kernel
def truncated_laplace_least_variance(
    epsilon: ArrayLike,
    delta: ArrayLike,
    sensitivity: ArrayLike,
    num_points: int = 17,
    num_rounds: int = 10,
    num_iterations: int = 80,
):
    r"""Least-variance ``(scale, bound)`` with the exact 1-D profile ``<= delta`` at ``epsilon``.

    Per shape ``c = A / lambda`` the least scale meeting the exact profile (derived from
    eq. (26) of flipped-huber-mechanism, App. F; :mod:`dpjax.accounting.truncated_laplace`),
    then the least variance over the shape:

    .. math:: \min_c\ \lambda^*(c)^2\, v(c), \qquad
              \lambda^*(c) = \min\{\lambda : \delta_{\lambda, c\lambda}(\epsilon) \le
              \delta (1 - \mathrm{MARGIN})\}

    (module docstring), re-certified at the returned parameters.  ``delta > 0`` is
    required (with ``delta = 0`` no truncation is private; use Laplace).

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array).
      sensitivity: ``Delta > 0`` (array; the three broadcast).
      num_points: static number of shapes per round of the zooming grid.
      num_rounds: static number of rounds.
      num_iterations: static number of halvings of ``log mu`` per shape.

    Returns:
      NumPy arrays ``(scale, bound, variance, delta_at_params, certified)`` shaped like
      the broadcast targets.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> scale, bound, var, delta_at, ok = truncated_laplace_least_variance(0.3, 1e-6, 1.0)
      >>> round(float(var), 2), bool(ok)
      (22.21, True)
    """
    eps, dlt, sens = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.float64) for x in (epsilon, delta, sensitivity))
    )
    shape = eps.shape
    e, d, s = (jnp.asarray(x.ravel()) for x in (eps, dlt, sens))
    c, scale = (
        jnp.asarray(x.ravel())
        for x in call_padded(
            lambda e, d, s: _search(e, d, s, num_points, num_rounds, num_iterations),
            eps,
            dlt,
            sens,
            minimum=4,
        )
    )
    scale, log_d, ok = certify_scale(
        lambda lam: log_delta_truncated_laplace(e, lam, c * lam, s), scale, log_target(d)
    )
    var = jnp.square(scale) * truncated_laplace_unit_variance(c)

    def out(x):
        return np.asarray(x).reshape(shape)

    delta_at = reported_delta(log_d, ERROR)
    return out(scale), out(c * scale), out(var), out(delta_at), out(ok & (d > 0))
