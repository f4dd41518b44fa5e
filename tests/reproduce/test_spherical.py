"""``dpjax reproduce spherical``: the (m, q, k) map with the geometric design (issue 35)."""

import math

import jax
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dpjax.reproduce import spherical_map as sm


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _analytic_gaussian_epsilons(ks, sigma, delta, q):
    """Exact epsilon(delta) of k uses of N(0, sigma^2) at sensitivity 1, no subsampling (the
    analytic Gaussian mechanism: mu = sqrt(k) / sigma), by scipy -- an independent reference
    for the PLD engine's baseline, without its compilation."""
    assert q == 1.0

    def eps(k):
        mu = math.sqrt(k) / sigma
        gap = lambda e: (norm.cdf(-e / mu + mu / 2)  # noqa: E731
                         - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta)
        return brentq(gap, 0.0, 200.0, xtol=1e-14)

    return np.array([eps(k) for k in ks])


def test_map_uses_the_geometric_design_and_reports_its_verdict(tmp_path, monkeypatch):
    # m = 10 at sigma = 0.5 (C = 2.5, the paper's setting), one use: the geometric design
    # (KL <= 1.95 < the Gaussian's 2; the old n = 20 windowed design had 1.957), its
    # certified epsilon re-checked on the exact cells, and the report's verdict line
    from dpjax.reproduce import spherical as sp
    from dpjax.spherical import geometric

    monkeypatch.setattr(sp, "gaussian_epsilons", _analytic_gaussian_epsilons)
    designed = []
    design = geometric.design_geometric
    monkeypatch.setattr(geometric, "design_geometric",
                        lambda *a, **k: designed.append(design(*a, **k)) or designed[-1])
    rows = sm.epsilon_map((10,), (1.0,), (1,))
    (row,) = rows
    assert row["n"] == 58 and row["kl"] <= 1.95 and row["gaussian_kl"] == pytest.approx(2.0)
    ((mech, _),) = designed
    assert mech.kl == row["kl"]
    assert mech.delta(row["spherical"]) <= sm.DELTA
    assert row["ratio"] == pytest.approx(row["spherical"] / row["gaussian"], rel=1e-12)
    lines, _ = sm.map_section(tmp_path, quick=True, rows=[dict(row, q=q, k=k)
                                                          for q in sm.QUICK["qs"]
                                                          for m in sm.QUICK["dims"]
                                                          for k in sm.QUICK["ks"]])
    text = "\n".join(lines)
    assert "geometric design" in text and "designed mechanism pays" in text
    assert (tmp_path / "spherical_map.png").is_file()
