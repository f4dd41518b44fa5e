r"""Least-variance flipped Huber parameters meeting (epsilon, delta), certified.

FH is a scale family: for a fixed shape ``b = alpha / gamma`` the exact 1-D
profile (Theorem 3) decreases as ``gamma`` grows (it increases in
``Delta / gamma``; proof of Lemma 11), and the variance is
``gamma^2 v(b)``.  So (flipped-huber-mechanism, Sec. V; DESIGN.md
"Monotone searches"):

1. for every ``b`` of a fixed grid (0 and 127 log-spaced points in
   ``[1e-3, 200]``), bisect ``log gamma`` for the least feasible ``gamma``
   (``vmap`` over the grid, fixed iterations);
2. the least variance sits on a kink of ``b -> gamma*(b)^2 v(b)`` (where the
   plateau level ``alpha Delta / gamma^2 ~ eps`` and the Gaussian-tail
   constraint bind together), so a grid point lands slightly above it:
   golden-section search on each of the two grid cells next to the grid
   minimum (each a unimodal bracket), keep the best;
3. bisect ``gamma`` at the chosen ``b`` to full precision and certify it
   (:func:`dpjax.certificate.certify_scale`: the profile re-evaluated
   at the returned parameters is ``<= delta (1 - 1e-10)``).

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

from dpjax.accounting.flipped_huber import ERROR, log_delta_flipped_huber_standard, shape_constants
from dpjax.accounting.flipped_huber_kdim import BOUND_ERROR, _log_delta_sufficient_theta
from dpjax.accounting.gaussian import a_of_sigma
from dpjax.certificate import certify_scale, log_target, reported_delta
from dpjax.noise.flipped_huber import standard_variance, theta_over_gamma
from dpjax.numerics import float64_kernel

#: Shapes ``b = alpha / gamma`` searched: 0 (Gaussian) and log-spaced up to 200
#: (beyond, FH is Laplace to within the profile's resolution).
B_GRID = np.concatenate([[0.0], np.geomspace(1e-3, 200.0, 63)])
B_MAX = float(B_GRID[-1])
#: gamma in [e^-720, e^720] x reference sensitivity: every float64 target (delta >= 2.2e-308
#: at epsilon = 0 needs gamma ~ Delta / delta; epsilon <= 1.8e308 needs Delta / gamma <= 2e154)
_LOG_GAMMA_SPAN = 720.0


def _bisect_log_gamma(predicate, lg_good, lg_bad, iters):
    """Fixed-iteration bisection keeping the feasible end (one traced predicate: short compiles).

    Unlike :func:`dpjax.numerics.bisect_monotone` it does not evaluate the
    predicate at the ends; the returned end is checked by the certificate.
    """

    def body(_, carry):
        good, bad = carry
        mid = 0.5 * (good + bad)
        ok = predicate(mid)
        return jnp.where(ok, mid, good), jnp.where(ok, bad, mid)

    good, _ = jax.lax.fori_loop(0, iters, body, (lg_good, lg_bad))
    return good


def _solve_one(prepare, fn, epsilon, delta, ref, num_stages, bisect_iters):
    """Calibrate one target; ``fn(eps, prepare(b), gamma) -> log delta``.

    Stage 0 bisects ``log gamma`` at every point of :data:`B_GRID`; each later
    stage does the same on an even grid of the same size spanning the two
    cells around the previous minimum (a bracketing refinement on both sides
    of the kink, 32x narrower per stage).  All stages share one traced kernel.
    """
    log_t = log_target(delta)
    lg_hi = jnp.log(ref) + _LOG_GAMMA_SPAN
    lg_lo = jnp.log(ref) - _LOG_GAMMA_SPAN
    grid0 = jnp.asarray(B_GRID)
    m = grid0.shape[0]
    frac = jnp.linspace(0.0, 1.0, m)

    def log_gamma_star(b):
        consts = prepare(b)
        return _bisect_log_gamma(
            lambda lg: fn(epsilon, consts, jnp.exp(lg)) <= log_t, lg_hi, lg_lo, bisect_iters
        )

    def stage(k, carry):
        lo, hi, best_b, best_lg, best_f = carry
        pts = jnp.where(k == 0, grid0, lo + (hi - lo) * frac)
        lg = jax.vmap(log_gamma_star)(pts)
        f = 2.0 * lg + jnp.log(standard_variance(pts))
        f = jnp.where(lg < lg_hi, f, jnp.inf)  # never moved: infeasible in the bracket
        i = jnp.argmin(f)
        better = f[i] < best_f
        return (
            pts[jnp.maximum(i - 1, 0)],
            pts[jnp.minimum(i + 1, m - 1)],
            jnp.where(better, pts[i], best_b),
            jnp.where(better, lg[i], best_lg),
            jnp.where(better, f[i], best_f),
        )

    init = (grid0[0], grid0[-1], grid0[0], lg_hi, jnp.asarray(jnp.inf, dtype=lg_hi.dtype))
    _, _, b, lg, _ = jax.lax.fori_loop(0, num_stages, stage, init)
    consts = prepare(b)
    gamma, log_d, ok = certify_scale(
        lambda g: fn(epsilon, consts, g), jnp.exp(lg), log_t, max_nudges=0
    )
    return b * gamma, gamma, log_d, ok & jnp.isfinite(gamma)


def _bucket(n: int) -> int:
    """Pad batch sizes to powers of two (at least 4) so that few shapes are ever compiled."""
    return max(4, 1 << (n - 1).bit_length())


def _batched(core, epsilon, delta, *args, **iters):
    """Flatten, pad to a bucket size, solve in one ``vmap``, unpad and reshape."""
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    shape, n = epsilon.shape, epsilon.size
    m = _bucket(n)
    pad = lambda x: np.concatenate([x.reshape(-1), np.full(m - n, x.reshape(-1)[0])])  # noqa: E731
    out = core(jnp.asarray(pad(epsilon)), jnp.asarray(pad(delta)), *args, **iters)
    return tuple(np.asarray(x)[:n].reshape(shape) for x in out)


def _finish(alpha, gamma, log_delta_at, ok, error):
    variance = jnp.square(gamma) * standard_variance(alpha / gamma)
    return alpha, gamma, variance, reported_delta(log_delta_at, error), ok


@functools.partial(jax.jit, static_argnames=("num_stages", "bisect_iters"))
def _core_1d(epsilon, delta, sensitivity, num_stages, bisect_iters):
    def fn(eps, consts, gamma):
        a = a_of_sigma(eps, gamma, sensitivity)  # the Gaussian cases' argument, compensated
        return log_delta_flipped_huber_standard(eps, consts.b, sensitivity / gamma, consts, a=a)

    solve = functools.partial(
        _solve_one,
        shape_constants,
        fn,
        ref=sensitivity,
        num_stages=num_stages,
        bisect_iters=bisect_iters,
    )
    return _finish(*jax.vmap(solve)(epsilon, delta), ERROR)


@float64_kernel
def calibrate_flipped_huber_1d(
    epsilon: ArrayLike,
    delta: ArrayLike,
    sensitivity: ArrayLike,
    num_stages: int = 5,
    bisect_iters: int = 52,
):
    r"""Least-variance ``(alpha, gamma)`` with the exact 1-D profile (eq. (13)) ``<= delta``.

    Vectorised over broadcast ``epsilon``/``delta`` (one jitted, vmapped call;
    batch sizes are padded to powers of two).  Returns NumPy arrays
    ``(alpha, gamma, variance, delta_at_params, certified)``; ``certified`` is
    false where no certificate could be produced (the caller raises).  Needs x64.
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

    solve = functools.partial(
        _solve_one,
        prepare,
        fn,
        ref=l2,
        num_stages=num_stages,
        bisect_iters=bisect_iters,
    )
    return _finish(*jax.vmap(solve)(epsilon, delta), BOUND_ERROR)


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

    ``linf`` is the per-coordinate sensitivity ``Delta``, ``l1``/``l2`` are
    ``Delta_1``/``Delta_2``.  Same returns as :func:`calibrate_flipped_huber_1d`;
    ``delta_at_params`` is the Theorem 8 bound at the returned parameters.
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
