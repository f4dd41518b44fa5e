r"""The traced (compiled) flipped Huber shape x scale search: the fallback of the host search.

:mod:`dpjax.calibration.flipped_huber` steers its search on the host (float64 NumPy).
Where that steer cannot resolve the profile -- e.g. ``epsilon = 0`` with ``delta`` far
below float64's resolution of ``1 - e^{-x}``, where the host profile rounds to 0 and would
call any shape private -- the targets it could not certify are searched here entirely
with the certified compiled kernels, as every call was before the host search existed:

1. for every ``b`` of :data:`~dpjax.calibration.flipped_huber.B_GRID`, bisect ``log gamma``
   with the exact kernel (``vmap`` over the grid; :func:`dpjax.numerics.bisect_bracket`);
2. zoom into the cells next to the minimum of ``gamma*(b)^2 v(b)``
   (:func:`dpjax.numerics.zoom_minimize`);
3. certify ``gamma`` at the chosen ``b`` (:func:`dpjax.certificate.certify_scale`).

Slower to compile (one program per entry point), exact in every step.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from dpjax._batching import call_padded
from dpjax.accounting.flipped_huber import ERROR, log_delta_flipped_huber_standard, shape_constants
from dpjax.accounting.flipped_huber_kdim import BOUND_ERROR, log_delta_sufficient_theta
from dpjax.accounting.gaussian import a_of_sigma
from dpjax.calibration.flipped_huber import B_GRID, LOG_GAMMA_SPAN
from dpjax.certificate import certify_scale, log_target, reported_delta
from dpjax.noise.flipped_huber import standard_variance, theta_over_gamma
from dpjax.numerics import bisect_bracket, float64_kernel, zoom_minimize


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
    lg_hi = jnp.log(ref) + LOG_GAMMA_SPAN
    lg_lo = jnp.log(ref) - LOG_GAMMA_SPAN
    grid0 = jnp.asarray(B_GRID)

    def log_variance(b):
        """``(log gamma*(b)^2 v(b), log gamma*(b))``; ``inf`` where ``gamma*`` never moved
        (infeasible in the bracket)."""
        consts = prepare(b)
        lg = bisect_bracket(
            lambda lg: fn(epsilon, consts, jnp.exp(lg)) <= log_t, lg_hi, lg_lo, bisect_iters
        ).good
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


class _SuffConsts(NamedTuple):
    b: jax.Array
    theta_l1_over_l2: jax.Array


@functools.partial(jax.jit, static_argnames=("num_stages", "bisect_iters"))
def _core_sufficient(epsilon, delta, dim, l1, l2, linf, num_stages, bisect_iters):
    def prepare(b):
        return _SuffConsts(b, theta_over_gamma(b) * l1 / l2)

    def fn(eps, consts, gamma):
        return log_delta_sufficient_theta(
            eps, consts.b * gamma, gamma, dim, l2, linf, consts.theta_l1_over_l2
        )

    return _calibrate(prepare, fn, l2, BOUND_ERROR, epsilon, delta, num_stages, bisect_iters)


@float64_kernel
def traced_1d(epsilon: ArrayLike, delta: ArrayLike, sensitivity, num_stages=5, bisect_iters=52):
    r"""The exact 1-D calibration (eq. (13)) searched with compiled kernels only.

    Same problem and result as :func:`dpjax.calibration.flipped_huber.calibrate_flipped_huber_1d`
    (module docstring).

    Args:
      epsilon: flat targets ``epsilon``.
      delta: flat targets ``delta``.
      sensitivity: ``Delta > 0``.
      num_stages: rounds of the shape search.
      bisect_iters: halvings of ``log gamma`` per shape.

    Returns:
      NumPy ``(alpha, gamma, variance, delta_at_params, certified)``.
    """
    return _batched(
        _core_1d, epsilon, delta, jnp.asarray(sensitivity, dtype=float),
        num_stages=num_stages, bisect_iters=bisect_iters,
    )


@float64_kernel
def traced_sufficient(
    epsilon: ArrayLike, delta: ArrayLike, dim, l1, l2, linf, num_stages=5, bisect_iters=52
):
    r"""Theorem 8's calibration searched with compiled kernels only (module docstring).

    Args:
      epsilon: flat targets ``epsilon``.
      delta: flat targets ``delta``.
      dim: ``K``.
      l1: ``Delta_1``.
      l2: ``Delta_2``.
      linf: ``Delta``.
      num_stages: rounds of the shape search.
      bisect_iters: halvings of ``log gamma`` per shape.

    Returns:
      NumPy ``(alpha, gamma, variance, delta_at_params, certified)``.
    """
    f = lambda x: jnp.asarray(x, dtype=float)  # noqa: E731
    return _batched(
        _core_sufficient, epsilon, delta, f(dim), f(l1), f(l2), f(linf),
        num_stages=num_stages, bisect_iters=bisect_iters,
    )
