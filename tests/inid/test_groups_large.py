"""Exact (grouped PLD) calibration of an i.n.i.d. Laplace allocation at K = 10^4 coordinates,
against the closed-form Theorem 5 design's pure-DP guarantee (an independent upper end)."""

import numpy as np

from dpjax.inid.groups import calibrate_grouped, grouped_delta
from dpjax.inid.laplace import laplace_design

K, EPS, DELTA = 10_000, 1.0, 1e-6


def test_calibrated_factor_at_k_1e4_is_below_the_pure_dp_design_and_tight():
    lam = np.linspace(0.05, 1.0, K)  # a decaying sensitivity profile, K coordinates
    pure = laplace_design(lam, EPS, 0.0)  # Theorem 5: sum lambda_i / b_i <= eps (pure DP)
    assert sum(lam / pure.scales) <= EPS * (1 + 1e-12)
    c, d, g = calibrate_grouped(lam, pure.scales, EPS, DELTA, num_groups=2,
                                num_iterations=3)
    assert g.count.sum() == K and len(g.count) <= 2
    # the pure-DP scales are private at every delta: the exact factor cannot exceed 1, and
    # with delta > 0 over 10^4 coordinates the composed loss concentrates far below eps
    assert 0.0 < c <= 1.0
    assert c < 0.5
    assert d <= DELTA
    # near-tight: 10% below the returned factor (the bracket is 2^-3 relative) is not private
    assert grouped_delta(g._replace(ratio=g.ratio / (0.9 * c)), EPS) > DELTA
