"""Leaf events to PLDs (:mod:`dpjax.accounting.events.plds`): truncated Laplace noise.

Its support is bounded, so the loss is ``+infinity`` where the shifted density vanishes; the
ledger takes it through its exact 1-D profile.  Reference: the closed form of
:mod:`dpjax.accounting.truncated_laplace` (eq. (26) of flipped-huber-mechanism), itself
checked independently in ``tests/mechanisms/test_truncated_laplace.py``.
"""

from __future__ import annotations

import inspect
import math

import mpmath
import numpy as np
import pytest

from dpjax.accounting import events as ev
from dpjax.accounting.accountant import PLDAccountant
from dpjax.accounting.truncated_laplace import delta_truncated_laplace, epsilon_truncated_laplace

SCALE, BOUND = 1.0, 20.0
TL = ev.Noise("truncated-laplace", {"scale": SCALE, "bound": BOUND})


def test_one_truncated_laplace_use_is_certified_against_its_closed_form():
    acc = PLDAccountant().compose(TL, 1)
    for eps in (0.0, 0.2, 0.9, 0.99, 1.0):
        exact = float(delta_truncated_laplace(eps, SCALE, BOUND, 1.0))
        got = acc.get_delta(eps)
        assert exact <= got <= exact + 1e-3, (eps, got, exact)
    # beyond the largest finite loss, Delta / lambda = 1: the mass where T - 1 has no density,
    # P(T > A - 1) = (e - 1) / (2 (e^A - 1)) (in mpmath), counted whole and padded by 1e-13
    flat = mpmath.expm1(1) / (2 * mpmath.expm1(BOUND / SCALE))
    got = acc.get_delta(2.0)
    assert flat <= got <= flat * (1 + 1e-12)
    assert got <= float(delta_truncated_laplace(2.0, SCALE, BOUND, 1.0))
    exact = float(epsilon_truncated_laplace(1e-5, SCALE, BOUND, 1.0))
    assert exact <= acc.get_epsilon(1e-5) <= exact + 1e-3


def test_composed_truncated_laplace_is_finite_and_consistent():
    acc = PLDAccountant().compose(TL, 50)
    eps = acc.get_epsilon(1e-5)
    assert math.isfinite(eps)
    assert acc.get_delta(eps) <= 1e-5
    # at least the one-use answer, and the composed mass at +infinity stays below delta
    assert eps >= float(epsilon_truncated_laplace(1e-5, SCALE, BOUND, 1.0))
    assert acc.get_delta(50.0 + 1.0) >= 50 * 0.999 * float(
        delta_truncated_laplace(2.0, SCALE, BOUND, 1.0)
    )


def test_poisson_sampled_truncated_laplace_under_replace_one_is_accounted_by_its_profiles():
    """No worst pair is known: the advanced-joint-convexity bound (never below the shift-2
    mixture pair's exact answer, which tests/accounting/pld/test_amplification.py checks
    against every pair of contributions on a grid), with no lower end."""
    acc = PLDAccountant("replace_one").compose(ev.PoissonSampled(0.1, TL), 5)
    eps = acc.get_epsilon(1e-5)
    assert math.isfinite(eps) and acc.get_delta(eps) <= 1e-5
    add_remove = PLDAccountant().compose(ev.PoissonSampled(0.1, TL), 5).get_epsilon(1e-5)
    assert eps > add_remove  # a record swapped moves the output at least as far


def test_truncated_laplace_has_both_ends_of_the_bracket():
    """The exact loss law gives a lower discretisation too (losses rounded down)."""
    lower, upper = PLDAccountant().compose(TL, 2).bracket(1e-5)
    assert 0.0 < lower <= upper and np.isfinite(upper)


# (scale, bound, uses, epsilon): at the pure-DP kink T Delta / lambda ~ epsilon (T = 2, the
# two-use calibration's member), inside the Laplace part, a bound below the shift (c < mu)
COMPOSED = [(1.99999448, 22.32036184, 2, 1.0), (2.0, 20.0, 3, 1.5), (4.0, 60.0, 5, 1.0),
            (3.0, 4.0, 4, 1.0), (9.9, 200.0, 10, 1.0), (0.8, 0.6, 6, 3.0)]


@pytest.mark.parametrize("scale,bound,uses,eps", COMPOSED)
def test_composed_truncated_laplace_is_sandwiched_by_an_independent_convolution(
        scale, bound, uses, eps):
    """T uses of the exact loss law against SciPy's CDF rounded down / up on a grid and
    self-convolved by NumPy's FFT (``tests/_truncated_laplace_reference.py``): never below the
    lower bound (certified), and at most the rounded-up law on the accountant's own grid
    (connect-the-dots is tighter than rounding up; 1e-6 covers the FFT error allowances).
    Before the exact law, the profile's dominating pair had only non-negative losses: at
    T = 100 its epsilon(1e-5) was 2.71 where Laplace of the same scale has 1.52."""
    from _truncated_laplace_reference import composed_delta_bounds

    got = PLDAccountant().compose(
        ev.Noise("truncated-laplace", {"scale": scale, "bound": bound}), uses).get_delta(eps)
    lower, _ = composed_delta_bounds(eps, scale, bound, 1.0, uses, 1e-5)
    _, upper = composed_delta_bounds(eps, scale, bound, 1.0, uses, 1e-4)
    assert lower <= got <= upper * (1 + 1e-6), (lower, got, upper)


def test_disjoint_supports_are_not_private():
    """A bound below half the shift: every loss is +infinity (delta = 1 at every epsilon)."""
    acc = PLDAccountant().compose(ev.Noise("truncated-laplace", {"scale": 1.0, "bound": 0.4}), 3)
    assert acc.get_delta(5.0) == 1.0 and acc.get_epsilon(1e-5) == math.inf


def test_two_uses_match_an_exact_quadrature():
    """Two uses at the kink (the pure part's loss 2 Delta / lambda = epsilon + 3e-6): one
    quadrature over the first use of the exact 1-D profile (no grid; 9.92094070e-6, also by
    mpmath double quadrature) -- the accountant is above it by under 1e-5 relative."""
    from _truncated_laplace_reference import two_use_delta

    scale, bound = 1.99999448, 22.32036184
    exact = two_use_delta(1.0, scale, bound, 1.0, lambda x: float(
        delta_truncated_laplace(x, scale, bound, 1.0)))
    got = PLDAccountant().compose(
        ev.Noise("truncated-laplace", {"scale": scale, "bound": bound}), 2).get_delta(1.0)
    assert exact <= got <= exact * (1 + 1e-5)


def test_directions_share_one_length_and_padding_keeps_the_law():
    """compose_table pads each direction's pmf with zero mass to the longest one: both
    directions then have one length (one compiled query), and each padded profile is the
    unpadded one's up to its round-off allowance (the padding carries no mass).  The two
    directions here are Gaussians of different sigma, so their composed lengths differ."""
    import dataclasses

    from dpjax.accounting.events.plds import compose_table
    from dpjax.accounting.pld import (
        delta_for_epsilon,
        from_gaussian,
        self_compose,
        self_compose_size,
    )
    from dpjax.accounting.pld.compose import ceil_pow2

    ones = {"remove": from_gaussian(sigma=1.0, sensitivity=1.0, bin_width=1e-3),
            "add": from_gaussian(sigma=4.0, sensitivity=1.0, bin_width=1e-3)}
    composed = compose_table([(ones, 20)], "add_remove")
    assert composed["remove"].size == composed["add"].size
    padded = []
    for d, one in ones.items():
        alone = self_compose(one, 20, ceil_pow2(self_compose_size(one, 20)))
        assert alone.size <= composed[d].size
        padded.append(alone.size < composed[d].size)
        assert np.all(np.asarray(composed[d].pmf[alone.size:]) == 0.0)
        same = dataclasses.replace(composed[d], pmf=composed[d].pmf[: alone.size])
        for eps in (0.2, 1.0, 3.0):
            # the same law: the padded profile differs only by its round-off allowance,
            # which counts the added grid points (never lower, at most 1e-9 relative)
            exact = float(delta_for_epsilon(same, eps))
            assert exact <= float(delta_for_epsilon(composed[d], eps)) <= exact * (1 + 1e-9)
            assert exact == float(delta_for_epsilon(alone, eps))
    assert any(padded)  # one direction was padded


def test_small_events_share_one_ledger_grid():
    """A small event's PLD is discretised on :data:`.compose.MIN_GRID_POINTS` points at least
    (:func:`.compose.floored_size`): three flipped Huber scales, each needing at most 8192 points
    at this bin width (three sizes of the ladder without the floor), share one compiled
    discretisation, and each answer stays an upper bound of the exact profile (eq. (13), up
    to its kernel's documented error ``ERROR`` on ``log delta``)."""
    from dpjax.accounting.flipped_huber import ERROR, log_delta_flipped_huber
    from dpjax.accounting.pld.discretise import discretise_noise

    core = inspect.unwrap(discretise_noise, stop=lambda f: hasattr(f, "_cache_size"))
    before = core._cache_size()
    for g in (2.0, 4.0, 8.0):
        event = ev.Noise("flipped-huber", {"alpha": g, "gamma": 2.0 * g})
        got = PLDAccountant(bin_width=1e-3).compose(event, 1).get_delta(0.5)
        log_exact = float(log_delta_flipped_huber(0.5, g, 2.0 * g, 1.0))
        assert log_exact - ERROR * (1 + abs(log_exact)) <= math.log(got) <= log_exact + 1e-2
    assert core._cache_size() - before <= 1


def test_subsampled_leaf_discretises_both_directions_in_one_program():
    """A Poisson-subsampled leaf under add/remove: both directions' upper-bound PLDs come
    from one compiled discretisation (:func:`.pld.subsample.discretise_subsampled_pairs`),
    none from the per-direction program; the ledger's answers are those of the
    per-direction PLDs (composed and queried directly)."""
    from dpjax.accounting.pld import epsilon_for_delta, self_compose
    from dpjax.accounting.pld.compose import self_compose_size
    from dpjax.accounting.pld.subsample import (
        discretise_subsampled,
        discretise_subsampled_pairs,
        from_subsampled_noise,
    )
    from dpjax.noise.gaussian import Gaussian

    single = inspect.unwrap(discretise_subsampled, stop=lambda f: hasattr(f, "_cache_size"))
    pairs = inspect.unwrap(discretise_subsampled_pairs, stop=lambda f: hasattr(f, "_cache_size"))
    before = single._cache_size(), pairs._cache_size()
    acc = PLDAccountant(bin_width=2e-3).compose(ev.PoissonSampled(0.07, ev.Gaussian(1.3)), 1)
    plds = acc._plds()
    assert single._cache_size() == before[0] and pairs._cache_size() - before[1] <= 1
    ref = from_subsampled_noise(Gaussian(1.3), 1.0, 0.07, 2e-3)
    for d in ("remove", "add"):
        # the ledger's grid is floored (compose.floored_size): the same law on more points
        got = float(epsilon_for_delta(plds[d], 1e-5))
        want = float(epsilon_for_delta(self_compose(ref[d], 1, self_compose_size(ref[d], 1)),
                                       1e-5))
        assert abs(got - want) <= 2e-3, (d, got, want)
