r"""Pairs of shift mixtures of one symmetric log-concave noise, and their PLDs.

For a noise ``T`` with log-concave density ``g`` and weights ``w, v`` the pair

.. math:: P = \sum_i w_i\,(T + a_i),\qquad Q = \sum_j v_j\,(T + b_j),\qquad
          L(t) = \log \sum_i w_i g(t - a_i) - \log \sum_j v_j g(t - b_j)

has a loss non-decreasing in ``t`` whenever ``min_i a_i >= max_j b_j``: ``L'(t)`` is a
posterior average of ``psi(t - a_i) - psi(t - b_j) >= 0`` with ``psi = (log g)'``
non-increasing.  So the connect-the-dots constructor applies (inverse by bisection).  Two
accountings need it:

* the mixture-of-Gaussians mechanism (dp_accounting ``MixtureOfGaussiansDpEvent``;
  Choquette-Choo et al. 2023): remove ``(sum_i p_i N(c_i), N(0))``, add ``(N(0),
  sum_i p_i N(-c_i))`` (reflected), ``c_i >= 0``;
* Poisson subsampling under replace-one adjacency (Zhu, Dong & Wang 2022, Sec. 5;
  dp_accounting ``AdjacencyType.REPLACE``): ``((1 - q) T + q (T + Delta), (1 - q) T +
  q (T - Delta))``, symmetric.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.discretise import (
    MonotonePair,
    _bisect_inverse,
    _upper_tail_point,
    from_pair,
)
from dpjax.numerics import float64_kernel

__all__ = ["mixture_of_gaussians_plds", "replace_one_poisson_pld", "shift_mixture_pair"]


def _log_mix(fn, shifts, log_w):
    return lambda t: _logsumexp([lw + fn(t - a) for a, lw in zip(shifts, log_w, strict=True)])


def _logsumexp(terms):
    x = jnp.stack(jnp.broadcast_arrays(*terms))
    m = jnp.max(x, axis=0)
    safe = jnp.where(jnp.isfinite(m), m, 0.0)
    return safe + jnp.log(jnp.sum(jnp.exp(x - safe), axis=0))


@float64_kernel
def shift_mixture_pair(noise, p_shifts, p_weights, q_shifts, q_weights) -> MonotonePair:
    r"""The :class:`~dpjax.accounting.pld.MonotonePair` of two shift mixtures (module docstring).

    Args:
      noise: a symmetric log-concave family of :mod:`dpjax.noise` (``logpdf``, ``log_sf``).
      p_shifts, p_weights: the shifts ``a_i`` and weights ``w_i`` (summing to 1) of ``P``.
      q_shifts, q_weights: those of ``Q``; ``min a >= max b`` (checked).

    Returns:
      The pair (host function: concrete shifts and weights).

    Raises:
      ValueError: ``min a < max b`` (the loss would not be monotone).
    """
    a = [float(x) for x in p_shifts]
    b = [float(x) for x in q_shifts]
    if min(a) < max(b):
        raise ValueError("shift_mixture_pair needs min(p_shifts) >= max(q_shifts)")
    with np.errstate(divide="ignore"):
        lw = [float(np.log(w)) for w in p_weights]
        lv = [float(np.log(v)) for v in q_weights]

    def log_sf(t):
        return noise.log_sf(t)

    def log_cdf(t):
        return noise.log_sf(-t)

    log_p, log_q = _log_mix(noise.logpdf, a, lw), _log_mix(noise.logpdf, b, lv)

    def loss(t):
        return log_p(t) - log_q(t)

    spread = max(abs(x) for x in a + b)
    tail = _upper_tail_point(noise.log_sf, jnp.sqrt(jnp.asarray(noise.variance, jnp.float64)))
    t_lo, t_hi = -tail - spread, tail + spread
    return MonotonePair(
        log_sf_p=_log_mix(log_sf, a, lw),
        log_cdf_p=_log_mix(log_cdf, a, lw),
        log_sf_q=_log_mix(log_sf, b, lv),
        log_cdf_q=_log_mix(log_cdf, b, lv),
        loss=loss,
        loss_inverse=_bisect_inverse(loss, t_lo, t_hi),
        t_lo=t_lo,
        t_hi=t_hi,
    )


@float64_kernel
def mixture_of_gaussians_plds(
    standard_deviation, sensitivities, sampling_probs, bin_width=1e-4, pessimistic=True
) -> dict[str, PLD]:
    r"""``{"remove": PLD, "add": PLD}`` of ``N(0, sigma^2)`` vs ``sum_i p_i N(c_i, sigma^2)``.

    .. math:: L_{\text{remove}}(t) = \log \sum_i p_i\, e^{(2 t c_i - c_i^2) / (2\sigma^2)}

    (dp_accounting ``from_mixture_gaussian_mechanism``; module docstring).

    Args:
      standard_deviation: ``sigma > 0``.
      sensitivities: ``c_i >= 0``.
      sampling_probs: ``p_i`` (summing to 1).
      bin_width: grid spacing.
      pessimistic: upper (default) or lower discretisation.

    Returns:
      One PLD per adjacency.
    """
    from dpjax.noise.gaussian import Gaussian

    noise = Gaussian(jnp.asarray(standard_deviation, jnp.float64))
    c = [float(x) for x in sensitivities]
    w = [float(x) for x in sampling_probs]
    remove = shift_mixture_pair(noise, c, w, [0.0], [1.0])
    add = shift_mixture_pair(noise, [0.0], [1.0], [-x for x in c], w)
    return {
        "remove": from_pair(remove, bin_width, pessimistic),
        "add": from_pair(add, bin_width, pessimistic),
    }


@float64_kernel
def replace_one_poisson_pld(
    noise, sampling_rate, sensitivity=1.0, bin_width=1e-4, pessimistic=True
) -> PLD:
    r"""PLD of one Poisson-subsampled use of additive ``noise`` under replace-one adjacency.

    .. math:: P = (1 - q)\,T + q\,(T + \Delta),\qquad Q = (1 - q)\,T + q\,(T - \Delta)

    (Zhu, Dong & Wang 2022; dp_accounting's ``REPLACE`` adjacency of a subsampled additive
    mechanism, whose ``q = 1`` case is the shift ``2 Delta``).

    Args:
      noise: a symmetric log-concave family of :mod:`dpjax.noise`.
      sampling_rate: ``q`` in ``(0, 1)``.
      sensitivity: ``Delta > 0`` (the norm bound of one record's contribution).
      bin_width: grid spacing.
      pessimistic: upper (default) or lower discretisation.

    Returns:
      The PLD (symmetric pair: both orders of the neighbours).
    """
    q, d = float(sampling_rate), float(sensitivity)
    pair = shift_mixture_pair(noise, [0.0, d], [1.0 - q, q], [0.0, -d], [1.0 - q, q])
    return from_pair(pair, bin_width, pessimistic)
