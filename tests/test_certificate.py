"""dpjax.certificate: the NumPy twins follow the same rules as their jitted originals."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.certificate import (
    LOG_TINY,
    TINY,
    certify_scale,
    certify_scale_host,
    error_bound,
    log_target,
    log_target_host,
    reported_delta,
    reported_delta_host,
)

DELTAS = np.array([0.0, 1e-300, 1e-30, 1e-12, 1e-6, 1e-5, 0.1, 0.5, 0.999])


def test_log_target_host_is_log_target():
    got, want = log_target_host(DELTAS), np.asarray(log_target(jnp.asarray(DELTAS)))
    assert got[0] == want[0] == -np.inf
    np.testing.assert_allclose(got[1:], want[1:], rtol=2e-16, atol=0)
    assert np.all(np.exp(got[1:]) < DELTAS[1:])  # below the target: the margin is kept


@pytest.mark.parametrize("c", [0.0, 1e-14, 1e-13])
def test_reported_delta_host_is_reported_delta(c):
    log_d = np.array([np.nan, -np.inf, -1e4, LOG_TINY - 1.0, -700.0, math.log(1e-6),
                      -1e-12, 0.0, 3.0])
    bound = np.asarray(error_bound(jnp.where(jnp.isfinite(log_d), log_d, 0.0), c))
    got = reported_delta_host(log_d, bound)
    want = np.asarray(reported_delta(jnp.asarray(log_d), c))
    assert got[0] == want[0] == 1.0  # NaN fails closed
    assert got[1] == want[1] == 0.0  # only -inf reports 0
    assert got[2] == want[2] == got[3] == want[3] == TINY  # an underflow is never 0
    np.testing.assert_allclose(got[4:], want[4:], rtol=4e-16, atol=0)
    finite = np.isfinite(log_d)
    assert np.all(got[finite] >= np.minimum(np.exp(log_d[finite]), 1.0))  # upper bounds
    assert got[-1] == want[-1] == 1.0


def test_certify_scale_host_is_certify_scale():
    # a profile with log delta = -1 / s: the search's end fails its level by one rounding
    level = np.array([-1.0, -0.5, -0.25, -4.0])
    start = -1.0 / level * (1.0 - 2.0**-50)  # a few ulps short of the boundary
    start[-1] = 1.0  # this one is 4x short: beyond the nudges, never certified

    got = certify_scale_host(lambda s: -1.0 / s, start, level)
    want = certify_scale(lambda s: -1.0 / s, jnp.asarray(start), jnp.asarray(level))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, np.asarray(w))
    assert got[2].tolist() == [True, True, True, False]
    assert np.all(-1.0 / got[0][:3] <= level[:3])
