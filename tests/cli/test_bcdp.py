"""CLI ``dpjax bcdp mean``: Theorem 2 at settings of its own, JSON keys, one-line errors."""

import json
import math

import pytest

from dpjax.cli._main import main


def _theorem2(deltas, eps, q, zeta):
    """Eq. (16) of bayesian-coordinate-dp by hand, returned in the given order."""
    order = sorted(range(len(deltas)), key=lambda i: deltas[i])
    dt = [min(deltas[i], eps) for i in order]
    first = math.inf if q == 0 else math.log((math.exp(zeta * dt[0]) + q - 1) / q)
    cd = min(first, dt[-1])
    cs = [cd if cd <= x else x - math.log(1 + q * math.exp(cd) - q) for x in dt[:-1]] + [cd]
    out = [0.0] * len(deltas)
    for i, ci in zip(order, cs, strict=True):
        out[i] = ci
    return out, cd


@pytest.mark.parametrize("deltas, eps, q, zeta", [
    ([0.7, 0.1, 3.0, 1.1], 1.9, 0.05, None),
    ([0.5, 0.5, 0.9], 4.0, 0.6, 0.3),
    ([2.5, 0.05], 1.0, 0.0, None),
])
def test_mean_matches_theorem2(capsys, deltas, eps, q, zeta):
    argv = ["bcdp", "mean", "--epsilon", str(eps), "--coordinate-deltas",
            ",".join(map(str, deltas)), "--correlation", str(q), "--json"]
    if zeta is not None:
        argv += ["--zeta", str(zeta)]
    assert main(argv) in (0, None)
    out = json.loads(capsys.readouterr().out)
    ref, cd = _theorem2(deltas, eps, q, (1 + q) / 2 if zeta is None else zeta)
    assert out["c"] == pytest.approx(ref, rel=1e-10, abs=1e-11)
    assert out["ldp"] == pytest.approx(cd, rel=1e-10) and out["ldp"] <= eps
    assert all(b <= min(d, eps) for b, d in zip(out["bcdp"], deltas, strict=True))
    assert out["mse_bound"] > 0 and out["mse_variance_bound"] > 0


def test_table_output(capsys):
    assert main(["bcdp", "mean", "--epsilon", "2", "--coordinate-deltas", "0.2,2",
                 "--correlation", "0.5", "--channel", "privunit", "--users", "10"]) in (0, None)
    assert "bcdp" in capsys.readouterr().out


@pytest.mark.parametrize("extra", [
    ["--coordinate-deltas", "1,-1", "--correlation", "0.5"],
    ["--coordinate-deltas", "1,inf", "--correlation", "0.5"],
    ["--coordinate-deltas", "1,x", "--correlation", "0.5"],
    ["--coordinate-deltas", "1,2", "--correlation", "1.5"],
    ["--coordinate-deltas", "1,2", "--correlation", "0.5", "--zeta", "0"],
    ["--coordinate-deltas", "1,2", "--correlation", "0.5", "--users", "0"],
])
def test_errors_are_one_line(capsys, extra):
    assert main(["bcdp", "mean", "--epsilon", "1"] + extra) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpjax: error:") and "\n" not in err
