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
    np.testing.assert_allclose(lap.privacy_loss(t, 1.0), lap.logpdf(t) - lap.logpdf(t + 1.0), rtol=1e-14)


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
