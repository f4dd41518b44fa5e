r"""Certified **lower** ends of epsilon: the optimistic PLD and the bracket's lower end.

The optimistic discretisation (:func:`.discretise.discretise_pair` with
``pessimistic=False``) merges each bin's outcomes and rounds the merged loss *down* to the
grid, so its hockey stick lies below the true one at every ``epsilon``, and so do its
compositions (a use loses ``O(h^2)`` and a small offset, not ``h / 2``: the bracket's width
does not grow like ``T h / 2``).  From its composed grid
``l_k = (lower + k) h`` the grid part of ``delta`` at ``l_k`` is ``D_k = sum_{j > k} p_j (1 -
e^{-(j - k) h})`` (:func:`.query.profile_arrays`); every error is *subtracted*:

.. math:: \underline\delta_k = (1 - 2\,\text{REL})(D_k - \text{ABS})
          - r W(n - k) - w - (1 - (1 - \varepsilon_b)^K),

``r`` the FFT round-off bound (l2, Cauchy-Schwarz against the weights ``1 - e^{-(j - k) h}`` of
the ``n - k`` points above, :func:`.query.roundoff_weight`), ``w``
the composed mass below the window (the only mass a cyclic FFT can carry *up*: a cyclic
FFT of length ``N`` puts the mass of the composed loss index ``j`` at the window label
congruent to ``j`` mod ``N``, so mass above the window wraps down, which only lowers
``delta``, and mass below it is carried up), ``REL, ABS`` the
rounding constants of :mod:`.pld.query` and ``eps_b = 1e-11`` the relative accuracy of one
bin mass (:data:`.pld.discretise.BIN_MASS_ERROR`), compounded over the ``K`` uses.  The
composed loss of the discretised pairs never lies below ``s = sum_i K_i lower_i`` (each
pair's pmf starts at its index ``lower_i``), so

.. math:: w = P(S < \text{lower}\,h) = 0 \quad\text{if}\ \text{lower} \le s,\qquad
          w \le \min_{\lambda < 0} M_K(\lambda)\, e^{-\lambda(\text{lower} - 1/2) h}
          \quad\text{else}

(Chernoff; the grid-valued ``S < lower h`` is ``S <= (lower - 1/2) h``): where no
composition can reach below the window, nothing is charged.  The window's cut mass is
dropped, never sent to ``+infinity`` (that would raise ``delta``), and no tail bound is
used.  Since ``delta`` is non-increasing, ``delta_true(eps) >= underline delta_k > delta``
for every ``eps <= l_k``, so

.. math:: \epsilon_{\text{lower}}(\delta) = \max\{l_k :\ \underline\delta_k > \delta\}
          \ (\text{or } 0) \le \epsilon_{\text{true}}(\delta),

a certified lower bound, within one bin of the optimistic PLD's own epsilon where the grid
resolves ``delta`` (above its ``~1e-12`` round-off floor); below the floor it is the
epsilon of a larger delta (still a lower bound), and ``0`` where the grid says nothing.
For several adjacencies the true epsilon is the maximum, so the maximum of the lower ends
is again a lower end.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.bracket.tilted import tilted_epsilon_lower
from dpjax.accounting.pld import PLD, engine, query, tail_bounds
from dpjax.accounting.pld.compose import self_compose
from dpjax.accounting.pld.discretise import BIN_MASS_ERROR
from dpjax.accounting.pld.plan import plan
from dpjax.numerics import float64_kernel
from dpjax.numerics.export_cache import call_cached


@jax.jit  # eagerly (the accountant's bracket), every primitive compiled at each grid length
@float64_kernel
def epsilon_lower_of_pld(
    pld: PLD, delta: ArrayLike, compositions=1.0, support_lower: ArrayLike | None = None
) -> Array:
    r"""Certified lower end of ``epsilon(delta)`` from an optimistic (composed) PLD.

    .. math:: \epsilon_{\text{lower}} = \max\{l_k : \underline\delta_k > \delta\}\ (\text{or } 0)

    (module docstring; Koskela, Jälkö & Honkela 2020 and Doroshenko et al. 2022 for the
    optimistic discretisation).

    Args:
      pld: an optimistic :class:`PLD` (``pessimistic=False``), composed or not.
      delta: targets ``delta`` (any shape).
      compositions: ``K``, the number of uses composed into ``pld`` (bin-mass errors).
      support_lower: a grid index ``s`` below which the composed (discretised) loss has no
        mass: ``sum_i K_i lower_i`` over the composed pairs' first indices (their pmfs start
        there), e.g. ``K * one.lower`` for a ``K``-fold self-composition of ``one``.  Where
        the window starts at or below it no mass is carried up by the FFT (``w = 0``);
        ``None``: unknown, the Chernoff bound is charged.

    Returns:
      Lower bounds on the true ``epsilon(delta)``, shape of ``delta`` (``0`` where the grid
      certifies nothing -- a ``nan`` pmf, a grid the engine marked void with ``inf_mass = 1``
      -- and for a pessimistic ``pld``: it bounds nothing from below).
    """
    if pld.pessimistic:
        return jnp.zeros(jnp.shape(delta))
    prof = query.profile_arrays(pld)
    n = prof.s.shape[-1] - 1
    h = jnp.asarray(pld.bin_width, jnp.float64)
    k = jnp.arange(n + 1, dtype=jnp.float64)
    losses = (pld.lower.astype(jnp.float64) + k) * h
    start = pld.lower.astype(jnp.float64)
    wrapped = jnp.exp(tail_bounds.log_lower_tail(pld.log_mgf, (start - 0.5) * h))
    wrapped = jnp.where(jnp.isnan(wrapped), jnp.inf, wrapped)
    if support_lower is not None:  # nothing below the window: no mass to carry up
        wrapped = jnp.where(start <= jnp.asarray(support_lower, jnp.float64), 0.0, wrapped)
    kk = jnp.asarray(compositions, jnp.float64)
    mass_err = -jnp.expm1(kk * jnp.log1p(-BIN_MASS_ERROR))
    spread = query.roundoff_weight(n - k, h)
    low = (1.0 - 2.0 * prof.rel) * (prof.d - prof.abs_) - pld.roundoff * spread
    low = low - wrapped - mass_err
    # a grid marked void (inf_mass = 1: inexact indices, no finite window) certifies nothing
    low = jnp.where(prof.ok & (pld.inf_mass < 1.0), low, -jnp.inf)
    dl = jnp.asarray(delta, jnp.float64)[..., None]
    eps = jnp.max(jnp.where(low > dl, losses, 0.0), axis=-1)
    return jnp.maximum(eps, 0.0)


@functools.partial(jax.jit, static_argnames=engine.STATIC_ARGNAMES)
@float64_kernel
def _lower_kernel(
    scale, shape, sensitivity, sampling_rate, compositions, delta, *, noise_fn, bin_width, sizes,
    subsampled,
):
    # every adjacency's one-use pair (fft = 0: not composed), composed here so that the
    # composed support's first index K * one.lower is known (no FFT wrap-up below it)
    k = jnp.asarray(compositions, jnp.float64)

    def answer(one):
        composed = self_compose(one, k, sizes.fft) if sizes.fft else one
        return epsilon_lower_of_pld(
            composed, delta, k, support_lower=k * one.lower.astype(jnp.float64)
        )

    out = engine.stacked_plds(
        noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width,
        sizes._replace(fft=0), subsampled, pessimistic=False, then=answer,
    )
    return jnp.max(out, axis=0)


@float64_kernel
def epsilon_lower(
    noise_fn, scale, shape, sensitivity, delta, compositions=1, sampling_rate=None, bin_width=1e-4
):
    r"""Certified lower end of ``epsilon(delta)`` after ``compositions`` uses (host, NumPy).

    .. math:: \epsilon_{\text{lower}} = \max_{\text{adjacency}} \max\{l_k :
              \underline\delta_k > \delta\}

    of the optimistic ``K``-fold PLD of each adjacency on the grid :func:`.plan.plan`
    chooses for the pessimistic engine (:func:`.engine.epsilon` is the upper end), and below
    :data:`.engine.TILT_BELOW` the larger of it and the tilted lower end
    (:func:`.tilted.tilted_epsilon_lower`: both are lower bounds); ``0`` where the plan has
    no grid (Chernoff only: no certified lower end).

    Args:
      noise_fn, scale, shape, sensitivity, compositions, sampling_rate, bin_width: as in
        :func:`.engine.profile`.
      delta: target ``delta`` (any shape).

    Returns:
      Lower bounds on the true epsilon, a NumPy array of ``delta``'s shape.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.noise import Gaussian
      >>> def gaussian(scale, shape):
      ...     return Gaussian(scale)
      >>> # DP-SGD: sigma 1, q = 0.01, 1000 steps; the upper end is 1.8282
      >>> e = epsilon_lower(gaussian, 1.0, 0.0, 1.0, 1e-5, compositions=1000, sampling_rate=0.01)
      >>> bool(1.77 < float(e) <= 1.8282)
      True
    """
    p = plan(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width)
    x = jnp.asarray(delta, jnp.float64)
    if p.sizes is None or p.sizes.moments_only:  # no grid: no certified lower end
        return np.zeros(np.shape(x))
    got = call_cached(  # a warm process loads its compiled program (export cache)
        _lower_kernel,
        *engine.scalar_args(scale, shape, sensitivity, sampling_rate, compositions),
        x.reshape(-1),
        static_argnames=engine.STATIC_ARGNAMES,
        noise_fn=noise_fn,
        bin_width=p.bin_width,
        sizes=p.sizes,
        subsampled=sampling_rate is not None,
    )
    got = np.asarray(got, np.float64).reshape(np.shape(x))
    got = np.where(np.isnan(got), 0.0, got)
    flat = np.asarray(x, np.float64).reshape(-1)
    tiny = (flat > 0) & (flat < engine.TILT_BELOW)
    if np.any(tiny):  # below the FFT floor: the tilted lower end too, the larger kept
        more = np.zeros(flat.shape)
        more[tiny] = tilted_epsilon_lower(
            noise_fn, engine.scalar_args(scale, shape, sensitivity, sampling_rate, compositions),
            flat[tiny], p.bin_width, sampling_rate is not None,
        )
        got = np.maximum(got, more.reshape(got.shape))
    return got
