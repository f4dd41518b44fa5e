r"""Exponentially tilted FFT composition: certified ``delta(epsilon)`` far below the FFT floor.

Plain FFT composition (:mod:`.pld.compose`) has a float64 round-off of about ``1e-16`` *relative
to the composed pmf's peak*: below ``delta ~ 1e-12`` it swamps the answer.  Here the pmf
``p`` of one use (losses ``l_i = (lower + i) h``) is tilted first,

.. math:: p_\lambda(l) = p(l)\, e^{\lambda l - c},\qquad
          c \ge \log \sum_i p_i e^{\lambda l_i}\ (\text{so } \|p_\lambda\|_1 \le 1),

composed ``K`` times by FFT (:func:`.pld.compose.fft_power`) and untilted pointwise after the
inverse FFT, exactly (the ``K`` losses add up, so the factors ``e^{\lambda l}`` multiply):

.. math:: p^{*K}(l) = p_\lambda^{*K}(l)\, e^{K c - \lambda l}.

Round-off is then relative to the tilted density's peak, which sits where the tilted mean
``K E_\lambda[L]`` is; ``lambda`` is near the saddle point of the queried ``epsilon`` (or ``delta``;
:func:`saddle_lambdas`), so the peak sits near the queried loss (Daniels 1954,
"Saddlepoint approximations in statistics"; the exponential tilting of Sommer, Meiser &
Mohammadi 2019, "Privacy loss classes: the central limit theorem in differential privacy",
PoPETs 2019).

**Certified.**  With ``y`` the computed window (``n`` points from ``l_0``), ``e`` its error
(``||e||_2 <= r``, the bound of :func:`.pld.compose.fft_power` on the tilted pmf), ``b =
e^{-\lambda h}``, ``a = e^{-h}`` and, for ``l_{k-1} <= epsilon < l_k``, ``t = l_k - epsilon``:

.. math:: \delta(\epsilon) \le m + e^{Kc - \lambda l_k} (1 + \rho)\Big[(1 - e^{-t}) S_k
          + e^{-t} D_k + r \sqrt{\tfrac{1 - b^{2(n - k)}}{1 - b^2}}\Big],

``S_k = sum_{j >= k} b^{j-k} y_j``, ``D_k = sum_{j > k} b^{j-k} (1 - a^{j-k}) y_j =
b (1 - a) sum_{j >= k} (ab)^{j-k} S_{j+1}`` (both discounted suffix sums,
:func:`.query.discounted_suffix`: non-negative terms, no cancellation, no overflow).  The
round-off term is Cauchy-Schwarz: ``sum_{j >= k} |e_j| e^{-\lambda (l_j - l_k)} <= ||e||_2
(sum_{j >= k} b^{2(j - k)})^{1/2}``.  ``1 + rho = (1 + eta)^K`` bounds the entrywise
relative rounding ``eta`` of the tilt through ``K`` convolutions of non-negative terms,
``m`` is the mass at ``+infinity`` (atoms and the window's cut top, bounded by Chernoff
on the *untilted* moments, as in :mod:`.pld.compose`); tilted mass that the cyclic FFT wraps
lands at other window points and only adds non-negative mass (pessimistic).  Sums are
inflated by the rounding bounds of :mod:`.query`; a ``nan`` anywhere gives ``delta = 1``.
The inverse ``epsilon(delta)`` is closed-form on a segment and re-evaluated at the
returned value, as in :mod:`.query`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import logsumexp

from dpjax._batching import device_array, map_leading
from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld._pld import LAMBDAS, PLD, log_mgf_grid
from dpjax.accounting.pld.compose import fft_power, read_window, wrap_cyclic
from dpjax.accounting.pld.plan import traced_tail
from dpjax.accounting.pld.query import (
    BLOCK,
    PADS,
    TINY,
    UP,
    discounted_suffix,
    first_ok,
    first_settled,
    grid_segment,
    suffix_levels,
)
from dpjax.certificate import MARGIN
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U
from dpjax.numerics.export_cache import call_cached


class Tilted(NamedTuple):
    """A composed PLD kept tilted: ``pld.pmf`` holds ``p_lambda^{*K}`` on the window.

    Attributes:
      pld: the composed :class:`.PLD`; its ``pmf`` and ``roundoff`` are in tilted units,
        ``inf_mass``, ``atom_inf`` and ``log_mgf`` are those of the untilted composition.
      lam: the tilt ``lambda >= 0``.
      log_scale: ``K c``: the untilted pmf is ``pmf * exp(K c - lambda l)``.
      rel: ``rho = (1 + eta)^K - 1``, relative rounding of the tilt through ``K`` uses.
    """

    pld: PLD
    lam: Array
    log_scale: Array
    rel: Array


def tilted_pmf(pld: PLD, lam):
    """``(x, c, eta, r)``: the tilted pmf ``x_i = p_i e^{lam l_i - c}`` (sum ``<= 1``), the
    constant ``c``, a bound ``eta`` on the entries' relative rounding, the l2 bound ``r`` on
    ``x``'s error carried over from ``pld.roundoff``."""
    p = jnp.where(jnp.isfinite(pld.pmf), jnp.maximum(pld.pmf, 0.0), jnp.nan)
    pos = p > 0
    log_p = jnp.where(pos, jnp.log(jnp.where(pos, p, 1.0)), -jnp.inf)
    lam_l = lam * pld.losses()
    a = log_p + lam_l
    # any c is exact for the untilting; c above the sum's log by far more than its rounding
    c = logsumexp(a) + 1e-9
    c = jnp.where(jnp.all(jnp.isfinite(pld.pmf)), c, jnp.nan)  # fail closed
    x = jnp.exp(a - c)
    mag = jnp.where(pos, jnp.abs(log_p) + jnp.abs(lam_l), 0.0)
    eta = 8.0 * _U * (jnp.max(mag) + jnp.abs(c) + 1.0)
    log_r = jnp.log(pld.roundoff) + jnp.max(lam_l) - c
    r = jnp.where(pld.roundoff > 0, jnp.exp(log_r), 0.0)
    return x, c, eta, r


@float64_kernel
def tilted_self_compose(pld: PLD, num_compositions, size: int, lam) -> Tilted:
    r"""``K``-fold self-composition of ``pld`` tilted by ``lambda`` (``K``, ``lambda`` traced).

    .. math:: p_\lambda^{*K} = \mathrm{IFFT}\big(\mathrm{FFT}(p\, e^{\lambda l - c})^K\big),
              \qquad p^{*K}(l) = p_\lambda^{*K}(l)\, e^{K c - \lambda l}

    on a cyclic grid of ``size`` points whose window starts at the untilted Chernoff lower
    edge (:func:`.pld.compose.self_compose`); the untilted mass above its top is bounded by
    Chernoff and added to ``inf_mass`` (module docstring).

    Args:
      pld: the (pessimistic) PLD of one use.
      num_compositions: ``K >= 1``.
      size: FFT length (static).
      lam: the tilt ``lambda >= 0``.

    Returns:
      The :class:`Tilted` composition.
    """
    k = jnp.asarray(num_compositions, jnp.float64)
    lam = jnp.asarray(lam, jnp.float64)
    x, c, eta, r1 = tilted_pmf(pld, lam)
    y, err = fft_power(wrap_cyclic(x, size), k, size, pld.pessimistic)
    inf_atoms = -jnp.expm1(k * jnp.log1p(-jnp.minimum(pld.atom_inf, 1.0)))
    comp = read_window(
        y, k * pld.lower.astype(jnp.float64), k * pld.log_mgf, pld.bin_width, size, inf_atoms,
        k * r1 + err, k * pld.truncated_mass, pld.pessimistic,
    )
    return Tilted(comp, lam, k * c, jnp.expm1(k * jnp.log1p(eta)))


class _Sums(NamedTuple):
    s: Array
    d: Array
    rel: Array
    abs_: Array
    ok: Array


def discounted_sums(t: Tilted) -> _Sums:
    """The discounted suffix sums ``S``, ``D`` of the tilted window (module docstring)."""
    pld, lam = t.pld, t.lam
    raw = pld.pmf
    n = raw.shape[-1]
    ok = jnp.all(jnp.isfinite(raw)) & jnp.isfinite(pld.inf_mass) & jnp.isfinite(pld.roundoff)
    ok = ok & jnp.isfinite(t.log_scale) & jnp.isfinite(t.rel)
    y = jnp.where(jnp.isfinite(raw), jnp.maximum(raw, 0.0), 0.0)
    h = jnp.asarray(pld.bin_width, jnp.float64)
    zero = jnp.zeros((1,), y.dtype)
    s = jnp.concatenate([discounted_suffix(y, lam * h), zero])
    pre = jnp.exp(-lam * h) * -jnp.expm1(-h) * UP * UP
    d = jnp.concatenate([pre * discounted_suffix(s[1:], (lam + 1.0) * h), zero])
    rel = (2.0 * suffix_levels(n) * (BLOCK + 3.0) + 96.0) * _U
    return _Sums(s, d, jnp.asarray(rel), jnp.asarray(16.0 * (n + 1.0) * TINY), ok)


def _log_certified(t: Tilted, sm: _Sums, k, grid):
    """Certified ``log delta`` from the tilted grid value ``grid`` at segment ``k``."""
    pld, lam = t.pld, t.lam
    n = sm.s.shape[-1] - 1
    h = jnp.asarray(pld.bin_width, jnp.float64)
    cnt = (n - k).astype(jnp.float64)
    two = 2.0 * lam * h
    ratio = -jnp.expm1(-two * cnt) / jnp.where(two > 0, -jnp.expm1(-two), 1.0)
    spread = jnp.sqrt(jnp.where(two > 0, ratio, cnt)) * (1.0 + 16.0 * _U)
    val = (grid + pld.roundoff * spread) * (1.0 + sm.rel) + jnp.where(sm.s[k] > 0, sm.abs_, 0.0)
    l_k = (pld.lower.astype(jnp.float64) + k.astype(jnp.float64)) * h
    expo = t.log_scale - lam * l_k
    pad = 8.0 * _U * (jnp.abs(t.log_scale) + jnp.abs(lam * l_k) + 1.0) + jnp.log1p(t.rel)
    log_val = jnp.where(val > 0, jnp.log(jnp.where(val > 0, val, 1.0)) + expo + pad, -jnp.inf)
    log_inf = jnp.where(pld.inf_mass > 0, jnp.log(pld.inf_mass * (1.0 + 4.0 * _U)), -jnp.inf)
    out = jnp.logaddexp(log_inf, log_val)
    out = out + 4.0 * _U * jnp.abs(jnp.where(jnp.isfinite(out), out, 0.0))
    bad = ~sm.ok | jnp.isnan(out) | ~(val >= 0)
    return jnp.where(bad, 0.0, jnp.minimum(out, 0.0))


def _log_delta(t: Tilted, sm: _Sums, epsilon):
    n = sm.s.shape[-1] - 1
    h = jnp.asarray(t.pld.bin_width, jnp.float64)
    eps = jnp.asarray(epsilon, jnp.float64)
    k, kf, x_lo = grid_segment(t.pld, n, eps)
    tt = jnp.maximum((kf - x_lo) * h, 0.0)
    grid = -jnp.expm1(-tt) * sm.s[k] + jnp.exp(-tt) * sm.d[k]
    return jnp.where(jnp.isnan(eps), 0.0, _log_certified(t, sm, k, grid))


@float64_kernel
def tilted_log_delta_for_epsilon(t: Tilted, epsilon) -> Array:
    r"""``log`` of a certified upper bound on ``delta(epsilon)`` from a tilted composition.

    .. math:: \delta(\epsilon) \le m + e^{Kc - \lambda l_k}(1 + \rho)\big[(1 - e^{-t}) S_k
              + e^{-t} D_k + r\,\|b^{j-k}\|_{2, j \ge k}\big]

    (module docstring), in log space: finite down to ``delta ~ 1e-300``.

    Args:
      t: a :class:`Tilted` composition.
      epsilon: array of ``epsilon``.

    Returns:
      ``log delta`` bounds ``<= 0`` (``0`` where the grid says nothing or on ``nan``).
    """
    return _log_delta(t, discounted_sums(t), epsilon)


@float64_kernel
def tilted_epsilon_for_delta(t: Tilted, delta) -> Array:
    r"""Least ``epsilon >= 0`` whose tilted bound (:func:`tilted_log_delta_for_epsilon`) is
    ``<= delta``.

    .. math:: \epsilon = l_k - \log\Big(1 + \frac{w - D_k}{S_k - w}\Big),\quad
              w = \frac{(\delta' - m) e^{\lambda l_k - Kc}}{(1 + \rho)(1 + \text{REL})}
              - r\,\|b^{j-k}\|_2

    on the first segment ``k`` whose certified value at ``l_k`` is ``<= delta' = delta (1 -
    MARGIN)``, then re-evaluated there (padded candidates, then grid points; ``+inf`` if
    none passes), as :func:`.query.epsilon_for_delta` does.

    Args:
      t: a :class:`Tilted` composition.
      delta: array of targets.

    Returns:
      Certified ``epsilon``, shape of ``delta`` (``+inf`` where none).
    """
    return _epsilon_for_delta(t, discounted_sums(t), delta)


def _epsilon_for_delta(t: Tilted, sm: _Sums, delta):
    """:func:`tilted_epsilon_for_delta` from the discounted sums ``sm`` of ``t``."""
    cands, k = _epsilon_candidates(t, sm, delta)
    return _first_certified(cands, k, _log_delta(t, sm, cands), sm, delta)


def _log_target(sm: _Sums, delta):
    """``log`` of the level ``delta' = delta (1 - MARGIN - 4 REL)`` an epsilon's tilted
    bound must meet (``nan`` where it is not positive)."""
    target = jnp.asarray(delta, jnp.float64) * (1.0 - MARGIN - 4.0 * sm.rel)
    return target, jnp.log(jnp.where(target > 0, target, jnp.nan))


def _epsilon_candidates(t: Tilted, sm: _Sums, delta):
    """The padded candidates (last axis) of :func:`tilted_epsilon_for_delta` and the
    segment ``k`` they lie on (``n + 1``: none)."""
    pld, lam = t.pld, t.lam
    n = sm.s.shape[-1] - 1
    h = jnp.asarray(pld.bin_width, jnp.float64)
    lower = pld.lower.astype(jnp.float64)
    target, log_target = _log_target(sm, delta)
    k = first_settled(_log_certified(t, sm, jnp.arange(n + 1), sm.d), log_target)
    kc = jnp.minimum(k, n)
    s, d = sm.s[kc], sm.d[kc]
    l_k = (lower + kc.astype(jnp.float64)) * h
    rest = target - pld.inf_mass * (1.0 + 8.0 * _U)
    log_rest = jnp.log(jnp.where(rest > 0, rest, 1.0)) - (t.log_scale - lam * l_k)
    log_rest = log_rest - 16.0 * _U * (jnp.abs(t.log_scale) + jnp.abs(lam * l_k) + 1.0)
    want = jnp.exp(log_rest - jnp.log1p(t.rel)) / (1.0 + sm.rel) - sm.abs_
    two = 2.0 * lam * h
    cnt = (n - kc).astype(jnp.float64)
    spread = jnp.sqrt(-jnp.expm1(-two * cnt) / -jnp.expm1(-two))
    want = jnp.where(rest > 0, want - pld.roundoff * spread, -jnp.inf)
    room = s - want
    tt = jnp.where(
        room > 0, jnp.log1p(jnp.maximum(want - d, 0.0) / jnp.where(room > 0, room, 1.0)), jnp.inf
    )
    eps = l_k - tt
    eps = jnp.where(kc > 0, jnp.maximum(eps, l_k - h), eps)
    scale = jnp.abs(l_k) + jnp.abs(lower) * h + h
    seg = eps[..., None] + jnp.asarray(PADS) * 64.0 * _U * scale[..., None]
    grid_pts = l_k[..., None] + h * jnp.arange(3.0)
    return jnp.maximum(jnp.concatenate([seg, grid_pts], axis=-1), 0.0), k


def _first_certified(cands, k, log_deltas, sm: _Sums, delta):
    """The first candidate of :func:`_epsilon_candidates` whose tilted ``log delta``
    (``log_deltas``) meets the target (``+inf`` if none); ``0`` for ``delta >= 1``."""
    dl = jnp.asarray(delta, jnp.float64)
    ok = log_deltas <= _log_target(sm, dl)[1][..., None]
    eps = jnp.where(k <= sm.s.shape[-1] - 1, first_ok(cands, ok), jnp.inf)
    eps = jnp.where(dl >= 1.0, 0.0, eps)
    return jnp.where(~(dl > 0), jnp.inf, eps)


#: Tilts tried per query, as offsets on :data:`.LAMBDAS` (ratio ~1.25 a step) from the
#: Chernoff minimiser: for a ``delta`` query it puts the tilted mean at the Chernoff epsilon,
#: above the true one (the bound lacks the ``1 / sqrt(2 pi K Var)`` prefactor), and for an
#: ``epsilon`` query about at the saddle point; the minimiser and the next smaller tilt are
#: tried.  Each tilt costs a full FFT composition and every one gives a certified answer;
#: over nine settings and two ledgers (``bench/study_tilts.py``, docs/development.md) every
#: query's least answer came from one of these two, of a ladder of four (``delta``) and
#: five (``epsilon``: two larger) tilts tried before.
OFFSETS = {True: (0, -1), False: (0, -1)}


def _static_kind(by_delta) -> bool:
    """Whether a query kind ``by_delta`` is static (a Python or NumPy ``bool``), not a
    traced boolean: a traced kind compiles both kinds' placement, tilts and query into one
    program and selects the kind's (:func:`saddle_lambdas`, :func:`placed_pair`,
    :func:`query`), so that an epsilon query and its certificate's ``log delta`` re-check
    share the program's tilted compositions."""
    return isinstance(by_delta, (bool, np.bool_))


def _of_kind(fn, by_delta):
    """``fn(by_delta)`` for a static kind; for a traced one both kinds' pytrees, selected
    elementwise (a cheap placement computed twice)."""
    if _static_kind(by_delta):
        return fn(bool(by_delta))
    return jax.tree.map(lambda u, v: jnp.where(by_delta, u, v), fn(True), fn(False))


def saddle_lambdas(log_mgf, x, by_delta: bool, offsets=None):
    r"""The Chernoff minimiser on :data:`.LAMBDAS` (``lambda > 0``) and its neighbours
    (:data:`OFFSETS`, or ``offsets``): the tilts of a query.

    .. math:: \lambda^* = \arg\min_{\lambda > 0} \frac{\log M_K(\lambda) + \log c(\lambda)
              - \log\delta}{\lambda}\ \ (\text{by delta}),\qquad
              \arg\min_{\lambda > 0} \log M_K(\lambda) - \lambda\epsilon + \log c(\lambda)

    where ``K E_lambda[L]`` is about the Chernoff epsilon (the saddle point).  Only a
    placement: any ``lambda`` gives a certified bound.

    Args:
      log_mgf: the composed ``log M_K`` on :data:`.LAMBDAS`.
      x: a ``delta`` (``by_delta``) or an ``epsilon`` (scalar).
      by_delta: which query ``x`` is (static; or a traced boolean: both kinds computed,
        the kind's selected).
      offsets: steps on :data:`.LAMBDAS` from the minimiser (default
        ``OFFSETS[by_delta]``).

    Returns:
      ``(len(offsets),)`` tilts ``lambda > 0`` (traced).
    """
    if not _static_kind(by_delta):
        return _of_kind(lambda kind: saddle_lambdas(log_mgf, x, kind, offsets), by_delta)
    lam, lm = tail_bounds.split_by_sign(log_mgf, None, True)
    log_c, _ = tail_bounds.log_c_terms(lam)
    if by_delta:
        obj = (lm + log_c - jnp.log(x)) / lam
    else:
        obj = lm - lam * x + log_c
    obj = jnp.where(jnp.isnan(obj), jnp.inf, obj)
    first = int(np.argmax(LAMBDAS > 0))
    steps = OFFSETS[by_delta] if offsets is None else offsets
    idx = jnp.argmin(obj) + jnp.asarray(steps)
    idx = jnp.clip(idx, first, len(LAMBDAS) - 1)
    return jnp.asarray(LAMBDAS)[idx]


#: Share of a query's ``delta`` that :func:`cut_top` may send to ``+infinity`` over all
#: ``K`` uses, and the least improvement of the Chernoff answer (a factor) for which a
#: query's tilts are placed on the cut pair rather than on the whole one.
CUT_SHARE = 1e-3
CUT_GAIN = 0.9


@float64_kernel
def cut_top(pld: PLD, budget):
    r"""``pld`` with its top tail of mass at most ``budget`` moved to ``+infinity``.

    .. math:: j^* = \min\{j : \textstyle\sum_{i \ge j} p_i \le b\},\qquad
              p'_i = p_i [i < j^*],\qquad m' = m + (1 + 2 n u) \sum_{i \ge j^*} p_i

    Pessimistic for any ``budget`` (mass moved up to ``+infinity`` only raises ``delta``),
    so the choice of ``j^*`` needs no certificate; the moved mass is added to ``atom_inf``
    and ``inf_mass`` rounded up (a sum of ``n`` non-negative terms) and ``log_mgf`` is that
    of the kept grid.  A one-use loss with a heavy upper tail (a Poisson-subsampled Gaussian
    at ``sigma < 1`` and a rate ``q ~ 1e-6``: losses of order ``q`` but a tail up to order
    1) has moments that explode at the tilts a small ``delta`` needs; ``K`` uses of the cut
    pair can be tilted there, for ``K b`` of ``delta``.

    Args:
      pld: a pessimistic one-use :class:`PLD`.
      budget: the mass that may be moved (traced).

    Returns:
      ``(cut PLD, moved mass)``.
    """
    p = jnp.where(jnp.isfinite(pld.pmf), jnp.maximum(pld.pmf, 0.0), jnp.nan)
    above = jnp.cumsum(p[::-1])[::-1]  # placement only: any cut is pessimistic
    keep = ~(above <= budget)
    kept = jnp.where(keep, p, 0.0)
    moved = jnp.sum(jnp.where(keep, 0.0, p)) * (1.0 + 2.0 * (p.shape[-1] + 1.0) * _U)
    cut = PLD(
        bin_width=pld.bin_width,
        lower=pld.lower,
        pmf=jnp.where(jnp.isfinite(pld.pmf), kept, pld.pmf),
        inf_mass=pld.inf_mass + moved,
        truncated_mass=pld.truncated_mass + moved,
        roundoff=pld.roundoff,
        log_mgf=log_mgf_grid(pld.lower, pld.bin_width, kept),
        atom_inf=pld.atom_inf + moved,
        pessimistic=pld.pessimistic,
    )
    return cut, moved


@float64_kernel
def placed_pair(pld: PLD, k, x, log_level, by_delta: bool) -> PLD:
    r"""The pair whose ``K``-fold composition a query is tilted on: ``pld``, or ``pld`` cut
    at ``CUT_SHARE delta / K`` (:func:`cut_top`) where that improves the query's Chernoff
    answer by the factor :data:`CUT_GAIN` (``delta = e^{log_level}``).

    .. math:: \epsilon_{cut} = \min_{\lambda > 0}\frac{K \log M'(\lambda) + \log c(\lambda)
              - \log(\delta - K m')}{\lambda} < \text{CUT\_GAIN}\ \epsilon_{whole}

    (for an ``epsilon`` query: ``log delta`` lower by ``log(1 / CUT_GAIN)``).  Either pair
    gives a certified answer; the rule only places the tilts.

    Args:
      pld: a pessimistic one-use :class:`PLD`.
      k: ``K`` (traced).
      x: the query's ``delta`` (``by_delta``) or ``epsilon``.
      log_level: ``log`` of the ``delta`` the query resolves (its target, or the level
        the engine sized the composition for).
      by_delta: which query ``x`` is (static; or a traced boolean: both kinds computed,
        the kind's selected).

    Returns:
      The :class:`PLD` to tilt.
    """
    budget = CUT_SHARE * jnp.exp(log_level) / k
    cut, moved = cut_top(pld, budget)  # the cut pair: the same for both kinds
    spent = k * moved

    def cut_is_better(by_delta: bool):
        if by_delta:
            whole = tail_bounds.epsilon_chernoff(k * pld.log_mgf, jnp.log(x))
            left = x - spent
            part = tail_bounds.epsilon_chernoff(
                k * cut.log_mgf, jnp.log(jnp.where(left > 0, left, 1.0))
            )
            return (left > 0) & (part < CUT_GAIN * whole)
        whole = tail_bounds.log_delta_chernoff(k * pld.log_mgf, x)
        part = jnp.logaddexp(
            tail_bounds.log_delta_chernoff(k * cut.log_mgf, x), jnp.log(spent)
        )
        return part < whole + jnp.log(CUT_GAIN)

    better = _of_kind(cut_is_better, by_delta) & (budget > 0) & jnp.isfinite(budget)
    return jax.tree.map(lambda a, b: jnp.where(better, a, b), cut, pld)


@float64_kernel
def tilted_kernel(
    scale, shape, sensitivity, sampling_rate, compositions, x, log_levels=None, *, noise_fn,
    bin_width, sizes, subsampled, by_delta, either_kind=False,
):
    r"""Tilted engine answer after ``K`` uses: the worse adjacency, each query its own tilt.

    .. math:: \max_{\text{adjacency}}\ \text{answer}\big(\text{tilted\_self\_compose}(p_i, K,
              N, \lambda^*(x_i)),\, x_i\big)

    (the least over the tilts ``lambda^*`` of :func:`saddle_lambdas`; answers of
    :func:`tilted_epsilon_for_delta` or :func:`tilted_log_delta_for_epsilon`; ``p_i`` the
    one-use pair, or the pair with its top tail cut where that places the tilts better,
    :func:`placed_pair`).  Two programs, each through the export cache (a warm process
    loads them compiled): the one-use pairs (:func:`.engine.composed_fields` with no
    composition and the sizes' tail level ``sizes.tail`` passed as data,
    :func:`.plan.traced_tail`: one program per family and grid length, shared by the
    ``delta`` and ``epsilon`` queries), then :func:`_tilted_answers`, which sees arrays
    only (one program per grid and FFT length, shared by every family; with
    ``either_kind``, also by both query kinds).

    Args:
      scale, shape, sensitivity, sampling_rate, compositions: as in
        :data:`.engine.log_delta_kernel`.
      x: 1-D array of targets ``delta`` (``by_delta``) or of ``epsilon``.
      log_levels: ``log`` of the ``delta`` each query resolves (default: ``log x`` for
        ``delta`` queries; for ``epsilon`` queries no top tail is cut).
      noise_fn, bin_width, subsampled: as in :data:`.engine.log_delta_kernel`.
      sizes: the static :class:`.plan.Sizes` (:func:`.plan.tilted_sizes`).
      by_delta: ``x`` holds deltas (answer epsilon) or epsilons (answer ``log delta``).
      either_kind: the query kind travels as a traced flag, so that both kinds run one
        compiled program (the engine's host path: an epsilon and the certificate's re-check
        of it, a ``log delta`` query); default ``False``, the kind static (a kernel traced
        into a larger program, e.g. a calibration, compiles only its own kind).

    Returns:
      Certified ``epsilon`` or ``log delta``, shape of ``x``.
    """
    # cycle: dpjax.accounting.pld.tilted.fold <-> dpjax.accounting.pld.engine
    from dpjax.accounting.pld.engine import composed_fields

    x = jnp.asarray(x, jnp.float64)
    if log_levels is None:
        log_levels = jnp.log(x) if by_delta else jnp.full(x.shape, -jnp.inf)
    fields = traced_tail(composed_fields)(
        scale, shape, sensitivity, sampling_rate, compositions, noise_fn=noise_fn,
        bin_width=bin_width, sizes=sizes._replace(fft=0), subsampled=subsampled,
    )
    kind = (device_array(np.bool_(by_delta)),) if either_kind else ()
    return call_cached(
        _tilted_answers, *fields, jnp.asarray(compositions, jnp.float64), x,
        jnp.asarray(log_levels, jnp.float64), *kind, static_argnames=("fft", "by_delta"),
        fft=sizes.fft, by_delta=None if either_kind else by_delta,
    )


@functools.partial(jax.jit, static_argnames=("fft", "by_delta"))
@float64_kernel
def _tilted_answers(*arrays, fft, by_delta):
    """:func:`tilted_kernel`'s answers from its one-use pairs: ``arrays`` are the pairs'
    fields (:data:`.engine._PLD_FIELDS`, a leading adjacency axis), then ``K``, ``x`` and
    ``log_levels``; ``fft`` the static FFT length; the worse adjacency's answer.
    ``by_delta`` is the query kind, or ``None``: then the kind is a traced boolean, the last
    of ``arrays``, so that the tilted compositions, most of the program, are
    compiled once for both kinds."""
    # cycle: dpjax.accounting.pld.tilted.fold <-> dpjax.accounting.pld.engine
    from dpjax.accounting.pld.engine import _pld_of_fields

    if by_delta is None:
        *arrays, by_delta = arrays
    *fields, k, x, log_levels = arrays
    plds = _pld_of_fields(fields)

    def answer(p):
        def entry(xi, level):
            pi = placed_pair(p, k, xi, level, by_delta)

            def one(xj, lam):
                return query(tilted_self_compose(pi, k, fft, lam), xj, by_delta)

            return least_over_tilts(one, k * pi.log_mgf, xi[None], by_delta)[0]

        return map_leading(entry, x, log_levels)

    return jnp.max(map_leading(answer, plds), axis=0)


@float64_kernel
def query(t: Tilted, x, by_delta) -> Array:
    """:func:`tilted_epsilon_for_delta` (``x`` a delta, ``by_delta``) or
    :func:`tilted_log_delta_for_epsilon`; for a traced kind (a traced boolean) both are
    compiled: ``lax.cond`` places the kind's points (an epsilon's candidates, or ``x``
    itself) and one ``log delta`` evaluation serves both."""
    if not _static_kind(by_delta):
        sm = discounted_sums(t)  # both kinds' sums: computed (and compiled) once
        x = jnp.asarray(x, jnp.float64)
        no_segment = jnp.zeros((), jnp.arange(1).dtype)  # first_settled's index type

        def at_x():
            return jnp.broadcast_to(x[..., None], x.shape + (len(PADS) + 3,)), no_segment

        points, k = jax.lax.cond(by_delta, lambda: _epsilon_candidates(t, sm, x), at_x)
        log_deltas = _log_delta(t, sm, points)
        return jnp.where(
            by_delta, _first_certified(points, k, log_deltas, sm, x), log_deltas[..., 0]
        )
    return tilted_epsilon_for_delta(t, x) if by_delta else tilted_log_delta_for_epsilon(t, x)


@float64_kernel
def least_over_tilts(
    answer, log_mgf, x, by_delta: bool, combine=jnp.min, tilts=saddle_lambdas
) -> Array:
    r"""``min_{lambda in saddle_lambdas(x_i)} answer(x_i, lambda)`` for each entry of ``x``.

    .. math:: a_i = \min_{\lambda \in \Lambda^*(x_i)} \text{answer}(x_i, \lambda)

    Every tilt gives a certified answer, so the least is certified (``combine = jnp.max``
    for certified *lower* ends: the largest is a lower end).

    Args:
      answer: ``(x_i, lambda) -> certified answer`` (traced).
      log_mgf: the composed ``log M`` on :data:`.LAMBDAS` (places the tilts).
      x: 1-D array of targets ``delta`` (``by_delta``) or of ``epsilon``.
      by_delta: which query ``x`` holds (static, or a traced boolean).
      combine: how the tilts' answers are combined (``jnp.min``, or ``jnp.max``).
      tilts: ``(log_mgf, x_i, by_delta) -> lambdas`` (default :func:`saddle_lambdas`).

    Returns:
      The combined answer per entry, shape of ``x``.
    """
    lams = map_leading(lambda xi: tilts(log_mgf, xi, by_delta), x)
    xs = jnp.broadcast_to(x[:, None], lams.shape)
    got = map_leading(answer, xs.ravel(), lams.ravel()).reshape(lams.shape)
    return combine(got, axis=1)


__all__ = [
    "CUT_GAIN",
    "CUT_SHARE",
    "Tilted",
    "cut_top",
    "placed_pair",
    "least_over_tilts",
    "query",
    "tilted_epsilon_for_delta",
    "tilted_log_delta_for_epsilon",
    "saddle_lambdas",
    "tilted_kernel",
    "tilted_self_compose",
]
