"""float32 behaviour: sampling in the caller's dtype; privacy decisions stay float64."""

import jax
import jax.numpy as jnp
import numpy as np

import dpjax
from dpjax.noise import Gaussian


def test_facade_is_float64_even_without_global_x64():
    with jax.enable_x64(False):
        cal = dpjax.calibrate("gaussian", epsilon=5.0, delta=1e-30, l2=1.0)
        assert abs(float(cal.params["sigma"]) - 2.278988) < 1e-6
        assert cal.params["sigma"].dtype == np.float64


def test_sampling_in_float32_and_bfloat16():
    with jax.enable_x64(False):
        x = Gaussian(1.0).sample(jax.random.key(1), (1000,))
        assert x.dtype == jnp.float32
        y = Gaussian(1.0).sample(jax.random.key(1), (1000,), dtype=jnp.bfloat16)
        assert y.dtype == jnp.bfloat16
        assert 0.8 < float(jnp.std(x)) < 1.2
