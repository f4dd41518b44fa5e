r"""The Laplace mechanism: noise ``Lap(b)`` per coordinate (``b = scale``).

* ``dim = 1``, one use: the exact (epsilon, delta) profile
  ``[1 - exp((epsilon - Delta/b)/2)]_+`` (App. F(b) of flipped-huber-mechanism).
* ``dim > 1`` or ``T`` compositions: calibrated for pure DP with l1 budget,
  ``b = T Delta_1 / epsilon`` (Table II of flipped-huber-mechanism), which is
  ``(epsilon, 0)``-DP.  Profiles below ``epsilon_0 = T Delta_1 / b`` use the
  dominating pair of any ``epsilon_0``-DP mechanism (randomized response,
  Kairouz et al. 2015): ``delta(eps) <= (e^{eps_0} - e^{eps}) / (1 + e^{eps_0})``
  — a certified upper bound, not the exact composed profile.
"""

from __future__ import annotations

import numpy as np

from dpjax.accounting.laplace import delta_laplace, epsilon_laplace
from dpjax.calibrate._certify import require_certified
from dpjax.calibrate._result import Calibration
from dpjax.calibrate.laplace import scale_laplace_1d, scale_laplace_pure
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import Mechanism, Query, positive_params, unsupported
from dpjax.noise.laplace import Laplace

NAME = "laplace"


def _exact_1d(query: Query) -> bool:
    if query.sampling_rate is not None:
        raise unsupported(NAME, "Poisson subsampling (needs the PLD engine)")
    return query.dim == 1 and query.compositions == 1


def _pure_epsilon(params: dict, query: Query) -> tuple[np.ndarray, tuple[str, ...]]:
    l1, notes = query.sensitivity.resolve("l1")
    return query.compositions * l1 / params["scale"], notes


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    if np.any((epsilon == 0) & (delta == 0)):
        raise InfeasibleTargetError("laplace: epsilon = delta = 0 is infeasible for additive noise")
    if _exact_1d(query):
        l1, notes = query.sensitivity.resolve("l1")
        b, delta_at, ok = (np.asarray(x) for x in scale_laplace_1d(epsilon, delta, l1))
        require_certified(NAME, ok, epsilon, delta, delta_at)
    else:
        if np.any(epsilon == 0):
            raise InfeasibleTargetError(
                "laplace: epsilon = 0 needs the exact 1-D profile; for dim > 1 or compositions > 1 "
                "dpjax calibrates Laplace for pure DP, which needs epsilon > 0"
            )
        l1, notes = query.sensitivity.resolve("l1")
        b = np.asarray(scale_laplace_pure(epsilon, query.compositions * l1))
        for _ in range(4):  # rounding: make sure T * l1 / b <= epsilon exactly
            b = np.where(query.compositions * l1 / b > epsilon, np.nextafter(b, np.inf), b)
        delta_at = _rr_bound(epsilon, query.compositions * l1 / b)
        require_certified(NAME, delta_at <= delta, epsilon, delta, delta_at)
        notes += ("pure DP with l1 budget (delta not used; exact composed profile needs PLD)",)
    variance = 2.0 * b**2
    return Calibration(
        mechanism=NAME,
        params={"scale": b},
        variance=variance,
        mse=query.dim * variance,
        epsilon=epsilon,
        delta=delta,
        delta_at_params=np.broadcast_to(delta_at, np.shape(b)).copy(),
        dim=query.dim,
        compositions=query.compositions,
        sampling_rate=query.sampling_rate,
        sensitivity={"l1": l1},
        notes=notes,
        condition="exact" if _exact_1d(query) else "sufficient",
    )


def _rr_bound(epsilon, epsilon0):
    """``(e^{eps0} - e^{eps}) / (1 + e^{eps0})`` for ``eps < eps0``, else 0 (pure-DP dominating pair)."""
    epsilon, epsilon0 = np.asarray(epsilon, float), np.asarray(epsilon0, float)
    with np.errstate(over="ignore", invalid="ignore"):
        bound = -np.expm1(epsilon - epsilon0) / (1.0 + np.exp(-epsilon0))
    return np.where(epsilon >= epsilon0, 0.0, bound)


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    if _exact_1d(query):
        l1, _ = query.sensitivity.resolve("l1")
        return np.asarray(delta_laplace(epsilon, params["scale"], l1))
    eps0, _ = _pure_epsilon(params, query)
    return _rr_bound(epsilon, eps0)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    if _exact_1d(query):
        l1, _ = query.sensitivity.resolve("l1")
        return np.asarray(epsilon_laplace(delta, params["scale"], l1))
    eps0, _ = _pure_epsilon(params, query)
    # invert the randomized-response bound: eps = eps0 + log(1 - delta (1 + e^{-eps0}))
    with np.errstate(divide="ignore"):
        eps = eps0 + np.log1p(-np.asarray(delta) * (1.0 + np.exp(-eps0)))
    return np.maximum(eps, 0.0)


MECHANISM = Mechanism(
    name=NAME,
    param_names=("scale",),
    summary="Laplace Lap(b) per coordinate; exact 1-D (eps, delta), pure DP (l1) in K dims",
    noise=Laplace,
    calibrate=calibrate,
    profile=profile,
    epsilon_for_delta=epsilon_for_delta,
    validate_params=positive_params(NAME, ("scale",)),
)
