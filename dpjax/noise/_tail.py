r"""Tail-exact uniform draws: the random bits behind every dpjax sampler.

Every noise family here is symmetric, so a draw is a random sign times
``|T| = S^{-1}(U)``, where ``S(x) = P(|T| > x)`` is the two-sided tail and
``U`` is uniform on ``(0, 1]``.  Drawing ``U`` from one float (as
``jax.random.uniform`` does) truncates the tails: a float32 uniform has
resolution ``2^-24``, so ``|T|`` never exceeds ``S^{-1}(2^-24)`` (5.4 sigma for
a Gaussian, ``24 log 2`` scales for Laplace) and the sampled noise cannot
carry an accounted ``delta`` much below ``1e-7``.

Here ``U`` is resolved from several 32-bit words, so that its *logarithm* is
exact far below what a float can hold:

.. math:: U = 2^{-(z+1)}\,(1 + f),\qquad \log U = \mathrm{log1p}(f) - (z + 1)\log 2,

where ``z`` is the number of leading zero bits of ``32 E`` random bits (``E``
exponent words; ``P(z = j) = 2^{-(j+1)}``, exactly the law of the binary
exponent of a uniform) and ``f = (2m + 1) 2^{-(P+1)}`` is the mid-point of a
``P``-bit mantissa ``m`` taken from separate words (the bits after the leading
one are independent of it).  One more bit gives the sign.  ``1 - U`` is formed
exactly from the integers when ``z = 0`` (``(1 - f) / 2``), so the centre of
the law is as accurate as the tails.  Each family then maps ``(log U, 1 - U)``
through a tail quantile evaluated in log space (``Q^{-1}`` from ``log p`` for
Gaussian tails, ``-b log U`` for Laplace tails, ...), in a working dtype that
is float64 for float64 output and float32 for every narrower float (so it
works in a float32 training loop without x64), and casts at the end.

**Tail floor.**  Each binade ``[2^{-(j+1)}, 2^{-j})`` of ``U`` with ``j < 32E``
is hit with exactly its probability ``2^{-(j+1)}`` and resolved to ``P + 1``
bits inside it; only the event "all ``32E`` exponent bits are zero"
(probability ``tail_floor(dtype) = 2^{-32E}``) lands in ``[2^{-32E-1}, 2^{-32E})``
instead of ``(0, 2^{-32E})``.  So every tail probability
``P(|T| > x) >= tail_floor`` is reproduced (to relative ``2^{-P}``, the
mantissa's rounding), and ``|T|`` never exceeds ``S^{-1}(tail_floor / 2)``: the
tail mass the sampler cannot produce is ``tail_floor / 2`` per side, against
``2^{-25}`` for a float32 uniform.  Noise accounted at a ``delta`` far above
``tail_floor`` is therefore not undercut by truncation of its tails:

==================================  =========  ========  ==================================
output dtype                        ``E``      ``P``     ``tail_floor``
==================================  =========  ========  ==================================
float16, bfloat16, float32          4          23        ``2^-128 ~ 2.9e-39``
float64 (needs x64)                 8          52        ``2^-256 ~ 8.6e-78``
==================================  =========  ========  ==================================

(``E + 1`` words per float32 sample, ``E + 2`` per float64 sample.)  Values
beyond the output dtype's largest finite number (e.g. ``|x| > 65504`` in
float16) become ``+-inf``; every other value is returned rounded to nearest
(subnormal results may flush to zero).  The discreteness of floating-point
noise and the rounding of ``f(D) + T`` (Mironov 2012) are outside this
guarantee, as for any float sampler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise._base import sample_dtype

_LOG_2 = 0.6931471805599453

#: ``(exponent words E, mantissa bits P, mantissa words)`` per working dtype.
_LAYOUT = {
    np.dtype(np.float32): (4, 23, 1),
    np.dtype(np.float64): (8, 52, 2),
}


class TailUniform(NamedTuple):
    """A uniform ``U`` on ``(0, 1]`` resolved in log space, and an independent sign.

    Attributes:
      negative: the sign of the draw (``True`` with probability 1/2).
      log_u: ``log U`` (exact far below the dtype's smallest normal number).
      one_minus_u: ``1 - U``, without cancellation as ``U -> 1``.
    """

    negative: Array
    log_u: Array
    one_minus_u: Array


def working_dtype(dtype=None) -> np.dtype:
    """The dtype a sample of ``dtype`` is computed in: float64 for float64 (x64), else float32."""
    dtype = sample_dtype(dtype)
    wide = dtype == jnp.float64 and jax.dtypes.canonicalize_dtype(jnp.float64) == jnp.float64
    return np.dtype(np.float64 if wide else np.float32)


def words_per_sample(dtype=None) -> int:
    """Number of 32-bit random words one sample of ``dtype`` uses (5 in float32, 10 in float64)."""
    exponent_words, _, mantissa_words = _LAYOUT[working_dtype(dtype)]
    return exponent_words + mantissa_words


def tail_floor(dtype=None) -> float:
    r"""Smallest two-sided tail probability ``P(|T| > x)`` the samplers reproduce, per dtype.

    ``2^{-32E}``: ``2^-128 ~ 2.9e-39`` for float32, bfloat16 and float16 output,
    ``2^-256 ~ 8.6e-78`` for float64 output (x64 enabled).  Tails at or above it
    are reproduced; ``|T|`` never exceeds the quantile of ``tail_floor / 2``
    (module docstring).

    Args:
      dtype: the output dtype of the samples (default: JAX's default float).

    Example:
      >>> import jax.numpy as jnp
      >>> tail_floor(jnp.float32) == 2.0 ** -128
      True
    """
    exponent_words, _, _ = _LAYOUT[working_dtype(dtype)]
    return 2.0 ** (-32 * exponent_words)


def tail_uniform_from_bits(bits: ArrayLike, dtype=None) -> TailUniform:
    r"""``(sign, log U, 1 - U)`` from ``words_per_sample(dtype)`` uint32 words (first axis).

    Deterministic and pure (see the module docstring for the layout): words
    ``0..E-1`` give ``z`` (leading zero bits, ``32 E`` if all are zero), the top
    bit of word ``E`` the sign, the next ``P`` bits (across words ``E, E+1`` in
    float64) the mantissa ``m``; ``f = (2m + 1) 2^{-(P+1)}``,
    ``log U = log1p(f) - (z + 1) log 2`` and, for ``z = 0``,
    ``1 - U = (2^{P+1} - 1 - 2m) 2^{-(P+2)}`` exactly.

    Args:
      bits: uint32 array of shape ``(words_per_sample(dtype), ...)`` (one plane per word).
      dtype: the output dtype of the samples; the result is in ``working_dtype(dtype)``.
    """
    work = working_dtype(dtype)
    exponent_words, mant_bits, mantissa_words = _LAYOUT[work]
    bits = jnp.asarray(bits)
    if bits.dtype != jnp.uint32 or bits.shape[:1] != (exponent_words + mantissa_words,):
        raise ValueError(
            f"bits must be uint32 with first axis {exponent_words + mantissa_words} for "
            f"{np.dtype(sample_dtype(dtype)).name} samples, got {bits.dtype}{bits.shape}"
        )
    # z = clz of the first non-zero word + 32 per zero word before it (clz(0) = 32)
    z = jax.lax.clz(bits[0]).astype(jnp.int32)
    all_zero = bits[0] == 0
    for j in range(1, exponent_words):
        z = z + jnp.where(all_zero, jax.lax.clz(bits[j]).astype(jnp.int32), 0)
        all_zero = all_zero & (bits[j] == 0)
    top = bits[exponent_words]
    negative = (top >> 31) == 1
    body = top & jnp.uint32(0x7FFFFFFF)
    if mantissa_words == 1:  # 23 bits of word E (below the sign)
        m = (body >> (31 - mant_bits)).astype(work)
    else:  # 20 bits of word E and all 32 of word E + 1
        hi = (body >> (31 - (mant_bits - 32))).astype(work)
        m = hi * work.type(2.0**32) + bits[exponent_words + 1].astype(work)
    scale = work.type(2.0 ** -(mant_bits + 1))
    f = (2.0 * m + 1.0) * scale  # exact: odd multiples of 2^-(P+1) in (0, 1)
    centre = z == 0
    # 1 - U = (1 - f) / 2 for z = 0 (exact integers), else 1 - U >= 1/2 (no cancellation)
    omu_centre = (work.type(2.0 ** (mant_bits + 1) - 1.0) - 2.0 * m) * (0.5 * scale)
    log_u_tail = jnp.log1p(f) - (z.astype(work) + 1.0) * work.type(_LOG_2)
    log_u = jnp.where(centre, log1p_negative(-omu_centre), log_u_tail)
    omu = jnp.where(centre, omu_centre, -jnp.expm1(jnp.where(centre, -1.0, log_u_tail)))
    return TailUniform(negative, log_u, omu)


def log1p_negative(x: ArrayLike) -> Array:
    r"""``log(1 + x)`` for ``x`` in ``[-1/2, 0]``, accurate to a few ulp.

    .. math:: \log(1 + x) = \begin{cases} \log(1 + x) & x < -1/4 \\
              \mathrm{log1p}(x) & x \ge -1/4 \end{cases}

    XLA's float64 ``log1p`` (jax 0.10.2, CPU) is off by up to 2.7e-14 relative on
    ``(-0.42, -0.3)``; below ``-1/4`` the sum ``1 + x`` costs one rounding
    (``<= 2^-54``) against ``|log(1 + x)| >= 0.28``, so the plain log is accurate.
    """
    x = jnp.asarray(x)
    far = x < -0.25
    return jnp.where(far, jnp.log(1.0 + jnp.where(far, x, 0.0)), jnp.log1p(jnp.where(far, 0.0, x)))


def symmetric_from_bits(bits: ArrayLike, dtype, abs_isf: Callable[[Array, Array], Array]) -> Array:
    r"""A symmetric draw ``+-S^{-1}(U)`` from its random bits, cast to ``dtype``.

    Args:
      bits: uint32 words, first axis ``words_per_sample(dtype)``.
      dtype: output dtype (default: JAX's default float).
      abs_isf: ``(log U, 1 - U) -> |T|`` with ``P(|T| > |T|) = U``, evaluated in
        the dtype of its arguments (``working_dtype(dtype)``).
    """
    dtype = sample_dtype(dtype)
    t = tail_uniform_from_bits(bits, dtype)
    a = abs_isf(t.log_u, t.one_minus_u)
    return jnp.where(t.negative, -a, a).astype(dtype)


def symmetric_sample(
    key: Array, shape: tuple[int, ...], dtype, abs_isf: Callable[[Array, Array], Array]
) -> Array:
    """:func:`symmetric_from_bits` of :func:`random_words`."""
    return symmetric_from_bits(random_words(key, shape, dtype), dtype, abs_isf)


def random_words(key: Array, shape: tuple[int, ...], dtype=None) -> Array:
    """``words_per_sample(dtype)`` planes of uint32 random words, shape ``(words,) + shape``.

    One ``jax.random.bits`` call per plane (split keys): contiguous planes are about
    twice as fast to draw and to read as a trailing word axis.
    """
    keys = jax.random.split(key, words_per_sample(dtype))
    return jnp.stack([jax.random.bits(k, tuple(shape), jnp.uint32) for k in keys])
