r"""Least-variance flipped Huber parameters meeting (epsilon, delta), certified.

FH is a scale family: for a fixed shape ``b = alpha / gamma`` the exact 1-D
profile (Theorem 3) decreases as ``gamma`` grows (it increases in
``Delta / gamma``; proof of Lemma 11), and the variance is
``gamma^2 v(b)`` (eq. (11)).  So (flipped-huber-mechanism, Sec. V; a monotone
search on the scale, a search only over the shape):

1. for every ``b`` of a fixed grid (0 and 63 log-spaced points in
   ``[1e-3, 1e9]``: both limit members, Gaussian at ``b = 0`` and Laplace as
   ``b -> inf``, are reached -- at ``b = 1e9`` the variance is within ~1e-8 relative of
   the Laplace limit's closed form), bisect ``log gamma`` for the least feasible ``gamma``;
2. the least variance sits on a kink of ``b -> gamma*(b)^2 v(b)`` (where the
   plateau level ``alpha Delta / gamma^2 ~ eps`` and the Gaussian-tail
   constraint bind together), so a grid point lands slightly above it: the
   search zooms into the two grid cells next to the grid minimum with an even
   grid of the same size, ``num_stages`` times, and keeps the best point;
3. at the chosen ``b``, bisect ``gamma`` again with the certified compiled kernel (the
   exact profile, eq. (13), or Theorem 8's bound) and return the least ``gamma`` at
   which that kernel was evaluated and met ``delta (1 - MARGIN)``
   (:func:`dpjax.calibration.host_shape.least_certified_scale`,
   :func:`dpjax.certificate.scale_is_certified`).

Steps 1-2 run on the host in float64 NumPy over every target and shape at once
(:mod:`dpjax.calibration.host_shape`): the 1-D profile through Lemma 11 with the noise's
survival function (eq. (10)) and loss inverse (eq. (15)), Theorem 8 through its
Gaussian hockey stick.  Nothing there is compiled; step 3 calls one compiled kernel,
jitted exactly as the mechanism's re-check jits it, so a first call compiles the
profile once.

Targets the host steer cannot lead to a certificate (it rounds where the profile is
below float64's resolution, e.g. ``epsilon = 0`` at tiny ``delta``) are searched again
with compiled kernels only (:mod:`dpjax.calibration.flipped_huber_traced`); none is
returned uncertified.

The K-dim sufficient condition (Theorem 8) is calibrated the same way.  Its
bound is not proven monotone in ``gamma`` for fixed ``b``; the bisections
return their feasible end regardless, so every returned point is certified
(only optimality would suffer), and the tests check monotonicity numerically
on the region used.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
from jax.typing import ArrayLike

from dpjax._batching import call_padded
from dpjax.accounting.flipped_huber import (
    ERROR,
    log_delta_flipped_huber,
)
from dpjax.accounting.flipped_huber_kdim import BOUND_ERROR, log_delta_flipped_huber_sufficient
from dpjax.calibration.host_shape import least_certified_scale, log_delta_lemma11, search_shape
from dpjax.certificate import log_target, reported_delta, scale_is_certified
from dpjax.noise.flipped_huber.standard import (
    log_half_masses_host,
    standard_log_sf_host,
    standard_variance_host,
)
from dpjax.numerics import float64_kernel, log1mexp_host
from dpjax.numerics.constants import LOG_2
from dpjax.numerics.export_cache import exported_jit
from dpjax.numerics.lazy_scipy import special

#: Shapes ``b = alpha / gamma`` searched: 0 (the Gaussian member) and log-spaced up to
#: 1e9, where FH is the Laplace limit member to ~1e-8 in variance (a grid ending at 200
#: stopped 1.7% above it for Theorem 8 at K = 10, eps = 0.7, delta = 1e-7).
B_GRID = np.concatenate([[0.0], np.geomspace(1e-3, 1e9, 63)])
B_MAX = float(B_GRID[-1])


#: gamma in [e^-720, e^720] x reference sensitivity: every float64 target (delta >= 2.2e-308
#: at epsilon = 0 needs gamma ~ Delta / delta; epsilon <= 1.8e308 needs Delta / gamma <= 2e154)
LOG_GAMMA_SPAN = 720.0


#: the exact profile of Theorem 3, jitted (traced program kept across processes,
#: dpjax/numerics/export_cache.py) and called on padded host batches (call_padded) like the
#: mechanism's re-check (same function, same argument types): the search's final bisection
#: and that re-check share one compiled program for a scalar target and a small grid
_exact_profile = functools.partial(call_padded, exported_jit(log_delta_flipped_huber))
#: Theorem 8's bound, likewise jitted as the mechanism's re-check jits it
_theorem8_bound = jax.jit(log_delta_flipped_huber_sufficient)


def _host_x_star(eps: np.ndarray, b: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``x*`` of eq. (15) (the centred loss's inverse at ``eps``) in standard units, NumPy."""
    bs = np.where(b > 0, b, 1.0)
    c2 = (b > 0) & (b > 0.5 * D) & (eps < np.minimum(2.0 * b - D, D) * b)
    lo3 = 0.5 * (np.square(np.maximum(2.0 * b, D)) - 2.0 * b * D)
    nu1 = 0.5 * (np.square(np.maximum(D - b, 0.0)) + 2.0 * b * D)
    c1 = (b < 0.5 * D) & (eps < 0.5 * (D - 2.0 * b) * D)
    c3 = ~c1 & ~c2 & (eps >= lo3) & (eps < nu1)
    c4 = ~c1 & ~c2 & ~c3 & (eps >= nu1) & (eps < 0.5 * (D + 2.0 * b) * D)
    j_plus = np.sqrt(2.0 * (eps + b * D)) - 0.5 * D - b
    j_minus = np.sqrt(2.0 * np.maximum(eps - b * D, 0.0)) - 0.5 * D + b
    return np.where(c2, eps / (2.0 * bs), np.where(c3, j_plus, np.where(c4, j_minus, eps / D)))


def _host_log_delta(eps, b, log_D):
    """The 1-D profile through Lemma 11 (host steer; module docstring)."""
    D = np.exp(log_D)
    return log_delta_lemma11(
        eps, D, lambda t: standard_log_sf_host(t, b), _host_x_star(eps, b, D)
    )


def _log_d_range(b):
    """``log(Delta / gamma)``: private at ``-720``, not at ``+720`` (:data:`LOG_GAMMA_SPAN`)."""
    return np.full(b.shape, -LOG_GAMMA_SPAN), np.full(b.shape, LOG_GAMMA_SPAN)


def _search_and_settle(
    steer, exact, fallback, epsilon, delta, ref, error, num_stages, bisect_iters
):
    """Steps 1-3 of the module docstring: ``(alpha, gamma, variance, delta_at, certified)``.

    ``steer(eps, b, log m)``: the host profile at ``gamma = ref / m``; ``exact(eps, alpha,
    gamma)``: the certified compiled kernel the result is bisected and certified with;
    ``fallback(eps, delta)``: the traced search (:mod:`.flipped_huber_traced`) for the
    targets the host steer could not lead to a certificate.
    """
    eps, dlt = np.broadcast_arrays(np.asarray(epsilon, np.float64), np.asarray(delta, np.float64))
    shape = eps.shape
    level = np.asarray(log_target(dlt), np.float64)
    grid = np.broadcast_to(B_GRID, (eps.size, B_GRID.size))
    with np.errstate(all="ignore"):
        b, log_m, found = search_shape(
            steer, lambda b: np.log(standard_variance_host(b)), grid, eps.ravel(), level.ravel(),
            _log_d_range, num_stages, bisect_iters,
        )
    b = b.reshape(shape)
    gamma0 = np.broadcast_to(np.asarray(ref, np.float64), shape) * np.exp(-log_m).reshape(shape)
    gamma, log_d, ok = least_certified_scale(
        lambda g: np.asarray(exact(eps, b * g, g)), gamma0, level
    )
    ok = ok & found.reshape(shape) & scale_is_certified(gamma, log_d, level)
    variance = np.square(gamma) * standard_variance_host(b)
    out = [np.array(x) for x in (b * gamma, gamma, variance, reported_delta(log_d, error), ok)]
    if not np.all(ok):  # the host steer could not resolve these targets: search them traced
        miss = ~ok
        again = fallback(eps[miss], dlt[miss], num_stages=num_stages, bisect_iters=bisect_iters)
        for arr, new in zip(out, again, strict=True):
            arr[miss] = np.asarray(new)
    return tuple(out)


@float64_kernel
def calibrate_flipped_huber_1d(
    epsilon: ArrayLike,
    delta: ArrayLike,
    sensitivity: ArrayLike,
    num_stages: int = 5,
    bisect_iters: int = 52,
):
    r"""Least-variance ``(alpha, gamma)`` with the exact 1-D profile (eq. (13)) ``<= delta``.

    Theorem 3 of flipped-huber-mechanism (necessary and sufficient), the variance of
    eq. (11) in the shape ``b = alpha / gamma``:

    .. math:: \min_b\ \gamma^*(b)^2\, v(b), \qquad
              \gamma^*(b) = \min\{\gamma : \delta^{(1)}_{FH}(\epsilon; b\gamma, \gamma)
              \le \delta (1 - \mathrm{MARGIN})\}

    The shape search runs on the host (:mod:`dpjax.calibration.host_shape`: the profile
    through Lemma 11 with the noise's survival function, eq. (10), and the loss inverse,
    eq. (15)), vectorised over the targets and :data:`B_GRID`; at the chosen shape
    ``gamma*`` is then bisected with the exact kernel
    (:func:`dpjax.accounting.flipped_huber.log_delta_flipped_huber`, compiled once) and
    certified there.  Needs x64.

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array, broadcast with ``epsilon``).
      sensitivity: ``Delta > 0`` (scalar).
      num_stages: number of rounds of the shape search.
      bisect_iters: number of halvings of ``log gamma`` per shape.

    Returns:
      NumPy arrays ``(alpha, gamma, variance, delta_at_params, certified)``;
      ``certified`` is false where no certificate could be produced (the caller raises).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> alpha, gamma, var, delta_at, ok = calibrate_flipped_huber_1d(0.3, 1e-6, 1.0)
      >>> round(float(var), 2), bool(ok)
      (22.21, True)
    """
    # cycle: dpjax.calibration.flipped_huber <-> dpjax.calibration.flipped_huber_traced
    from dpjax.calibration import flipped_huber_traced as traced

    return _search_and_settle(
        _host_log_delta,
        lambda e, a, g: _exact_profile(e, a, g, sensitivity),
        lambda e, d, **it: traced.traced_1d(e, d, sensitivity, **it),
        epsilon, delta, sensitivity, ERROR, num_stages, bisect_iters,
    )


def _host_log_delta_theorem8(eps, b, log_m, dim, l1, l2, linf):
    r"""Theorem 8's bound at ``gamma = Delta_2 / m`` (host steer), in NumPy.

    .. math:: \log\big(Q(a_1) - e^{\epsilon} Q(a_2)\big),\quad
              a_{1,2} = \frac{\gamma\epsilon}{\Delta_2} \mp \Big(\frac{\Delta_2}{2\gamma}
              + \frac{K R_\Delta(\alpha)}{2\gamma\Delta_2}\Big)
              \ (+\,\frac{\theta\Delta_1}{\gamma\Delta_2}\ \text{in}\ a_2),

    ``0`` where ``K R_Delta(alpha) > 2 gamma^2 eps - Delta_2^2``;
    ``theta / gamma = Q^{-1}(sqrt(pi/2) / omega)`` (eq. (22)).
    """
    gamma = l2 * np.exp(-log_m)
    alpha = b * gamma
    kr = dim * np.where(alpha < linf, alpha * alpha, (2.0 * alpha - linf) * linf)
    log_a, log_b = log_half_masses_host(b)
    log_omega = LOG_2 + np.logaddexp(log_a, log_b) + 0.5 * b * b
    theta = -special.ndtri_exp(0.5 * np.log(np.pi / 2.0) - log_omega)
    shift = l2 / (2.0 * gamma) + kr / (2.0 * gamma * l2)
    a1 = gamma * eps / l2 - shift
    a2 = gamma * eps / l2 + shift + theta * l1 / l2
    l1q, l2q = special.log_ndtr(-a1), special.log_ndtr(-a2)
    out = l1q + log1mexp_host(np.where(l2q == -np.inf, -np.inf, eps + l2q - l1q))
    ok = kr <= 2.0 * gamma * gamma * eps - l2 * l2
    return np.where(ok & ~np.isnan(out), np.minimum(out, 0.0), 0.0)


@float64_kernel
def calibrate_flipped_huber_sufficient(
    epsilon: ArrayLike,
    delta: ArrayLike,
    dim: ArrayLike,
    l1: ArrayLike,
    l2: ArrayLike,
    linf: ArrayLike,
    num_stages: int = 5,
    bisect_iters: int = 52,
):
    r"""Least per-coordinate variance ``(alpha, gamma)`` meeting Theorem 8 in ``dim`` dimensions.

    The sufficient condition of Theorem 8 of flipped-huber-mechanism (its bound
    :func:`dpjax.accounting.flipped_huber_kdim.log_delta_flipped_huber_sufficient`, with
    ``theta`` of eq. (22)) in place of the exact profile, minimised over the shape as in
    :func:`calibrate_flipped_huber_1d`:

    .. math:: \min_b\ \gamma^*(b)^2\, v(b), \qquad
              \gamma^*(b) = \min\{\gamma : \delta_{\mathrm{Thm\,8}}(\epsilon; b\gamma,
              \gamma) \le \delta (1 - \mathrm{MARGIN})\} .

    The bound is not proven monotone in ``gamma``; the bisection keeps its feasible end
    and the result is certified regardless (module docstring).

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array, broadcast with ``epsilon``).
      dim: number of coordinates ``K``.
      l1: ``Delta_1``.
      l2: ``Delta_2``.
      linf: the per-coordinate sensitivity ``Delta``.
      num_stages: number of rounds of the shape search.
      bisect_iters: number of halvings of ``log gamma`` per shape.

    Returns:
      As :func:`calibrate_flipped_huber_1d`; ``delta_at_params`` is the Theorem 8 bound
      at the returned parameters.
    """
    # cycle: dpjax.calibration.flipped_huber <-> dpjax.calibration.flipped_huber_traced
    from dpjax.calibration import flipped_huber_traced as traced

    k, d1, d2, dinf = (float(x) for x in (dim, l1, l2, linf))
    return _search_and_settle(
        lambda e, b, lm: _host_log_delta_theorem8(e, b, lm, k, d1, d2, dinf),
        lambda e, a, g: _theorem8_bound(e, a, g, dim, l1, l2, linf),
        lambda e, d, **it: traced.traced_sufficient(e, d, dim, l1, l2, linf, **it),
        epsilon, delta, d2, BOUND_ERROR, num_stages, bisect_iters,
    )
