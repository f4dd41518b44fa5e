"""OSGT calibration (:mod:`dpjax.calibration.osgt`) at the small end of its targets, against
the Gaussian member's closed form."""

import jax
import numpy as np

import dpjax
from dpjax.accounting.osgt import log_delta_osgt


def test_tiny_epsilon_and_delta_reach_the_gaussian_member():
    """``epsilon = 1e-300, delta = 1e-30``: ``delta(0)`` is the total variation
    ``P(|T| < Delta / 2) ~ Delta g(0)``, least in variance for the Gaussian end,
    ``sigma = 1 / (delta sqrt(2 pi))`` (the search's steer cancelled at ``D ~ delta``, and
    the certificate failed)."""
    eps, delta = 1e-300, 1e-30
    cal = dpjax.calibrate("osgt", epsilon=eps, delta=delta, l1=1.0)
    gauss = 1.0 / (2.0 * np.pi * delta**2)
    np.testing.assert_allclose(float(cal.variance) / gauss, 1.0, rtol=1e-6)
    p = cal.params
    log_d = jax.jit(log_delta_osgt)(eps, p["vartheta"], p["rho"], 1.0)
    assert float(np.exp(log_d)) <= delta
