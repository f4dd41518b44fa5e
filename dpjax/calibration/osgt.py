r"""Least-variance OSGT noise meeting (epsilon, delta) in one dimension, certified.

OSGT is a scale family with shape ``k = vartheta / rho`` (:mod:`dpjax.noise.osgt`)
and, being symmetric and log-concave, its exact profile increases with
``m = Delta / rho`` at fixed ``k`` (proof of Lemma 11 of flipped-huber-mechanism).
So, by structure (DESIGN.md "Monotone searches"):

1. for each shape ``k`` the largest feasible ``m`` (least ``rho``) is found by a
   fixed-iteration bisection on ``log m`` (:func:`dpjax.numerics.bisect_monotone`);
2. the variance ``(Delta / m)^2 v(k)`` is minimised over ``log k`` by a
   zooming grid: ``num_points`` shapes per round (vmapped), the bracket shrunk
   to the two neighbours of the best one, ``num_rounds`` rounds (a factor
   ``(num_points - 1) / 2`` per round; the optimum may sit on a kink, so no
   smoothness is assumed);
3. the result is re-evaluated with :func:`dpjax.accounting.osgt.log_delta_osgt`
   and nudged up along the scale if rounding made it fail (certificate).

:func:`osgt_least_variance` also solves the problem restricted to a box of
``(vartheta, rho)`` (the paper's Sec. V-A grid searched
``[0.02, 150] x [0.02, 50]``): at fixed ``k`` the variance grows with ``rho``,
so the constrained optimum takes ``rho = max(rho_min(k), rho_lo, vartheta_lo / k)``
where that is ``<= min(rho_hi, vartheta_hi / k)``.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.osgt import ERROR, log_delta_osgt, log_delta_osgt_unit
from dpjax.certificate import certify_scale, log_target, reported_delta
from dpjax.noise.osgt import osgt_unit_variance
from dpjax.numerics import float64_kernel

_LOG_M_MIN, _LOG_M_MAX = -200.0, 40.0
#: shape range of the unconstrained search: k in [K_MIN, K_MAX]
K_MIN, K_MAX = 1e-4, 1e4


class OSGTCalibration(NamedTuple):
    """Result of :func:`osgt_least_variance` (arrays broadcast over the targets).

    ``certified`` says the profile at ``(vartheta, rho)`` is ``<= delta (1 - MARGIN)``;
    ``feasible`` is False where the (constrained) problem has no solution.
    """

    vartheta: Array
    rho: Array
    variance: Array
    delta_at_params: Array
    certified: Array
    feasible: Array


def _largest_log_m(epsilon, log_level, k, num_iterations):
    """Fixed-iteration bisection on ``log m`` (one profile evaluation per step).

    The bracket ``[-200, 40]`` is valid for every ``delta >= 1e-80`` (at
    ``m = e^-200`` the profile is below the total variation ``~m``); the end
    result is re-certified by the caller anyway.
    """

    def body(_, carry):
        good, bad = carry
        mid = 0.5 * (good + bad)
        ok = log_delta_osgt_unit(epsilon, k, jnp.exp(mid)) <= log_level
        return jnp.where(ok, mid, good), jnp.where(ok, bad, mid)

    init = (jnp.full_like(k, _LOG_M_MIN), jnp.full_like(k, _LOG_M_MAX))
    return jax.lax.fori_loop(0, num_iterations, body, init)[0]


def _objective(log_k, epsilon, log_level, sensitivity, box, num_iterations):
    """Least variance at shape ``k = exp(log_k)`` and its ``rho`` (``inf`` if infeasible)."""
    k = jnp.exp(log_k)
    rho = sensitivity * jnp.exp(-_largest_log_m(epsilon, log_level, k, num_iterations))
    th_lo, th_hi, rho_lo, rho_hi = box
    rho = jnp.maximum(jnp.maximum(rho, rho_lo), th_lo / k)
    ok = jnp.isfinite(rho) & (rho <= rho_hi) & (k * rho <= th_hi * (1 + 1e-12))
    rho = jnp.minimum(rho, jnp.minimum(rho_hi, th_hi / k))
    var = jnp.square(rho) * osgt_unit_variance(k)
    return jnp.where(ok, var, jnp.inf), rho


@partial(jax.jit, static_argnames=("num_points", "num_rounds", "num_iterations"))
def _search(epsilon, delta, sensitivity, box, lk_range, num_points, num_rounds, num_iterations):
    """Zooming grid on ``log k``: each round evaluates ``num_points`` shapes (vmapped) and
    shrinks the bracket to the neighbours of the best one (one copy of the kernel in the
    compiled loop, so compilation stays cheap)."""
    log_level = log_target(delta)
    lk_lo, lk_hi = lk_range
    frac = jnp.linspace(0.0, 1.0, num_points)

    def per_target(eps, lvl, sens):
        def round_(_, s):
            lo, hi, best_lk, best_var, best_rho = s
            pts = lo + (hi - lo) * frac
            var, rho = jax.vmap(lambda lk: _objective(lk, eps, lvl, sens, box, num_iterations))(pts)
            i = jnp.argmin(var)
            better = var[i] < best_var
            new_lo = pts[jnp.maximum(i - 1, 0)]
            new_hi = pts[jnp.minimum(i + 1, num_points - 1)]
            return (
                new_lo,
                new_hi,
                jnp.where(better, pts[i], best_lk),
                jnp.where(better, var[i], best_var),
                jnp.where(better, rho[i], best_rho),
            )

        init = (
            lk_lo + 0.0 * eps,
            lk_hi + 0.0 * eps,
            lk_lo + 0.0 * eps,
            jnp.inf + 0.0 * eps,
            1.0 + 0.0 * eps,
        )
        _, _, lk, var, rho = jax.lax.fori_loop(0, num_rounds, round_, init)
        return jnp.exp(lk), rho, var

    return jax.vmap(per_target)(epsilon, log_level, sensitivity)


def _pad(x: np.ndarray) -> np.ndarray:
    """Pad a flat batch to a power of two (>= 4) by repeating its last element, so that
    batches of similar size share one compilation."""
    size = max(4, 1 << max(x.size - 1, 0).bit_length())
    return np.concatenate([x, np.repeat(x[-1:], size - x.size)])


@float64_kernel
def osgt_least_variance(
    epsilon: ArrayLike,
    delta: ArrayLike,
    sensitivity: ArrayLike,
    vartheta_range: tuple[float, float] | None = None,
    rho_range: tuple[float, float] | None = None,
    num_points: int = 17,
    num_rounds: int = 10,
    num_iterations: int = 80,
) -> OSGTCalibration:
    r"""Least-variance OSGT parameters with the exact 1-D profile ``<= delta`` at ``epsilon``.

    Unconstrained (both ranges ``None``) the shape is searched over
    ``k in [K_MIN, K_MAX]``; the variance decreases towards the
    Laplace limit ``k -> inf`` in some regimes, so the returned value is then
    the least variance at ``k <= K_MAX`` (an upper bound on the infimum, reached
    within ~1/K_MAX relative).  With ``vartheta_range = (lo, hi)`` and
    ``rho_range = (lo, hi)`` the box-constrained optimum is returned
    (``feasible`` False where the box holds no private parameter).

    Returns an :class:`OSGTCalibration`; every returned parameter pair is
    re-certified against the exact profile (``certified``).
    """
    eps, dlt, sens = (np.asarray(x, dtype=np.float64) for x in (epsilon, delta, sensitivity))
    eps, dlt, sens = np.broadcast_arrays(eps, dlt, sens)
    shape = eps.shape
    constrained = vartheta_range is not None or rho_range is not None
    if constrained:
        th = vartheta_range if vartheta_range is not None else (0.0, np.inf)
        rh = rho_range if rho_range is not None else (1e-300, np.inf)
        if not (0 < th[0] < th[1]) or not (0 < rh[0] < rh[1]):
            raise ValueError(
                "vartheta_range and rho_range must be (lo, hi) with 0 < lo < hi, "
                f"got {th!r}, {rh!r}"
            )
        box = tuple(jnp.asarray(float(x)) for x in (*th, *rh))
        lk_range = (jnp.log(box[0] / box[3]), jnp.log(box[1] / box[2]))
    else:
        box = tuple(jnp.asarray(x) for x in (0.0, np.inf, 0.0, np.inf))
        lk_range = (jnp.log(K_MIN), jnp.log(K_MAX))
    n = eps.size
    k, rho, var = _search(
        jnp.asarray(_pad(eps.ravel())),
        jnp.asarray(_pad(dlt.ravel())),
        jnp.asarray(_pad(sens.ravel())),
        box,
        lk_range,
        num_points,
        num_rounds,
        num_iterations,
    )
    k, rho, var = k[:n], rho[:n], var[:n]
    feasible = jnp.isfinite(var)
    rho = jnp.where(feasible, rho, 1.0)
    e, d, s = (jnp.asarray(x.ravel()) for x in (eps, dlt, sens))
    rho, log_d, ok = certify_scale(lambda r: log_delta_osgt(e, k * r, r, s), rho, log_target(d))
    if constrained:
        ok = ok & (rho <= box[3]) & (k * rho <= box[1] * (1 + 1e-12))
    vartheta = k * rho
    var = jnp.square(rho) * osgt_unit_variance(k)

    def out(x):
        return np.asarray(x).reshape(shape)

    return OSGTCalibration(
        vartheta=out(vartheta),
        rho=out(rho),
        variance=out(jnp.where(feasible, var, jnp.inf)),
        delta_at_params=out(reported_delta(log_d, ERROR)),
        certified=out(ok & feasible),
        feasible=out(feasible),
    )
