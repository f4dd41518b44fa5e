r"""Heterogeneous composition through the exponential tilt: a ledger's ``delta`` far below 1e-12.

:mod:`.fold` tilts one PLD's ``K``-fold self-composition; a ledger (:class:`~dpjax.
accounting.PLDAccountant`) composes *different* PLDs ``p_1, ..., p_m``, used ``K_1, ..., K_m``
times.  One tilt ``lambda`` serves all of them, because the factors ``e^{\lambda l}``
multiply when losses add:

.. math:: x_i = p_i\, e^{\lambda l - c_i},\qquad
          y = \mathrm{IFFT}\Big(\prod_i \mathrm{FFT}(x_i)^{K_i}\Big),\qquad
          p^{*}(l) = y(l)\, e^{\sum_i K_i c_i - \lambda l}

with ``c_i >= log sum p_i e^{lambda l}`` (:func:`.fold.tilted_pmf`: each ``||x_i||_1 <= 1``).  The
product is taken in one cyclic FFT of length ``N``, so there is a single window, placed as
:func:`.pld.compose.compose` places it (its start at the Chernoff lower edge of the summed
untilted moments ``sum_i K_i log M_i``, its top where they leave ``tau``, what lies above
bounded by Chernoff and added to ``inf_mass``).  The query is :mod:`.fold`'s
(:func:`.fold.tilted_epsilon_for_delta`, :func:`.fold.tilted_log_delta_for_epsilon`).

**Certified.**  The forward FFT errors go through the powers and the product: with all
spectral moduli at most one, ``|prod a_i - prod b_i| <= sum |a_i - b_i|``, so the l2 error
of the spectrum is at most the sum of each power's bound (:func:`.pld.compose.power_spectrum`),
``/ sqrt(N)`` after the inverse FFT; the powers' and products' own rounding is
``(sum_i (4 K_i + 16) + 2m) u`` relative, as in :func:`.pld.compose.fft_power`; each input's error
``r_i`` (its ``roundoff`` in tilted units) grows at most ``K_i``-fold (a convolution with
sub-probability vectors is an l2 contraction).  The tilt's entrywise relative rounding
``eta_i`` compounds to ``1 + rho = prod_i (1 + eta_i)^{K_i}`` (products and sums of
non-negative terms).  The atoms at ``+infinity`` compose as ``1 - prod_i (1 -
m_i)^{K_i}``.  Cyclic wrap-around and the pessimistic clip only add non-negative mass at
window points, as in :mod:`.fold`.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax._batching import device_array
from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.compose import (
    ceil_pow2,
    fft_error_constant,
    max_grid_points,
    power_rounding,
    power_spectrum,
    read_window,
    window_size,
    wrap_cyclic,
)
from dpjax.accounting.pld.plan import tilt_level
from dpjax.accounting.pld.tilted.fold import Tilted, least_over_tilts, query, tilted_pmf
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

#: :func:`.plan.tilt_level`'s floor; below it :func:`product_size` sizes the window from
#: ``10^{floor(log10 delta) - 15}`` (the cut above it, added to ``inf_mass``, stays
#: ``<= 1e-14 delta``; ``log`` space, so ``delta`` down to ``1e-300`` and beyond).
_FLOOR_LEVEL = -300


@float64_kernel
def tilted_product(parts, counts, size: int, lam) -> Tilted:
    r"""``p_1^{*K_1} * ... * p_m^{*K_m}`` tilted by ``lambda``, on one cyclic window (traced).

    .. math:: y = \mathrm{IFFT}\Big(\prod_i \mathrm{FFT}\big(p_i e^{\lambda l - c_i}\big)^{K_i}
              \Big),\qquad \text{log\_scale} = \sum_i K_i c_i

    (module docstring).

    Args:
      parts: the one-use PLDs ``p_i`` (one bin width): pessimistic (upper bounds) or all
        optimistic (:mod:`.bracket.tilted` reads a lower end off the product; the cut top is
        then dropped, not sent to ``+infinity``).
      counts: their numbers of uses ``K_i >= 1`` (float64, traced).
      size: FFT length ``N`` (static).
      lam: the tilt ``lambda >= 0``.

    Returns:
      The :class:`.fold.Tilted` composition.
    """
    lam = jnp.asarray(lam, jnp.float64)
    c1 = fft_error_constant(size)
    prod, spectral, carried, log_scale, log_rel = None, 0.0, 0.0, 0.0, 0.0
    lower, log_mgf, log_keep, truncated, roundings = 0.0, 0.0, 0.0, 0.0, 2.0 * len(parts)
    for pld, k in zip(parts, counts, strict=True):
        k = jnp.asarray(k, jnp.float64)
        x, c, eta, r_in = tilted_pmf(pld, lam)
        big_y, err = power_spectrum(wrap_cyclic(x, size), k, c1)
        prod = big_y if prod is None else prod * big_y
        spectral = spectral + err
        carried = carried + k * r_in
        log_scale = log_scale + k * c
        log_rel = log_rel + k * jnp.log1p(eta)
        lower = lower + k * pld.lower.astype(jnp.float64)
        log_mgf = log_mgf + k * pld.log_mgf
        log_keep = log_keep + k * jnp.log1p(-jnp.minimum(pld.inf_mass, 1.0))
        truncated = truncated + k * pld.truncated_mass
        roundings = roundings + power_rounding(k)
    pessimistic = all(p.pessimistic for p in parts)
    y = jnp.fft.irfft(prod, size)
    if pessimistic:  # an optimistic product keeps its round-off (the lower end subtracts it)
        y = jnp.maximum(y, 0.0)
    err = spectral / jnp.sqrt(float(size)) + (roundings * _U + c1) * jnp.linalg.norm(y) + _U
    h = parts[0].bin_width
    comp = read_window(
        y, lower, log_mgf, h, size, -jnp.expm1(log_keep), carried + err, truncated, pessimistic
    )
    return Tilted(comp, lam, log_scale, jnp.expm1(log_rel))


@functools.partial(jax.jit, static_argnames=("size", "by_delta"))
@float64_kernel
def tilted_product_kernel(parts, counts, x, kind=None, *, size: int, by_delta) -> Array:
    r"""Certified answers of the tilted heterogeneous composition, each query its own tilts.

    .. math:: a_i = \min_{\lambda \in \Lambda^*(x_i)} \text{answer}\big(\text{tilted\_product}
              (p, K, N, \lambda),\ x_i\big)

    (:func:`.fold.least_over_tilts`, tilts from the summed moments ``sum_j K_j log M_j``).

    Args:
      parts, counts: as in :func:`tilted_product`.
      x: 1-D array of targets ``delta`` (``by_delta``) or of ``epsilon``.
      kind: where ``by_delta`` is ``None``, the query kind as a traced boolean: one
        program for both kinds (an epsilon and its certificate's ``log delta`` re-check).
      size: FFT length (static).
      by_delta: ``x`` holds deltas (answer ``epsilon``) or epsilons (answer ``log delta``);
        ``None``: ``kind`` says which.

    Returns:
      Certified ``epsilon`` or ``log delta``, shape of ``x``.
    """
    if by_delta is None:
        by_delta = kind
    pairs = zip(parts, counts, strict=True)
    log_mgf = sum(jnp.asarray(k, jnp.float64) * p.log_mgf for p, k in pairs)

    def answer(xi, lam):
        return query(tilted_product(parts, counts, size, lam), xi, by_delta)

    return least_over_tilts(answer, log_mgf, x, by_delta)


@float64_kernel
def product_size(parts: list[PLD], counts, log_level: float) -> int | None:
    r"""Host helper: the FFT length of :func:`tilted_product` resolving ``delta ~ e^{log_level}``.

    .. math:: N = 2^{\lceil \log_2 \text{window\_size}(\sum_i K_i \log M_i,\ h,\ \log\tau)
              \rceil},\qquad \tau = 10^{\text{tilt\_level}(\delta)}

    (:func:`.plan.tilt_level`: whole decades, few compiles; at its floor ``10^{-300}``,
    ``tau = 10^{\lfloor \log_{10}\delta \rfloor - 15}`` instead), ``None`` where it exceeds
    :func:`.pld.compose.max_grid_points` (the plain composition still answers).

    Args:
      parts: the one-use PLDs.
      counts: their numbers of uses.
      log_level: natural ``log`` of the least ``delta`` the answer should resolve.

    Returns:
      The length, or ``None``.
    """
    pairs = zip(parts, counts, strict=True)
    log_mgf = sum(float(k) * np.asarray(p.log_mgf, np.float64) for p, k in pairs)
    level = tilt_level(log_level)
    if level <= _FLOOR_LEVEL:  # at tilt_level's floor the cut would be as large as delta
        level = min(level, math.floor(log_level / math.log(10.0)) - 15)
    log_tau = level * math.log(10.0)
    size = ceil_pow2(window_size(log_mgf, float(parts[0].bin_width), log_tau))
    return size if size <= max_grid_points() else None


@float64_kernel
def tilted_product_answer(
    parts, counts, x, by_delta: bool, log_level: float, either_kind: bool = False
) -> np.ndarray:
    """Host driver of :func:`tilted_product_kernel`: ``nan`` where it cannot run.

    Args:
      parts: the pessimistic one-use PLDs of one direction.
      counts: their numbers of uses (positive integers).
      x: 1-D targets (deltas if ``by_delta``, else epsilons).
      by_delta: which query ``x`` holds.
      log_level: ``log`` of the least ``delta`` to resolve (sizes the window).
      either_kind: run the program both query kinds share (the kind a traced flag: an
        epsilon and its certificate's re-check compile one program); default ``False``,
        the kind's own program.

    Returns:
      Certified ``epsilon`` or ``log delta`` (``nan``: no tilted answer; use the plain one).
    """
    x = np.atleast_1d(np.asarray(x, np.float64))
    size = product_size(parts, counts, log_level) if math.isfinite(log_level) else None
    if size is None:
        return np.full(x.shape, np.nan)
    got = tilted_product_kernel(
        tuple(parts),
        device_array(np.asarray(counts, np.float64)),
        device_array(x),
        device_array(np.bool_(by_delta)) if either_kind else None,
        size=size,
        by_delta=None if either_kind else by_delta,
    )
    return np.asarray(got, np.float64)


__all__ = ["product_size", "tilted_product", "tilted_product_answer", "tilted_product_kernel"]
