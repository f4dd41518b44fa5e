"""The ledger RDP bound from exact moments against dp_accounting's RDP accountant."""

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from dpjax.accounting import events as ev
from dpjax.accounting.rdp.laplace import laplace_rdp_epsilon
from dpjax.accounting.rdp.ledger import (
    ledger_log_moments,
    ledger_rdp_delta,
    ledger_rdp_delta_exceeds,
    ledger_rdp_epsilon,
    ledger_rdp_epsilon_exceeds,
)

LEDGERS = [
    # (dpjax leaves, the same ledger as a dp_accounting event)
    ([(ev.Gaussian(2.0), 50)], dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 50)),
    (
        [(ev.PoissonSampled(0.01, ev.Gaussian(1.0)), 1000), (ev.Laplace(5.0), 10)],
        dp_event.ComposedDpEvent([
            dp_event.SelfComposedDpEvent(
                dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 1000),
            dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(5.0), 10),
        ]),
    ),
    ([(ev.ZCDP(0.05), 20)], dp_event.SelfComposedDpEvent(dp_event.ZCDpEvent(0.05), 20)),
]


@pytest.mark.parametrize("leaves,event", LEDGERS)
def test_never_above_dp_accounting_rdp(leaves, event):
    """The same moments on a superset of dp_accounting's orders: never above its epsilon or
    delta, at most 1% below (more orders, exact fractional-order moments)."""
    acc = RdpAccountant()
    acc.compose(event)
    for delta in (1e-5, 1e-12, 1e-30):
        ref = acc.get_epsilon(delta)
        got = ledger_rdp_epsilon(leaves, "add_remove", delta)
        assert 0.99 * ref <= got <= ref * (1 + 1e-9)
    ref_delta = acc.get_delta(3.0)
    assert ledger_rdp_delta(leaves, "add_remove", 3.0) <= ref_delta * (1 + 1e-9)


def test_subsampled_laplace_and_unsupported_leaves():
    """Poisson-subsampled Laplace (which dp_accounting's RDP accountant refuses) composes as
    its per-use moments; a leaf without exact moments gives no bound (inf / 1)."""
    leaves = [(ev.PoissonSampled(0.2, ev.Laplace(1.0)), 30)]
    got = ledger_rdp_epsilon(leaves, "add_remove", 1e-20)
    assert got == pytest.approx(laplace_rdp_epsilon(1.0, 0.2, 30, 1e-20), rel=1e-12)
    other = leaves + [(ev.DiscreteLaplace(1.0), 1)]
    assert ledger_log_moments(other, "add_remove") is None
    assert ledger_rdp_epsilon(other, "add_remove", 1e-5) == math.inf
    assert ledger_rdp_delta(other, "add_remove", 1.0) == 1.0
    sampled = [(ev.PoissonSampled(0.2, ev.Gaussian(1.0)), 3)]
    assert ledger_log_moments(sampled, "replace_one") is None


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_exceeds_only_where_the_rdp_bound_misses(relation):
    """The cheap decisions are ``True`` only where :func:`ledger_rdp_delta` /
    :func:`ledger_rdp_epsilon` are above the value, and (the lower bounds being tight) already
    at ``0.999`` times them for ledgers of Laplace, Gaussian and zCDP leaves; a leaf without
    cheap bounds (a noise family, which counts as ``0``) only weakens them."""
    fh = ev.Noise("flipped-huber", {"alpha": 0.5, "gamma": 1.0})
    ledgers = [
        [(ev.PoissonSampled(0.2, ev.Laplace(2.0)), 10)],
        [(ev.PoissonSampled(0.05, ev.Laplace(0.7)), 40), (ev.Gaussian(8.0), 3),
         (ev.ZCDP(0.01), 2), (ev.Laplace(20.0), 5)],
        [(ev.PoissonSampled(0.2, ev.Laplace(2.0)), 10), (fh, 2)],
    ]
    for leaves in ledgers:
        cheap = all(not isinstance(leaf, ev.Noise) for leaf, _ in leaves)
        sampled = any(isinstance(leaf, ev.PoissonSampled) for leaf, _ in leaves)
        bounded = cheap and not (sampled and relation == "replace_one")  # else no RDP bound
        for x in (0.3, 2.0):
            for exact_fn, exceeds in ((ledger_rdp_delta, ledger_rdp_delta_exceeds),
                                      (ledger_rdp_epsilon, ledger_rdp_epsilon_exceeds)):
                arg = x if exact_fn is ledger_rdp_delta else 10.0 ** (-3 * x)  # epsilon, delta
                exact = exact_fn(leaves, relation, arg)
                for factor in (1e-3, 0.999, 1.0, 1.5):
                    if exceeds(leaves, relation, arg, factor * exact):
                        assert exact > factor * exact, (leaves, arg, factor)
                if bounded and 0.0 < exact < (1.0 if exact_fn is ledger_rdp_delta else 1e300):
                    assert exceeds(leaves, relation, arg, 0.999 * exact), (leaves, arg)


def test_pld_accountant_takes_the_rdp_bound():
    """A zCDP ledger: its PLD comes from the profile bound and composes loosely (eps(1e-6)
    ~10.1); PLDAccountant reports the exact-moment RDP bound instead, which is never above
    dp_accounting's RDP accountant; get_delta likewise."""
    from dpjax.accounting import PLDAccountant

    acc = PLDAccountant().compose(ev.ZCDP(0.05), 20)
    ref = RdpAccountant()
    ref.compose(dp_event.ZCDpEvent(0.05), 20)
    got = acc.get_epsilon(1e-6)
    assert got <= ref.get_epsilon(1e-6) * (1 + 1e-9)
    assert acc.get_delta(got) <= 1e-6
    assert acc.get_delta(9.0) <= ref.get_delta(9.0) * (1 + 1e-9)
    lower, upper = acc.bracket(1e-6)
    assert lower <= upper == got


def _gaussian_epsilon(mu, delta):
    """Exact epsilon(delta) of N(0, 1) vs N(mu, 1) (Balle & Wang 2018, Thm 8), by bisection."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def gap(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta

    return brentq(gap, 0.0, 10.0 * mu * mu + 100.0, xtol=1e-12)


def test_noise_leaves_use_family_moments():
    """``Noise`` leaves get the certified family moments: flipped Huber at alpha = 0 is
    N(0, gamma^2), so its ledger bound is dp_accounting's Gaussian RDP (never above, at most
    1% below: more orders) and above the exact composed Gaussian epsilon; replace-one doubles
    the shift; truncated Laplace is vacuous (inf / 1); subsampled families have no bound."""
    from dpjax import noise
    from dpjax.accounting.rdp.families import family_log_moments
    from dpjax.accounting.rdp.ledger import leaf_log_moments

    leaves = [(ev.Noise("flipped-huber", {"alpha": 0.0, "gamma": 2.0}), 50)]
    acc = RdpAccountant()
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 50))
    for delta in (1e-5, 1e-12, 1e-30):
        ref = acc.get_epsilon(delta)
        got = ledger_rdp_epsilon(leaves, "add_remove", delta)
        assert _gaussian_epsilon(math.sqrt(50) / 2.0, delta) < 0.99 * ref <= got
        assert got <= ref * (1 + 1e-9)
    fh = ev.Noise("flipped-huber", {"alpha": 1.0, "gamma": 2.0})
    doubled = family_log_moments(noise.make("flipped-huber", alpha=1.0, gamma=2.0), 2.0)[1]
    assert np.array_equal(leaf_log_moments(fh, "replace_one"), doubled)
    tl = [(ev.Noise("truncated-laplace", {"scale": 1.0, "bound": 3.0}), 2)]
    assert ledger_rdp_epsilon(tl, "add_remove", 1e-5) == math.inf
    assert ledger_rdp_delta(tl, "add_remove", 5.0) == 1.0
    assert leaf_log_moments(ev.PoissonSampled(0.1, fh), "add_remove") is None


def test_pld_accountant_with_flipped_huber_ledger():
    """PLDAccountant on ``Noise("flipped-huber") x 50`` takes min(PLD, RDP): at most the
    finite RDP bound of the family moments, which is not vacuous (within 10%); at the
    Gaussian end (alpha = 0) both lie above the exact composed epsilon, the accountant
    within 1% of it."""
    from dpjax.accounting import PLDAccountant

    delta = 1e-6
    exact = _gaussian_epsilon(math.sqrt(50) / 2.0, delta)
    event = ev.Noise("flipped-huber", {"alpha": 0.0, "gamma": 2.0})
    rdp = ledger_rdp_epsilon([(event, 50)], "add_remove", delta)
    got = PLDAccountant().compose(event, 50).get_epsilon(delta)
    assert exact <= got <= min(rdp, 1.01 * exact)
    assert rdp <= 1.1 * got


def test_kdim_flipped_huber_takes_the_rdp_bound(monkeypatch):
    """The exact K-dim flipped Huber epsilon / profile is min(engine, RDP of K uses): with the
    engine answering nothing (inf / 1; its own path is tested in test_flipped_huber_kdim_exact)
    the RDP bound of K uses is returned; at alpha = 0 (Gaussian, Delta_2 = sqrt(K)) it lies
    above the exact epsilon and never above dp_accounting's RDP, its delta at most delta."""
    from dpjax.accounting.flipped_huber_kdim import (
        delta_flipped_huber_exact,
        epsilon_flipped_huber_exact,
    )
    from dpjax.accounting.pld import engine
    from dpjax.accounting.rdp.ledger import family_rdp_delta, family_rdp_epsilon
    from dpjax.noise import FlippedHuber

    monkeypatch.setattr(engine, "epsilon", lambda *a, **k: np.full(np.shape(a[4]), np.inf))
    monkeypatch.setattr(engine, "profile", lambda *a, **k: np.ones(np.shape(a[4])))
    k, delta = 10, 1e-10
    ref = RdpAccountant()
    ref.compose(dp_event.GaussianDpEvent(2.0 / math.sqrt(k)))
    for alpha in (0.0, 1.0):
        noise = FlippedHuber(alpha, 2.0)
        got = float(epsilon_flipped_huber_exact(delta, alpha, 2.0, k, 1.0))
        assert got == float(family_rdp_epsilon(noise, k, delta)) < math.inf
        at = float(delta_flipped_huber_exact(got, alpha, 2.0, k, 1.0))
        assert at == float(family_rdp_delta(noise, k, got)) <= delta * 1.001
        if alpha == 0.0:
            exact = _gaussian_epsilon(math.sqrt(k) / 2.0, delta)
            assert exact < got <= ref.get_epsilon(delta) * (1 + 1e-9)
