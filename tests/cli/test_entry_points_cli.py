"""Every ``dpjax`` command on valid and invalid input (issue 34), run in-process.

Valid input (small instances, each family's ends, deltas from 1e-300 to 0.5) exits 0 with a
certified answer (``delta_at_params <= delta``, deltas in ``[0, 1]``, epsilons ``>= 0``)
or exits 2 with a one-line refusal; invalid input (NaN, inf, negative, zero where not
allowed, words for numbers, empty list items, unknown names) exits 2 with one line on
stderr that names the option and the bad value -- never a traceback, never exit 0.
Bad input must be refused before any calibration runs: the calibrations are replaced by a
stub that fails the test (a K-dim design that runs on bad input takes minutes).  The
``slow`` test adds the spherical design and its accounting.  A NumPy overflow warning
(an infinite variance at a corner is the answer, not a warning) fails the test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpjax.cli import main

pytestmark = pytest.mark.filterwarnings("error:overflow encountered:RuntimeWarning")

MECHS_1D = ("gaussian", "laplace", "flipped-huber", "osgt", "truncated-laplace", "staircase")
#: each family at both ends of its shape, as --param lists
FAMILY_ENDS = {
    "gaussian": [["sigma=1e-3"], ["sigma=1e3"]],
    "laplace": [["scale=1e-3"], ["scale=1e3"]],
    "flipped-huber": [["alpha=0", "gamma=1"], ["alpha=50", "gamma=0.01"]],
    "osgt": [["vartheta=0", "rho=1"], ["vartheta=1e3", "rho=0.01"]],
    "truncated-laplace": [["scale=1", "bound=1e-3"], ["scale=1e-3", "bound=1e3"]],
    "staircase": [["decay=0.5", "width=1", "gamma=0"], ["decay=0.5", "width=1", "gamma=1"]],
}


def run(capsys, argv):
    """``(exit status, stdout, stderr)`` of ``dpjax ARGV`` in this process."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse: --help, usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_answer_or_refusal(code, err):
    """Exit 0, or exit 2 with one line on stderr (a documented refusal)."""
    assert code in (0, 2), (code, err)
    if code == 2:
        assert_one_line_error(err)


def assert_one_line_error(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpjax") and "error" in lines[0], err
    assert "Traceback" not in err and "usage:" not in err


@pytest.fixture
def no_calibration(monkeypatch):
    """A calibration on bad input fails the test at once (the spherical designs validate
    their own arguments first, so they are left alone)."""
    from dpjax.mechanisms._spec import Mechanism

    def ran(*a, **k):
        raise AssertionError("a calibration ran on bad input")

    monkeypatch.setattr(Mechanism, "calibrate_certified", ran)


# ---------------------------------------------------------------- valid input


@pytest.mark.parametrize("delta", ["1e-300", "1e-6", "0.5"])
@pytest.mark.parametrize("mechanism", MECHS_1D)
def test_calibrate_valid(capsys, mechanism, delta):
    for eps in ("0.01,1,20", "0"):
        code, out, err = run(capsys, ["calibrate", mechanism, "--epsilon", eps, "--delta",
                                      delta, "--json"])
        assert_answer_or_refusal(code, err)
        if code == 0:
            data = json.loads(out)
            d_at = np.atleast_1d(np.asarray(data["delta_at_params"], dtype=np.float64))
            assert np.all(d_at <= float(delta)), data
            for name, v in data["params"].items():
                assert np.all(np.isfinite(np.asarray(v, dtype=np.float64))), (name, v)


@pytest.mark.parametrize("mechanism,params",
                         [(m, p) for m, ends in FAMILY_ENDS.items() for p in ends],
                         ids=lambda x: str(x))
def test_profile_valid(capsys, mechanism, params):
    argv = ["profile", mechanism, "--epsilon", "0,0.5,700", "--json"]
    for p in params:
        argv += ["--param", p]
    code, out, err = run(capsys, argv)
    assert_answer_or_refusal(code, err)
    if code == 0:
        d = np.asarray(json.loads(out)["delta"], dtype=np.float64)
        assert d.shape == (3,) and np.all((d >= 0) & (d <= 1)), d


@pytest.mark.parametrize("target", [["--delta", "1e-300"], ["--delta", "0.5"],
                                    ["--delta", "1e-6", "--bracket"], ["--epsilon", "0"],
                                    ["--epsilon", "30"]], ids=" ".join)
def test_account_valid(capsys, target):
    code, out, err = run(capsys, ["account", "gaussian", "--param", "sigma=2",
                                  "--compositions", "3", "--json"] + target)
    assert_answer_or_refusal(code, err)
    if code == 0:
        data = json.loads(out)
        if target[0] == "--delta":
            assert data["epsilon"] >= 0 and not math.isnan(data["epsilon"])
        else:
            assert 0 <= data["delta"] <= 1


def test_account_events_valid(capsys, tmp_path):
    f = tmp_path / "events.json"
    f.write_text(json.dumps({"relation": "add_remove", "events": [
        {"type": "EpsilonDelta", "epsilon": 1.0, "delta": 1e-7}, {"type": "ZCDP", "rho": 0.1},
        {"type": "NoOp"}]}))
    for target in (["--delta", "1e-6"], ["--epsilon", "1"]):
        code, out, err = run(capsys, ["account", "--events", str(f), "--json"] + target)
        assert code == 0, err
        data = json.loads(out)
        assert data["epsilon"] >= 0 and 0 <= data["delta"] <= 1, data


@pytest.mark.parametrize("argv", [
    ["mechanisms"], ["mechanisms", "--json"], ["mechanisms", "staircase"], ["--version"],
    ["--help"], ["design", "--help"], ["calibrate", "--help"], ["profile", "--help"],
    ["account", "--help"], ["inid", "--help"], ["spherical", "--help"], ["bcdp", "--help"],
    ["train-plan", "--help"], ["reproduce", "--help"], ["spherical", "design", "--help"],
    ["spherical", "account", "--help"], ["bcdp", "mean", "--help"], ["mechanisms", "--help"],
], ids=" ".join)
def test_listing_and_help(capsys, argv):
    code, out, err = run(capsys, argv)
    assert code in (0, None) and out.strip(), err


@pytest.mark.parametrize("argv", [
    ["design"],
    ["design", "--epsilon", "5", "--delta", "0.5"],
    ["design", "--epsilon", "1", "--delta", "1e-300", "--linf", "2"],
    ["design", "--epsilon", "0.5", "--delta", "1e-6", "--profile", "1,2"],
], ids=" ".join)
def test_design_valid(capsys, argv):
    code, out, err = run(capsys, argv + ["--json"])
    assert_answer_or_refusal(code, err)
    if code == 0:
        data = json.loads(out)
        assert data["results"], "a design with no certified mechanism must be a refusal"
        for row in data["results"]:
            assert row["delta_at_params"] <= data["delta"], row


def test_design_infeasible_target_exits_2(capsys):
    """epsilon = delta = 0: no additive noise meets it; exit 2, not an empty table."""
    code, out, err = run(capsys, ["design", "--epsilon", "0", "--delta", "0"])
    assert code == 2, (code, out, err)
    assert_one_line_error(err)


@pytest.mark.parametrize("argv", [
    ["--mechanism", "laplace", "--epsilon", "0.5", "--profile", "0.85,0.15"],
    ["--mechanism", "laplace", "--epsilon", "20", "--delta", "1e-6", "--profile", "1"],
    ["--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-300", "--profile-kind",
     "linear", "--dim", "3"],
    ["--mechanism", "gaussian", "--epsilon", "1", "--delta", "0.5", "--profile-kind",
     "one-hot", "--dim", "800"],
    ["--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-6", "--profile-kind",
     "exponential", "--dim", "800"],
    ["--mechanism", "laplace", "--epsilon", "1", "--profile-kind", "exponential", "--dim",
     "800"],
], ids=" ".join)
def test_inid_valid(capsys, argv):
    code, out, err = run(capsys, ["inid"] + argv + ["--json"])
    assert_answer_or_refusal(code, err)
    if code == 0:
        data = json.loads(out)
        delta = data.get("delta") or 0.0
        assert data["delta_at_params"] <= delta
        scales, lam = np.asarray(data["scales"]), np.asarray(data["profile"])
        # noise on every coordinate with sensitivity > 0 (none needed where it is 0)
        assert np.all(np.isfinite(scales)) and np.all(scales >= 0)
        assert np.all(scales[lam > 0] > 0), scales


@pytest.mark.parametrize("argv", [
    ["--epsilon", "1", "--coordinate-deltas", "0.1,1,3", "--correlation", "0.5"],
    ["--epsilon", "50", "--coordinate-deltas", "1e-300,50", "--correlation", "0"],
    ["--epsilon", "0.001", "--coordinate-deltas", "2", "--correlation", "1", "--channel",
     "privunit", "--users", "3"],
], ids=" ".join)
def test_bcdp_mean_valid(capsys, argv):
    code, out, err = run(capsys, ["bcdp", "mean"] + argv + ["--json"])
    assert_answer_or_refusal(code, err)
    if code == 0:
        data = json.loads(out)
        eps = float(argv[1])
        assert 0 <= data["ldp"] <= eps and all(0 <= c for c in data["c"])


@pytest.mark.parametrize("epsilon,delta,steps", [("0.01", "1e-300", "1"), ("1", "1e-6", "3"),
                                                 ("20", "0.5", "1")])
def test_train_plan_valid(capsys, epsilon, delta, steps):
    code, out, err = run(capsys, ["train-plan", "--dataset-size", "50", "--sampling-rate", "1",
                                  "--steps", steps, "--epsilon", epsilon, "--delta", delta,
                                  "--json"])
    assert_answer_or_refusal(code, err)
    if code == 0:
        data = json.loads(out)
        assert 0 <= data["epsilon_spent"] <= float(epsilon)
        assert math.isfinite(data["noise_multiplier"]) and data["noise_multiplier"] > 0


@pytest.mark.slow
def test_spherical_design_and_account_valid(capsys, tmp_path):
    f = tmp_path / "mech.npz"
    code, out, err = run(capsys, ["spherical", "design", "--dim", "2", "--cost", "2.5", "--n",
                                  "12", "--out", str(f), "--json"])
    assert code == 0, err
    for extra in (["--delta", "1e-300"], ["--delta", "0.5"],
                  ["--delta", "1e-6", "--compositions", "3", "--sampling-rate", "0.1"]):
        code, out, err = run(capsys, ["spherical", "account", str(f), "--json"] + extra)
        assert_answer_or_refusal(code, err)
        if code == 0:
            assert json.loads(out)["epsilon"] >= 0


# ---------------------------------------------------------------- invalid input

_CAL = ["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-6"]
_PROF = ["profile", "gaussian", "--param", "sigma=1", "--epsilon", "1"]
_ACC = ["account", "gaussian", "--param", "sigma=1", "--delta", "1e-6"]


def _with(base, option, value):
    """``base`` with ``option`` set to ``value`` (replaced where present)."""
    argv = list(base)
    if option in argv:
        argv[argv.index(option) + 1] = value
    else:
        argv += [option, value]
    return argv


_BAD_NUMBERS = ["nan", "inf", "-inf", "abc", ""]
#: (argv, the word the message must name, the bad token it must quote or None)
INVALID = (
    [(_with(_CAL, "--epsilon", v), "epsilon", v) for v in _BAD_NUMBERS + ["-1", "1,,2", ",1",
                                                                           "1,abc"]]
    + [(_with(_CAL, "--delta", v), "delta", v) for v in _BAD_NUMBERS + ["-1e-5", "1", "2",
                                                                         "5e-324"]]
    + [(_with(_CAL, opt, v), opt[2:], v) for opt in ("--l1", "--l2", "--linf")
       for v in ["0", "-1", "nan", "inf", "abc", "5e-324"]]
    + [(_with(_CAL, "--dim", v), "dim", v) for v in ["0", "-1", "1.5", "abc"]]
    + [(_with(_CAL, "--compositions", v), "compositions", v) for v in ["0", "-1", "1.5"]]
    + [(_with(_CAL, "--sampling-rate", v), "sampling", v) for v in ["0", "-0.1", "1.5", "nan"]]
    + [(_with(_CAL, "--condition", "bogus"), "condition", "bogus"),
       (["calibrate", "gausian", "--epsilon", "1", "--delta", "1e-6"], "gausian", None),
       (_CAL[:2] + ["--delta", "1e-6"], "epsilon", None)]
    + [(_with(_PROF, "--epsilon", v), "epsilon", v) for v in _BAD_NUMBERS + ["-1", "1,,2"]]
    + [(["profile", "gaussian", "--param", p, "--epsilon", "1"], "sigma", None)
       for p in ["sigma=0", "sigma=-1", "sigma=nan", "sigma=inf", "sigma=abc", "sigma=",
                 "sigma=5e-324"]]
    + [(["profile", "gaussian", "--param", "scale=1", "--epsilon", "1"], "scale", None),
       (["profile", "flipped-huber", "--param", "alpha=-1", "--param", "gamma=1",
         "--epsilon", "1"], "alpha", None),
       (["profile", "staircase", "--param", "decay=0.5", "--param", "width=1", "--param",
         "gamma=1.5", "--epsilon", "1"], "gamma", None)]
    + [(_with(_ACC, "--delta", v), "delta", v) for v in _BAD_NUMBERS + ["-1e-5", "1", "2"]]
    + [(_with(_ACC, "--compositions", v), "compositions", v) for v in ["0", "-1", "abc"]]
    + [(_with(_ACC, "--sampling-rate", v), "sampling", v) for v in ["0", "1.5", "nan"]]
    + [(_with(_ACC, "--relation", v), "relation", v) for v in ["bogus", "addremove"]]
    + [(_with(_CAL, "--relation", v), "relation", v) for v in ["bogus", "replace_special"]]
    + [(["calibrate", m, "--epsilon", "1", "--delta", "1e-6", "--linf", "1.5"], "integer",
        "1.5") for m in ("discrete-laplace", "discrete-gaussian")]
    + [(["design", "--dim", "5"], "sensitivity", None),
       (["design", "--dim", "5", "--epsilon", "1", "--delta", "1e-6"], "sensitivity", None)]
    + [(["design", opt, v], opt[2:], v) for opt in ("--epsilon", "--delta")
       for v in _BAD_NUMBERS + ["-1", "1,2"]]
    + [(["design", "--linf", v], "linf", v) for v in ["0", "-1", "nan", "inf"]]
    + [(["design", "--dim", v, "--linf", "1"], "dim", v) for v in ["0", "-3", "1.5"]]
    + [(["design", "--condition", "bogus"], "condition", "bogus"),
       (["design", "--profile", "1,-2"], "profile", None),
       (["design", "--profile", "1,nan"], "profile", None)]
    + [(["inid", "--mechanism", "gaussian", "--epsilon", "1", "--delta", v, "--profile",
         "1,2"], "delta", v) for v in ["0", "-1e-5", "1", "nan"]]
    + [(["inid", "--mechanism", "laplace", "--epsilon", v, "--profile", "1,2"], "epsilon", v)
       for v in ["-1", "nan", "inf", "abc"]]
    + [(["inid", "--mechanism", "laplace", "--epsilon", "1", "--profile", v], "profile", None)
       for v in ["", "1,,2", "abc", "1,inf"]]
    + [(["inid", "--mechanism", "staircase", "--epsilon", "1", "--profile", "1"], "mechanism",
        "staircase"),
       (["inid", "--mechanism", "laplace", "--epsilon", "1", "--profile-kind", "linear",
         "--dim", "0"], "dim", "0")]
    + [(["spherical", "design", "--dim", "3", "--cost", v], "cost", v)
       for v in ["inf", "nan", "0", "-1", "1e308", "abc"]]
    + [(["spherical", "design", "--dim", v, "--cost", "2"], "dim", v) for v in ["0", "-1"]]
    + [(["spherical", "design", "--dim", "3", "--cost", "2", "--r", v], "r", v)
       for v in ["1.5", "0", "abc"]]
    + [(["spherical", "account", "/nonexistent-dpjax.npz", "--delta", "1e-6",
         "--compositions", v], "compositions", v) for v in ["0", "-1"]]
    + [(["spherical", "account", "/nonexistent-dpjax.npz", "--delta", v], "delta", v)
       for v in ["0", "1", "-1e-6", "nan"]]
    + [(["spherical", "account", "/nonexistent-dpjax.npz", "--delta", "1e-6",
         "--sampling-rate", v], "sampling", v) for v in ["0", "1.5"]]
    + [(["bcdp", "mean", "--epsilon", e, "--coordinate-deltas", d, "--correlation", q],
        w, v) for e, d, q, w, v in [
            ("0", "1,2", "0.5", "epsilon", "0"), ("nan", "1,2", "0.5", "epsilon", "nan"),
            ("1", "1,,2", "0.5", "deltas", None), ("1", "1,0", "0.5", "deltas", None),
            ("1", "1,2", "nan", "correlation", "nan"), ("1", "1,2", "-0.1", "correlation",
                                                         "-0.1")]]
    + [(["train-plan", "--dataset-size", n, "--sampling-rate", q, "--steps", t,
         "--epsilon", e, "--delta", d], w, v) for n, q, t, e, d, w, v in [
            ("0", "1", "1", "1", "1e-6", "dataset", "0"),
            ("50", "0", "1", "1", "1e-6", "sampling", "0"),
            ("50", "1", "0", "1", "1e-6", "steps", "0"),
            ("50", "1", "1", "0", "1e-6", "epsilon", "0"),
            ("50", "1", "1", "nan", "1e-6", "epsilon", "nan"),
            ("50", "1", "1", "1", "-1e-6", "delta", "-1e-6"),
            ("50", "1", "1", "1", "1", "delta", "1")]]
    + [(["reproduce", "nosuchpaper"], "nosuchpaper", None), (["nosuchcommand"], "", None),
       ([], "command", None), (["spherical"], "", None), (["bcdp"], "", None)]
)


def _quoted(err, token):
    """The message quotes the bad value (as typed, or as Python prints the float)."""
    if token in (None, ""):
        return True
    forms = {token}
    try:
        forms.add(repr(float(token)))
        forms.add(str(float(token)))
    except ValueError:
        pass
    return any(f in err for f in forms)


@pytest.mark.parametrize("argv,word,token", INVALID, ids=lambda x: " ".join(x)
                         if isinstance(x, list) else str(x))
def test_invalid_one_line_exit_2(capsys, no_calibration, argv, word, token):
    code, out, err = run(capsys, argv)
    assert code == 2, (code, out[-500:], err[-500:])
    assert_one_line_error(err)
    assert word.lower() in err.lower(), f"{word!r} not named in {err!r}"
    assert _quoted(err, token), f"the bad value {token!r} is not quoted in {err!r}"
