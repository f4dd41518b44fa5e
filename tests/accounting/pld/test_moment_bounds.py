"""Fractional-order moment bounds of the subsampled Gaussian (convexity chords)."""

import mpmath
import numpy as np

from dpjax.accounting.pld.subsample import (
    FRACTIONAL_ORDERS,
    _epsilon_chernoff,
    gaussian_log_moments,
    gaussian_moment_bounds,
    gaussian_rdp_epsilon,
)
from dpjax.certificate import log_target


def test_chords_bound_the_exact_fractional_moments():
    """``log A_alpha`` at fractional orders by mpmath quadrature is below the chord."""
    lam, log_a = gaussian_moment_bounds(0.7, 0.3, 1.0)
    s = mpmath.mpf("0.7")
    for a in (1.5, 3.3, 7.9):
        got = float(log_a[np.argmin(np.abs(lam + 1 - a))])

        def f(y, a=a):
            qd = mpmath.npdf(y, 0, s)
            ratio = mpmath.mpf("0.7") + mpmath.mpf("0.3") * mpmath.npdf(y, 1, s) / qd
            return qd * ratio ** mpmath.mpf(a)

        with mpmath.workdps(30):
            want = float(mpmath.log(mpmath.quad(f, [-mpmath.inf, 0, 1, 15, mpmath.inf])))
        assert got >= want


def test_moment_bounds_extend_the_integer_ones():
    lam, log_a = gaussian_moment_bounds(1.0, 0.01, 1.0)
    lam_i, log_i = gaussian_log_moments(1.0, 0.01, 1.0)
    assert len(lam) == len(lam_i) + len(FRACTIONAL_ORDERS)
    np.testing.assert_array_equal(log_a[: len(lam_i)], log_i)
    # more orders: the RDP epsilon can only improve on integer orders alone, never worsen
    deltas = np.array([1e-5, 1e-12, 1e-30])
    eps = gaussian_rdp_epsilon(1.0, 0.01, 1000, deltas)
    ints = np.asarray(_epsilon_chernoff(1000.0 * log_i, log_target(deltas), lam_i))
    assert np.all(np.isfinite(eps)) and np.all(eps <= ints)
