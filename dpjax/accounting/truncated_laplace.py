r"""Exact 1-D privacy profile of the truncated Laplace mechanism (Geng, Ding, Guo & Kumar 2020).

Noise ``TL(lambda, A)`` (:mod:`dpjax.noise.truncated_laplace`), sensitivity
``Delta``; write ``c = A / lambda``, ``mu = Delta / lambda`` and
``D = 1 - e^{-c}``.  Derived here from ``delta(eps) = int [g(t) - e^eps g(t + Delta)]_+ dt``
(App. F, eq. (26) of flipped-huber-mechanism): on ``(A - Delta, A]`` the
shifted density vanishes (loss ``+inf``), on ``[-A, A - Delta]`` the loss is the
Laplace one ``(|t + Delta| - |t|) / lambda``, so with ``t* = lambda (eps - mu) / 2``

.. math::
   \delta(\epsilon) = \begin{cases}
     1, & \mu \ge 2c \\
     \dfrac{2\,(1 - e^{(\epsilon - \mu)/2}) + e^{-c}(e^{\epsilon} - 1)}{2D},
        & \epsilon < \min(\mu,\ 2c - \mu) \\
     P(T > A - \Delta) = \begin{cases} \dfrac{e^{\mu} - 1}{2(e^{c} - 1)} & \mu \le c \\
        \dfrac{D + 1 - e^{c - \mu}}{2D} & c < \mu < 2c \end{cases}, & \text{otherwise.}
   \end{cases}

The middle line is ``P(T > t*) - e^eps P(T > t* + Delta)`` after simplification
(both terms non-negative: no cancellation).  GDGK's optimal parameters for a
target ``(epsilon, delta)`` are ``lambda = Delta / epsilon`` and
``A = lambda log(1 + (e^epsilon - 1) / (2 delta))``, which put
``epsilon = mu`` exactly on the kink with ``P(T > A - Delta) = delta``
(:func:`truncated_laplace_gdgk`).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.laplace import EPSILON_ERROR, pure_gap
from dpjax.certificate import (
    fail_closed,
    kernel_error,
    log_target,
    reported_delta,
    reported_epsilon,
)
from dpjax.numerics import (
    float64_kernel,
    least_feasible,
    log1mexp,
    log_expm1,
    logaddexp,
    quotient,
)
from dpjax.numerics.constants import LOG_2

#: Documented error constant of the truncated Laplace profile kernels
#: (``|log delta_computed - log delta_true| <= ERROR (1 + |log delta|)``): largest measured
#: ratio 6.2e-15 against 100-digit mpmath for c = A / lambda in [1e-3, 1e5]
#: (tests/accounting/test_fail_closed.py).  The differences that decide the profile
#: (``epsilon - mu``, ``epsilon - c``, ``c - mu``) are formed from the float inputs
#: with compensated quotients, so no term carries an error ``~ 1e-16 c``.
ERROR = kernel_error(2e-14)

#: Relative padding of the loss atoms' masses (:func:`truncated_laplace_loss_atoms`): each is
#: one product of ``exp`` / ``expm1`` values, a few ulp (``~1e-15``) from the exact mass.
_MASS_PAD = 1e-13


def _log_delta(epsilon, c, mu, gap_mu, gap_c, c_minus_mu, disjoint):
    r"""The profile from the differences that decide it (module docstring):
    ``gap_mu = eps - mu``, ``gap_c = eps - c``, ``c_minus_mu = c - mu``, ``disjoint = mu >= 2c``.

    Middle line: ``log[2 (1 - e^{gap_mu / 2}) + e^{gap_c} (1 - e^{-eps})] - log 2D``;
    flat part ``mu <= c``: ``-(c - mu) + log(1 - e^{-mu}) - log(1 - e^{-c}) - log 2``;
    ``c < mu < 2c``: ``log(D + 1 - e^{c - mu}) - log 2D``.
    """
    log_d = log1mexp(-c)  # log D
    middle = (gap_mu < 0) & (epsilon < c + c_minus_mu)
    g_m = jnp.where(middle, gap_mu, -1.0)
    e_m = jnp.where(middle & (epsilon > 0), epsilon, 1.0)
    lap = LOG_2 + log1mexp(0.5 * g_m)
    trunc = jnp.where(epsilon > 0, jnp.where(middle, gap_c, 0.0) + log1mexp(-e_m), -jnp.inf)
    mid_val = logaddexp(lap, trunc) - LOG_2 - log_d
    below = c_minus_mu >= 0
    mu_b = jnp.where(below, mu, 1.0)
    flat_below = -jnp.where(below, c_minus_mu, 0.0) + log1mexp(-mu_b) - log1mexp(-c) - LOG_2
    cm_a = jnp.where(below, -1.0, jnp.minimum(c_minus_mu, 0.0))
    flat_above = logaddexp(log_d, log1mexp(cm_a)) - LOG_2 - log_d
    out = jnp.where(middle, mid_val, jnp.where(below, flat_below, flat_above))
    return fail_closed(jnp.where(disjoint, 0.0, out), epsilon, c, mu, gap_mu, gap_c, c_minus_mu)


@float64_kernel
def log_delta_truncated_laplace_unit(epsilon: ArrayLike, c: ArrayLike, mu: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` for shape ``c = A / lambda``, ``mu = Delta / lambda``.

    The scale-free form of the exact profile (the three-case formula of the module
    docstring, derived from eq. (26) of flipped-huber-mechanism), with error
    :data:`ERROR` for the given floats ``c``, ``mu``; increasing in ``mu`` at fixed ``c``.

    Args:
      epsilon: ``epsilon >= 0``.
      c: shape ``A / lambda > 0``.
      mu: ``Delta / lambda > 0``.  All three broadcast.

    Returns:
      ``log delta(epsilon)``, broadcast over the inputs.
    """
    epsilon, c, mu = jnp.broadcast_arrays(*(jnp.asarray(x) for x in (epsilon, c, mu)))
    return _log_delta(epsilon, c, mu, epsilon - mu, epsilon - c, c - mu, mu >= 2.0 * c)


@float64_kernel
def log_delta_truncated_laplace(
    epsilon: ArrayLike, scale: ArrayLike, bound: ArrayLike, sensitivity: ArrayLike
) -> Array:
    r"""``log delta(epsilon)`` of the 1-D truncated Laplace mechanism (exact; error :data:`ERROR`).

    The three-case formula of the module docstring (eq. (26) of flipped-huber-mechanism
    evaluated for ``TL(lambda, A)``).

    ``epsilon - Delta / lambda`` and ``epsilon - A / lambda`` are formed with
    :func:`dpjax.accounting.laplace.pure_gap` and ``c - mu = (A - Delta) / lambda``
    with a compensated quotient: at the pure-DP kink ``epsilon = Delta / lambda`` the
    profile jumps from ``~e^{-c}`` to ``~(mu - epsilon) / 2``, so one ulp of ``lambda``
    decides it.

    Args:
      epsilon: ``epsilon >= 0``.
      scale: ``lambda > 0``.
      bound: truncation ``A > 0``.
      sensitivity: ``Delta > 0``.
    """
    epsilon, scale, bound, sens = jnp.broadcast_arrays(
        *(jnp.asarray(x) for x in (epsilon, scale, bound, sensitivity))
    )
    c_q, c_r = quotient(bound, scale)
    mu_q, mu_r = quotient(sens, scale)
    diff = bound - sens  # exact when A and Delta are within a factor 2 (Sterbenz)
    cm_q, cm_r = quotient(diff, scale)
    return _log_delta(
        epsilon,
        c_q + c_r,
        mu_q + mu_r,
        pure_gap(epsilon, scale, sens),
        pure_gap(epsilon, scale, bound),
        cm_q + cm_r,
        sens >= 2.0 * bound,
    )


@float64_kernel
def delta_truncated_laplace(
    epsilon: ArrayLike, scale: ArrayLike, bound: ArrayLike, sensitivity: ArrayLike
) -> Array:
    r"""``delta(epsilon)`` of the 1-D truncated Laplace mechanism, reported as a certified
    upper bound.

    ``exp(log delta + err)`` rounded up (:func:`dpjax.certificate.reported_delta` with
    :data:`ERROR`) of :func:`log_delta_truncated_laplace` (eq. (26) of
    flipped-huber-mechanism).

    Args:
      epsilon: ``epsilon >= 0``.
      scale: ``lambda > 0``.
      bound: truncation ``A > 0``.
      sensitivity: ``Delta > 0``.

    Returns:
      The reported ``delta(epsilon)``, broadcast over the inputs.
    """
    return reported_delta(log_delta_truncated_laplace(epsilon, scale, bound, sensitivity), ERROR)


@float64_kernel
def epsilon_truncated_laplace(
    delta: ArrayLike,
    scale: ArrayLike,
    bound: ArrayLike,
    sensitivity: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""Least ``epsilon`` with ``delta(epsilon) <= delta (1 - MARGIN)``; ``inf`` where the flat
    part ``P(T > A - Delta)`` already exceeds it (no epsilon suffices).

    The profile (module docstring; eq. (26) of flipped-huber-mechanism for ``TL(lambda,
    A)``) is constant from ``min(mu, 2c - mu)`` on, so the
    bisection (:func:`dpjax.numerics.least_feasible`) runs on

    .. math:: \epsilon \in [0,\ \min(\mu, 2c - \mu)]

    (the upper end rounded up, so that it lies on the flat part); ``0`` when even
    ``epsilon = 0`` is feasible.

    Args:
      delta: target ``delta``.
      scale: ``lambda > 0``.
      bound: truncation ``A > 0``.
      sensitivity: ``Delta > 0``.  All four broadcast.
      num_iterations: static number of halvings.

    Returns:
      The least certified ``epsilon`` (``inf`` where none is), broadcast over the inputs.
    """
    delta, scale, bound, sens = jnp.broadcast_arrays(
        *(jnp.asarray(x) for x in (delta, scale, bound, sensitivity))
    )
    c, mu = bound / scale, sens / scale
    level = log_target(jnp.where(delta > 0, delta, 1.0))
    kink = reported_epsilon(jnp.maximum(jnp.minimum(mu, 2.0 * c - mu), 0.0), EPSILON_ERROR)

    def ok(e):
        return log_delta_truncated_laplace(e, scale, bound, sens) <= level

    # 0 where even epsilon = 0 is feasible, inf where the upper end fails
    return jnp.where(delta > 0, least_feasible(ok, kink, num_iterations), jnp.inf)


@float64_kernel
def truncated_laplace_gdgk(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike):
    r"""GDGK 2020's parameters ``(lambda, A)`` for a target ``(epsilon, delta)``, ``epsilon > 0``.

    ``lambda = Delta / epsilon``, ``A = lambda log(1 + (e^epsilon - 1) / (2 delta))``;
    at these the exact profile equals ``delta`` at ``epsilon`` (on the boundary:
    :mod:`dpjax.calibration.truncated_laplace` returns certified parameters with margin).

    .. math:: \lambda = \frac{\Delta}{\epsilon}, \qquad
              A = \lambda \log\Big(1 + \frac{e^{\epsilon} - 1}{2\delta}\Big)

    (Geng, Ding, Guo & Kumar 2020; the comparator of Fig. 3a of flipped-huber-mechanism).

    Args:
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      sensitivity: ``Delta > 0``.

    Returns:
      ``(lambda, A)``, broadcast over the inputs.
    """
    epsilon, delta = jnp.asarray(epsilon), jnp.asarray(delta)
    lam = jnp.asarray(sensitivity) / epsilon
    log_ratio = log_expm1(epsilon) - LOG_2 - jnp.log(delta)  # log((e^eps - 1) / (2 delta))
    big = log_ratio > 0
    a = lam * jnp.where(
        big,
        log_ratio + jnp.log1p(jnp.exp(-jnp.where(big, log_ratio, 0.0))),
        jnp.log1p(jnp.exp(jnp.where(big, 0.0, log_ratio))),
    )
    return lam, a


@float64_kernel
def truncated_laplace_loss_atoms(
    scale: float, bound: float, sensitivity: float, bin_width: float, pessimistic: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    r"""The privacy loss of ``(T, T - Delta)``, ``T ~ TL(lambda, A)``, as atoms under ``P``.

    With ``u = t / lambda``, ``c = A / lambda``, ``mu = Delta / lambda`` and
    ``D = 1 - e^{-c}`` (density ``e^{-|u|} / (2D)`` on ``[-c, c]``), the loss
    ``L(t) = log g(t) / g(t - Delta)`` is (derived from eq. (26) of flipped-huber-mechanism,
    App. F, as the module docstring's profile):

    .. math::
       L = \begin{cases} +\infty, & u < \mu - c \quad(\text{mass } P_\infty = P(T > A - \Delta))\\
         \mu, & \mu - c \le u \le 0 \quad(\text{mass } (1 - e^{\mu - c}) / 2D)\\
         \mu - 2u, & \max(0, \mu - c) < u < \min(\mu, c)\\
         -\mu, & \mu \le u \le c \quad(\text{mass } (e^{-\mu} - e^{-c}) / 2D),\end{cases}

    ``P_inf = e^{-c}(e^\mu - 1) / 2D`` for ``mu <= c`` and ``1/2 + (1 - e^{c - mu}) / 2D``
    for ``c < mu < 2c`` (``1`` at ``mu >= 2c``: disjoint supports).  The middle part is cut
    at the grid points ``k h`` into pieces of mass
    ``(e^{-(mu - b) / 2} - e^{-(mu - a) / 2}) / 2D`` for the losses ``(a, b]``, each put at
    its largest loss ``b`` (``pessimistic``: the piece's pair is a post-processing of that
    atom's, whose ``Q``-mass ``p e^{-b}`` is at most the piece's) or at its least ``a``
    (a lower bound).  The atoms ``+-mu`` are exact; with
    :func:`dpjax.accounting.pld.atoms.from_atoms` (connect-the-dots) the only rounding is
    that of the pieces to the grid.  Symmetric noise: the reversed pair has the same loss
    law.  Host NumPy, concrete inputs.

    Args:
      scale: ``lambda > 0``.
      bound: ``A > 0``.
      sensitivity: the shift ``Delta > 0``.
      bin_width: the loss grid's spacing ``h > 0``.
      pessimistic: pieces at their largest loss (upper bound) or least (lower bound).

    Returns:
      ``(losses, probabilities)``: NumPy float64 arrays (``+inf`` losses included).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> losses, p = truncated_laplace_loss_atoms(1.0, 20.0, 1.0, 1e-3)
      >>> round(float(p.sum()), 12), float(losses.max()), float(losses.min())
      (1.0, inf, -1.0)
    """
    lam, a, d, h = (float(x) for x in (scale, bound, sensitivity, bin_width))
    if not all(math.isfinite(x) and x > 0 for x in (lam, a, d, h)):
        raise ValueError("scale, bound, sensitivity and bin_width must be finite and > 0")
    c, mu = a / lam, d / lam
    if d >= 2.0 * a:  # disjoint supports: every loss is +inf
        return np.array([np.inf]), np.array([1.0])
    two_d = 2.0 * -math.expm1(-c)
    if mu <= c:
        p_inf = math.exp(-c) * math.expm1(mu) / two_d
        top = -math.expm1(mu - c) / two_d
        bottom = math.exp(-mu) * -math.expm1(mu - c) / two_d
    else:
        p_inf = 0.5 + -math.expm1(c - mu) / two_d
        top = bottom = 0.0
    lo, hi = max(-mu, mu - 2.0 * c), min(mu, 2.0 * c - mu)  # the middle part's losses
    k = np.arange(math.floor(lo / h) + 1, math.ceil(hi / h))
    edges = np.concatenate([[lo], k * h, [hi]])
    edges = edges[np.concatenate([[True], np.diff(edges) > 0])]
    left, right = edges[:-1], edges[1:]
    # mass of u in ((mu - b) / 2, (mu - a) / 2): e^{-(mu - b)/2} (1 - e^{-(b - a)/2}) / 2D
    mass = np.exp(-0.5 * (mu - right)) * -np.expm1(-0.5 * (right - left)) / two_d
    losses = np.concatenate([[np.inf, mu, -mu], right if pessimistic else left])
    probs = np.concatenate([[p_inf, top, bottom], mass])
    # each mass carries a few ulp of rounding: an upper bound is padded up, a lower one down
    probs = probs * (1.0 + _MASS_PAD if pessimistic else 1.0 - _MASS_PAD)
    keep = probs > 0
    return losses[keep], probs[keep]


@float64_kernel
def poisson_truncated_laplace_atoms(
    scale: float, bound: float, sensitivity: float, sampling_rate: float, adjacency: str,
    bin_width: float,
) -> tuple[np.ndarray, np.ndarray]:
    r"""The privacy loss of one Poisson-subsampled truncated Laplace use, as atoms.

    From the pessimistic atoms ``(l_k, p_k)`` of the pair ``(P, Q) = (T, T - Delta)``
    (:func:`truncated_laplace_loss_atoms`; ``Q``-masses ``p_k e^{-l_k}``, ``P_inf`` at
    ``+infinity``, and the ``Q``-only mass ``Q_0 = 1 - sum_k p_k e^{-l_k}`` where ``P``
    vanishes) the subsampled pairs of Zhu, Dong & Wang 2022 (Thm 11; the pairs
    :func:`dpjax.accounting.pld.subsample.subsampled_pair` forms for full-support noise):

    .. math::
       \text{remove}: (q P + (1 - q) Q,\ Q):\quad L = \log(1 - q + q e^{l_k}),\ \text{mass }
         p_k (q + (1 - q) e^{-l_k});\ +\infty \text{ w.p. } q P_\infty;\
         \log(1 - q) \text{ w.p. } (1 - q) Q_0 \\
       \text{add}: (P,\ (1 - q) P + q Q):\quad L = -\log(1 - q + q e^{-l_k}),\ \text{mass }
         p_k;\ -\log(1 - q) \text{ w.p. } P_\infty .

    Sound because the atoms' pair is a post-processing *source* of the true pair: each
    piece of the middle part, put at its largest loss ``b`` with ``Q``-mass ``p e^{-b}``
    and the rest of its ``Q``-mass moved to the ``Q``-only atom, is mapped back onto the
    piece by a Markov kernel (``Q``'s density is at least ``e^{-b}`` times ``P``'s on it),
    and the same kernel maps the mixtures onto the mixtures, so each subsampled pair here
    dominates the true one.  Rounding: ``Q_0`` is taken from the masses with their padding
    removed (an upper bound), every mass is padded again by ``_MASS_PAD`` and every loss
    raised by ``1e-15 (1 + |log q| + |log(1 - q)| + |l_k|)`` (above its rounding), which
    can only raise the composed profile.  The bounded support gives no lower bound by this
    argument; there is none here.  Host NumPy, concrete inputs.

    Args:
      scale: ``lambda > 0``.
      bound: ``A > 0``.
      sensitivity: the shift ``Delta > 0``.
      sampling_rate: ``q`` in ``(0, 1)``.
      adjacency: ``"remove"`` or ``"add"``.
      bin_width: the loss grid's spacing ``h > 0`` (that of the base atoms).

    Returns:
      ``(losses, probabilities)``: NumPy float64 arrays (``+inf`` losses included under
      ``remove``).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> losses, p = poisson_truncated_laplace_atoms(1.0, 20.0, 1.0, 0.1, "add", 1e-3)
      >>> round(float(p.sum()), 9), round(float(losses.max()), 6)  # -log(1 - q) = 0.105361
      (1.0, 0.105361)
    """
    q = float(sampling_rate)
    if not 0.0 < q < 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1), got {sampling_rate!r}")
    if adjacency not in ("remove", "add"):
        raise ValueError(f"adjacency must be 'remove' or 'add', got {adjacency!r}")
    losses, probs = truncated_laplace_loss_atoms(scale, bound, sensitivity, bin_width, True)
    finite = np.isfinite(losses)
    lk, pk = losses[finite], probs[finite]
    p_inf = float(probs[~finite].sum())
    lq, l1q = math.log(q), math.log1p(-q)
    nudge = 1e-15 * (1.0 + abs(lq) + abs(l1q) + np.abs(lk))
    pad = 1.0 + _MASS_PAD
    if adjacency == "add":
        mixed = -np.logaddexp(l1q, lq - lk) + nudge
        out_l = np.concatenate([mixed, [-l1q * (1.0 + 1e-15)]])
        out_p = np.concatenate([pk, [p_inf * pad]])
    else:
        q_mass = pk * np.exp(-lk)
        q_only = max(0.0, 1.0 - float(np.sum(q_mass)) / pad**2)
        mixed = np.logaddexp(l1q, lq + lk) + nudge
        out_l = np.concatenate([mixed, [np.inf, l1q * (1.0 - 1e-15)]])
        out_p = np.concatenate([(q * pk + (1.0 - q) * q_mass) * pad,
                                [q * p_inf * pad, (1.0 - q) * q_only * pad]])
    keep = out_p > 0
    return out_l[keep], out_p[keep]
