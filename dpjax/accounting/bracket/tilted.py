r"""Certified **lower** end of ``epsilon(delta)`` through the tilted composition, at any delta.

The plain lower end (:func:`.optimistic.epsilon_lower_of_pld`) subtracts the FFT round-off
``r sqrt(n - k)``, relative to the composed pmf's *peak*: below ``delta ~ 1e-12`` it says
nothing.  Here the optimistic PLD (:func:`.discretise.discretise_pair` with
``pessimistic=False``: losses rounded down, so its hockey stick and those of its
compositions lie below the true one) is composed tilted by ``lambda >= 0``
(:func:`.pld.tilted.fold.tilted_self_compose`: window ``y`` of ``n`` points from ``l_0``, untilted
by ``q_j = y_j e^{Kc - \lambda l_j}``; the window's cut top is *dropped* for an optimistic
PLD, never sent to ``+infinity``).  With ``b = e^{-\lambda h}``, ``a = e^{-h}``, the grid
part of the optimistic ``delta`` at ``l_k`` is exactly

.. math:: \delta_{opt}(l_k) \ge \sum_{j > k} q_j (1 - e^{-(l_j - l_k)})
          = e^{Kc - \lambda l_k} D_k,\qquad D_k = \sum_{j > k} b^{j-k}(1 - a^{j-k})\, y_j

(the mass at ``+infinity`` is dropped: a lower bound).  Every error is **subtracted**:

.. math:: \underline\delta_k = \frac{e^{Kc - \lambda l_k}}{(1 + \rho)(1 + \varepsilon_b)^K}
          \Big[(1 - 2\,\text{REL})(\hat D_k - \text{ABS})
          - r\sqrt{\tfrac{1 - b^{2(n-k)}}{1 - b^2}} - W e^{\lambda (l_0 - h) - Kc} - V_k\Big]

- ``r``: the l2 bound on the tilted window's FFT error (:func:`.compose.fft_power`);
  ``sum_{j > k} b^{j-k} |e_j| <= ||e||_2 (sum_{j >= k} b^{2(j-k)})^{1/2}`` (Cauchy-Schwarz,
  the discount of :mod:`.pld.tilted.fold`), and ``1 - a^{j-k} <= 1``.
- ``1 + rho = (1 + eta)^K``: the tilted entries carry relative rounding ``eta``; the
  convolution of ``K`` non-negative factors is then off by at most ``(1 + eta)^K``, so the
  exact one is at least the computed one over ``1 + rho``.
- ``eps_b = 1e-11`` (:data:`.pld.discretise.BIN_MASS_ERROR`): the *relative* accuracy of one
  optimistic bin mass (:mod:`.discretise`: bin masses keep ``~1e-12`` relative accuracy
  down to ``1e-300``), compounded relatively over ``K`` uses.
- ``W``: the mass a cyclic FFT carries *up*.  Composed mass above the window wraps down
  (it only lowers ``delta``); mass below the window start ``l_0`` lands somewhere in the
  window, and only where ``l_j > l_k`` does it enter ``D_k``.  In tilted units it is at
  most ``e^{\lambda (l_0 - h) - Kc} P(S <= l_0 - h/2)`` (``lambda >= 0``), and untilting it
  at ``l_j > l_k`` multiplies by at most ``e^{Kc - \lambda l_k}`` (and ``1 - a^{j-k} <=
  1``): the bracket's term, with ``W = P(S <= l_0 - h/2)`` bounded by Chernoff on the
  optimistic moments (:func:`.tail_bounds.log_lower_tail`), and ``W = 0`` when no
  composition reaches below the window (``l_0 <= s h``, ``s = K`` times the one-use
  pair's first index).
- ``V_k``: the mass a cyclic FFT carries *down*.  Untilted it only lowers ``delta``, but
  tilted mass from ``l`` lands at ``l - N h`` (``N = n``, the window length), where
  untilting multiplies it by ``e^{\lambda N h}`` more than its own weight: what lands
  above ``l_k`` comes from ``l > l_k + N h`` and is charged.  Its tilted size is at most
  ``V_k = e^{-Kc} \min_{\lambda' \ge \lambda} M_K(\lambda') e^{-(\lambda' - \lambda)(l_k +
  N h)}`` (Chernoff on the optimistic moments: ``e^{\lambda l} \le e^{\lambda' l -
  (\lambda' - \lambda) x}`` for ``l \ge x``; the next :data:`_NEAR` points of
  :data:`.LAMBDAS`), subtracted in the bracket beside ``W``'s term.
- ``REL, ABS``: the rounding of the discounted suffix sums (:mod:`.query`), the untilting
  exponent padded by ``8u(|Kc| + |\lambda l_k| + 1)``.

Since ``delta`` is non-increasing, ``delta_true(eps) >= underline delta_k > delta`` for every
``eps <= l_k``:

.. math:: \epsilon_{\text{lower}}(\delta) = \max\{l_k :\ \underline\delta_k > \delta\}
          \ (\text{or } 0) \le \epsilon_{\text{true}}(\delta),

evaluated in log space (finite down to ``delta ~ 1e-300``), for every tilt of
:func:`lower_tilts` (each gives a lower bound: the largest is kept) and every
adjacency (the true epsilon is the larger: so is the lower end).  A ``nan`` anywhere gives
``0`` (the lower end fails closed *down*).  Tilting: Daniels 1954, "Saddlepoint
approximations in statistics"; optimistic discretisation: Koskela, Jälkö & Honkela 2020,
"Computing tight differential privacy guarantees using FFT" (arXiv:1906.03049), and
Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the dots: tighter discrete
approximations of privacy loss distributions" (arXiv:2207.04380).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.pld import LAMBDAS, tail_bounds
from dpjax.accounting.pld.discretise import BIN_MASS_ERROR
from dpjax.accounting.pld.engine import run_padded, stacked_plds, tilted_groups
from dpjax.accounting.pld.plan import traced_tail
from dpjax.accounting.pld.query import UP
from dpjax.accounting.pld.tilted.compose import tilted_product
from dpjax.accounting.pld.tilted.fold import (
    Tilted,
    discounted_sums,
    least_over_tilts,
    saddle_lambdas,
    tilted_self_compose,
)
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

#: Moment points ``lambda' >= lambda`` (the next ones on :data:`.LAMBDAS`) tried for ``V``.
_NEAR = 8
#: The lower end's ladder on :data:`.LAMBDAS` from the Chernoff minimiser of
#: :func:`.pld.tilted.fold.saddle_lambdas` (the upper end tries only the first two,
#: :data:`.pld.tilted.fold.OFFSETS`), and geometric fractions of the steps between its first
#: three also tried (:func:`lower_tilts`).
_OFFSETS = (0, -1, -2, -3)
_FRACTIONS = (1.0 / 3.0, 2.0 / 3.0)


@float64_kernel
def lower_tilts(log_mgf, delta, by_delta: bool = True) -> Array:
    r"""The tilts of a lower end: four of :func:`.pld.tilted.fold.saddle_lambdas` (the
    minimiser and three smaller) and geometric points between the first three.

    .. math:: \Lambda = \{\lambda_0, \lambda_1, \lambda_2, \lambda_3\} \cup
              \{\lambda_i^{1 - f} \lambda_{i+1}^{f} :\ i \in \{0, 1\},\ f \in \{1/3, 2/3\}\}

    An upper end only needs a tilt whose peak is near the queried loss; a lower end also
    subtracts the tilted mass a cyclic window wraps down (amplified by untilting, ``V``
    of the module docstring) and the FFT round-off, which a tilt too large (the first)
    or too small (the next) can each leave above the signal at deep ``delta``: with
    ``(sigma, q, T) = (1, 0.01, 1000)`` at ``delta = 1e-100`` the ladder ``8.03, 6.45``
    gave a lower end of ``18.1`` against the upper ``29.6``, and ``7.2 .. 7.7`` give
    ``29.57``.  Any tilt gives a certified lower end: only tightness depends on these.

    Args:
      log_mgf: the composed ``log M_K`` on :data:`.LAMBDAS`.
      delta: the target ``delta`` (scalar).
      by_delta: must be ``True`` (a lower end answers a ``delta`` query).

    Returns:
      ``(8,)`` tilts ``lambda > 0`` (traced).
    """
    lam = saddle_lambdas(log_mgf, delta, by_delta, _OFFSETS)
    hi, lo = jnp.log(lam[:2]), jnp.log(lam[1:3])
    between = [jnp.exp(hi + f * (lo - hi)) for f in _FRACTIONS]
    return jnp.concatenate([lam, *between])


@float64_kernel
def log_delta_lower(t: Tilted, compositions, support_lower: ArrayLike | None = None) -> Array:
    r"""``log`` of a certified lower bound on the true ``delta(l_k)`` at every window point.

    .. math:: \log\underline\delta_k = Kc - \lambda l_k - \log(1 + \rho)
              - K\log(1 + \varepsilon_b) + \log\Big[(1 - 2\,\text{REL})(\hat D_k - \text{ABS})
              - r\,\|b^{j-k}\|_{2, j \ge k} - W e^{\lambda(l_0 - h) - Kc} - V_k\Big]

    (module docstring).

    Args:
      t: a :class:`.pld.tilted.fold.Tilted` composition of an *optimistic* PLD.
      compositions: ``K``, the uses composed (bin-mass errors).
      support_lower: grid index below which the composed loss has no mass (``K`` times the
        one-use pair's first index), or ``None`` (unknown: ``W`` is charged).

    Returns:
      ``(n + 1,)`` log lower bounds (``-inf`` where nothing is certified, everywhere for a
      pessimistic PLD or on a ``nan``).
    """
    pld, lam = t.pld, t.lam
    sm = discounted_sums(t)
    n = sm.s.shape[-1] - 1
    h = jnp.asarray(pld.bin_width, jnp.float64)
    kf = jnp.arange(n + 1, dtype=jnp.float64)
    start = pld.lower.astype(jnp.float64)
    l_k = (start + kf) * h
    # the tilted sums carry UP^2 upward pads (upper bounds): undo them, then deflate
    d = (1.0 - 2.0 * sm.rel) * (sm.d / (UP * UP) * (1.0 - 4.0 * _U) - sm.abs_)
    two = 2.0 * lam * h
    cnt = n - kf
    ratio = -jnp.expm1(-two * cnt) / jnp.where(two > 0, -jnp.expm1(-two), 1.0)
    spread = jnp.sqrt(jnp.where(two > 0, ratio, cnt)) * (1.0 + 16.0 * _U)
    log_w = tail_bounds.log_lower_tail(pld.log_mgf, (start - 0.5) * h)
    log_w = jnp.where(jnp.isnan(log_w), jnp.inf, log_w)
    if support_lower is not None:  # no composition below the window: nothing carried up
        log_w = jnp.where(start <= jnp.asarray(support_lower, jnp.float64), -jnp.inf, log_w)
    log_wt = jnp.minimum(log_w, 0.0) + lam * (start - 1.0) * h - t.log_scale
    log_wt = log_wt + 8.0 * _U * (jnp.abs(lam * (start - 1.0) * h) + jnp.abs(t.log_scale) + 1.0)
    wrap = jnp.exp(log_wt) * (1.0 + 16.0 * _U)
    # tilted mass wrapped down from l >= l_k + N h lands above l_k, where untilting
    # amplifies it: min over lambda' >= lambda of M_K(lambda') e^{-(lambda' - lambda) x_k}
    grid = jnp.asarray(LAMBDAS, jnp.float64)
    pick = jnp.searchsorted(grid, lam).astype(jnp.int64) + jnp.arange(_NEAR, dtype=jnp.int64)
    pick = jnp.clip(pick, 0, grid.shape[0] - 1)
    g, lm = grid[pick], jnp.asarray(pld.log_mgf, jnp.float64)[pick]
    x_k = (l_k + float(n) * h)[:, None]
    lx = (g - lam) * x_k
    obj = lm - lx + 8.0 * _U * (jnp.abs(lm) + jnp.abs(lx) + 1.0)
    obj = jnp.where((g >= lam) & (g > 0) & ~jnp.isnan(obj), obj, jnp.inf)
    log_v = jnp.min(obj, axis=-1)
    log_v = log_v - t.log_scale + 8.0 * _U * (jnp.abs(log_v) + jnp.abs(t.log_scale) + 1.0)
    wrap = wrap + jnp.exp(log_v) * (1.0 + 16.0 * _U)
    val = d - pld.roundoff * spread * (1.0 + 4.0 * _U) - wrap
    kk = jnp.asarray(compositions, jnp.float64)
    expo = t.log_scale - lam * l_k - jnp.log1p(t.rel) - kk * jnp.log1p(BIN_MASS_ERROR)
    pad = 8.0 * _U * (jnp.abs(t.log_scale) + jnp.abs(lam * l_k) + 1.0) + 1e-12
    pad = pad + 8.0 * _U * jnp.abs(jnp.log(jnp.where(val > 0, val, 1.0)))
    out = jnp.where(val > 0, jnp.log(jnp.where(val > 0, val, 1.0)) + expo - pad, -jnp.inf)
    ok = sm.ok & jnp.isfinite(t.log_scale) & jnp.isfinite(lam) & (pld.inf_mass < 1.0)
    bad = ~ok | jnp.isnan(out) | jnp.asarray(pld.pessimistic)
    return jnp.where(bad, -jnp.inf, jnp.minimum(out, 0.0))


@float64_kernel
def epsilon_lower_of_tilted(
    t: Tilted, delta: ArrayLike, compositions, support_lower: ArrayLike | None = None
) -> Array:
    r"""Certified lower end of ``epsilon(delta)`` from a tilted optimistic composition.

    .. math:: \epsilon_{\text{lower}} = \max\{l_k : \log\underline\delta_k > \log\delta\}
              \ (\text{or } 0)

    (:func:`log_delta_lower`; module docstring).  The entry point for a caller holding a
    :class:`.pld.tilted.fold.Tilted` optimistic composition (e.g. a heterogeneous one).

    Args:
      t: a :class:`.pld.tilted.fold.Tilted` composition of an optimistic PLD.
      delta: targets (any shape).
      compositions, support_lower: as in :func:`log_delta_lower`.

    Returns:
      Lower bounds on the true epsilon, shape of ``delta`` (``0`` where none, on ``nan``).
    """
    low = log_delta_lower(t, compositions, support_lower)
    n = low.shape[-1] - 1
    h = jnp.asarray(t.pld.bin_width, jnp.float64)
    losses = (t.pld.lower.astype(jnp.float64) + jnp.arange(n + 1, dtype=jnp.float64)) * h
    dl = jnp.asarray(delta, jnp.float64)
    log_d = jnp.log(jnp.where(dl > 0, dl, jnp.nan))[..., None]
    eps = jnp.max(jnp.where(low > log_d, losses, 0.0), axis=-1)
    eps = jnp.where(jnp.isnan(eps) | jnp.isnan(dl) | (dl <= 0), 0.0, eps)
    return jnp.maximum(eps, 0.0)


_STATIC = ("noise_fn", "sizes", "subsampled")


@float64_kernel
def tilted_lower_kernel(
    scale, shape, sensitivity, sampling_rate, compositions, delta, *, noise_fn, bin_width, sizes,
    subsampled,
):
    r"""Tilted lower end after ``K`` uses: the larger over adjacencies and tilts.

    .. math:: \max_{\text{adjacency}}\ \max_{\lambda \in \lambda^*(\delta_i)}
              \epsilon_{\text{lower}}\big(\text{tilted\_self\_compose}(p_{opt}, K, N,
              \lambda),\, \delta_i\big)

    (tilts of :func:`lower_tilts` on the optimistic log-MGF).  Jitted with the
    tail level ``sizes.tail`` passed as data (:func:`.plan.traced_tail`): one compiled
    program serves every level whose grid and FFT lengths are the same.

    Args:
      scale, shape, sensitivity, sampling_rate, compositions: as in
        :data:`.engine.log_delta_kernel`.
      delta: 1-D array of targets.
      noise_fn, bin_width, subsampled: as in :data:`.engine.log_delta_kernel`.
      sizes: the static :class:`.plan.Sizes` (:func:`.plan.tilted_sizes`).

    Returns:
      Certified lower ends of epsilon, shape of ``delta``.
    """
    return traced_tail(_tilted_lower_kernel)(
        scale, shape, sensitivity, sampling_rate, compositions, delta, noise_fn=noise_fn,
        bin_width=bin_width, sizes=sizes, subsampled=subsampled,
    )


@functools.partial(jax.jit, static_argnames=_STATIC)
@float64_kernel
def _tilted_lower_kernel(
    scale, shape, sensitivity, sampling_rate, compositions, delta, tail, *, noise_fn, bin_width,
    sizes, subsampled,
):
    """:func:`tilted_lower_kernel` with the pairs' tail cut ``tail`` traced."""
    k = jnp.asarray(compositions, jnp.float64)

    def answer(p):
        def one(xi, lam):
            t = tilted_self_compose(p, k, sizes.fft, lam)
            return epsilon_lower_of_tilted(t, xi, k, k * p.lower.astype(jnp.float64))

        # every tilt is a certified lower end: the largest is kept
        return least_over_tilts(one, k * p.log_mgf, delta, True, combine=jnp.max, tilts=lower_tilts)

    answers = stacked_plds(
        noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width,
        sizes._replace(fft=0), subsampled, pessimistic=False, tail=tail, then=answer,
    )
    return jnp.max(answers, axis=0)


@functools.partial(jax.jit, static_argnames=("size",))
@float64_kernel
def product_lower_kernel(parts, counts, delta, *, size: int) -> Array:
    r"""Tilted lower end of a ledger's composition (one direction), the largest over tilts.

    .. math:: \max_{\lambda \in \lambda^*(\delta_i)} \epsilon_{\text{lower}}\big(
              \text{tilted\_product}(p_{opt}, K, N, \lambda),\ \delta_i\big)

    (:func:`.pld.tilted.compose.tilted_product` of the optimistic one-use PLDs; the composed
    support starts at ``sum_i K_i lower_i``, so nothing is carried up from below a window
    that starts there).

    Args:
      parts: the optimistic one-use PLDs; counts: their numbers of uses (float64).
      delta: 1-D targets.
      size: FFT length (static; :func:`.pld.tilted.compose.product_size`).

    Returns:
      Certified lower ends of epsilon, shape of ``delta``.
    """
    ks = [jnp.asarray(c, jnp.float64) for c in counts]
    total = sum(ks)
    support = sum(k * p.lower.astype(jnp.float64) for p, k in zip(parts, ks, strict=True))
    log_mgf = sum(k * p.log_mgf for p, k in zip(parts, ks, strict=True))

    def one(xi, lam):
        t = tilted_product(parts, ks, size, lam)
        return epsilon_lower_of_tilted(t, xi, total, support)

    return least_over_tilts(one, log_mgf, delta, True, combine=jnp.max, tilts=lower_tilts)


@float64_kernel
def tilted_epsilon_lower(noise_fn, args, delta, bin_width, subsampled: bool) -> np.ndarray:
    r"""Host: the tilted lower end at each ``delta`` (``0`` where no tilted grid fits).

    .. math:: \epsilon_{\text{lower}}(\delta_i) \text{ of :func:`tilted_lower_kernel` on the
              sizes :func:`.plan.tilted_sizes` gives } \delta_i

    Entries are grouped by their sizes, so an entry's answer does not depend on its batch.

    Args:
      noise_fn: ``(scale, shape) -> noise`` of the family.
      args: ``(scale, shape, sensitivity, q, K)`` float64 scalars (:func:`.engine.scalar_args`).
      delta: 1-D NumPy array of targets in ``(0, 1)``.
      bin_width: the grid spacing ``h`` of the plain engine's plan.
      subsampled: whether the uses are Poisson-subsampled.

    Returns:
      Lower ends, shape of ``delta``.
    """
    flat = np.asarray(delta, np.float64).ravel()
    out = np.zeros(flat.shape)
    q = float(args[3]) if subsampled else None
    with np.errstate(divide="ignore", invalid="ignore"):
        levels = np.log(flat)
    idx = [i for i, d in enumerate(flat) if 0.0 < d < 1.0]
    for sizes, grp in tilted_groups(noise_fn, args, q, bin_width, idx, levels).items():
        got = run_padded(
            tilted_lower_kernel, args, flat[grp], noise_fn=noise_fn, bin_width=bin_width,
            sizes=sizes, subsampled=subsampled,
        )
        out[grp] = np.where(np.isnan(got), 0.0, got)
    return out.reshape(np.shape(delta))

