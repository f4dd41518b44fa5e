"""Clipping groups (dpjax.train.groups): what a parameter pytree may hold."""

import jax.numpy as jnp
import pytest

from dpjax.train import make_groups, make_plan


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.complex64, jnp.bool_])
def test_parameters_must_be_real_floats(dtype):
    """The noise is drawn in each leaf's dtype: a complex leaf got complex normal noise
    (half the certified variance on the real part) and an integer leaf failed in the update."""
    params = {"w": jnp.zeros(3), "v": jnp.zeros(2, dtype)}
    with pytest.raises(TypeError, match=r"dtype of every parameter leaf must be a real floating"):
        make_groups(params, 1.0)
    with pytest.raises(TypeError, match=r"must be a real floating type .* got "):
        make_plan(params, dataset_size=10, sampling_rate=1.0, steps=1, epsilon=1.0, delta=1e-5)
