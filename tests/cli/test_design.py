"""``dpjax design``: the objective each row optimised (issue 35, item 3)."""

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
                   "spherical": SPHERICAL_OBJECTIVE}
    assert main(["design", "--dim", "20", "--linf", "1", "--compositions", "4"]) in (0, None)
    out = capsys.readouterr().out
    assert f"objective (gaussian): {objective('gaussian', 4)}" in out
    assert f"objective (spherical): {SPHERICAL_OBJECTIVE}" in out
