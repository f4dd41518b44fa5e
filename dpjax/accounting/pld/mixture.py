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

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from dpjax._batching import device_array, pad, padded_size
from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.compose import floored_size, max_grid_points
from dpjax.accounting.pld.discretise import TAIL, MonotonePair, discretise_pair
from dpjax.accounting.pld.underflow import charge_underflow
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.privacy_loss import INVERSE_ITERATIONS, monotone_inverse, tail_point
from dpjax.numerics import bisect_bracket, bisect_monotone, float64_kernel

__all__ = [
    "check_shifts",
    "mixture_of_gaussians_plds",
    "replace_one_poisson_pld",
    "shift_mixture_pair",
]


def _log_mix(fn, shifts, log_w):
    """``t -> log sum_i w_i f(t - a_i)`` (one stacked call of ``f``, any shape of ``t``)."""

    def mixed(t):
        t = jnp.asarray(t)
        a = shifts.reshape((-1,) + (1,) * t.ndim)
        return jax.scipy.special.logsumexp(log_w.reshape(a.shape) + fn(t - a), axis=0)

    return mixed


@float64_kernel
def shift_mixture_pair(
    noise, p_shifts, p_log_weights, q_shifts, q_log_weights, tail=TAIL
) -> MonotonePair:
    r"""The :class:`~dpjax.accounting.pld.MonotonePair` of two shift mixtures (module docstring).

    Traceable: shifts and log-weights are arrays (the caller checks ``min a >= max b``,
    :func:`check_shifts`).

    Args:
      noise: a symmetric log-concave family of :mod:`dpjax.noise` (``logpdf``, ``log_sf``).
      p_shifts, p_log_weights: the shifts ``a_i`` and log-weights ``log w_i`` of ``P``.
      q_shifts, q_log_weights: those of ``Q``.
      tail: the noise mass left beyond the pair's ``t`` range on each side (default
        :data:`.discretise.TAIL`; may be traced).

    Returns:
      The pair.
    """
    a, lw = jnp.asarray(p_shifts), jnp.asarray(p_log_weights)
    b, lv = jnp.asarray(q_shifts), jnp.asarray(q_log_weights)

    def log_cdf(t):
        return noise.log_sf(-t)

    log_p, log_q = _log_mix(noise.logpdf, a, lw), _log_mix(noise.logpdf, b, lv)

    def loss(t):
        return log_p(t) - log_q(t)

    spread = jnp.maximum(jnp.max(jnp.abs(a)), jnp.max(jnp.abs(b)))
    edge = tail_point(noise, tail)
    t_lo, t_hi = -edge - spread, edge + spread
    return MonotonePair(
        log_sf_p=_log_mix(noise.log_sf, a, lw),
        log_cdf_p=_log_mix(log_cdf, a, lw),
        log_sf_q=_log_mix(noise.log_sf, b, lv),
        log_cdf_q=_log_mix(log_cdf, b, lv),
        loss=loss,
        loss_inverse=lambda eps: mixture_loss_inverse(loss, eps, t_lo, t_hi),
        t_lo=t_lo,
        t_hi=t_hi,
    )


#: Every how many sorted levels :func:`mixture_loss_inverse` bisects the whole bracket.
_STRIDE = 32
#: Most safeguarded Newton steps of :func:`mixture_loss_inverse` between those.
_NEWTON = 16
#: Half-width, in ``u max(|t_lo|, |t_hi|, 1)``, of the bracket that certifies a Newton root.
_BAND = 64.0
#: Halvings of that bracket.
_POLISH = 8


@float64_kernel
def mixture_loss_inverse(loss, epsilon, t_lo, t_hi):
    r"""``sup{t in [t_lo, t_hi] : loss(t) <= epsilon}`` of a non-decreasing ``loss``, fast.

    .. math:: t(\epsilon) = \sup\{t \in [t_\text{lo}, t_\text{hi}] : L(t) \le \epsilon\}

    The answer of :func:`dpjax.noise.privacy_loss.monotone_inverse` (whose bisection halves
    the whole bracket ``INVERSE_ITERATIONS = 110`` times, one evaluation of the mixture's
    loss per halving and level) to within ``w = 2 d / 2^POLISH`` (below) in about a fifth
    of the evaluations.  The levels are sorted and every
    :data:`_STRIDE`-th is bisected in the whole bracket; a level in between starts from
    the chord of those two and takes Newton steps (``L'`` by ``jax.jvp``), safeguarded by
    the bracket ``[good_j, bad_{j+1}]`` the two bisections leave, which they update (a step
    far outside it bisects, one just outside is clipped to it), until every step is below a
    quarter of the band ``d`` below (at most :data:`_NEWTON`).  The root ``x``
    found is then *checked*: ``L(x - d) <= epsilon < L(x + d)``, ``d = BAND u (max(|t_lo|,
    |t_hi|, 1) + (|epsilon| + 1) / L'(x))`` (the bracket's ulps and the loss's rounding
    over its slope), and that bracket halved :data:`_POLISH` times, the end where
    ``L(t) <= epsilon`` returned.  If any level fails the check, the whole grid is bisected as
    before (one ``lax.cond``).  End cases as the bisection: ``t_hi`` where
    ``L(t_hi) <= epsilon``, ``t_lo`` where ``L(t_lo) > epsilon``.  (An inverse ``w`` below
    the exact sup changes the connect-the-dots ``delta`` by ``O(p L' w^2)``, far below
    its rounding; :func:`~dpjax.accounting.pld.discretise.discretise_pair`.)

    Args:
      loss: elementwise non-decreasing ``t -> L(t)``, differentiable (traceable).
      epsilon: loss levels (any shape).
      t_lo, t_hi: the bracket (scalars).

    Returns:
      ``t(epsilon)``, shaped like ``epsilon``.
    """
    eps = jnp.asarray(epsilon, jnp.float64)
    flat = eps.reshape(-1)
    n = flat.shape[0]
    lo = jnp.asarray(t_lo, jnp.float64)
    hi = jnp.asarray(t_hi, jnp.float64)
    order = jnp.argsort(flat)
    levels = flat[order]
    # every _STRIDE-th sorted level (and the last) in the whole bracket
    picks = np.minimum(np.arange(0, n + _STRIDE, _STRIDE), n - 1)
    coarse = bisect_monotone(
        lambda t: loss(t) <= levels[picks], jnp.full(picks.shape, lo), jnp.full(picks.shape, hi),
        num_iterations=INVERSE_ITERATIONS,
    )
    j = np.arange(n) // _STRIDE
    t0, t1, e0, e1 = coarse.good[j], coarse.good[j + 1], levels[picks[j]], levels[picks[j + 1]]
    frac = jnp.where(e1 > e0, (levels - e0) / jnp.where(e1 > e0, e1 - e0, 1.0), 0.0)
    x = jnp.clip(t0 + frac * (t1 - t0), lo, hi)

    scale = jnp.maximum(jnp.maximum(jnp.abs(lo), jnp.abs(hi)), 1.0)

    def band(slope):
        # BAND ulps of the bracket's scale, and of the loss's rounding over its slope L'
        noise = (jnp.abs(levels) + 1.0) / jnp.where(slope > 0, slope, jnp.inf)
        return _BAND * 2.0**-53 * (scale + noise)

    def newton(c):
        i, x, g, b, _, _ = c
        f, df = jax.jvp(loss, (x,), (jnp.ones_like(x),))
        on_good = f <= levels
        g, b = jnp.where(on_good, jnp.maximum(g, x), g), jnp.where(on_good, b, jnp.minimum(b, x))
        step = x - (f - levels) / df
        # a step within rounding of the bracket is clipped to it; one far outside bisects
        width = b - g
        inside = jnp.isfinite(step) & (step >= g - width) & (step <= b + width)
        new = jnp.where(inside, jnp.clip(step, g, b), 0.5 * (g + b))
        return i + 1, new, g, b, df, jnp.all(jnp.abs(new - x) <= 0.25 * band(df))

    # the bracket the coarse bisections leave (L(good_j) <= eps_j <= eps <= eps_{j+1} <
    # L(bad_{j+1})), so that a step leaving it bisects a short interval
    start = (0, x, t0, coarse.bad[j + 1], jnp.ones_like(x), False)
    _, x, _, _, slope, _ = jax.lax.while_loop(
        lambda c: (c[0] < _NEWTON) & ~c[5], newton, start
    )
    d = band(slope)
    g, b = jnp.maximum(x - d, lo), jnp.minimum(x + d, hi)
    checked = (loss(g) <= levels) & (loss(b) > levels)
    g = bisect_bracket(lambda t: loss(t) <= levels, g, b, _POLISH).good
    above, below = loss(hi) <= levels, loss(lo) > levels
    out = jnp.where(above, hi, jnp.where(below, lo, g))
    out = jax.lax.cond(
        jnp.all(checked | above | below),
        lambda: out,
        lambda: monotone_inverse(loss, levels, lo, hi),
    )
    return jnp.zeros_like(flat).at[order].set(out).reshape(eps.shape)


def check_shifts(p_shifts, q_shifts) -> None:
    """``ValueError`` unless ``min(p_shifts) >= max(q_shifts)`` (monotone loss)."""
    if min(float(x) for x in p_shifts) < max(float(x) for x in q_shifts):
        raise ValueError("a shift-mixture pair needs min(p_shifts) >= max(q_shifts)")


@jax.jit
def _loss_range(noise, a, lw, b, lv, tail):
    pair = shift_mixture_pair(noise, a, lw, b, lv, tail)
    return pair.loss(pair.t_lo), pair.loss(pair.t_hi)


@functools.partial(jax.jit, static_argnames=("size", "pessimistic"))
def _discretise(noise, a, lw, b, lv, h, lower, size, pessimistic, tail):
    pair = shift_mixture_pair(noise, a, lw, b, lv, tail)
    return discretise_pair(pair, h, lower, size, pessimistic)


def _mixture_pld(noise, p_shifts, p_weights, q_shifts, q_weights, h, pessimistic, tail) -> PLD:
    """Jitted connect-the-dots of a shift-mixture pair on a grid of the size ladder, at least
    :data:`.compose.MIN_GRID_POINTS` long (:func:`.compose.floored_size`: few compiles; the
    tail level is data), charged what a deep grid may lose to underflow (:mod:`.underflow`)."""
    check_shifts(p_shifts, q_shifts)
    # both sides padded to one power-of-two count of components (at least 2): the padding
    # repeats a shift with weight 0 (log-weight -inf adds an exact 0 to each sum), so
    # remove, add and replace-one pairs of up to that many components share one program
    size = padded_size(max(len(p_shifts), len(q_shifts)), 2)
    with np.errstate(divide="ignore"):
        args = [
            device_array(pad(np.asarray(x, np.float64), size, fill))
            for x, fill in (
                (p_shifts, p_shifts[0]), (np.log(p_weights), -np.inf),
                (q_shifts, q_shifts[0]), (np.log(q_weights), -np.inf),
            )
        ]
    level = jnp.asarray(tail, jnp.float64)
    lo, hi = (float(v) for v in _loss_range(noise, *args, level))
    lower = math.floor(lo / h) - 1  # OverflowError for an infinite range
    points = math.ceil(hi / h) + 1 - lower + 1
    if points > max_grid_points():
        raise OverflowError(f"a shift-mixture grid of {points} points exceeds the engine's cap")
    size = floored_size(points)  # the ladder, at least MIN_GRID_POINTS (exact padding)
    pld = _discretise(noise, *args, jnp.asarray(h, jnp.float64), lower, size, pessimistic, level)
    return charge_underflow(pld, tail)


@float64_kernel
def mixture_of_gaussians_plds(
    standard_deviation, sensitivities, sampling_probs, bin_width=1e-4, pessimistic=True,
    tail=TAIL,
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
      tail: the noise mass left beyond the pair's range (default :data:`.discretise.TAIL`;
        deeper for a composed ``delta`` far below ``1e-40``).

    Returns:
      One PLD per adjacency.
    """
    noise = Gaussian(jnp.asarray(standard_deviation, jnp.float64))
    c = [float(x) for x in sensitivities]
    w = [float(x) for x in sampling_probs]
    h = float(bin_width)
    return {
        "remove": _mixture_pld(noise, c, w, [0.0], [1.0], h, pessimistic, tail),
        "add": _mixture_pld(noise, [0.0], [1.0], [-x for x in c], w, h, pessimistic, tail),
    }


@float64_kernel
def replace_one_poisson_pld(
    noise, sampling_rate, sensitivity=1.0, bin_width=1e-4, pessimistic=True, tail=TAIL
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
      tail: as in :func:`mixture_of_gaussians_plds`.

    Returns:
      The PLD (symmetric pair: both orders of the neighbours).
    """
    q, d = float(sampling_rate), float(sensitivity)
    w = [1.0 - q, q]
    return _mixture_pld(noise, [0.0, d], w, [0.0, -d], w, float(bin_width), pessimistic, tail)
