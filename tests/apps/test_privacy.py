"""DP-CD noise: certified epsilon, Theorem 9 accounting, flipped Huber never worse than Gaussian."""

import numpy as np
import pytest

from dpjax.accounting.rdp.zcdp import epsilon_from_zcdp, epsilon_from_zcdp_bun_steinke
from dpjax.apps.privacy import calibrate_dpcd_noise, r_one, run_zcdp
from dpjax.noise.flipped_huber import standard_variance


def test_r_one_piecewise():
    a = np.array([0.0, 0.5, 1.0, 2.0, 5.0])
    np.testing.assert_allclose(r_one(a), [0.0, 0.25, 1.0, 3.0, 9.0])


@pytest.mark.parametrize("mechanism", ["gaussian", "flipped_huber"])
def test_calibrated_noise_meets_target_and_is_tight(mechanism):
    u = calibrate_dpcd_noise(2.0, 1e-6, 7, 4, mechanism)
    xi, eta = run_zcdp(u.alpha, u.gamma, 28)
    assert (xi, eta) == pytest.approx((u.xi, u.eta), rel=1e-12)
    eps = float(xi + epsilon_from_zcdp(eta, 1e-6))
    assert eps <= u.epsilon <= 2.0
    assert u.epsilon > 2.0 * (1 - 1e-6)  # least noise: the budget is used up
    assert u.variance == pytest.approx(u.gamma**2 * float(standard_variance(u.alpha / u.gamma)))


def test_gaussian_closed_form():
    # Gaussian: eta = KL / (2 g^2) is the rho solving epsilon_from_zcdp(rho, delta) = epsilon
    u = calibrate_dpcd_noise(1.0, 1e-5, 3, 2, "gaussian")
    assert u.alpha == 0.0 and float(epsilon_from_zcdp(u.eta, 1e-5)) == pytest.approx(1.0)
    # never more noise than with the paper's Bun-Steinke conversion
    assert float(epsilon_from_zcdp_bun_steinke(u.eta, 1e-5)) >= 1.0


@pytest.mark.parametrize("epsilon", [0.5, 8.0])
def test_flipped_huber_never_worse_than_gaussian(epsilon):
    g = calibrate_dpcd_noise(epsilon, 1e-5, 5, 3, "gaussian")
    f = calibrate_dpcd_noise(epsilon, 1e-5, 5, 3, "flipped_huber")
    assert f.variance <= g.variance * (1 + 1e-9) and f.epsilon <= epsilon


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.0, 1e-5, 3, 2, "gaussian"), "epsilon"),
        ((1.0, 1.0, 3, 2, "gaussian"), "delta"),
        ((1.0, 1e-5, 0, 2, "gaussian"), "num_coordinates"),
        ((1.0, 1e-5, 3, 1.5, "gaussian"), "passes"),
        ((1.0, 1e-5, 3, 2, "laplace"), "mechanism"),
    ],
)
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        calibrate_dpcd_noise(*args)
