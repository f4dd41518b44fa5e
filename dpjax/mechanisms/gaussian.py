r"""The Gaussian mechanism: noise ``N(0, sigma^2)`` per coordinate, l2 sensitivity.

Exact in any dimension (Balle & Wang 2018).  ``compositions = T`` without
subsampling is exact too: the T-fold composition is a Gaussian mechanism with
``Delta_2 -> sqrt(T) Delta_2``.
"""

from __future__ import annotations

import numpy as np

from dpjax.accounting.gaussian import delta_gaussian, epsilon_gaussian
from dpjax.calibrate._certify import require_certified
from dpjax.calibrate._result import Calibration
from dpjax.calibrate.gaussian import sigma_gaussian
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import Mechanism, Query, positive_params, unsupported
from dpjax.noise.gaussian import Gaussian

NAME = "gaussian"


def _effective_l2(query: Query) -> tuple[float, tuple[str, ...]]:
    if query.sampling_rate is not None:
        raise unsupported(NAME, "Poisson subsampling (needs the PLD engine)")
    l2, notes = query.sensitivity.resolve("l2")
    if query.compositions > 1:
        notes += (f"{query.compositions}-fold composition = one Gaussian with l2 * sqrt(T)",)
    return l2 * np.sqrt(query.compositions), notes


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    l2, notes = _effective_l2(query)
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "gaussian: delta = 0 is infeasible (every Gaussian mechanism has delta(eps) > 0)"
        )
    sigma, delta_at, ok, _ = sigma_gaussian(epsilon, delta, l2)
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
        sensitivity={"l2": l2 / np.sqrt(query.compositions)},
        notes=notes,
    )


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    l2, _ = _effective_l2(query)
    return np.asarray(delta_gaussian(epsilon, params["sigma"], l2))


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    l2, _ = _effective_l2(query)
    return np.asarray(epsilon_gaussian(delta, params["sigma"], l2))


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
