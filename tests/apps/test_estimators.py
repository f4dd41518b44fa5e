"""DPLasso / DPLogisticRegression: privacy parameters are the calibrated ones; bad input errors."""

import numpy as np
import pytest

from dpjax.apps import DPLasso, DPLogisticRegression, calibrate_dpcd_noise


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (120, 3))
    return X, X @ np.array([1.0, 0.0, -0.5]), (X[:, 0] > 0).astype(int)


def test_privacy_parameters_are_the_calibrated_ones(data):
    X, y, _ = data
    m = DPLasso(epsilon=1.5, delta=1e-6, lam=0.01, feature_bound=2.0, passes=4, clip=0.5,
                random_state=3).fit(X, y)
    unit = calibrate_dpcd_noise(1.5, 1e-6, 3, 4, "gaussian")
    assert m.noise_ == unit and (m.epsilon_, m.delta_) == (unit.epsilon, 1e-6)
    # lambda_j = 2 C_j / n with C_j = clip * sqrt(M_j), M_j = B^2 for the squared loss
    np.testing.assert_allclose(m.sensitivities_, 2 * 0.5 * 2.0 / 120)
    assert m.epsilon_ <= 1.5 and m.predict(X).shape == (120,)


def test_logistic_classes_and_flipped_huber(data):
    X, _, c = data
    m = DPLogisticRegression(epsilon=4.0, lam=0.01, feature_bound=1.0, passes=3,
                             mechanism="flipped_huber").fit(X, np.where(c, "a", "b"))
    assert set(m.predict(X)) <= {"a", "b"} and m.epsilon_ <= 4.0
    np.testing.assert_allclose(m.sensitivities_, 2 * 0.5 / 120)  # M_j = B^2 / 4


def test_seed_changes_noise_only(data):
    X, y, _ = data
    kw = dict(epsilon=1.0, lam=0.01, feature_bound=1.0, passes=2)
    a = DPLasso(random_state=0, **kw).fit(X, y).coef_
    b = DPLasso(random_state=0, **kw).fit(X, y).coef_
    c = DPLasso(random_state=1, **kw).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


@pytest.mark.parametrize(
    "kwargs, X, y, match",
    [
        (dict(), None, None, "feature_bound"),
        (dict(feature_bound=0.0), None, None, "feature_bound"),
        (dict(feature_bound=1.0, lam=-1.0), None, None, "lam"),
        (dict(feature_bound=1.0, passes=0), None, None, "passes"),
        (dict(feature_bound=1.0, clip=np.inf), None, None, "clip"),
        (dict(feature_bound=1.0), np.ones(4), None, "X must be"),
        (dict(feature_bound=1.0), np.full((4, 2), np.nan), np.ones(4), "NaN"),
        (dict(feature_bound=1.0, epsilon=-1.0), None, None, "epsilon"),
    ],
)
def test_bad_input_errors(data, kwargs, X, y, match):
    X = data[0] if X is None else X
    y = data[1] if y is None else y
    with pytest.raises(ValueError, match=match):
        DPLasso(**kwargs).fit(X, y)


def test_logistic_needs_two_classes_and_predict_needs_fit(data):
    X = data[0]
    with pytest.raises(ValueError, match="two classes"):
        DPLogisticRegression(feature_bound=1.0).fit(X, np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="not fitted"):
        DPLasso(feature_bound=1.0).predict(X)
