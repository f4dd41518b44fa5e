"""Atoms of a discrete pair: the one-use hockey-stick summed over them (delta_of_atoms)."""

import math

import numpy as np
import pytest

from dpjax.accounting.pld import delta_of_atoms


def _exact(p, q, rest, eps, mp):
    """The hockey-stick at 50 digits."""
    w = mp.exp(eps)
    terms = (max(mp.mpf(float(a)) - w * mp.mpf(float(b)), 0) for a, b in zip(p, q, strict=True))
    return float(mp.fsum(terms) + mp.mpf(rest))


def test_randomized_response_closed_form():
    """k = 2 randomized response with p = 3/4: delta(eps) = (3 - e^eps) / 4 below log 3."""
    for eps in (0.0, 0.3, 1.0):
        got = delta_of_atoms([0.75, 0.25], [0.25, 0.75], 0.0, eps)
        want = (3.0 - math.exp(eps)) / 4.0
        assert want <= got <= want * (1 + 1e-14) + 1e-15
    assert delta_of_atoms([0.75, 0.25], [0.25, 0.75], 0.0, 2.0) <= 1e-15


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_never_below_the_exact_sum_and_close_to_it(seed, mp):
    rng = np.random.default_rng(seed)
    n = 2000
    p = rng.dirichlet(np.ones(n)) * (1 - 1e-9)
    q = rng.dirichlet(np.ones(n))
    for eps in (0.0, 0.5, 3.0, -1.0):
        exact = _exact(p, q, 1e-9, eps, mp)
        got = delta_of_atoms(p, q, 1e-9, eps)
        assert exact <= got <= exact * (1 + 1e-9)


def test_tiny_masses_and_huge_epsilon_do_not_underflow_to_a_smaller_delta(mp):
    """``e^eps q`` for eps beyond float64's exponent range is formed in two factors: a
    subnormal ``q`` times ``e^710`` is finite and is subtracted, not taken as infinite."""
    p, q = [1e-10, 0.5], [1e-320, 0.5]
    got = delta_of_atoms(p, q, 0.0, 710.0)
    exact = _exact(p, q, 0.0, 710.0, mp)
    assert 0 < exact <= got <= exact * (1 + 1e-12)
    # an atom with q = 0 (loss +inf) counts whole at every epsilon, infinity included
    assert delta_of_atoms([0.5, 0.5], [0.0, 1.0], 0.1, math.inf) == pytest.approx(0.6, rel=1e-14)
    assert delta_of_atoms([0.5, 0.5], [0.0, 1.0], 0.1, math.inf) >= 0.6


def test_bad_input_raises():
    with pytest.raises(ValueError, match="same length"):
        delta_of_atoms([0.5], [0.5, 0.5], 0.0, 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        delta_of_atoms([-0.1, 1.1], [0.5, 0.5], 0.0, 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        delta_of_atoms([np.nan, 1.0], [0.5, 0.5], 0.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        delta_of_atoms([0.5, 0.5], [0.5, 0.5], 0.0, math.nan)
