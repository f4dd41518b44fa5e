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


def test_pure_dp_epsilon_is_one_program_with_the_eager_bits():
    """``epsilon_pure_dp`` compiles one program per input shape (op by op it was nine), and
    the fused program rounds as the eager operations do: the same bits on 4,000 targets
    (with a fused multiply-add a sum of products could round differently)."""
    import inspect

    from dpjax.accounting.laplace import epsilon_pure_dp

    rng = np.random.default_rng(1)
    delta = 10.0 ** rng.uniform(-300, -0.01, 4000)
    eps0 = 10.0 ** rng.uniform(-6, 3, 4000)
    core = inspect.unwrap(epsilon_pure_dp, stop=lambda f: hasattr(f, "_cache_size"))
    core.clear_cache()
    fused = np.asarray(epsilon_pure_dp(delta, eps0))
    assert core._cache_size() == 1
    with jax.disable_jit():
        eager = np.asarray(epsilon_pure_dp(delta, eps0))
    np.testing.assert_array_equal(fused, eager)
    # the inverse of the randomized-response profile at delta (1 - MARGIN), in NumPy, up to
    # the rounding up (relative 1e-14)
    from dpjax.certificate import MARGIN

    level = delta * (1.0 - MARGIN) * (1.0 + np.exp(-eps0))
    with np.errstate(divide="ignore"):  # level >= 1: log1p(-1) = -inf, epsilon 0
        ref = np.maximum(eps0 + np.log1p(-np.minimum(level, 1.0)), 0.0)
    np.testing.assert_allclose(fused, ref, rtol=1e-13)
    assert np.all(fused >= ref * (1 - 1e-15))


def test_exact_1d_profile_and_epsilon_are_one_program_with_the_eager_bits():
    """``delta_laplace`` and ``epsilon_laplace`` (one jitted program each) give the bits of
    their operations run one by one, at random points and a few ulps from the pure-DP
    boundary, where the compensated quotient (a two-product) decides the answer."""
    from dpjax.accounting.laplace import delta_laplace, epsilon_laplace

    rng = np.random.default_rng(2)
    n = 3000
    delta = 10.0 ** rng.uniform(-300, -0.01, n)
    scale = np.exp(rng.uniform(-5, 5, n))
    sens = np.exp(rng.uniform(-3, 3, n))
    eps = rng.uniform(0.01, 5, n)
    edge = np.nextafter(sens / eps, rng.choice([0.0, np.inf], n))
    for fn, args in ((epsilon_laplace, (delta, scale, sens)), (delta_laplace, (eps, scale, sens)),
                     (delta_laplace, (eps, edge, sens))):
        fused = np.asarray(fn(*args))
        with jax.disable_jit():
            eager = np.asarray(fn(*args))
        np.testing.assert_array_equal(fused, eager)
