"""Pairs built from privacy profiles (dpjax.accounting.pld.profile_pair).

Independent references: the Gaussian pair's closed-form profile (SciPy) in both orders; the
hockey-stick curve of a built pair summed directly over its atoms, below ``x = 1`` too; random
finite pairs, whose loss laws compose exactly (atoms convolved).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpjax.accounting.pld import amplification as amp
from dpjax.accounting.pld import delta_for_epsilon
from dpjax.accounting.pld.compose import self_compose, self_compose_size
from dpjax.accounting.pld.profile_pair import from_profile

H = 1e-3


def _gaussian(mu):
    def profile(e):
        e = np.asarray(e, np.float64)
        return norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2)

    return profile


def _curve(pld, x):
    """``H_x(P || Q)`` of the pair: ``sum_i (p_i - x q_i)_+`` plus the mass at infinity."""
    pmf = np.asarray(pld.pmf, np.float64)
    losses = (np.arange(pmf.size) + int(pld.lower)) * float(pld.bin_width)
    q = pmf * np.exp(-losses)
    return np.array([np.sum(np.maximum(pmf - v * q, 0.0)) for v in x]) + float(pld.inf_mass)


def test_two_sided_pair_bounds_both_orders_of_a_subsampled_gaussian():
    """The sampled pair ``((1 - q) A + q B, A)`` of a Gaussian: its remove profile above
    ``x = 1``, ``1 - x + x`` (its add profile at ``-log x``) below; the built pair's curve is
    at or above both (to the ``1e-9`` inflation), within the chords of them, keeps losses
    below 0 and is a law (``P`` sums to 1, ``Q`` to at most 1)."""
    one, q = _gaussian(1.5), 0.1
    remove, add = amp.poisson_remove(one, q), amp.poisson_add(one, q)
    top, bottom = 4.0, -math.log1p(-q)
    pld = from_profile(remove, top, H, reverse=add, reverse_max=bottom)
    assert int(pld.lower) < 0
    eps = np.linspace(0.0, 3.0, 31)
    got = np.array([float(delta_for_epsilon(pld, e)) for e in eps])
    assert np.all(got >= remove(eps) * (1 - 1e-9))
    assert np.all(got <= remove(eps) + 2e-3)
    back = np.linspace(0.0, bottom, 23)
    x = np.exp(-back)
    below = 1.0 - x + x * add(back)
    curve = _curve(pld, x)
    assert np.all(curve >= below * (1 - 1e-9))
    assert np.all(curve <= below + 2e-3)
    pmf = np.asarray(pld.pmf, np.float64)
    losses = (np.arange(pmf.size) + int(pld.lower)) * H
    assert abs(pmf.sum() + float(pld.inf_mass) - 1.0) < 1e-8
    assert np.sum(pmf * np.exp(-losses)) <= 1.0 + 1e-8


def test_bounds_no_pair_has_fall_back_to_the_one_sided_pair():
    """A reverse order with total variation but no loss above 0 (no pair has that) fails the
    two-sided check: the one-sided pair (every loss ``>= 0``) is returned, still sound."""
    one = _gaussian(1.0)
    tv = float(one(np.zeros(1))[0])

    def impossible(e):
        return np.where(np.asarray(e) == 0.0, tv, 0.0)

    two = from_profile(one, 5.0, H, reverse=impossible, reverse_max=2.0)
    plain = from_profile(one, 5.0, H)
    assert int(two.lower) == int(plain.lower) == 0
    np.testing.assert_array_equal(np.asarray(two.pmf), np.asarray(plain.pmf))


def _hockey(p, q):
    return lambda e: np.array([np.maximum(p - math.exp(v) * q, 0.0).sum() for v in np.ravel(e)])


def _exact_composed_delta(p, q, uses, eps):
    """``delta(eps)`` of ``uses`` independent uses of the finite pair ``(p, q)``: its loss law
    (atoms ``log(p_i / q_i)`` with masses ``p_i``) convolved exactly."""
    law = {0.0: 1.0}
    for _ in range(uses):
        nxt: dict = {}
        for a, pa in law.items():
            for b, pb in zip(np.log(p / q), p, strict=True):
                nxt[a + b] = nxt.get(a + b, 0.0) + pa * pb
        law = nxt
    losses, mass = np.array(list(law)), np.array(list(law.values()))
    return np.array([np.sum(mass * np.maximum(1.0 - np.exp(e - losses), 0.0)) for e in eps])


@pytest.mark.parametrize("seed", range(6))
def test_two_sided_pairs_of_random_finite_pairs_compose_above_the_exact_pair(seed):
    """A random asymmetric finite pair, each order's profile given: the two-sided pair
    composed ``T`` times is at or above the exact composition and within the chords of it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    p = rng.dirichlet(np.full(n, rng.uniform(0.3, 2.0)))
    q = rng.dirichlet(np.full(n, rng.uniform(0.3, 2.0)))
    losses = np.log(p / q)
    pld = from_profile(_hockey(p, q), max(losses.max(), H) + H, H, reverse=_hockey(q, p),
                       reverse_max=max(-losses.min(), H) + H)
    assert int(pld.lower) < 0
    uses = int(rng.integers(2, 5))
    composed = self_compose(pld, uses, 1 << (int(self_compose_size(pld, uses)) - 1).bit_length())
    eps = np.linspace(0.0, 2.0, 9)
    exact = _exact_composed_delta(p, q, uses, eps)
    got = np.array([float(delta_for_epsilon(composed, e)) for e in eps])
    assert np.all(got >= exact - 1e-9)
    assert np.all(got <= exact + 1e-4)


def _flat_then_drop(e):
    """``0.01 (1 - e^{eps - 250})_+``: the exact profile of a pair with 1% of ``P`` at loss 250
    (the remove order of one Poisson coin, ``q = 0.01``, for 20 coordinates of little noise),
    flat to float64 below ``eps ~ 213``."""
    return 0.01 * np.maximum(-np.expm1(np.asarray(e, np.float64) - 250.0), 0.0)


def test_a_bound_flat_far_out_keeps_its_mass_in_the_pair():
    """In ``x = e^eps`` that profile is flat to float64 from ``x = 1`` to ``e^213`` and then
    drops: the pair's curve stays at or above it on both builders.  (Until 2026-12-02 the
    one-sided builder took the running minimum of the slopes from the left: the flat stretch
    set every later one to 0, P's whole mass at loss 0, ``delta(2) = 1e-300``.)"""
    eps = np.array([0.0, 2.0, 100.0, 200.0, 230.0, 249.0, 260.0])
    q = 0.01
    reverse = lambda e: np.minimum(np.maximum(1.0 - np.exp(e) * (1.0 - q), 0.0), q)  # noqa: E731
    for pld in (from_profile(_flat_then_drop, 306.0, H),
                from_profile(_flat_then_drop, 306.0, H, reverse=reverse,
                             reverse_max=-math.log1p(-q))):
        got = np.asarray(delta_for_epsilon(pld, eps))
        assert np.all(got >= _flat_then_drop(eps)), got
        assert got[1] <= 0.01 * (1.0 + 1e-6)


def test_losses_beyond_float64s_exponent_range_go_to_infinity():
    """A bound of 0.3 up to eps = 1500 (``e^eps`` overflows past 709.78): the grid ends at
    ``LOSS_CAP`` with the bound's value there at ``+infinity``: finite masses, and every
    ``delta`` at or above the bound (until 2026-12-02: NaN masses from ``exp`` overflow)."""
    def bound(e):
        return np.where(np.asarray(e, np.float64) < 1500.0, 0.3, 0.0)

    pld = from_profile(bound, 2000.0, H)
    assert np.all(np.isfinite(np.asarray(pld.pmf)))
    assert float(pld.inf_mass) >= 0.3
    got = np.asarray(delta_for_epsilon(pld, np.array([0.0, 10.0, 650.0])))
    assert np.all(got >= 0.3)
