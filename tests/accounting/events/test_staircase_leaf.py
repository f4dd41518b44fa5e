"""A staircase noise leaf in the accountant: its one-shift pair only where that pair dominates.

The staircase is not log-concave.  At a shift equal to its width the one-shift pair
dominates every smaller shift (checked here against the exact supremum over shifts,
:func:`dpjax.accounting.staircase.log_delta_staircase_shift`) and the accountant is the exact
profile; at any other width it is accounted as Geng & Viswanath's pure-DP bound
(:func:`dpjax.accounting.events.plds.staircase_as_pure_dp`): never below the exact supremum
(the one-shift pair was, by orders of magnitude), RDP moments dropped.  Poisson-sampled
under replace-one at width 1 it is the exact loss atoms of the pair of contributions +-1
(checked here to be the worst pair), at other widths the pure-DP bound its mixture pair
satisfies for every pair of contributions; sampled without replacement
under replace-one it is Balle, Barthe & Gaboardi's Theorem 9 on its replace-one leaf.
"""

import jax.numpy as jnp
import numpy as np
import pytest

import dpjax
from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.accounting.events.plds import (
    staircase_as_pure_dp,
    staircase_replace_poisson_pure_dp,
)
from dpjax.accounting.rdp.ledger import leaf_log_moments
from dpjax.accounting.staircase import log_delta_staircase_shift

EPS = [0.0, 0.3, 0.9, 1.5]


def _accountant(event, relation="add_remove"):
    return PLDAccountant(relation, 1e-4).compose(event)


def test_shift_of_the_width_dominates_every_smaller_shift():
    shifts = jnp.linspace(1e-3, 1.0, 400)
    for decay in (0.05, 1.0, 3.0):
        for gamma in (0.0, 0.3, 0.7, 1.0):
            for e in np.linspace(0.0, decay, 9):
                v = np.asarray(log_delta_staircase_shift(float(e), decay, gamma, shifts))
                assert np.max(v) <= v[-1], (decay, gamma, e)


@pytest.mark.parametrize("width,decay,gamma", [(0.4, 1.0, 0.3), (2.5, 0.5, 0.3), (1.0, 1.0, 0.8)])
def test_accountant_is_never_below_the_exact_supremum_over_shifts(width, decay, gamma):
    params = {"decay": decay, "width": width, "gamma": gamma}
    acc = _accountant(ev.Noise("staircase", params))
    exact = np.asarray(dpjax.profile("staircase", params, epsilon=EPS, linf=1.0))
    got = np.array([acc.get_delta(e) for e in EPS])
    assert np.all(got >= exact * (1 - 1e-9)), (got, exact)
    if width == 1.0:  # the one-shift pair is the exact profile there
        np.testing.assert_allclose(got, exact, rtol=1e-9, atol=1e-15)


def test_off_width_leaf_is_the_pure_dp_event_of_its_steps():
    leaf = ev.Noise("staircase", {"decay": 1.0, "width": 0.4, "gamma": 0.3})
    pure = staircase_as_pure_dp(leaf, "add_remove")
    assert isinstance(pure, ev.EpsilonDelta) and pure.delta == 0.0
    assert 3.0 <= pure.epsilon <= 3.0 * (1 + 1e-15)  # ceil(1 / 0.4) = 3 steps
    # replace-one: the shift is 2 widths of a width-1 staircase
    unit = ev.Noise("staircase", {"decay": 0.5, "width": 1.0, "gamma": 0.3})
    assert staircase_as_pure_dp(unit, "add_remove") is unit
    assert staircase_as_pure_dp(unit, "replace_one").epsilon == pytest.approx(1.0)
    assert leaf_log_moments(leaf, "add_remove") is None
    assert leaf_log_moments(unit, "add_remove") is not None
    # under replace-one the accountant answers above the exact profile at a shift of 2
    exact = float(dpjax.profile("staircase", dict(unit.params), epsilon=0.3, linf=2.0))
    assert _accountant(unit, "replace_one").get_delta(0.3) >= exact


def _staircase_density(x, decay, gamma):
    """Width-1 staircase density, from Geng & Viswanath's eq. (11)."""
    b = np.exp(-decay)
    k = np.floor(np.abs(x))
    return (1 - b) / (2 * (gamma + (1 - gamma) * b)) * b ** (k + (np.abs(x) - k >= gamma))


@pytest.mark.parametrize("decay,gamma,q", [(1.0, 0.3, 0.1), (2.75, 0.278, 0.1),
                                           (0.5, 0.4, 0.3), (0.2, 0.45, 0.9), (3.0, 0.1, 0.5)])
def test_contributions_plus_and_minus_one_give_the_worst_replace_pair(decay, gamma, q):
    # (1 - q) T + q (T + a) against (1 - q) T + q (T + b) for every a, b on a grid of
    # [-1, 1]^2 (midpoint integrals): the accountant's pair (a, b) = (1, -1) is the largest
    half = 40.0 / decay + 6.0
    x = np.linspace(-half, half, 100_001)
    dx = x[1] - x[0]
    shifts = np.linspace(-1.0, 1.0, 9)
    mixed = {s: (1 - q) * _staircase_density(x, decay, gamma)
             + q * _staircase_density(x - s, decay, gamma) for s in shifts}
    for e in (0.0, 0.3 * decay, 0.7 * decay):
        deltas = {(a, b): np.sum(np.maximum(mixed[a] - np.exp(e) * mixed[b], 0.0)) * dx
                  for a in shifts for b in shifts}
        corner = max(deltas[(1.0, -1.0)], deltas[(-1.0, 1.0)])
        assert max(deltas.values()) <= corner * (1 + 1e-3) + 1e-9, (e, max(deltas, key=deltas.get))


@pytest.mark.parametrize("width,q", [(2.0, 0.1), (0.4, 0.3), (2.5, 0.5)])
def test_poisson_sampled_staircase_off_width_under_replace_one_is_a_pure_dp_bound(width, q):
    # no worst pair is known off width 1: the accountant takes the pure-DP event the mixture
    # pair satisfies for every pair of contributions, never below the midpoint integrals of
    # (1 - q) T + q (T + a) against (1 - q) T + q (T + b) on a grid of [-1, 1]^2
    decay, gamma = 1.0, 0.3
    leaf = ev.PoissonSampled(q, ev.Noise("staircase", {"decay": decay, "width": width,
                                                       "gamma": gamma}))
    acc = _accountant(leaf, "replace_one")
    pure = staircase_replace_poisson_pure_dp(leaf)
    half = 40.0 / decay + 6.0
    x = np.linspace(-half, half, 100_001)  # in widths
    dx = (x[1] - x[0]) * width

    def law(s):  # density of (1 - q) T + q (T + s) per sensitivity unit, x in widths
        return ((1 - q) * _staircase_density(x, decay, gamma)
                + q * _staircase_density(x - s / width, decay, gamma)) / width

    mixed = {s: law(s) for s in np.linspace(-1.0, 1.0, 9)}
    for e in (0.0, 0.3 * pure.epsilon, 0.8 * pure.epsilon):
        sup = max(np.sum(np.maximum(mixed[a] - np.exp(e) * mixed[b], 0.0)) * dx
                  for a in mixed for b in mixed)
        rr = (np.exp(pure.epsilon) - np.exp(e)) / (1 + np.exp(pure.epsilon))
        got = acc.get_delta(e)
        assert got >= sup * (1 + 1e-3) and got == pytest.approx(rr, rel=1e-9), (e, got, sup)
    assert acc.get_delta(pure.epsilon + 2e-4) == 0.0  # two bins of the grid above it


def test_poisson_sampled_staircase_under_replace_one_is_its_exact_atoms():
    # the pair's loss atoms (not the pure-DP bound), within the grid's chord
    from dpjax.accounting.pld.atoms import delta_of_atoms
    from dpjax.accounting.staircase import replace_one_poisson_atoms

    width = 1.0
    params = {"decay": 1.0, "width": width, "gamma": 0.3}
    acc = _accountant(ev.PoissonSampled(0.1, ev.Noise("staircase", params)), "replace_one")
    losses, probs = replace_one_poisson_atoms(1.0, width, 0.3, 0.1)
    for e in (0.0, 0.05, 0.2):
        exact = delta_of_atoms(probs, probs * np.exp(-losses), 0.0, e)  # (rounded up)
        assert exact * (1 - 1e-12) <= acc.get_delta(e) <= exact + 1e-4 * 0.1 + 1e-12
    lower, upper = acc.bracket(1e-3)
    assert lower <= upper and delta_of_atoms(probs, probs * np.exp(-losses), 0.0, upper) <= 1e-3


@pytest.mark.parametrize("width", [2.0, 1.0])
def test_sampled_without_replacement_staircase_under_replace_one_is_theorem_9(width):
    # Balle, Barthe & Gaboardi 2018, Thm 9 on the base's replace-one profile, formed here
    # independently: the closed-form shift-2 profile at width 2 (the shift of the width
    # dominates, above), the randomized-response pair of epsilon_0 = 2 decay at width 1
    decay, gamma, n, m = 1.0, 0.3, 1000, 10
    params = {"decay": decay, "width": width, "gamma": gamma}
    acc = _accountant(ev.SampledWithoutReplacement(n, m, ev.Noise("staircase", params)),
                      "replace_one")
    rate = m / n

    def base(e):
        if width == 2.0:
            return float(dpjax.profile("staircase", params, epsilon=e, linf=2.0))
        e0 = 2.0 * decay
        return max(np.expm1(e0) - np.expm1(e), 0.0) / (1.0 + np.exp(e0))

    for e in (0.0, 0.005, 0.01, 0.02):
        inner = np.log1p(np.expm1(e) / rate)
        ref, loose = rate * base(inner), rate * base(max(inner - 2e-4, 0.0))
        assert ref * (1 - 1e-9) <= acc.get_delta(e) <= loose * (1 + 1e-9) + 1e-12, e
    # more noise per batch (a larger decay is less noise): the bound grows
    louder = dict(params, decay=2.0)
    acc2 = _accountant(ev.SampledWithoutReplacement(n, m, ev.Noise("staircase", louder)),
                       "replace_one")
    assert acc2.get_delta(0.005) > acc.get_delta(0.005)


def test_subsampled_off_width_leaf_is_the_subsampled_pure_dp_pair():
    leaf = ev.Noise("staircase", {"decay": 1.0, "width": 0.4, "gamma": 0.3})
    got = _accountant(ev.SelfComposed(ev.PoissonSampled(0.1, leaf), 5)).get_delta(0.5)
    pure = ev.EpsilonDelta(staircase_as_pure_dp(leaf, "add_remove").epsilon, 0.0)
    ref = _accountant(ev.SelfComposed(ev.PoissonSampled(0.1, pure), 5)).get_delta(0.5)
    assert got == ref > 0.0
