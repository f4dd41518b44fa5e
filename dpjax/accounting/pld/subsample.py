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

from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.discretise import MonotonePair, discretise_pair, noise_pair
from dpjax.certificate import log_target
from dpjax.numerics import float64_kernel, logaddexp

ADJACENCIES = ("remove", "add")
_U = 2.0**-53


def _mix(la, lb, log_wa, log_wb):
    return logaddexp(log_wa + la, log_wb + lb)


@float64_kernel
def subsampled_pair(base: MonotonePair, sampling_rate, adjacency: str) -> MonotonePair:
    r"""The Poisson-subsampled dominating pair of ``base`` for one adjacency.

    .. math:: L_{\text{remove}} = \log(1 - q + q e^{L_0}),\qquad
              L_{\text{add}} = -\log(1 - q + q e^{-L_0})

    (Zhu, Dong & Wang 2022, Thm 11; module docstring), with closed-form inverses that
    neither overflow nor cancel as ``q -> 1``.

    Args:
      base: the pair of one use without subsampling (loss non-decreasing in ``t``).
      sampling_rate: ``q`` in ``(0, 1]``.
      adjacency: ``"remove"`` or ``"add"`` (static; anything else raises ``ValueError``).

    Returns:
      The subsampled :class:`~dpjax.accounting.pld.discretise.MonotonePair`.
    """
    q = jnp.asarray(sampling_rate, jnp.float64)
    lq, l1q = jnp.log(q), jnp.log1p(-q)
    big = 1e300
    if adjacency == "remove":

        def loss(t):
            return logaddexp(l1q, lq + base.loss(t))

        def inverse(eps):
            # e^eps = 1 - q + q e^{L0}  <=>  L0 = eps + log(1 - e^{log(1-q) - eps}) - log q:
            # no overflow of e^eps, no cancellation for q -> 1 (q = 1: L0 = eps); log(-expm1)
            # keeps L0 to ~u absolute (all the inverse needs) with two transcendentals
            ok = eps > l1q
            l0 = eps + jnp.log(-jnp.expm1(jnp.where(ok, l1q - eps, -1.0))) - lq
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
            # e^{-eps} = 1 - q + q e^{-L0}  <=>  L0 = log q + eps - log(1 - e^{log(1-q) + eps})
            # (exact for q -> 1, where expm1(-eps) + q lost every digit; q = 1: L0 = eps)
            ok = -eps > l1q
            l0 = lq + eps - jnp.log(-jnp.expm1(jnp.where(ok, l1q + eps, -1.0)))
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
    """:func:`subsampled_pair` of the additive-noise pair ``(T, T - Delta)`` of ``noise``.

    Args:
      noise: a noise family instance (e.g. :class:`dpjax.noise.Gaussian`).
      sensitivity: the shift ``Delta > 0``.
      sampling_rate: ``q`` in ``(0, 1]``.
      adjacency: ``"remove"`` or ``"add"`` (static).

    Returns:
      The subsampled :class:`~dpjax.accounting.pld.discretise.MonotonePair`
      (Zhu, Dong & Wang 2022, Thm 11).
    """
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
    """Host helper: ``{adjacency: (lower, size)}`` covering each subsampled loss range.

    The grid runs from ``floor(L(t_lo) / h) - 1`` to ``ceil(L(t_hi) / h) + 1`` for the loss
    ``L`` of :func:`subsampled_pair` (Zhu, Dong & Wang 2022, Thm 11).

    Args:
      noise, sensitivity, sampling_rate: as in :func:`subsampled_noise_pair`.
      bin_width: grid spacing ``h > 0``.

    Returns:
      ``{"remove": (lower, size), "add": (lower, size)}`` (host integers).
    """
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
    """Connect-the-dots PLD of the subsampled pair (jitted; ``size`` static).

    Pessimistic connect-the-dots (Doroshenko et al. 2022) of :func:`subsampled_noise_pair`
    on ``l_i = (lower + i) h``, through
    :func:`~dpjax.accounting.pld.discretise.discretise_pair`.

    Args:
      noise, sensitivity, sampling_rate, adjacency: as in :func:`subsampled_noise_pair`.
      bin_width: grid spacing ``h > 0``.
      lower: integer index of the first grid point.
      size: number of grid points (static).
      pessimistic: round loss mass up (an upper bound) or down (static).

    Returns:
      The :class:`PLD`.
    """
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
    r"""``{"remove": PLD, "add": PLD}`` of one Poisson-subsampled use of ``noise``.

    The guarantee is ``delta(eps) = max(delta_remove(eps), delta_add(eps))`` (Zhu, Dong &
    Wang 2022, Thm 11).

    Args:
      noise, sensitivity, sampling_rate: as in :func:`subsampled_noise_pair`.
      bin_width: grid spacing ``h > 0``.
      pessimistic: round loss mass up (an upper bound) or down.

    Returns:
      One :class:`PLD` per adjacency, each on a grid that covers its loss range (the add
      loss never exceeds ``-log(1 - q)``).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import delta_for_epsilon
      >>> from dpjax.noise import Gaussian
      >>> plds = from_subsampled_noise(Gaussian(1.0), 1.0, sampling_rate=0.01)
      >>> {k: round(float(delta_for_epsilon(p, 0.1)), 8) for k, p in plds.items()}
      {'remove': 7.29e-05, 'add': 0.0}
    """
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


#: Integer Rényi orders of :func:`gaussian_log_moments`: ``2..64``, ``68..256`` (step 4) and
#: ``320..1024`` (step 64) -- a superset of the integer orders RDP accountants use.
RDP_ORDERS = np.concatenate(
    [np.arange(2, 65), np.arange(68, 257, 4), np.arange(320, 1025, 64)]
).astype(np.float64)
#: Fractional orders ``1.1 .. 10.9`` (step 0.1) of :func:`gaussian_moment_bounds`.
FRACTIONAL_ORDERS = np.setdiff1d(np.round(np.arange(11, 110) / 10.0, 1), np.arange(2, 11))


@float64_kernel
def gaussian_log_moments(sigma, sampling_rate, sensitivity=1.0, orders=RDP_ORDERS):
    r"""Certified upper bounds on the log-moments of one Poisson-subsampled Gaussian use.

    For integer orders ``alpha`` (Mironov, Talwar, Zhang 2019, Sec. 3.3),

    .. math:: \log A_\alpha = \log \sum_{k=0}^{\alpha} \binom{\alpha}{k} (1-q)^{\alpha-k} q^k
              e^{(k^2 - k) \mu^2 / 2},\qquad \mu = \Delta / \sigma,

    is ``(alpha - 1) D_alpha`` of the remove pair, i.e. ``log E_P[e^{lambda L}]`` at
    ``lambda = alpha - 1``; it also bounds the add pair's (ibid., Thm 5).  Evaluated in
    log space (``q = 1`` included: only ``k = alpha`` survives) and padded by the
    rounding of every term (``64 u`` times the sum of the magnitudes of its parts) and
    of the sum, so that :mod:`.tail_bounds` certifies ``delta(eps)`` from
    ``T log A`` (NumPy, host).

    Args:
      sigma: noise standard deviation(s) ``sigma > 0`` (any shape ``S``).
      sampling_rate: ``q`` in ``(0, 1]``.
      sensitivity: l2-sensitivity ``Delta``.
      orders: integer orders ``alpha >= 2``.

    Returns:
      ``(lambdas, log_moments)``: ``lambdas = orders - 1`` and an array of shape
      ``S + (len(orders),)``.
    """
    from scipy.special import gammaln, logsumexp

    mu2 = (np.asarray(sensitivity, np.float64) / np.asarray(sigma, np.float64)) ** 2
    q = float(sampling_rate)
    lq, l1q = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    a = np.asarray(orders, np.float64)[:, None]
    k = np.arange(int(a.max()) + 1, dtype=np.float64)[None, :]
    valid = k <= a
    logc = np.where(valid, gammaln(a + 1) - gammaln(k + 1) - gammaln(np.maximum(a - k, 0) + 1), 0)
    rest = a - k
    with np.errstate(invalid="ignore"):
        t_rest = np.where(rest > 0, rest * l1q, 0.0)  # (1-q)^0 = 1 also at q = 1
    t_q = k * lq
    base = np.where(valid, logc + t_rest + t_q, -np.inf)
    mag = np.abs(logc) + np.where(np.isfinite(t_rest), np.abs(t_rest), 0.0) + np.abs(t_q)
    quad = ((k * k - k) / 2.0)[None] * mu2.reshape(-1, 1, 1)
    terms = base[None] + quad + 64.0 * _U * (mag[None] + quad + 1.0)
    log_a = logsumexp(terms, axis=-1) + math.log1p(1024.0 * _U)
    return a[:, 0] - 1.0, log_a.reshape(np.shape(mu2) + (a.shape[0],))


@float64_kernel
def gaussian_moment_bounds(sigma, sampling_rate, sensitivity=1.0):
    r"""Log-moment bounds of one subsampled Gaussian use at integer *and* fractional orders.

    The exact integer-order moments of :func:`gaussian_log_moments`, and at every fractional
    order ``alpha`` of :data:`FRACTIONAL_ORDERS` the chord of the neighbouring integers:
    ``log A_alpha`` is convex in ``alpha`` (a log moment generating function, Hölder), so

    .. math:: \log A_\alpha \le (1 - t) \log A_{n} + t \log A_{n + 1},\qquad
              n = \lfloor\alpha\rfloor,\ t = \alpha - n,\ \log A_1 = 0,

    a certified upper bound (padded by its own rounding) that lets the Chernoff / RDP
    conversion optimise over the fractional orders RDP accountants use.

    Args:
      sigma, sampling_rate, sensitivity: as in :func:`gaussian_log_moments`.

    Returns:
      ``(lambdas, log_moments)`` as :func:`gaussian_log_moments`, fractional orders appended.
    """
    lam, log_a = gaussian_log_moments(sigma, sampling_rate, sensitivity)
    ints = np.arange(1.0, 12.0)
    _, log_small = gaussian_log_moments(sigma, sampling_rate, sensitivity, ints[1:])
    log_small = np.concatenate([np.zeros(log_small.shape[:-1] + (1,)), log_small], axis=-1)
    n = np.floor(FRACTIONAL_ORDERS).astype(int) - 1
    t = FRACTIONAL_ORDERS - np.floor(FRACTIONAL_ORDERS)
    lo, hi = log_small[..., n], log_small[..., n + 1]
    chord = (1.0 - t) * lo + t * hi
    chord = chord + 8.0 * _U * (np.abs(lo) + np.abs(hi))
    return np.concatenate([lam, FRACTIONAL_ORDERS - 1.0]), np.concatenate([log_a, chord], -1)


#: The Chernoff conversions of :mod:`.tail_bounds`, jitted once for host callers.
_epsilon_chernoff = jax.jit(tail_bounds.epsilon_chernoff)
_log_delta_chernoff = jax.jit(tail_bounds.log_delta_chernoff)


@float64_kernel
def gaussian_rdp_epsilon(sigma, sampling_rate, compositions, delta, sensitivity=1.0):
    r"""Certified RDP epsilon of ``T`` Poisson-subsampled Gaussian uses at ``delta`` (NumPy).

    .. math:: \epsilon = \min_\alpha \frac{T \log A_\alpha}{\alpha - 1}
              + \log\frac{\alpha - 1}{\alpha} - \frac{\log\delta + \log\alpha}{\alpha - 1}

    (Canonne, Kamath & Steinke 2020 on the moments of :func:`gaussian_log_moments`), at
    ``delta (1 - MARGIN)``.  A certified upper bound (looser than the PLD engine except
    where the engine's grid is capped); also the engine's calibration bracket.

    Args:
      sigma: noise standard deviation(s) ``sigma > 0``.
      sampling_rate: ``q`` in ``(0, 1]``.
      compositions: ``T >= 1``.
      delta: target ``delta`` in ``(0, 1)``.
      sensitivity: l2-sensitivity ``Delta``.

    Returns:
      ``epsilon``: a float for scalar input, else a NumPy array.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(gaussian_rdp_epsilon(1.0, 0.01, 1000, 1e-5), 3)  # DP-SGD: sigma 1, q 0.01
      2.108
    """
    lam, log_a = gaussian_moment_bounds(sigma, sampling_rate, sensitivity)
    log_delta = log_target(np.asarray(delta, np.float64))
    eps = np.asarray(_epsilon_chernoff(float(compositions) * log_a, log_delta, lam))
    return eps if eps.ndim else float(eps)


@float64_kernel
def gaussian_rdp_log_delta(sigma, sampling_rate, compositions, epsilon, sensitivity=1.0):
    """Certified ``log delta(epsilon)`` of ``T`` Poisson-subsampled Gaussian uses (NumPy out).

    The Chernoff/RDP conversion of :mod:`.tail_bounds` (Canonne, Kamath & Steinke 2020) on
    the moments ``T log A_alpha`` of :func:`gaussian_log_moments`.

    Args:
      sigma, sampling_rate, compositions, sensitivity: as in :func:`gaussian_rdp_epsilon`.
      epsilon: ``epsilon >= 0``.

    Returns:
      ``log delta``, a NumPy array.
    """
    lam, log_a = gaussian_moment_bounds(sigma, sampling_rate, sensitivity)
    eps = np.asarray(epsilon, np.float64)
    return np.asarray(_log_delta_chernoff(float(compositions) * log_a, eps, lam))


@float64_kernel
def gaussian_rdp_sigma(epsilon, delta, sampling_rate, compositions, sensitivity=1.0):
    """Least sigma whose RDP estimate meets ``(epsilon, delta)``, to a bracket (NumPy).

    Geometric bisection of :func:`gaussian_rdp_epsilon` over ``[1e-3, 1e4] Delta``, 26 steps
    (a ratio of 1.0006: a bracket for the engine's calibration, not the answer).

    Args:
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      sampling_rate, compositions, sensitivity: as in :func:`gaussian_rdp_epsilon`.

    Returns:
      The upper end of the bracket (meets the target), broadcast shape of the targets.
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    lo = np.full(epsilon.shape, 1e-3 * sensitivity)
    hi = np.full(epsilon.shape, 1e4 * sensitivity)
    for _ in range(26):  # ratio 1e7 -> 1.0006: a bracket, not the answer
        mid = np.sqrt(lo * hi)
        ok = gaussian_rdp_epsilon(mid, sampling_rate, compositions, delta, sensitivity) <= epsilon
        lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
    return hi


@float64_kernel
def adjacency_pairs(noise, sensitivity, sampling_rate, subsampled: bool, tail: float = 1e-40):
    """The dominating pairs of one use of ``noise`` at shift ``sensitivity``.

    The base pair ``(T, T - Delta)`` of
    :func:`~dpjax.accounting.pld.discretise.noise_pair` (symmetric noise: one pair covers
    both adjacencies), or, when ``subsampled``, its Poisson-subsampled pairs for
    :data:`ADJACENCIES` (Zhu, Dong & Wang 2022, Thm 11; the worse one is reported).

    Args:
      noise, sensitivity, sampling_rate: as in :func:`subsampled_noise_pair` (the rate is
        ignored unless ``subsampled``).
      subsampled: whether the use is Poisson-subsampled (static).
      tail: tail mass at which the base pair's support is cut.

    Returns:
      A list of one or two :class:`~dpjax.accounting.pld.discretise.MonotonePair` s.
    """
    base = noise_pair(noise, sensitivity, tail)
    if not subsampled:
        return [base]
    return [subsampled_pair(base, sampling_rate, adj) for adj in ADJACENCIES]
