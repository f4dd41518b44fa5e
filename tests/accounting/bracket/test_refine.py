"""The refinement loop of a bracket (:mod:`dpjax.accounting.bracket.refine`)."""

import math

import numpy as np
import pytest

from dpjax.accounting.bracket.refine import (
    MAX_REFINEMENTS,
    refine_bracket,
    validate_epsilon_error,
)
from dpjax.accounting.pld.plan import EngineNote, refinement


def _widening_by_grid(truth=1.0, noise=(0.0, 0.0)):
    """A stand-in engine: a bracket ``truth -/+ refinement()`` (width halves per refinement),
    each end moved by ``noise`` (a grid's end need not improve monotonically)."""
    seen = []

    def compute():
        f = refinement()
        seen.append(f)
        return np.array([truth - f + noise[0]]), np.array([truth + f + noise[1]])

    return compute, seen


def test_stops_at_the_first_grid_narrow_enough():
    compute, seen = _widening_by_grid()
    lo, up = refine_bracket(compute, 0.5)
    assert seen == [1.0, 0.5, 0.25]  # widths 2, 1, 0.5: the third is narrow enough
    assert lo[0] == 0.75 and up[0] == 1.25


def test_keeps_the_best_end_of_every_grid():
    ends = iter([(0.9, 1.5), (0.5, 1.1), (0.95, 1.3)])
    lo, up = refine_bracket(lambda: tuple(np.array([v]) for v in next(ends)), 0.16)
    assert (lo[0], up[0]) == (0.95, 1.1)  # the largest lower, the least upper


def test_warns_and_returns_the_narrowest_when_no_grid_is_fine_enough():
    compute, seen = _widening_by_grid()
    with pytest.warns(EngineNote, match="more than epsilon_error"):
        lo, up = refine_bracket(compute, 1e-9)
    assert seen == [2.0**-k for k in range(MAX_REFINEMENTS + 1)]
    h = 2.0**-MAX_REFINEMENTS
    assert (lo[0], up[0]) == (1.0 - h, 1.0 + h)


def test_lower_never_above_upper():
    # grids whose ends cross after combining: lower capped at upper
    ends = iter([(0.9, 1.0), (1.2, 1.3)])
    lo, up = refine_bracket(lambda: tuple(np.array([v]) for v in next(ends)), 1e-3)
    assert lo[0] <= up[0]


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf])
def test_epsilon_error_must_be_positive_and_finite(bad):
    with pytest.raises(ValueError, match="epsilon_error"):
        validate_epsilon_error(bad)


@pytest.mark.parametrize("bad", ["0.1", True, None, [0.1]])
def test_epsilon_error_must_be_a_number(bad):
    with pytest.raises(TypeError, match="epsilon_error"):
        validate_epsilon_error(bad)
