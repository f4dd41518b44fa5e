"""DPPCA: profile, non-private limit, calibrated privacy, bad inputs."""

import numpy as np
import pytest

from dpjax.apps import DPPCA, subspace_error, upper_triangle_profile
from dpjax.inid import design


def test_profile_bounds_every_replacement():
    rng = np.random.default_rng(0)
    B = np.array([1.0, 2.0, 0.5])
    lam = upper_triangle_profile(B)
    iu = np.triu_indices(3)
    for _ in range(200):
        x, z = rng.uniform(-B, B), rng.uniform(-B, B)
        assert np.all(np.abs(np.outer(x, x)[iu] - np.outer(z, z)[iu]) <= lam + 1e-15)


def test_nonprivate_limit_is_exact_pca_and_privacy_is_the_design():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (300, 4)) * [1.0, 0.8, 0.1, 0.05]
    exact = np.linalg.svd(X, full_matrices=False)[2][:2].T
    p = DPPCA(2, epsilon=None, feature_bound=1.0).fit(X)
    assert subspace_error(p.components_.T, exact) < 1e-12 and p.epsilon_ == np.inf
    q = DPPCA(2, epsilon=2.0, delta=1e-6, feature_bound=1.0).fit(X)
    ref = design("gaussian", upper_triangle_profile(np.ones(4)), 2.0, 1e-6)
    np.testing.assert_allclose(q.scales_, ref.scales)
    assert (q.epsilon_, q.delta_) == (2.0, 1e-6) and ref.delta_at_params <= 1e-6


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(), "feature_bound"),
        (dict(feature_bound=1.0, n_components=5), "n_components"),
        (dict(feature_bound=1.0, allocation="x"), "allocation"),
    ],
)
def test_bad_inputs(kwargs, match):
    kw = dict(n_components=2) | kwargs
    with pytest.raises(ValueError, match=match):
        DPPCA(**kw).fit(np.ones((5, 4)))
