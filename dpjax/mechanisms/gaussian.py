r"""The Gaussian mechanism: noise ``N(0, sigma^2)`` per coordinate, l2 sensitivity.

Exact in any dimension (Balle & Wang 2018).  ``compositions = T`` without
subsampling is exact too: the T-fold composition is a Gaussian mechanism with
``Delta_2 -> sqrt(T) Delta_2``; so is ``sampling_rate = 1`` (Poisson sampling
that keeps every record).  With Poisson subsampling (``0 < q < 1``, DP-SGD) the
``T``-fold composition of the subsampled pair (add and remove adjacency, the
worse reported) is accounted by the PLD engine (:mod:`dpjax.accounting.pld`):
pessimistic, so profiles, epsilons and calibrations stay certified; the
reported value is the minimum with the RDP bound of the exact moments at integer and
fractional orders (:func:`~dpjax.accounting.rdp.subsampled_gaussian.gaussian_moment_bounds`), also
certified, which is what answers below the grid's round-off floor (tiny ``delta``) and
when the engine's grid is capped (huge ``T``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from dpjax._batching import call_padded
from dpjax.accounting import bracket
from dpjax.accounting.gaussian import ERROR, delta_gaussian, epsilon_gaussian, log_delta_gaussian
from dpjax.accounting.pld import engine as pld_engine
from dpjax.accounting.rdp.subsampled_gaussian import (
    gaussian_rdp_epsilon,
    gaussian_rdp_log_delta,
    gaussian_rdp_sigma,
)
from dpjax.calibration.gaussian import calibrate_sigma
from dpjax.calibration.result import Calibration
from dpjax.calibration.scale_search import calibrate_scale
from dpjax.certificate import MARGIN, require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._composition import composed_sensitivity
from dpjax.mechanisms._spec import About, Mechanism, Query, calibration
from dpjax.noise.gaussian import Gaussian
from dpjax.numerics import bisect_bracket

NAME = "gaussian"
# the façade is the caller, so it decides to jit (one compile per padded shape)
_delta = jax.jit(delta_gaussian)
_epsilon = jax.jit(epsilon_gaussian)
#: Loss-grid bin width of the PLD engine for subsampled accounting (DP-SGD).
BIN_WIDTH = 1e-4


def _effective_l2(query: Query) -> tuple[float, tuple[str, ...]]:
    """``l2 * sqrt(T)`` rounded up (the ``T``-fold composition is one Gaussian with it)."""
    l2, notes = query.sensitivity.resolve("l2")
    if query.sampling_rate is not None:
        notes += ("sampling_rate = 1 keeps every record: plain composition (exact)",)
    if query.compositions > 1:
        notes += (f"{query.compositions}-fold composition = one Gaussian with l2 * sqrt(T)",)
        return composed_sensitivity(l2, query.compositions), notes
    return l2, notes


def _subsampled(query: Query) -> bool:
    """Poisson subsampling with ``0 < q < 1`` (``q = 1`` is plain composition: closed form)."""
    return query.sampling_rate is not None and query.sampling_rate < 1.0


def _rdp_log_delta(sigma, epsilon, query: Query, l2: float) -> np.ndarray:
    """Certified ``log delta(epsilon)`` of ``T`` subsampled uses from the exact integer-order
    moments (Chernoff / RDP conversion of :mod:`dpjax.accounting.pld.tail_bounds`)."""
    return gaussian_rdp_log_delta(sigma, query.sampling_rate, query.compositions, epsilon, l2)


def _engine_calibrate(epsilon, delta, query: Query):
    """Least sigma after T Poisson-subsampled uses: PLD engine (certified), bracketed by the
    non-subsampled closed form (subsampling never hurts) and the RDP sigma (certified by
    the exact moments: the answer where the engine cannot certify a smaller one)."""
    l2, notes = query.sensitivity.resolve("l2")
    l2_total = l2 * math.sqrt(float(query.compositions))
    full, _, ok_full = calibrate_sigma(epsilon, delta, l2_total)
    require_certified(NAME, ok_full, epsilon, delta, np.asarray(delta))
    guess = gaussian_rdp_sigma(epsilon, delta, query.sampling_rate, query.compositions, l2)
    rdp_delta = np.exp(np.minimum(_rdp_log_delta(guess, epsilon, query, l2), 0.0))
    rdp_ok = rdp_delta <= delta * (1.0 - MARGIN)
    upper = 1.02 * np.asarray(full)
    res = calibrate_scale(
        Gaussian.from_scale, 0.0, l2, epsilon, delta, query.compositions,
        query.sampling_rate, BIN_WIDTH, upper=np.minimum(upper, 1.02 * guess), lower=0.7 * guess,
        fallback_upper=upper,
    )
    engine_ok = np.asarray(res.certified)
    use_rdp = rdp_ok & (~engine_ok | (guess < res.scale))
    sigma = np.where(use_rdp, guess, res.scale)
    delta_at = np.where(use_rdp, rdp_delta, res.delta_at)
    require_certified(NAME, engine_ok | rdp_ok, epsilon, delta, delta_at)
    notes += (
        f"{query.compositions} Poisson-subsampled uses (q = {query.sampling_rate}), add and remove "
        "adjacency, worse reported: PLD engine (pessimistic connect-the-dots, "
        f"bin width {BIN_WIDTH})" + (", or the RDP bound where smaller" if np.any(use_rdp) else ""),
    )
    return sigma, delta_at, l2, notes


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least ``sigma`` with the exact profile ``delta(epsilon) <= delta``, certified.

    .. math:: \delta(\epsilon) = Q\!\left(\frac{\epsilon}{\mu} - \frac{\mu}{2}\right)
              - e^{\epsilon} Q\!\left(\frac{\epsilon}{\mu} + \frac{\mu}{2}\right),
              \qquad \mu = \frac{\Delta_2\sqrt{T}}{\sigma}

    (eq. (29) of flipped-huber-mechanism; Balle & Wang 2018, Thm 8).  With Poisson
    subsampling the PLD engine's ``T``-fold composition (or the RDP bound, where smaller).

    Args:
      epsilon: target epsilons (broadcast with ``delta``; one calibration each).
      delta: target deltas, ``> 0``.
      query: ``l2`` (stated or derived), ``T`` uses, optional rate ``q``.
    """
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "gaussian: delta = 0 is infeasible (every Gaussian mechanism has delta(eps) > 0)"
        )
    if _subsampled(query):
        sigma, delta_at, l2, notes = _engine_calibrate(epsilon, delta, query)
        variance = sigma**2
    else:
        l2, notes = _effective_l2(query)
        sigma, delta_at, ok = calibrate_sigma(epsilon, delta, l2)
        require_certified(NAME, ok, epsilon, delta, delta_at)
        with np.errstate(over="ignore"):  # sigma ~ 1e299 at eps = 0, delta = 1e-300
            variance = sigma**2
        l2 = query.sensitivity.resolve("l2")[0]
    return calibration(
        NAME, query, params={"sigma": sigma}, variance=variance, epsilon=epsilon, delta=delta,
        delta_at_params=delta_at, sensitivity={"l2": l2}, notes=notes,
    )


def _engine_sigma(params: dict, query: Query) -> tuple[float, float]:
    l2, _ = query.sensitivity.resolve("l2")
    sigma = np.asarray(params["sigma"], np.float64)
    if sigma.ndim:
        raise ValueError("gaussian: with sampling_rate, give one sigma at a time")
    return float(sigma), l2


def _engine_profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    """``delta(epsilon)`` of T subsampled uses: min of the engine and the RDP bound."""
    sigma, l2 = _engine_sigma(params, query)
    engine = pld_engine.profile(
        Gaussian.from_scale, sigma, 0.0, l2, epsilon, query.compositions,
        query.sampling_rate, BIN_WIDTH,
    )
    return np.minimum(engine, np.exp(np.minimum(_rdp_log_delta(sigma, epsilon, query, l2), 0.0)))


def _engine_epsilon(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    """Least certified epsilon of T subsampled uses: min of the engine and the RDP bound
    (the RDP epsilon at ``delta (1 - MARGIN)``, like every inverse profile)."""
    sigma, l2 = _engine_sigma(params, query)
    engine = pld_engine.epsilon(
        Gaussian.from_scale, sigma, 0.0, l2, delta, query.compositions,
        query.sampling_rate, BIN_WIDTH,
    )
    rdp = gaussian_rdp_epsilon(sigma, query.sampling_rate, query.compositions, delta, l2)
    return np.minimum(engine, rdp)


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    r"""``delta(epsilon)`` of ``N(0, sigma^2)`` noise: eq. (29) at ``mu = Delta_2 sqrt(T) / sigma``.

    Exact without subsampling (and at ``q = 1``); with ``0 < q < 1`` the certified minimum
    of the PLD engine and the RDP bound.

    Args:
      params: ``{"sigma": ...}`` (validated).
      epsilon: the epsilons to evaluate at.
      query: ``l2``, ``T`` uses, optional rate ``q``.
    """
    if _subsampled(query):
        return _engine_profile(params, epsilon, query)
    l2, _ = _effective_l2(query)
    return call_padded(_delta, epsilon, params["sigma"], l2)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    r"""Least certified ``epsilon`` with ``delta(epsilon) <= delta`` (inverse of eq. (29)).

    Args:
      params: as for :func:`profile`; query likewise.
      delta: the deltas to invert at.
    """
    if _subsampled(query):
        return _engine_epsilon(params, delta, query)
    l2, _ = _effective_l2(query)
    return call_padded(_epsilon, delta, params["sigma"], l2)


@jax.jit
def _closed_form_lower(delta, sigma, l2, upper):
    """Largest ``eps`` in ``[0, upper]`` (to ``2^-64 upper``) whose certified *lower* bound on
    ``log delta(eps)`` (eq. (29) minus its error constant) still exceeds ``log delta``."""

    def above(e):
        log_d = log_delta_gaussian(e, sigma, l2)
        return log_d - ERROR * (1.0 + jnp.abs(log_d)) > jnp.log(delta)

    good = bisect_bracket(above, jnp.zeros_like(upper), upper, 64).good
    return jnp.where(above(jnp.zeros_like(upper)), good, 0.0)


def epsilon_lower(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    r"""Certified lower end of ``epsilon(delta)`` (the bracket's lower end).

    .. math:: \underline\epsilon = \max\{\epsilon : \log\hat\delta(\epsilon)
              - c\,(1 + |\log\hat\delta|) > \log\delta\}

    Without subsampling by bisection on the closed form (eq. (29) of
    flipped-huber-mechanism, error constant ``c`` of :mod:`dpjax.accounting.gaussian`: a
    lower bound on ``delta`` at every point, so the result is below the true epsilon); with
    Poisson subsampling the optimistic ``T``-fold PLD of
    :func:`dpjax.accounting.bracket.epsilon_lower` (no tail bound: 0 where the grid
    cannot certify anything).

    Args:
      params: ``{"sigma": ...}`` (validated); query likewise.
      delta: the deltas to bracket at.
    """
    if _subsampled(query):
        sigma, l2 = _engine_sigma(params, query)
        return bracket.epsilon_lower(
            Gaussian.from_scale, sigma, 0.0, l2, delta, query.compositions,
            query.sampling_rate, BIN_WIDTH,
        )
    l2, _ = _effective_l2(query)
    upper = call_padded(_epsilon, delta, params["sigma"], l2)
    dl, sigma, up = np.broadcast_arrays(delta, np.asarray(params["sigma"], np.float64), upper)
    up = np.where(np.isfinite(up), up, np.finfo(np.float64).max / 4)
    return np.asarray(_closed_form_lower(dl, sigma, l2, up), np.float64)


SUMMARY = "Gaussian N(0, sigma^2) per coordinate; exact profile (Balle & Wang 2018), l2"
ABOUT = About(
    "inid-noise-laplace-beats-gaussian", ("l2",),
    "any dim (l2); T uses exact; Poisson subsampling (PLD engine, min with RDP)",
)
MECHANISM = Mechanism(
    NAME, SUMMARY, calibrate, profile, epsilon_for_delta, noise=Gaussian, about=ABOUT,
    epsilon_lower=epsilon_lower,
)
