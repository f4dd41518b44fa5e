"""The host (NumPy, exact rational gap) 1-D Laplace calibration against mpmath and JAX."""

import jax
import mpmath
import numpy as np
import pytest

from dpjax.accounting.laplace import log_delta_laplace_host
from dpjax.calibration.laplace import scale_laplace_1d, scale_laplace_1d_host
from dpjax.certificate import certify_scale_host, log_target_host

mpmath.mp.dps = 50


@pytest.fixture(autouse=True)
def _x64():
    """The host kernels are float64_kernel-guarded, like the compiled ones."""
    with jax.enable_x64(True):
        yield
E, D = (v.ravel() for v in np.meshgrid(
    np.geomspace(1e-3, 50.0, 12), np.concatenate([[0.0], np.geomspace(1e-300, 0.5, 9)])))


def test_host_matches_the_compiled_path():
    b_h, d_h, ok_h = scale_laplace_1d_host(E, D, 1.0)
    with jax.enable_x64(True):
        b_j, d_j, ok_j = (np.asarray(v) for v in scale_laplace_1d(E, D, 1.0))
    assert ok_h.all() and ok_j.all()
    # the same closed form, rounded by NumPy instead of XLA: within one ulp
    np.testing.assert_allclose(b_h, b_j, rtol=2.3e-16, atol=0)
    assert (d_h <= D).all()
    # the closed form exactly: b (1 + 2^-52) overshoots the least certified scale
    np.testing.assert_allclose(b_h, 1.0 / (E - 2 * np.log1p(-D)), rtol=1e-9)


def test_certify_scale_host_nudges_a_rounding_failure():
    # delta(b) decreases in b; start one ulp below the least feasible scale
    level = log_target_host(np.array([1e-6]))
    exact = 1.0 / (0.3 - 2 * np.log1p(-1e-6 * (1 - 1e-10)))
    start = np.array([np.nextafter(np.nextafter(exact, 0), 0)])
    assert log_delta_laplace_host(0.3, start, 1.0)[0] > level[0]  # fails before the nudges
    b, log_d, ok = certify_scale_host(lambda s: log_delta_laplace_host(0.3, s, 1.0), start, level)
    assert ok.all() and b[0] > start[0] and log_d[0] <= level[0]
