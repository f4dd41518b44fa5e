"""Flipped Huber DP-SGD accounting: Theorem 9 zCDP, Poisson-subsampled RDP, calibration."""

import math

import mpmath
import numpy as np

from dpjax.accounting.rdp.subsampled_gaussian import (
    gaussian_log_moments,
    gaussian_rdp_epsilon,
    rdp_epsilon,
)
from dpjax.train.flipped_huber import (
    calibrate_flipped_huber,
    dp_sgd_epsilon_flipped_huber,
    subsampled_log_moments,
    zcdp_parameters,
)


def test_gaussian_limit_matches_exact_moments():
    # alpha = 0 is N(0, gamma^2): without subsampling its RDP is exact (a eta), equal to the
    # Gaussian's on the same (integer) orders; the Gaussian's fractional orders only improve
    lam, log_a = gaussian_log_moments(1.7, 1.0)
    for steps in (1, 30):
        ours = dp_sgd_epsilon_flipped_huber(0.0, 1.7, 50, 1.0, 1.0, steps, 1e-6)
        same_orders = rdp_epsilon(lam, steps * log_a, 1e-6)
        assert math.isclose(ours, same_orders, rel_tol=1e-9)
        assert gaussian_rdp_epsilon(1.7, 1.0, steps, 1e-6) <= same_orders


def test_subsampled_bound_is_above_the_exact_gaussian_moments():
    # the general bound must dominate the exact subsampled-Gaussian moments (alpha = 0)
    lam, ours = subsampled_log_moments(*zcdp_parameters(0.0, 1.2, 10), 0.05)
    lam_g, exact = gaussian_log_moments(1.2, 0.05)
    np.testing.assert_array_equal(lam, lam_g)
    assert np.all(ours >= exact * (1 - 1e-12))


def test_subsampled_bound_formula_against_mpmath():
    xi, eta, q = 0.3, 0.4, 0.02
    lam, ours = subsampled_log_moments(xi, eta, q)
    mp = mpmath.mp
    mp.dps = 40
    for a in (2, 5, 17):
        e = lambda l: xi + l * eta  # noqa: E731
        s = (1 - mp.mpf(q)) ** (a - 1) * (1 + (a - 1) * mp.mpf(q))
        s += mp.binomial(a, 2) * mp.mpf(q) ** 2 * (1 - mp.mpf(q)) ** (a - 2) * mp.e ** e(2)
        for l in range(3, a + 1):  # noqa: E741
            m = max(3 * mp.e ** ((l - 1) * e(l)), mp.e ** (l * e(l + 1)))
            s += mp.binomial(a, l) * mp.mpf(q) ** l * (1 - mp.mpf(q)) ** (a - l) * m
        ref = min(float(mp.log(s)), (a - 1) * e(a))
        i = int(np.flatnonzero(lam == a - 1)[0])
        assert ref <= ours[i] <= ref + 1e-12 * max(1.0, abs(ref))


def test_zcdp_worst_shift_spreads_evenly():
    rng = np.random.default_rng(0)
    d, alpha, c = 20, 0.1, 1.0
    xi, _ = zcdp_parameters(alpha, 1.0, d, c)
    for _ in range(200):
        v = np.abs(rng.normal(size=d)) ** rng.uniform(0.2, 3)
        v *= c / np.linalg.norm(v)
        r = alpha**2 - np.maximum(alpha - v, 0) ** 2
        assert np.sum(r) / 2 <= xi * (1 + 1e-12)


def test_calibration_is_certified_and_no_worse_than_gaussian():
    alpha, gamma, var, eps_at = calibrate_flipped_huber(5, 1.0, 1.0, 1, 4.0, 1e-5)
    assert eps_at <= 4.0
    assert dp_sgd_epsilon_flipped_huber(alpha, gamma, 5, 1.0, 1.0, 1, 1e-5) == eps_at
    assert alpha > 0  # at this target the Laplace centre pays
    gauss = dp_sgd_epsilon_flipped_huber(0.0, math.sqrt(var), 5, 1.0, 1.0, 1, 1e-5)
    assert gauss > 4.0  # a Gaussian of the same variance is not certified
