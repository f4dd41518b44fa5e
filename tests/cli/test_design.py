"""``dpjax design``: the objective each row optimised (issue 35, item 3)."""

import importlib
import json

import numpy as np

import dpjax
from dpjax.calibration.result import Calibration
from dpjax.cli._main import main
from dpjax.comparison import SPHERICAL_OBJECTIVE, Design, Row, objective


def _row(mechanism: str) -> Row:
    one = np.float64(1.0)
    cal = Calibration(mechanism=mechanism, params={"sigma": one}, variance=one, mse=one,
                      epsilon=one, delta=np.float64(1e-6), delta_at_params=np.float64(5e-7),
                      dim=20)
    return Row.of_calibration(cal)


def test_design_reports_the_objective_per_row(capsys, monkeypatch):
    # the table and the JSON say, for each mechanism, which objective it optimised (a stub
    # comparison: the wiring, not the calibrations, is under test here)
    fake = Design(0.3, 1e-6, {"dim": 20, "linf": 1.0, "compositions": 4,
                              "sampling_rate": None},
                  (_row("gaussian"), _row("spherical")), ())
    monkeypatch.setattr(dpjax, "design", lambda *a, **k: fake)
    assert main(["design", "--dim", "20", "--linf", "1", "--compositions", "4",
                 "--json"]) in (0, None)
    res = {r["mechanism"]: r["objective"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert res == {"gaussian": objective("gaussian", 4),
                   "spherical": objective("spherical", 4)}
    assert main(["design", "--dim", "20", "--linf", "1", "--compositions", "4"]) in (0, None)
    out = capsys.readouterr().out
    assert f"objective (gaussian): {objective('gaussian', 4)}" in out
    assert f"objective (spherical): {objective('spherical', 4)}" in out
    assert objective("spherical", 4) != SPHERICAL_OBJECTIVE  # one release's says so


def test_composed_design_has_the_spherical_row_with_its_objective(capsys, monkeypatch):
    """``--compositions 2``: the spherical row is calibrated at the use (certified there), not
    skipped; the objective says shape KL, scale at T; the verdict against the Gaussian of the
    same use is printed.  Two mechanisms, a coarse spherical grid, one comparison for the
    table and the JSON (the wiring and the spherical search are under test)."""
    comparison = importlib.import_module("dpjax.comparison")
    sph = importlib.import_module("dpjax.spherical.calibrate")
    full = sph.calibrate_spherical
    monkeypatch.setattr(comparison, "names", lambda: ("gaussian", "spherical"))
    monkeypatch.setattr(sph, "calibrate_spherical",
                        lambda e, d, m, l2, **use: full(e, d, m, l2, n=4, tol=0.05, **use))
    real, seen = dpjax.design, []

    def once(*args, **kwargs):
        seen.append((args, kwargs))
        if len(seen) == 1:
            seen.append(real(*args, **kwargs))
        return seen[1]

    monkeypatch.setattr(dpjax, "design", once)
    argv = ["design", "--epsilon", "2", "--delta", "1e-5", "--dim", "3", "--l2", "1",
            "--compositions", "2"]
    assert main(argv + ["--json"]) in (0, None)
    got = json.loads(capsys.readouterr().out)
    assert seen[0][1]["compositions"] == 2
    assert not [s for s in got["skipped"] if s["mechanism"] == "spherical"]
    row = next(r for r in got["results"] if r["mechanism"] == "spherical")
    assert row["objective"] == objective("spherical", 2)
    assert "(T=2)" in row["objective"] and "kl (large-T limit" in row["objective"]
    assert row["delta_at_params"] <= 1e-5
    gauss = next(r for r in got["results"] if r["mechanism"] == "gaussian")
    assert main(argv) in (0, None)
    out = capsys.readouterr().out
    assert "skipped spherical" not in out
    assert f"objective (spherical): {objective('spherical', 2)}" in out
    ratio = row["mse"] / gauss["mse"]
    assert f"its budget is {ratio:.4g} x the Gaussian's" in out
    assert ("the designed mechanism pays" if ratio < 1 else "the Gaussian is better") in out
