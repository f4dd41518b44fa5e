r"""The jitted kernels of the scale search (:mod:`dpjax.calibration.scale_search`).

Each kernel runs one root search of :mod:`dpjax.numerics.roots` per row, vmapped, on the
calibration objective ``x = log scale -> F(x) = log(-level) - log(-log delta(e^x))``
whose every evaluation is a whole PLD composition
(:func:`dpjax.accounting.pld.engine.log_delta_kernel`); ``F <= 0`` iff the target is met.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from dpjax.accounting.pld.engine import _STATIC, log_delta_kernel
from dpjax.numerics import Root, float64_kernel, illinois, warm_bracket


def _objective(shape, sensitivity, sampling_rate, compositions, eps, level, **static):
    """``x = log scale -> (F, [log delta, scale])`` with ``F = log(-level) - log(-log delta)``.

    ``F <= 0`` iff ``log delta <= level``; for Gaussian-like profiles
    (``log delta ~ -c / scale^2``) ``F`` is nearly linear in ``x``, which is what the
    secant steps of :mod:`dpjax.numerics.roots` exploit.  The auxiliary value carries the
    scale as evaluated, so the returned scale is bit for bit the one certified.
    """

    def f(x):
        scale = jnp.exp(x)
        log_d = log_delta_kernel(
            scale, shape, sensitivity, sampling_rate, compositions, eps, **static
        )
        big_f = jnp.log(-level) - jnp.log(-jnp.minimum(log_d, 0.0))
        return big_f, jnp.stack([log_d, scale])

    return f


def _batched(method):
    """A jitted kernel running ``method(f, a, b, tol) -> Root`` on the calibration objective
    of every row, vmapped over 1-D ``(shape, epsilon, log_level, a, b)``."""

    @functools.partial(jax.jit, static_argnames=_STATIC)
    @float64_kernel
    def kernel(
        shape, sensitivity, sampling_rate, compositions, epsilon, log_level, a, b, tol, **static
    ) -> Root:
        def one(shape, eps, level, a, b):
            f = _objective(shape, sensitivity, sampling_rate, compositions, eps, level, **static)
            return method(f, a, b, tol)

        return jax.vmap(one)(shape, epsilon, log_level, a, b)

    return kernel


#: :func:`dpjax.numerics.illinois` on ``log scale`` in ``[lo, hi]`` (``a = lo``, ``b = hi``).
search_kernel = _batched(lambda f, lo, hi, tol: illinois(f, jnp.log(hi), jnp.log(lo), tol))


#: :func:`dpjax.numerics.warm_bracket` from ``x0 = log scale`` with a slope (``a = x0``,
#: ``b = slope``).
warm_kernel = _batched(warm_bracket)
