r"""The jitted kernels of the scale search (:mod:`dpjax.calibration.scale_search`).

Each kernel runs one root search of :mod:`dpjax.numerics.roots` per row, vmapped, on the
calibration objective ``x = log scale -> F(x) = log(-level) - log(-log delta(e^x))``
whose every evaluation is a whole PLD composition
(:func:`dpjax.accounting.pld.engine.log_delta_kernel`, or for targets below the plain
FFT's round-off floor the tilted composition of :mod:`dpjax.accounting.pld.tilted`);
``F <= 0`` iff the target is met.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from dpjax.accounting.pld.engine import STATIC_ARGNAMES, log_delta_kernel
from dpjax.accounting.pld.tilted.fold import tilted_kernel
from dpjax.numerics import Root, float64_kernel, illinois, warm_bracket


def _tilted_log_delta(scale, shape, sensitivity, sampling_rate, compositions, eps, **static):
    """``log delta(eps)`` of the tilted composition (:func:`.pld.tilted.fold.tilted_kernel`, the
    tilts of an ``epsilon`` query, as :func:`dpjax.accounting.pld.engine.profile` picks them)."""
    x = jnp.reshape(jnp.asarray(eps, jnp.float64), (1,))
    return tilted_kernel(
        scale, shape, sensitivity, sampling_rate, compositions, x, by_delta=False, **static
    )[0]


def _objective(
    shape, sensitivity, sampling_rate, compositions, eps, level, log_delta=log_delta_kernel,
    **static,
):
    """``x = log scale -> (F, [log delta, scale])`` with ``F = log(-level) - log(-log delta)``.

    ``F <= 0`` iff ``log delta <= level``; for Gaussian-like profiles
    (``log delta ~ -c / scale^2``) ``F`` is nearly linear in ``x``, which is what the
    secant steps of :mod:`dpjax.numerics.roots` exploit.  The auxiliary value carries the
    scale as evaluated, so the returned scale is bit for bit the one certified.
    """

    def f(x):
        scale = jnp.exp(x)
        log_d = log_delta(
            scale, shape, sensitivity, sampling_rate, compositions, eps, **static
        )
        big_f = jnp.log(-level) - jnp.log(-jnp.minimum(log_d, 0.0))
        return big_f, jnp.stack([log_d, scale])

    return f


def _batched(method, log_delta=log_delta_kernel):
    """A jitted kernel running ``method(f, a, b, tol) -> Root`` on the calibration objective
    of every row (``log delta`` from ``log_delta``), vmapped over 1-D ``(shape, epsilon,
    log_level, a, b)``."""

    @functools.partial(jax.jit, static_argnames=STATIC_ARGNAMES)
    @float64_kernel
    def kernel(
        shape, sensitivity, sampling_rate, compositions, epsilon, log_level, a, b, tol, **static
    ) -> Root:
        def one(shape, eps, level, a, b):
            f = _objective(
                shape, sensitivity, sampling_rate, compositions, eps, level, log_delta, **static
            )
            return method(f, a, b, tol)

        return jax.vmap(one)(shape, epsilon, log_level, a, b)

    return kernel


def _illinois(f, lo, hi, tol):
    return illinois(f, jnp.log(hi), jnp.log(lo), tol)


#: :func:`dpjax.numerics.illinois` on ``log scale`` in ``[lo, hi]`` (``a = lo``, ``b = hi``).
search_kernel = _batched(_illinois)


#: :data:`search_kernel` on the tilted composition's ``log delta``
#: (:mod:`dpjax.accounting.pld.tilted`; ``sizes`` from :func:`.plan.tilted_sizes`): the
#: objective below the plain FFT's round-off floor (targets ``delta < TILT_BELOW``).
tilted_search_kernel = _batched(_illinois, _tilted_log_delta)


#: :func:`dpjax.numerics.warm_bracket` from ``x0 = log scale`` with a slope (``a = x0``,
#: ``b = slope``).
warm_kernel = _batched(warm_bracket)
