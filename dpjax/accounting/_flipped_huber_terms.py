r"""Log-space terms of the flipped Huber profile (eq. (13) of flipped-huber-mechanism).

Helpers of :mod:`dpjax.accounting.flipped_huber`: each case of eq. (13) is rearranged
into a sum of non-negative terms, evaluated in log space without cancellation
(``h(x) = 1 - x R(x)``, ``R`` the Mills ratio; ``W(b)`` of case 1 by its power series
for ``b < 1``).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, factorial

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import erf

from dpjax.numerics import log1mexp, log_mills, logaddexp


def _log_one_minus_x_mills(x: Array) -> Array:
    """``log h(x) = log(1 - x R(x))`` for ``x > 0``."""
    return log1mexp(jnp.minimum(jnp.log(x) + log_mills(x), 0.0))


def log_inv_b_minus_mills(b: Array, x: Array) -> Array:
    """``log(1/b - R(x))`` for ``x >= b > 0`` as ``log((x - b)/(b x) + h(x)/x)``."""
    gap = x - b
    has_gap = gap > 0
    first = jnp.where(
        has_gap, jnp.log(jnp.where(has_gap, gap, 1.0)) - jnp.log(b) - jnp.log(x), -jnp.inf
    )
    return logaddexp(first, _log_one_minus_x_mills(x) - jnp.log(x))


def _log_expm1_signed(u: Array, v: Array, sign: float) -> Array:
    r"""``log(sign (e^{sign u v} - 1))`` for ``u, v >= 0`` (``-inf`` where ``u v = 0``).

    For ``x = u v < 1e-6`` the product is never formed (it may underflow to 0, e.g.
    ``b D / 2`` at ``delta ~ 1e-300``): ``log x + sign x / 2 + x^2 / 24`` from ``log u + log v``.
    """
    u, v = jnp.broadcast_arrays(jnp.asarray(u), jnp.asarray(v))
    pos = (u > 0) & (v > 0)
    x = u * v
    small = x < 1e-6
    xs = jnp.where(small, x, 0.0)
    series = (
        jnp.log(jnp.where(pos, u, 1.0)) + jnp.log(jnp.where(pos, v, 1.0)) + sign * 0.5 * xs
        + xs * xs / 24.0
    )
    xl = jnp.where(small | ~pos, 1.0, x)
    direct = log1mexp(-xl) + (xl if sign > 0 else 0.0)
    return jnp.where(pos, jnp.where(small, series, direct), -jnp.inf)


def log_neg_expm1(u: Array, v: Array = 1.0) -> Array:
    """``log(1 - e^{-u v})`` for ``u, v >= 0`` (``-inf`` at 0; no underflow of ``u v``)."""
    return _log_expm1_signed(u, v, -1.0)


def log_expm1(u: Array, v: Array = 1.0) -> Array:
    """``log(e^{u v} - 1)`` for ``u, v >= 0`` (``-inf`` at 0; no underflow of ``u v``)."""
    return _log_expm1_signed(u, v, 1.0)


def _w_series_coefficients(n_terms: int = 22) -> np.ndarray:
    r"""``W(b) / b = sum_n c_n b^{2n}`` with
    ``c_n = (-1)^n / n! [1/(n+1) - 2^{-n} sum_k C(n,k)/(2k+1)]`` (exact rationals)."""
    coeffs = []
    for n in range(n_terms):
        inner = sum(Fraction(comb(n, k), 2 * k + 1) for k in range(n + 1)) / 2**n
        coeffs.append(float(Fraction((-1) ** n, factorial(n)) * (Fraction(1, n + 1) - inner)))
    return np.asarray(coeffs)


_W_COEFFS = _w_series_coefficients()


def log_two_w_of(b: Array) -> Array:
    r"""``log 2W(b)``, ``2W = int_{-b}^{b} (e^{-b|x|} - e^{-(x^2+b^2)/2}) dx >= 0`` (case 1).

    ``W = int_0^b e^{-bx}(1 - e^{-(x-b)^2/2}) dx``: a power series in ``b^2`` for
    ``b < 1`` (the closed form ``2(1 - e^{-b^2})/b - sqrt(2 pi) e^{-b^2/2} erf(b/sqrt 2)``
    loses ``~b^{-2}`` digits there), the closed form above.
    """
    pos = b > 0
    small = b < 1.0
    bq = jnp.where(pos & small, b, 0.5)
    y = bq * bq
    series = jnp.zeros_like(y)
    for c in _W_COEFFS[::-1]:
        series = series * y + c
    quad = 2.0 * bq * series
    bl = jnp.where(small, 2.0, b)
    direct = 2.0 * (-jnp.expm1(-bl * bl)) / bl - jnp.exp(-0.5 * bl * bl) * 2.5066282746310002 * erf(
        bl * 0.7071067811865476
    )
    val = jnp.where(small, quad, direct)
    return jnp.where(pos, jnp.log(jnp.where(pos, val, 1.0)), -jnp.inf)
