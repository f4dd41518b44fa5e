r"""Tail-exact uniform draws: the random bits behind every dpjax sampler.

Every noise family here is symmetric, so a draw is a random sign times
``|T| = S^{-1}(U)``, where ``S(x) = P(|T| > x)`` is the two-sided tail and
``U`` is uniform on ``(0, 1]``.  Drawing ``U`` from one float (as
``jax.random.uniform`` does) truncates the tails: a float32 uniform has
resolution ``2^-24``, so ``|T|`` never exceeds ``S^{-1}(2^-24)`` (5.4 sigma for
a Gaussian, ``24 log 2`` scales for Laplace) and the sampled noise cannot
carry an accounted ``delta`` much below ``1e-7``.

Here ``U`` is resolved from a string of ``32 E`` random bits, so that its
*logarithm* is exact far below what a float can hold:

.. math:: U = 2^{-(z+1)}\,(1 + f),\qquad \log U = \mathrm{log1p}(f) - (z + 1)\log 2,

where ``z`` is the number of leading zero bits of the string
(``P(z = j) = 2^{-(j+1)}``, exactly the law of the binary exponent of a
uniform) and ``f = (2m + 1) 2^{-(P+1)}`` is the mid-point of a ``P``-bit
mantissa ``m`` of bits independent of ``z``; one more independent bit is the
sign.  ``1 - U`` is formed exactly from the integers when ``z = 0``
(``(1 - f) / 2``), so the centre of the law is as accurate as the tails.
Each family maps ``(log U, 1 - U)`` through its tail quantile ``abs_isf``
evaluated in log space, in a working dtype that is float64 for float64 output
and float32 for every narrower float (so it works in a float32 training loop
without x64), and casts at the end.

**Two paths, one law.**  A sample's first word decides its path.  If its
leading one lies in the first ``D`` bits (``z < D``, probability ``1 - 2^-D``;
``D = 8`` in float32, ``11`` in float64), the bits after it give the mantissa
(and the word's last bit the sign, a second word the low mantissa in float64):
the *main path* costs one word per float32 sample (two per float64 sample), as
``jax.random.normal`` does, and its quantile may use cheaper forms accurate for
``U >= 2^-12`` (``ndtri``; in float32 jax.random.normal's own ``erfinv`` transform with
its ``w = -log(U (2 - U))`` formed from ``U`` itself, a normal float there,
:func:`erfinv_from_w`): the main path hands the quantile ``U`` as well as ``log U`` (one
``log1p``, left unevaluated when the quantile does not read it) and ``1 - U``
(:func:`_main_path_uniform`).
Otherwise the sample is *deep*: the lanes with ``z >= D``
are gathered (:func:`sparse_nonzero`, ``jnp.nonzero``'s indices by a packed two-pass
compaction instead of a prefix sum over every lane, with a static capacity
``deep_capacity(n)``),
their string is continued with ``E - 1`` fresh words and a fresh
mantissa/sign word, and their quantile is evaluated by the log-space
``Q^{-1}`` and friends; the results are scattered back.  Given ``z >= D`` the
remaining bits of the first word and the fresh words are independent and
uniform, so both paths together have exactly the law of the ``32 E``-bit
scheme.  The capacity is the least ``C`` with
``P(Binomial(n, 2^-D) > C) <= tail_floor`` (Chernoff), so a call overflows it
with probability at most ``tail_floor``; overflowing lanes stay in the binade
``[2^-(D+1), 2^-D)``.

**Tail floor.**  Each binade ``[2^{-(j+1)}, 2^{-j})`` of ``U`` with ``j < 32E``
is hit with exactly its probability ``2^{-(j+1)}`` and resolved to ``P + 1``
bits inside it; only the event "all ``32E`` bits are zero" (probability
``tail_floor(dtype) = 2^{-32E}``) lands in ``[2^{-32E-1}, 2^{-32E})`` instead
of ``(0, 2^{-32E})``.  So every tail probability ``P(|T| > x)`` is reproduced
to within an absolute ``tail_floor`` (overflow included), besides a relative
``2^{-P}`` (the mantissa's rounding), and ``|T|`` never exceeds
``S^{-1}(tail_floor / 2)``: the tail mass the sampler cannot produce is
``tail_floor / 2`` per side, against ``2^{-25}`` for a float32 uniform.  Noise
accounted at a ``delta`` far above ``tail_floor`` is therefore not undercut by
truncation of its tails:

==================================  =====  =====  =====  ============================
output dtype                        ``E``  ``P``  ``D``  ``tail_floor``
==================================  =====  =====  =====  ============================
float16, bfloat16, float32          4      23     8      ``2^-128 ~ 2.9e-39``
float64 (needs x64)                 8      52     11     ``2^-256 ~ 8.6e-78``
==================================  =====  =====  =====  ============================

Values beyond the output dtype's largest finite number (e.g. ``|x| > 65504`` in
float16) become ``+-inf``; every other value is returned rounded to nearest
(subnormal results may flush to zero).  The discreteness of floating-point
noise and the rounding of ``f(D) + T`` (Mironov 2012) are outside this
guarantee, as for any float sampler.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import ndtri
from jax.typing import ArrayLike

from dpjax.noise._base import sample_dtype
from dpjax.numerics import least_integer_host, log_Q_inv
from dpjax.numerics.constants import LOG_2


class _Layout(NamedTuple):
    exponent_words: int  # E: words of the bit string that z counts leading zeros in
    mantissa_bits: int  # P
    mantissa_words: int  # words of a deep sample's mantissa and sign
    main_words: int  # words of a main-path sample (the first is the string's first word)
    shallow: int  # D: the main path takes z < D


_LAYOUT = {
    np.dtype(np.float32): _Layout(4, 23, 1, 1, 8),
    np.dtype(np.float64): _Layout(8, 52, 2, 2, 11),
}


class TailWords(NamedTuple):
    """The random words of a batch of samples (uint32).

    Attributes:
      main: ``(main_words, *shape)``: one word per float32 sample, two per float64 sample.
      deep: ``(E - 1 + mantissa_words, capacity)``: the continuation of the deep samples,
        in the order of their flat index (4 x capacity in float32, 9 x capacity in float64).
    """

    main: Array
    deep: Array


class TailUniform(NamedTuple):
    """A uniform ``U`` on ``(0, 1]`` resolved in log space, and an independent sign.

    Attributes:
      negative: the sign of the draw (``True`` with probability 1/2).
      log_u: ``log U`` (exact far below the dtype's smallest normal number).
      one_minus_u: ``1 - U``, without cancellation as ``U -> 1``.
      u: ``U`` itself, within an ulp (a normal number on the main path, ``U >= 2^-(D+1)``;
        ``exp(log U)`` on the deep path, where it may underflow): lets a main-path quantile
        skip the logarithm ``log_u`` costs.
    """

    negative: Array
    log_u: Array
    one_minus_u: Array
    u: Array


def working_dtype(dtype=None) -> np.dtype:
    """The dtype a sample of ``dtype`` is computed in: float64 for float64 (x64), else float32."""
    dtype = sample_dtype(dtype)
    wide = dtype == jnp.float64 and jax.dtypes.canonicalize_dtype(jnp.float64) == jnp.float64
    return np.dtype(np.float64 if wide else np.float32)


def deep_capacity(n: int, dtype=None) -> int:
    r"""Slots for the deep samples of a batch of ``n``: the least ``C`` with
    ``P(X > C) <= tail_floor(dtype)`` for ``X ~ Binomial(n, 2^-D)``.

    Chernoff: ``P(X >= k) <= exp(-n KL(k/n || p))`` for ``k >= n p``; ``C`` is found
    by bisection on the host (``n`` is static).  In float32: ``n`` slots for ``n <= 10``,
    52 for ``n = 10^3``, 4766 for ``n = 10^6`` (0.48%), 3.9e6 for ``n = 10^9``.

    Args:
      n: number of samples in the batch.
      dtype: output dtype of the samples.
    """
    layout = _LAYOUT[working_dtype(dtype)]
    n = int(n)
    if n <= 0:
        return 0
    p = 2.0**-layout.shallow
    need = 32 * layout.exponent_words * LOG_2  # -log tail_floor

    def log_bound(k: int) -> float:  # -log of the Chernoff bound on P(X >= k)
        if k > n:
            return math.inf
        a = k / n
        if a >= 1.0:
            return -n * math.log(p)
        return n * (a * math.log(a / p) + (1.0 - a) * (math.log1p(-a) - math.log1p(-p)))

    # the least C with P(X > C) <= tail_floor; C = n is always enough: P(X > n) = 0
    return least_integer_host(lambda c: log_bound(c + 1) >= need, max(0, math.ceil(n * p) - 1), n)


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
    return 2.0 ** (-32 * _LAYOUT[working_dtype(dtype)].exponent_words)


def tail_uniform_from_bits(bits: ArrayLike, dtype=None) -> TailUniform:
    r"""``(sign, log U, 1 - U)`` from the ``E + mantissa_words`` uint32 words of the full
    scheme (first axis): the deep path's kernel.

    Deterministic and pure (see the module docstring for the layout): words
    ``0..E-1`` give ``z`` (leading zero bits, ``32 E`` if all are zero), the top
    bit of word ``E`` the sign, the next ``P`` bits (across words ``E, E+1`` in
    float64) the mantissa ``m``; ``f = (2m + 1) 2^{-(P+1)}``,
    ``log U = log1p(f) - (z + 1) log 2`` and, for ``z = 0``,
    ``1 - U = (2^{P+1} - 1 - 2m) 2^{-(P+2)}`` exactly.

    Args:
      bits: uint32 array of shape ``(E + mantissa_words, ...)`` (one plane per word).
      dtype: the output dtype of the samples; the result is in ``working_dtype(dtype)``.
    """
    work = working_dtype(dtype)
    exponent_words, mant_bits, mantissa_words, _, _ = _LAYOUT[work]
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
    return _uniform(z, m, negative, work, mant_bits)


def _uniform(z: Array, m: Array, negative: Array, work: np.dtype, mant_bits: int) -> TailUniform:
    """``log U`` and ``1 - U`` of ``U = 2^-(z+1) (1 + (2m + 1) 2^-(P+1))``."""
    scale = work.type(2.0 ** -(mant_bits + 1))
    f = (2.0 * m + 1.0) * scale  # exact: odd multiples of 2^-(P+1) in (0, 1)
    centre = z == 0
    # 1 - U = (1 - f) / 2 for z = 0 (exact integers), else 1 - U >= 1/2 (no cancellation)
    omu_centre = (work.type(2.0 ** (mant_bits + 1) - 1.0) - 2.0 * m) * (0.5 * scale)
    log_u_tail = jnp.log1p(f) - (z.astype(work) + 1.0) * work.type(LOG_2)
    log_u = jnp.where(centre, log1p_negative(-omu_centre), log_u_tail)
    omu = jnp.where(centre, omu_centre, -jnp.expm1(jnp.where(centre, -1.0, log_u_tail)))
    return TailUniform(negative, log_u, omu, jnp.exp(log_u))


def _main_uniform(main: Array, work: np.dtype) -> tuple[TailUniform, Array]:
    """The main path: ``U`` from the first word(s) alone, and the mask of deep samples.

    ``z = clz(w0)``; for ``z < D`` the ``P`` bits after the leading one of ``w0``
    (float32) or its 20 bits and all of ``w1`` (float64) are the mantissa and the last
    bit of ``w0`` the sign (never among them for ``z < D``).  Deep samples
    (``z >= D``) get ``z = D`` here: overflowing ones stay in ``[2^-(D+1), 2^-D)``.
    """
    _, mant_bits, _, main_words, shallow = _LAYOUT[work]
    w0 = main[0]
    z = jax.lax.clz(w0).astype(jnp.int32)
    deep = z >= shallow
    zs = jnp.minimum(z, shallow)
    rest = w0 << (zs + 1).astype(jnp.uint32)  # the bits after the leading one, at the top
    negative = (w0 & jnp.uint32(1)) == 1
    if main_words == 1:
        m = (rest >> (32 - mant_bits)).astype(work)
    else:
        hi = (rest >> (32 - (mant_bits - 32))).astype(work)
        m = hi * work.type(2.0**32) + main[1].astype(work)
    return _main_path_uniform(zs, m, negative, work, mant_bits), deep


def _main_path_uniform(z: Array, m: Array, negative: Array, work: np.dtype, mant_bits: int):
    r""":func:`_uniform` for ``z < D`` with one ``log1p`` and no ``expm1`` per sample.

    .. math:: \log U = \begin{cases} \mathrm{log1p}(-(1 - U)) & z = 0,\ 1 - U < 1/4 \\
              \mathrm{log1p}(f) - (z + 1)\log 2 & \text{otherwise} \end{cases}

    (``1 - U`` exact for ``z = 0``; the second form loses at most a few ulp to the
    subtraction, ``|\log U| >= \log(4/3)``), and ``1 - U = 1 - 2^{-(z+1)}(1 + f)``, which is
    ``>= 1/2`` for ``z >= 1`` (a relative ``2^{-P}``, as ``-expm1(log U)``).  ``2^{-(z+1)}``
    is formed from its exponent bits (``z < D``: a normal number), and ``U`` itself from it
    (a quantile that needs ``U`` rather than ``log U`` leaves the ``log1p`` unevaluated).
    """
    scale = work.type(2.0 ** -(mant_bits + 1))
    f = (2.0 * m + 1.0) * scale
    centre = z == 0
    omu_centre = (work.type(2.0 ** (mant_bits + 1) - 1.0) - 2.0 * m) * (0.5 * scale)
    near = centre & (omu_centre < 0.25)
    log1p = jnp.log1p(jnp.where(near, -omu_centre, f))
    log_u = jnp.where(near, log1p, log1p - (z.astype(work) + 1.0) * work.type(LOG_2))
    info = jnp.finfo(work)
    uint = jnp.uint64 if work == np.float64 else jnp.uint32
    exponent = (info.maxexp - 2 - z).astype(uint) << (info.nmant)  # 2^-(z+1): biased maxexp-2-z
    half_power = jax.lax.bitcast_convert_type(exponent, work)
    u = half_power * (1.0 + f)  # U within an ulp (a normal number: z < D)
    omu = jnp.where(centre, omu_centre, 1.0 - u)
    return TailUniform(negative, log_u, omu, u)


def sparse_nonzero(mask: Array, size: int) -> Array:
    r"""``jnp.nonzero(mask, size=size, fill_value=n)[0]`` for a sparse 1-D ``mask`` of ``n``
    lanes, in two cheap passes instead of a prefix sum over all ``n`` lanes.

    The mask is packed 32 lanes to a word (bit ``j`` of word ``b`` is lane ``32 b + j``); the
    non-zero words are found by ``jnp.nonzero`` over ``n / 32`` words, and slot ``s`` takes
    the ``r``-th set bit of the word ``i`` whose bits cover it (``i``: the first word whose
    running popcount exceeds ``s``; ``r = s -`` the popcount before word ``i``).  The first
    ``size`` set lanes lie in the first ``size`` non-zero words, so the result is
    ``jnp.nonzero``'s, overflow included (the first ``size`` lanes, in order).

    Args:
      mask: boolean ``(n,)``.
      size: static number of slots.

    Returns:
      int32 ``(size,)``: the set lanes in increasing order, then ``n``.
    """
    n = mask.shape[0]
    blocks = -(-n // 32)
    packed = jnp.pad(mask, (0, 32 * blocks - n)).reshape(blocks, 32).astype(jnp.uint32)
    words = jnp.sum(packed << jnp.arange(32, dtype=jnp.uint32), axis=1, dtype=jnp.uint32)
    block = jnp.nonzero(words != 0, size=size, fill_value=blocks)[0]
    word = jnp.take(words, block, mode="fill", fill_value=0)
    ends = jnp.cumsum(jax.lax.population_count(word).astype(jnp.int32))
    slot = jnp.arange(size, dtype=jnp.int32)
    owner = jnp.minimum(jnp.searchsorted(ends, slot, side="right"), max(size - 1, 0))
    rank = slot - (ends[owner] - jax.lax.population_count(word[owner]).astype(jnp.int32))
    w = word[owner]
    for k in range(31):  # clear the ``rank`` lowest set bits
        w = jnp.where(rank > k, w & (w - jnp.uint32(1)), w)
    bit = 31 - jax.lax.clz(w & (~w + jnp.uint32(1))).astype(jnp.int32)
    lane = block[owner].astype(jnp.int32) * 32 + bit
    return jnp.where(slot < ends[-1], lane, n) if size else slot


def _deep_uniform(main: Array, deep_words: Array, deep: Array, work: np.dtype):
    """Flat indices of the deep samples (``n`` marks an empty slot) and their uniforms."""
    idx = sparse_nonzero(deep, deep_words.shape[1])
    w0 = jnp.take(main[0], idx, mode="fill", fill_value=0)
    return idx, tail_uniform_from_bits(jnp.concatenate([w0[None], deep_words]), work)


def _check(bits: TailWords, dtype) -> None:
    layout = _LAYOUT[working_dtype(dtype)]
    main, deep = (jnp.asarray(b) for b in bits)
    rows = layout.exponent_words - 1 + layout.mantissa_words
    if (
        main.dtype != jnp.uint32
        or deep.dtype != jnp.uint32
        or main.shape[:1] != (layout.main_words,)
        or deep.ndim != 2
        or deep.shape[0] != rows
    ):
        raise ValueError(
            f"bits must be TailWords of uint32 with main ({layout.main_words}, ...) and deep "
            f"({rows}, capacity) for {np.dtype(sample_dtype(dtype)).name} samples, got "
            f"{main.dtype}{main.shape} and {deep.dtype}{deep.shape}"
        )


def _paths(bits: TailWords, dtype):
    """``(shape, main-path uniforms (flat), deep mask, (idx, deep uniforms) or None)``."""
    _check(bits, dtype)
    work = working_dtype(dtype)
    main = jnp.asarray(bits.main)
    flat = main.reshape(main.shape[0], -1)
    t, deep = _main_uniform(flat, work)
    has_deep = bits.deep.shape[1] > 0
    gathered = _deep_uniform(flat, jnp.asarray(bits.deep), deep, work) if has_deep else None
    return main.shape[1:], t, gathered


def tail_uniform(bits: TailWords, dtype=None) -> TailUniform:
    """The uniforms (and signs) a batch of samples is drawn from: both paths, flat order
    restored (the module docstring).  Samplers do not form it (each path calls its own
    quantile); it is the object of the law tests.

    Args:
      bits: the batch's :class:`TailWords` (e.g. :func:`random_words`).
      dtype: output dtype of the samples; the result is in ``working_dtype(dtype)``.
    """
    shape, t, gathered = _paths(bits, dtype)
    if gathered is not None:
        idx, td = gathered
        t = TailUniform(*(a.at[idx].set(b, mode="drop") for a, b in zip(t, td, strict=True)))
    return TailUniform(*(a.reshape(shape) for a in t))


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


#: XLA's float32 ``erf_inv`` (Giles 2010, "Approximating the erfinv function"): ``erfinv(x)
#: = x P(w)`` with ``w = -log(1 - x^2)``, ``P`` of degree 8 in ``w - 2.5`` (``w < 5``) or in
#: ``sqrt(w) - 3``; the constants of XLA's chlo legalisation (as jax's pallas lowering).
_ERFINV32_SMALL_W = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                     0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV32_LARGE_W = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                     0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erfinv_from_w(x: Array, w: Array) -> Array:
    r"""``erfinv(x)`` in float32 from ``x`` and ``w = -log(1 - x^2)`` given separately.

    .. math:: \mathrm{erfinv}(x) = x\,P(w)

    (Giles' single-precision form, XLA's constants :data:`_ERFINV32_SMALL_W`).  Near
    ``|x| = 1`` the argument ``x = 1 - U`` of a float is rounded (a relative ``2^-24`` of
    ``1 - U``, i.e. ``2^-24 / U`` of ``U``), but ``P`` depends on ``U`` only through ``w``,
    which the caller forms from ``U`` itself (``-log(U (2 - U))``, a few ulps where ``U`` is
    a normal float) or as ``-(log U + log1p(1 - U))``; the rounding of ``x`` then costs a
    relative ``2^-24`` of the result instead of ``2^-24 / U`` of the probability.  This is
    the bulk transform of ``jax.random.normal`` with the tail probability kept exact.

    Args:
      x: float32 in ``[0, 1)``.
      w: ``-log(1 - x^2) >= 0``, float32.
    """
    small = w < 5.0
    t = jnp.where(small, w - 2.5, jnp.sqrt(jnp.where(small, 5.0, w)) - 3.0)
    p = jnp.where(small, _ERFINV32_SMALL_W[0], _ERFINV32_LARGE_W[0]).astype(x.dtype)
    for lo, hi in zip(_ERFINV32_SMALL_W[1:], _ERFINV32_LARGE_W[1:], strict=True):
        p = jnp.where(small, lo, hi).astype(x.dtype) + p * t
    return p * x


def log_q_inv(log_p: Array, deep: bool = True) -> Array:
    r"""``Q^{-1}(p)`` from ``log p`` (``p <= 1/2``) in the dtype of ``log_p``, for samplers.

    ``deep``: :func:`dpjax.numerics.log_Q_inv` (4 Newton steps in float64, 1 in float32:
    within 2 epsilons to ``p = exp(-1e7)``).  ``deep=False`` promises ``p >= 2^-13`` (the
    main path) and uses ``-ndtri(p)`` in float64 (within 3 epsilons there, a tenth of the
    cost) and ``sqrt2 erfinv(1 - 2p)`` with ``w = -log(4 p (1 - p))`` formed from ``log p``
    in float32 (:func:`erfinv_from_w`: jax.random.normal's transform, half ``ndtri``'s cost).
    """
    if not deep:
        if log_p.dtype == jnp.float32:  # sqrt2 erfinv(1 - 2p), w = -log(4 p (1 - p)) exact
            p = jnp.exp(log_p)
            w = -(2.0 * LOG_2 + log_p + jnp.log1p(-p))
            return 1.4142135623730951 * erfinv_from_w(1.0 - 2.0 * p, w)
        return -ndtri(jnp.exp(log_p))
    return log_Q_inv(log_p, num_newton=4 if log_p.dtype == jnp.float64 else 1)


def symmetric_from_bits(bits: TailWords, dtype, abs_isf: Callable[..., Array]) -> Array:
    r"""A symmetric draw ``+-S^{-1}(U)`` from its random words, cast to ``dtype``.

    Args:
      bits: the batch's :class:`TailWords`; ``bits.main.shape[1:]`` is the sample shape.
      dtype: output dtype (default: JAX's default float).
      abs_isf: ``(log U, 1 - U, deep=..., u=...) -> |T|`` with ``P(|T| > |T|) = U``, in
        the dtype of its arguments (``working_dtype(dtype)``); ``deep=False`` promises
        ``U >= 2^-12`` (the main path) and passes ``u = U`` (within an ulp) as well.
    """
    dtype = sample_dtype(dtype)
    shape, t, gathered = _paths(bits, dtype)
    a = abs_isf(t.log_u, t.one_minus_u, deep=False, u=t.u)
    x = jnp.where(t.negative, -a, a)
    if gathered is not None:
        idx, td = gathered
        a = abs_isf(td.log_u, td.one_minus_u, deep=True)
        x = x.at[idx].set(jnp.where(td.negative, -a, a), mode="drop")
    return x.reshape(shape).astype(dtype)


def symmetric_sample(key: Array, shape: tuple[int, ...], dtype, abs_isf: Callable[..., Array]):
    """:func:`symmetric_from_bits` of :func:`random_words`."""
    return symmetric_from_bits(random_words(key, shape, dtype), dtype, abs_isf)


def random_words(key: Array, shape: tuple[int, ...], dtype=None) -> TailWords:
    """The :class:`TailWords` of ``shape`` samples of ``dtype``: one ``jax.random.bits``
    plane per main word and one ``(rows, deep_capacity(n))`` block (split keys).

    Args:
      key: a JAX PRNG key.
      shape: the sample shape.
      dtype: output dtype of the samples.
    """
    layout = _LAYOUT[working_dtype(dtype)]
    shape = tuple(shape)
    keys = jax.random.split(key, layout.main_words + 1)
    main = jnp.stack([jax.random.bits(k, shape, jnp.uint32) for k in keys[:-1]])
    rows = layout.exponent_words - 1 + layout.mantissa_words
    deep = jax.random.bits(keys[-1], (rows, deep_capacity(math.prod(shape), dtype)), jnp.uint32)
    return TailWords(main, deep)
