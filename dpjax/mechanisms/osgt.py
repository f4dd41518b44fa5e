r"""The OSGT mechanism: noise ``O(vartheta, rho^2)`` (Sadeghi & Korki 2022), one dimension.

Parameters ``vartheta >= 0`` (offset) and ``rho > 0`` (scale); see
:mod:`dpjax.noise.osgt`.  Profile: exact 1-D (App. F(c) of
flipped-huber-mechanism; :mod:`dpjax.accounting.osgt`).  Calibration: least
variance over the whole parameter space (:mod:`dpjax.calibration.osgt`; the
shape is searched over ``vartheta / rho`` in ``[1e-4, 1e4]``).  ``dim > 1``,
compositions and subsampling need K-fold numerical integration / a PLD and are
not supported.
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax import _validate
from dpjax._batching import call_padded
from dpjax.accounting.osgt import delta_osgt, epsilon_osgt
from dpjax.calibration.osgt import K_MAX, K_MIN, osgt_least_variance
from dpjax.calibration.result import Calibration
from dpjax.certificate import require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import Mechanism, Query, check_param_names, unsupported
from dpjax.noise.osgt import OSGT

NAME = "osgt"
PARAMS = ("vartheta", "rho")
_delta = jax.jit(delta_osgt)


def _sensitivity(query: Query) -> tuple[float, tuple[str, ...]]:
    if query.sampling_rate is not None:
        raise unsupported(NAME, "Poisson subsampling (needs the PLD engine)")
    if query.dim != 1 or query.compositions != 1:
        raise unsupported(NAME, "dim > 1 or compositions > 1 (needs K-fold numerical integration)")
    return query.sensitivity.resolve("linf")


def validate_params(params: dict) -> dict:
    """``vartheta`` finite and ``>= 0``, ``rho`` finite and ``> 0``."""
    params = check_param_names(NAME, PARAMS, params)
    return {
        "vartheta": _validate.nonnegative(params["vartheta"], "vartheta"),
        "rho": _validate.positive(params["rho"], "rho"),
    }


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    sens, notes = _sensitivity(query)
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "osgt: delta = 0 is infeasible (Gaussian tails: delta(eps) > 0)"
        )
    res = osgt_least_variance(epsilon, delta, sens)
    require_certified(NAME, res.certified, epsilon, delta, res.delta_at_params)
    notes += (f"least variance over vartheta/rho in [{K_MIN:g}, {K_MAX:g}]",)
    return Calibration(
        mechanism=NAME,
        params={"vartheta": res.vartheta, "rho": res.rho},
        variance=res.variance,
        mse=res.variance,
        epsilon=epsilon,
        delta=delta,
        delta_at_params=res.delta_at_params,
        dim=1,
        sensitivity={"linf": sens},
        notes=notes,
    )


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    sens, _ = _sensitivity(query)
    return call_padded(_delta, epsilon, params["vartheta"], params["rho"], sens)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    sens, _ = _sensitivity(query)
    return call_padded(epsilon_osgt, delta, params["vartheta"], params["rho"], sens)


MECHANISM = Mechanism(
    name=NAME,
    param_names=PARAMS,
    summary="OSGT (offset symmetric Gaussian tails, Sadeghi & Korki 2022); exact 1-D profile",
    noise=OSGT,
    calibrate=calibrate,
    profile=profile,
    epsilon_for_delta=epsilon_for_delta,
    validate_params=validate_params,
)
