"""The privacy plan: calibration agrees with dpjax.account; group allocations; schedule."""

import math

import jax.numpy as jnp
import numpy as np
import pytest
from _helpers import jax_events

import dpjax
from dpjax.train import flat_per_layer, make_plan

PARAMS = {"l1": {"w": jnp.zeros((16, 8)), "b": jnp.zeros(8)}, "l2": {"w": jnp.zeros((8, 2))}}
SCHEDULE = dict(dataset_size=200, batch_size=20, steps=12, epsilon=2.0, delta=1e-5)


@pytest.fixture(scope="module")
def plan():
    return make_plan(PARAMS, **SCHEDULE)


def test_accountant_equals_dpjax_account(plan):
    acc = plan.accountant()
    ref = dpjax.account("gaussian", {"sigma": plan.noise_multiplier}, compositions=plan.steps,
                        sampling_rate=plan.sampling_rate, delta=plan.noise_delta)
    assert acc.epsilon(plan.steps) == ref
    assert ref <= plan.epsilon
    assert ref > 0.999 * plan.epsilon  # the calibration is tight
    assert acc.epsilon(0) == 0.0
    report = acc.report(plan.steps)
    assert report["epsilon"] == ref


def test_bracket_lower_value_against_dp_accounting_optimistic(plan):
    # dp-accounting's optimistic PLD of the same subsampled Gaussian (a lower value of the
    # pair's epsilon), at delta plus the truncation share, as the accountant's lower value
    from dp_accounting.pld import privacy_loss_distribution as pld

    lower, upper = plan.accountant().bracket(plan.steps)
    share = (1 + math.exp(upper)) * plan.steps * plan.truncation_probability
    def dp_accounting_epsilon(pessimistic):
        return pld.from_gaussian_mechanism(
            plan.noise_multiplier, pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-4, sampling_prob=plan.sampling_rate,
            use_connect_dots=False,
        ).self_compose(plan.steps).get_epsilon_for_delta(plan.delta + share)

    optimistic, pessimistic = dp_accounting_epsilon(False), dp_accounting_epsilon(True)
    assert lower <= upper < lower * 1.001  # a narrow bracket
    # the true epsilon lies in dp-accounting's [optimistic, pessimistic]; dpjax's certified
    # lower end (merged optimistic bins, accounting/pld/discretise.py) is at most two bins
    # under the optimistic estimate (which rounds every use's loss down by up to a bin, so
    # a tighter lower end may sit above it) and never above the pessimistic upper bound
    assert optimistic - 2e-4 <= lower <= pessimistic
    assert plan.accountant().bracket(0) == (0.0, 0.0) and plan.accountant().bracket(0).note


def test_truncation_share_and_delta_split(plan):
    share = (1 + math.exp(plan.epsilon)) * plan.steps * plan.truncation_probability
    assert share <= 1e-3 * plan.delta
    assert plan.noise_delta + share <= plan.delta
    assert plan.max_batch_size >= plan.expected_batch_size


@pytest.mark.parametrize("allocation", ["inid", "spr"])
def test_group_scales_certified_and_inid_beats_spr(plan, allocation):
    grouped = make_plan(PARAMS, clip_norms=flat_per_layer(PARAMS), allocation=allocation,
                        **SCHEDULE)
    g = grouped.groups
    mu2 = np.sum((g.clip_norms / grouped.noise_std) ** 2)
    sigma = plan.noise_multiplier  # the same schedule's calibrated multiplier
    assert 1.0 / math.sqrt(mu2) >= sigma
    assert 1.0 / math.sqrt(mu2) <= sigma * (1 + 1e-12)
    if allocation == "inid":  # Theorem 4: sigma_m^2 proportional to C_m / sqrt(K_m)
        ratio = grouped.noise_std**2 / (g.clip_norms / np.sqrt(g.sizes))
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
        spr = make_plan(PARAMS, clip_norms=flat_per_layer(PARAMS), allocation="spr",
                        **SCHEDULE)
        total = np.sum(g.sizes * grouped.noise_std**2)
        assert total < np.sum(g.sizes * spr.noise_std**2)


def test_epochs_give_steps():
    p = make_plan(PARAMS, dataset_size=100, sampling_rate=1.0, epochs=3, epsilon=2.0,
                  delta=1e-5)
    assert p.steps == 3


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(sampling_rate=0.0), "sampling_rate"),
        (dict(sampling_rate=1.5), "sampling_rate"),
        (dict(batch_size=20, sampling_rate=0.1), "exactly one of batch_size"),
        (dict(batch_size=500), "batch_size must be <="),
        (dict(steps=None), "exactly one of steps"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(delta=0.0), "delta"),
        (dict(noise="staircase"), "noise must be one of"),
        (dict(allocation="equal"), "allocation"),
        (dict(max_batch_size=20), "truncates too often"),
        (dict(clip_norms={"l1": 1.0}), "prefix"),
    ],
)
def test_bad_plans(kw, match):
    args = dict(dataset_size=200, sampling_rate=1.0, steps=2, epsilon=2.0, delta=1e-5)
    args.update(kw)
    if "batch_size" in kw and kw.get("sampling_rate") is None:
        args.pop("sampling_rate")
    with pytest.raises(ValueError, match=match):
        make_plan(PARAMS, **args)


def test_flipped_huber_needs_global_clipping():
    with pytest.raises(ValueError, match="global clipping"):
        make_plan(PARAMS, dataset_size=10, sampling_rate=1.0, steps=1, epsilon=1.0,
                  delta=1e-5, noise="flipped-huber", clip_norms=flat_per_layer(PARAMS))


def test_flipped_huber_plan_keeps_the_gaussian_member_when_it_wins(plan):
    # DP-SGD with d = 146 over 12 subsampled steps: the RDP bound for alpha > 0 is looser
    # than the PLD of alpha = 0, so the least-variance certified member is the Gaussian
    fh = make_plan(PARAMS, noise="flipped-huber", **SCHEDULE)
    assert fh.fh_alpha == 0.0 and fh.fh_gamma == plan.noise_std[0]
    assert fh.accountant().epsilon(fh.steps) == plan.accountant().epsilon(plan.steps)
    assert "alpha > 0 candidate" in fh.certificate


def test_epsilon_at_new_step_counts_compiles_nothing(plan):
    """Once one step count is accounted, ``epsilon`` at new step counts whose grid and FFT
    lengths fall in the same bucket of the engine's size ladder traces and compiles no
    program (``jax_log_compiles``): ``T`` is traced and the sizes are bucketed.  The answers
    are still ``dpjax.account``'s."""
    import logging

    import jax

    from dpjax.accounting.pld import plan as pld_plan
    from dpjax.noise import Gaussian

    steps = (11, 16)
    sizes = {
        pld_plan.plan(Gaussian.from_scale, plan.noise_multiplier, 0.0, 1.0, plan.sampling_rate,
                      t, 1e-4).sizes
        for t in (plan.steps, *steps)
    }
    assert len(sizes) == 1
    acc = plan.accountant()
    acc.epsilon(plan.steps)  # warm: the programs of this bucket
    messages = []

    class Compiles(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("Compiling "):
                messages.append(record.getMessage()[:80])

    handler = Compiles()
    logging.getLogger("jax").addHandler(handler)
    try:
        with jax.log_compiles(True):
            got = [acc.epsilon(t) for t in steps]
    finally:
        logging.getLogger("jax").removeHandler(handler)
    assert messages == []
    ref = [dpjax.account("gaussian", {"sigma": plan.noise_multiplier}, compositions=t,
                         sampling_rate=plan.sampling_rate, delta=plan.noise_delta)
           for t in steps]
    assert got[0] == ref[0] < plan.epsilon
    assert got[1] in (ref[1], math.inf)  # beyond the plan: inf once the truncation share


def test_bracket_at_new_step_counts_compiles_nothing_and_matches_the_ledger(plan):
    """The lower end is the engine's optimistic composition with the steps traced: once one
    step count is bracketed, new ones in the same size bucket compile no program (counted
    by JAX's compile events); it agrees with the event ledger's optimistic lower end
    (``PLDAccountant.bracket``, another discretisation path) to a bin."""

    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    acc = plan.accountant()
    first = acc.bracket(plan.steps)  # warm: the programs of this bucket
    with jax_events("/jax/core/compile/backend_compile_duration") as compiles:
        again = [acc.bracket(t) for t in (11, 16)]  # the bucket of plan.steps (test above)
    assert compiles == []
    for b in (first, again[0]):
        assert 0.0 < b.lower <= b.upper < b.lower * 1.001
    assert 0.0 <= again[1].lower <= again[1].upper  # upper inf beyond the truncation share
    share = (1 + math.exp(first.upper)) * plan.steps * plan.truncation_probability
    ledger = PLDAccountant().compose(
        ev.PoissonSampled(plan.sampling_rate, ev.Gaussian(plan.noise_multiplier)), plan.steps
    )
    assert abs(first.lower - ledger.bracket(plan.delta + share)[0]) <= 1e-4


def test_bracket_with_x64_off_is_the_same_answer(plan):
    """A public entry point: the lower end runs in float64 whatever the caller's mode."""
    import jax

    want = plan.accountant().bracket(plan.steps)
    with jax.enable_x64(False):
        got = plan.accountant().bracket(plan.steps)
    assert got == want
