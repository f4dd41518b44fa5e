"""Calibration of the discrete mechanisms (bisection on the accountant's certified profile).

References: dp_accounting's own expected values (``privacy_loss_mechanism_test``:
``test_discrete_laplace_from_privacy_parameters``, ``test_discrete_gaussian_from_privacy_
parameters``) and exact sums of the discrete pairs computed here.

dp_accounting's discrete-Laplace calibration is the pure-DP parameter of the remove
direction, ``a = log(1 + (e^eps - 1) / q) / Delta``, whatever the adjacency and delta of the
case; dpjax's calibration at ``delta = 0`` and relation ``"remove"`` is that same boundary
(found by bisection, to the search's relative width), and with the case's ``delta > 0`` and
relation dpjax returns at least that ``a`` (never more noise), certified -- or, under
``"add"`` with ``delta >= 1 - e^eps (1 - q)`` (case 6), says that no noise is needed.
"""

import math

import numpy as np
import pytest

import dpjax
from dpjax.errors import InfeasibleTargetError

#: dp_accounting's cases: (sensitivity, sampling_prob, adjacency, epsilon, delta, expected a)
DLAP_CASES = [
    (1, 1.0, "add", 1.0, 0.0, 1.0),
    (1, 1.0, "remove", 1.0, 0.1, 1.0),
    (2, 1.0, "add", 1.0, 0.01, 0.5),
    (1, 1.0, "remove", 3.0, 0.01, 3.0),
    (1, 0.8, "add", 1.0, 0.0, 1.1467204062),
    (1, 0.7, "remove", 1.0, 0.1, 1.2397322437),
    (2, 0.3, "add", 1.0, 0.01, 0.9531096869),
    (1, 0.2, "remove", 3.0, 0.01, 4.5687933452),
]
_FAST = {4, 6}  # the default tier runs two (one each of add / remove, subsampled)


def _dlap_delta(a, sens, q, eps, direction):
    """Exact delta(eps) of Poisson-subsampled discrete Laplace (one direction), by summation."""
    k = np.arange(-400, 401, dtype=np.float64)
    p = math.tanh(a / 2) * np.exp(-a * np.abs(k))
    shifted = math.tanh(a / 2) * np.exp(-a * np.abs(k - sens))
    if direction == "remove":
        pair = (q * shifted + (1 - q) * p, p)
    else:
        pair = (p, q * shifted + (1 - q) * p)
    return float(np.sum(np.maximum(pair[0] - math.exp(eps) * pair[1], 0.0)))


@pytest.mark.parametrize(
    "case", [c if i in _FAST else pytest.param(c, marks=pytest.mark.slow)
             for i, c in enumerate(DLAP_CASES)],
)
def test_discrete_laplace_dp_accounting_cases(case):
    sens, q, relation, eps, delta, expected = case
    rate = None if q == 1.0 else q
    pure = dpjax.calibrate("discrete-laplace", eps, 0.0, linf=sens, sampling_rate=rate,
                           relation="remove")
    a0 = float(pure.params["noise_parameter"])
    assert a0 == pytest.approx(expected, rel=2e-5) and a0 <= expected * (1 + 1e-12)
    assert float(pure.delta_at_params) == 0.0
    if relation == "add" and rate is not None and delta >= 1 - math.exp(eps) * (1 - q):
        # adding a record moves any law by at most 1 / (1 - q): no noise is needed (dpjax
        # says so; dp_accounting answers its remove boundary); the exact sum at almost no
        # noise (a = 40) agrees
        with pytest.raises(dpjax.TrivialTargetError, match="holds without noise"):
            dpjax.calibrate("discrete-laplace", eps, delta, linf=sens, sampling_rate=rate,
                            relation=relation)
        assert _dlap_delta(40.0, sens, q, eps, relation) <= delta
        return
    cal = dpjax.calibrate("discrete-laplace", eps, delta, linf=sens, sampling_rate=rate,
                          relation=relation)
    a = float(cal.params["noise_parameter"])
    assert a >= expected * (1 - 2e-5)  # never more noise than dp_accounting's
    assert float(cal.delta_at_params) <= delta
    if a < 50:  # the independent check: exact summation at the returned parameter
        assert _dlap_delta(a, sens, q, eps, relation) <= delta + 1e-12


def test_discrete_laplace_add_direction_is_the_closed_form():
    # add under Poisson subsampling: epsilon_add = -log(1 - q (1 - e^{-a Delta})), so the
    # least noise at delta = 0 is a = -log(1 - (1 - e^{-eps}) / q) / Delta (q = 0.8, eps = 1)
    cal = dpjax.calibrate("discrete-laplace", 1.0, 0.0, linf=1, sampling_rate=0.8,
                          relation="add")
    exact = -math.log(1 - (1 - math.exp(-1.0)) / 0.8)
    assert float(cal.params["noise_parameter"]) == pytest.approx(exact, rel=2e-5)


def test_discrete_gaussian_dp_accounting_case():
    # dp_accounting: (sensitivity 1, q 1, ADD, eps 2, delta 0.02092364) -> sigma 1.038 (3 places)
    cal = dpjax.calibrate("discrete-gaussian", 2.0, 0.02092364, linf=1, relation="add")
    sigma = float(cal.params["sigma"])
    assert sigma == pytest.approx(1.038, abs=1e-3)
    assert float(cal.delta_at_params) <= 0.02092364
    assert float(cal.variance) <= sigma**2


@pytest.mark.slow
def test_discrete_gaussian_replace_one_is_twice_the_sensitivity():
    # replace-one without subsampling: the shift 2 Delta (dp_accounting's REPLACE)
    rep = dpjax.calibrate("discrete-gaussian", 2.0, 0.02092364, linf=1, relation="replace_one")
    two = dpjax.calibrate("discrete-gaussian", 2.0, 0.02092364, linf=2)
    assert float(rep.params["sigma"]) == pytest.approx(float(two.params["sigma"]), rel=1e-4)


@pytest.mark.parametrize(
    "kw,error,match",
    [
        ({"linf": 1.5}, ValueError, "integer sensitivity"),
        ({"l2": 1.0, "dim": 2}, NotImplementedError, "dim > 1"),
        ({"linf": 1, "relation": "replace"}, ValueError, "relation"),
    ],
)
def test_discrete_bad_input_is_named(kw, error, match):
    for name in ("discrete-laplace", "discrete-gaussian"):
        with pytest.raises(error, match=match):
            dpjax.calibrate(name, 1.0, 1e-5, **kw)


def test_discrete_gaussian_delta_zero_is_infeasible():
    with pytest.raises(InfeasibleTargetError, match="delta = 0"):
        dpjax.calibrate("discrete-gaussian", 1.0, 0.0, linf=1)
