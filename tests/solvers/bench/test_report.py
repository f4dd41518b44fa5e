"""solvers.bench.report, cbf and the command line."""

import json
import math

import numpy as np
import pytest

from solvers.bench import get_family
from solvers.bench.report import performance_profile, shifted_geometric_mean, summary, write_report


def _row(inst, backend, t, res):
    return {"instance": inst, "family": "f", "size": "1", "seed": 0, "backend": backend,
            "time_s": t, "time_min_s": t, "time_max_s": t, "repeats": 1, "compile_s": math.nan,
            "reported_status": 0, "residual": res, "objective": 1.0, "timed_out": False,
            "error": "", "solved_1e-06": res <= 1e-6, "solved_1e-08": res <= 1e-8}


ROWS = [_row("a", "x", 1.0, 1e-9), _row("a", "y", 4.0, 1e-9),
        _row("b", "x", 2.0, 1e-7), _row("b", "y", 1.0, 1e-9)]


def test_shifted_geometric_mean():
    assert shifted_geometric_mean([2.0, 8.0], 0.0) == pytest.approx(4.0)
    assert shifted_geometric_mean([2.0, 8.0], 10.0) == pytest.approx(math.sqrt(12 * 18) - 10)
    with pytest.raises(ValueError):
        shifted_geometric_mean([], 1.0)


def test_summary_counts_failures_at_the_limit():
    lines = {(ln["backend"], ln["tol"]): ln for ln in summary(ROWS, 100.0, baseline="y")}
    assert lines[("x", 1e-8)]["solved"] == 1
    own = shifted_geometric_mean([1.0, 100.0], 10.0)  # b unsolved at 1e-8: at the limit
    assert lines[("x", 1e-8)]["ratio_10"] == pytest.approx(own / shifted_geometric_mean(
        [4.0, 1.0], 10.0))
    assert lines[("y", 1e-6)]["ratio_10"] == 1.0


def test_performance_profile():
    taus, rho = performance_profile(ROWS, 1e-8, taus=[1.0, 2.0, 4.0])
    np.testing.assert_allclose(rho["x"], [0.5, 0.5, 0.5])  # fastest on a, fails b
    np.testing.assert_allclose(rho["y"], [0.5, 0.5, 1.0])  # fastest on b, 4x on a


def test_failures_say_where_and_why(tmp_path):
    from solvers.bench.report import failure_reason, provenance

    late = dict(_row("b", "y", 100.0, 1e-9), timed_out=True, **{"solved_1e-08": False})
    crash = dict(_row("c", "y", 100.0, math.inf), error="RuntimeError: boom",
                 reported_status=5, **{"solved_1e-08": False, "solved_1e-06": False})
    assert failure_reason(ROWS[0]) == ""
    assert failure_reason(ROWS[2]) == "residual 1.00e-07 > 1e-08, reported optimal"
    assert failure_reason(late).startswith("over the time limit")
    assert failure_reason(crash) == "RuntimeError: boom"
    rows = ROWS[:3] + [late, _row("c", "x", 1.0, 1e-9), crash]
    path = write_report(rows, tmp_path, provenance([0], 100.0, 3, 1), baseline="y")
    text = path.read_text()
    assert "- x on f at 1: seed 0: residual 1.00e-07 > 1e-08, reported optimal\n" in text
    assert ("- y on f at 1: seed 0: over the time limit (residual 1.00e-09 when it stopped, "
            "reported optimal); seed 0: RuntimeError: boom") in text


def test_write_report(tmp_path):
    from solvers.bench.report import provenance

    prov = provenance([0], 100.0, 3, 1, argv=["test"])
    assert prov["x64"] is True and prov["versions"]["jax"]
    path = write_report(ROWS, tmp_path, prov, baseline="y")
    assert path.read_text().startswith("# Solver benchmark")
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["provenance"]["seeds"] == [0] and len(doc["rows"]) == 4
    assert (tmp_path / "profile.png").stat().st_size > 0
    assert (tmp_path / "results.csv").read_text().count("\n") == 5


def test_cbf_round_trip(tmp_path):
    import cvxpy as cp

    from solvers.bench.cbf import cbf_to_cvxpy, read_cbf, write_cbf

    prob = get_family("allocation-linear").make("6", 2).problem
    path = write_cbf(prob, tmp_path / "alloc.cbf")
    data = read_cbf(path)
    assert data.sense == "MIN" and ("EXP", 3) in data.cones
    model = prob.cvxpy_model(cp).problem
    model.solve(solver="CLARABEL")
    back = cbf_to_cvxpy(data)
    back.solve(solver="CLARABEL")
    assert back.status == "optimal"
    assert back.value == pytest.approx(model.value, rel=1e-7)
    with pytest.raises(ValueError, match="not supported"):
        (tmp_path / "bad.cbf").write_text("VER\n3\nPSDVAR\n1\n2\n")
        read_cbf(tmp_path / "bad.cbf")


def test_cli(tmp_path, capsys):
    from solvers.bench.__main__ import main

    assert main(["--family", "no-such"]) == 2
    assert "unknown family" in capsys.readouterr().err
    assert main(["--list"]) == 0
    assert "allocation-uniform" in capsys.readouterr().out
    out = tmp_path / "run"
    assert main(["--family", "allocation-uniform", "--sizes", "4", "--backends", "jax-f64",
                 "--batch", "2", "--repeats", "1", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["solved_1e-08"] and doc["throughput"][0]["batch"] == 2
    assert (out / "report.md").exists()
    again = tmp_path / "again"
    assert main(["--report-from", str(out / "results.json"), "--out", str(again)]) == 0
    assert "Closing note" in (again / "report.md").read_text()
    assert main(["--report-from", str(tmp_path / "missing.json")]) == 2
