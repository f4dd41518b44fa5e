"""Exact Rényi moments of the (Poisson-subsampled) Laplace mechanism against mpmath
integration of the definition, dp_accounting's RDP accountant, and through the mechanism."""

import math

import mpmath
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

import dpjax
from dpjax.accounting.rdp.laplace import (
    ORDERS,
    laplace_log_moments,
    laplace_log_moments_lower,
    laplace_rdp_epsilon,
    laplace_rdp_log_delta,
    laplace_rdp_scale,
    least_with_laplace_rdp_delta,
    least_with_laplace_rdp_epsilon,
)


def _mp_log_moment(b, q, alpha, remove: bool):
    """``log int P^alpha Q^{1 - alpha} dx`` of one direction of the subsampled pair, by
    40-digit mpmath quadrature in ``x`` (kinks at 0 and Delta = 1): remove ``P = q Lap(0, b) +
    (1 - q) Lap(1, b)``, ``Q = Lap(1, b)``; add ``P = Lap(0, b)``, ``Q = (1 - q) Lap(0, b) + q
    Lap(1, b)``."""
    with mpmath.workdps(40):
        b, q, alpha = mpmath.mpf(b), mpmath.mpf(q), mpmath.mpf(alpha)

        def lap(x, mu):
            return mpmath.exp(-abs(x - mu) / b) / (2 * b)

        def f(x):
            p0, q0 = lap(x, 0), lap(x, 1)
            if remove:
                p, qq = q * p0 + (1 - q) * q0, q0
            else:
                p, qq = p0, (1 - q) * p0 + q * q0
            return p**alpha * qq ** (1 - alpha)

        return float(mpmath.log(mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.inf])))


def _mp_closed_form(b, alpha):
    """Mironov's ``log A_alpha`` of ``Lap(b)``, ``Delta = 1``, in 40 digits."""
    with mpmath.workdps(40):
        a, al = 1 / mpmath.mpf(b), mpmath.mpf(alpha)
        return float(
            mpmath.log(al / (2 * al - 1) * mpmath.exp((al - 1) * a)
                       + (al - 1) / (2 * al - 1) * mpmath.exp(-al * a))
        )


@pytest.mark.parametrize("b", [0.3, 1.0, 7.0])
def test_closed_form_is_a_tight_upper_bound(b):
    """Without subsampling: at or above Mironov's moment at every order (40-digit mpmath), by
    at most the rounding pads."""
    lam, log_a = laplace_log_moments(b)
    np.testing.assert_array_equal(lam, ORDERS - 1)
    for i in range(0, len(ORDERS), 7):
        want = _mp_closed_form(b, ORDERS[i])
        assert want <= log_a[i] <= want + 1e-12 * (1 + abs(want))


@pytest.mark.parametrize("b,q", [(0.5, 0.2), (1.0, 0.01), (3.0, 0.5)])
def test_subsampled_moments_are_tight_upper_bounds(b, q):
    """Above the exact moment of *both* directions (mpmath in ``x``, not the module's change of
    variable), by at most ~1e-9 relative (the panel bound's target) plus rounding."""
    lam, log_a = laplace_log_moments(b, q)
    _, low = laplace_log_moments_lower(b, q)
    for alpha in (1.1, 2.0, 5.5, 32.0, 256.0):
        i = np.flatnonzero(ORDERS == alpha)[0]
        got = float(log_a[i])
        want = max(_mp_log_moment(b, q, alpha, True), _mp_log_moment(b, q, alpha, False))
        assert want <= got <= want + 5e-9 * (1 + abs(want)), (alpha, got, want)
        # the cheap lower bound (512 coarse panels): below, within 1e-5 relative here
        assert want - 1e-5 * (1 + abs(want)) <= low[i] <= want, (alpha, low[i], want)


@pytest.mark.parametrize("b", [0.05, 1.0, 40.0])
def test_lower_bounds_are_below_the_upper_ones_at_every_order(b):
    """Every order, both directions' maximum, with and without subsampling; a scale
    (``a = 20``) whose coarse panels are wide stays below, only looser."""
    for q in (None, 1e-3, 0.3, 0.99):
        _, up = laplace_log_moments(b, q)
        _, low = laplace_log_moments_lower(b, q)
        assert np.all(low >= 0.0) and np.all(low <= up), (b, q)
        if q is None:
            np.testing.assert_allclose(low, up, rtol=1e-12, atol=1e-13)  # the pads


def test_subsampling_never_increases_the_moments():
    """Joint quasi-convexity: the subsampled moments are at most the unsubsampled ones."""
    _, full = laplace_log_moments(0.5)
    for q in (0.05, 0.9):
        _, sub = laplace_log_moments(0.5, q)
        assert np.all(sub <= full + 1e-9 * (1 + np.abs(full)))


@pytest.mark.parametrize("b,count", [(1.0, 10), (10.0, 1000)])
def test_rdp_epsilon_never_above_dp_accounting(b, count):
    """The same moments on a superset of dp_accounting's orders: never above its RDP epsilon,
    and at most 0.5% below it."""
    for delta in (1e-5, 1e-12, 1e-30):
        acc = RdpAccountant()
        acc.compose(dp_event.LaplaceDpEvent(b), count)
        ref = acc.get_epsilon(delta)
        got = laplace_rdp_epsilon(b, None, count, delta)
        assert 0.995 * ref <= got <= ref * (1 + 1e-9)


def test_rdp_scale_meets_its_target():
    b = laplace_rdp_scale(np.array([1.0, 3.0]), np.array([1e-10, 1e-30]), 500)
    eps = laplace_rdp_epsilon(b, None, 500, np.array([1e-10, 1e-30]))
    assert np.all(eps <= [1.0, 3.0]) and np.all(eps >= [0.999, 2.997])
    with pytest.raises(ValueError):
        laplace_rdp_epsilon(1.0, 0.0, 10, 1e-5)


def test_mechanism_never_above_the_rdp_bound():
    """Through the mechanism (min of engine, pure DP and this bound; small T: the min is what
    is checked): at or below the RDP epsilon of the exact moments, and at or below
    dp_accounting's RDP accountant without subsampling."""
    acc = RdpAccountant()
    acc.compose(dp_event.LaplaceDpEvent(4.0), 20)
    got = float(dpjax.account("laplace", {"scale": 4.0}, compositions=20, delta=1e-6))
    assert got <= acc.get_epsilon(1e-6) * (1 + 1e-12)
    rdp = laplace_rdp_epsilon(1.0, 0.2, 10, 1e-6)
    got = float(dpjax.account("laplace", {"scale": 1.0}, compositions=10, sampling_rate=0.2,
                              delta=1e-6))
    assert math.isfinite(got) and got <= rdp * (1 + 1e-12)


#: ``(b, q, T, target)`` of the tightening tests: subsampled (the panel quadrature) and not
#: (the closed form); the target a delta for the epsilon side, an epsilon for the delta side
_LEAST_CASES = [(1.0, 0.1, 100, 1e-6), (0.5, 0.2, 10, 1e-9), (4.0, None, 20, 1e-6)]


@pytest.mark.parametrize("b,q,count,target", _LEAST_CASES)
def test_least_with_the_rdp_bound_is_the_minimum_bit_for_bit(b, q, count, target):
    """Answers below, at, just above and far above the RDP bound, NaN and infinity: the same
    doubles as ``np.minimum`` with the bound of the certified moments, whether or not the
    lower moments decided."""
    rdp = laplace_rdp_epsilon(b, q, count, target)
    eps = np.array([0.5 * rdp, rdp * (1 - 1e-6), rdp, rdp * (1 + 1e-12), rdp * (1 + 1e-6),
                    3.0 * rdp, np.nan, np.inf])
    want = np.minimum(eps, rdp)
    for batch in [eps[:1], eps[:2], eps]:  # the first two are decided by the lower moments
        got = least_with_laplace_rdp_epsilon(batch, b, q, count, target)
        np.testing.assert_array_equal(got, want[: batch.size])
    epsilon = 0.8 * rdp  # the delta side at an epsilon below the RDP epsilon
    rdp_delta = np.exp(np.minimum(laplace_rdp_log_delta(b, q, count, epsilon), 0.0))
    deltas = np.array([0.0, 0.5 * rdp_delta, rdp_delta, 2.0 * rdp_delta, 1.0, 2.0, np.nan])
    for batch in [deltas[:2], deltas]:
        got = least_with_laplace_rdp_delta(batch, b, q, count, epsilon)
        np.testing.assert_array_equal(got, np.minimum(batch, rdp_delta))


def test_the_certified_moments_are_skipped_only_where_the_lower_ones_decide(monkeypatch):
    """An answer well below the lower moments' bound never computes the certified moments (a
    PLD answer, the usual case: the costly quadrature skipped); one above the bound does."""
    from dpjax.accounting.rdp import laplace as rdp_laplace

    def refuse(*args):
        raise AssertionError("the certified moments were computed")

    rdp_laplace._cached.cache_clear()
    monkeypatch.setattr(rdp_laplace, "_log_integrals", refuse)
    try:
        assert float(least_with_laplace_rdp_epsilon(4.0, 1.0, 0.1, 100, 1e-6)) == 4.0
        assert float(least_with_laplace_rdp_delta(1e-9, 1.0, 0.1, 100, 4.0)) == 1e-9
        with pytest.raises(AssertionError, match="certified moments"):
            least_with_laplace_rdp_epsilon(6.0, 1.0, 0.1, 100, 1e-6)
    finally:
        rdp_laplace._cached.cache_clear()
