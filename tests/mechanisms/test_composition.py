"""The amplified pure-DP budget (``dpjax.mechanisms._composition.amplified_budget``) against
``T log(1 + q (e^{eps_0} - 1))`` in 50-digit arithmetic: never below it, within a few ulps."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpjax.mechanisms._composition import amplified_budget


@given(
    eps0=st.floats(1e-8, 1e4),
    q=st.floats(1e-9, 0.999999),
    uses=st.integers(1, 10**7),
)
def test_amplified_budget_rounds_up(eps0, q, uses):
    got = float(amplified_budget(eps0, q, uses))
    with mpmath.workdps(50):
        exact = uses * mpmath.log(1 + mpmath.mpf(q) * mpmath.expm1(mpmath.mpf(eps0)))
    assert got >= exact
    assert got <= exact * (1 + 2.0**-45)


def test_amplified_budget_is_elementwise_and_finite_for_large_budgets():
    got = amplified_budget(np.array([1.0, 1e4]), 0.01, 3)
    assert got.shape == (2,) and np.all(np.isfinite(got))
    assert got[1] == pytest.approx(3 * (1e4 + np.log(0.01)), rel=1e-12)
