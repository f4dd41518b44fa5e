r"""Least-variance truncated Laplace noise meeting (epsilon, delta) in one dimension, certified.

Truncated Laplace is a scale family with shape ``c = A / lambda``
(:mod:`dpjax.noise.truncated_laplace`); it is log-concave and symmetric, so
at fixed ``c`` the exact profile (:mod:`dpjax.accounting.truncated_laplace`)
increases with ``mu = Delta / lambda``.  By structure:

1. per shape ``c``, the largest feasible ``mu`` by bisection on ``log mu``;
2. the variance ``(Delta / mu)^2 v(c)`` minimised over ``log c`` by a zooming grid;
3. at the chosen shape the least ``lambda`` bisected again with the exact kernel
   (:func:`dpjax.accounting.truncated_laplace.log_delta_truncated_laplace`) and returned
   only where that kernel was evaluated and met ``delta (1 - MARGIN)`` (certificate).

Steps 1-2 run on the host in float64 NumPy over every target and shape at once
(:mod:`dpjax.calibration.host_shape`; nothing to compile), step 3 calls one compiled kernel.

GDGK 2020's closed form (``lambda = Delta / epsilon``,
``A = lambda log(1 + (e^epsilon - 1) / (2 delta))``;
:func:`dpjax.accounting.truncated_laplace.truncated_laplace_gdgk`) lies exactly on
the boundary ``delta(epsilon) = delta``; the search returns at most its
variance (slightly less: ``mu`` may exceed ``epsilon`` by ``O(delta)``), certified
with the margin of :mod:`dpjax.certificate`.
"""

from __future__ import annotations

import functools

import numpy as np
from jax.typing import ArrayLike
from scipy import special

from dpjax._batching import call_padded
from dpjax.accounting.truncated_laplace import ERROR, log_delta_truncated_laplace
from dpjax.calibration.host_shape import least_certified_scale, log_delta_lemma11, search_shape
from dpjax.certificate import log_target, reported_delta, scale_is_certified
from dpjax.numerics import float64_kernel
from dpjax.numerics.export_cache import exported_jit

#: the search's private end ``mu = e^-690 ~ 1.4e-300`` (the profile is below the total
#: variation ``~mu``; the exact kernel resolves ``mu`` down to about there): targets down to
#: ``delta ~ 1e-300`` are in the bracket at shapes ``c >~ 1``
_LOG_MU_MIN = -690.0
#: largest ``log`` of a returned parameter (``lambda``, ``A``): shapes needing more are not
#: searched (near ``delta ~ 1e-300`` the uniform end asks for ``A / c`` beyond float64)
_LOG_PARAM_MAX = 700.0
_LOG2 = 0.6931471805599453
#: shape range ``c = A / lambda``: ``c -> 0`` is the uniform member (variance ``A^2 / 3`` to
#: ``O(c)``), ``c = 2e3`` the Laplace member to ``O(e^{-c})``; the range reaches further
#: where the target asks for it (:func:`shape_range`)
C_MIN, C_MAX = 1e-7, 2e3


def shape_range(epsilon, delta) -> tuple[np.ndarray, np.ndarray]:
    r"""``(log c_min, log c_max)`` of the shape search for each target.

    .. math:: c_{\max} = \max\big(C_{\max},\ 2\,(\epsilon + \log(1/\delta))\big)

    GDGK's optimum ``c = log(1 + (e^eps - 1) / (2 delta)) <= eps + log(1 / delta)`` (for
    ``delta <= 1/2``) grows with ``epsilon``: beyond ``epsilon ~ C_MAX / 2`` the range grows
    with it (twice the optimum, so the zooming grid brackets it).

    Args:
      epsilon: targets ``epsilon`` (array).
      delta: targets ``delta`` (broadcast).

    Returns:
      ``log c`` bounds, shaped like the broadcast targets.
    """
    eps, dlt = np.broadcast_arrays(np.asarray(epsilon, np.float64), np.asarray(delta, np.float64))
    with np.errstate(divide="ignore", over="ignore"):
        reach = 2.0 * (eps - np.log(dlt))  # inf at delta = 0 (never certified): C_MAX
    reach = np.where(np.isfinite(reach), np.minimum(reach, 1e300), C_MAX)
    return np.full(eps.shape, np.log(C_MIN)), np.log(np.maximum(C_MAX, reach))
#: the exact profile for the final bisection, on padded host batches (call_padded): a
#: scalar target and a small grid share one compiled program
_exact_profile = functools.partial(call_padded, exported_jit(log_delta_truncated_laplace))


def _host_log_delta(eps, log_c, log_mu):
    r"""The unit profile through Lemma 11 (host steer; :mod:`dpjax.calibration.host_shape`).

    ``P(T > t) = (e^{-t} - e^{-c}) / (2 (1 - e^{-c}))`` on ``[0, c]``; the centred loss is
    ``2t`` for ``|t| <= mu / 2``, ``mu`` beyond and ``+inf`` past ``c - mu / 2``, so
    ``x* = c - mu / 2`` for ``eps >= mu`` and ``min(eps / 2, c - mu / 2)`` below; the
    density ``e^{-t} / (2 (1 - e^{-c}))`` for small ``mu``.
    """
    c, mu = np.exp(log_c), np.exp(log_mu)
    log_norm = _LOG2 + np.log(-np.expm1(-c))

    def log_sf(t):
        inside = t < c
        gap = np.where(inside, c - t, 1.0)
        return np.where(inside, -t + np.log(-np.expm1(-gap)) - log_norm, -np.inf)

    def log_pdf(t):  # the density e^{-t} / (2 (1 - e^{-c})) on [0, c] (x* = c - mu / 2 may
        return np.where(t <= c, -t - log_norm, -np.inf)  # round to c)

    x = np.where(eps >= mu, c - 0.5 * mu, np.minimum(0.5 * eps, c - 0.5 * mu))
    return log_delta_lemma11(eps, mu, log_sf, x, log_pdf)


def _log_mu_range(log_c):
    """``log mu``: private at ``-690``, not at ``log 2c`` (disjoint supports)."""
    return np.full(log_c.shape, _LOG_MU_MIN), np.log(2.0) + log_c


def _host_log_variance(log_c):
    """``log v(c)``, ``v(c) = 2 P(3, c) / (1 - e^{-c})``, in NumPy
    (:func:`dpjax.noise.truncated_laplace.truncated_laplace_unit_variance`)."""
    c = np.exp(log_c)
    return np.log(2.0 * special.gammainc(3.0, c) / -np.expm1(-c))


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
    required (with ``delta = 0`` no truncation is private; use Laplace).  Shapes whose
    ``lambda`` or ``A`` would exceed ``e^700`` are left out of the search.

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array).
      sensitivity: ``Delta > 0`` (array; the three broadcast).
      num_points: number of shapes per round of the zooming grid.
      num_rounds: number of rounds.
      num_iterations: number of halvings of ``log mu`` per shape.

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
    level = np.asarray(log_target(dlt), np.float64)
    lo, hi = (x.reshape(-1, 1) for x in shape_range(eps, dlt))
    grid = lo + (hi - lo) * np.linspace(0.0, 1.0, num_points)
    log_sens = np.log(sens.reshape(-1, 1))

    def value(log_c, log_mu):
        """``log`` variance, ``inf`` where ``lambda`` or ``A = c lambda`` would overflow."""
        fits = log_sens - log_mu + np.maximum(log_c, 0.0) <= _LOG_PARAM_MAX
        return np.where(fits, -2.0 * log_mu + _host_log_variance(log_c), np.inf)

    log_c, log_mu, found = search_shape(
        _host_log_delta, None, grid,
        eps.ravel(), level.ravel(), _log_mu_range, num_rounds, num_iterations, value=value,
    )
    c = np.exp(log_c).reshape(eps.shape)

    def log_delta_at(lam):
        return np.asarray(_exact_profile(eps, lam, c * lam, sens))

    least = (sens.ravel() * np.exp(-log_mu)).reshape(eps.shape)
    scale, log_d, ok = least_certified_scale(log_delta_at, least, level)
    ok = ok & found.reshape(eps.shape) & scale_is_certified(scale, log_d, level) & (dlt > 0)
    with np.errstate(over="ignore"):  # inf beyond float64 (delta ~ 1e-300): honest
        variance = np.square(scale) * np.exp(_host_log_variance(np.log(c)))
    return scale, c * scale, variance, np.asarray(reported_delta(log_d, ERROR)), ok
