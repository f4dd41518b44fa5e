"""The event-scale search (dpjax.calibration.event_scale) and the decision query it asks.

A search step only asks whether a scale meets the target: ``get_delta(epsilon,
target=delta)`` stops refining once its certified answer is at most ``delta`` (no tilted
refinement, no RDP bound below it).  It decides exactly as the tightest answer does and is
never below it; the returned scale is re-checked at the tightest answer.
"""

import math

import pytest

from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.calibration.event_scale import calibrate_event_scale, event_delta

H = 1e-3  # coarse bins: small grids; the property does not depend on the resolution


@pytest.fixture(scope="module")
def ledger():
    """Four Poisson-subsampled Gaussian uses (a PLD ledger, not the Gaussian closed form)."""
    return PLDAccountant(bin_width=H).compose(ev.PoissonSampled(0.2, ev.Gaussian(1.5)), 4)


def test_target_decides_as_the_tightest_answer_and_is_never_below_it(ledger):
    eps = 4.0  # delta ~ 2.6e-12: below 1e-7, where the tight answer is the tilted one
    tight = ledger.get_delta(eps)
    plain = ledger.get_delta(eps, target=0.5)  # met at once: no refinement
    assert plain > tight  # the refinement was skipped (else this test checks nothing)
    for target in (0.5 * tight, tight, math.sqrt(tight * plain), plain, 2.0 * plain, 0.5):
        fast = ledger.get_delta(eps, target=target)
        assert fast >= tight
        assert (fast <= target) == (tight <= target), target
        if tight <= target < plain:  # the plain answer misses: refined to the tightest
            assert fast == tight
    assert ledger.get_delta(eps, target=0.0) == tight


@pytest.mark.parametrize("target", [-1e-9, 1.0, math.nan])
def test_target_outside_zero_one_is_refused(ledger, target):
    with pytest.raises(ValueError, match="delta"):
        ledger.get_delta(1.0, target=target)


def test_calibration_is_rechecked_at_the_tightest_answer():
    """The search decides with the decision query; the returned ``delta`` is the tightest
    certified one at the returned scale, at most the target, and a scale a little smaller
    misses it."""
    eps, dlt = 4.0, 1e-10

    def build(s):
        return ev.SelfComposed(ev.PoissonSampled(0.2, ev.Gaussian(s)), 4)

    scale, delta_at = calibrate_event_scale(build, eps, dlt, "add_remove", 1.0,
                                            name="gaussian", bin_width=H, rtol=1e-3)
    s = float(scale)
    assert float(delta_at) == event_delta(build(s), eps, "add_remove", H) <= dlt
    assert event_delta(build(s * (1 - 2e-3)), eps, "add_remove", H) > dlt


def test_the_search_needs_few_accountant_queries(monkeypatch):
    """Illinois steps on ``log(-log delta)`` against ``log s`` (about linear for a Gaussian
    tail ``e^{-c s^2}``): the least scale to ``rtol = 1e-5`` from a guess 4x too small in a
    handful of queries (counted, as the compile-count tests count compiles; steps on
    ``log delta`` took 18 here).  (A profile that reaches exactly 0 near the answer, the
    pure-DP end of subsampled Laplace, is bisected: no step can interpolate a 0.)"""
    from dpjax.calibration import event_scale

    asked = []
    real = event_scale.event_delta

    def counted(*args, **kwargs):
        asked.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(event_scale, "event_delta", counted)

    def build(s):
        return ev.SelfComposed(ev.PoissonSampled(0.2, ev.Gaussian(s)), 4)

    scale, delta_at = calibrate_event_scale(build, 2.0, 1e-8, "add_remove", 0.25,
                                            name="gaussian", bin_width=H)
    assert float(delta_at) <= 1e-8
    assert len(asked) <= 10, len(asked)


def test_coarse_first_search_keeps_the_fine_contract_in_few_fine_queries(monkeypatch):
    """``coarse=16``: the whole search at 16x the bin width, then a few queries at the bin
    width from its answer; the returned scale meets the target at the bin width and a scale
    ``1 + 2 rtol`` smaller misses it there (the one search's contract), and it is the one
    search's answer to within ``rtol``."""
    from dpjax.calibration import event_scale

    widths = []
    real = event_scale.event_delta

    def counted(event, eps, relation, bin_width=1e-4, target=0.0):
        widths.append(bin_width)
        return real(event, eps, relation, bin_width, target)

    monkeypatch.setattr(event_scale, "event_delta", counted)

    def build(s):
        return ev.PoissonSampled(0.2, ev.Gaussian(s))

    eps, dlt, rtol = 2.0, 1e-3, 1e-4
    kw = {"name": "gaussian", "bin_width": H, "rtol": rtol}
    scale, delta_at = calibrate_event_scale(build, eps, dlt, "replace_one", 0.3,
                                            coarse=event_scale.COARSE, **kw)
    fine = [w for w in widths if w == H]
    assert len(widths) > len(fine) > 0  # both passes ran
    assert len(fine) <= 4, widths  # two or three fine steps and the re-check
    s = float(scale)
    assert float(delta_at) == real(build(s), eps, "replace_one", H) <= dlt
    assert real(build(s / (1 + 2 * rtol)), eps, "replace_one", H) > dlt
    one, _ = calibrate_event_scale(build, eps, dlt, "replace_one", 0.3, **kw)
    assert float(one) == pytest.approx(s, rel=rtol)
