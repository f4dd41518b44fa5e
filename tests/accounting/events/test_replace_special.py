"""dp_accounting's REPLACE_SPECIAL relation and its TruncatedSubsampledGaussianDpEvent.

References: dp_accounting's own test values (``pld_privacy_accountant_test``), its live
PLD accountant on the same events, and exact closed forms of the discrete pairs.
"""

import math

import numpy as np
import pytest

from dpjax.accounting import PLDAccountant, from_dp_accounting
from dpjax.accounting import events as ev
from dpjax.accounting.events.json_form import event_from_json, event_to_json

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant as ppa  # noqa: E402

NR = dpa.NeighboringRelation


def _rr_special_delta(rho, k, eps):
    """Exact ``delta(eps)`` of randomized response vs the special (uniform) record: the worse
    of ``(R(x), U)`` and ``(U, R(x))`` (sum of ``(p_i - e^eps q_i)_+``, +inf atoms in full)."""
    p = np.array([1 - rho + rho / k, (k - 1) * rho / k])
    q = np.array([1 / k, (k - 1) / k])
    return max(float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0))) for a, b in ((p, q), (q, p)))


@pytest.mark.parametrize(
    "relation,rho,k",
    [  # dp_accounting's test_randomized_response: each case is exactly 1-DP
        ("replace_one", 4 / (3 + math.e), 4),
        ("replace_special", (4 - math.e) / 3, 4),
        ("replace_special", math.exp(-1), 2),
    ],
)
def test_randomized_response_dp_accounting_cases(relation, rho, k):
    acc = PLDAccountant(relation).compose(ev.RandomizedResponse(rho, k))
    assert acc.get_delta(1.0) == pytest.approx(0.0, abs=1e-12)  # dp_accounting: almostEqual 0
    peer = ppa.PLDAccountant(NR.REPLACE_ONE if relation == "replace_one" else NR.REPLACE_SPECIAL)
    peer.compose(dpa.RandomizedResponseDpEvent(rho, k))
    ours = acc.get_delta(0.5)
    assert ours == pytest.approx(peer.get_delta(0.5), rel=1e-9)
    if relation == "replace_special":
        exact = _rr_special_delta(rho, k, 0.5)
        assert exact <= ours <= exact * (1 + 1e-9)


def test_randomized_response_replace_special_is_asymmetric_and_fails_closed():
    # rho = 0: R(x) = x always; the add direction (uniform vs R(x)) has a loss +inf on the
    # other buckets, mass (k - 1) / k: exactly that delta (dp_accounting answers 1)
    acc = PLDAccountant("replace_special").compose(ev.RandomizedResponse(0.0, 3))
    assert acc.get_delta(1.0) == pytest.approx(2 / 3, rel=1e-12)
    assert acc.get_epsilon(0.01) == math.inf
    # a composition: certified against the exact 3-fold product of the worse pair
    rho, k = 0.3, 5
    acc = PLDAccountant("replace_special").compose(ev.RandomizedResponse(rho, k), 3)
    p = np.array([1 - rho + rho / k, (k - 1) * rho / k])
    q = np.array([1 / k, (k - 1) / k])
    exact = 0.0
    for a, b in ((p, q), (q, p)):
        pa, qb = np.einsum("i,j,l->ijl", a, a, a).ravel(), np.einsum("i,j,l->ijl", b, b, b).ravel()
        exact = max(exact, float(np.sum(np.maximum(pa - math.exp(1.2) * qb, 0.0))))
    assert exact <= acc.get_delta(1.2) <= exact + 1e-6
    assert not PLDAccountant("add_remove").supports(ev.RandomizedResponse(rho, k))
    assert PLDAccountant("replace_special").supports(dpa.RandomizedResponseDpEvent(rho, k))


def test_replace_special_is_add_remove_for_additive_noise():
    step = ev.PoissonSampled(0.2, ev.Laplace(1.0))
    ours = PLDAccountant("replace_special").compose(step, 3).get_epsilon(1e-5)
    assert ours == PLDAccountant("add_remove").compose(step, 3).get_epsilon(1e-5)
    peer = ppa.PLDAccountant(NR.REPLACE_SPECIAL)
    peer.compose(dpa.PoissonSampledDpEvent(0.2, dpa.LaplaceDpEvent(1.0)), 3)
    assert ours == pytest.approx(peer.get_epsilon(1e-5), abs=2e-3)


def test_truncated_subsampled_gaussian_converts():
    peer_event = dpa.TruncatedSubsampledGaussianDpEvent(
        dataset_size=4, sampling_probability=0.5, truncated_batch_size=2, noise_multiplier=2.0)
    event = from_dp_accounting(peer_event)
    assert event == ev.TruncatedSubsampledGaussian(4, 0.5, 2, 2.0)
    assert event_from_json(event_to_json(event)) == event
    assert event_from_json({"type": "TruncatedSubsampledGaussianDpEvent", "dataset_size": 4,
                            "sampling_probability": 0.5, "truncated_batch_size": 2,
                            "noise_multiplier": 2.0}) == event
    assert PLDAccountant().supports(peer_event)


@pytest.mark.slow  # tens of seconds of compilation on a loaded 2-core machine
@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_truncated_subsampled_gaussian_against_dp_accounting(relation):
    # dp_accounting's test event (n = 4, q = 0.5, B = 2), at noise multiplier 2 (a small grid)
    peer_event = dpa.TruncatedSubsampledGaussianDpEvent(
        dataset_size=4, sampling_probability=0.5, truncated_batch_size=2, noise_multiplier=2.0)
    event = from_dp_accounting(peer_event)
    peer_rel = NR.ADD_OR_REMOVE_ONE if relation == "add_remove" else NR.REPLACE_ONE
    peer = ppa.PLDAccountant(peer_rel, value_discretization_interval=1e-3)
    peer.compose(peer_event)
    acc = PLDAccountant(relation, bin_width=1e-3).compose(event)
    ours, theirs = acc.get_epsilon(1e-6), peer.get_epsilon(1e-6)
    # both pessimistic PLDs of the same exact pair: within the two grids' rounding
    assert ours == pytest.approx(theirs, abs=3e-3)
    lo, up = acc.bracket(1e-6)
    assert lo <= theirs + 1e-4 and up == ours


@pytest.mark.slow
def test_truncated_subsampled_gaussian_dp_accounting_value():
    # dp_accounting's test_truncated_subsampled_gaussian_basic: epsilon 17.904330 at 1e-6
    acc = PLDAccountant().compose(ev.TruncatedSubsampledGaussian(4, 0.5, 2, 1.0), 3)
    acc.compose(ev.TruncatedSubsampledGaussian(3, 0.5, 2, 1.0), 2)
    assert acc.get_epsilon(1e-6) == pytest.approx(17.904330, abs=1e-5)
    assert acc.get_delta(17.904330) == pytest.approx(1e-6, abs=1e-11)


@pytest.mark.slow
def test_truncated_subsampled_gaussian_without_truncation_is_poisson():
    # B = n: no batch is ever cut (t = 0), so the event is Poisson sampling exactly
    trunc = PLDAccountant(bin_width=1e-3).compose(ev.TruncatedSubsampledGaussian(5, 0.3, 5, 2.0))
    plain = PLDAccountant(bin_width=1e-3).compose(ev.PoissonSampled(0.3, ev.Gaussian(2.0)))
    assert trunc.get_epsilon(1e-5) == plain.get_epsilon(1e-5)
    # truncation can only add the replace-one component: never more private
    cut = PLDAccountant(bin_width=1e-3).compose(ev.TruncatedSubsampledGaussian(5, 0.3, 1, 2.0))
    assert cut.get_epsilon(1e-5) > plain.get_epsilon(1e-5)
    assert PLDAccountant().compose(ev.TruncatedSubsampledGaussian(5, 0.0, 1, 1.0)).get_delta(
        0.0) == 0.0


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: ev.TruncatedSubsampledGaussian(4, 1.5, 2, 1.0), "sampling_probability"),
        (lambda: ev.TruncatedSubsampledGaussian(4, 0.5, -1, 1.0), "truncated_batch_size"),
        (lambda: ev.TruncatedSubsampledGaussian(4, 0.5, 2, 0.0), "noise_multiplier"),
        (lambda: PLDAccountant("replace_specal"), "replace_special"),
    ],
)
def test_bad_input_is_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()
