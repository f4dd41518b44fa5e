r"""The truncated Laplace mechanism (Geng, Ding, Guo & Kumar 2020), one dimension.

Parameters ``scale`` (GDGK's ``lambda > 0``) and ``bound`` (GDGK's ``A > 0``,
the truncation); see :mod:`dpjax.noise.truncated_laplace`.  Profile: exact 1-D
(:mod:`dpjax.accounting.truncated_laplace`).  Calibration: least variance over
the family (:mod:`dpjax.calibration.truncated_laplace`), which matches GDGK's
closed form ``lambda = Delta / epsilon``,
``A = lambda log(1 + (e^epsilon - 1) / (2 delta))`` in the high-privacy regime.
``dim > 1``, compositions and subsampling are not supported.
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax._batching import call_padded
from dpjax.accounting.truncated_laplace import delta_truncated_laplace, epsilon_truncated_laplace
from dpjax.calibration.result import Calibration
from dpjax.calibration.truncated_laplace import truncated_laplace_least_variance
from dpjax.certificate import require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import Mechanism, Query, positive_params, unsupported
from dpjax.noise.truncated_laplace import TruncatedLaplace

NAME = "truncated-laplace"
_delta = jax.jit(delta_truncated_laplace)
_epsilon = jax.jit(epsilon_truncated_laplace)


def _sensitivity(query: Query) -> tuple[float, tuple[str, ...]]:
    if query.sampling_rate is not None:
        raise unsupported(NAME, "Poisson subsampling (needs the PLD engine)")
    if query.dim != 1 or query.compositions != 1:
        raise unsupported(NAME, "dim > 1 or compositions > 1")
    return query.sensitivity.resolve("linf")


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    sens, notes = _sensitivity(query)
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "truncated-laplace: delta = 0 is infeasible (bounded support: delta(eps) > 0 "
            "for every eps)"
        )
    scale, bound, var, delta_at, ok = truncated_laplace_least_variance(epsilon, delta, sens)
    require_certified(NAME, ok, epsilon, delta, delta_at)
    return Calibration(
        mechanism=NAME,
        params={"scale": scale, "bound": bound},
        variance=var,
        mse=var,
        epsilon=epsilon,
        delta=delta,
        delta_at_params=delta_at,
        dim=1,
        sensitivity={"linf": sens},
        notes=notes,
    )


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    sens, _ = _sensitivity(query)
    return call_padded(_delta, epsilon, params["scale"], params["bound"], sens)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    sens, _ = _sensitivity(query)
    return call_padded(_epsilon, delta, params["scale"], params["bound"], sens)


MECHANISM = Mechanism(
    name=NAME,
    param_names=("scale", "bound"),
    summary="truncated Laplace on [-A, A] (Geng, Ding, Guo & Kumar 2020); exact 1-D profile",
    noise=TruncatedLaplace,
    calibrate=calibrate,
    profile=profile,
    epsilon_for_delta=epsilon_for_delta,
    validate_params=positive_params(NAME, ("scale", "bound")),
)
