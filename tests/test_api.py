"""The façade ``dpjax.calibrate / profile / account``: argument validation, broadcasting, x64.

(Sensitivity derivation and the unknown-name messages are in test_sensitivity.py; the
float32 guard of the raw kernels in test_float32.py.)
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dpjax
from dpjax.accounting.gaussian import delta_gaussian


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(epsilon=[0.5, -1.0], delta=1e-6, l2=1.0),
         r"epsilon must be finite and >= 0, got .*-1\.0"),
        (dict(epsilon=[0.5, 1.0], delta=[1e-6, 1e-5, 1e-4], l2=1.0),
         r"shapes do not broadcast together: epsilon\(2,\), delta\(3,\)"),
        (dict(epsilon="0.3", delta=1e-6, l2=1.0), "epsilon must be a real number"),
        (dict(epsilon=1.0, delta=1e-6, l2=1.0, compositions=0), "compositions must be an"),
        (dict(epsilon=1.0, delta=1e-6, l2=1.0, compositions=2.0), "compositions must be an"),
        (dict(epsilon=1.0, delta=1e-6, l2=1.0, sampling_rate=0.0),
         r"sampling_rate must be .* \(0, 1\]"),
        (dict(epsilon=1.0, delta=1e-6, l2=1.0, sampling_rate=[0.1, 0.2]), "single number"),
        (dict(epsilon=1.0, delta=1e-6, l2=1.0, condition="sufficient"),
         "gaussian supports condition exact, got 'sufficient'"),
        (dict(epsilon=1.0, delta=1e-6, dim=0, l2=1.0), "dim must be an integer >= 1"),
        (dict(epsilon=1.0, delta=1e-6, l2=[1.0, 2.0]), "l2 must be a single number"),
    ],
)
def test_calibrate_rejects_bad_arguments_naming_them(kw, match):
    with pytest.raises(ValueError, match=match):
        dpjax.calibrate("gaussian", **kw)


def test_profile_and_account_default_to_unit_sensitivity_in_one_dimension_only():
    assert dpjax.profile("gaussian", {"sigma": 2.0}, epsilon=0.5) == dpjax.profile(
        "gaussian", {"sigma": 2.0}, epsilon=0.5, l2=1.0
    )
    with pytest.raises(ValueError, match="with dim > 1 give a sensitivity"):
        dpjax.profile("gaussian", {"sigma": 2.0}, epsilon=0.5, dim=3)
    with pytest.raises(ValueError, match="give a sensitivity: l1, l2 or linf"):
        dpjax.calibrate("gaussian", epsilon=0.5, delta=1e-6)


def test_targets_broadcast_and_each_element_is_its_own_calibration():
    eps = np.array([[0.3], [1.0]])
    delta = np.array([1e-6, 1e-8, 1e-10])
    cal = dpjax.calibrate("gaussian", epsilon=eps, delta=delta, l2=2.0)
    for name in ("variance", "mse", "epsilon", "delta", "delta_at_params"):
        assert np.shape(getattr(cal, name)) == (2, 3)
    assert cal.params["sigma"].shape == (2, 3) and cal.params["sigma"].dtype == np.float64
    for i in range(2):
        for j in range(3):
            one = dpjax.calibrate("gaussian", epsilon=eps[i, 0], delta=delta[j], l2=2.0)
            assert float(one.params["sigma"]) == float(cal.params["sigma"][i, j])
            assert cal.delta_at_params[i, j] <= delta[j]
    assert np.all(np.diff(cal.params["sigma"], axis=0) < 0)  # larger epsilon: less noise
    assert np.all(np.diff(cal.params["sigma"], axis=1) > 0)  # smaller delta: more noise


def test_scalars_give_floats_and_arrays_give_arrays():
    one = dpjax.profile("laplace", {"scale": 1.0}, epsilon=0.5, l1=1.0)
    many = dpjax.profile("laplace", {"scale": 1.0}, epsilon=[0.0, 0.5, 1.0], l1=1.0)
    assert isinstance(one, float) and many.shape == (3,) and many[1] == one
    assert np.all(np.diff(many) < 0) and many[-1] == 0.0  # pure DP at epsilon = Delta / b
    # parameters broadcast against epsilon too
    per_sigma = dpjax.profile("gaussian", {"sigma": [1.0, 2.0, 4.0]}, epsilon=1.0, l2=1.0)
    np.testing.assert_array_equal(
        per_sigma, [dpjax.profile("gaussian", {"sigma": s}, epsilon=1.0, l2=1.0) for s in (1, 2, 4)]
    )
    eps = dpjax.account("gaussian", {"sigma": 1.0}, delta=[1e-5, 1e-8])
    assert eps.shape == (2,) and eps[0] < eps[1]


def test_account_inverts_profile_with_a_certificate():
    eps = dpjax.account("gaussian", {"sigma": 1.5}, delta=1e-6, compositions=4, l2=1.0)
    # an independent evaluation of the exact profile at the returned epsilon (sqrt(T) l2)
    with jax.enable_x64(True):
        exact = float(delta_gaussian(eps, 1.5, 2.0))
    assert exact <= 1e-6 and float(delta_gaussian(eps * (1 - 1e-6), 1.5, 2.0)) > 1e-6 * 0.999
    back = dpjax.account("gaussian", {"sigma": 1.5}, epsilon=eps, compositions=4, l2=1.0)
    assert back == dpjax.profile("gaussian", {"sigma": 1.5}, epsilon=eps, compositions=4, l2=1.0)


@pytest.mark.parametrize("kw", [dict(compositions=100), dict(sampling_rate=0.01),
                                dict(l2=2.0), dict(dim=3), dict(params={"sigma": 1.0})])
def test_an_event_with_a_query_argument_is_refused_not_accounted_as_one_use(kw):
    # the event carries its uses: T = 100 would otherwise be silently the one-use epsilon
    from dpjax.accounting import events as ev

    with pytest.raises(ValueError, match=f"event carries its uses.*{next(iter(kw))}"):
        dpjax.account(ev.Gaussian(1.0), delta=1e-6, **kw)


def test_x64_is_scoped_to_the_call():
    with jax.enable_x64(False):
        cal = dpjax.calibrate("laplace", epsilon=[0.5, 1.0], delta=1e-8, l1=1.0)
        delta = dpjax.profile("gaussian", {"sigma": 2.0}, epsilon=[0.5, 1.0], l2=1.0)
        # the caller's setting is untouched: default floats are float32 again after the call
        assert jnp.asarray(1.0).dtype == jnp.float32
        assert not dpjax.numerics.x64_enabled()
    assert cal.params["scale"].dtype == np.float64 and delta.dtype == np.float64
    assert jnp.asarray(1.0).dtype == jnp.float64  # the tests' global x64 is untouched too
