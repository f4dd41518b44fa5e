"""The exact 1-D privacy profiles of OSGT, truncated Laplace and staircase never increase
in epsilon (one property test over the three families; hypothesis draws their shapes)."""

import jax
import pytest
from _helpers import assert_nonincreasing
from hypothesis import given
from hypothesis import strategies as st

from dpjax.accounting.osgt import log_delta_osgt
from dpjax.accounting.staircase import log_delta_staircase
from dpjax.accounting.truncated_laplace import log_delta_truncated_laplace

# each family: its jitted log-profile (eps, *shape, sensitivity) and a strategy for
# (shape..., sensitivity) and the epsilon range drawn
_osgt, _tl, _stair = (
    jax.jit(f) for f in (log_delta_osgt, log_delta_truncated_laplace, log_delta_staircase)
)
FAMILIES = {
    "osgt": (
        lambda e, p: _osgt(e, p[0], p[1], 1.0),
        st.tuples(st.floats(0.0, 50.0), st.floats(0.05, 20.0)),
        10.0,
    ),
    "truncated_laplace": (
        lambda e, p: _tl(e, p[0], p[1] * p[0], 1.0),  # (lambda, bound / lambda)
        st.tuples(st.floats(0.05, 10.0), st.floats(0.05, 50.0)),
        10.0,
    ),
    "staircase": (
        lambda e, p: _stair(e, p[0], 1.0, p[1], p[2]),  # (decay, gamma, sensitivity)
        st.tuples(st.floats(0.05, 5.0), st.floats(0.0, 1.0), st.floats(0.1, 1.5)),
        6.0,
    ),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@given(data=st.data())
def test_profile_monotone_in_epsilon(family, data):
    log_delta, shapes, eps_max = FAMILIES[family]
    params = data.draw(shapes)
    e1, e2 = (data.draw(st.floats(0.0, eps_max)) for _ in range(2))
    lo, hi = min(e1, e2), max(e1, e2)
    assert_nonincreasing(float(log_delta(lo, params)), float(log_delta(hi, params)))
