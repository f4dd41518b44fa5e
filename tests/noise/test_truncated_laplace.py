"""dpjax.noise.truncated_laplace: the unit variance's host (NumPy) twin against the jitted one."""

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.noise.truncated_laplace import (
    truncated_laplace_unit_log_variance_host,
    truncated_laplace_unit_variance,
)


def test_unit_log_variance_host_twin_matches_the_jitted_kernel():
    c = np.geomspace(1e-3, 2e3, 60)
    host = np.exp(truncated_laplace_unit_log_variance_host(np.log(c)))
    ref = np.asarray(jax.jit(truncated_laplace_unit_variance)(jnp.asarray(c)))
    np.testing.assert_allclose(host, ref, rtol=1e-12)
