"""Tilted heterogeneous composition (issue 13, item 1): the ledger's ``delta`` below 1e-12.

References: the closed form of composed Gaussians (Gaussian DP with ``mu = sqrt(sum_i K_i /
sigma_i^2)``, Balle & Wang 2018 Thm 8, in log space by SciPy's ``log_ndtr``); the plain FFT
composition where both are valid; dp_accounting's RDP accountant (an independent upper bound).
"""

import dataclasses
import math

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import log_ndtr

from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.accounting.events.plds import compose_table, leaf_table
from dpjax.accounting.pld.query import delta_for_epsilon, epsilon_for_delta
from dpjax.accounting.pld.tilted.compose import tilted_product_answer

H = 1e-4


def _parts(ledger, direction="remove"):
    table = leaf_table(ledger, "add_remove", H)
    return [p[direction] for p, _ in table], [c for _, c in table]


def gdp_epsilon(mu, delta):
    """Exact epsilon of mu-GDP at ``delta`` (log space: no underflow at 1e-100)."""

    def log_delta(e):
        a = log_ndtr(-e / mu + mu / 2)
        b = e + log_ndtr(-e / mu - mu / 2)
        return a + np.log1p(-np.exp(b - a))

    return brentq(lambda e: log_delta(e) - math.log(delta), 0.0, 500.0, xtol=1e-12)


# 1e-30 by default; 1e-12 (its own tilted program, the same path and property) in the slow tier
@pytest.mark.parametrize("delta", [pytest.param(1e-12, marks=pytest.mark.slow), 1e-30])
def test_mixed_gaussians_against_closed_form(delta):
    """3 uses of N(0, 2^2) and 5 of N(0, 3^2): certified (above the exact epsilon) and within
    one bin width of it, where the plain FFT's round-off floor (~1e-12) says little."""
    parts, counts = _parts([(ev.Gaussian(2.0), 3), (ev.Gaussian(3.0), 5)])
    got = float(tilted_product_answer(parts, counts, [delta], True, math.log(delta))[0])
    exact = gdp_epsilon(math.sqrt(3 / 4 + 5 / 9), delta)
    assert exact <= got <= exact + H
    # the profile at it, read by the epsilon query's own tilts, certifies it
    log_d = float(tilted_product_answer(parts, counts, [got], False, math.log(delta))[0])
    assert log_d <= math.log(delta)


def test_an_epsilon_and_its_recheck_share_one_program_with_the_same_bits(monkeypatch):
    """``either_kind``: the epsilon query and the certificate's ``log delta`` re-check run
    one compiled program (the kind a traced flag), each giving the bits of its kind's own
    program; the accountant's epsilon below ``TILT_BELOW`` takes that shared program."""
    from dpjax.accounting.pld.tilted import compose

    parts, counts = _parts([(ev.Gaussian(2.0), 3), (ev.Gaussian(3.0), 5)])
    level = math.log(1e-30)
    for by_delta, x in ((True, 1e-30), (False, 9.0)):
        own, shared = (
            tilted_product_answer(parts, counts, [x], by_delta, level, either_kind=e)
            for e in (False, True)
        )
        np.testing.assert_array_equal(own, shared)
    kinds = []
    real = compose.tilted_product_kernel

    def counted(*args, **kwargs):
        kinds.append(kwargs["by_delta"])
        return real(*args, **kwargs)

    monkeypatch.setattr(compose, "tilted_product_kernel", counted)
    acc = PLDAccountant("add_remove", H).compose(ev.Composed([ev.Gaussian(2.0), ev.Laplace(9.0)]))
    eps = acc.get_epsilon(1e-30)
    assert len(kinds) >= 2 and set(kinds) == {None}  # the epsilon, then its re-check
    assert acc.get_delta(eps) <= 1e-30


def test_tilted_agrees_with_plain_where_both_are_valid():
    """At delta = 1e-6 the plain heterogeneous FFT is accurate: the two certified answers agree."""
    ledger = [(ev.PoissonSampled(0.05, ev.Gaussian(1.5)), 40), (ev.Laplace(20.0), 3)]
    parts, counts = _parts(ledger)
    tilted = float(tilted_product_answer(parts, counts, [1e-6], True, math.log(1e-6))[0])
    plain = float(epsilon_for_delta(compose_table(leaf_table(ledger, "add_remove", H),
                                                  "add_remove")["remove"], 1e-6))
    assert tilted == pytest.approx(plain, rel=1e-4)


def test_fails_closed_on_nan():
    parts, counts = _parts([(ev.Gaussian(2.0), 3), (ev.Gaussian(3.0), 5)])
    bad = dataclasses.replace(parts[0], pmf=parts[0].pmf.at[10].set(jnp.nan))
    eps = tilted_product_answer([bad, parts[1]], counts, [1e-20], True, math.log(1e-20))
    assert np.all(np.isinf(eps))
    log_d = tilted_product_answer([bad, parts[1]], counts, [3.0], False, math.log(1e-20))
    assert np.all(log_d == 0.0)


# slow tier only (a 1000-step ledger compiles its own tilted programs): the accountant's tilted
# get_epsilon / get_delta of a Poisson-subsampled Gaussian ledger below 1e-12 runs by default in
# test_accountant_mixed_ledger_tighter_and_certified
@pytest.mark.slow
def test_accountant_dp_sgd_small_delta_below_rdp():
    """DP-SGD (sigma 1, q 0.01, 1000 steps) through the dp_accounting-style accountant: at 1e-12
    it was 4.611 (plain FFT + Chernoff), above the RDP accountant's 4.354; now below it and
    at the engine's value, certified by the accountant's own profile."""
    from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
    from dp_accounting.rdp import RdpAccountant

    acc = PLDAccountant().compose(ev.PoissonSampled(0.01, ev.Gaussian(1.0)), 1000)
    rdp = RdpAccountant().compose(
        SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0)), 1000)
    )
    for delta in (1e-12, 1e-30):
        eps = acc.get_epsilon(delta)
        assert eps <= rdp.get_epsilon(delta)
        assert acc.get_delta(eps) <= delta
    # the engine's converged value at 1e-12 (bench/bench_tail.py; reference 3.91426)
    assert acc.get_epsilon(1e-12) == pytest.approx(3.9143, rel=1e-4)


def test_accountant_mixed_ledger_tighter_and_certified():
    ledger = [(ev.PoissonSampled(0.02, ev.Gaussian(1.2)), 200), (ev.Laplace(10.0), 1),
              (ev.Gaussian(5.0), 2)]
    acc = PLDAccountant()
    for event, count in ledger:
        acc.compose(event, count)
    composed = compose_table(leaf_table(ledger, "add_remove", H), "add_remove")
    plain = max(float(epsilon_for_delta(p, 1e-15)) for p in composed.values())
    eps = acc.get_epsilon(1e-15)
    assert eps < plain
    delta = acc.get_delta(eps)  # asked once (a tilted composition each time)
    assert delta <= 1e-15
    # get_delta is tilted too, and never above the plain profile
    assert delta <= max(float(delta_for_epsilon(p, eps)) for p in composed.values())


# 1e-30 by default; 1e-12 (its own tilted programs, the same path and property) in the slow tier
@pytest.mark.parametrize("delta", [pytest.param(1e-12, marks=pytest.mark.slow), 1e-30])
def test_accountant_bracket_tilted_lower_end_contains_closed_form(delta):
    """The ledger's bracket below 1e-7: the tilted optimistic product's lower end. For mixed
    Gaussians (closed form) it contains the exact epsilon and is about a bin per use wide at
    1e-12 and 1e-30, where the plain lower end stopped at the FFT's ~1e-10 floor."""
    acc = PLDAccountant().compose(ev.Gaussian(2.0), 3).compose(ev.Gaussian(3.0), 5)
    mu = math.sqrt(3 / 4 + 5 / 9)
    lower, upper = acc.bracket(delta)
    exact = gdp_epsilon(mu, delta)
    assert lower <= exact <= upper
    assert upper - lower <= (8 + 2) * H  # K uses, each rounded by less than a bin
