r"""Error-free transformations: products and quotients with their exact rounding error.

Privacy profiles are often decided by a *difference* of two large, nearly
equal terms built from the parameters (``epsilon - Delta / b`` at the pure-DP
boundary of Laplace, ``epsilon sigma / Delta - Delta / (2 sigma)`` for a
Gaussian at large ``Delta / sigma``).  Rounding each term first loses the
answer; carrying each term as an unevaluated sum ``hi + lo`` (``|lo| <= ulp(hi)/2``)
keeps it.  These are Dekker's (1971) algorithms, written without an FMA (XLA
exposes none), valid for ``|a|, |b| <= 2^995`` and products and quotients
that neither overflow nor underflow.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitting constant for float64


def _split(a: Array) -> tuple[Array, Array]:
    """``a = hi + lo`` exactly, each half with at most 26 significant bits (Veltkamp)."""
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def two_sum(a: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
    r"""``a + b = s + e`` exactly, ``s = fl(a + b)`` (Knuth's branch-free TwoSum).

    .. math:: s = \mathrm{fl}(a + b),\quad b' = s - a,\quad
              e = (a - (s - b')) + (b - b')

    (Knuth, TAOCP vol. 2, 4.2.2, Thm B.)

    Args:
      a: first summand.
      b: second summand (broadcast against ``a``).

    Returns:
      ``(s, e)`` with ``s + e = a + b`` exactly.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> s, e = two_sum(1.0, 1e-17)
      >>> float(s), float(e)
      (1.0, 1e-17)
    """
    a, b = jnp.asarray(a), jnp.asarray(b)
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def sum3(a: ArrayLike, b: ArrayLike, c: ArrayLike, low: ArrayLike = 0.0) -> Array:
    r"""``a + b + c + low`` with one final rounding of the leading part.

    .. math:: (s_1, e_1) = \mathrm{TwoSum}(a, b),\quad (s_2, e_2) = \mathrm{TwoSum}(s_1, c),
              \quad \text{result} = s_2 + ((e_1 + e_2) + \text{low})

    Whichever two of the three large terms cancel, the result is accurate to a few
    ulps of itself (two :func:`two_sum` steps, the rounding errors added back with
    ``low``).  Used for ``epsilon - Delta / b`` style differences at pure-DP
    boundaries (Dekker 1971).

    Args:
      a: first term.
      b: second term.
      c: third term.
      low: a small correction added with the rounding errors (e.g. the error term of
        a :func:`two_product` or :func:`quotient`).

    Returns:
      The sum, rounded once.
    """
    s1, e1 = two_sum(a, b)
    s2, e2 = two_sum(s1, c)
    return s2 + ((e1 + e2) + low)


def two_product(a: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
    r"""``a b = p + e`` exactly, ``p = fl(a b)`` (Dekker 1971, without an FMA).

    .. math:: p = \mathrm{fl}(a b),\quad e = ((a_h b_h - p) + a_h b_l + a_l b_h) + a_l b_l

    with ``a = a_h + a_l`` and ``b = b_h + b_l`` Veltkamp's exact 26-bit splits.
    Valid for ``|a|, |b| <= 2^995`` and products that neither overflow nor underflow.

    Args:
      a: first factor (float64).
      b: second factor (broadcast against ``a``).

    Returns:
      ``(p, e)`` with ``p + e = a b`` exactly.
    """
    a, b = jnp.asarray(a), jnp.asarray(b)
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, e


def quotient(a: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
    r"""``a / b = q + r`` to about ``2^-104`` relative: ``q = fl(a / b)`` and the correction.

    .. math:: r = \frac{(a - p) - e}{b},\qquad p + e = q\,b \text{ exactly (two-product)},

    where ``a - p`` is exact (Sterbenz: ``p`` is within a factor 2 of ``a``)
    (Dekker 1971).

    Args:
      a: dividend.
      b: divisor, non-zero (broadcast against ``a``).

    Returns:
      ``(q, r)`` with ``q + r = a / b`` to about ``2^-104`` relative.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> q, r = quotient(1.0, 3.0)
      >>> float(q), float(r)  # 1/3 = q + r, r carries what q rounds away
      (0.3333333333333333, 1.850371707708594e-17)
    """
    a, b = jnp.asarray(a), jnp.asarray(b)
    q = a / b
    p, e = two_product(q, b)
    return q, ((a - p) - e) / b
