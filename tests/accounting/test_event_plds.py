"""Leaf events to PLDs (:mod:`dpjax.accounting.event_plds`): truncated Laplace noise.

Its support is bounded, so the loss is ``+infinity`` where the shifted density vanishes; the
ledger takes it through its exact 1-D profile.  Reference: the closed form of
:mod:`dpjax.accounting.truncated_laplace` (eq. (26) of flipped-huber-mechanism), itself
checked independently in ``tests/mechanisms/test_truncated_laplace.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpjax.accounting import events as ev
from dpjax.accounting.accountant import PLDAccountant
from dpjax.accounting.event_plds import UnsupportedEventError
from dpjax.accounting.truncated_laplace import delta_truncated_laplace, epsilon_truncated_laplace

SCALE, BOUND = 1.0, 20.0
TL = ev.Noise("truncated-laplace", {"scale": SCALE, "bound": BOUND})


def test_one_truncated_laplace_use_is_certified_against_its_closed_form():
    acc = PLDAccountant().compose(TL, 1)
    for eps in (0.0, 0.2, 0.9, 0.99, 1.0, 2.0):
        exact = float(delta_truncated_laplace(eps, SCALE, BOUND, 1.0))
        got = acc.get_delta(eps)
        assert exact <= got <= exact + 1e-3, (eps, got, exact)
    # beyond the largest finite loss, Delta / lambda = 1: the mass where T - 1 has no density
    assert acc.get_delta(2.0) <= float(delta_truncated_laplace(2.0, SCALE, BOUND, 1.0)) * 1.01
    exact = float(epsilon_truncated_laplace(1e-5, SCALE, BOUND, 1.0))
    assert exact <= acc.get_epsilon(1e-5) <= exact + 1e-3


def test_composed_truncated_laplace_is_finite_and_consistent():
    acc = PLDAccountant().compose(TL, 50)
    eps = acc.get_epsilon(1e-5)
    assert math.isfinite(eps)
    assert acc.get_delta(eps) <= 1e-5
    # at least the one-use answer, and the composed mass at +infinity stays below delta
    assert eps >= float(epsilon_truncated_laplace(1e-5, SCALE, BOUND, 1.0))
    assert acc.get_delta(50.0 + 1.0) >= 50 * 0.999 * float(
        delta_truncated_laplace(2.0, SCALE, BOUND, 1.0)
    )


def test_poisson_sampled_truncated_laplace_is_refused_clearly():
    with pytest.raises(UnsupportedEventError, match="truncated-laplace"):
        PLDAccountant().compose(ev.PoissonSampled(0.1, TL), 5)


def test_truncated_laplace_has_no_lower_end_but_an_upper_one():
    lower, upper = PLDAccountant().compose(TL, 2).bracket(1e-5)
    assert 0.0 <= lower <= upper and np.isfinite(upper)
