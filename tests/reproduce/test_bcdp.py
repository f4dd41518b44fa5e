"""The bcdp reproduction's pieces on tiny instances (the full run is `dpjax reproduce bcdp`)."""

import jax
import numpy as np
import pytest

from dpjax.reproduce import PAPERS
from dpjax.reproduce import bcdp as rep


def test_registered():
    assert PAPERS["bcdp"] == "dpjax.reproduce.bcdp"


@pytest.mark.parametrize("q", [0.0, 0.6])
def test_correlated_data_prior(q):
    x = np.asarray(rep.correlated_data(jax.random.key(0), 40_000, 4, q))
    assert set(np.unique(x)) <= {-1.0, 1.0}
    equal = np.mean(np.all(x == x[:, :1], axis=1))
    expected = q + (1 - q) * 2.0**-3
    assert abs(equal - expected) < 5 * np.sqrt(expected * (1 - expected) / 40_000)


def test_figure3_smoke(monkeypatch):
    monkeypatch.setattr(rep, "USERS", 300)
    monkeypatch.setattr(rep, "Q_GRID", np.array([0.0, 1.0]))
    out = rep.figure3({"duchi": 3})
    rows = out["duchi"]["rows"]
    assert [r["q"] for r in rows] == [0.0, 1.0]
    for r in rows:
        assert r["bcdp"]["q25"] <= r["bcdp"]["median"] <= r["bcdp"]["q75"]
        assert r["variance_bound_best_zeta"] <= r["exact_mean_mse_bcdp"] + 1e-12
    # at q = 0 Theorem 2 gives c = min(delta, eps): the bound is far below the baseline's
    assert rows[0]["exact_mean_mse_bcdp"] < rows[0]["exact_mean_mse_ldp"] / 3
