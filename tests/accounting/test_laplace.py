"""dpjax.accounting.laplace: the host (NumPy) profile against mpmath and its jitted original."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest

from dpjax.accounting.laplace import ERROR, log_delta_laplace, log_delta_laplace_host

mpmath.mp.dps = 50


@pytest.fixture(autouse=True)
def _x64():
    """The host kernels are float64_kernel-guarded, like the compiled ones."""
    with jax.enable_x64(True):
        yield


def test_host_profile_within_the_kernel_error():
    rng = np.random.default_rng(0)
    eps = rng.uniform(0, 5, 300)
    b = np.exp(rng.uniform(-3, 3, 300))
    # points a few ulps from the pure-DP boundary, where the gap cancels
    eps = np.concatenate([eps, [0.3, 1.0, 2.0]])
    b = np.concatenate([b, np.nextafter(1 / np.array([0.3, 1.0, 2.0]), 0)])
    log_d = log_delta_laplace_host(eps, b, 1.0)
    for e, s, ld in zip(eps, b, log_d, strict=True):
        with mpmath.workdps(50):  # e - 1/s cancels to ~1e-17 near the boundary
            x = (mpmath.mpf(float(e)) - 1 / mpmath.mpf(float(s))) / 2
            if x >= 0:
                assert ld == -np.inf
                continue
            ref = mpmath.log(-mpmath.expm1(x))
        assert abs(float(ld - ref)) <= ERROR * (1 + abs(float(ref))), (e, s)


def test_host_twin_matches_the_jitted_kernel():
    rng = np.random.default_rng(1)
    eps = np.concatenate([rng.uniform(0, 5, 200), [0.0, 1.0, 2.0]])
    b = np.concatenate([np.exp(rng.uniform(-3, 3, 200)), [1.0, 0.5, np.nextafter(0.5, 0)]])
    host = log_delta_laplace_host(eps, b, 1.0)
    jitted = np.asarray(log_delta_laplace(jnp.asarray(eps), jnp.asarray(b), 1.0))
    assert np.array_equal(np.isneginf(host), np.isneginf(jitted))  # pure DP at the same points
    finite = np.isfinite(host)
    # both within ERROR of the exact value, so within twice it of each other
    assert np.all(np.abs(host[finite] - jitted[finite])
                  <= 2 * ERROR * (1 + np.abs(jitted[finite])))
