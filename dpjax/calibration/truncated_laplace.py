r"""Least-variance truncated Laplace noise meeting (epsilon, delta) in one dimension, certified.

Truncated Laplace is a scale family with shape ``c = A / lambda``
(:mod:`dpjax.noise.truncated_laplace`); it is log-concave and symmetric, so
at fixed ``c`` the exact profile (:mod:`dpjax.accounting.truncated_laplace`)
increases with ``mu = Delta / lambda``.  By structure:

1. per shape ``c``, the largest feasible ``mu`` by fixed-iteration bisection on ``log mu``;
2. the variance ``(Delta / mu)^2 v(c)`` minimised over ``log c`` by a zooming grid;
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

from dpjax.accounting.truncated_laplace import (
    ERROR,
    log_delta_truncated_laplace,
    log_delta_truncated_laplace_unit,
)
from dpjax.calibration.osgt import _pad
from dpjax.certificate import certify_scale, log_target, reported_delta
from dpjax.noise.truncated_laplace import truncated_laplace_unit_variance
from dpjax.numerics import float64_kernel

_LOG_MU_MIN = -200.0
C_MIN, C_MAX = 1e-3, 2e3


def _largest_log_mu(epsilon, log_level, c, num_iterations):
    """Bisection on ``log mu`` in ``[-200, log 2c]`` (at ``mu = 2c`` the supports are disjoint)."""

    def body(_, carry):
        good, bad = carry
        mid = 0.5 * (good + bad)
        ok = log_delta_truncated_laplace_unit(epsilon, c, jnp.exp(mid)) <= log_level
        return jnp.where(ok, mid, good), jnp.where(ok, bad, mid)

    init = (jnp.full_like(c, _LOG_MU_MIN), jnp.log(2.0 * c))
    return jax.lax.fori_loop(0, num_iterations, body, init)[0]


def _objective(log_c, epsilon, log_level, sensitivity, num_iterations):
    c = jnp.exp(log_c)
    scale = sensitivity * jnp.exp(-_largest_log_mu(epsilon, log_level, c, num_iterations))
    return jnp.square(scale) * truncated_laplace_unit_variance(c), scale


@partial(jax.jit, static_argnames=("num_points", "num_rounds", "num_iterations"))
def _search(epsilon, delta, sensitivity, num_points, num_rounds, num_iterations):
    log_level = log_target(delta)
    frac = jnp.linspace(0.0, 1.0, num_points)

    def per_target(eps, lvl, sens):
        def round_(_, s):
            lo, hi, best_lc, best_var, best_scale = s
            pts = lo + (hi - lo) * frac
            var, scale = jax.vmap(lambda lc: _objective(lc, eps, lvl, sens, num_iterations))(pts)
            i = jnp.argmin(var)
            better = var[i] < best_var
            return (
                pts[jnp.maximum(i - 1, 0)],
                pts[jnp.minimum(i + 1, num_points - 1)],
                jnp.where(better, pts[i], best_lc),
                jnp.where(better, var[i], best_var),
                jnp.where(better, scale[i], best_scale),
            )

        z = 0.0 * eps
        init = (jnp.log(C_MIN) + z, jnp.log(C_MAX) + z, z, jnp.inf + z, 1.0 + z)
        _, _, lc, _, scale = jax.lax.fori_loop(0, num_rounds, round_, init)
        return jnp.exp(lc), scale

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

    Returns NumPy arrays ``(scale, bound, variance, delta_at_params, certified)``
    shaped like the broadcast targets.  ``delta > 0`` is required (with
    ``delta = 0`` no truncation is private; use Laplace).
    """
    eps, dlt, sens = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.float64) for x in (epsilon, delta, sensitivity))
    )
    shape = eps.shape
    e, d, s = (jnp.asarray(x.ravel()) for x in (eps, dlt, sens))
    n = eps.size
    c, scale = _search(
        *(jnp.asarray(_pad(x.ravel())) for x in (eps, dlt, sens)),
        num_points,
        num_rounds,
        num_iterations,
    )
    c, scale = c[:n], scale[:n]
    scale, log_d, ok = certify_scale(
        lambda lam: log_delta_truncated_laplace(e, lam, c * lam, s), scale, log_target(d)
    )
    var = jnp.square(scale) * truncated_laplace_unit_variance(c)

    def out(x):
        return np.asarray(x).reshape(shape)

    delta_at = reported_delta(log_d, ERROR)
    return out(scale), out(c * scale), out(var), out(delta_at), out(ok & (d > 0))
