"""The exact 1-D privacy profiles of OSGT, truncated Laplace and staircase never increase
in epsilon (one property test over the three families; hypothesis draws their shapes)."""

import jax
import pytest
from _helpers import assert_nonincreasing
from hypothesis import given
from hypothesis import strategies as st

from dpjax.accounting.osgt import log_delta_osgt
from dpjax.accounting.staircase import log_delta_staircase
from dpjax.accounting.truncated_laplace import log_delta_truncated_laplace

# each family: its jitted log-profile (eps, *shape, sensitivity) and a strategy for
# (shape..., sensitivity) and the epsilon range drawn
_osgt, _tl, _stair = (
    jax.jit(f) for f in (log_delta_osgt, log_delta_truncated_laplace, log_delta_staircase)
)
FAMILIES = {
    "osgt": (
        lambda e, p: _osgt(e, p[0], p[1], 1.0),
        st.tuples(st.floats(0.0, 50.0), st.floats(0.05, 20.0)),
        10.0,
    ),
    "truncated_laplace": (
        lambda e, p: _tl(e, p[0], p[1] * p[0], 1.0),  # (lambda, bound / lambda)
        st.tuples(st.floats(0.05, 10.0), st.floats(0.05, 50.0)),
        10.0,
    ),
    "staircase": (
        lambda e, p: _stair(e, p[0], 1.0, p[1], p[2]),  # (decay, gamma, sensitivity)
        st.tuples(st.floats(0.05, 5.0), st.floats(0.0, 1.0), st.floats(0.1, 1.5)),
        6.0,
    ),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@given(data=st.data())
def test_profile_monotone_in_epsilon(family, data):
    log_delta, shapes, eps_max = FAMILIES[family]
    params = data.draw(shapes)
    e1, e2 = (data.draw(st.floats(0.0, eps_max)) for _ in range(2))
    lo, hi = min(e1, e2), max(e1, e2)
    assert_nonincreasing(float(log_delta(lo, params)), float(log_delta(hi, params)))


def test_gaussian_and_flipped_huber_through_the_erfcx_zero_window():
    """jax's erfcx is 0 for x / sqrt 2 in ~[26.54, 26.64]; the Gaussian profile's tail step at
    a = eps / mu - mu / 2 in ~[37.54, 37.68] was NaN there, so delta = 1 was reported (fail
    closed, but useless) and the flipped Huber inverse returned eps = inf at 15 of 40 deltas.
    Dense epsilon grids across that window: finite, non-increasing, tiny."""
    import numpy as np

    import dpjax
    from dpjax.accounting.flipped_huber import log_delta_flipped_huber
    from dpjax.accounting.gaussian import log_delta_gaussian

    eps = np.linspace(37.0, 39.0, 401)  # sigma = l2 = 1: a = eps - 1/2
    log_d = np.asarray(jax.jit(log_delta_gaussian)(eps, 1.0, 1.0))
    assert np.all(log_d < -670.0) and np.all(np.diff(log_d) < 0.0)  # delta(37) ~ 1e-293
    assert np.all(dpjax.profile("gaussian", {"sigma": 1.0}, epsilon=eps, l2=1.0) < 1e-290)

    alpha, gamma = 20.285045542008938, 6.369465525738301  # Gaussian tails: a = eps gamma - ...
    eps = np.linspace(5.8, 6.0, 401)
    log_d = np.asarray(jax.jit(log_delta_flipped_huber)(eps, alpha, gamma, 1.0))
    assert np.all(log_d < -600.0) and np.all(np.diff(log_d) < 0.0)
    params = {"alpha": alpha, "gamma": gamma}
    delta = np.geomspace(1e-300, 0.4, 40)
    got = dpjax.account("flipped-huber", params, delta=delta, linf=1.0)
    assert np.all(np.isfinite(got))
    assert np.all(dpjax.profile("flipped-huber", params, epsilon=got, linf=1.0) <= delta)
