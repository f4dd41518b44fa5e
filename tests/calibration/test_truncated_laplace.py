"""Truncated Laplace calibration (:mod:`dpjax.calibration.truncated_laplace`) at the ends of
its range, against closed forms: GDGK 2020's parameters and the Laplace / uniform members."""

import jax
import numpy as np

import dpjax
from dpjax.accounting.truncated_laplace import log_delta_truncated_laplace, truncated_laplace_gdgk
from dpjax.noise.truncated_laplace import truncated_laplace_unit_variance


def _certified(cal, eps, delta):
    """The exact profile at the returned parameters, re-evaluated: ``<= delta``."""
    p = cal.params
    log_d = jax.jit(log_delta_truncated_laplace)(eps, p["scale"], p["bound"], 1.0)
    return float(np.exp(log_d)) <= delta


def test_large_epsilon_reaches_gdgk_and_the_laplace_member():
    """GDGK's optimal shape ``c = log(1 + (e^eps - 1) / (2 delta)) ~ eps + 13`` passes any
    fixed shape cap as ``epsilon`` grows: a cap at ``c = 2e3`` returned the same parameters
    for every ``epsilon >= 1e4`` (variance 5.07e-7, 25x GDGK's at ``epsilon = 1e4``)."""
    delta = 1e-6
    variances = []
    for eps in (1e4, 3e4):
        cal = dpjax.calibrate("truncated-laplace", epsilon=eps, delta=delta, l1=1.0)
        lam, a = (float(x) for x in truncated_laplace_gdgk(eps, delta, 1.0))
        gdgk = lam**2 * float(truncated_laplace_unit_variance(a / lam))
        assert float(cal.variance) <= gdgk * (1 + 1e-6)
        # no truncated Laplace beats the Laplace member (2 / eps^2) by more than O(delta / eps)
        assert float(cal.variance) >= 2.0 / eps**2 * (1 - 1e-6)
        assert _certified(cal, eps, delta)
        variances.append(float(cal.variance))
    np.testing.assert_allclose(variances[0] / variances[1], 9.0, rtol=1e-6)


def test_tiny_epsilon_and_delta_reach_the_uniform_member():
    """``epsilon = 1e-300, delta = 1e-30``: the least variance is the uniform member's
    ``A^2 / 3``, ``A = Delta / (2 delta)`` (the search's steer cancelled at ``D ~ delta`` and
    the certificate failed); ``delta = 1e-300`` is answered too (finite parameters)."""
    eps, delta = 1e-300, 1e-30
    cal = dpjax.calibrate("truncated-laplace", epsilon=eps, delta=delta, l1=1.0)
    uniform = (1.0 / (2.0 * delta)) ** 2 / 3.0
    np.testing.assert_allclose(float(cal.variance) / uniform, 1.0, rtol=1e-6)
    assert _certified(cal, eps, delta)
    cal = dpjax.calibrate("truncated-laplace", epsilon=1e-300, delta=1e-300, l1=1.0)
    assert all(np.isfinite(float(v)) for v in cal.params.values())
    assert _certified(cal, 1e-300, 1e-300)
