r"""The Gaussian mechanism: noise ``N(0, sigma^2)`` per coordinate, l2 sensitivity.

Exact in any dimension (Balle & Wang 2018).  ``compositions = T`` without
subsampling is exact too: the T-fold composition is a Gaussian mechanism with
``Delta_2 -> sqrt(T) Delta_2``.  With Poisson subsampling (``sampling_rate = q``,
DP-SGD) the ``T``-fold composition of the subsampled pair (add and remove
adjacency, the worse reported) is accounted by the PLD engine
(:mod:`dpjax.accounting.pld`): pessimistic, so profiles, epsilons and
calibrations stay certified.
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax._batching import call_padded
from dpjax.accounting.gaussian import delta_gaussian, epsilon_gaussian
from dpjax.accounting.pld import accountant as pld_accountant
from dpjax.accounting.pld.subsample import gaussian_rdp_sigma
from dpjax.calibrate._certify import require_certified
from dpjax.calibrate._result import Calibration
from dpjax.calibrate.gaussian import sigma_gaussian
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import Mechanism, Query, composed_sensitivity, positive_params
from dpjax.noise.gaussian import Gaussian

NAME = "gaussian"
# the façade is the caller, so it decides to jit (one compile per padded shape)
_delta = jax.jit(delta_gaussian)
_epsilon = jax.jit(epsilon_gaussian)
#: Loss-grid bin width of the PLD engine for subsampled accounting (DP-SGD).
BIN_WIDTH = 1e-4


def _effective_l2(query: Query) -> tuple[float, tuple[str, ...]]:
    """``l2 * sqrt(T)`` rounded up (the ``T``-fold composition is one Gaussian with it)."""
    l2, notes = query.sensitivity.resolve("l2")
    if query.compositions > 1:
        notes += (f"{query.compositions}-fold composition = one Gaussian with l2 * sqrt(T)",)
        return composed_sensitivity(l2, query.compositions), notes
    return l2, notes


def _subsampled(query: Query) -> bool:
    return query.sampling_rate is not None


def _engine_calibrate(epsilon, delta, query: Query):
    """Least sigma after T Poisson-subsampled uses: PLD engine (certified), bracketed by the
    non-subsampled closed form (subsampling never hurts)."""
    l2, notes = query.sensitivity.resolve("l2")
    l2_total = l2 * np.sqrt(query.compositions)
    full, _, ok_full, _ = call_padded(sigma_gaussian, epsilon, delta, l2_total)
    require_certified(NAME, ok_full, epsilon, delta, np.asarray(delta))
    guess = gaussian_rdp_sigma(epsilon, delta, query.sampling_rate, query.compositions, l2)
    upper = 1.02 * np.asarray(full)
    res = pld_accountant.calibrate_scale(
        pld_accountant.gaussian_noise, 0.0, l2, epsilon, delta, query.compositions,
        query.sampling_rate, BIN_WIDTH, upper=np.minimum(upper, 1.02 * guess), lower=0.7 * guess,
        fallback_upper=upper,
    )
    require_certified(NAME, res.certified, epsilon, delta, res.delta_at)
    notes += (
        f"{query.compositions} Poisson-subsampled uses (q = {query.sampling_rate}), add and remove "
        "adjacency, worse reported: PLD engine (pessimistic connect-the-dots, "
        f"bin width {BIN_WIDTH})",
    )
    return res.scale, res.delta_at, l2, notes


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "gaussian: delta = 0 is infeasible (every Gaussian mechanism has delta(eps) > 0)"
        )
    if _subsampled(query):
        sigma, delta_at, l2, notes = _engine_calibrate(epsilon, delta, query)
        return Calibration(
            mechanism=NAME,
            params={"sigma": sigma},
            variance=sigma**2,
            mse=query.dim * sigma**2,
            epsilon=epsilon,
            delta=delta,
            delta_at_params=delta_at,
            dim=query.dim,
            compositions=query.compositions,
            sampling_rate=query.sampling_rate,
            sensitivity={"l2": l2},
            notes=notes,
        )
    l2, notes = _effective_l2(query)
    sigma, delta_at, ok, _ = call_padded(sigma_gaussian, epsilon, delta, l2)
    sigma, delta_at = np.asarray(sigma), np.asarray(delta_at)
    require_certified(NAME, ok, epsilon, delta, delta_at)
    with np.errstate(over="ignore"):  # sigma ~ 1e299 at eps = 0, delta = 1e-300
        variance = sigma**2
    return Calibration(
        mechanism=NAME,
        params={"sigma": sigma},
        variance=variance,
        mse=query.dim * variance,
        epsilon=epsilon,
        delta=delta,
        delta_at_params=delta_at,
        dim=query.dim,
        compositions=query.compositions,
        sampling_rate=query.sampling_rate,
        sensitivity={"l2": query.sensitivity.resolve("l2")[0]},
        notes=notes,
    )


def _engine(fn, params: dict, values: np.ndarray, query: Query) -> np.ndarray:
    l2, _ = query.sensitivity.resolve("l2")
    sigma = np.asarray(params["sigma"], np.float64)
    if sigma.ndim:
        raise ValueError("gaussian: with sampling_rate, give one sigma at a time")
    return fn(pld_accountant.gaussian_noise, float(sigma), 0.0, l2, values, query.compositions,
              query.sampling_rate, BIN_WIDTH)


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    if _subsampled(query):
        return _engine(pld_accountant.profile, params, epsilon, query)
    l2, _ = _effective_l2(query)
    return call_padded(_delta, epsilon, params["sigma"], l2)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    if _subsampled(query):
        return _engine(pld_accountant.epsilon, params, delta, query)
    l2, _ = _effective_l2(query)
    return call_padded(_epsilon, delta, params["sigma"], l2)


MECHANISM = Mechanism(
    name=NAME,
    param_names=("sigma",),
    summary="Gaussian N(0, sigma^2) per coordinate; exact profile (Balle & Wang 2018), l2",
    noise=Gaussian,
    calibrate=calibrate,
    profile=profile,
    epsilon_for_delta=epsilon_for_delta,
    validate_params=positive_params(NAME, ("sigma",)),
)
