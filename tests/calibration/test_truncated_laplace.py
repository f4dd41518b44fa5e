"""Truncated Laplace calibration (:mod:`dpjax.calibration.truncated_laplace`) at the ends of
its range, against closed forms: GDGK 2020's parameters and the Laplace / uniform members."""

import jax
import numpy as np
import pytest

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


# ---- T > 1 uses: the accountant's certified profile (truncated_laplace_composed) ----------

TARGET = (1.0, 1e-5)


def _accountant_delta(scale, bound, uses, eps):
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    event = ev.Noise("truncated-laplace", {"scale": float(scale), "bound": float(bound)})
    return PLDAccountant().compose(event, uses).get_delta(eps)


def _check_composed(uses, eps, delta):
    """Certified against the independent convolution, and least at its shape: 1e-5 less
    scale (same c = A / lambda) breaks the target on the accountant's profile."""
    from _truncated_laplace_reference import composed_delta_bounds

    from dpjax.calibration.truncated_laplace import truncated_laplace_composed

    lam, a, var, d_at, ok = (float(x) for x in truncated_laplace_composed(eps, delta, uses, 1.0))
    assert ok and d_at <= delta
    assert d_at == _accountant_delta(lam, a, uses, eps)  # the certificate is the profile's
    lower, _ = composed_delta_bounds(eps, lam, a, 1.0, uses, 1e-5)
    assert lower <= d_at  # not below the truth
    assert d_at >= 0.99 * delta  # the target binds
    smaller = lam * (1 - 1e-5)
    assert _accountant_delta(smaller, smaller * (a / lam), uses, eps) > delta
    assert var == pytest.approx(lam**2 * float(truncated_laplace_unit_variance(a / lam)),
                                rel=1e-12)
    return lam, a, var


def test_two_uses_certified_by_quadrature_and_least():
    """Two uses: the exact two-use profile (one quadrature of the exact 1-D profile, no grid)
    at the returned parameters is below delta, and the member is the pure-composition one
    (2 Delta / lambda ~ epsilon, truncation ~ 0.92 of delta): variance 7.9916, below the
    Laplace member's 8 (T Delta / epsilon)^2 / T^2 ... = 2 (T / epsilon)^2."""
    from _truncated_laplace_reference import two_use_delta

    from dpjax.accounting.truncated_laplace import delta_truncated_laplace

    eps, delta = TARGET
    lam, a, var = _check_composed(2, eps, delta)
    exact = two_use_delta(eps, lam, a, 1.0, lambda x: float(
        delta_truncated_laplace(x, lam, a, 1.0)))
    assert exact <= delta
    assert var < 2.0 * (2 / eps) ** 2


@pytest.mark.slow
@pytest.mark.parametrize("uses", [3, 5, 10])
def test_composed_certified_and_least(uses):
    eps, delta = TARGET
    _check_composed(uses, eps, delta)


def test_composed_reaches_the_uniform_end():
    """epsilon = 1e-8 over 2 uses: the least variance is the uniform member's ``A^2 / 3``,
    ``A = Delta / (2 p_max)``, ``p_max = 1 - (1 - delta)^(1/2)`` (a loss of 0 or +infinity:
    only the truncation counts), 24x below Laplace's; named so in ``member``."""
    eps, delta = 1e-8, 1e-5
    cal = dpjax.calibrate("truncated-laplace", epsilon=eps, delta=delta, linf=1.0,
                          compositions=2)
    p_max = -np.expm1(np.log1p(-delta) / 2)
    np.testing.assert_allclose(float(cal.variance), (1 / (2 * p_max)) ** 2 / 3, rtol=1e-5)
    assert str(cal.member) == "uniform" and float(cal.delta_at_params) <= delta


@pytest.mark.slow
def test_ten_uses_reach_the_laplace_end():
    """10 uses at (1, 1e-5): no truncation beats the Laplace member (c = 2000) by more than
    the search's resolution; the variance is Laplace's own calibration to 1e-5."""
    cal = dpjax.calibrate("truncated-laplace", epsilon=1.0, delta=1e-5, linf=1.0,
                          compositions=10)
    lap = dpjax.calibrate("laplace", epsilon=1.0, delta=1e-5, l1=1.0, linf=1.0,
                          compositions=10)
    assert str(cal.member) == "laplace"
    np.testing.assert_allclose(float(cal.variance), float(lap.variance), rtol=1e-5)
