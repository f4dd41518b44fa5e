r"""Least-variance OSGT noise meeting (epsilon, delta) in one dimension, certified.

OSGT is a scale family with shape ``k = vartheta / rho`` (:mod:`dpjax.noise.osgt`)
and, being symmetric and log-concave, its exact profile increases with
``m = Delta / rho`` at fixed ``k`` (proof of Lemma 11 of flipped-huber-mechanism).
So, by structure (a monotone search on the scale, a search only over the shape):

1. for each shape ``k`` the largest feasible ``m`` (least ``rho``) is found by a
   fixed-iteration bisection on ``log m`` (:func:`dpjax.numerics.bisect_bracket`);
2. the variance ``(Delta / m)^2 v(k)`` is minimised over ``log k`` by a
   zooming grid (:func:`dpjax.numerics.zoom_minimize`): ``num_points`` shapes per
   round (vmapped), the bracket shrunk to the two neighbours of the best one,
   ``num_rounds`` rounds (a factor ``(num_points - 1) / 2`` per round; the optimum
   may sit on a kink, so no smoothness is assumed);
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

from dpjax._batching import call_padded
from dpjax.accounting.osgt import ERROR, log_delta_osgt, log_delta_osgt_unit
from dpjax.certificate import certify_scale, log_target, reported_delta
from dpjax.noise.osgt import osgt_unit_variance
from dpjax.numerics import bisect_bracket, float64_kernel, zoom_minimize

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
    good, _ = bisect_bracket(
        lambda log_m: log_delta_osgt_unit(epsilon, k, jnp.exp(log_m)) <= log_level,
        jnp.full_like(k, _LOG_M_MIN),
        jnp.full_like(k, _LOG_M_MAX),
        num_iterations,
    )
    return good


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


#: The box of the unconstrained search: ``(vartheta_lo, vartheta_hi, rho_lo, rho_hi)``.
_NO_BOX = (0.0, np.inf, 0.0, np.inf)


@partial(jax.jit, static_argnames=("num_points", "num_rounds", "num_iterations"))
def _search(epsilon, delta, sensitivity, box, lk_range, num_points, num_rounds, num_iterations):
    """Zooming grid on ``log k`` per target (:func:`dpjax.numerics.zoom_minimize`; one copy
    of the kernel in the compiled loop, so compilation stays cheap): ``(k, rho, var)``."""
    log_level = log_target(delta)
    lk_lo, lk_hi = lk_range
    grid = lk_lo + (lk_hi - lk_lo) * jnp.linspace(0.0, 1.0, num_points)

    def per_target(eps, lvl, sens):
        best = zoom_minimize(
            lambda lk: _objective(lk, eps, lvl, sens, box, num_iterations),
            grid,
            num_rounds,
            x0=lk_lo,
            aux0=1.0,
        )
        return jnp.exp(best.x), best.aux, best.value

    return jax.vmap(per_target)(epsilon, log_level, sensitivity)


@partial(jax.jit, static_argnames=("num_iterations",))
@float64_kernel
def osgt_variance_by_shape(
    epsilon: ArrayLike,
    delta: ArrayLike,
    sensitivity: ArrayLike,
    log_k: ArrayLike,
    num_iterations: int = 80,
) -> tuple[Array, Array]:
    r"""Least OSGT variance at each fixed shape ``k = vartheta / rho``, and its ``rho``.

    At fixed ``k`` the exact 1-D profile (App. F(c) of flipped-huber-mechanism) increases
    in ``m = Delta / rho`` (proof of Lemma 11), so the least ``rho`` is a bisection on
    ``log m``, and the variance is

    .. math:: \mathrm{Var} = \rho^2\, v(k), \qquad \rho = \Delta / m^*(k),

    with ``v`` the unit variance of :func:`dpjax.noise.osgt.osgt_unit_variance`: the curve
    the unconstrained shape search of :func:`osgt_least_variance` minimises (not
    re-certified).

    Args:
      epsilon: target ``epsilon`` (scalar).
      delta: target ``delta`` (scalar).
      sensitivity: ``Delta > 0`` (scalar).
      log_k: 1-D array of shapes ``log k``.
      num_iterations: static number of halvings of ``log m``.

    Returns:
      ``(variance, rho)`` at each shape (``inf`` variance where infeasible).
    """
    box = tuple(jnp.asarray(x) for x in _NO_BOX)
    level = log_target(delta)
    return jax.vmap(lambda lk: _objective(lk, epsilon, level, sensitivity, box, num_iterations))(
        jnp.asarray(log_k)
    )


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

    Per shape ``k`` the least ``rho`` meeting the exact profile (App. F(c) of
    flipped-huber-mechanism; increasing in ``Delta / rho`` by the proof of Lemma 11),
    then the least variance over the shape:

    .. math:: \min_k\ \rho^*(k)^2\, v(k), \qquad
              \rho^*(k) = \min\{\rho : \delta_{k\rho, \rho}(\epsilon) \le
              \delta (1 - \mathrm{MARGIN})\}

    (module docstring).  Every returned parameter pair is re-certified against the
    exact profile (``certified``).

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array).
      sensitivity: ``Delta > 0`` (array; the three broadcast).
      vartheta_range: ``(lo, hi)`` box on ``vartheta``, or ``None``.
      rho_range: ``(lo, hi)`` box on ``rho``, or ``None``.
      num_points: static number of shapes per round of the zooming grid.
      num_rounds: static number of rounds.
      num_iterations: static number of halvings of ``log m`` per shape.

    Returns:
      An :class:`OSGTCalibration` of NumPy arrays shaped like the broadcast targets.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> cal = osgt_least_variance(3.0, 1e-6, 1.0)
      >>> bool(cal.certified), bool(cal.delta_at_params <= 1e-6)
      (True, True)
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
        box = tuple(jnp.asarray(x) for x in _NO_BOX)
        lk_range = (jnp.log(K_MIN), jnp.log(K_MAX))
    k, rho, var = (
        jnp.asarray(x.ravel())
        for x in call_padded(
            lambda e, d, s: _search(e, d, s, box, lk_range, num_points, num_rounds, num_iterations),
            eps,
            dlt,
            sens,
            minimum=4,
        )
    )
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
