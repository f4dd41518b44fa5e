"""Exact checkers on Examples 1 and 2 and on M_mean's finite release (bayesian-coordinate-dp)."""

import math

import numpy as np
import pytest

from dpjax.bcdp import budget, finite


def test_example1_is_log2_bcdp_and_not_ldp():
    pts, prior, table = finite.example1(0.5, 0.5, 0.5)
    assert finite.ldp_epsilon(table) == math.inf
    np.testing.assert_allclose(finite.bcdp_vector(pts, prior, table), [math.log(2)] * 2,
                               rtol=0, atol=1e-15)
    assert finite.hypothesis_test_check(pts, prior, table, [math.log(2)] * 2)
    assert not finite.hypothesis_test_check(pts, prior, table, [math.log(2) - 1e-6] * 2)


def test_example2_bcdp_does_not_compose():
    pts, prior, table = finite.example2()
    assert finite.bcdp_vector(pts, prior, table)[0] == 0.0
    assert finite.bcdp_vector(pts, prior, finite.compose(table, table))[0] == math.inf


def test_correlated_prior_has_tv_q():
    q = 0.37
    pts = finite.binary_cube(3)
    prior = finite.correlated_prior(3, q)
    # TV between the laws of x_{-1} given x_1 = 1 and x_1 = 0
    rest = pts[:, 1:] @ np.array([2, 1])
    law1 = np.bincount(rest[pts[:, 0] == 1], prior[pts[:, 0] == 1], 4) / 0.5
    law0 = np.bincount(rest[pts[:, 0] == 0], prior[pts[:, 0] == 0], 4) / 0.5
    assert 0.5 * np.abs(law1 - law0).sum() == pytest.approx(q, abs=1e-15)


@pytest.mark.parametrize("d", [2, 3, 4])
@pytest.mark.parametrize("q", [0.0, 0.25, 0.8, 1.0])
def test_mean_mechanism_release_meets_theorem2(d, q):
    deltas = np.array([0.3, 0.6] + [1.5] * (d - 2))[:d]
    b = budget.theorem2_budget(deltas, 1.5, q)
    c_sorted = b.c[b.order]
    pts, table = finite.mean_mechanism_table(c_sorted)
    assert finite.ldp_epsilon(table) <= b.ldp * (1 + 1e-12)
    assert np.all(finite.cdp_vector(pts, table) <= c_sorted * (1 + 1e-12) + 1e-15)
    exact = finite.bcdp_vector(pts, finite.correlated_prior(d, q), table)
    assert np.all(exact <= b.bcdp[b.order] + 1e-12)
    assert np.all(b.bcdp <= deltas + 1e-15)


def test_table_validation():
    with pytest.raises(ValueError, match="probability"):
        finite.bcdp_vector([[0], [1]], [0.5, 0.5], [[0.5, 0.6], [1.0, 0.0]])
