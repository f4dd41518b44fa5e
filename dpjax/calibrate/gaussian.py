r"""Least Gaussian noise meeting (epsilon, delta): certified bisection on ``mu = Delta_2 / sigma``.

The exact profile (:mod:`dpjax.accounting.gaussian`) decreases as
``mu`` decreases, so the largest feasible ``mu`` (least ``sigma``) is found by
a fixed-iteration bisection on ``log mu`` over ``[-690, 690]`` (``mu`` from
1e-300 to 1e300: every target with ``delta`` in ``(0, 1)`` lies inside), and
the feasible end is returned.  Vectorised over targets; valid for ``delta``
down to 1e-300 (autodp and diffprivlib under-noise below ~1e-12).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.gaussian import log_delta_gaussian, log_delta_gaussian_mu
from dpjax.calibrate._certify import certify_scale, log_target
from dpjax.numerics import bisect_monotone

_LOG_MU_MIN, _LOG_MU_MAX = -690.0, 690.0


def mu_gaussian(epsilon: ArrayLike, delta: ArrayLike, num_iterations: int = 100):
    r"""Largest ``mu`` (GDP parameter) with ``delta_mu(epsilon) <= delta``.

    Feasible means ``delta_mu(epsilon) <= delta (1 - MARGIN)`` (see
    :mod:`dpjax.calibrate._certify`).  Returns ``(mu, status)``; status codes are those of
    :func:`dpjax.numerics.bisect_monotone` (``delta = 0`` is infeasible).
    This is ``mu0`` of problem P2 in inid-noise-laplace-beats-gaussian.
    """
    epsilon, delta = jnp.broadcast_arrays(jnp.asarray(epsilon), jnp.asarray(delta))
    log_level = log_target(delta)

    def feasible(log_mu):
        return (log_delta_gaussian_mu(epsilon, jnp.exp(log_mu)) <= log_level) & (delta > 0)

    res = bisect_monotone(
        feasible,
        good=jnp.full_like(log_level, _LOG_MU_MIN),
        bad=jnp.full_like(log_level, _LOG_MU_MAX),
        num_iterations=num_iterations,
    )
    return jnp.exp(res.good), res.status


@jax.jit
def sigma_gaussian(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike):
    r"""Least ``sigma`` with the exact Gaussian profile ``<= delta`` at ``epsilon``; certified.

    Returns ``(sigma, delta_at_sigma, certified, status)``, broadcast over
    the inputs.  ``sigma = Delta_2 / mu`` is re-checked with
    :func:`dpjax.accounting.gaussian.log_delta_gaussian` and nudged up by a
    few ulps if rounding made it fail.
    """
    epsilon, delta, sensitivity = jnp.broadcast_arrays(
        jnp.asarray(epsilon), jnp.asarray(delta), jnp.asarray(sensitivity)
    )
    mu, status = mu_gaussian(epsilon, delta)
    sigma, log_d, ok = certify_scale(
        lambda s: log_delta_gaussian(epsilon, s, sensitivity), sensitivity / mu, log_target(delta)
    )
    return sigma, jnp.exp(log_d), ok & (status == 0), status
