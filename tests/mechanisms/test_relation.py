"""``dpjax.calibrate(..., relation=...)``: dp_accounting's expected values.

References: ``privacy_loss_mechanism_test`` of dp_accounting
(``test_gaussian_from_privacy_parameters``: exact calibrations, 3 decimals;
``test_laplace_from_privacy_parameters``: the pure-DP remove-direction scale
``1 / log(1 + (e^eps - 1) / q)``, whatever the case's adjacency and delta), and the live
``GaussianPrivacyLoss`` of dp_accounting (exact, not discretised) at dpjax's answer.
"""

import math

import pytest
from _helpers import once_per_arguments, tiered

import dpjax
from dpjax.calibration.flipped_huber_kdim import calibrate_flipped_huber_subsampled
from dpjax.cli._main import main

plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
ADJ = {"add": plm.AdjacencyType.ADD, "remove": plm.AdjacencyType.REMOVE,
       "replace_one": plm.AdjacencyType.REPLACE}


def _exact_gaussian_delta(sigma, sens, q, relation, eps):
    """dp_accounting's exact (not discretised) delta of the Gaussian pair."""
    pl = plm.GaussianPrivacyLoss(sigma, sensitivity=sens, sampling_prob=q,
                                 adjacency_type=ADJ[relation])
    return pl.get_delta_for_epsilon(eps)


@pytest.mark.parametrize("sens,relation,eps,delta,expected", [
    (1.0, "add", 1.0, 0.12693674, 1.0),
    (2.0, "replace_one", 1.0, 0.12693674, 4.0),  # replace-one: twice the noise
    (5.0, "replace_one", 2.0, 0.02092364, 10.0),
    (2.0, "replace_one", 16.0, 1.016e-05, 1.376),
])
def test_gaussian_without_subsampling(sens, relation, eps, delta, expected):
    cal = dpjax.calibrate("gaussian", eps, delta, l2=sens, relation=relation)
    sigma = float(cal.params["sigma"])
    assert sigma == pytest.approx(expected, abs=1e-3)
    assert float(cal.delta_at_params) <= delta
    assert _exact_gaussian_delta(sigma, sens, 1.0, relation, eps) <= delta * (1 + 1e-9)
    if relation == "replace_one":
        assert any("twice" in n for n in cal.notes)


# (sensitivity, q, relation, epsilon, delta, expected sigma): the subsampled cases
GAUSS_SAMPLED = [
    (2.0, 0.7, "add", 1.0, 0.01080649, 1.5),
    (5.0, 0.75, "remove", 2.0, 0.00877201, 5.0),
    (5.0, 0.75, "replace_one", 2.0, 0.09233932, 5.0),
    (1.0, 0.3, "replace_one", 16, 4.960e-05, 0.3),
    (1.0, 0.1, "replace_one", 2.0, 3.828e-06, 1.0),
    (2.0, 0.2, "replace_one", 16, 0.02477823, 0.4),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", GAUSS_SAMPLED)
def test_gaussian_poisson_subsampled(case):
    sens, q, relation, eps, delta, expected = case
    cal = dpjax.calibrate("gaussian", eps, delta, l2=sens, sampling_rate=q, relation=relation)
    sigma = float(cal.params["sigma"])
    # dpjax's PLD is pessimistic: sigma at or just above the exact one (dp_accounting's value,
    # 3 decimals), and the exact delta at it within the target
    assert expected - 1e-3 <= sigma <= expected * (1 + 1e-3) + 1e-3
    assert float(cal.delta_at_params) <= delta
    assert _exact_gaussian_delta(sigma, sens, q, relation, eps) <= delta * (1 + 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("sens,q,relation,eps,delta", [
    (1.0, 0.8, "add", 1.0, 0.0), (1.0, 0.5, "remove", 1.0, 0.1),
])
def test_laplace_poisson_subsampled(sens, q, relation, eps, delta):
    # dp_accounting's Laplace calibration: the remove direction's pure-DP scale
    pure_remove = sens / math.log(1 + math.expm1(eps) / q)
    cal = dpjax.calibrate("laplace", eps, delta, l1=sens, sampling_rate=q, relation=relation)
    scale = float(cal.params["scale"])
    assert float(cal.delta_at_params) <= delta
    if relation == "remove" or delta == 0:
        assert scale <= pure_remove * (1 + 2e-5)  # never more noise than dp_accounting's
    if relation == "add" and delta == 0:  # the add direction's own pure-DP scale, exactly
        exact = sens / -math.log(1 - (1 - math.exp(-eps)) / q)
        assert scale == pytest.approx(exact, rel=2e-5)


def test_replace_one_subsampled_truncated_laplace_is_certified():
    """No worst pair of contributions is known for its replace pair under subsampling:
    calibrated on the advanced-joint-convexity bound (:mod:`dpjax.accounting.pld.
    amplification`), certified, and enough for add_remove too (a record swapped moves the
    output at least as far as one removed).  Spherical: tests/spherical/test_calibrate.py.
    The target (0.15, 1e-5) at q = 0.2 is that of the other relations' calibrations in
    tests/accounting/events/test_truncated_laplace_poisson.py (programs shared through the
    run's compilation cache; at epsilon = 1 the search compiled a quarter more programs)."""
    cal = dpjax.calibrate("truncated-laplace", 0.15, 1e-5, linf=1.0, sampling_rate=0.2,
                          relation="replace_one")
    assert float(cal.delta_at_params) <= 1e-5
    params = {k: float(v) for k, v in cal.params.items()}
    assert float(dpjax.profile("truncated-laplace", params, 0.15, linf=1.0,
                               sampling_rate=0.2)) <= 1e-5
    assert any("replace-one bound" in n for n in cal.notes)


#: the engine's subsampled shape search, run once per arguments in this module
_fh_search_once = once_per_arguments(calibrate_flipped_huber_subsampled)


@pytest.fixture
def fh_search_once(monkeypatch):
    """The flipped Huber mechanism's subsampled calibrations through :func:`_fh_search_once`
    (a relation re-searches the scale on the add_remove answer's shape: that answer is
    :func:`fh_subsampled`'s, not a second identical search)."""
    from dpjax.mechanisms import flipped_huber as mech

    monkeypatch.setattr(mech, "calibrate_flipped_huber_subsampled", _fh_search_once)


@pytest.fixture(scope="module")
def fh_subsampled():
    """Flipped Huber, 8 uses at q = 0.2, add_remove: the engine's subsampled shape search
    (8 log(1 / 0.8) = 1.79 > epsilon: the add direction alone does not meet the target)."""
    from dpjax.mechanisms import flipped_huber as mech

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mech, "calibrate_flipped_huber_subsampled", _fh_search_once)
        return dpjax.calibrate("flipped-huber", 1.0, 1e-6, linf=1.0, compositions=8,
                               sampling_rate=0.2)


def _fh_event_delta(cal, relation, q=0.2, uses=8):
    """The PLDAccountant's certified delta(1) of the returned parameters (the events path,
    not the engine the calibration searched with)."""
    from dpjax.accounting import events as ev
    from dpjax.calibration.event_scale import event_delta

    step = ev.PoissonSampled(q, ev.Noise("flipped-huber", {
        "alpha": float(cal.params["alpha"]), "gamma": float(cal.params["gamma"])}))
    return event_delta(ev.SelfComposed(step, uses), 1.0, relation)


def test_flipped_huber_subsampled_certified_and_answered(fh_subsampled):
    # certified by the accountant's events path too; the profile / account facade over the
    # subsampled uses
    cal = fh_subsampled
    assert float(cal.delta_at_params) <= 1e-6 and str(cal.member) in (
        "gaussian", "laplace", "interior")
    assert _fh_event_delta(cal, "add_remove") <= 1e-6
    params = {n: float(v) for n, v in cal.params.items()}
    prof = dpjax.profile("flipped-huber", params, epsilon=1.0, linf=1.0, compositions=8,
                         sampling_rate=0.2)
    assert float(prof) <= 1e-6
    eps = dpjax.account("flipped-huber", params, delta=1e-6, linf=1.0, compositions=8,
                        sampling_rate=0.2)
    assert float(eps) <= 1.0 + 1e-6
    # (a K-dim query under subsampling: one coin per use since 2026-12-02,
    # tests/calibration/test_one_coin_family.py)


@pytest.mark.slow
def test_flipped_huber_subsampled_beats_both_ends(fh_subsampled):
    # the family holds the Gaussian (b = 0) and, at b = 1e4, the Laplace: its least variance
    # is at most theirs under the same subsampled uses
    g = dpjax.calibrate("gaussian", 1.0, 1e-6, l2=1.0, compositions=8, sampling_rate=0.2)
    lap = dpjax.calibrate("laplace", 1.0, 1e-6, l1=1.0, compositions=8, sampling_rate=0.2)
    assert float(fh_subsampled.variance) <= min(float(g.variance), float(lap.variance)) * (
        1 + 1e-3)


@pytest.mark.parametrize("relation", tiered("add", "remove"))
def test_flipped_huber_subsampled_relations(fh_subsampled, fh_search_once, relation):
    # add / remove: the add_remove shape, gamma re-searched under the one direction (add
    # needs less noise; remove is the worse one here: the add_remove answer), certified by
    # the accountant under the relation
    base = fh_subsampled
    b = float(base.params["alpha"]) / float(base.params["gamma"])
    cal = dpjax.calibrate("flipped-huber", 1.0, 1e-6, linf=1.0, compositions=8,
                          sampling_rate=0.2, relation=relation)
    assert float(cal.params["alpha"]) / float(cal.params["gamma"]) == pytest.approx(b)
    assert float(cal.variance) <= float(base.variance) * (1 + 2e-5)
    assert _fh_event_delta(cal, relation) <= 1e-6
    assert any(f"relation {relation}" in n for n in cal.notes)
    if relation == "remove":
        assert float(cal.variance) == pytest.approx(float(base.variance), rel=1e-4)
    else:
        assert float(cal.variance) < 0.9 * float(base.variance)


def test_relation_without_subsampling_any_family():
    # add / remove without subsampling: the add_remove calibration; replace_one: twice the
    # sensitivity, for every additive family
    base = dpjax.calibrate("laplace", 1.0, 1e-6, l1=1.0)
    add = dpjax.calibrate("laplace", 1.0, 1e-6, l1=1.0, relation="add")
    rep = dpjax.calibrate("laplace", 1.0, 1e-6, l1=1.0, relation="replace_one")
    two = dpjax.calibrate("laplace", 1.0, 1e-6, l1=2.0)
    assert float(add.params["scale"]) == float(base.params["scale"])
    assert float(rep.params["scale"]) == float(two.params["scale"])


def test_cli_relation_and_mechanisms(capsys):
    import json

    code = main(["calibrate", "gaussian", "--epsilon", "1", "--delta", "0.12693674", "--l2",
                 "2", "--relation", "replace_one", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, None) and out["params"]["sigma"] == pytest.approx(4.0, abs=1e-3)
    main(["mechanisms"])
    listed = capsys.readouterr().out
    assert "discrete-laplace:" in listed and "discrete-gaussian:" in listed


def test_add_target_that_holds_without_noise_raises():
    # 1 - e^eps (1 - q)^T <= delta: every noise level meets it (a search ran to its end)
    from dpjax.mechanisms._relation import no_noise_add_bound

    assert float(no_noise_add_bound(0.5, 0.2, 1)) == 0.0  # eps >= log(1 / (1 - q))
    expected = 1.0 - math.exp(0.1) * 0.8**3
    assert expected <= float(no_noise_add_bound(0.1, 0.2, 3)) <= expected * (1 + 1e-14)
    kw = {"linf": 1.0, "sampling_rate": 0.2, "relation": "add"}
    for name in ("gaussian", "laplace", "staircase", "flipped-huber", "discrete-laplace"):
        with pytest.raises(dpjax.TrivialTargetError, match="holds without noise"):
            dpjax.calibrate(name, 0.5, 1e-6, **kw)
    with pytest.raises(dpjax.TrivialTargetError, match="T = 3 uses"):
        dpjax.calibrate("gaussian", [0.1, 0.2], [1e-6, 0.5], compositions=3, **kw)
    code = main(["calibrate", "gaussian", "--epsilon", "0.5", "--delta", "1e-6", "--l2", "1",
                 "--sampling-rate", "0.2", "--relation", "add"])
    assert code == 2


def test_no_noise_add_bound_is_sharp():
    # the bound holds for every noise and is approached as the noise vanishes: the certified
    # profile of PoissonSampled(0.2, Gaussian(0.1)) under add is within 1e-5 below it
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev
    from dpjax.mechanisms._relation import no_noise_add_bound

    for sigma, gap in ((0.1, 1e-5), (1.0, None)):
        acc = PLDAccountant("add", 1e-4).compose(ev.PoissonSampled(0.2, ev.Gaussian(sigma)))
        for eps in (0.0, 0.1, 0.2):
            bound = float(no_noise_add_bound(eps, 0.2, 1))
            got = acc.get_delta(eps)
            assert got <= bound
            if gap is not None:
                assert got >= bound - gap, (sigma, eps, got, bound)
