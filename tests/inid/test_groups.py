"""Grouped exact PLD accounting of i.n.i.d. allocations against dp_accounting and the grouping."""

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpl

from dpjax.inid.groups import calibrate_grouped, group_coordinates, grouped_delta, grouped_epsilon


def test_grouping_is_exact_or_rounds_ratios_up():
    lam = np.array([1.0, 1.0, 2.0, 0.0, 4.0])
    g = group_coordinates(lam, 2.0)
    assert g.exact and g.ratio.tolist() == [0.5, 1.0, 2.0] and g.count.tolist() == [2, 1, 1]
    t = np.random.default_rng(0).lognormal(size=1000)
    g = group_coordinates(t, 1.0, num_groups=8)
    assert not g.exact and g.count.sum() == 1000 and g.ratio.size == 8
    # every coordinate sits in a group whose representative is at least its own ratio
    rep = np.repeat(g.ratio, g.count)
    assert np.all(rep >= np.sort(t))
    with pytest.raises(ValueError, match="scales"):
        group_coordinates(lam, -1.0)


def test_two_laplace_groups_against_dp_accounting():
    # 3000 coordinates at t = 0.01 and 1000 at t = 0.03: the composed profile, exactly grouped
    lam = np.concatenate([np.full(3000, 1.0), np.full(1000, 3.0)])
    g = group_coordinates(lam, 100.0)
    assert g.exact and g.count.tolist() == [3000, 1000]
    eps = grouped_epsilon(g, 1e-6)
    ref = (dpl.from_laplace_mechanism(100.0, sensitivity=1.0, value_discretization_interval=1e-5)
           .self_compose(3000)
           .compose(dpl.from_laplace_mechanism(100.0, sensitivity=3.0,
                                               value_discretization_interval=1e-5)
                    .self_compose(1000)))
    ref_eps = ref.get_epsilon_for_delta(1e-6)
    assert ref_eps <= eps <= ref_eps + 5e-3  # pessimistic, and tight
    assert grouped_delta(g, eps) <= 1e-6


def test_calibrated_multiplier_is_private_and_tight():
    lam = np.linspace(0.5, 1.5, 500)
    c, d, g = calibrate_grouped(lam, np.sqrt(lam), 1.0, 1e-6, num_groups=2, num_iterations=6)
    assert d <= 1e-6
    # a multiplier below the bracket's (2^-6 relative) is not private
    assert grouped_delta(g._replace(ratio=g.ratio / (c * 0.98)), 1.0) > 1e-6 * 0.999
