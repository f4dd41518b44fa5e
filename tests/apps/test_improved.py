"""Improved (i.n.i.d.) DP-CD and the private smoothness estimate: non-private limit against
scikit-learn (the logistic case: test_coordinate_descent.py), the estimate's replace-one
sensitivity, certified and composed privacy."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso

from dpjax.accounting.rdp.zcdp import epsilon_from_zcdp
from dpjax.apps import DPLasso
from dpjax.apps.privacy import calibrate_dpcd_inid, calibrate_dpcd_noise
from dpjax.apps.smoothness import private_smoothness, smoothness_statistic
from dpjax.inid import design

IMPROVED = dict(allocation="inid", smoothness="private")


def _scaled(X):
    return X / np.abs(X).max(axis=0)


def test_improved_nonprivate_lasso_matches_sklearn():
    X, y = load_diabetes(return_X_y=True)
    X, y = _scaled(X), (y - y.mean()) / np.abs(y - y.mean()).max()
    lam = 1e-3
    ref = Lasso(alpha=lam, fit_intercept=False, tol=1e-14, max_iter=100_000).fit(X, y).coef_
    m = DPLasso(epsilon=None, lam=lam, feature_bound=1.0, passes=300, **IMPROVED).fit(X, y)
    assert np.count_nonzero(ref) < X.shape[1]  # the l1 term is active
    # the exact smoothness M_j = mean x_j^2 (not the bound) sets the steps
    np.testing.assert_allclose(m.smoothness_, np.mean(X**2, axis=0), rtol=1e-12)
    np.testing.assert_allclose(m.coef_, ref, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**31 - 1), st.floats(0.05, 10.0))
def test_replacing_one_row_moves_the_smoothness_statistic_by_at_most_its_sensitivity(
        n, seed, scale):
    rng = np.random.default_rng(seed)
    K = 4
    bound = scale * np.array([0.1, 1.0, 2.0, 5.0])
    X = rng.normal(size=(n, K)) * rng.exponential(3.0) * scale
    X2 = X.copy()
    X2[rng.integers(n)] = rng.standard_cauchy(K) * 100 * scale  # anything, unclipped
    s, lam = smoothness_statistic(X, bound)
    s2, lam2 = smoothness_statistic(X2, bound)
    np.testing.assert_array_equal(lam, lam2)
    np.testing.assert_allclose(lam, bound**2 / n, rtol=1e-15)
    assert np.all(np.abs(s - s2) <= lam * (1 + 1e-12))


def test_private_smoothness_noise_is_the_certified_laplace_design():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 3)) * [1.0, 0.5, 0.1]
    bound = np.array([1.0, 1.0, 0.5])
    est = private_smoothness(X, bound, 0.3, jax.random.key(4), curvature=0.25)
    des = design("laplace", bound**2 / 400, 0.3, 0.0)
    np.testing.assert_allclose(est.design.scales, des.scales, rtol=0)
    assert est.epsilon == des.epsilon <= 0.3
    # equal bounds on two coordinates: the paper's scale b^2 K / (N eps') on each (App. C)
    flat = private_smoothness(X, 1.0, 0.3, jax.random.key(4))
    np.testing.assert_allclose(flat.design.scales, 3 / (400 * 0.3), rtol=1e-9)
    # post-processing: M in [c * Laplace scale, c * b^2]
    lo, hi = 0.25 * np.asarray(des.scales), 0.25 * bound**2
    assert np.all((est.smoothness >= lo) & (est.smoothness <= hi))


def test_inid_noise_is_theorem_4_and_never_worse_than_proportional():
    lam = np.array([1.0, 0.3, 0.05, 0.05])
    nz = calibrate_dpcd_inid(0.8, 1e-6, lam, 7)
    rho = calibrate_dpcd_noise(0.8, 1e-6, 4, 7, "gaussian").eta
    # Theorem 4 with the per-pass share rho / L: sigma_i^2 = lambda_i ||lambda||_1 L / (2 rho)
    np.testing.assert_allclose(nz.scales**2, lam * lam.sum() * 7 / (2 * rho), rtol=1e-9)
    assert nz.rho == pytest.approx(7 * np.sum(lam**2 / (2 * nz.scales**2)), rel=1e-9)
    assert float(epsilon_from_zcdp(nz.rho, 1e-6)) <= nz.epsilon <= 0.8
    assert nz.mse == pytest.approx(lam.sum() ** 2 * 7 / (2 * rho), rel=1e-9)
    assert nz.mse < nz.mse_proportional  # ||lambda||_1^2 < K ||lambda||_2^2
    flat = calibrate_dpcd_inid(0.8, 1e-6, np.full(4, 0.2), 7)
    assert flat.mse == pytest.approx(flat.mse_proportional, rel=1e-9)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 3)) * [1.0, 0.3, 0.05]
    return X, X @ np.array([1.0, 0.0, -0.5])


def test_improved_privacy_parameters_are_the_certified_ones_and_include_the_estimate(data):
    X, y = data
    m = DPLasso(epsilon=1.2, delta=1e-6, lam=0.01, feature_bound=1.0, passes=4, clip=0.5,
                smoothness_fraction=0.25, random_state=3, **IMPROVED).fit(X, y)
    est = m.smoothness_estimate_
    assert est.epsilon == design("laplace", np.full(3, 1 / 300), 0.3, 0.0).epsilon
    np.testing.assert_array_equal(m.smoothness_, est.smoothness)
    steps, clips = 1 / m.smoothness_, 0.5 * np.sqrt(m.smoothness_)
    np.testing.assert_allclose(m.sensitivities_, 2 * clips / 300, rtol=1e-15)
    target = (1.2 - est.epsilon) * (1 - 2.0**-40)
    nz = calibrate_dpcd_inid(target, 1e-6, steps * m.sensitivities_, 4)
    np.testing.assert_array_equal(m.noise_.scales, nz.scales)
    assert m.noise_.epsilon == nz.epsilon and m.delta_ == 1e-6
    # the total: basic composition of the estimate and the run, within the target
    assert est.epsilon + nz.epsilon <= m.epsilon_ <= 1.2
    assert m.epsilon_ - (est.epsilon + nz.epsilon) < 1e-12
    # independent re-accounting from the gradient-space noise actually used
    rho = 4 * np.sum((m.sensitivities_ / m.noise_std_) ** 2) / 2
    assert float(epsilon_from_zcdp(rho, 1e-6)) + est.epsilon <= 1.2


def test_private_smoothness_with_proportional_noise_composes_too(data):
    X, y = data
    m = DPLasso(epsilon=1.0, lam=0.01, feature_bound=1.0, passes=3, smoothness="private",
                random_state=1).fit(X, y)
    unit = calibrate_dpcd_noise((1.0 - m.smoothness_epsilon_) * (1 - 2.0**-40), 1e-5, 3, 3,
                                "gaussian")
    assert m.noise_ == unit and m.smoothness_epsilon_ == pytest.approx(0.1)
    assert m.smoothness_epsilon_ + unit.epsilon <= m.epsilon_ <= 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(allocation="inid", smoothness="private"), "feature_bound"),
        (dict(feature_bound=1.0, allocation="spr"), "allocation"),
        (dict(feature_bound=1.0, allocation="inid", mechanism="flipped_huber"), "gaussian"),
        (dict(feature_bound=1.0, smoothness="data"), "smoothness"),
        (dict(feature_bound=1.0, smoothness="private", smoothness_fraction=0.0),
         "smoothness_fraction"),
        (dict(feature_bound=1.0, smoothness="private", smoothness_fraction=1.0),
         "smoothness_fraction"),
    ],
)
def test_improved_bad_input_errors(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        DPLasso(**kwargs).fit(*data)


@pytest.mark.parametrize("profile", [[], [1.0, 0.0], [1.0, np.nan], [[1.0]]])
def test_inid_calibration_rejects_bad_profiles(profile):
    with pytest.raises(ValueError, match="profile"):
        calibrate_dpcd_inid(1.0, 1e-5, profile, 3)
