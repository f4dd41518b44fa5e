"""``dpjax.profile / account(..., relation=...)`` for registry mechanisms
(:func:`dpjax.mechanisms.accounted_under`).

Until 2026-12-03 the registry path ignored ``relation`` and returned the add-or-remove
number under every relation (fail open for ``replace_one``).  References: the mpmath closed
form of the Gaussian pair (eq. (29)) at twice the sensitivity for ``replace_one`` without
subsampling, dp_accounting's exact (not discretised) ``GaussianPrivacyLoss`` under
Poisson subsampling for ``add`` and ``remove``, and the ledger of events accounted by
:class:`~dpjax.accounting.PLDAccountant`.
"""

import json

import mpmath
import numpy as np
import pytest
from _references import gaussian_delta

import dpjax
from dpjax.accounting import events as ev
from dpjax.cli import main

EPS = np.array([0.5, 1.0, 2.0])


def test_replace_one_without_subsampling_is_the_closed_form_at_twice_the_sensitivity():
    got = dpjax.profile("gaussian", {"sigma": 2.0}, EPS, relation="replace_one")
    with mpmath.workdps(40):
        exact = [float(gaussian_delta(e, 2.0, 2.0, 1)) for e in EPS]
    np.testing.assert_allclose(got, exact, rtol=1e-9)
    assert np.all(got >= np.asarray(exact) * (1 - 1e-12))
    eps = dpjax.account("gaussian", {"sigma": 2.0}, delta=1e-5, relation="replace_one")
    assert eps == pytest.approx(dpjax.account(ev.Gaussian(2.0), delta=1e-5,
                                              relation="replace_one"), rel=1e-9)
    assert eps > 2.0 * dpjax.account("gaussian", {"sigma": 2.0}, delta=1e-5) * 0.99


@pytest.mark.parametrize("relation", ["add", "remove"])
def test_add_and_remove_without_subsampling_are_add_remove(relation):
    for q in (None, 1.0):
        np.testing.assert_array_equal(
            dpjax.profile("gaussian", {"sigma": 1.5}, EPS, compositions=2, sampling_rate=q,
                          relation=relation),
            dpjax.profile("gaussian", {"sigma": 1.5}, EPS, compositions=2, sampling_rate=q))


@pytest.mark.parametrize("relation", ["add", "remove"])
def test_subsampled_gaussian_holds_against_the_exact_pair(relation):
    plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    adjacency = {"add": plm.AdjacencyType.ADD, "remove": plm.AdjacencyType.REMOVE}[relation]
    pair = plm.GaussianPrivacyLoss(1.0, sensitivity=1.0, sampling_prob=0.1,
                                   adjacency_type=adjacency)
    exact = np.array([pair.get_delta_for_epsilon(float(e)) for e in EPS])
    got = dpjax.profile("gaussian", {"sigma": 1.0}, EPS, sampling_rate=0.1, relation=relation)
    assert np.all(got >= exact)  # a certified upper bound
    np.testing.assert_allclose(got, exact, rtol=2e-2, atol=1e-12)  # and a tight one


def test_subsampled_add_is_accounted_under_add_not_add_remove():
    kw = dict(compositions=10, sampling_rate=0.1, delta=1e-5)
    add = dpjax.account("gaussian", {"sigma": 2.0}, relation="add", **kw)
    ledger = ev.SelfComposed(ev.PoissonSampled(0.1, ev.Gaussian(2.0)), 10)
    assert add == dpjax.account(ledger, delta=1e-5, relation="add")
    assert add < 0.6 * dpjax.account("gaussian", {"sigma": 2.0}, **kw)  # 0.443 vs 0.798
    bracket = dpjax.account("gaussian", {"sigma": 2.0}, relation="add", bracket=True, **kw)
    assert bracket.epsilon == add and bracket.bracket[0] <= add


def test_shape_family_on_a_subsampled_1d_query_is_its_events_under_the_relation():
    params = {"alpha": 2.0, "gamma": 1.0}
    got = dpjax.account("flipped-huber", params, compositions=3, sampling_rate=0.2, l1=0.5,
                        delta=1e-5, relation="replace_one")
    release = ev.Noise("flipped-huber", {"alpha": 4.0, "gamma": 2.0})  # sensitivity units
    ledger = ev.SelfComposed(ev.PoissonSampled(0.2, release), 3)
    assert got == dpjax.account(ledger, delta=1e-5, relation="replace_one")
    with pytest.raises(ValueError, match="one parameter set at a time"):
        dpjax.profile("flipped-huber", {"alpha": [2.0, 3.0], "gamma": 1.0}, 1.0,
                      sampling_rate=0.2, relation="add")


def test_cli_account_and_profile_take_the_relation(capsys):
    assert main(["account", "gaussian", "--param", "sigma=2", "--delta", "1e-5",
                 "--relation", "replace_one", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["relation"] == "replace_one"
    assert out["epsilon"] == pytest.approx(4.3772, abs=1e-4)
    assert main(["profile", "gaussian", "--param", "sigma=2", "--epsilon", "1",
                 "--relation", "replace_one"]) == 0
    assert "relation=replace_one" in capsys.readouterr().out
