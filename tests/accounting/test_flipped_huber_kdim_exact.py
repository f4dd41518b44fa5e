"""Exact K-dim flipped Huber at K = 10^4 (the engine's K-fold composition, K a traced power)
against independent references: the analytic Gaussian at alpha = 0, dp_accounting's PLD of a
flipped Huber loss law built here from the closed-form CDF, and the Theorem 8 / zCDP bound."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pldlib
from scipy import optimize, stats

from dpjax.accounting.flipped_huber_kdim import (
    delta_flipped_huber_exact,
    epsilon_flipped_huber_bound,
    epsilon_flipped_huber_exact,
)

K, GAMMA, DELTA = 10_000, 400.0, 1e-6  # Delta = 1 per coordinate, Delta_2 = 100
H_REF = 2e-6  # the reference grid: its bracket is ~2 K H_REF wide in the composed loss


def _analytic_gaussian_epsilon(mu, delta):
    """Balle & Wang 2018, Thm 8: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    def f(e):
        return stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)

    return optimize.brentq(lambda e: f(e) - delta, 1e-9, 50.0, xtol=1e-14)


def test_gaussian_limit_at_k_1e4():
    # alpha = 0: N(0, gamma^2) per coordinate, the corner shift has l2 norm sqrt(K)
    ref = _analytic_gaussian_epsilon(math.sqrt(K) / GAMMA, DELTA)
    eps = float(epsilon_flipped_huber_exact(DELTA, 0.0, GAMMA, K, 1.0))
    assert ref <= eps <= ref * (1 + 1e-3)  # pessimistic grid: above, by the bin width's order


def _fh_loss_pld(b, d, h, pessimistic, u_max=60.0):
    """dp_accounting PLD of the 1-D pair (FH(b, 1), FH(b, 1) + d), losses rounded up to the
    grid of width h (``pessimistic``; the mass beyond ``u_max`` at +inf) or down (the mass
    beyond at the largest loss): an upper and a lower bound on the exact profile.

    Closed forms (flipped-huber-mechanism, eqs. (7)-(9)): rho(u) = b|u| on |u| <= b and
    (u^2 + b^2)/2 beyond; the survival function S(u) = P(U >= u) by the Laplace centre's
    exponential and the Gaussian tail's normal survival; the loss L(u) = rho(u - d) - rho(u)
    is non-increasing, so P(L <= l) = S(x(l)) with x(l) = inf{u : L(u) <= l} (bisection).
    """
    def rho(u):
        a = np.abs(u)
        return np.where(a <= b, b * a, 0.5 * (a * a + b * b))

    centre = (1.0 - math.exp(-b * b)) / b
    tail = math.exp(-b * b / 2) * math.sqrt(2 * math.pi) * stats.norm.sf(b)
    half = centre + tail

    def surv(u):  # P(U >= u), U ~ FH(b, 1)
        a = np.abs(u)
        s = np.where(a <= b, (np.exp(-b * np.minimum(a, b)) - math.exp(-b * b)) / b + tail,
                     math.exp(-b * b / 2) * math.sqrt(2 * math.pi) * stats.norm.sf(a))
        return np.where(u >= 0, s / (2 * half), 1.0 - s / (2 * half))

    def loss(u):
        return rho(u - d) - rho(u)

    top, bottom = float(loss(-u_max)), float(loss(u_max))
    grid = np.arange(math.floor(bottom / h), math.ceil(top / h) + 1)
    lo, hi = np.full(grid.size, -u_max), np.full(grid.size, u_max)
    for _ in range(80):  # x(l): the least u with L(u) <= l
        mid = 0.5 * (lo + hi)
        ok = loss(mid) <= grid * h
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
    cdf = surv(hi)  # P(L <= k h), k on the grid
    pmf = np.diff(np.concatenate([[0.0], cdf]))
    infinity = 1.0 - cdf[-1]
    if not pessimistic:
        grid, pmf, infinity = grid - 1, pmf + np.where(grid == grid[-1], infinity, 0.0), 0.0
    return pldlib.PrivacyLossDistribution.create_from_rounded_probability(
        {int(k): float(p) for k, p in zip(grid, pmf, strict=True) if p > 0}, infinity, h,
        pessimistic_estimate=pessimistic)


@pytest.mark.parametrize(
    ("k", "gamma", "h_ref"),
    # Delta_2 / gamma = 0.25 in both; the reference bracket is ~2 k h_ref wide.  K = 10^4 is
    # slow (dp_accounting composes a 10^6-point PLD): deselected by default
    [(100, 40.0, 2e-5), pytest.param(K, GAMMA, H_REF, marks=pytest.mark.slow)],
)
def test_matches_dp_accounting_and_is_below_theorem_8(k, gamma, h_ref, b=1.0):
    eps = float(epsilon_flipped_huber_exact(DELTA, b * gamma, gamma, k, 1.0))
    lower, upper = (_fh_loss_pld(b, 1.0 / gamma, h_ref, pess).self_compose(k)
                    .get_epsilon_for_delta(DELTA) for pess in (False, True))
    # dp_accounting's K-fold composition of the law rounded down / up brackets the exact
    # epsilon; the engine's (pessimistic, connect-the-dots) lies inside the bracket
    assert lower <= eps <= upper
    bound = float(epsilon_flipped_huber_bound(DELTA, b * gamma, gamma, k, float(k),
                                              math.sqrt(k), 1.0))
    assert eps <= bound
    # the profile at the returned epsilon is certified below delta
    assert float(delta_flipped_huber_exact(eps, b * gamma, gamma, k, 1.0)) <= DELTA


def test_bad_parameters():
    with pytest.raises(ValueError, match="gamma > 0"):
        epsilon_flipped_huber_exact(DELTA, 1.0, 0.0, K, 1.0)
