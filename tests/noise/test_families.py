"""Gaussian and Laplace noise objects: densities, tails, quantiles, samplers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as ss

import dpjax
from dpjax.noise import Gaussian, Laplace


@pytest.mark.parametrize(
    "noise,ref",
    [(Gaussian(2.0), ss.norm(scale=2.0)), (Laplace(1.5), ss.laplace(scale=1.5))],
)
def test_against_scipy(noise, ref):
    x = jnp.array([-30.0, -3.0, -0.1, 0.0, 0.7, 5.0, 40.0])
    np.testing.assert_allclose(noise.logpdf(x), ref.logpdf(np.asarray(x)), rtol=1e-13)
    np.testing.assert_allclose(noise.cdf(x), ref.cdf(np.asarray(x)), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(noise.sf(x), ref.sf(np.asarray(x)), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(noise.log_sf(x), ref.logsf(np.asarray(x)), rtol=1e-12)
    u = jnp.array([1e-300, 1e-10, 0.2, 0.5, 0.9, 1 - 1e-12])
    np.testing.assert_allclose(noise.quantile(u), ref.ppf(np.asarray(u)), rtol=1e-9)
    assert float(noise.variance) == pytest.approx(ref.var(), rel=1e-14)


@pytest.mark.parametrize("noise", [Gaussian(2.0), Laplace(1.5)])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_sampler_ks_and_moments(noise, dtype):
    x = noise.sample(jax.random.key(0), (200_000,), dtype=dtype)
    assert x.dtype == dtype
    x = np.asarray(x, dtype=np.float64)
    cdf = lambda v: np.asarray(noise.cdf(jnp.asarray(v)))
    stat = ss.kstest(x, cdf).statistic
    assert stat < 1.95 / np.sqrt(x.size)  # KS critical value at level 0.001
    assert abs(x.var() / float(noise.variance) - 1) < 0.02


def test_privacy_loss():
    g = Gaussian(2.0)
    t = jnp.array([-1.0, 0.0, 3.0])
    np.testing.assert_allclose(g.privacy_loss(t, 1.0), g.logpdf(t) - g.logpdf(t + 1.0), rtol=1e-14)
    lap = Laplace(0.5)
    np.testing.assert_allclose(lap.privacy_loss(t, 1.0), lap.logpdf(t) - lap.logpdf(t + 1.0),
                               rtol=1e-14)


def test_make_and_pytree():
    noise = dpjax.noise.make("laplace", scale=2.0)
    assert isinstance(noise, Laplace)
    batched = jax.vmap(lambda s: Gaussian(s).variance)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(batched, [1.0, 4.0])
    leaves = jax.tree_util.tree_leaves(Gaussian(jnp.array(3.0)))
    assert len(leaves) == 1


_EVERY_FAMILY = [
    ("gaussian", {"sigma": 1.0}),
    ("laplace", {"scale": 1.0}),
    ("flipped-huber", {"alpha": 1.0, "gamma": 1.0}),
    ("osgt", {"vartheta": 1.0, "rho": 1.0}),
    ("truncated-laplace", {"scale": 1.0, "bound": 5.0}),
    ("staircase", {"decay": 0.5, "width": 1.0, "gamma": 0.5}),
]
_NOT_REAL_FLOAT = [jnp.int32, jnp.uint8, jnp.bool_, jnp.complex64, jnp.float8_e4m3fn, "int8"]


@pytest.mark.parametrize("name,params", _EVERY_FAMILY)
def test_sampler_refuses_non_float_dtypes(name, params):
    """Integer, boolean, complex or float8 output would round or misplace certified noise."""
    noise = dpjax.noise.make(name, **params)
    key = jax.random.key(0)
    bits = dpjax.noise.random_words(key, (6,), jnp.float32)
    for dtype in _NOT_REAL_FLOAT:
        with pytest.raises(TypeError, match=r"dtype must be a real floating type .*float32.*got "):
            noise.sample(key, (6,), dtype=dtype)
        with pytest.raises(TypeError, match=r"dtype must be a real floating type"):
            noise.from_bits(bits, dtype)
    with pytest.raises(TypeError, match=r"dtype must .* got 'not-a-dtype'"):
        noise.sample(key, (6,), dtype="not-a-dtype")
    # real floats still sample (every family and dtype: test_tails.py, test_flipped_huber.py)
    assert dpjax._validate.sample_dtype("bfloat16") == jnp.bfloat16


@pytest.mark.parametrize("dtype", _NOT_REAL_FLOAT)
def test_random_words_and_tail_floor_refuse_non_float_dtypes(dtype):
    with pytest.raises(TypeError, match=r"dtype must be a real floating type"):
        dpjax.noise.random_words(jax.random.key(0), (6,), dtype)
    with pytest.raises(TypeError, match=r"dtype must be a real floating type"):
        dpjax.noise.tail_floor(dtype)


def test_staircase_gamma_and_variance_against_mpmath_at_every_decay():
    """gamma*(epsilon) (Geng & Viswanath: (cbrt(b (1 + b) / 2) - b) / (1 - b), b = e^-eps)
    and the unit variance against 50-digit mpmath from 1e-3 to 2000 (the direct form gave
    NaN from epsilon = 710 on), the variance's float value where gamma and b underflow,
    and the gamma = b = 0 limit (uniform on [-1, 1]: 1/3)."""
    import mpmath as mp

    from dpjax.noise.staircase import staircase_optimal_gamma, staircase_unit_variance

    mp.mp.dps = 50

    def reference(e):
        e = mp.mpf(e)
        b = mp.e ** (-e)
        g = (mp.cbrt(b * (1 + b) / 2) - b) / (1 - b)
        s0, s1, s2 = 1 / (1 - b), b / (1 - b) ** 2, b * (1 + b) / (1 - b) ** 3
        a = (1 - b) / (2 * (g + (1 - g) * b))
        inner = g * s2 + g**2 * s1 + g**3 * s0 / 3 + b * (
            (1 - g) * s2 + (1 - g**2) * s1 + (1 - g**3) * s0 / 3)
        return g, 2 * a * inner

    for e in [1e-3, 0.5, 1.0 - 1e-9, 1.0, 2.0, 50.0, 700.0, 710.0, 1000.0, 2000.0]:
        g_ref, v_ref = reference(e)
        g = float(staircase_optimal_gamma(jnp.float64(e)))
        v = float(staircase_unit_variance(jnp.float64(e), jnp.float64(g)))
        assert abs(g - float(g_ref)) <= 5e-14 * float(g_ref), e
        assert abs(v - float(v_ref)) <= 5e-13 * float(v_ref) + 1e-300, e
    for e in [3000.0, 1e4, 1e6]:
        g = staircase_optimal_gamma(jnp.float64(e))
        assert float(g) == float(jnp.finfo(jnp.float64).tiny)
        assert float(staircase_unit_variance(jnp.float64(e), g)) == 0.0
    assert float(staircase_unit_variance(jnp.float64(1e4), jnp.float64(0.0))) == 1.0 / 3.0
