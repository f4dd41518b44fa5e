"""The bcdp reproduction's pieces on tiny instances (the full run is `dpjax reproduce bcdp`)."""

import jax
import numpy as np
import pytest

from dpjax.reproduce import PAPERS
from dpjax.reproduce import bcdp as rep


def test_registered():
    assert PAPERS["bcdp"].module == "dpjax.reproduce.bcdp"


@pytest.mark.parametrize("q", [0.0, 0.6])
def test_correlated_data_prior(q):
    x = np.asarray(rep.correlated_data(jax.random.key(0), 40_000, 4, q))
    assert set(np.unique(x)) <= {-1.0, 1.0}
    equal = np.mean(np.all(x == x[:, :1], axis=1))
    expected = q + (1 - q) * 2.0**-3
    assert abs(equal - expected) < 5 * np.sqrt(expected * (1 - expected) / 40_000)


def test_best_zeta_never_worse_than_heuristic():
    from dpjax.bcdp import budget, mean

    for q in (0.0, 0.5):
        zeta, bound = rep._best_zeta("duchi", q)
        heuristic = float(np.sum(mean.variance_bound(
            budget.theorem2_budget(rep.DELTAS, rep.EPSILON, q).c, rep.USERS)))
        assert 0 < zeta <= 1 and bound <= heuristic * (1 + 1e-12)
    # q = 0: c = min(delta, eps) and the bound is far below the min(delta)-LDP baseline's
    base = float(np.sum(mean.variance_bound(np.full(10, 0.2), rep.USERS)))
    assert rep._best_zeta("duchi", 0.0)[1] < base / 3
