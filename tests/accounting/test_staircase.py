"""Exact loss atoms of the Poisson-subsampled staircase under replace-one
(dpjax/accounting/staircase.py: replace_one_poisson_atoms)."""

import math

import numpy as np
import pytest

from dpjax.accounting.pld.atoms import delta_of_atoms
from dpjax.accounting.staircase import (
    MAX_SHIFT_PERIODS,
    log_delta_staircase_shift,
    replace_one_poisson_atoms,
)

EPS = (0.0, 0.1, 0.5, 1.5)


def _delta(losses, probs, eps):
    return delta_of_atoms(probs, probs * np.exp(-losses), 0.0, eps)


def _density(x, decay, width, gamma):
    """The staircase density, written here from Geng & Viswanath's eq. (11)."""
    b = math.exp(-decay)
    a = (1.0 - b) / (2.0 * width * (gamma + (1.0 - gamma) * b))
    u = np.abs(x) / width
    k = np.floor(u)
    return a * b ** (k + (u - k >= gamma))


@pytest.mark.parametrize("decay,width,gamma", [(1.0, 1.0, 0.4), (0.5, 1.0, 0.0),
                                               (2.0, 0.7, 0.6), (0.3, 2.5, 1.0)])
def test_without_subsampling_it_is_the_exact_profile_of_a_shift_of_two(decay, width, gamma):
    losses, probs = replace_one_poisson_atoms(decay, width, gamma, 1.0)
    assert np.all(np.isfinite(losses)) and probs.sum() == pytest.approx(1.0, abs=1e-13)
    d = 2.0 / width
    for e in EPS:
        exact = math.exp(float(log_delta_staircase_shift(e, decay, gamma, d,
                                                         max_periods=math.ceil(d) + 4)))
        assert _delta(losses, probs, e) == pytest.approx(exact, rel=1e-12, abs=1e-300)
        assert _delta(losses, probs, e) >= exact


@pytest.mark.parametrize("decay,width,gamma,q", [(1.0, 1.0, 0.4, 0.2), (0.3, 2.5, 0.5, 0.05),
                                                 (3.0, 0.3, 0.0, 0.5), (1.0, 1.0, 1.0, 0.3)])
def test_subsampled_profile_against_a_fine_midpoint_integral(decay, width, gamma, q):
    # P = (1 - q) T + q (T + 1) against Q = (1 - q) T + q (T - 1), integrated on a fine grid
    losses, probs = replace_one_poisson_atoms(decay, width, gamma, q)
    half = 60.0 * width / decay + 10.0
    x = np.linspace(-half, half, 2_000_001)
    mid, dx = 0.5 * (x[1:] + x[:-1]), x[1] - x[0]
    g = lambda t: _density(t, decay, width, gamma)  # noqa: E731
    p = (1.0 - q) * g(mid) + q * g(mid - 1.0)
    qq = (1.0 - q) * g(mid) + q * g(mid + 1.0)
    for e in EPS:
        ref = float(np.sum(np.maximum(p - math.exp(e) * qq, 0.0)) * dx)
        # the grid cuts a jump point in O(1 / dx) cells: a relative error of ~1e-5
        assert _delta(losses, probs, e) == pytest.approx(ref, rel=2e-4, abs=1e-9)


def test_pessimistic_pads_up_and_the_lower_bound_down():
    up, p_up = replace_one_poisson_atoms(1.0, 1.0, 0.4, 0.2)
    lo, p_lo = replace_one_poisson_atoms(1.0, 1.0, 0.4, 0.2, pessimistic=False)
    assert np.all(up > lo) and np.all(p_up > p_lo)
    for e in EPS:
        assert _delta(up, p_up, e) >= _delta(lo, p_lo, e)


def test_invalid_parameters_raise():
    with pytest.raises(ValueError, match="decay and width"):
        replace_one_poisson_atoms(0.0, 1.0, 0.5, 0.1)
    with pytest.raises(ValueError, match="gamma in"):
        replace_one_poisson_atoms(1.0, 1.0, 1.5, 0.1)
    with pytest.raises(ValueError, match="periods exceeds"):
        replace_one_poisson_atoms(1.0, 1.0 / (2 * MAX_SHIFT_PERIODS), 0.5, 0.1)
