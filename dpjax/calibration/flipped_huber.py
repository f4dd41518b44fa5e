r"""Least-variance flipped Huber parameters meeting (epsilon, delta), certified.

FH is a scale family: for a fixed shape ``b = alpha / gamma`` the exact 1-D
profile (Theorem 3) decreases as ``gamma`` grows (it increases in
``Delta / gamma``; proof of Lemma 11), and the variance is
``gamma^2 v(b)`` (eq. (11)).  So (flipped-huber-mechanism, Sec. V; a monotone
search on the scale, a search only over the shape):

1. for every ``b`` of a fixed grid (0 and 63 log-spaced points in
   ``[1e-3, 1e9]``: both limit members, Gaussian at ``b = 0`` and Laplace as
   ``b -> inf``, are reached -- at ``b = 1e9`` the variance is within ~1e-8 relative of
   the Laplace limit's closed form), bisect ``log gamma`` for the least feasible ``gamma``
   (``vmap`` over the grid, fixed iterations; :func:`dpjax.numerics.bisect_bracket`);
2. the least variance sits on a kink of ``b -> gamma*(b)^2 v(b)`` (where the
   plateau level ``alpha Delta / gamma^2 ~ eps`` and the Gaussian-tail
   constraint bind together), so a grid point lands slightly above it: the
   search zooms into the two grid cells next to the grid minimum with an even
   grid of the same size, ``num_stages`` times, and keeps the best point
   (:func:`dpjax.numerics.zoom_minimize`);
3. certify ``gamma`` at the chosen ``b`` (:func:`dpjax.certificate.certify_scale`:
   the profile re-evaluated at the returned parameters is ``<= delta (1 - 1e-10)``).

The K-dim sufficient condition (Theorem 8) is calibrated the same way.  Its
bound is not proven monotone in ``gamma`` for fixed ``b``; the bisection
returns its feasible end regardless, so every returned point is certified
(only optimality would suffer), and the tests check monotonicity numerically
on the region used.  Every target in a batch is solved in one ``vmap``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from dpjax._batching import call_padded
from dpjax.accounting.flipped_huber import ERROR, log_delta_flipped_huber_standard, shape_constants
from dpjax.accounting.flipped_huber_kdim import BOUND_ERROR, _log_delta_sufficient_theta
from dpjax.accounting.gaussian import a_of_sigma
from dpjax.calibration.members import name_member
from dpjax.certificate import certify_scale, log_target, reported_delta
from dpjax.noise.flipped_huber import standard_variance, theta_over_gamma
from dpjax.numerics import bisect_bracket, float64_kernel, zoom_minimize

#: Shapes ``b = alpha / gamma`` searched: 0 (the Gaussian member) and log-spaced up to
#: 1e9, where FH is the Laplace limit member to ~1e-8 in variance (a grid ending at 200
#: stopped 1.7% above it for Theorem 8 at K = 10, eps = 0.7, delta = 1e-7).
B_GRID = np.concatenate([[0.0], np.geomspace(1e-3, 1e9, 63)])
B_MAX = float(B_GRID[-1])


def flipped_huber_member(alpha, gamma) -> np.ndarray:
    """Name the member of each calibrated ``FH(alpha, gamma^2)``: ``"gaussian"`` (``b = 0``),
    ``"laplace"`` (``b`` at the grid's Laplace end) or ``"interior"``
    (:func:`dpjax.calibration.members.name_member`)."""
    b = np.asarray(alpha, float) / np.asarray(gamma, float)
    return name_member(b, 0.0, B_MAX, "gaussian", "laplace")
#: gamma in [e^-720, e^720] x reference sensitivity: every float64 target (delta >= 2.2e-308
#: at epsilon = 0 needs gamma ~ Delta / delta; epsilon <= 1.8e308 needs Delta / gamma <= 2e154)
_LOG_GAMMA_SPAN = 720.0


def _solve_one(prepare, fn, epsilon, delta, ref, num_stages, bisect_iters):
    """Calibrate one target; ``fn(eps, prepare(b), gamma) -> log delta``.

    Stage 0 bisects ``log gamma`` at every point of :data:`B_GRID`; each later
    stage does the same on an even grid of the same size spanning the two
    cells around the previous minimum (a bracketing refinement on both sides
    of the kink, 32x narrower per stage).  All stages share one traced kernel.
    The bisection does not evaluate its ends (one traced predicate: short
    compiles); the returned end is checked by the certificate.
    """
    log_t = log_target(delta)
    lg_hi = jnp.log(ref) + _LOG_GAMMA_SPAN
    lg_lo = jnp.log(ref) - _LOG_GAMMA_SPAN
    grid0 = jnp.asarray(B_GRID)

    def log_variance(b):
        """``(log gamma*(b)^2 v(b), log gamma*(b))``; ``inf`` where ``gamma*`` never moved
        (infeasible in the bracket)."""
        consts = prepare(b)
        lg, _ = bisect_bracket(
            lambda lg: fn(epsilon, consts, jnp.exp(lg)) <= log_t, lg_hi, lg_lo, bisect_iters
        )
        f = 2.0 * lg + jnp.log(standard_variance(b))
        return jnp.where(lg < lg_hi, f, jnp.inf), lg

    best = zoom_minimize(log_variance, grid0, num_stages, x0=grid0[0], aux0=lg_hi)
    b = best.x
    consts = prepare(b)
    gamma, log_d, ok = certify_scale(
        lambda g: fn(epsilon, consts, g), jnp.exp(best.aux), log_t, max_nudges=0
    )
    return b * gamma, gamma, log_d, ok & jnp.isfinite(gamma)


def _calibrate(prepare, fn, ref, error, epsilon, delta, num_stages, bisect_iters):
    """Every target of the batch in one ``vmap``: ``(alpha, gamma, variance, delta_at, ok)``."""
    solve = functools.partial(
        _solve_one, prepare, fn, ref=ref, num_stages=num_stages, bisect_iters=bisect_iters
    )
    alpha, gamma, log_delta_at, ok = jax.vmap(solve)(epsilon, delta)
    variance = jnp.square(gamma) * standard_variance(alpha / gamma)
    return alpha, gamma, variance, reported_delta(log_delta_at, error), ok


def _batched(core, epsilon, delta, *args, **iters):
    """``core`` on the flat targets padded to a power of two (at least 4: few compiles)."""
    return call_padded(lambda e, d: core(e, d, *args, **iters), epsilon, delta, minimum=4)


@functools.partial(jax.jit, static_argnames=("num_stages", "bisect_iters"))
def _core_1d(epsilon, delta, sensitivity, num_stages, bisect_iters):
    def fn(eps, consts, gamma):
        a = a_of_sigma(eps, gamma, sensitivity)  # the Gaussian cases' argument, compensated
        return log_delta_flipped_huber_standard(eps, consts.b, sensitivity / gamma, consts, a=a)

    return _calibrate(
        shape_constants, fn, sensitivity, ERROR, epsilon, delta, num_stages, bisect_iters
    )


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

    (module docstring).  Vectorised over broadcast ``epsilon``/``delta`` (one jitted,
    vmapped call; batch sizes are padded to powers of two).  Needs x64.

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array, broadcast with ``epsilon``).
      sensitivity: ``Delta > 0`` (scalar).
      num_stages: static number of rounds of the shape search.
      bisect_iters: static number of halvings of ``log gamma`` per shape.

    Returns:
      NumPy arrays ``(alpha, gamma, variance, delta_at_params, certified)``;
      ``certified`` is false where no certificate could be produced (the caller raises).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> alpha, gamma, var, delta_at, ok = calibrate_flipped_huber_1d(0.3, 1e-6, 1.0)
      >>> round(float(var), 2), bool(ok)
      (22.21, True)
    """
    return _batched(
        _core_1d,
        epsilon,
        delta,
        jnp.asarray(sensitivity, dtype=float),
        num_stages=num_stages,
        bisect_iters=bisect_iters,
    )


class _SuffConsts(NamedTuple):
    b: jax.Array
    theta_l1_over_l2: jax.Array


@functools.partial(jax.jit, static_argnames=("num_stages", "bisect_iters"))
def _core_sufficient(epsilon, delta, dim, l1, l2, linf, num_stages, bisect_iters):
    def prepare(b):
        return _SuffConsts(b, theta_over_gamma(b) * l1 / l2)

    def fn(eps, consts, gamma):
        return _log_delta_sufficient_theta(
            eps, consts.b * gamma, gamma, dim, l2, linf, consts.theta_l1_over_l2
        )

    return _calibrate(prepare, fn, l2, BOUND_ERROR, epsilon, delta, num_stages, bisect_iters)


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
      num_stages: static number of rounds of the shape search.
      bisect_iters: static number of halvings of ``log gamma`` per shape.

    Returns:
      As :func:`calibrate_flipped_huber_1d`; ``delta_at_params`` is the Theorem 8 bound
      at the returned parameters.
    """
    f = lambda x: jnp.asarray(x, dtype=float)  # noqa: E731
    return _batched(
        _core_sufficient,
        epsilon,
        delta,
        f(dim),
        f(l1),
        f(l2),
        f(linf),
        num_stages=num_stages,
        bisect_iters=bisect_iters,
    )
