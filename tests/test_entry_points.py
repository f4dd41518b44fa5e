"""Entry-point properties (issue 34): every public entry point, every valid input, an answer.

For each public entry point (``dpjax.calibrate``, ``profile``, ``account``, ``design``, the
events and :class:`dpjax.accounting.PLDAccountant`, ``dpjax.noise.make(...).sample``,
``dpjax.inid``, the spherical mechanism, ``dpjax.train``, ``dpjax.bcdp``, ``dpjax.apps``):

* on a generated grid of VALID inputs (small instances, each family's ends included:
  shapes at both limits, K from 1 to a few, deltas from 1e-300 to 0.5) the answer is
  certified -- ``delta_at_params <= delta`` for calibrations, profile values in
  ``[0, 1]``, epsilons ``>= 0`` and not NaN, samples finite floats of the requested dtype
  -- or a documented refusal (:class:`dpjax.InfeasibleTargetError`, or a ``ValueError``
  with a message), never another exception;
* on INVALID inputs (NaN, inf, negative, zero where not allowed, strings, booleans, empty
  lists, non-float sample dtypes, unknown names) the answer is ``ValueError`` or
  ``TypeError`` with a message.

The references are the certificates themselves: each answer is checked against the
target it was asked for, and each ``delta_at_params`` is re-derived through the public
``dpjax.profile`` where that is an independent evaluation.  Grids reuse shapes (scalars
and grids up to 16 share one compiled program per mechanism), so the default tier pays
few compilations; the ``slow`` tests add the expensive engines (K-dim PLD calibrations,
every accountant path, every family-dtype pair, Poisson-subsampled training plans).
A float overflow at an input's corner (a scale past 1e154 at epsilon 0 and delta 1e-300)
is an answer (an infinite variance), not a NumPy warning to the user: such a warning fails
the test.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpjax
from dpjax import InfeasibleTargetError
from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev

pytestmark = pytest.mark.filterwarnings("error:overflow encountered:RuntimeWarning")

MECHS_1D = ("gaussian", "laplace", "flipped-huber", "osgt", "truncated-laplace", "staircase")
#: each family at both ends of its shape (parameters in units of the sensitivity)
FAMILY_ENDS = {
    "gaussian": [{"sigma": 1e-3}, {"sigma": 1.0}, {"sigma": 1e3}],
    "laplace": [{"scale": 1e-3}, {"scale": 1.0}, {"scale": 1e3}],
    "flipped-huber": [{"alpha": 0.0, "gamma": 1.0}, {"alpha": 2.0, "gamma": 1.0},
                      {"alpha": 50.0, "gamma": 1e-2}, {"alpha": 1e-3, "gamma": 1e2}],
    "osgt": [{"vartheta": 0.0, "rho": 1.0}, {"vartheta": 1.0, "rho": 1.0},
             {"vartheta": 1e3, "rho": 1e-2}],
    "truncated-laplace": [{"scale": 1.0, "bound": 1e-3}, {"scale": 1.0, "bound": 3.0},
                          {"scale": 1e-3, "bound": 1e3}],
    "staircase": [{"decay": 0.5, "width": 1.0, "gamma": 0.0},
                  {"decay": 0.5, "width": 1.0, "gamma": 1.0},
                  {"decay": 1e-3, "width": 1e-3, "gamma": 0.5}],
}
#: targets: epsilon from 0 to large, delta from 1e-300 to 0.5 (each pair a valid target)
EPSILONS = (0.0, 0.01, 1.0, 20.0)
DELTAS = (1e-300, 1e-12, 1e-6, 0.5)
TARGETS = [(e, d) for e in EPSILONS for d in DELTAS]
#: the default tier: the grid's corners (the whole grid is the slow variant)
CORNERS = [(0.0, 1e-300), (0.01, 0.5), (1.0, 1e-6), (20.0, 1e-300)]
SAMPLE_DTYPES = (jnp.float32, jnp.bfloat16, jnp.float16, jnp.float64)
NOT_FLOAT_DTYPES = (jnp.int32, jnp.uint8, jnp.bool_, jnp.complex64, jnp.int8, "int32",
                    np.int64, np.complex128)
#: values that are never a valid number anywhere (strings, booleans, NaN, empty lists)
NOT_NUMBERS = ("1", "0.5", True, False, math.nan, [], None, 1 + 0j)
#: invalid positive quantities (scales, sensitivities, noise multipliers)
BAD_POSITIVE = NOT_NUMBERS[:-2] + (math.inf, -math.inf, -1.0, 0.0, 5e-324)


def answer_or_refusal(fn):
    """``fn()``; a documented refusal (InfeasibleTargetError / ValueError with a message)
    returns ``None``; any other exception propagates and fails the test."""
    try:
        return fn()
    except ValueError as err:  # InfeasibleTargetError is a ValueError
        assert str(err).strip(), f"refusal without a message: {err!r}"
        return None


def assert_rejected(fn, *words):
    """``fn()`` raises ValueError / TypeError whose message names ``words``."""
    with pytest.raises((ValueError, TypeError)) as exc:
        fn()
    assert not isinstance(exc.value, InfeasibleTargetError), (
        f"bad input reported as an infeasible target: {exc.value}")
    msg = str(exc.value)
    assert msg.strip(), "error without a message"
    for w in words:
        assert w.lower() in msg.lower(), f"{w!r} not named in {msg!r}"


def _sens(mech, value=1.0):
    """The sensitivity keyword a 1-D mechanism reads (every one accepts linf in 1-D)."""
    return {"linf": value}


def _finite_params(params):
    for name, v in params.items():
        v = np.asarray(v, dtype=np.float64)
        assert np.all(np.isfinite(v)), f"{name} = {v}"


def check_calibration(cal, delta):
    """The certificate of a calibration: delta_at_params <= delta, finite params, and
    a variance / mse that is a number >= 0 (inf allowed: a target that needs unbounded
    noise is still private)."""
    d_at = np.asarray(cal.delta_at_params, dtype=np.float64)
    assert not np.any(np.isnan(d_at)) and np.all(d_at >= 0)
    assert np.all(d_at <= np.asarray(delta)), (d_at, delta)
    _finite_params(cal.params)
    for name in ("variance", "mse"):
        v = np.asarray(getattr(cal, name), dtype=np.float64)
        assert not np.any(np.isnan(v)) and np.all(v >= 0), (name, v)


def check_delta(values, shape=None):
    v = np.asarray(values, dtype=np.float64)
    if shape is not None:
        assert v.shape == shape
    assert not np.any(np.isnan(v)), v
    assert np.all((v >= 0) & (v <= 1)), v


def check_epsilon(values):
    v = np.asarray(values, dtype=np.float64)
    assert not np.any(np.isnan(v)) and np.all(v >= 0), v


# ---------------------------------------------------------------- calibrate (1-D, K-dim)


@pytest.mark.parametrize("mechanism,epsilon,delta", [
    pytest.param(m, e, d, marks=[pytest.mark.slow] if (m, e) == ("flipped-huber", 0.0) else [])
    for m in MECHS_1D for e, d in CORNERS])
def test_calibrate_1d_corners(mechanism, epsilon, delta):
    _check_calibrate_1d(mechanism, epsilon, delta)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon,delta", TARGETS, ids=lambda x: repr(x))
@pytest.mark.parametrize("mechanism", MECHS_1D)
def test_calibrate_1d_grid(mechanism, epsilon, delta):
    _check_calibrate_1d(mechanism, epsilon, delta)


def _check_calibrate_1d(mechanism, epsilon, delta):
    cal = answer_or_refusal(
        lambda: dpjax.calibrate(mechanism, epsilon=epsilon, delta=delta, **_sens(mechanism)))
    if cal is not None:
        check_calibration(cal, delta)
        # the returned parameters, re-profiled through the public entry point, meet delta
        again = dpjax.profile(mechanism, {k: float(v) for k, v in cal.params.items()},
                              epsilon=epsilon, **_sens(mechanism))
        check_delta(again)
        assert again <= delta


@pytest.mark.parametrize("mechanism", ("gaussian", "laplace"))
@given(epsilon=st.floats(0.0, 50.0), log10_delta=st.floats(-300.0, math.log10(0.5)),
       sens=st.floats(1e-3, 1e3))
@settings(max_examples=6, derandomize=True, deadline=None)
def test_calibrate_closed_forms_generated(mechanism, epsilon, log10_delta, sens):
    delta = 10.0**log10_delta
    kw = {"l2": sens} if mechanism == "gaussian" else {"l1": sens}
    cal = answer_or_refusal(lambda: dpjax.calibrate(mechanism, epsilon, delta, **kw))
    if cal is not None:
        check_calibration(cal, delta)


KDIM_CASES = [
    ("gaussian", 2, {"l2": 1.0}, "exact"),
    ("gaussian", 3, {"linf": 1.0}, "exact"),
    ("staircase", 3, {"linf": 1.0}, "exact"),
    ("flipped-huber", 2, {"linf": 1.0}, "sufficient"),
    ("flipped-huber", 3, {"l1": 3.0, "l2": 2.0, "linf": 1.0}, "sufficient"),
]


@pytest.mark.parametrize("mechanism,dim,sens,condition", KDIM_CASES,
                         ids=lambda x: str(x))
@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-6), (0.01, 1e-300)])
def test_calibrate_kdim(mechanism, dim, sens, condition, epsilon, delta):
    cal = answer_or_refusal(lambda: dpjax.calibrate(
        mechanism, epsilon=epsilon, delta=delta, dim=dim, condition=condition, **sens))
    if cal is not None:
        check_calibration(cal, delta)


@pytest.mark.slow
@pytest.mark.parametrize("dim", [2, 3, 5])
@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-6), (0.3, 1e-10)])
def test_calibrate_flipped_huber_exact_kdim(dim, epsilon, delta):
    """K-dim flipped Huber through the PLD engine (K = 5 crashed: issue 34)."""
    cal = answer_or_refusal(lambda: dpjax.calibrate(
        "flipped-huber", epsilon=epsilon, delta=delta, dim=dim, linf=1.0, condition="exact"))
    if cal is not None:
        check_calibration(cal, delta)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ("gaussian", "laplace"))
@pytest.mark.parametrize("compositions,sampling_rate", [(3, None), (10, 0.1), (1, 1.0)])
def test_calibrate_composed_subsampled(mechanism, compositions, sampling_rate):
    kw = {"l2": 1.0} if mechanism == "gaussian" else {"l1": 1.0}
    for delta in (1e-6, 1e-30):
        cal = answer_or_refusal(lambda: dpjax.calibrate(  # noqa: B023
            mechanism, epsilon=1.0, delta=delta, compositions=compositions,  # noqa: B023
            sampling_rate=sampling_rate, **kw))
        if cal is not None:
            check_calibration(cal, delta)


def test_calibrate_spherical_refuses_one_dimension():
    assert_rejected(lambda: dpjax.calibrate("spherical", epsilon=1.0, delta=1e-6, l2=1.0),
                    "dim")


# ---------------------------------------------------------------- profile / account


PROFILE_CASES = [(m, p) for m, ends in FAMILY_ENDS.items() for p in ends]


@pytest.mark.parametrize("mechanism,params", PROFILE_CASES, ids=lambda x: str(x))
def test_profile_in_unit_interval(mechanism, params):
    eps = [0.0, 0.5, 5.0, 700.0]
    out = answer_or_refusal(lambda: dpjax.profile(mechanism, params, epsilon=eps, linf=1.0))
    if out is not None:
        check_delta(out, (4,))
        # a privacy profile is non-increasing in epsilon
        assert np.all(np.diff(out) <= 0), out


@pytest.mark.parametrize("mechanism", ("gaussian", pytest.param("laplace", marks=pytest.mark.slow)))
@pytest.mark.parametrize("compositions", (3,))
@pytest.mark.parametrize("delta", (1e-300, 1e-6, 0.5))
def test_account_epsilon_certified(mechanism, compositions, delta):
    params = {"sigma": 2.0} if mechanism == "gaussian" else {"scale": 2.0}
    eps = answer_or_refusal(lambda: dpjax.account(mechanism, params, compositions=compositions,
                                                  delta=delta))
    if eps is not None:
        check_epsilon(eps)
        # the certificate: the profile of the T-fold use at the returned epsilon <= delta
        if math.isfinite(eps):
            back = dpjax.account(mechanism, params, compositions=compositions, epsilon=eps)
            assert back <= delta


@pytest.mark.parametrize("mechanism", ("gaussian", "laplace"))
def test_account_delta_in_unit_interval(mechanism):
    params = {"sigma": 2.0} if mechanism == "gaussian" else {"scale": 2.0}
    for e in (0.0, 1.0, 50.0):
        check_delta(answer_or_refusal(lambda: dpjax.account(  # noqa: B023
            mechanism, params, compositions=3, epsilon=e)))  # noqa: B023


@pytest.mark.slow
@pytest.mark.parametrize("mechanism,params", PROFILE_CASES, ids=lambda x: str(x))
@pytest.mark.parametrize("delta", (1e-300, 1e-6, 0.5))
def test_account_every_family(mechanism, params, delta):
    eps = answer_or_refusal(lambda: dpjax.account(mechanism, params, delta=delta, linf=1.0))
    if eps is not None:
        check_epsilon(eps)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism,params", [("gaussian", {"sigma": 1.0}),
                                              ("laplace", {"scale": 1.0})])
@pytest.mark.parametrize("sampling_rate", (1e-3, 0.5, 1.0))
def test_account_subsampled(mechanism, params, sampling_rate):
    for delta in (1e-12, 0.5):
        eps = answer_or_refusal(lambda: dpjax.account(  # noqa: B023
            mechanism, params, compositions=10, sampling_rate=sampling_rate,
            delta=delta))  # noqa: B023
        if eps is not None:
            check_epsilon(eps)


# invalid input: every façade argument, every kind of bad value
_CAL_BASE = {"mechanism": "gaussian", "epsilon": 1.0, "delta": 1e-6, "l2": 1.0}
CALIBRATE_INVALID = (
    [("epsilon", v) for v in NOT_NUMBERS + (math.inf, -1.0, -1e-300, 5e-324)]
    + [("delta", v) for v in NOT_NUMBERS + (math.inf, -1e-5, 1.0, 2.0, 5e-324)]
    + [("l2", v) for v in BAD_POSITIVE if v is not None]
    + [("dim", v) for v in (0, -1, 1.5, True, "2", math.nan)]
    + [("compositions", v) for v in (0, -1, 1.5, True, "3", math.inf)]
    + [("sampling_rate", v) for v in (0.0, -0.1, 1.5, math.nan, "0.1", True, math.inf)]
    + [("condition", v) for v in ("bogus", "", None, 1)]
    + [("relation", v) for v in ("bogus", "", None, 1, "ADD", "replace_special")]
    + [("mechanism", v) for v in ("gausian", "", "Gaussian ", None, 1)]
)


def _kw_name(name):
    return "argument" if name == "mechanism" else name


@pytest.mark.parametrize("name,value", CALIBRATE_INVALID, ids=lambda x: repr(x))
def test_calibrate_invalid(name, value):
    kw = dict(_CAL_BASE, **{name: value})
    mech = kw.pop("mechanism")
    words = () if name == "mechanism" else (name,)
    assert_rejected(lambda: dpjax.calibrate(mech, **kw), *words)


_PARAM_INVALID = [("gaussian", {"sigma": v}) for v in BAD_POSITIVE if v is not None] + [
    ("gaussian", {}), ("gaussian", {"sigma": 1.0, "scale": 1.0}), ("gaussian", {"Sigma": 1.0}),
    ("flipped-huber", {"alpha": -1.0, "gamma": 1.0}),
    ("flipped-huber", {"alpha": math.nan, "gamma": 1.0}),
    ("flipped-huber", {"alpha": 1.0, "gamma": 0.0}),
    ("osgt", {"vartheta": -1.0, "rho": 1.0}), ("osgt", {"vartheta": 1.0, "rho": math.inf}),
    ("truncated-laplace", {"scale": 1.0, "bound": 0.0}),
    ("truncated-laplace", {"scale": "1", "bound": 1.0}),
    ("staircase", {"decay": 0.5, "width": 1.0, "gamma": 1.5}),
    ("staircase", {"decay": 0.5, "width": 1.0, "gamma": -0.1}),
    ("staircase", {"decay": 0.0, "width": 1.0, "gamma": 0.5}),
    ("nosuch", {"sigma": 1.0}),
]


@pytest.mark.parametrize("mechanism,params", _PARAM_INVALID, ids=lambda x: repr(x))
def test_profile_and_account_invalid_params(mechanism, params):
    assert_rejected(lambda: dpjax.profile(mechanism, params, epsilon=1.0))
    assert_rejected(lambda: dpjax.account(mechanism, params, delta=1e-6))


ACCOUNT_INVALID = (
    [("delta", v) for v in NOT_NUMBERS[:-2] + (math.inf, -1e-5, 1.0, 2.0)]
    + [("epsilon", v) for v in NOT_NUMBERS[:-2] + (math.inf, -1.0)]
    + [("compositions", v) for v in (0, -1, 1.5, True, "3")]
    + [("sampling_rate", v) for v in (0.0, -0.1, 1.5, math.nan, "0.1", True)]
    + [("linf", v) for v in BAD_POSITIVE if v is not None]
)


@pytest.mark.parametrize("name,value", ACCOUNT_INVALID, ids=lambda x: repr(x))
def test_account_and_profile_invalid(name, value):
    kw = {"delta": 1e-6, name: value} if name != "epsilon" else {"epsilon": value}
    assert_rejected(lambda: dpjax.account("gaussian", {"sigma": 1.0}, **kw), name)
    if name not in ("delta", "epsilon"):
        assert_rejected(lambda: dpjax.profile("gaussian", {"sigma": 1.0}, epsilon=1.0,
                                              **{name: value}), name)
    elif name == "epsilon":
        assert_rejected(lambda: dpjax.profile("gaussian", {"sigma": 1.0}, epsilon=value),
                        name)


def test_account_needs_exactly_one_target():
    assert_rejected(lambda: dpjax.account("gaussian", {"sigma": 1.0}))
    assert_rejected(lambda: dpjax.account("gaussian", {"sigma": 1.0}, epsilon=1.0,
                                          delta=1e-6))


# ---------------------------------------------------------------- design


@pytest.mark.parametrize("epsilon,delta", [(0.3, 1e-6), (5.0, 0.5), (1.0, 1e-300)])
def test_design_rows_certified(epsilon, delta):
    out = answer_or_refusal(lambda: dpjax.design(epsilon=epsilon, delta=delta, dim=1,
                                                 linf=1.0))
    if out is not None:
        assert out.rows, "a design with no certified mechanism must be a refusal"
        for row in out.rows:
            assert row.delta_at_params <= delta, row
            _finite_params(row.params)
            assert row.mse >= 0 and not math.isnan(row.mse)


def test_design_infeasible_target_is_refused():
    """epsilon = delta = 0: no additive noise meets it (README: InfeasibleTargetError)."""
    with pytest.raises(InfeasibleTargetError):
        out = dpjax.design(epsilon=0.0, delta=0.0, dim=1, linf=1.0)
        pytest.fail(f"returned {out!r}")


DESIGN_INVALID = (
    [("epsilon", v) for v in NOT_NUMBERS[:-2] + (math.inf, -1.0)]
    + [("delta", v) for v in NOT_NUMBERS[:-2] + (math.inf, -1e-5, 1.0)]
    + [("dim", v) for v in (0, -1, 1.5, True)]
    + [("linf", v) for v in (0.0, -1.0, math.nan, math.inf, "1", True)]
    + [("condition", v) for v in ("bogus", "")]
)


@pytest.fixture
def no_calibration(monkeypatch):
    """Bad input must be refused before any mechanism is calibrated: a calibration fails
    the test at once (a design that runs on bad input takes minutes in K dims)."""
    from dpjax.mechanisms._spec import Mechanism

    def ran(self, *a, **k):
        raise AssertionError(f"{self.name} was calibrated for a bad query")

    monkeypatch.setattr(Mechanism, "calibrate_certified", ran)


@pytest.mark.parametrize("name,value", DESIGN_INVALID, ids=lambda x: repr(x))
def test_design_invalid(name, value, no_calibration):
    kw = dict({"epsilon": 1.0, "delta": 1e-6, "dim": 1, "linf": 1.0}, **{name: value})
    assert_rejected(lambda: dpjax.design(**kw), name)


def test_design_without_sensitivity_in_k_dims_is_refused(no_calibration):
    assert_rejected(lambda: dpjax.design(epsilon=1.0, delta=1e-6, dim=5), "sensitivity")


# ---------------------------------------------------------------- events / PLDAccountant


EVENT_LEDGERS = {
    "nonprivate": ([ev.NonPrivate()], "add_remove"),
}
SLOW_LEDGERS = {
    "pure+zcdp+noop": ([ev.EpsilonDelta(1.0, 1e-7), ev.ZCDP(0.1), ev.NoOp()], "add_remove"),
    "gaussian": ([ev.Gaussian(1.0)], "add_remove"),
    "laplace": ([ev.Laplace(1.0)], "add"),
    "dpsgd": ([ev.SelfComposed(ev.PoissonSampled(0.01, ev.Gaussian(1.1)), 100)], "remove"),
    "discrete": ([ev.DiscreteLaplace(0.5), ev.DiscreteGaussian(3.0)], "add_remove"),
    "rr": ([ev.RandomizedResponse(0.5, 4)], "replace_one"),
    "mixture": ([ev.MixtureOfGaussians(1.0, (0.0, 1.0), (0.5, 0.5))], "add_remove"),
    "noise-fh": ([ev.Noise("flipped-huber", {"alpha": 2.0, "gamma": 1.0})], "add_remove"),
    "swor": ([ev.SampledWithoutReplacement(100, 10, ev.Gaussian(1.0))], "replace_one"),
    "composed": ([ev.Composed([ev.Gaussian(2.0), ev.Laplace(3.0)]),
                  ev.SelfComposed(ev.Gaussian(5.0), 0)], "add_remove"),
}


def _check_ledger(events, relation, deltas, epsilons):
    acc = PLDAccountant(relation)
    for e in events:
        acc.compose(e)
    for d in deltas:
        eps = answer_or_refusal(lambda: acc.get_epsilon(d))  # noqa: B023
        if eps is not None:
            check_epsilon(eps)
    for e in epsilons:
        out = answer_or_refusal(lambda: acc.get_delta(e))  # noqa: B023
        if out is not None:
            check_delta(out)


@pytest.mark.parametrize("ledger", sorted(EVENT_LEDGERS))
def test_accountant_ledgers(ledger):
    events, relation = EVENT_LEDGERS[ledger]
    _check_ledger(events, relation, (1e-6, 0.5), (0.0, 1.0))


@pytest.mark.slow
@pytest.mark.parametrize("ledger", sorted(SLOW_LEDGERS) + sorted(EVENT_LEDGERS))
def test_accountant_ledgers_all(ledger):
    events, relation = {**EVENT_LEDGERS, **SLOW_LEDGERS}[ledger]
    _check_ledger(events, relation, (1e-300, 1e-12, 1e-6, 0.5), (0.0, 1.0, 30.0))


@pytest.mark.slow
def test_account_event_facade():
    eps = answer_or_refusal(lambda: dpjax.account(ev.Gaussian(1.0), delta=1e-6))
    check_epsilon(eps)


#: an event's scale may be any positive number: a subnormal one (5e-324) is a valid,
#: useless mechanism, answered (epsilon inf / delta 1, tests/accounting/events/test_events.py),
#: not refused -- unlike the facade's noise parameters, which XLA would flush to 0
EVENT_BAD_POSITIVE = tuple(v for v in BAD_POSITIVE if v is not None and v != 5e-324)

EVENT_INVALID = (
    [("Gaussian", (v,)) for v in EVENT_BAD_POSITIVE]
    + [("Laplace", (v,)) for v in EVENT_BAD_POSITIVE]
    + [("DiscreteGaussian", (v,)) for v in EVENT_BAD_POSITIVE]
    + [("DiscreteLaplace", (v,)) for v in EVENT_BAD_POSITIVE]
    + [("ZCDP", (v,)) for v in EVENT_BAD_POSITIVE]
    + [("EpsilonDelta", (v, 0.0)) for v in NOT_NUMBERS[:-2] + (-1.0,)]
    + [("EpsilonDelta", (1.0, v)) for v in NOT_NUMBERS[:-2] + (-1e-5, 1.5, math.inf)]
    + [("RandomizedResponse", (v, 4)) for v in NOT_NUMBERS[:-2] + (-0.1, 1.5, math.inf)]
    + [("RandomizedResponse", (0.5, v)) for v in (0, -1, 1.5, "4", True)]
    + [("PoissonSampled", (v, ev.Gaussian(1.0))) for v in NOT_NUMBERS[:-2]
       + (-0.1, 1.5, math.inf)]
    + [("PoissonSampled", (0.1, v)) for v in (1.0, "Gaussian", None)]
    + [("SelfComposed", (ev.Gaussian(1.0), v)) for v in (-1, 1.5, "3", True)]
    + [("Composed", (v,)) for v in ([1.0], ["Gaussian"])]
    + [("SampledWithoutReplacement", (n, m, ev.Gaussian(1.0)))
       for n, m in ((10, 11), (0, 0), (10, -1), (10.5, 2), ("10", 2))]
    + [("MixtureOfGaussians", (1.0, (0.0, 1.0), (0.5,))),
       ("MixtureOfGaussians", (1.0, (), ())),
       ("MixtureOfGaussians", (1.0, (0.0, 1.0), (0.5, 0.6))),
       ("MixtureOfGaussians", (1.0, (-1.0, 1.0), (0.5, 0.5))),
       ("MixtureOfGaussians", (math.nan, (0.0, 1.0), (0.5, 0.5)))]
    + [("Noise", ("gausian", {"sigma": 1.0})), ("Noise", ("gaussian", {"sigma": -1.0})),
       ("Noise", ("gaussian", {}))]
)


@pytest.mark.parametrize("cls", ["Gaussian", "Laplace", "DiscreteGaussian", "DiscreteLaplace"])
def test_event_with_a_subnormal_scale_is_answered_not_crashed(cls):
    """Gaussian(5e-324) raised OverflowError in compose (DiscreteGaussian a
    ZeroDivisionError); each is answered: no privacy where the scale is a noise scale, and
    DiscreteLaplace's parameter is an inverse scale (5e-324: all noise, epsilon ~ 0)."""
    acc = PLDAccountant().compose(getattr(ev, cls)(5e-324))
    eps = acc.get_epsilon(1e-6)
    if cls == "DiscreteLaplace":
        assert 0.0 <= eps <= 1e-300
    else:
        assert eps == math.inf and acc.get_delta(1.0) == 1.0


@pytest.mark.parametrize("cls,args", EVENT_INVALID, ids=lambda x: repr(x))
def test_event_constructor_invalid(cls, args):
    """Bad event fields are refused when the event is built (or at the latest when it is
    composed), never accepted into a ledger."""
    def build_and_compose():
        event = getattr(ev, cls)(*args)
        acc = PLDAccountant("replace_one" if cls == "SampledWithoutReplacement" else
                            "add_remove").compose(event)
        if cls == "Noise":  # a Noise event's family and parameters are read when queried
            acc.get_epsilon(0.5)

    assert_rejected(build_and_compose)


@pytest.mark.parametrize("relation", ["addremove", "", "add-remove", None, 1, "ADD"])
def test_accountant_bad_relation(relation):
    assert_rejected(lambda: PLDAccountant(relation), "relation")
    assert_rejected(lambda: dpjax.account(ev.Gaussian(1.0), delta=1e-6, relation=relation),
                    "relation")


@pytest.mark.parametrize("what,value", [
    ("count", 0.5), ("count", -1), ("count", True), ("count", "2"),
    ("bin_width", 0.0), ("bin_width", -1e-4), ("bin_width", math.nan), ("bin_width", "1"),
    ("event", "Gaussian"), ("event", 1.0), ("event", None),
])
def test_accountant_compose_invalid(what, value):
    if what == "bin_width":
        assert_rejected(lambda: PLDAccountant("add_remove", bin_width=value))
    elif what == "count":
        assert_rejected(lambda: PLDAccountant().compose(ev.Gaussian(1.0), value))
    else:
        assert_rejected(lambda: PLDAccountant().compose(value))


@pytest.mark.parametrize("query,value", [("get_epsilon", v) for v in
                                         ("1e-5", True, math.nan, -1e-5, 1.5, math.inf, [])]
                         + [("get_delta", v) for v in ("1", True, math.nan, -1.0, [])])
def test_accountant_query_invalid(query, value):
    acc = PLDAccountant().compose(ev.Gaussian(1.0))
    assert_rejected(lambda: getattr(acc, query)(value))


# ---------------------------------------------------------------- noise samplers

#: default tier: every float dtype, four families, each at a shape end
SAMPLE_CASES = [
    ("gaussian", {"sigma": 1e-3}, jnp.float32),
    ("laplace", {"scale": 1e3}, jnp.bfloat16),
    ("truncated-laplace", {"scale": 1.0, "bound": 1e-3}, jnp.float16),
    ("staircase", {"decay": 0.5, "width": 1.0, "gamma": 0.0}, jnp.float64),
]  # flipped Huber and OSGT (the costliest samplers to compile) in the slow variant


def _check_sample(name, params, dtype):
    noise = dpjax.noise.make(name, **params)
    x = noise.sample(jax.random.key(3), (257,), dtype=dtype)
    assert x.dtype == jnp.dtype(dtype) and x.shape == (257,)
    assert bool(jnp.all(jnp.isfinite(x)))
    # the same family at its other ends: parameters are data (no new compilation)
    for other in FAMILY_ENDS[name]:
        y = dpjax.noise.make(name, **other).sample(jax.random.key(4), (257,), dtype=dtype)
        assert y.dtype == jnp.dtype(dtype)
        # finite unless the dtype's range is exceeded (README: +-inf beyond it)
        big = float(jnp.finfo(dtype).max)
        scale = max(float(v) for v in other.values())
        if scale * 1e3 < big:
            assert bool(jnp.all(jnp.isfinite(y))), (other, y)


@pytest.mark.parametrize("name,params,dtype", SAMPLE_CASES, ids=lambda x: str(x))
def test_sample_finite_in_dtype(name, params, dtype):
    _check_sample(name, params, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", SAMPLE_DTYPES, ids=lambda d: jnp.dtype(d).name)
@pytest.mark.parametrize("name", MECHS_1D)
def test_sample_every_family_every_dtype(name, dtype):
    _check_sample(name, FAMILY_ENDS[name][0], dtype)


@pytest.mark.parametrize("dtype", NOT_FLOAT_DTYPES, ids=repr)
@pytest.mark.parametrize("name", MECHS_1D)
def test_sample_refuses_non_float_dtype(name, dtype):
    noise = dpjax.noise.make(name, **FAMILY_ENDS[name][1])
    assert_rejected(lambda: noise.sample(jax.random.key(0), (4,), dtype=dtype), "dtype")


@pytest.mark.parametrize("name,params", [("gaussian", {"sigma": v}) for v in BAD_POSITIVE
                                         if v is not None]
                         + _PARAM_INVALID[-10:] + [("gausian", {"sigma": 1.0}),
                                                   ("", {}), ("spherical", {"budget": 1.0})],
                         ids=lambda x: repr(x))
def test_noise_make_invalid(name, params):
    assert_rejected(lambda: dpjax.noise.make(name, **params))


# ---------------------------------------------------------------- i.n.i.d.

INID_DIMS = (1, 3, 800)


@pytest.mark.parametrize("kind", ["uniform", "linear", "quadratic", "exponential", "one-hot"])
@pytest.mark.parametrize("mechanism,delta", [("gaussian", 1e-300), ("gaussian", 1e-6),
                                             ("gaussian", 0.5), ("laplace", 0.0),
                                             ("laplace", 1e-6)])
def test_inid_designs_certified(kind, mechanism, delta):
    import dpjax.inid as inid

    norm = "l2" if mechanism == "gaussian" else "l1"  # Sec. V's normalisations
    for dim in INID_DIMS:
        lam = inid.make_profile(kind, dim, norm)
        for epsilon in (0.0, 0.01, 1.0, 20.0):
            out = answer_or_refusal(
                lambda: inid.design(mechanism, lam, epsilon, delta))  # noqa: B023
            if out is None:
                continue
            assert out.delta_at_params <= delta, (dim, epsilon)
            s = np.asarray(out.scales, dtype=np.float64)
            # noise on every coordinate with sensitivity > 0 (none needed where it is 0)
            assert s.shape == (dim,) and np.all(np.isfinite(s)), (dim, epsilon, s)
            assert np.all(s[lam > 0] > 0) and np.all(s >= 0), (dim, epsilon, s)


INID_INVALID = [
    ("profile", []), ("profile", [math.nan]), ("profile", [1.0, -1.0]), ("profile", [0.0, 0.0]),
    ("profile", "1,2"), ("profile", [True, 1.0]), ("profile", [math.inf, 1.0]),
    ("epsilon", -1.0), ("epsilon", math.nan), ("epsilon", "1"),
    ("epsilon", math.inf), ("delta", -1e-5), ("delta", 1.0), ("delta", math.nan),
    ("delta", "1e-5"), ("mechanism", "gauss"), ("mechanism", "staircase"),
]


@pytest.mark.parametrize("name,value", INID_INVALID, ids=lambda x: repr(x))
def test_inid_invalid(name, value):
    import dpjax.inid as inid

    kw = dict({"mechanism": "gaussian", "profile": [1.0, 2.0], "epsilon": 1.0,
               "delta": 1e-6}, **{name: value})
    assert_rejected(lambda: inid.design(kw["mechanism"], kw["profile"], kw["epsilon"],
                                        kw["delta"]))


def test_inid_gaussian_needs_delta():
    import dpjax.inid as inid

    with pytest.raises(ValueError, match="delta"):  # InfeasibleTargetError: documented
        inid.design("gaussian", [1.0, 2.0], 1.0, 0.0)


@pytest.mark.parametrize("kind,dim", [("nosuch", 3), ("linear", 0), ("linear", -1),
                                      ("linear", 1.5), ("linear", True)])
def test_inid_make_profile_invalid(kind, dim):
    import dpjax.inid as inid

    assert_rejected(lambda: inid.make_profile(kind, dim))


# ---------------------------------------------------------------- spherical


@pytest.mark.slow
@pytest.mark.parametrize("dim", [2, 5])
def test_spherical_design_and_account(dim):
    from dpjax.spherical.windowed import design_windowed

    mech, info = design_windowed(dim, 2.5, 12)
    assert math.isfinite(mech.kl) and mech.kl >= 0
    for delta in (1e-300, 1e-6, 0.5):
        for t, q in ((1, None), (4, 0.1)):
            eps = answer_or_refusal(lambda: mech.epsilon(delta, t, q))  # noqa: B023
            if eps is not None:
                check_epsilon(eps)
    x = mech.sample(jax.random.key(0), (16,), dtype=jnp.float32)
    assert x.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(x)))
    cal = answer_or_refusal(lambda: dpjax.calibrate("spherical", epsilon=1.0, delta=1e-6,
                                                    dim=dim, l2=1.0))
    if cal is not None:
        check_calibration(cal, 1e-6)


@pytest.mark.parametrize("budget", BAD_POSITIVE[:-1] + (1e308,), ids=repr)
def test_spherical_budget_invalid(budget):
    from dpjax.spherical.windowed import check_budget, design_windowed

    assert_rejected(lambda: check_budget(budget), "cost")
    assert_rejected(lambda: design_windowed(3, budget, 4))


@pytest.mark.parametrize("kw", [{"delta": 0.0}, {"delta": 1.0}, {"delta": math.nan},
                                {"delta": "1e-6"}, {"delta": -1e-6},
                                {"compositions": [0]}, {"compositions": [-1]},
                                {"compositions": [1.5]}, {"compositions": [True]},
                                {"sampling_rate": 0.0}, {"sampling_rate": 1.5},
                                {"sampling_rate": math.nan}], ids=repr)
def test_spherical_use_invalid(kw):
    from dpjax.spherical.mechanism import check_use

    args = dict({"delta": 1e-6, "compositions": [1], "sampling_rate": None}, **kw)
    assert_rejected(lambda: check_use(**args))


@pytest.mark.parametrize("m,n,N", [(0, 4, 10), (3, 0, 10), (3, 4, 1), (-1, 4, 10)])
def test_spherical_design_shape_invalid(m, n, N):
    from dpjax.spherical.windowed import design_windowed

    assert_rejected(lambda: design_windowed(m, 2.5, n, N))


# ---------------------------------------------------------------- training plan


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("epsilon,delta", [(0.01, 1e-300), (1.0, 1e-6), (20.0, 0.5)])
def test_train_plan_full_batch(steps, epsilon, delta):
    from dpjax.train import make_plan

    plan = answer_or_refusal(lambda: make_plan(
        {"w": jnp.zeros(3)}, dataset_size=50, sampling_rate=1.0, steps=steps,
        epsilon=epsilon, delta=delta))
    if plan is not None:
        assert math.isfinite(plan.noise_multiplier) and plan.noise_multiplier > 0
        # the plan's noise, accounted independently through the façade, meets the target
        spent = dpjax.account("gaussian", {"sigma": float(plan.noise_multiplier)},
                              compositions=steps, epsilon=epsilon)
        assert spent <= delta


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-6), (5.0, 1e-12)])
def test_train_plan_subsampled(noise, epsilon, delta):
    from dpjax.train import make_plan

    plan = answer_or_refusal(lambda: make_plan(
        {"w": jnp.zeros(3)}, dataset_size=100, sampling_rate=0.1, steps=5,
        epsilon=epsilon, delta=delta, noise=noise))
    if plan is not None:
        report = plan.accountant().report(5)
        assert 0 <= report["epsilon"] <= epsilon


TRAIN_INVALID = [
    ("dataset_size", 0), ("dataset_size", -1), ("dataset_size", 1.5), ("dataset_size", "50"),
    ("epsilon", 0.0), ("epsilon", -1.0), ("epsilon", math.nan), ("epsilon", math.inf),
    ("epsilon", "1"), ("delta", -1e-5), ("delta", 1.0), ("delta", math.nan),
    ("sampling_rate", 0.0), ("sampling_rate", 1.5), ("sampling_rate", math.nan),
    ("steps", 0), ("steps", -1), ("steps", 1.5), ("noise", "bogus"), ("allocation", "bogus"),
    ("clip_norms", 0.0), ("clip_norms", -1.0), ("clip_norms", math.nan),
]


@pytest.mark.parametrize("name,value", TRAIN_INVALID, ids=lambda x: repr(x))
def test_train_plan_invalid(name, value):
    from dpjax.train import make_plan

    kw = dict({"dataset_size": 50, "sampling_rate": 1.0, "steps": 1, "epsilon": 1.0,
               "delta": 1e-6}, **{name: value})
    assert_rejected(lambda: make_plan({"w": jnp.zeros(3)}, **kw))


# ---------------------------------------------------------------- BCDP mean


@pytest.mark.parametrize("q", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("deltas", [[0.1], [0.1, 1.0, 3.0], [1e-300, 50.0]], ids=repr)
@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 50.0])
def test_bcdp_budget_certified(deltas, epsilon, q):
    from dpjax.bcdp import theorem2_budget

    b = answer_or_refusal(lambda: theorem2_budget(deltas, epsilon, q))
    if b is not None:
        c = np.asarray(b.c, dtype=np.float64)
        assert np.all(np.isfinite(c)) and np.all(c >= 0)
        assert b.ldp <= epsilon
        assert np.all(np.asarray(b.bcdp) <= np.minimum(deltas, epsilon))


def test_bcdp_mean_mechanism_finite():
    from dpjax.bcdp import mean_mechanism, theorem2_budget

    key = jax.random.key(0)
    x = jax.random.uniform(key, (8, 3), minval=-0.5, maxval=0.5)
    c = theorem2_budget([0.1, 1.0, 3.0], 1.0, 0.5).c
    y = mean_mechanism(key, x, c, channel="duchi")  # privunit: the CLI test's table run
    assert y.shape == (8, 3) and bool(jnp.all(jnp.isfinite(y)))


BCDP_INVALID = [
    ("deltas", []), ("deltas", [-1.0]), ("deltas", [math.nan]), ("deltas", [math.inf]),
    ("deltas", [0.0]), ("deltas", "1,2"), ("deltas", [True]),
    ("epsilon", 0.0), ("epsilon", -1.0), ("epsilon", math.nan), ("epsilon", math.inf),
    ("epsilon", "1"), ("q", -0.1), ("q", 1.5), ("q", math.nan), ("q", "0.5"),
    ("zeta", 0.0), ("zeta", 1.5), ("zeta", math.nan),
]


@pytest.mark.parametrize("name,value", BCDP_INVALID, ids=lambda x: repr(x))
def test_bcdp_budget_invalid(name, value):
    from dpjax.bcdp import theorem2_budget

    kw = dict({"deltas": [0.5, 1.0], "epsilon": 1.0, "q": 0.5, "zeta": None}, **{name: value})
    assert_rejected(lambda: theorem2_budget(**kw))


@pytest.mark.parametrize("channel", ["bogus", "", None])
def test_bcdp_mean_bad_channel(channel):
    from dpjax.bcdp import mean_mechanism

    x = jnp.zeros((2, 2))
    assert_rejected(lambda: mean_mechanism(jax.random.key(0), x, [0.5, 1.0], channel=channel))


# ---------------------------------------------------------------- estimators


@pytest.fixture(scope="module")
def regression_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 4))
    return X, X @ np.array([1.0, 0.0, -1.0, 0.5])


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-5), (0.01, 1e-300)])
def test_estimators_certified(regression_data, epsilon, delta):
    from dpjax.apps import DPPCA, DPLasso, DPLogisticRegression

    X, y = regression_data
    for est, target in ((DPLasso(epsilon=epsilon, delta=delta, feature_bound=1.0, passes=2), y),
                        (DPLogisticRegression(epsilon=epsilon, delta=delta, feature_bound=1.0,
                                              passes=2), (y > 0).astype(int)),
                        (DPPCA(2, epsilon=epsilon, delta=delta, feature_bound=1.0), None)):
        fitted = answer_or_refusal(lambda: est.fit(X, target))  # noqa: B023
        if fitted is None:
            continue
        assert 0 <= fitted.epsilon_ <= epsilon and 0 <= fitted.delta_ <= delta, fitted
        coef = getattr(fitted, "coef_", getattr(fitted, "components_", None))
        assert np.all(np.isfinite(np.asarray(coef))), coef


ESTIMATOR_INVALID = [
    ("epsilon", -1.0), ("epsilon", math.nan), ("epsilon", "1"),
    ("delta", -1e-5), ("delta", 1.0), ("delta", math.nan),
    ("feature_bound", None), ("feature_bound", 0.0), ("feature_bound", -1.0),
    ("feature_bound", math.inf), ("mechanism", "bogus"),
]


@pytest.mark.parametrize("name,value", ESTIMATOR_INVALID, ids=lambda x: repr(x))
@pytest.mark.parametrize("estimator", ["DPLasso", "DPPCA"])
def test_estimators_invalid(regression_data, estimator, name, value):
    import dpjax.apps as apps

    X, y = regression_data
    kw = dict({"epsilon": 1.0, "delta": 1e-5, "feature_bound": 1.0}, **{name: value})
    if estimator == "DPPCA":
        est = apps.DPPCA(2, **kw)
        assert_rejected(lambda: est.fit(X))
    else:
        est = apps.DPLasso(passes=1, **kw)
        assert_rejected(lambda: est.fit(X, y))
