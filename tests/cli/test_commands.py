"""The dpjax command: tables, exact JSON, one-line errors with exit status 2."""

import json
import subprocess
import sys

import pytest

from dpjax.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrate_json_contract(capsys):
    code, out, _ = run(capsys, "calibrate", "gaussian", "--epsilon", "0.3", "--delta", "1e-6",
                       "--l2", "1", "--json")
    assert code == 0
    data = json.loads(out)
    for key in ("mechanism", "params", "variance", "mse", "epsilon", "delta", "delta_at_params"):
        assert key in data
    assert data["mechanism"] == "gaussian" and set(data["params"]) == {"sigma"}
    assert round(data["variance"], 5) == 168.80201
    assert data["delta_at_params"] <= data["delta"]
    # full precision: the JSON float round-trips the library value exactly
    import dpjax

    cal = dpjax.calibrate("gaussian", epsilon=0.3, delta=1e-6, l2=1.0)
    assert data["params"]["sigma"] == float(cal.params["sigma"])


def test_calibrate_table_and_lists(capsys):
    code, out, _ = run(capsys, "calibrate", "laplace", "--epsilon", "0.3,3", "--delta", "1e-6",
                       "--linf", "1")
    assert code == 0 and "scale" in out and "delta_at_params" in out and len(out.splitlines()) >= 4


def test_profile_json(capsys):
    code, out, _ = run(capsys, "profile", "gaussian", "--param", "sigma=2", "--epsilon", "0.5,1",
                       "--l2", "1", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["epsilon"]) == 2 and len(data["delta"]) == 2
    assert data["delta"][0] > data["delta"][1] > 0


def test_account_json(capsys):
    code, out, _ = run(capsys, "account", "gaussian", "--param", "sigma=1", "--compositions", "4",
                       "--delta", "1e-5", "--json")
    data = json.loads(out)
    assert code == 0
    for key in ("epsilon", "delta", "compositions", "sampling_rate"):
        assert key in data
    assert data["compositions"] == 4 and data["epsilon"] > 0


def test_design_default_runs_and_names_best(capsys, monkeypatch):
    monkeypatch.delenv("DPJAX_PROGRESS", raising=False)  # captured stderr: not a terminal
    code, out, err = run(capsys, "design")
    assert code == 0 and err == ""
    assert "gaussian" in out and "laplace" in out and "best:" in out
    # on a terminal (forced here): each mechanism's name while it runs, then where the
    # time went, all on stderr; stdout is the same table
    monkeypatch.setenv("DPJAX_PROGRESS", "1")
    code, out_tty, err = run(capsys, "design")
    lines = err.splitlines()
    assert code == 0 and out_tty == out
    assert any(line.strip() == "staircase ..." for line in lines)
    assert lines[-1].startswith("design: ") and lines[-1].endswith(")")


def test_design_json(capsys):
    # K = 2 at the target of tests/cli/test_entry_points_cli.py's `design --profile 1,2`: its
    # i.i.d. rows' 2-dim calibrations (osgt, truncated Laplace: mostly compiling) are this
    # test's programs
    code, out, _ = run(capsys, "design", "--epsilon", "0.5", "--delta", "1e-6", "--dim", "2",
                       "--l2", "1", "--json")
    data = json.loads(out)
    assert code == 0 and data["best"] == data["results"][0]["mechanism"]
    mses = [r["mse"] for r in data["results"]]
    assert mses == sorted(mses)
    # the spherical mechanism is offered for an l2 query in K dims: certified, and its
    # least budget sits in the search bracket around the Gaussian's
    sph = next(r for r in data["results"] if r["mechanism"] == "spherical")
    gauss = next(r for r in data["results"] if r["mechanism"] == "gaussian")
    assert sph["delta_at_params"] <= 1e-6
    assert 0.8 * gauss["mse"] <= sph["mse"] <= 1.5 * gauss["mse"]


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["calibrate", "gaussian", "--epsilon", "-1", "--delta", "1e-6", "--l2", "1"],
         "epsilon must be"),
        (["calibrate", "gaussian", "--epsilon", "1", "--delta", "2", "--l2", "1"],
         "delta must lie"),
        (["calibrate", "gaussian", "--epsilon", "1", "--delta", "0", "--l2", "1"], "infeasible"),
        # one dimension defaults to unit sensitivity in every subcommand (issue 12); more
        # dimensions need one
        (["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--dim", "3"],
         "give a sensitivity"),
        (["profile", "gaussian", "--param", "sigma=-1", "--epsilon", "1"], "sigma must be"),
        (["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--dim", "4",
          "--l1", "1", "--l2", "2"], "inconsistent sensitivities"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1


def test_console_script_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "dpjax.cli._main", "calibrate", "gaussian", "--epsilon", "1",
         "--delta", "1e-5", "--l2", "1", "--json"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mechanism"] == "gaussian"
    bad = subprocess.run([sys.executable, "-m", "dpjax.cli._main", "calibrate", "nope"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2


def test_default_output_folders_are_ignored_by_git(tmp_path):
    """dpjax reproduce writes --out (default reproduce-out) relative to where it runs; it and
    benchopt's outputs/__cache__ beside bench/benchopt must never show up in git status."""
    import pathlib

    from dpjax.cli._main import build_parser

    root = pathlib.Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    args = build_parser().parse_args(["reproduce", "inid"])
    probes = [args.out / "report.md", pathlib.Path("bench") / args.out / "report.md",
              pathlib.Path("bench/benchopt/outputs/run.parquet"),
              pathlib.Path("bench/benchopt/__cache__/joblib.pkl"),
              pathlib.Path("bench-out/solvers/report.md")]
    for probe in probes:
        done = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=root, timeout=60)
        assert done.returncode == 0, f"{probe} is not ignored by git"
