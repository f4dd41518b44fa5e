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

from dpjax.accounting.truncated_laplace import delta_truncated_laplace, epsilon_truncated_laplace
from dpjax.calibration.members import (
    laplace_limit_variance,
    name_by_variance,
    uniform_limit_variance,
)
from dpjax.calibration.result import Calibration
from dpjax.calibration.truncated_laplace import (
    truncated_laplace_least_variance,
)
from dpjax.certificate import require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import Query, calibration, exact_1d_mechanism, single_release
from dpjax.noise.truncated_laplace import TruncatedLaplace

NAME = "truncated-laplace"
_delta = jax.jit(delta_truncated_laplace)
_epsilon = jax.jit(epsilon_truncated_laplace)


#: Below this delta a target the search cannot certify is refused as out of float64 range
#: (the uniform end's bound ``Delta / (2 delta)`` passes ``1e250``), not as a failed
#: certificate; above it a failure stays a :class:`~dpjax.CertificationError`.
_DEEPEST_DELTA = 1e-250


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least-variance ``(lambda, A)`` with the exact 1-D profile ``<= delta``, certified.

    Over the whole family (:mod:`dpjax.calibration.truncated_laplace`); in the
    high-privacy regime this is GDGK's closed form (Geng, Ding, Guo & Kumar 2020)

    .. math:: \lambda = \Delta / \epsilon,\qquad
              A = \lambda \log\!\Big(1 + \frac{e^\epsilon - 1}{2\delta}\Big).

    Args:
      epsilon: target epsilons (broadcast with ``delta``).
      delta: target deltas, ``> 0``.
      query: one use in one dimension, sensitivity ``linf``.
    """
    sens, notes = single_release(NAME, query)
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "truncated-laplace: delta = 0 is infeasible (bounded support: delta(eps) > 0 "
            "for every eps)"
        )
    scale, bound, var, delta_at, ok = truncated_laplace_least_variance(epsilon, delta, sens)
    deep = ~np.asarray(ok) & (np.broadcast_to(delta, np.shape(ok)) < _DEEPEST_DELTA)
    if np.any(deep):
        eps_bad = float(np.broadcast_to(epsilon, deep.shape)[deep][0])
        delta_bad = float(np.broadcast_to(delta, deep.shape)[deep][0])
        raise InfeasibleTargetError(
            f"{NAME}: no certified parameters for epsilon={eps_bad!r}, "
            f"delta={delta_bad!r}: near epsilon = 0 the "
            "target needs a bound of order Delta / (2 delta) (the uniform end), beyond the "
            "range where the float64 profile can be evaluated; laplace or gaussian meet it"
        )
    require_certified(NAME, ok, epsilon, delta, delta_at)
    return calibration(
        NAME, query, params={"scale": scale, "bound": bound}, variance=var, epsilon=epsilon,
        delta=delta, delta_at_params=delta_at, sensitivity={"linf": sens}, notes=notes,
        member=name_by_variance(var, {
            "uniform": uniform_limit_variance(delta, sens),
            "laplace": laplace_limit_variance(epsilon, delta, sens),
        }),
    )


SUMMARY = "truncated Laplace on [-A, A] (Geng, Ding, Guo & Kumar 2020); exact 1-D profile"
MECHANISM = exact_1d_mechanism(
    TruncatedLaplace, SUMMARY, calibrate, _delta, _epsilon, "Geng, Ding, Guo & Kumar 2020"
)
