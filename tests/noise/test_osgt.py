"""dpjax.noise.osgt: the unit variance's host (NumPy) twin against its jitted original."""

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.noise.osgt import osgt_unit_variance, osgt_unit_variance_host


def test_unit_variance_host_twin_matches_the_jitted_kernel():
    # both branches: the direct form below k = 3, the Gauss-Laguerre ratio above
    k = np.append(0.0, np.geomspace(1e-4, 1e4, 60))
    np.testing.assert_allclose(osgt_unit_variance_host(k),
                               np.asarray(jax.jit(osgt_unit_variance)(jnp.asarray(k))), rtol=1e-12)
