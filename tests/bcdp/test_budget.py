"""Theorem 2's budget, Propositions 4 and 6 (bayesian-coordinate-dp), against direct formulas."""

import math

import numpy as np
import pytest

from dpjax.bcdp import budget


def _theorem2_reference(deltas, eps, q, zeta):
    """Eq. (16) written out with plain math (sorted deltas)."""
    dt = [min(x, eps) for x in sorted(deltas)]
    first = math.inf if q == 0 else math.log((math.exp(zeta * dt[0]) + q - 1) / q)
    cd = min(first, dt[-1])
    c = [cd if cd <= x else x - math.log(1 + q * math.exp(cd) - q) for x in dt[:-1]]
    return c + [cd]


@pytest.mark.parametrize("q", [0.0, 0.01, 0.3, 0.77, 1.0])
@pytest.mark.parametrize("zeta", [None, 0.5, 1.0])
def test_theorem2_matches_equation16(q, zeta):
    deltas = [1.3, 0.25, 3.0, 0.7, 0.25]
    eps = 2.5
    b = budget.theorem2_budget(deltas, eps, q, zeta)
    ref = _theorem2_reference(deltas, eps, q, (1 + q) / 2 if zeta is None else zeta)
    # the 1e-12 relative slack of the implementation shows up as ~1e-12 absolute at c = 0
    np.testing.assert_allclose(b.c[b.order], ref, rtol=1e-11, atol=1e-11)
    assert np.all(np.diff(b.c[b.order]) >= 0) and np.all(b.c >= 0)
    assert b.ldp == pytest.approx(max(ref)) and b.ldp <= eps
    assert np.all(b.bcdp <= np.minimum(deltas, eps))


def test_no_coordinate_demand_gives_eps_everywhere():
    b = budget.theorem2_budget([5.0, 5.0, 5.0], 1.0, 0.4, zeta=1.0)
    np.testing.assert_allclose(b.c, [1.0] * 3)


def test_proposition4_parts():
    c = np.array([0.1, 0.4, 0.5])
    np.testing.assert_allclose(budget.cdp_to_bcdp(c, 1.0), [1.0] * 3)  # q = 1: sum c
    part2 = budget.cdp_to_bcdp(c, 0.5, ldp=0.5)
    np.testing.assert_allclose(part2, np.minimum(c + np.log(1 + 0.5 * (np.exp(0.5) - 1)), 0.5))


def test_proposition6_lp_meets_targets():
    deltas = [0.2, 0.2, 2.0, 2.0, 2.0]
    out = budget.proposition6_budget(deltas, 0.1, epsilon=2.0)
    assert out.status == 0
    assert np.all(out.bcdp <= np.asarray(deltas)) and out.ldp <= 2.0
    a = budget.proposition6_matrix(deltas, 0.1)
    assert np.all(a @ out.c <= 1 + 1e-9)
    # at q = 0 the LP is separable: c = delta
    np.testing.assert_allclose(budget.proposition6_budget(deltas, 0.0).c, deltas, rtol=1e-8)


def test_corollary1_regimes():
    lo = budget.corollary1_bound(1000, 10, 2, 0.2, 2.0, 0.0)
    hi = budget.corollary1_bound(1000, 10, 2, 0.2, 2.0, 1.0)
    assert lo == pytest.approx((10 * 2 / 0.04 + 64 / 4) / 1000)
    assert hi > lo


@pytest.mark.parametrize("kwargs, match", [
    (dict(deltas=[0.0, 1.0], epsilon=1.0, q=0.5), "finite and > 0"),
    (dict(deltas=[math.inf], epsilon=1.0, q=0.5), "finite and > 0"),
    (dict(deltas=[1.0], epsilon=1.0, q=1.5), "q must be in"),
    (dict(deltas=[1.0], epsilon=1.0, q=0.5, zeta=0.0), "zeta"),
    (dict(deltas=[1.0], epsilon=-1.0, q=0.5), "epsilon"),
])
def test_theorem2_rejects(kwargs, match):
    with pytest.raises(ValueError, match=match):
        budget.theorem2_budget(**kwargs)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(deltas=[True], epsilon=1.0, q=0.1), "coordinate deltas must be a real number"),
        (dict(deltas=[1.0], epsilon="1", q=0.1), "epsilon must be a real number"),
        (dict(deltas=[1.0], epsilon=1.0, q="0.5"), "correlation q must be a real number"),
        (dict(deltas=[1.0], epsilon=[1.0, 2.0], q=0.5), "epsilon must be a single number"),
        (dict(deltas=[1.0], epsilon=1.0, q=1.5), r"correlation q must be in \[0, 1\]"),
        (dict(deltas=[1.0], epsilon=1.0, q=0.5, zeta=True), "zeta must be a real number"),
    ],
)
def test_strings_and_booleans_are_refused(kw, match):
    """float() turned "1", "0.5" and True into numbers and the budget was computed."""
    with pytest.raises(ValueError, match=match):
        budget.theorem2_budget(**kw)
    with pytest.raises(ValueError, match="correlation q must be a real number"):
        budget.cdp_to_bcdp([0.5], "0.5")
