"""Events: pytrees, validation, the JSON form, dp_accounting conversion, façade and CLI."""

import json
import math

import jax
import numpy as np
import pytest

import dpjax
from dpjax.accounting import PLDAccountant, UnsupportedEventError, from_dp_accounting
from dpjax.accounting import events as ev
from dpjax.accounting.events.json_form import event_from_json, event_to_json
from dpjax.cli._main import main

STEP = ev.PoissonSampled(0.01, ev.Gaussian(1.0))
LEDGER = ev.Composed([ev.Laplace(2.0), ev.SelfComposed(STEP, 100)])
#: the ledger accounted here (cheap for dp_accounting; compiled once, shared by the tests)
CHEAP = ev.Composed([ev.Laplace(2.0), ev.SelfComposed(ev.PoissonSampled(0.2, ev.Gaussian(1.0)), 5)])


def test_events_are_frozen_pytrees():
    leaves, tree = jax.tree_util.tree_flatten(LEDGER)
    assert leaves == [2.0, 0.01, 1.0]  # real parameters are leaves; counts are static
    doubled = jax.tree_util.tree_unflatten(tree, [2 * x for x in leaves])
    assert doubled.events[1].count == 100 and doubled.events[0].noise_multiplier == 4.0
    with pytest.raises(AttributeError):
        LEDGER.events = ()
    assert hash(STEP) == hash(ev.PoissonSampled(0.01, ev.Gaussian(1.0)))


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: ev.Laplace(0.0), "Laplace.noise_multiplier"),
        (lambda: ev.PoissonSampled(1.5, ev.Gaussian(1.0)), "sampling_probability"),
        (lambda: ev.SelfComposed(ev.Gaussian(1.0), -1), "count"),
        (lambda: ev.SampledWithoutReplacement(10, 20, ev.Gaussian(1.0)), "sample_size"),
        (lambda: ev.EpsilonDelta(1.0, 1.5), "EpsilonDelta.delta"),
        (lambda: ev.DiscreteLaplace(1.0, 0), "sensitivity"),
        (lambda: ev.RandomizedResponse(0.5, 0), "num_buckets"),
    ],
)
def test_bad_parameters_raise_naming_the_field(make, match):
    with pytest.raises(ValueError, match=match):
        make()
    with pytest.raises(TypeError, match="dpjax event"):
        ev.Composed([1.0])


def test_json_round_trip_and_errors():
    doc = json.loads(json.dumps(event_to_json(LEDGER)))
    assert event_from_json(doc) == LEDGER
    assert event_from_json([doc["events"][0]]) == ev.Composed([ev.Laplace(2.0)])
    assert event_from_json({"type": "ZCDpEvent", "rho": 0.5}) == ev.ZCDP(0.5)
    with pytest.raises(ValueError, match="unknown event type 'Foo'"):
        event_from_json({"type": "Foo"})
    with pytest.raises(ValueError, match="unknown field"):
        event_from_json({"type": "Gaussian", "sigma": 1.0})


def test_a_dp_accounting_script_changes_one_line():
    dpa = pytest.importorskip("dp_accounting")
    event = dpa.ComposedDpEvent(
        [dpa.LaplaceDpEvent(2.0), dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(
            0.01, dpa.GaussianDpEvent(1.0)), 100)]
    )
    assert from_dp_accounting(event) == LEDGER
    event = dpa.ComposedDpEvent(  # a cheaper ledger for dp_accounting to account
        [dpa.LaplaceDpEvent(2.0), dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(
            0.2, dpa.GaussianDpEvent(1.0)), 5)]
    )

    def script(accountant):
        accountant.compose(event)
        return accountant.get_epsilon(1e-5)

    assert from_dp_accounting(event) == CHEAP
    ours, theirs = script(PLDAccountant()), script(dpa.pld.PLDAccountant())
    assert ours == pytest.approx(theirs, rel=1e-6)  # 4.2003707 vs 4.2003705: both upper bounds
    with pytest.raises(UnsupportedEventError, match="SingleEpochTreeAggregationDpEvent"):
        from_dp_accounting(dpa.SingleEpochTreeAggregationDpEvent(1.0, 3))
    with pytest.raises(UnsupportedEventError, match="ZCDpEvent"):
        from_dp_accounting(dpa.ZCDpEvent(0.5, xi=0.1))


def test_facade_and_cli_account_events(tmp_path, capsys):
    eps = dpjax.account(CHEAP, delta=1e-5)
    assert eps == PLDAccountant().compose(CHEAP).get_epsilon(1e-5)
    deltas = dpjax.account(CHEAP, epsilon=[0.5, 5.0])
    assert deltas.shape == (2,) and deltas[0] > deltas[1] >= 0.0
    path = tmp_path / "events.json"
    path.write_text(json.dumps({"relation": "add_remove", "events": event_to_json(CHEAP)}))
    assert main(["account", "--events", str(path), "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == eps and out["relation"] == "add_remove"
    assert main(["account", "--events", str(tmp_path / "missing.json"), "--delta", "1e-5"]) == 2
    assert "cannot read" in capsys.readouterr().err
    path.write_text(json.dumps({"type": "SampledWithReplacement", "source_dataset_size": 10,
                                "sample_size": 2, "event": {"type": "Gaussian",
                                                            "noise_multiplier": 1.0}}))
    assert main(["account", "--events", str(path), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SampledWithReplacement" in err


def test_replace_one_of_a_plain_mechanism_is_the_doubled_shift():
    from _references import gaussian_delta

    got = PLDAccountant("replace_one").compose(ev.Gaussian(2.0)).get_delta(1.0)
    exact = float(gaussian_delta(1.0, 2.0, 2.0))
    assert exact <= got <= exact * (1 + 1e-6) + 1e-15
    assert not math.isnan(got) and np.isfinite(got)


# ------------------------------------------------------------------ issue 34, item 1


@pytest.mark.parametrize(
    "make,error,match",
    [
        (lambda: ev.Gaussian("1"), TypeError, r"Gaussian.noise_multiplier.*real number.*'1'"),
        (lambda: ev.Gaussian(True), TypeError, "Gaussian.noise_multiplier"),
        (lambda: ev.Laplace(float("inf")), ValueError, r"Laplace.noise_multiplier.*finite.*inf"),
        (lambda: ev.Laplace(float("nan")), ValueError, r"Laplace.noise_multiplier.*nan"),
        (lambda: ev.DiscreteLaplace(float("inf")), ValueError, "DiscreteLaplace.noise_parameter"),
        (lambda: ev.EpsilonDelta(float("inf")), ValueError, "EpsilonDelta.epsilon"),
        (lambda: ev.EpsilonDelta(1.0, "0.1"), TypeError, "EpsilonDelta.delta"),
        (lambda: ev.ZCDP(1j), TypeError, "ZCDP.rho"),
        (lambda: ev.PoissonSampled("0.5", ev.Gaussian(1.0)), TypeError, "sampling_probability"),
        (lambda: ev.MixtureOfGaussians(1.0, ("a",), (1.0,)), TypeError,
         r"MixtureOfGaussians.sensitivities\[0\]"),
        (lambda: ev.Noise("gaussian", {"sigma": "1"}), TypeError, r"Noise.params\['sigma'\]"),
    ],
)
def test_event_fields_are_typed_finite_and_named(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_tiny_scales_are_accounted_not_crashed():
    """Gaussian(5e-324) (a subnormal, flushed to 0 by XLA) crashed with OverflowError; it is
    (nearly) no privacy: the certified answers are epsilon = inf and delta = 1."""
    for event in (ev.Gaussian(5e-324), ev.Laplace(5e-324),
                  ev.PoissonSampled(0.5, ev.Gaussian(5e-324)),
                  ev.Composed([ev.Gaussian(5e-324), ev.Laplace(1.0)])):
        acc = PLDAccountant().compose(event)
        assert acc.get_epsilon(1e-5) == math.inf and acc.get_delta(1.0) == 1.0
    # concrete values are checked where the accountant reads them (None: a pytree placeholder)
    with pytest.raises(TypeError, match="Gaussian.noise_multiplier.*concrete"):
        PLDAccountant().compose(ev.Composed([ev.Gaussian(None)]))
    # numbers of any real type (and batches of them, for vmap) are fine
    assert ev.PoissonSampled(np.float32(0.5), ev.Gaussian(np.array(2.0))).event is not None
    assert jax.tree_util.tree_map(lambda x: 2 * x, ev.Gaussian(1.0)) == ev.Gaussian(2.0)
