"""Every CLI misuse is one line on stderr with exit status 2 (no usage block, no reprs)."""

import subprocess
import sys

import pytest

from dpjax.cli._main import main

MISUSES = [
    ["calibrate", "gausian", "--epsilon", "1", "--delta", "1e-5", "--l2", "1"],
    ["calibrate", "gaussian", "--epsilon", "abc", "--delta", "1e-5", "--l2", "1"],
    ["calibrate", "gaussian", "--epsilon", "-1", "--delta", "1e-5", "--l2", "1"],
    ["account", "gaussian", "--param", "sigma=abc", "--delta", "1e-5"],
    ["account", "gaussian", "--param", "sigma=1", "--epsilon", "1", "--delta", "1e-5"],
    ["reproduce", "foo"],
    ["nosuchcommand"],
    [],
    ["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--dim", "3"],
    ["profile", "gaussian", "--param", "sigma=1", "--param", "sigma=2", "--epsilon", "1"],
    ["profile", "gaussian", "--param", "sigma", "--epsilon", "1"],
    ["account", "gaussian", "--param", "sigma=1", "--delta", "1e-5", "--bin-width", "-1"],
    ["account", "gaussian", "--param", "sigma=1", "--delta", "1e-5", "--relation",
     "replace_special"],
    ["account", "--events", "/nonexistent/events.json", "--delta", "1e-5"],
    ["design", "--dim", "0", "--l2", "1"],
    ["design", "--epsilon", "abc"],
    ["train-plan", "--epsilon", "abc"],
]


@pytest.mark.parametrize("argv", MISUSES, ids=lambda a: " ".join(a) or "no command")
def test_one_line_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        code = main(argv)
        raise SystemExit(code)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "usage:" not in err and "np.float64" not in err


def test_version_and_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "dpjax", "--version"], capture_output=True,
                         text=True, check=True)
    from dpjax import __version__

    assert out.stdout.strip() == f"dpjax {__version__}"


# issue 34: silent or wrong answers found in a sweep of invalid inputs, each now one line
# naming what is wrong (exit status 2)
_TP = ["train-plan", "--dataset-size", "100", "--sampling-rate", "0.1", "--steps", "2"]
_INID = ["inid", "--mechanism", "laplace", "--epsilon", "1", "--profile", "1,2"]
SILENT_BEFORE = [
    # ran with linf = 1 although --dim > 1 needs a sensitivity
    (["design", "--dim", "5"], "--dim 5: give a sensitivity"),
    # exited 0 with an empty table
    (["design", "--epsilon", "0", "--delta", "0"], "infeasible for every mechanism (gaussian: "),
    # the empty item was dropped
    (["calibrate", "gaussian", "--epsilon", "1,,2", "--delta", "1e-5"], "empty item"),
    (["calibrate", "gaussian", "--epsilon", "1,", "--delta", "1e-5"], "empty item"),
    # argparse took a negative number with an exponent (or a list) for an option
    (["design", "--delta", "-1e-5"], "delta must lie in [0, 1), got -1e-05"),
    (["calibrate", "gaussian", "--epsilon", "-1e-3,1", "--delta", "1e-5"],
     "epsilon must be finite and >= 0, got -0.001"),
    (["account", "gaussian", "--param", "sigma=1", "--delta", "-.5"], "delta must lie in"),
    (_TP + ["--delta", "1e-5", "--epsilon", "-inf"], "epsilon must be finite and > 0, got -inf"),
    (["design", "--linf", "-1E+2"], "linf must be finite and > 0, got -100.0"),
    # ignored: the events carry their uses (T = 100 was accounted as one use)
    (["account", "--events", "e.json", "--delta", "1e-5", "--compositions", "100"],
     "--compositions: the events carry their uses"),
    (["account", "--events", "e.json", "--delta", "1e-5", "--param", "sigma=1", "--sampling-rate",
      "0.1", "--dim", "3"], "--param, --sampling-rate, --dim: the events carry their uses"),
    # ignored: a profile sets dim and the sensitivities
    (["design", "--profile", "1,2", "--l2", "3"], "give either a sensitivity profile or --l2"),
    (_INID + ["--dim", "5"], "--dim 5 goes with --profile-kind only"),
    # --profile-kind with design's default dim = 1 was a one-coordinate profile
    (["design", "--profile-kind", "linear"], "--profile-kind needs --dim K"),
    # messages that did not show the value
    (_INID + ["--weights", "1,nan"], "weights must be finite and > 0, got nan"),
    (["bcdp", "mean", "--epsilon", "1", "--coordinate-deltas", "0.5", "--correlation", "0.5",
      "--users", "0"], "--users must be an integer >= 1, got 0"),
]


@pytest.mark.parametrize("argv,fragment", SILENT_BEFORE, ids=lambda a: " ".join(a)
                         if isinstance(a, list) else None)
def test_invalid_input_names_the_problem(argv, fragment, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1, err


def test_unreadable_profile_files_are_one_line(tmp_path, capsys):
    for name, content in (("p.npy", b"not an array"), ("p.txt", b"[1, 2"), ("q.txt", b"\x80")):
        (tmp_path / name).write_bytes(content)
        assert main(_INID[:5] + ["--profile-file", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert str(tmp_path / name) in err and len(err.strip().splitlines()) == 1, err
