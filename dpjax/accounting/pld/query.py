r"""Certified ``delta(epsilon)`` and ``epsilon(delta)`` of a PLD, vectorised, overflow-free.

From the grid ``l_i = (lower + i) h`` (``i < n``), the pmf ``p_i``, ``inf_mass``
``m`` and ``roundoff`` ``r``:

.. math:: \delta_{grid}(\epsilon) = m + \sum_{l_j > \epsilon} p_j (1 - e^{\epsilon - l_j})
          + r\, W(\#\{j : l_j > \epsilon\}),

an upper bound for a pessimistic PLD (the last term bounds the floating-point
error of ``pmf`` by Cauchy-Schwarz against the hockey-stick weights,
:func:`roundoff_weight`: ``W(c) <= sqrt(c)``, much less when the points above
``epsilon`` span less than a unit of loss).

**No exponent can overflow.**  With the suffix masses ``S_k = sum_{j >= k} p_j``
and ``D_k = sum_{j > k} p_j (1 - e^{-(j - k) h})`` (the grid part of ``delta`` at
``epsilon = l_k``; ``D_n = S_n = 0``),

.. math:: D_k = (1 - e^{-h})\, S_{k+1} + e^{-h} D_{k+1},

a linear recurrence with non-negative coefficients: ``D_k = a sum_{j >= k} b^{j-k}
S_{j+1}`` (``a = 1 - e^{-h}``, ``b = e^{-h}``) is a *discounted suffix sum*, as is ``S``
itself (``b = 1``).  :func:`discounted_suffix` evaluates one in blocks of ``B = 32``: one
matrix product with the ``B x B`` triangle ``e^{-(r' - r) h}`` (entries ``<= 1``) within
blocks, and the same sum, recursively, over block starts with discount ``e^{-B h}``
(``ceil(log_B n)`` levels).  Between grid points,
for ``l_{k-1} <= epsilon < l_k`` (``k = 0``: below the grid) and ``t = l_k -
epsilon > 0``,

.. math:: \delta_{grid}(\epsilon) - m - r\sqrt{n - k}
          = (1 - e^{-t})\, S_k + e^{-t} D_k ,

again a sum of non-negative terms: no cancellation, and no ``e^{l}`` however large
the losses (the old form ``S0 - e^eps S1`` overflowed to ``inf * 0 = nan`` beyond
``l ~ 709``).  The inverse on a segment is the closed form
``t = log1p((d - D_k) / (S_k - d))``.

**Rounding is accounted for.**  Sums and products of non-negative numbers have
relative error ``<= gamma_K = K u / (1 - K u)`` (``u = 2^-53``) when no path from an
input to the result has more than ``K`` roundings (Higham 2002, Sec. 3.1); every
discount factor ``e^{-m h}`` and ``1 - e^{-h}`` is rounded *up* (``x (1 + 8u)``), so the
computed sums bound the exact ones from above up to ``gamma_K``; ``epsilon`` is moved
down by the rounding of ``epsilon / h - lower`` before its segment is located
(``delta`` is non-increasing).  A path through one discounted sum has at most ``L (B +
3)`` roundings (``L`` levels: a dot of ``B`` terms, a product and a sum per level), so
the certified value is ``(1 + REL) (m + grid + r W(cnt)) + ABS`` with ``REL = (2 L
(B + 3) + 64) u`` (``S``, then ``D`` from ``S``, then the evaluation; ``~1e-13``) and
``ABS = 16 (n + 1) tiny`` where mass remains above ``epsilon`` (XLA flushes
subnormals to zero: each operation may lose ``tiny``).  Both are far below anything
privacy-relevant.

**Fail closed.**  A ``nan`` / ``inf`` in the pmf, ``inf_mass`` or ``roundoff`` (or a
``nan`` ``epsilon``) makes the grid bound ``1``; the Chernoff bound
(:mod:`.tail_bounds`, log space, computed from the same discretised pair) is
independent of the grid.  The reported ``delta`` is the minimum of the two
certified bounds, clipped to ``[0, 1]``.  ``epsilon(delta)`` inverts each bound
in closed form and then **re-evaluates** that same bound at the ``epsilon`` it
would return (the certificate): a candidate that fails moves up (padded
candidates, then the next grid points, then ``+inf``).  The re-evaluation is
against ``delta (1 - MARGIN - 4 REL)`` (``MARGIN`` of :mod:`dpjax.certificate`),
so a later ``delta(epsilon)`` of the same PLD, in any compilation, stays ``<= delta``.

Everything is jittable and vectorised over ``epsilon`` / ``delta`` arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax._batching import map_leading, padded
from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld._pld import PLD
from dpjax.certificate import MARGIN
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

TINY = float(np.finfo(np.float64).tiny)
#: Rounding pad of ``e^{-h}`` and ``1 - e^{-h}`` (XLA's ``exp``/``expm1``: a few ulps).
UP = 1.0 + 8.0 * _U
#: Ladder of relative pads of the closed-form inverse before falling back to grid points.
PADS = (0.0, 1.0, 16.0, 256.0, 4096.0)


class Profile(NamedTuple):
    """The suffix arrays of a PLD's grid part and its certification constants.

    Attributes:
      s: ``(n + 1,)`` ``S_k = sum_{j >= k} p_j``.
      d: ``(n + 1,)`` ``D_k = sum_{j > k} p_j (1 - e^{-(j - k) h})``.
      rel, abs_: the relative and absolute rounding inflations (module docstring).
      ok: ``False`` when the pmf, ``inf_mass`` or ``roundoff`` is not finite.
    """

    s: Array
    d: Array
    rel: Array
    abs_: Array
    ok: Array


#: Block length of :func:`discounted_suffix`.
BLOCK = 32


def suffix_levels(n: int) -> int:
    """Levels of :func:`discounted_suffix` for ``n`` terms: ``ceil(log_B n)`` (at least 1)."""
    levels, m = 1, n
    while m > BLOCK:
        m, levels = -(-m // BLOCK), levels + 1
    return levels


@float64_kernel
def discounted_suffix(c: Array, step) -> Array:
    r"""``X_k = sum_{j >= k} e^{-(j - k) step} c_j`` for non-negative ``c``: an upper bound.

    .. math:: X_{bB + r} = \sum_{r' \ge r} e^{-(r' - r)\,\text{step}}\, c_{bB + r'}
              + e^{-(B - r)\,\text{step}}\, X_{(b + 1) B}

    The first term is one matrix product with the ``B x B`` upper triangle, the block
    starts ``X_{bB}`` are the same sum of the blocks' first terms with ``step -> B step``
    (recursion on ``ceil(n / B)`` terms).  Every factor is ``<= 1`` (``step >= 0``) and
    rounded up: nothing overflows, nothing cancels, and the result bounds the exact sum
    from above up to ``gamma_K`` (Higham 2002, Sec. 3.1; module docstring).

    Args:
      c: ``(n,)`` non-negative terms (static length).
      step: discount per index, ``>= 0`` (``0``: plain suffix sums).

    Returns:
      ``(n,)`` array ``X``.
    """
    n = c.shape[-1]
    m = min(n, BLOCK)
    r = jnp.arange(m, dtype=jnp.float64)
    gap = r[None, :] - r[:, None]  # r' - r
    tri = jnp.where(gap >= 0, jnp.exp(-jnp.maximum(gap, 0.0) * step) * UP, 0.0)
    if n <= BLOCK:
        return jnp.dot(tri, c, precision=jax.lax.Precision.HIGHEST)
    nb = -(-n // BLOCK)
    blocks = jnp.pad(c, (0, nb * BLOCK - n)).reshape(nb, BLOCK)
    inner = jnp.dot(blocks, tri.T, precision=jax.lax.Precision.HIGHEST)
    starts = discounted_suffix(inner[:, 0], BLOCK * step)
    after = jnp.concatenate([starts[1:], jnp.zeros((1,), c.dtype)])  # X_{(b+1)B}
    tail = jnp.exp(-(BLOCK - r) * step) * UP
    return (inner + tail[None, :] * after[:, None]).reshape(-1)[:n]


@float64_kernel
def profile_arrays(pld: PLD) -> Profile:
    r"""The suffix arrays ``S``, ``D`` of ``pld``'s grid and its certification constants.

    .. math:: S_k = \sum_{j \ge k} p_j,\qquad
              D_k = (1 - e^{-h}) \sum_{j \ge k} e^{-(j - k)h} S_{j+1}

    (``D_k`` is the grid part of the hockey stick ``delta(l_k)``; module docstring).
    ``O(n B)`` work in matrix products; jittable.

    Args:
      pld: a :class:`PLD`.

    Returns:
      Its :class:`Profile`.
    """
    raw = pld.pmf
    n = raw.shape[-1]
    ok = jnp.all(jnp.isfinite(raw)) & jnp.isfinite(pld.inf_mass) & jnp.isfinite(pld.roundoff)
    p = jnp.where(jnp.isfinite(raw), jnp.maximum(raw, 0.0), 0.0)
    zero = jnp.zeros((1,), p.dtype)
    h = jnp.asarray(pld.bin_width, jnp.float64)
    s = jnp.concatenate([discounted_suffix(p, 0.0), zero])  # S_0 .. S_n
    # D_k = a sum_{j >= k} b^{j-k} S_{j+1}, k = 0 .. n-1; D_n = 0
    d = -jnp.expm1(-h) * UP * discounted_suffix(s[1:], h)
    d = jnp.concatenate([d, zero])
    rel = (2.0 * suffix_levels(n) * (BLOCK + 3.0) + 64.0) * _U
    abs_ = 16.0 * (n + 1.0) * TINY
    return Profile(s, d, jnp.asarray(rel), jnp.asarray(abs_), ok)


def roundoff_weight(cnt, bin_width):
    r"""``W(c) >= (sum_{m=1}^{c} w_m^2)^{1/2}`` for hockey-stick weights ``w_m <= min(1, m h)``.

    .. math:: W(c)^2 = h^2 \frac{M (M + 1)(2M + 1)}{6} + (c - M),\qquad
              M = \min(c, \lfloor 1/h \rfloor)

    The grid point ``m`` bins above ``epsilon``'s segment enters ``delta`` with weight
    ``1 - e^{-(l_j - \epsilon)} <= min(1, m h)``, so the FFT error ``e`` adds at most
    ``sum_m |e_m| w_m <= ||e||_2 W(c)`` (Cauchy-Schwarz; ``W(c) <= sqrt(c)``, and far below
    it where the window above ``epsilon`` spans less than a unit of loss, as for a
    Poisson-subsampled use at a small rate), padded by ``1e-12`` relative.

    Args:
      cnt: ``c``, the number of grid points above ``epsilon`` (float64, any shape).
      bin_width: ``h``.

    Returns:
      ``W(c)``, shape of ``cnt``.
    """
    c = jnp.asarray(cnt, jnp.float64)
    h = jnp.asarray(bin_width, jnp.float64)
    m = jnp.minimum(c, jnp.floor(1.0 / h))
    sq = h * h * m * (m + 1.0) * (2.0 * m + 1.0) / 6.0 + (c - m)
    return jnp.minimum(jnp.sqrt(sq) * (1.0 + 1e-12), jnp.sqrt(c) * (1.0 + 1e-15))


def _certified(pld: PLD, prof: Profile, k, grid):
    """``(1 + REL) (m + grid + r W(n - k)) + ABS [S_k > 0]``, fail-closed to 1, <= 1
    (:func:`roundoff_weight`)."""
    n = prof.s.shape[-1] - 1
    cnt = (n - k).astype(jnp.float64)
    spread = roundoff_weight(cnt, pld.bin_width)
    val = (pld.inf_mass + grid + pld.roundoff * spread) * (1.0 + prof.rel)
    val = val + jnp.where(prof.s[k] > 0, prof.abs_, 0.0)
    bad = ~prof.ok | ~(val >= 0)  # nan, negative
    return jnp.where(bad, 1.0, jnp.minimum(val, 1.0))


def grid_segment(pld: PLD, n: int, epsilon: Array) -> tuple[Array, Array, Array]:
    """``(k, kf, x_lo)``: the grid segment ``l_{k-1} <= epsilon < l_k`` of ``epsilon``
    (``k`` as an index and as a float64), and ``epsilon``'s position in bins moved down by
    its rounding (module docstring)."""
    h = jnp.asarray(pld.bin_width, jnp.float64)
    lower = pld.lower.astype(jnp.float64)
    eps = jnp.asarray(epsilon, jnp.float64)
    ratio = eps / h
    x = ratio - lower  # position of eps in bins
    x_lo = x - 4.0 * _U * (jnp.abs(ratio) + jnp.abs(lower) + 1.0)
    x_lo = jnp.where(jnp.isnan(x_lo), jnp.where(eps > 0, jnp.inf, -jnp.inf), x_lo)  # |eps/h| = inf
    kf = jnp.clip(jnp.floor(x_lo) + 1.0, 0.0, float(n))
    k = kf.astype(jnp.int32 if n < 2**31 - 1 else jnp.int64)
    return k, kf, x_lo


def _grid_delta(pld: PLD, prof: Profile, epsilon: Array) -> Array:
    """Certified grid bound on ``delta(epsilon)`` (module docstring)."""
    n = prof.s.shape[-1] - 1
    h = jnp.asarray(pld.bin_width, jnp.float64)
    eps = jnp.asarray(epsilon, jnp.float64)
    k, kf, x_lo = grid_segment(pld, n, eps)
    t = jnp.maximum((kf - x_lo) * h, 0.0)  # l_k - eps (inf below a -inf eps)
    grid = -jnp.expm1(-t) * prof.s[k] + jnp.exp(-t) * prof.d[k]
    return jnp.where(jnp.isnan(eps), 1.0, _certified(pld, prof, k, grid))


def _log_roundoff(pld: PLD, prof: Profile, epsilon: Array) -> Array:
    """``log(r W(n - k))``: the round-off term of the grid bound at ``epsilon`` (``-inf``
    without round-off; ``0`` where the pmf is not finite)."""
    n = prof.s.shape[-1] - 1
    k, _, _ = grid_segment(pld, n, jnp.asarray(epsilon, jnp.float64))
    term = pld.roundoff * roundoff_weight((n - k).astype(jnp.float64), pld.bin_width)
    out = jnp.where(term > 0, jnp.log(jnp.where(term > 0, term, 1.0)), -jnp.inf)
    return jnp.where(prof.ok & ~jnp.isnan(out), out, 0.0)


def _log_chernoff(pld: PLD, epsilon: Array) -> Array:
    """Certified ``log`` of ``atom_inf + Chernoff(epsilon)`` (``nan`` read as ``log 1``)."""
    log_ch = tail_bounds.log_delta_chernoff(pld.log_mgf, epsilon)
    out = jnp.logaddexp(jnp.log(pld.atom_inf), log_ch)
    out = out + 4.0 * _U * jnp.abs(jnp.where(jnp.isfinite(out), out, 0.0))
    return jnp.where(jnp.isnan(out) | jnp.isnan(epsilon), 0.0, jnp.minimum(out, 0.0))


def _log_delta(pld: PLD, eps: Array, prof: Profile) -> Array:
    grid = _grid_delta(pld, prof, eps)
    log_grid = jnp.log(grid)
    return jnp.minimum(log_grid, _log_chernoff(pld, eps))


@padded(minimum=16)  # few compiles: x flattened, padded to a power of two
@jax.jit
@float64_kernel
def log_delta_for_epsilon(pld: PLD, epsilon: ArrayLike) -> Array:
    r"""``log delta(epsilon)``: min of the certified grid and Chernoff bounds (module docstring).

    .. math:: \delta(\epsilon) = \min\Big(m + \sum_{l_j > \epsilon} p_j (1 - e^{\epsilon - l_j})
              + r\sqrt{\#\{l_j > \epsilon\}},\ \text{atom}_\infty
              + \min_{\lambda > 0} e^{\log M(\lambda) - \lambda\epsilon}\Big)

    each inflated by its rounding bound: the hockey-stick divergence of the PLD (eq. (2) of
    flipped-huber-mechanism; Sommer, Meiser & Mohammadi 2019; Koskela, Jälkö & Honkela
    2020) and the Chernoff bound of :mod:`.tail_bounds`.

    Args:
      pld: a pessimistic :class:`PLD`.
      epsilon: array of ``epsilon`` (``nan`` gives ``log 1 = 0``).

    Returns:
      ``log`` of a certified upper bound on ``delta(epsilon)``, ``<= 0``, shape of
      ``epsilon``.
    """
    return _log_delta(pld, jnp.asarray(epsilon, jnp.float64), profile_arrays(pld))


class Queries(NamedTuple):
    """Both queries of one PLD at ``x`` and the round-off terms behind them.

    Attributes:
      log_delta: ``log delta(x)``, ``x`` read as epsilons.
      epsilon: ``epsilon(x)``, ``x`` read as deltas.
      log_roundoff: ``log(r W)`` at ``epsilon = x``: the round-off term in ``log_delta``.
      log_roundoff_at_epsilon: ``log(r W)`` at ``epsilon(x)``: the round-off term that
        the returned epsilon pays for.
    """

    log_delta: Array
    epsilon: Array
    log_roundoff: Array
    log_roundoff_at_epsilon: Array


@float64_kernel
def both_queries(pld: PLD, x: ArrayLike, prof: Profile | None = None) -> Queries:
    r"""``log delta(x)`` and ``epsilon(x)`` of one PLD (``x`` read as epsilons, then as
    deltas) and the round-off term ``r W`` of the grid bound at each.

    .. math:: \big(\log\delta(x_i),\ \epsilon(x_i),\ \log r W(c(x_i)),\
              \log r W(c(\epsilon(x_i)))\big)

    :func:`log_delta_for_epsilon` and :func:`epsilon_for_delta` sharing one
    :func:`profile_arrays` (one set of suffix sums traced and compiled, not two); the same
    certified answers.  The round-off terms say where the FFT's certified error floor
    (it grows with the number of compositions) decides an answer: there the engine also
    runs the tilted composition (:mod:`.pld.engine`).

    Args:
      pld: a pessimistic :class:`PLD`.
      x: 1-D array, read as ``epsilon`` by the first query and as ``delta`` by the second.
      prof: ``profile_arrays(pld)`` if already computed (else computed here).

    Returns:
      The :class:`Queries`, each of the shape of ``x``.
    """
    x = jnp.asarray(x, jnp.float64)
    prof = profile_arrays(pld) if prof is None else prof
    eps = _epsilon(pld, x, prof)
    return _queries_of(certificate(pld, _points(x, eps), prof), eps, x.shape[0])


def _points(x: Array, epsilon: Array, *more: Array) -> Array:
    """The points whose profile (:func:`certificate`) the queries read: ``x``, each
    answered ``epsilon`` (``0`` where not finite), then ``more``: one evaluation of the
    bound for all of them, so that a program traces and compiles it once."""
    return jnp.concatenate([x, jnp.where(jnp.isfinite(epsilon), epsilon, 0.0), *more])


def _queries_of(at: Certificate, epsilon: Array, n: int) -> Queries:
    """The :class:`Queries` of the profile ``at`` :func:`_points` ``(x, epsilon, ...)``
    (``n`` entries of ``x``)."""
    return Queries(at.log_delta[:n], epsilon, at.log_roundoff[:n], at.log_roundoff[n:2 * n])


class Certificate(NamedTuple):
    """The profile of one PLD at an answered ``epsilon``: what certifies it.

    Attributes:
      log_delta: ``log delta(epsilon)`` (:func:`log_delta_for_epsilon`).
      log_roundoff: ``log(r W)`` at ``epsilon``: the round-off term in ``log_delta``.
    """

    log_delta: Array
    log_roundoff: Array


@float64_kernel
def certificate(pld: PLD, epsilon: ArrayLike, prof: Profile) -> Certificate:
    r"""``log delta(epsilon)`` of one PLD and its round-off term, from its suffix arrays.

    .. math:: \big(\log\delta(\epsilon_i),\ \log r W(c(\epsilon_i))\big)

    The profile at the ``epsilon`` an epsilon query answered, read off the same composed
    PLD and the same :func:`profile_arrays` (``prof``) as the query: the same value as
    :func:`both_queries`' ``log_delta`` at ``epsilon``, with nothing else traced (no second
    set of suffix sums, no epsilon search).

    Args:
      pld: a pessimistic :class:`PLD`.
      epsilon: array of ``epsilon``.
      prof: ``profile_arrays(pld)``.

    Returns:
      The :class:`Certificate`, each of the shape of ``epsilon``.
    """
    eps = jnp.asarray(epsilon, jnp.float64)
    return Certificate(_log_delta(pld, eps, prof), _log_roundoff(pld, prof, eps))


@float64_kernel
def worse_queries(plds: PLD, x: ArrayLike) -> tuple[Queries, Certificate]:
    r"""Both queries of stacked PLDs (a leading adjacency axis), the worse adjacency's entry
    by entry, and the profile at the epsilon answered: what certifies it.

    .. math:: \epsilon(x_i) = \max_a \epsilon_a(x_i),\quad
              \log\delta(\epsilon(x_i)) = \max_a \log\delta_a(\epsilon(x_i))

    Each adjacency's :func:`profile_arrays` and ``epsilon(x)``, then one evaluation of its
    bound (:func:`certificate`) at ``x``, at its own epsilon and at the worse adjacency's:
    the :class:`Queries` of :func:`both_queries` (the worse adjacency's) and the
    :class:`Certificate` at ``epsilon(x)``, with the grid and Chernoff bounds traced once,
    not once per point set (the engine's queries program, :mod:`.pld.engine`).

    Args:
      plds: pessimistic :class:`PLD` s stacked on a leading adjacency axis.
      x: 1-D array, read as ``epsilon`` by the first query and as ``delta`` by the second.

    Returns:
      ``(Queries at x, Certificate at epsilon(x))``, each the worse adjacency's, entry by
      entry, of the shape of ``x``.

    Example:
      >>> import jax, numpy as np; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import from_gaussian
      >>> pld = from_gaussian(sigma=1.0, sensitivity=1.0, bin_width=1e-4)
      >>> stacked = jax.tree.map(lambda v: v[None], pld)  # one adjacency
      >>> both, at = worse_queries(stacked, np.array([1e-5]))
      >>> float(both.epsilon[0])  # closed form 4.3772  # doctest: +ELLIPSIS
      4.377...
      >>> bool(at.log_delta[0] <= np.log(1e-5))  # the profile at it certifies it
      True
    """
    x = jnp.asarray(x, jnp.float64)

    def answered(pld):
        prof = profile_arrays(pld)
        return _epsilon(pld, x, prof), prof

    eps, profs = map_leading(answered, plds)
    worst = jnp.max(eps, axis=0)
    at = map_leading(
        lambda pld, prof, own: certificate(pld, _points(x, own, worst), prof), plds, profs, eps
    )
    at = jax.tree.map(lambda v: jnp.max(v, axis=0), at)
    n = x.shape[0]
    return _queries_of(at, worst, n), Certificate(at.log_delta[2 * n:], at.log_roundoff[2 * n:])


@padded(minimum=16)  # as log_delta_for_epsilon, the exp in the same program
@jax.jit
@float64_kernel
def delta_for_epsilon(pld: PLD, epsilon: ArrayLike) -> Array:
    r"""``delta(epsilon)`` of a PLD: ``exp`` of :func:`log_delta_for_epsilon`.

    .. math:: \delta(\epsilon) = P(L = \infty) + \mathbb E\big[(1 - e^{\epsilon - L})_+;\
              L < \infty\big]

    (eq. (2) of flipped-huber-mechanism), certified as in :func:`log_delta_for_epsilon`.

    Args:
      pld: a pessimistic :class:`PLD`.
      epsilon: array of ``epsilon``.

    Returns:
      A certified upper bound on ``delta(epsilon)`` in ``[0, 1]``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import from_laplace
      >>> pld = from_laplace(scale=1.0, sensitivity=1.0, bin_width=1e-4)
      >>> float(delta_for_epsilon(pld, 0.0))  # closed form 1 - e^{-1/2} = 0.393469...
      0.39346...
    """
    return jnp.exp(_log_delta(pld, jnp.asarray(epsilon, jnp.float64), profile_arrays(pld)))


def first_settled(values: Array, target) -> Array:
    r"""The first index from which every value is ``<= target``: ``len(values)`` if the last
    is above it.

    .. math:: k = \min\{k : v_j \le \text{target}\ \forall j \ge k\}
              = 1 + \max\{j : \lnot(v_j \le \text{target})\}\ (0 \text{ if none})

    One comparison and one reduction (no running maximum and search, whose compiled
    programs are larger); a ``nan`` value or target counts as above, so it can only move
    ``k`` up (a larger, still certified ``epsilon``).

    Args:
      values: ``(n,)`` values, e.g. certified ``delta`` bounds at the grid's points.
      target: scalar or array of levels.

    Returns:
      Integer ``k`` in ``[0, n]``, shape of ``target``.

    Example:
      >>> import jax.numpy as jnp
      >>> int(first_settled(jnp.array([3.0, 1.0, 2.0, 0.5]), 1.5))
      3
    """
    above = ~(values <= jnp.asarray(target)[..., None])
    return jnp.max(jnp.where(above, jnp.arange(1, values.shape[-1] + 1), 0), axis=-1)


def first_ok(candidates: Array, ok: Array) -> Array:
    """The first candidate (last axis) whose certificate holds; ``+inf`` if none."""
    idx = jnp.argmax(ok, axis=-1)
    pick = jnp.take_along_axis(candidates, idx[..., None], axis=-1)[..., 0]
    return jnp.where(jnp.any(ok, axis=-1), pick, jnp.inf)


def _grid_epsilon(pld: PLD, prof: Profile, target: Array) -> Array:
    """Least certified grid ``epsilon`` with grid bound ``<= target`` (module docstring)."""
    n = prof.s.shape[-1] - 1
    h = jnp.asarray(pld.bin_width, jnp.float64)
    lower = pld.lower.astype(jnp.float64)
    ks = jnp.arange(n + 1)
    # certified value at l_k approached from the left (count n - k): non-increasing in k
    k = first_settled(_certified(pld, prof, ks, prof.d), target)
    kc = jnp.minimum(k, n)
    s, d = prof.s[kc], prof.d[kc]
    cnt = (n - kc).astype(jnp.float64)
    extra = jnp.where(s > 0, prof.abs_, 0.0)
    spread = roundoff_weight(cnt, h)
    want = (target - extra) / (1.0 + prof.rel) - pld.inf_mass - pld.roundoff * spread
    # (1 - e^{-t}) s + e^{-t} d = want  <=>  t = log1p((want - d) / (s - want))
    room = s - want
    t = jnp.where(
        room > 0, jnp.log1p(jnp.maximum(want - d, 0.0) / jnp.where(room > 0, room, 1.0)), jnp.inf
    )
    l_k = (lower + kc.astype(jnp.float64)) * h
    eps = l_k - t
    eps = jnp.where(kc > 0, jnp.maximum(eps, l_k - h), eps)
    scale = jnp.abs(l_k) + jnp.abs(lower) * h + h
    pads = jnp.asarray(PADS) * 64.0 * _U
    seg = eps[..., None] + pads * scale[..., None]
    grid_pts = l_k[..., None] + h * jnp.arange(3.0)  # l_k, l_{k+1}, l_{k+2}
    cands = jnp.maximum(jnp.concatenate([seg, grid_pts], axis=-1), 0.0)
    ok = _grid_delta(pld, prof, cands) <= target[..., None]
    return jnp.where(k <= n, first_ok(cands, ok), jnp.inf)


def _chernoff_epsilon(pld: PLD, target: Array) -> Array:
    """Least certified Chernoff ``epsilon`` with ``atom_inf + Chernoff <= target``."""
    rest = target - pld.atom_inf * (1.0 + 4.0 * _U)
    log_rest = jnp.log(jnp.where(rest > 0, rest, 1.0)) - 4.0 * _U * jnp.abs(jnp.log(target))
    eps = jnp.where(rest > 0, tail_bounds.epsilon_chernoff(pld.log_mgf, log_rest), jnp.inf)
    cands = jnp.stack([eps, eps * (1.0 + 2.0**-40) + 2.0**-40], axis=-1)
    ok = _log_chernoff(pld, cands) <= jnp.log(target)[..., None]
    return first_ok(cands, ok & jnp.isfinite(cands))


@padded(minimum=16)
@jax.jit
@float64_kernel
def epsilon_for_delta(pld: PLD, delta: ArrayLike) -> Array:
    r"""Least ``epsilon >= 0`` with certified ``delta(epsilon) <= delta``; ``+inf`` if none.

    .. math:: \epsilon(\delta) = \min\big(\epsilon_{grid}, \epsilon_{Chernoff}\big),\quad
              \delta_{\cdot}(\epsilon_{\cdot}) \le \delta\,(1 - \text{MARGIN} - 4\,\text{REL})

    The minimum of the grid answer and the Chernoff answer, each certified by re-evaluating
    its own bound (:func:`log_delta_for_epsilon`) at the returned ``epsilon`` (module
    docstring).

    Args:
      pld: a pessimistic :class:`PLD`.
      delta: array of targets.

    Returns:
      Certified ``epsilon``, shape of ``delta``: finite for any ``delta > atom_inf`` (e.g.
      ``1e-30``); ``0`` for ``delta >= 1``; ``+inf`` for ``delta <= 0`` or ``nan``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import from_gaussian
      >>> pld = from_gaussian(sigma=1.0, sensitivity=1.0, bin_width=1e-4)
      >>> float(epsilon_for_delta(pld, 1e-5))  # closed form 4.3772  # doctest: +ELLIPSIS
      4.377...
    """
    return _epsilon(pld, jnp.asarray(delta, jnp.float64), profile_arrays(pld))


def _epsilon(pld: PLD, dl: Array, prof: Profile) -> Array:
    """:func:`epsilon_for_delta` with ``pld``'s :class:`Profile` given."""
    target = dl * (1.0 - MARGIN - 4.0 * prof.rel)
    grid = _grid_epsilon(pld, prof, target)
    ch = _chernoff_epsilon(pld, target)
    eps = jnp.minimum(grid, ch)
    eps = jnp.where(dl >= 1.0, 0.0, eps)
    return jnp.where(~(dl > 0), jnp.inf, eps)


__all__ = [
    "Certificate",
    "Profile",
    "Queries",
    "both_queries",
    "certificate",
    "delta_for_epsilon",
    "epsilon_for_delta",
    "log_delta_for_epsilon",
    "profile_arrays",
    "worse_queries",
]
