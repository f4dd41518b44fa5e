"""Exact fractional-order moments of the subsampled Gaussian (certified trapezoidal rule)
against mpmath quadrature and dp_accounting's RDP accountant."""

import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from dp_accounting import rdp

from dpjax.accounting.rdp.subsampled_gaussian import (
    FRACTIONAL_ORDERS,
    gaussian_fractional_log_moments,
    gaussian_log_moments,
    gaussian_moment_bounds,
    gaussian_rdp_epsilon,
    rdp_epsilon,
)

#: Rounding pads of the certified moments: ``64 u`` times the magnitude of each log-term's
#: parts (up to a few hundred), i.e. <= ~3e-12 absolute on ``log A`` -- the only slack
#: allowed above exact.
PAD_ABS, PAD_REL = 1e-11, 1e-11


def _mp_log_moment(sigma, q, a, remove: bool):
    """``log A_alpha`` of one direction by 25-digit mpmath quadrature (module docstring)."""
    with mpmath.workdps(25):
        mu, qq, a = 1 / mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(a)
        if remove:
            def f(z):
                return mpmath.npdf(z) * (1 - qq + qq * mpmath.exp(mu * z - mu**2 / 2)) ** a
        else:
            def f(z):
                return mpmath.npdf(z) * (1 - qq + qq * mpmath.exp(-mu * z - mu**2 / 2)) ** (1 - a)
        pts = [-mpmath.inf, -5, 0, 5, a * mu, a * mu + 10, mpmath.inf]
        return float(mpmath.log(mpmath.quad(f, sorted(set(pts)))))


@pytest.mark.parametrize("sigma,q", [(1.0, 0.01), (0.7, 0.3), (5.0, 0.001)])
def test_fractional_moments_are_tight_upper_bounds(sigma, q):
    """Above the exact moment of *both* directions (mpmath), by at most the rounding pads."""
    lam, log_a = gaussian_fractional_log_moments(sigma, q)
    for a in (1.1, 3.3, 10.9, 21.5):
        got = float(log_a[np.argmin(np.abs(lam + 1 - a))])
        remove, add = (_mp_log_moment(sigma, q, a, d) for d in (True, False))
        want = max(remove, add)
        assert got >= want
        assert got - want <= PAD_ABS + PAD_REL * abs(want)


@pytest.mark.parametrize("sigma,q", [(0.5, 0.2), (0.1, 0.01)])
def test_fractional_moments_beyond_the_quadrature_cap_are_chords(sigma, q, monkeypatch):
    """A sum over :data:`MAX_QUADRATURE_TERMS` terms is replaced by the chord of the integer
    moments: above the exact moment (mpmath), and at q = 1 above the closed form."""
    from dpjax.accounting.rdp import subsampled_gaussian as sg

    monkeypatch.setattr(sg, "MAX_QUADRATURE_TERMS", 0)
    sg._fractional_cached.cache_clear()
    try:
        lam, log_a = gaussian_fractional_log_moments(sigma, q)
        for a in (1.1, 3.3, 21.5):
            got = float(log_a[np.argmin(np.abs(lam + 1 - a))])
            assert got >= max(_mp_log_moment(sigma, q, a, d) for d in (True, False))
        lam, log_a = gaussian_fractional_log_moments(0.8, 1.0)
        assert np.all(log_a >= (lam + 1) * lam / (2 * 0.64))
    finally:
        sg._fractional_cached.cache_clear()


def test_tiny_sigma_moments_are_finite_chords_without_a_huge_quadrature():
    """sigma = 1e-3 (mu = 1000) would need ~5e10 quadrature terms (an allocation of 70 GiB
    crashed the accountant): the chords are finite upper bounds, ordered in the order."""
    lam, log_a = gaussian_fractional_log_moments(1e-3, 0.2)
    assert np.all(np.isfinite(log_a)) and np.all(np.diff(log_a[lam > 0.95]) > 0)
    exact_2 = float(gaussian_log_moments(1e-3, 0.2, orders=np.array([2.0]))[1][0])
    assert log_a[np.argmin(np.abs(lam - 0.5))] >= 0.5 * exact_2  # the chord from A_1 = 1


def test_fractional_moments_at_q_one_are_the_gaussian_closed_form():
    """``q = 1``: ``log A_alpha = alpha (alpha - 1) mu^2 / 2`` exactly."""
    lam, log_a = gaussian_fractional_log_moments(0.8, 1.0)
    want = (lam + 1) * lam / (2 * 0.64)
    assert np.all(log_a >= want) and np.all(log_a - want <= PAD_ABS + 1e-12 * want)


def test_moment_bounds_extend_the_integer_ones():
    lam, log_a = gaussian_moment_bounds(1.0, 0.01, 1.0)
    lam_i, log_i = gaussian_log_moments(1.0, 0.01, 1.0)
    assert len(lam) == len(lam_i) + len(FRACTIONAL_ORDERS)
    np.testing.assert_array_equal(log_a[: len(lam_i)], log_i)
    # more orders: the RDP epsilon can only improve on integer orders alone, never worsen
    deltas = np.array([1e-5, 1e-12, 1e-30])
    eps = gaussian_rdp_epsilon(1.0, 0.01, 1000, deltas)
    ints = rdp_epsilon(lam_i, 1000.0 * log_i, deltas)  # the integer orders alone
    assert np.all(np.isfinite(eps)) and np.all(eps < ints)


#: Relative slack over dp_accounting where the best order is one both use (an integer):
#: the certified moment is padded by its rounding (<= ~1e-10 relative on epsilon).
RDP_SLACK = 1e-9


@pytest.mark.parametrize(
    "sigma,q,steps",
    [(1.0, 0.01, 1000), (0.8, 0.004, 10**4), (2.0, 0.1, 100), (0.7, 0.3, 10), (10.0, 0.5, 3)],
)
def test_rdp_epsilon_never_above_dp_accounting(sigma, q, steps):
    deltas = np.array([1e-5, 1e-8, 1e-10, 1e-12, 1e-15, 1e-30, 1e-100])
    acc = rdp.RdpAccountant()
    acc.compose(
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
        )
    )
    ref = np.array([acc.get_epsilon(d) for d in deltas])
    ours = gaussian_rdp_epsilon(sigma, q, steps, deltas)
    assert np.all(ours <= ref * (1.0 + RDP_SLACK)), (ours, ref)


def test_total_variation_bound_gives_zero_epsilon():
    """Tiny divergence: ``delta >= sqrt(1 - e^{-KL})`` certifies ``epsilon = 0`` (as
    dp_accounting does)."""
    lam, log_a = gaussian_moment_bounds(1e3, 0.001)
    kl_bound = float(np.min(log_a / lam))
    delta = math.sqrt(-math.expm1(-kl_bound)) * 1.01
    assert gaussian_rdp_epsilon(1e3, 0.001, 1, delta) == 0.0
    assert gaussian_rdp_epsilon(1e3, 0.001, 1, delta / 1.1) > 0.0


def _mp_integer_log_moment(sigma, q, a):
    """``log A_alpha`` (integer ``alpha``) by the 60-digit binomial sum."""
    with mpmath.workdps(60):
        s, qq = mpmath.mpf(sigma), mpmath.mpf(q)
        total = mpmath.fsum(
            mpmath.binomial(a, k) * (1 - qq) ** (a - k) * qq**k
            * mpmath.exp((k * k - k) / (2 * s * s))
            for k in range(a + 1)
        )
        return mpmath.log(total)


@pytest.mark.parametrize(
    "sigma,q", [(0.5, 1e-6), (2.0, 1e-9), (1.0, 0.01), (0.3, 0.5), (1.0, 1.0)]
)
def test_integer_moments_keep_relative_precision_as_q_vanishes(sigma, q):
    """Bounded through ``A - 1``, an integer-order moment is above the exact one by at most
    ``1e-11`` *relative* even where ``log A ~ 1e-19`` (``q -> 0``): an absolute pad, which
    ``T = 1e9`` uses would multiply, would be ``1e6`` times ``log A`` there."""
    lam, log_a = gaussian_log_moments(sigma, q)
    for a in (2, 3, 9, 30, 64, 256):
        got = float(log_a[list(lam + 1.0).index(a)])
        exact = _mp_integer_log_moment(sigma, q, a)
        assert got >= exact, (a, got, exact)
        assert got <= exact * (1.0 + 1e-11) + 1e-300, (a, got, exact)


def test_integer_moment_below_the_float64_range_is_the_least_subnormal():
    """At ``q = 1e-200`` ``A - 1 ~ 1e-400`` is below float64's range: the bound is the least
    positive float (never ``0``, which would be below the exact moment)."""
    _, log_a = gaussian_log_moments(1.0, 1e-200, orders=np.array([2.0, 3.0]))
    assert np.all(log_a == 5e-324)


def test_scalar_moment_bounds_are_memoised_read_only_and_equal_to_the_array_path():
    """One ``(sigma, q)`` computes its moments once (an epsilon and its certificate share
    them); the memoised arrays are read-only and equal the array path's row."""
    from dpjax.accounting.rdp.subsampled_gaussian import _scalar_moment_bounds

    _scalar_moment_bounds.cache_clear()
    lam, log_a = gaussian_moment_bounds(1.3, 0.02)
    again = gaussian_moment_bounds(1.3, 0.02)
    assert again[0] is lam and again[1] is log_a
    assert _scalar_moment_bounds.cache_info().hits == 1
    assert not log_a.flags.writeable
    lam_v, log_v = gaussian_moment_bounds(np.array([1.3, 2.0]), 0.02)
    np.testing.assert_array_equal(lam_v, lam)
    np.testing.assert_array_equal(log_v[0], log_a)
