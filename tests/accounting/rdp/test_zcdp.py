"""zCDP -> (eps, delta) conversions: Bun-Steinke and Canonne-Kamath-Steinke."""

import numpy as np
import pytest

from dpjax.accounting import (
    delta_from_zcdp,
    delta_gaussian,
    epsilon_from_zcdp,
    epsilon_from_zcdp_bun_steinke,
    epsilon_gaussian,
    rho_gaussian,
)


@pytest.mark.parametrize("rho", [0.001, 0.05, 0.5, 3.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-8, 1e-20])
def test_conversions_are_valid_and_ordered(rho, delta):
    bs = float(epsilon_from_zcdp_bun_steinke(rho, delta))
    cks = float(epsilon_from_zcdp(rho, delta))
    # the Gaussian with rho = 1 / (2 sigma^2) attains rho-zCDP exactly: its exact epsilon is a
    # lower bound for any valid conversion
    sigma = 1.0 / np.sqrt(2 * rho)
    exact = float(epsilon_gaussian(delta, sigma, 1.0))
    assert exact <= cks * (1 + 1e-9) <= bs * (1 + 1e-9)


def test_delta_from_zcdp_upper_bounds_gaussian_and_inverts():
    sigma = 2.0
    rho = float(rho_gaussian(sigma, 1.0))
    for eps in [0.1, 1.0, 3.0]:
        d = float(delta_from_zcdp(rho, eps))
        assert d >= float(delta_gaussian(eps, sigma, 1.0))
        assert abs(float(epsilon_from_zcdp(rho, d)) - eps) < 1e-3 * eps + 1e-6


def test_bun_steinke_closed_form():
    assert float(epsilon_from_zcdp_bun_steinke(0.5, np.exp(-2.0))) == pytest.approx(0.5 + 2.0)
