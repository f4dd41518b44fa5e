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

from dpjax.accounting.osgt import delta_osgt, epsilon_osgt
from dpjax.calibration.members import (
    gaussian_limit_variance,
    laplace_limit_variance,
    name_by_variance,
)
from dpjax.calibration.osgt import K_MAX, K_MIN, osgt_least_variance
from dpjax.calibration.result import Calibration
from dpjax.certificate import require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import Query, calibration, exact_1d_mechanism, single_release
from dpjax.noise.osgt import OSGT

NAME = "osgt"
_delta = jax.jit(delta_osgt)
_NEEDS = "needs K-fold numerical integration"


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least-variance ``(vartheta, rho)`` with the exact 1-D profile ``<= delta``, certified.

    The profile is App. F(c) of flipped-huber-mechanism (a scale family in ``rho`` at
    shape ``k = vartheta / rho``); the shape is searched over ``[1e-4, 1e4]``
    (:func:`dpjax.calibration.osgt.osgt_least_variance`), variance ``rho^2 v(k)``.

    Args:
      epsilon: target epsilons (broadcast with ``delta``).
      delta: target deltas, ``> 0``.
      query: one use in one dimension, sensitivity ``linf``.
    """
    sens, notes = single_release(NAME, query, _NEEDS)
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "osgt: delta = 0 is infeasible (Gaussian tails: delta(eps) > 0)"
        )
    res = osgt_least_variance(epsilon, delta, sens)
    require_certified(NAME, res.certified, epsilon, delta, res.delta_at_params)
    notes += (f"least variance over vartheta/rho in [{K_MIN:g}, {K_MAX:g}]",)
    return calibration(
        NAME, query, params={"vartheta": res.vartheta, "rho": res.rho}, variance=res.variance,
        epsilon=epsilon, delta=delta, delta_at_params=res.delta_at_params,
        sensitivity={"linf": sens}, notes=notes,
        member=name_by_variance(res.variance, {
            "gaussian": gaussian_limit_variance(epsilon, delta, sens),
            "laplace": laplace_limit_variance(epsilon, delta, sens),
        }),
    )


SUMMARY = "OSGT (offset symmetric Gaussian tails, Sadeghi & Korki 2022); exact 1-D profile"
MECHANISM = exact_1d_mechanism(
    OSGT, SUMMARY, calibrate, _delta, epsilon_osgt, "App. F(c) of flipped-huber-mechanism", _NEEDS
)
