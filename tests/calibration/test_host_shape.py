"""Host (NumPy) steers of the shape searches against the certified kernels they steer for.

The host profiles (Lemma 11 with each family's survival function and loss inverse) are an
independent evaluation of the same privacy profiles as the closed-form JAX kernels; the
host variances are NumPy ports of the noise modules' variances.  Both only steer the
search (the result is bisected and certified by the compiled kernel), but a steer far
from the truth would return a worse shape, so they are checked to near float precision.
"""

import jax
import numpy as np
import pytest

from dpjax.accounting.flipped_huber import log_delta_flipped_huber_standard
from dpjax.accounting.flipped_huber_kdim import log_delta_flipped_huber_sufficient
from dpjax.accounting.gaussian import log_delta_gaussian
from dpjax.accounting.osgt import log_delta_osgt_unit
from dpjax.accounting.truncated_laplace import log_delta_truncated_laplace_unit
from dpjax.calibration import flipped_huber as fh
from dpjax.calibration import osgt, truncated_laplace
from dpjax.calibration.host_shape import least_certified_scale
from dpjax.certificate import log_target, scale_is_certified

_grid = np.meshgrid(np.array([0.05, 0.3, 1.0, 3.0]), np.geomspace(1e-3, 1e3, 13),
                    np.geomspace(1e-2, 30.0, 11), indexing="ij")
EPS, SHAPE, D = (g.ravel() for g in _grid)


def _compare(host, exact, floor=-40.0, rtol=1e-8):
    """``delta`` agrees to ``rtol`` relative where the exact one is above ``e^floor``."""
    host, exact = np.asarray(host), np.asarray(exact)
    keep = exact > floor
    assert keep.sum() > 50
    np.testing.assert_allclose(np.exp(host[keep] - exact[keep]), 1.0, rtol=rtol)
    assert np.all(np.isfinite(host) | (host == -np.inf))


def test_flipped_huber_steer_matches_eq13():
    b = np.concatenate([[0.0], SHAPE])
    e, b, d = (np.broadcast_to(x, (b.size, EPS.size)).ravel() for x in
               (EPS, b[:, None], D))
    exact = jax.jit(log_delta_flipped_huber_standard)(e, b, d)
    _compare(fh._host_log_delta(e, b, np.log(d)), exact)


def test_osgt_steer_matches_app_f():
    exact = jax.jit(log_delta_osgt_unit)(EPS, SHAPE, D)
    _compare(osgt._host_log_delta(EPS, np.log(SHAPE), np.log(D)), exact)


def test_truncated_laplace_steer_matches_exact_profile():
    exact = jax.jit(log_delta_truncated_laplace_unit)(EPS, SHAPE, D)
    _compare(truncated_laplace._host_log_delta(EPS, np.log(SHAPE), np.log(D)), exact)


_tiny = np.meshgrid(np.array([0.0, 1e-300, 1e-40]), np.geomspace(1e-3, 1e3, 7),
                    np.geomspace(1e-300, 1e-9, 12), indexing="ij")
TINY_EPS, TINY_SHAPE, TINY_D = (g.ravel() for g in _tiny)


@pytest.mark.parametrize(
    "steer, exact",
    [(osgt._host_log_delta, log_delta_osgt_unit),
     (truncated_laplace._host_log_delta, log_delta_truncated_laplace_unit)],
    ids=["osgt", "truncated-laplace"],
)
def test_steers_resolve_tiny_shifts(steer, exact):
    """``epsilon -> 0`` at tiny ``delta`` asks for ``D ~ delta``: ``G(t_1) - G(t_2)`` cancels
    in float64 below ``D ~ 1e-16`` (the steer said ``delta = 0`` there, so the search
    returned a scale ``~1e14`` times too small at ``delta = 1e-30`` and the certificate
    failed); the midpoint branch (the density) keeps the steer at the exact kernel's value."""
    ref = jax.jit(exact)(TINY_EPS, TINY_SHAPE, TINY_D)
    _compare(steer(TINY_EPS, np.log(TINY_SHAPE), np.log(TINY_D)), ref, floor=-700.0, rtol=1e-6)


def test_theorem8_steer_matches_the_bound():
    k, l1, l2, linf = 10.0, 10.0, np.sqrt(10.0), 1.0
    # Theorem 8 holds only where K R(alpha) <= 2 gamma^2 eps - Delta_2^2; the grid point
    # (eps, b, D) = (1, sqrt(1000), 0.01) sits exactly on that boundary, where rounding of
    # gamma decides: keep the grid off it (1.3x smaller D)
    gamma = l2 / (D / 1.3)
    exact = jax.jit(log_delta_flipped_huber_sufficient)(EPS, SHAPE * gamma, gamma, k, l1, l2, linf)
    host = fh._host_log_delta_theorem8(EPS, SHAPE, np.log(D / 1.3), k, l1, l2, linf)
    _compare(host, exact)


def test_least_certified_scale_is_the_least_certified_gaussian_sigma():
    """Gaussian profile, a deliberately poor start: the bisection widens its bracket, returns a
    sigma the exact kernel certifies, and one ulp less fails."""
    eps, delta = np.array([0.3, 1.0, 3.0]), 1e-6
    level = np.asarray(log_target(delta))
    kernel = jax.jit(log_delta_gaussian)

    def at(s):
        return np.asarray(kernel(eps, s, 1.0))

    start = np.array([10.0, 5.0, 1.0])  # 30%, 20%, 20% off the least sigma
    sigma, log_d, ok = least_certified_scale(at, start, level)
    assert np.all(ok) and np.all(scale_is_certified(sigma, log_d, level))
    np.testing.assert_array_equal(log_d, at(sigma))
    assert np.all(at(np.nextafter(sigma, 0.0)) > level)
