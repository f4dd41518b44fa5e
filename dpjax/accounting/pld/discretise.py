r"""Constructors: pessimistic PLDs of 1-D pairs with a monotone privacy loss.

A :class:`MonotonePair` describes two 1-D laws ``P``, ``Q`` whose privacy loss
``L(t) = log p(t) / q(t)`` is non-decreasing in ``t`` (true for every
symmetric log-concave noise at a shift: ``P = T``, ``Q = T - Delta``, loss
``zeta_Delta(t) = log g(t) - log g(t + Delta)`` of Sec. II-C of
flipped-huber-mechanism; and for their Poisson-subsampled pairs,
:mod:`.subsample`).  With ``t(eps) = sup{t : L(t) <= eps}`` (the
right-continuous partial inverse of eq. (15) of flipped-huber-mechanism) the
exact profile is

.. math:: \delta(\epsilon) = \bar G_P(t(\epsilon)) - e^\epsilon \bar G_Q(t(\epsilon))

(eq. (14)/(16) of flipped-huber-mechanism, Lemma of Balle & Wang 2018).

**Connect-the-dots** (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022):
on the grid ``eps_i = (lower + i) h`` the PLD whose hockey-stick curve is the
chord interpolation of the exact ``delta(eps_i)`` in the variable
``x = e^eps`` has atoms

.. math:: p_i = e^{\epsilon_i}(B_{i-1} - B_i),\quad
          B_i = \frac{\delta_i - \delta_{i+1}}{e^{\epsilon_{i+1}} - e^{\epsilon_i}}
              = Q(L > \epsilon_{i+1}) + W_i,\quad
          W_i = \frac{P(\text{bin}_i) e^{-\epsilon_i} - Q(\text{bin}_i)}{e^h - 1},

``bin_i = (eps_i, eps_{i+1}]``, ``delta(eps_{n-1})`` at ``+infinity`` and
``P(L <= eps_0)`` lumped onto ``eps_0``.  Since ``delta`` is convex in
``e^eps``, the chord lies above it for *every* ``epsilon``: the discretised
pair dominates the true one, and so do all its compositions (pessimistic).
The form with ``W_i`` (bin masses computed as differences of survival
functions on the side where they are small) has no cancellation of order 1,
so masses down to 1e-300 keep ~1e-12 relative accuracy; point masses of
``L`` (the flat part of the flipped Huber loss, Laplace's ends) are exact:
they sit inside a bin and the chord formula integrates them exactly.

``pessimistic=False`` instead merges the outcomes of each bin (a post-processing:
the merged pair is dominated by the true one) and rounds each merged loss
``c_j = log P(bin_j) / Q(bin_j)`` *down* to the grid (the top tail at the last
point at or below its losses, the bottom tail dropped): a lower bound, the lower half
of brackets.  Its
bins are centred just above their labels, so a use loses ``O(h^2)`` plus a small
offset rather than the ``h / 2`` of rounding every loss down (:func:`_merged_down`).

A noise family's pair asks the family for its loss, the loss's inverse and the
range's end (:mod:`dpjax.noise.privacy_loss`: closed forms where the family has
them, bisection otherwise).  Pairs given as atoms are in :mod:`.atoms`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax._batching import device_array
from dpjax.accounting.pld._pld import PLD, make
from dpjax.accounting.pld.compose import floored_size
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.laplace import Laplace
from dpjax.noise.privacy_loss import privacy_loss_inverse, tail_point
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import LOG_HALF

#: Default probability left outside the ``t`` range of a pair (each side):
#: the top of the loss grid is where ``P`` keeps at most this much mass.
TAIL = 1e-40


class MonotonePair(NamedTuple):
    """A pair ``(P, Q)`` of 1-D laws with loss ``L(t) = log p/q`` non-decreasing in ``t``.

    Attributes:
      log_sf_p, log_cdf_p, log_sf_q, log_cdf_q: ``log P(T > t)`` etc.
      loss: ``L(t)`` (may be ``+-inf`` outside a support).
      loss_inverse: ``eps -> sup{t : L(t) <= eps}`` (clipped to ``t_range`` by the caller).
      t_lo, t_hi: a range outside which ``P`` and ``Q`` each have at most ``TAIL`` mass.
    """

    log_sf_p: Callable[[Array], Array]
    log_cdf_p: Callable[[Array], Array]
    log_sf_q: Callable[[Array], Array]
    log_cdf_q: Callable[[Array], Array]
    loss: Callable[[Array], Array]
    loss_inverse: Callable[[Array], Array]
    t_lo: Array
    t_hi: Array
    tails: Callable[[Array], tuple] | None = None

    def all_tails(self, t):
        """``(log_sf_p, log_cdf_p, log_sf_q, log_cdf_q)`` at ``t``, jointly when the pair can
        (one special-function call on stacked arguments: a 4x smaller program to compile).

        Args:
          t: points (1-D).
        """
        if self.tails is not None:
            return self.tails(t)
        return self.log_sf_p(t), self.log_cdf_p(t), self.log_sf_q(t), self.log_cdf_q(t)


@float64_kernel
def noise_pair(noise, sensitivity, tail=TAIL) -> MonotonePair:
    r"""The pair ``P = T``, ``Q = T - Delta`` of a symmetric log-concave noise family.

    The loss is the family's ``privacy_loss(t, Delta) = log g(t) - log g(t + Delta)``,
    non-decreasing in ``t`` for log-concave ``g`` (Sec. II-C of flipped-huber-mechanism).
    Its inverse and the range's upper end are asked of the family
    (:mod:`dpjax.noise.privacy_loss`): closed forms where the family has them
    (Gaussian, Laplace, flipped Huber eq. (15)), bisection otherwise, so any family of
    :mod:`dpjax.noise` plugs in.

    Args:
      noise: a symmetric log-concave noise family (:class:`dpjax.noise.NoiseFamily`).
      sensitivity: the shift ``Delta > 0``.
      tail: mass of ``P`` (and of ``Q``) allowed outside ``[t_lo, t_hi]`` on each side.

    Returns:
      The :class:`MonotonePair`, with ``t_hi`` a point where ``P(T > t_hi) <= tail`` and
      ``t_lo = -t_hi - Delta``.
    """
    d = jnp.asarray(sensitivity, jnp.float64)

    def log_cdf(t):
        return noise.log_sf(-t)

    t_hi = tail_point(noise, tail)
    t_lo = -t_hi - d

    def loss(t):
        return noise.privacy_loss(t, d)

    def inverse(eps):
        return privacy_loss_inverse(noise, eps, d, t_lo, t_hi)

    def tails(t):
        # symmetric noise: log sf(-u) = log cdf(u) = log(1 - sf(|u|)) for u >= 0, so one
        # special-function call at |u| gives both (the complement is >= 1/2: no cancellation)
        n = t.shape[0]
        u = jnp.concatenate([t, t + d])
        small = noise.log_sf(jnp.abs(u))
        large = jnp.log1p(-jnp.exp(small))  # small <= log(1/2): the log1p branch of log1mexp
        up = u >= 0
        sf, cdf = jnp.where(up, small, large), jnp.where(up, large, small)
        return sf[:n], cdf[:n], sf[n:], cdf[n:]

    return MonotonePair(
        log_sf_p=noise.log_sf,
        log_cdf_p=log_cdf,
        log_sf_q=lambda t: noise.log_sf(t + d),
        log_cdf_q=lambda t: log_cdf(t + d),
        loss=loss,
        loss_inverse=inverse,
        t_lo=t_lo,
        t_hi=t_hi,
        tails=tails,
    )


def materialise(x):
    """Force ``x`` into its own buffer: XLA (CPU) otherwise re-evaluates the special
    functions inside every fused consumer of the shifted slices ``x[:-1]``, ``x[1:]``
    (measured 4x slower); a plain ``optimization_barrier`` does not prevent it."""
    x = jax.lax.optimization_barrier(jnp.concatenate([x, jnp.zeros((1,), x.dtype)]))
    return x[:-1]


def intervals(ls, lc, log_scale=0.0):
    """``e^{log_scale} P(t_i < T <= t_{i+1})`` for consecutive points from ``log sf``, ``log cdf``
    at the points, using whichever of ``sf(t_i)``, ``cdf(t_{i+1})`` is small (no cancellation
    of order 1): ``exp(log_scale + big) (1 - e^{small - big})``.  The scale enters the
    exponent, so a scaled mass ``e^{eps_i} Q(bin_i) <= P(bin_i)`` neither overflows (as
    ``e^{eps}`` alone does beyond 709) nor loses a ``Q(bin_i)`` below the smallest float."""
    ls, lc = materialise(ls), materialise(lc)
    use_sf = ls[:-1] <= LOG_HALF
    # P(bin) = e^big (1 - e^{small - big}) with (big, small) = (sf_a, sf_b) or (cdf_b, cdf_a):
    # select first, then one exp and one expm1 per bin
    big = jnp.where(use_sf, ls[:-1], lc[1:])
    small = jnp.where(use_sf, ls[1:], lc[:-1])
    ok = jnp.isfinite(big) & (small < big)
    mass = jnp.exp(log_scale + big) * -jnp.expm1(jnp.where(ok, small - big, -1.0))
    return jnp.where(ok, mass, 0.0), ls, lc


@float64_kernel
def pair_grid(pair: MonotonePair, bin_width: float) -> tuple[int, int]:
    """Host helper: ``(lower, size)`` of a grid covering ``[L(t_lo), L(t_hi)]`` (concrete pair).

    Args:
      pair: a concrete :class:`MonotonePair`.
      bin_width: the loss-grid width ``h``.

    Returns:
      ``(lower, size)``: the grid is ``(lower + i) h``, ``i < size``.
    """
    lo = float(pair.loss(jnp.asarray(pair.t_lo)))
    hi = float(pair.loss(jnp.asarray(pair.t_hi)))
    lower = math.floor(lo / bin_width) - 1
    upper = math.ceil(hi / bin_width) + 1
    return lower, upper - lower + 1


def connect_dots(p_bin, qs, p_above, qs_above, p_below, h, xp=jnp):
    r"""Connect-the-dots pmf and ``inf_mass`` from *scaled* ``Q``-masses (module docstring).

    With ``qs_i = e^{eps_i} Q(bin_i)`` and ``ws_i = e^{eps_i} W_i = (P(bin_i) - qs_i) /
    (e^h - 1)`` (clipped to ``[0, qs_i]``), ``p_i = e^{eps_i} (Q(bin_i) + W_{i-1} - W_i)
    = qs_i - ws_i + e^h ws_{i-1}``; the top point gets ``qs_above + e^h ws_{n-2}``, the bottom
    ``P(L <= eps_0) + qs_0 - ws_0``, and ``inf_mass = P(L > eps_top) - qs_above``.  Every
    factor is at most ``e^h`` times a probability: no overflow at any loss.

    Args:
      p_bin, qs: ``P(bin_i)`` and ``e^{eps_i} Q(bin_i)`` of the ``n - 1`` bins.
      p_above, qs_above: ``P(L > eps_top)`` and ``e^{eps_top} Q(L > eps_top)``.
      p_below: ``P(L <= eps_0)``.
      h: the bin width.
      xp: the array namespace: ``jax.numpy`` (traced, the default) or ``numpy`` (a host
        caller with concrete arrays: no compile per array length).

    Returns:
      ``(pmf, inf_mass)``: the ``n`` point masses and the mass at ``+infinity``.
    """
    eh = xp.exp(h)
    ws = xp.clip((p_bin - qs) / xp.expm1(h), 0.0, qs)
    inner = qs[1:] - ws[1:] + eh * ws[:-1]
    top = qs_above + eh * ws[-1]
    bottom = p_below + qs[0] - ws[0]
    pmf = xp.concatenate([xp.reshape(bottom, (1,)), inner, xp.reshape(top, (1,))])
    return pmf, xp.maximum(p_above - qs_above, 0.0)


def _t_at(pair: MonotonePair, losses):
    """``t(l) = sup{t : L(t) <= l}`` at ``losses``, clipped to a finite range and
    materialised (:func:`materialise`)."""
    big = 1e300
    t = jnp.clip(pair.loss_inverse(losses), -big, big)
    t = jnp.clip(t, 2.0 * pair.t_lo - pair.t_hi, 2.0 * pair.t_hi - pair.t_lo)
    return materialise(t)


#: Relative accuracy of one optimistic bin mass (``~1e-12``, see :data:`_MERGE_MARGIN`),
#: padded: what the lower ends of :mod:`dpjax.accounting.bracket` charge per use.
BIN_MASS_ERROR = 1e-11
#: Margin of a merged bin's test ``log P(bin) - log(e^{eps_j} Q(bin)) >= margin``: the bin
#: masses keep ``~1e-12`` relative accuracy (:data:`BIN_MASS_ERROR` pads ``1e-11``).
_MERGE_MARGIN = 4e-11


def _merged_bins(pair: MonotonePair, eps, h, offset):
    """Bins ``(e_{j-1}, e_j]``, ``e_j = eps_j + h/2 + o_j`` (``offset``: a scalar or one per
    edge), labelled ``j = 1 .. n-1``:
    ``(P(bin), log P(bin) - log(e^{eps_j} Q(bin)), P(L > e_{n-1}), L(t(e_{n-1})))``."""
    t = _t_at(pair, eps + 0.5 * h + offset)
    lsp, lcp, lsq, lcq = pair.all_tails(t)
    p_bin, lsp, _ = intervals(lsp, lcp)
    qs, _, _ = intervals(lsq, lcq, eps[1:])
    gap = jnp.where(p_bin > 0, jnp.log(jnp.where(p_bin > 0, p_bin, 1.0)) - jnp.log(qs), -jnp.inf)
    return p_bin, gap, jnp.exp(lsp[-1]), pair.loss(t[-1])


def _merged_down(pair: MonotonePair, eps, h, lower) -> PLD:
    r"""Optimistic PLD: bins merged (a post-processing), each merged loss rounded down.

    Merging the outcomes whose loss lies in ``bin_j = (e_{j-1}, e_j]`` is a post-processing,
    so the merged pair (one outcome per bin, loss ``c_j = log P(bin_j) / Q(bin_j)``) is
    dominated by the true one, and so are its compositions.  Its loss ``c_j`` is rounded
    down to the grid: to ``eps_j`` where ``log P(bin_j) - log(e^{eps_j} Q(bin_j)) >= 4 \cdot
    10^{-11}`` (``c_j >= eps_j`` with a margin for the bin masses' rounding), else to
    ``eps_{j-1}`` (``c_j > e_{j-1} >= eps_{j-1}``); lowering a loss lowers every hockey stick
    (pathwise coupling), so the PLD is a lower bound whatever the edges.  The edges are
    placed so that ``c_j`` lands just above its label: a first pass with centred bins
    (``e_j = eps_j + h/2``) gives ``g_j = c_j - eps_j`` (``O(h^2)``: the merged loss is near
    the bin's centre); the second pass moves edge ``j`` by ``o_j = -(g_j + g_{j+1})/2 +
    |g_{j+1} - g_j| + 10^{-6} h + 8 \cdot 10^{-11}`` (clipped to ``[-h/4, h/4]``), so a use
    loses about the margin instead of the ``h / 2`` of plain rounding down.  Where the grid
    is too coarse for the bins' curvature (the labels would lose more,
    ``sum_j P(bin_j) (c_j - label_j)``), the edges sit at the labels instead (``o_j =
    -h/2``: plain rounding down).  Mass above the top edge (every loss above ``L(t(e_{n-1}))``)
    goes to the greatest point at or below that loss (the top point unless the grid reaches
    above the pair's range: zero-mass padding is exact), mass below the bottom edge is
    dropped.
    """
    n = eps.shape[0]
    _, gap0, _, _ = _merged_bins(pair, eps, h, 0.0)
    g = jnp.where(jnp.isfinite(gap0), gap0, 0.0)
    g = jnp.concatenate([g, g[-1:]])  # g_j for j = 1 .. n (the last repeated)
    mid = 0.5 * (g[:-1] + g[1:])
    margin = jnp.abs(g[1:] - g[:-1]) + 1e-6 * h + 2.0 * _MERGE_MARGIN
    inner = jnp.clip(-mid + margin, -0.25 * h, 0.25 * h)  # edges e_1 .. e_{n-1}
    offset = jnp.concatenate([inner[:1], inner])  # e_0 moves with e_1

    def labelled(offset):
        p_bin, gap, p_above, loss_edge = _merged_bins(pair, eps, h, offset)
        ok = gap >= _MERGE_MARGIN
        here = jnp.where(ok, p_bin, 0.0)
        down = jnp.where(ok, 0.0, p_bin)
        pmf = jnp.concatenate([down, jnp.zeros((1,))]) + jnp.concatenate([jnp.zeros((1,)), here])
        # the mass above the top edge (every loss > loss_edge) at the greatest point <=
        # loss_edge: the top point unless the grid reaches above the pair's range, where
        # the top point would raise those losses (a lower bound may only lower them)
        at = jnp.searchsorted(eps, loss_edge, side="right") - 1
        at = jnp.where(jnp.isnan(loss_edge), n - 1, jnp.clip(at, 0, n - 1))
        pmf = pmf.at[at].add(p_above)
        # what the labels lose against the merged losses (P-weighted): gap, or gap + h
        miss = jnp.clip(gap, 0.0, h) + jnp.where(ok, 0.0, h)
        lost = jnp.sum(jnp.where(p_bin > 0, p_bin * miss, 0.0))
        return pmf, lost, p_above

    pmf, lost, above = labelled(offset)
    # the edges at the labels (o = -h/2: plain rounding down) where they lose less (a grid
    # too coarse for the bins' curvature); either is a lower bound
    plain, lost_plain, above_plain = labelled(jnp.full_like(offset, -0.5 * h))
    use_plain = ~(lost <= lost_plain)
    pmf = jnp.where(use_plain, plain, pmf)
    above = jnp.where(use_plain, above_plain, above)
    offset = jnp.where(use_plain, -0.5 * h, offset[0])
    truncated = above + jnp.exp(pair.log_cdf_p(_t_at(pair, eps[:1] + 0.5 * h + offset))[0])
    return make(h, lower, pmf, 0.0, truncated_mass=truncated, pessimistic=False)


@float64_kernel
def discretise_pair(
    pair: MonotonePair, bin_width, lower, size: int, pessimistic: bool = True
) -> PLD:
    r"""PLD of ``pair`` on the grid ``(lower + i) * bin_width``, ``i < size`` (jittable).

    Pessimistic connect-the-dots by default (module docstring): atoms
    ``p_i = e^{eps_i}(B_{i-1} - B_i)`` through the exact ``delta(eps_i)`` of eq. (14)/(16) of
    flipped-huber-mechanism.  The grid need not cover the loss range: mass above the top
    goes to ``+infinity`` (``inf_mass = delta(eps_top)``), mass below is lumped onto the
    bottom.  A grid that reaches above the range (a length padded to the ladder,
    :func:`dpjax._batching.ladder`) puts the atom ``e^{L(t_top)} Q(L > L(t_top))`` of the
    cut tail at the least point at or above ``L(t_top)``, not at the grid's top: padding
    with zero mass is then exact (an atom far up the grid would dominate a tilted
    composition's moments, :mod:`.tilted`).

    Args:
      pair: the :class:`MonotonePair`.
      bin_width: the loss-grid width ``h``.
      lower: index of the grid's first point (``eps_0 = lower h``).
      size: number of grid points (static).
      pessimistic: connect-the-dots upper bound (default) or rounding down (lower bound).
    """
    h = jnp.asarray(bin_width, jnp.float64)
    eps = (jnp.asarray(lower, jnp.float64) + jnp.arange(size, dtype=jnp.float64)) * h
    if not pessimistic:
        return _merged_down(pair, eps, h, lower)
    t = _t_at(pair, eps)
    lsp, lcp, lsq, lcq = pair.all_tails(t)
    p_bin, lsp, lcp = intervals(lsp, lcp)
    p_above, p_below = jnp.exp(lsp[-1]), jnp.exp(lcp[0])
    truncated = p_above + p_below
    # scaled Q-masses e^{eps_i} Q(bin_i) <= P(bin_i) and e^{eps_top} Q(L > eps_top) <= P(...):
    # exp of a sum of logs, never e^{eps} (overflows beyond 709) times a tiny mass
    qs, lsq, _ = intervals(lsq, lcq, eps[:-1])
    # above the top point the loss exceeds loss(t_top), which is below eps_top where the
    # inverse was clipped to its bracket (a mixture's bisection): scale by the smaller, so
    # that e^{.} Q(above) <= P(above) still holds (nan: everything above goes to +infinity)
    loss_top = pair.loss(t[-1])
    top = jnp.where(jnp.isnan(loss_top), -jnp.inf, jnp.minimum(eps[-1], loss_top))
    qs_above = jnp.where(jnp.isfinite(lsq[-1]), jnp.exp(top + lsq[-1]), 0.0)
    pmf, _ = connect_dots(p_bin, qs, p_above, 0.0, p_below, h)
    # the atom e^{top} Q(above) at the least grid point >= top (the top point unless the
    # grid reaches above the pair's range): every loss above is > top, so any point >= top
    # keeps each delta(eps) an upper bound, and the least keeps zero-mass padding exact
    at = jnp.where(jnp.isnan(loss_top), size - 1,
                   jnp.minimum(jnp.searchsorted(eps, top, side="left"), size - 1))
    pmf = pmf.at[at].add(qs_above)
    inf_mass = jnp.maximum(p_above - qs_above, 0.0)
    return make(h, lower, pmf, inf_mass, truncated_mass=truncated, pessimistic=True)


@float64_kernel
def from_pair(pair: MonotonePair, bin_width: float, pessimistic: bool = True) -> PLD:
    """PLD of a concrete pair on a grid covering its loss range (host sizing, jitted kernel).

    Args:
      pair: a concrete :class:`MonotonePair`.
      bin_width: the loss-grid width ``h``.
      pessimistic: connect-the-dots upper bound (default) or rounding down.
    """
    lower, size = pair_grid(pair, bin_width)
    return discretise_pair(pair, bin_width, lower, size, pessimistic)


@jax.jit
def _noise_loss_range(noise, sensitivity, tail=TAIL):
    pair = noise_pair(noise, sensitivity, tail)
    return pair.loss(pair.t_lo), pair.loss(pair.t_hi)


@functools.partial(jax.jit, static_argnames=("size", "pessimistic"))
@float64_kernel
def discretise_noise(
    noise, sensitivity, bin_width, lower, size: int, pessimistic: bool = True, tail=TAIL
) -> PLD:
    """:func:`discretise_pair` of :func:`noise_pair` (jitted; ``size`` static).

    Args:
      noise: a symmetric log-concave noise family.
      sensitivity: the shift ``Delta``.
      bin_width: the loss-grid width ``h``.
      lower: index of the grid's first point.
      size: number of grid points (static).
      pessimistic: connect-the-dots upper bound (default) or rounding down.
      tail: mass of the noise left outside the pair's ``t`` range on each side (traced:
        every level shares one compiled program; the default :data:`TAIL`; a smaller one
        resolves smaller ``delta``).
    """
    pair = noise_pair(noise, sensitivity, tail)
    return discretise_pair(pair, bin_width, lower, size, pessimistic)


@float64_kernel
def noise_grid(
    noise, sensitivity: float, bin_width: float, tail: float = TAIL
) -> tuple[int, int]:
    """Host helper: ``(lower, size)`` of a grid covering the loss range of a concrete noise pair.

    Args:
      noise: a concrete noise family.
      sensitivity: the shift ``Delta``.
      bin_width: the loss-grid width ``h``.
      tail: the pair's cut tail (:func:`noise_pair`; default :data:`TAIL`).
    """
    d = device_array(sensitivity, np.float64)
    lo, hi = (float(v) for v in _noise_loss_range(noise, d, float(tail)))
    lower = math.floor(lo / bin_width) - 1
    return lower, math.ceil(hi / bin_width) + 1 - lower + 1


@float64_kernel
def from_noise(
    noise, sensitivity: float = 1.0, bin_width: float = 1e-4, pessimistic: bool = True
) -> PLD:
    r"""PLD of the additive noise mechanism ``f(D) + T`` at shift ``Delta = sensitivity``.

    Any 1-D symmetric log-concave family of :mod:`dpjax.noise` (Gaussian,
    Laplace, flipped Huber, OSGT, ...): their loss ``zeta_Delta(t)`` (Sec. II-C of
    flipped-huber-mechanism) is monotone; discretised as :func:`discretise_pair`.

    Args:
      noise: a concrete noise family.
      sensitivity: the shift ``Delta``.
      bin_width: the loss-grid width ``h``.
      pessimistic: connect-the-dots upper bound (default) or rounding down.
    """
    lower, size = noise_grid(noise, sensitivity, bin_width)
    return discretise_noise(
        noise,
        jnp.asarray(sensitivity, jnp.float64),
        jnp.asarray(bin_width, jnp.float64),
        lower,
        floored_size(size),  # few compiles: the ladder, at least MIN_GRID_POINTS (padding)
        pessimistic,
    )


@float64_kernel
def from_gaussian(
    sigma: float, sensitivity: float = 1.0, bin_width: float = 1e-4, pessimistic: bool = True
) -> PLD:
    r"""PLD of the Gaussian mechanism from its closed form.

    The loss ``L = (2 t Delta + Delta^2) / (2 sigma^2)`` is ``N(mu, 2 mu)`` under
    ``P`` with ``mu = Delta^2 / (2 sigma^2)``, and ``delta(eps) = Q(eps/m - m/2)
    - e^eps Q(eps/m + m/2)``, ``m = Delta / sigma`` (Balle & Wang 2018, Thm 8; eq. (29) of
    flipped-huber-mechanism); discretised by connect-the-dots through these exact values.

    Args:
      sigma: the standard deviation.
      sensitivity: the shift ``Delta``.
      bin_width: the loss-grid width ``h``.
      pessimistic: connect-the-dots upper bound (default) or rounding down.
    """
    return from_noise(
        Gaussian(jnp.asarray(sigma, jnp.float64)), sensitivity, bin_width, pessimistic
    )


@float64_kernel
def from_laplace(
    scale: float, sensitivity: float = 1.0, bin_width: float = 1e-4, pessimistic: bool = True
) -> PLD:
    r"""PLD of the Laplace mechanism: loss ``(|t + Delta| - |t|) / b`` in ``[-Delta/b, Delta/b]``.

    The loss has atoms at both ends (App. F(b) of flipped-huber-mechanism), which the
    chord formula integrates exactly.

    Args:
      scale: the Laplace scale ``b``.
      sensitivity: the shift ``Delta``.
      bin_width: the loss-grid width ``h``.
      pessimistic: connect-the-dots upper bound (default) or rounding down.
    """
    return from_noise(Laplace(jnp.asarray(scale, jnp.float64)), sensitivity, bin_width, pessimistic)


__all__ = [
    "BIN_MASS_ERROR",
    "TAIL",
    "MonotonePair",
    "discretise_noise",
    "discretise_pair",
    "from_gaussian",
    "from_laplace",
    "from_noise",
    "from_pair",
    "noise_grid",
    "noise_pair",
    "pair_grid",
]
