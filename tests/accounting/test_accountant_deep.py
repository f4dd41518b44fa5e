"""PLDAccountant's ledger composition down to delta = 1e-300 (issue #13, item 1).

Below ``TILT_BELOW`` the accountant answers through the tilted heterogeneous composition;
its leaf grids are then cut at a tail sized from the delta asked for
(:func:`dpjax.accounting.deep_tail.deep_tail`).  References: the closed form of a
``T``-fold Gaussian (``mu = sqrt(sum_i K_i / sigma_i^2)``, Balle & Wang 2018, Thm 8) in
mpmath, and the scalar engine (``dpjax.account``) for a Poisson-subsampled Gaussian.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from _helpers import tiered

import dpjax
from dpjax.accounting import events as ev
from dpjax.accounting.accountant import PLDAccountant
from dpjax.accounting.deep_tail import deep_tail
from dpjax.accounting.events.plds import leaf_plds
from dpjax.accounting.pld.discretise import TAIL

H = 1e-3  # coarse bins keep the deep grids small; agreement is asserted in bins
BINS = 3.0  # the upper end within this many bins above the reference


def gaussian_log_delta(mu: float, eps: float) -> mp.mpf:
    """``log delta(eps)`` of the Gaussian pair at ``mu`` (Balle & Wang 2018, Thm 8), mpmath."""
    with mp.workdps(60):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.log(mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact ``epsilon(delta)`` of the Gaussian pair at ``mu``, by bisection in mpmath."""
    lo, hi, target = 0.0, 200.0, math.log(delta)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gaussian_log_delta(mu, mid) > target else (lo, mid)
    return hi


def check_against(acc: PLDAccountant, uses: int, delta: float, ref: float) -> None:
    lower, upper = acc.bracket(delta)  # upper = get_epsilon(delta)
    assert ref <= upper <= ref + BINS * H, (delta, ref, upper)
    assert lower <= ref, (delta, lower, ref)
    # each use's loss is rounded by at most one bin either way: the bracket is that narrow
    assert upper - lower <= uses * H
    assert acc.get_delta(upper) <= delta


@pytest.fixture(scope="module")
def gaussian_ledger():
    return PLDAccountant(bin_width=H).compose(ev.Gaussian(10.0), 10)


def test_deep_tail_levels():
    # today's grids wherever they resolve the level; whole decades below, <= 1e-14 delta / K
    assert deep_tail(math.log(1e-5), 1000) == TAIL
    assert deep_tail(math.log(1e-20), 10) == TAIL
    for delta, uses in ((1e-100, 1000), (1e-60, 7), (1e-200, 10**4)):
        tail = deep_tail(math.log(delta), uses)
        assert tail <= 1e-14 * delta / uses and tail >= 1e-25 * delta / uses
        assert math.log10(tail) == round(math.log10(tail))
    assert deep_tail(math.log(1e-300), 1000) == 1e-300  # the floor


@pytest.mark.parametrize(
    "event",
    [
        (ev.Gaussian(1.0), "add_remove"),
        (ev.PoissonSampled(0.01, ev.Gaussian(1.0)), "add_remove"),
        (ev.Laplace(1.0), "add_remove"),
        (ev.MixtureOfGaussians(1.0, (0.5, 1.0), (0.5, 0.5)), "add_remove"),
        (ev.PoissonSampled(0.1, ev.MixtureOfGaussians(1.0, (1.0,), (1.0,))), "add_remove"),
        (ev.PoissonSampled(0.01, ev.Gaussian(1.0)), "replace_one"),
    ],
    ids=["gaussian", "poisson-gaussian", "laplace", "mixture", "poisson-mixture",
         "replace-one-poisson"],
)
def test_deep_leaves_send_less_than_the_tail_to_infinity(event):
    event, relation = event
    deep = leaf_plds(event, relation, H, True, 1e-120)
    plain = leaf_plds(event, relation, H, True)
    assert deep.keys() == plain.keys()
    for d in deep:
        assert float(deep[d].inf_mass) <= 1e-120
        # no more than today's, but for the charge of what float64 underflow may flush
        # (3 e^h u_min per grid point, pld.underflow.charge_underflow)
        assert float(deep[d].inf_mass) <= float(plain[d].inf_mass) + deep[d].size * 1e-307
        # the same grid spacing and start: a deeper cut only extends the top
        assert int(deep[d].lower) <= int(plain[d].lower)


@pytest.mark.parametrize("delta", [1e-100, 1e-300])
def test_gaussian_ledger_deep(gaussian_ledger, delta):
    check_against(gaussian_ledger, 10, delta, gaussian_epsilon(math.sqrt(10) / 10.0, delta))


def test_mixed_gaussian_ledger_deep():
    acc = PLDAccountant(bin_width=H).compose(ev.Gaussian(8.0), 4).compose(ev.Gaussian(12.0), 6)
    mu = math.sqrt(4 / 8.0**2 + 6 / 12.0**2)
    for delta in (1e-100, 1e-300):
        check_against(acc, 10, delta, gaussian_epsilon(mu, delta))


# 1e-300 (the deepest, at the deep tail's floor) by default; 1e-100 (its own deep leaf grids
# and tilted programs, the same path and property) in the slow tier
@pytest.mark.parametrize("delta", tiered(1e-300, 1e-100))
def test_mixture_ledger_deep(delta):
    """A one-component mixture is the Gaussian: the mixture path reaches 1e-300 too."""
    acc = PLDAccountant(bin_width=H).compose(ev.MixtureOfGaussians(10.0, (1.0,), (1.0,)), 10)
    check_against(acc, 10, delta, gaussian_epsilon(math.sqrt(10) / 10.0, delta))


SUBSAMPLED = (1.0, 0.05, 20, 1e-100)  # sigma, q, steps, delta


@pytest.fixture(scope="module")
def subsampled_ledger():
    sigma, q, steps, _ = SUBSAMPLED
    return PLDAccountant(bin_width=H).compose(ev.PoissonSampled(q, ev.Gaussian(sigma)), steps)


def test_poisson_gaussian_ledger_below_rdp(subsampled_ledger):
    import dp_accounting as dpa

    sigma, q, steps, delta = SUBSAMPLED
    # quarter orders up to 64 (its optimum here is order 7), then 128 .. 1024: the same
    # 41.2257 as every quarter order up to 1000, whose 3000 fractional orders took seconds
    orders = [1.0 + i / 4.0 for i in range(1, 253)] + [128.0, 256.0, 512.0, 1024.0]
    rdp = dpa.rdp.RdpAccountant(orders=orders)
    rdp.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    lower, upper = subsampled_ledger.bracket(delta)
    # dp_accounting's RDP accountant (orders up to 1024) is a valid upper bound: the PLD
    # upper end is well below it (measured 40.555 against 41.226)
    assert math.isfinite(upper) and upper <= rdp.get_epsilon(delta) - 0.5
    assert 0.0 < lower <= upper and upper - lower <= steps * H
    assert subsampled_ledger.get_delta(upper) <= delta


@pytest.mark.slow  # the engine's tilted kernels compile too (over a minute on one core)
def test_poisson_gaussian_ledger_matches_engine(subsampled_ledger):
    sigma, q, steps, delta = SUBSAMPLED
    acc = subsampled_ledger
    lower, upper = acc.bracket(delta)
    engine = float(
        dpjax.account("gaussian", {"sigma": sigma}, compositions=steps, sampling_rate=q,
                      delta=delta)
    )
    assert math.isfinite(upper)
    assert abs(upper - engine) <= BINS * H, (upper, engine)
    assert lower <= engine + BINS * H and upper - lower <= steps * H
    assert acc.get_delta(upper) <= delta
