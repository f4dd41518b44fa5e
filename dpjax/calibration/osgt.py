r"""Least-variance OSGT noise meeting (epsilon, delta) in one dimension, certified.

OSGT is a scale family with shape ``k = vartheta / rho`` (:mod:`dpjax.noise.osgt`)
and, being symmetric and log-concave, its exact profile increases with
``m = Delta / rho`` at fixed ``k`` (proof of Lemma 11 of flipped-huber-mechanism).
So, by structure (a monotone search on the scale, a search only over the shape):

1. for each shape ``k`` the largest feasible ``m`` (least ``rho``) is found by a
   bisection on ``log m``;
2. the variance ``(Delta / m)^2 v(k)`` is minimised over ``log k`` by a
   zooming grid: ``num_points`` shapes per round, the bracket shrunk to the two
   neighbours of the best one, ``num_rounds`` rounds (a factor ``(num_points - 1) / 2``
   per round; the optimum may sit on a kink, so no smoothness is assumed);
3. at the chosen shape the least ``rho`` is bisected again with the exact kernel
   :func:`dpjax.accounting.osgt.log_delta_osgt`, and returned only where that kernel
   was evaluated there and met ``delta (1 - MARGIN)`` (certificate).

Steps 1-2 run on the host in float64 NumPy over every target and shape at once
(:mod:`dpjax.calibration.host_shape`; nothing to compile), step 3 calls one compiled
kernel.  :func:`osgt_variance_by_shape` keeps the traced form of step 1 (one jitted,
vmapped call over a shape grid).

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
from dpjax.calibration.gaussian import calibrate_sigma
from dpjax.calibration.host_shape import least_certified_scale, log_delta_lemma11, search_shape
from dpjax.certificate import log_target, reported_delta, scale_is_certified
from dpjax.noise.osgt import osgt_unit_variance
from dpjax.noise.osgt import osgt_unit_variance_host as unit_variance
from dpjax.numerics import bisect_bracket, float64_kernel
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2
from dpjax.numerics.export_cache import exported_jit
from dpjax.numerics.lazy_scipy import special

_LOG_M_MIN, _LOG_M_MAX = -200.0, 40.0
#: the host search's private end: ``m = e^-700 ~ 1e-304`` (the profile is below the total
#: variation ``~m``), so every ``delta`` down to ``~1e-300`` is in the bracket
_HOST_LOG_M_MIN = -700.0
_SQRT2 = 1.4142135623730951
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
    good = bisect_bracket(
        lambda log_m: log_delta_osgt_unit(epsilon, k, jnp.exp(log_m)) <= log_level,
        jnp.full_like(k, _LOG_M_MIN),
        jnp.full_like(k, _LOG_M_MAX),
        num_iterations,
    ).good
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


#: the exact profile (App. F(c)) for the final bisection, on padded host batches
#: (call_padded): a scalar target and a small grid share one compiled program
_exact_profile = partial(call_padded, exported_jit(log_delta_osgt))


def _host_log_delta(eps, log_k, log_m):
    r"""The unit profile through Lemma 11 (host steer; :mod:`dpjax.calibration.host_shape`).

    ``P(T > t) = Q(k + t) / (2 Q(k)) = e^{-t (k + t/2)} R(k + t) / (2 R(k))`` (``R`` the
    Mills ratio, through ``erfcx``) and the centred loss ``t (m + 2k)`` for
    ``|t| < m / 2``, ``m (|t| + k)`` beyond, so
    ``x* = eps / (m + 2k)`` below the kink ``eps = (m + 2k) m / 2`` and ``eps / m - k`` above;
    the density ``phi(k + t) / (2 Q(k))`` for small ``m``.
    """
    k, m = np.exp(log_k), np.exp(log_m)
    log_rk = np.log(special.erfcx(k / _SQRT2))

    def log_sf(t):  # log Q(k + t) - log Q(k) - log 2 via the scaled erfc (no cancellation)
        return -t * (k + 0.5 * t) + np.log(special.erfcx((k + t) / _SQRT2)) - log_rk - LOG_2

    log_2qk = LOG_2 + special.log_ndtr(-k)

    def log_pdf(t):  # the density phi(k + t) / (2 Q(k))
        return -0.5 * np.square(k + t) - HALF_LOG_2PI - log_2qk

    x = np.where(eps < 0.5 * (m + 2.0 * k) * m, eps / (m + 2.0 * k), eps / m - k)
    return log_delta_lemma11(eps, m, log_sf, x, log_pdf)


def _log_m_range(log_k):
    """``log m``: private at ``-700`` (:data:`_HOST_LOG_M_MIN`), not at ``40``."""
    return np.full(log_k.shape, _HOST_LOG_M_MIN), np.full(log_k.shape, _LOG_M_MAX)


def _gaussian_end(eps, dlt, sens, level, found):
    r"""``(k, rho, log delta, certified, variance)``: the search's, or the Gaussian member
    ``k = 0`` (``vartheta = 0``: ``O(0, rho^2) = N(0, rho^2)``, variance ``rho^2``) where that
    is certified by the exact kernel and has the smaller variance."""
    sigma = calibrate_sigma(eps, dlt, sens)[0]
    rho, log_d, ok = least_certified_scale(
        lambda r: np.asarray(_exact_profile(eps, 0.0 * r, r, sens)), sigma, level
    )
    ok = ok & scale_is_certified(rho, log_d, level)
    with np.errstate(over="ignore"):  # rho past 1e154 (epsilon 0, delta 1e-300): +inf
        variance = np.square(rho)
    take = ok & (variance < found[4])
    gauss = (np.zeros_like(rho), rho, log_d, ok, variance)
    return tuple(np.where(take, g, f) for g, f in zip(gauss, found, strict=True))


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
    ``k in [K_MIN, K_MAX]`` and the Gaussian end ``k = 0`` (``vartheta = 0``) is calibrated
    too; the variance decreases towards the Laplace limit ``k -> inf`` in some regimes,
    where the least variance at ``k <= K_MAX`` is within ~1e-6 relative of that limit's
    (:func:`dpjax.calibration.members.laplace_limit_variance`).  With
    ``vartheta_range = (lo, hi)`` and ``rho_range = (lo, hi)`` the box-constrained optimum
    is returned
    (``feasible`` False where the box holds no private parameter).

    Per shape ``k`` the least ``rho`` meeting the exact profile (App. F(c) of
    flipped-huber-mechanism; increasing in ``Delta / rho`` by the proof of Lemma 11),
    then the least variance over the shape:

    .. math:: \min_k\ \rho^*(k)^2\, v(k), \qquad
              \rho^*(k) = \min\{\rho : \delta_{k\rho, \rho}(\epsilon) \le
              \delta (1 - \mathrm{MARGIN})\}

    (module docstring).  The search runs on the host (:mod:`dpjax.calibration.host_shape`:
    the profile through Lemma 11 with the survival ``Q(k + t) / (2 Q(k))`` and the loss
    inverse of App. F(c)), vectorised over the targets and shapes; at the chosen shape the
    least ``rho`` is then bisected with the exact kernel
    (:func:`dpjax.accounting.osgt.log_delta_osgt`, compiled once) and certified there
    (``certified``).

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array).
      sensitivity: ``Delta > 0`` (array; the three broadcast).
      vartheta_range: ``(lo, hi)`` box on ``vartheta``, or ``None``.
      rho_range: ``(lo, hi)`` box on ``rho``, or ``None``.
      num_points: number of shapes per round of the zooming grid.
      num_rounds: number of rounds.
      num_iterations: number of halvings of ``log m`` per shape.

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
    constrained = vartheta_range is not None or rho_range is not None
    if constrained:
        th = vartheta_range if vartheta_range is not None else (0.0, np.inf)
        rh = rho_range if rho_range is not None else (1e-300, np.inf)
        if not (0 < th[0] < th[1]) or not (0 < rh[0] < rh[1]):
            raise ValueError(
                "vartheta_range and rho_range must be (lo, hi) with 0 < lo < hi, "
                f"got {th!r}, {rh!r}"
            )
        box = tuple(float(x) for x in (*th, *rh))
        lk_range = (np.log(box[0] / box[3]), np.log(box[1] / box[2]))
    else:
        box, lk_range = _NO_BOX, (np.log(K_MIN), np.log(K_MAX))
    level = np.asarray(log_target(dlt), np.float64)
    s_col = sens.reshape(-1, 1)

    def boxed(log_k, log_m):
        """``(rho, ok)``: the least private ``rho``, raised into the box (module docstring)."""
        k = np.exp(log_k)
        rho = np.maximum(np.maximum(s_col * np.exp(-log_m), box[2]), box[0] / k)
        return rho, (rho <= box[3]) & (k * rho <= box[1] * (1 + 1e-12))

    def value(log_k, log_m):
        rho, ok = boxed(log_k, log_m)
        return np.where(ok, 2.0 * np.log(rho) + np.log(unit_variance(np.exp(log_k))), np.inf)

    grid = lk_range[0] + (lk_range[1] - lk_range[0]) * np.linspace(0.0, 1.0, num_points)
    log_k, log_m, found = search_shape(
        _host_log_delta, None, np.broadcast_to(grid, (eps.size, num_points)), eps.ravel(),
        level.ravel(), _log_m_range, num_rounds, num_iterations, value=value,
    )
    k = np.exp(log_k).reshape(eps.shape)
    least = (sens.ravel() * np.exp(-log_m)).reshape(eps.shape)

    def log_delta_at(r):
        return np.asarray(_exact_profile(eps, k * r, r, sens))

    rho, log_d, ok = least_certified_scale(log_delta_at, least, level)
    floor = np.maximum(box[2], box[0] / k)  # the box may ask for more than rho*
    raised = floor > rho
    if np.any(raised):
        log_d = np.where(raised, log_delta_at(np.where(raised, floor, rho)), log_d)
        rho = np.where(raised, floor, rho)
    ok = ok & found.reshape(eps.shape) & scale_is_certified(rho, log_d, level)
    with np.errstate(over="ignore"):  # rho past 1e154: an infinite variance, as it is in float64
        variance = np.where(found.reshape(eps.shape), np.square(rho) * unit_variance(k), np.inf)
    if constrained:
        ok = ok & (rho <= box[3]) & (k * rho <= box[1] * (1 + 1e-12))
    else:  # the Gaussian end k = 0 itself (the log-k grid stops at K_MIN), certified likewise
        k, rho, log_d, ok, variance = _gaussian_end(eps, dlt, sens, level, (k, rho, log_d, ok,
                                                                            variance))
    return OSGTCalibration(
        vartheta=k * rho,
        rho=rho,
        variance=variance,
        delta_at_params=np.asarray(reported_delta(log_d, ERROR)),
        certified=ok,
        feasible=found.reshape(eps.shape),
    )
