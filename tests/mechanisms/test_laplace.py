"""Laplace: exact 1-D profile vs direct integration, calibration, K-dim pure DP."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpjax
from dpjax.accounting import delta_laplace, epsilon_laplace, log_delta_laplace


def mp_delta_integral(eps, b, sens):
    """delta(eps) = int [g(t) - e^eps g(t + Delta)]_+ dt, breakpoints at the kinks."""
    with mpmath.workdps(40):
        b, sens, eps = mpmath.mpf(b), mpmath.mpf(sens), mpmath.mpf(eps)
        g = lambda t: mpmath.exp(-abs(t) / b) / (2 * b)
        f = lambda t: max(g(t) - mpmath.exp(eps) * g(t + sens), 0)
        # the positive part switches where the loss crosses eps: inside (-Delta, 0)
        t_star = (b * eps - sens) / 2
        pts = sorted({-mpmath.inf, -sens, t_star, mpmath.mpf(0), mpmath.inf} - {None})
        pts = [p for p in pts if p == -mpmath.inf or p == mpmath.inf or -sens <= p <= 0]
        return mpmath.quad(f, pts)


@pytest.mark.parametrize(
    "eps,b,sens", [(0.0, 1.0, 1.0), (0.5, 1.0, 1.0), (0.3, 3.3, 1.0), (1.0, 0.25, 0.5)]
)
def test_profile_matches_direct_integral(eps, b, sens):
    ref = mp_delta_integral(eps, b, sens)
    got = float(delta_laplace(eps, b, sens))
    assert abs(got - float(ref)) <= 1e-12 * float(ref) + 1e-300


def test_profile_zero_beyond_pure_epsilon():
    assert float(delta_laplace(1.0, 1.0, 1.0)) == 0.0
    assert float(log_delta_laplace(2.0, 1.0, 1.0)) == -np.inf


def test_calibration_closed_form_and_certificate():
    cal = dpjax.calibrate("laplace", epsilon=[0.3, 3.0], delta=1e-6, linf=1.0)
    expected = 1.0 / (np.array([0.3, 3.0]) - 2 * np.log1p(-1e-6))
    np.testing.assert_allclose(cal.params["scale"], expected, rtol=1e-9)
    assert np.all(cal.params["scale"] >= expected * (1 - 1e-15))
    assert np.all(cal.delta_at_params <= 1e-6)
    # flipped-huber-mechanism Fig. 3a: Laplace variance at eps 0.3 ~ 2 * (1/0.300002)^2
    assert abs(float(cal.variance[0]) - 22.2219) < 1e-3


# delta = 1e-8 lies below engine.TILT_BELOW: the K-dim PLD calibration also runs the
# tilted stage (more compiled programs, over two minutes on one core), marked slow;
# delta = 1e-6 (plain engine only) runs the same assertions by default
@pytest.mark.parametrize(
    "k_delta", [1e-6, pytest.param(1e-8, marks=pytest.mark.slow)], ids=["1e-6", "1e-8"]
)
def test_pure_dp_and_k_dims(k_delta):
    cal = dpjax.calibrate("laplace", epsilon=0.5, delta=0.0, linf=2.0)
    assert float(cal.params["scale"]) == 4.0 and float(cal.delta_at_params) == 0.0
    # Table II of flipped-huber-mechanism (pure eps-DP, l1 budget): 2 (Delta_1/eps)^2 = 2e4, 800
    pure = dpjax.calibrate("laplace", epsilon=[0.2, 1.0], delta=0.0, dim=20, linf=1.0)
    np.testing.assert_allclose(pure.variance, [2e4, 800.0], rtol=1e-12)
    assert any("l1 <= dim * linf" in n for n in pure.notes)
    # with delta > 0 the composed (PLD) accounting can only need less noise, and is certified
    k = dpjax.calibrate("laplace", epsilon=[0.2, 1.0], delta=k_delta, dim=20, linf=1.0)
    assert np.all(k.variance <= pure.variance) and np.all(k.delta_at_params <= k_delta)
    # ... and tight: the profile entry point certifies each returned scale, and 0.1 % less
    # noise misses the target (the least scale the engine certifies, not merely a safe one)
    for e, s in zip([0.2, 1.0], np.asarray(k.params["scale"]), strict=True):
        at = dpjax.profile("laplace", {"scale": float(s)}, epsilon=e, dim=20, linf=1.0)
        less = dpjax.profile("laplace", {"scale": float(s) * (1 - 1e-3)}, epsilon=e, dim=20,
                             linf=1.0)
        assert float(at) <= k_delta < float(less)
    # T compositions of pure DP: basic composition
    t = dpjax.calibrate("laplace", epsilon=1.0, delta=0.0, l1=1.0, compositions=5)
    assert float(t.params["scale"]) == pytest.approx(5.0)


def test_k_dim_profile_within_the_pure_dp_dominating_bound():
    # randomized response with eps0 = Delta_1 / b dominates every eps0-DP mechanism, so the
    # certified K-dim profile is at most that bound (the PLD engine can only tighten it)
    eps = np.array([0.0, 0.5, 1.0])
    d = dpjax.profile("laplace", {"scale": 2.0}, epsilon=eps, dim=2, l1=2.0)
    eps0 = 1.0
    rr = (np.exp(eps0) - np.exp(eps)) / (1 + np.exp(eps0))
    assert np.all(d <= rr * (1 + 1e-14)) and d[-1] == 0.0
    assert np.all(np.diff(d) <= 0)
    # account inverts profile (certified: the epsilon returned is not below the one profiled)
    e = dpjax.account("laplace", {"scale": 2.0}, delta=float(d[1]), dim=2, l1=2.0)
    assert 0.5 - 1e-6 <= e <= 0.5 + 1e-3


def test_epsilon_inverse():
    # the epsilon is certified: rounded up, and aimed at delta (1 - MARGIN)
    assert 0.5 <= float(epsilon_laplace(0.0, 2.0, 1.0)) <= 0.5 * (1 + 2.0**-49)
    e = float(epsilon_laplace(1e-3, 1.0, 1.0))
    assert 1e-3 * (1 - 2e-10) <= float(delta_laplace(e, 1.0, 1.0)) <= 1e-3


@given(eps=st.floats(0, 5), de=st.floats(1e-3, 2), b=st.floats(0.05, 20), f=st.floats(1.001, 4))
def test_property_monotone(eps, de, b, f):
    d0 = float(log_delta_laplace(eps, b, 1.0))
    assert float(log_delta_laplace(eps + de, b, 1.0)) <= d0
    assert float(log_delta_laplace(eps, b * f, 1.0)) <= d0


@given(eps=st.floats(0.0, 10.0), log10_delta=st.floats(-30.0, -0.31))
def test_property_calibration_certified(eps, log10_delta):
    delta = 10.0**log10_delta
    cal = dpjax.calibrate("laplace", epsilon=eps, delta=delta, l1=1.0)
    assert mp_delta_integral(eps, float(cal.params["scale"]), 1.0) <= delta * (1 + 1e-12)


def test_infeasible():
    with pytest.raises(dpjax.InfeasibleTargetError, match="epsilon = delta = 0"):
        dpjax.calibrate("laplace", epsilon=0.0, delta=0.0, l1=1.0)
