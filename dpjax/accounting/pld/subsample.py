r"""Poisson subsampling with rate ``q``: the dominating pairs for add and remove adjacency.

For a base pair ``(P0, Q0)`` (``P0 = T``, ``Q0 = T - Delta``, loss ``L0``
non-decreasing in ``t``) the Poisson-subsampled mechanism is dominated by
(Zhu, Dong, Wang 2022, Thm 11; Balle, Barthe, Gaboardi 2018):

* **remove** (the neighbour lacks the record): ``P = q P0 + (1 - q) Q0``,
  ``Q = Q0``; loss ``L = log(1 - q + q e^{L0})``, range ``(log(1-q), inf)``;
* **add** (the neighbour has one more record): ``P = P0``,
  ``Q = (1 - q) P0 + q Q0``; loss ``L = -log(1 - q + q e^{-L0})``, range
  ``(-inf, -log(1-q))``.

Both losses are increasing functions of ``L0``, so the pairs are again
:class:`~dpjax.accounting.pld.discretise.MonotonePair` s with closed-form
inverses, and the whole connect-the-dots machinery applies.  A DP-SGD
accountant composes each over ``T`` steps and reports the worse of the two
(``delta = max``, ``epsilon = max``), as dp_accounting does.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.discretise import MonotonePair, discretise_pair, noise_pair
from dpjax.numerics import float64_kernel, logaddexp

ADJACENCIES = ("remove", "add")


def _mix(la, lb, log_wa, log_wb):
    return logaddexp(log_wa + la, log_wb + lb)


@float64_kernel
def subsampled_pair(base: MonotonePair, sampling_rate, adjacency: str) -> MonotonePair:
    r"""The subsampled dominating pair of ``base`` for ``adjacency`` in ``("remove", "add")``."""
    q = jnp.asarray(sampling_rate, jnp.float64)
    lq, l1q = jnp.log(q), jnp.log1p(-q)
    big = 1e300
    if adjacency == "remove":

        def loss(t):
            return logaddexp(l1q, lq + base.loss(t))

        def inverse(eps):
            # e^eps = 1 - q + q e^{L0}  <=>  L0 = log(expm1(eps) + q) - log q
            arg = jnp.expm1(eps) + q
            ok = arg > 0
            l0 = jnp.log(jnp.where(ok, arg, 1.0)) - lq
            return jnp.where(ok, base.loss_inverse(l0), -big)

        def tails(t):
            sp, cp, sq, cq = base.all_tails(t)
            return _mix(sp, sq, lq, l1q), _mix(cp, cq, lq, l1q), sq, cq

        return MonotonePair(
            log_sf_p=lambda t: _mix(base.log_sf_p(t), base.log_sf_q(t), lq, l1q),
            log_cdf_p=lambda t: _mix(base.log_cdf_p(t), base.log_cdf_q(t), lq, l1q),
            log_sf_q=base.log_sf_q,
            log_cdf_q=base.log_cdf_q,
            loss=loss,
            loss_inverse=inverse,
            t_lo=base.t_lo,
            t_hi=base.t_hi,
            tails=tails,
        )
    if adjacency == "add":

        def loss(t):
            return -logaddexp(l1q, lq - base.loss(t))

        def inverse(eps):
            # e^{-eps} = 1 - q + q e^{-L0}  <=>  L0 = log q - log(expm1(-eps) + q)
            arg = jnp.expm1(-eps) + q
            ok = arg > 0
            l0 = lq - jnp.log(jnp.where(ok, arg, 1.0))
            return jnp.where(ok, base.loss_inverse(l0), big)

        def tails(t):
            sp, cp, sq, cq = base.all_tails(t)
            return sp, cp, _mix(sp, sq, l1q, lq), _mix(cp, cq, l1q, lq)

        return MonotonePair(
            log_sf_p=base.log_sf_p,
            log_cdf_p=base.log_cdf_p,
            log_sf_q=lambda t: _mix(base.log_sf_p(t), base.log_sf_q(t), l1q, lq),
            log_cdf_q=lambda t: _mix(base.log_cdf_p(t), base.log_cdf_q(t), l1q, lq),
            loss=loss,
            loss_inverse=inverse,
            t_lo=base.t_lo,
            t_hi=base.t_hi,
            tails=tails,
        )
    raise ValueError(f"adjacency must be one of {ADJACENCIES}, got {adjacency!r}")


@float64_kernel
def subsampled_noise_pair(noise, sensitivity, sampling_rate, adjacency: str) -> MonotonePair:
    """:func:`subsampled_pair` of the additive-noise pair of ``noise`` at shift ``sensitivity``."""
    return subsampled_pair(noise_pair(noise, sensitivity), sampling_rate, adjacency)


@jax.jit
def _range(noise, sensitivity, sampling_rate):
    out = []
    for adj in ADJACENCIES:
        pair = subsampled_noise_pair(noise, sensitivity, sampling_rate, adj)
        out.append((pair.loss(pair.t_lo), pair.loss(pair.t_hi)))
    return out


@float64_kernel
def subsampled_grid(noise, sensitivity: float, sampling_rate: float, bin_width: float):
    """Host helper: ``{adjacency: (lower, size)}`` covering each subsampled loss range."""
    ranges = _range(
        noise, jnp.asarray(sensitivity, jnp.float64), jnp.asarray(sampling_rate, jnp.float64)
    )
    grids = {}
    for adj, (lo, hi) in zip(ADJACENCIES, ranges, strict=True):
        lower = math.floor(float(lo) / bin_width) - 1
        grids[adj] = (lower, math.ceil(float(hi) / bin_width) + 1 - lower + 1)
    return grids


@functools.partial(jax.jit, static_argnames=("adjacency", "size", "pessimistic"))
@float64_kernel
def discretise_subsampled(
    noise,
    sensitivity,
    sampling_rate,
    adjacency: str,
    bin_width,
    lower,
    size: int,
    pessimistic: bool = True,
) -> PLD:
    """Connect-the-dots PLD of the subsampled pair (jitted; ``size`` static)."""
    pair = subsampled_noise_pair(noise, sensitivity, sampling_rate, adjacency)
    return discretise_pair(pair, bin_width, lower, size, pessimistic)


@float64_kernel
def from_subsampled_noise(
    noise,
    sensitivity: float,
    sampling_rate: float,
    bin_width: float = 1e-4,
    pessimistic: bool = True,
) -> dict[str, PLD]:
    """``{"remove": PLD, "add": PLD}`` of one Poisson-subsampled use of ``noise``."""
    grids = subsampled_grid(noise, sensitivity, sampling_rate, bin_width)
    return {
        adj: discretise_subsampled(
            noise,
            jnp.asarray(sensitivity, jnp.float64),
            jnp.asarray(sampling_rate, jnp.float64),
            adj,
            jnp.asarray(bin_width, jnp.float64),
            lower,
            size,
            pessimistic,
        )
        for adj, (lower, size) in grids.items()
    }


@float64_kernel
def gaussian_rdp_epsilon(sigma, sampling_rate, compositions, delta, sensitivity=1.0):
    r"""RDP estimate of the subsampled Gaussian's epsilon (NumPy; a bracket, not a certificate).

    Integer orders ``a`` in ``2..32``, ``36..256`` (step 4): ``A_a = sum_k C(a, k) (1-q)^{a-k} q^k
    exp((k^2 - k) mu^2 / 2)`` with ``mu = Delta / sigma`` (Mironov, Talwar,
    Zhang 2019, Sec. 3.3), ``eps(a) = T log(A_a) / (a - 1)``, converted by
    ``eps = eps(a) + log((a-1)/a) - (log delta + log a)/(a - 1)``
    (Canonne, Kamath, Steinke 2020).  Used only to bracket calibrations;
    the engine certifies.
    """
    from scipy.special import gammaln, logsumexp

    mu2 = np.asarray((np.asarray(sensitivity, float) / np.asarray(sigma, float)) ** 2)
    q = float(sampling_rate)
    a = np.concatenate([np.arange(2, 33), np.arange(36, 257, 4)]).astype(float)[:, None]  # orders
    k = np.arange(257, dtype=float)[None, :]
    valid = k <= a
    logc = np.where(valid, gammaln(a + 1) - gammaln(k + 1) - gammaln(np.maximum(a - k, 0) + 1), 0)
    base = np.where(valid, logc + (a - k) * np.log1p(-q) + k * np.log(q), -np.inf)
    terms = base[None] + mu2.reshape(-1, 1, 1) * ((k * k - k) / 2.0)[None]
    log_a = logsumexp(terms, axis=-1)  # (m, orders)
    a = a[:, 0]
    eps = (
        compositions * log_a / (a - 1)
        + np.log((a - 1) / a)
        - (np.log(np.asarray(delta, float)).reshape(-1, 1) + np.log(a)) / (a - 1)
    )
    return eps.min(axis=-1).reshape(np.shape(mu2)) if np.ndim(mu2) else float(eps.min())


@float64_kernel
def gaussian_rdp_sigma(epsilon, delta, sampling_rate, compositions, sensitivity=1.0):
    """Least sigma whose RDP estimate meets ``(epsilon, delta)`` (NumPy bisection; a bracket)."""
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    lo = np.full(epsilon.shape, 1e-3 * sensitivity)
    hi = np.full(epsilon.shape, 1e4 * sensitivity)
    for _ in range(26):  # ratio 1e7 -> 1.0006: a bracket, not the answer
        mid = np.sqrt(lo * hi)
        ok = gaussian_rdp_epsilon(mid, sampling_rate, compositions, delta, sensitivity) <= epsilon
        lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
    return hi
