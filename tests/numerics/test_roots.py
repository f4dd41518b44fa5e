"""The root finders of :mod:`dpjax.numerics.roots`, judged on functions with known roots
(tolerances are the requested bracket widths)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.numerics import Status, roots

ROOT = float(np.log(0.959103))


def _smooth(x):
    # decreasing, nearly linear in x (like F of a calibration), root at ROOT
    u = x - ROOT
    big_f = -3.0 * u + 0.4 * u**2 + 0.05 * u**3
    return big_f, jnp.stack([big_f, jnp.exp(x)])


@pytest.mark.parametrize("tol", [1e-5, 1e-7, 1e-10])
def test_illinois_brackets_the_root_to_tol(tol):
    r = jax.jit(lambda g, b: roots.illinois(_smooth, g, b, tol))(np.log(1.5), np.log(0.5))
    assert int(r.status) == Status.OPTIMAL
    assert float(r.good) >= ROOT and float(r.bad) < ROOT
    assert float(r.good) - float(r.bad) <= tol
    # the auxiliary value is the evaluation at the returned point
    np.testing.assert_array_equal(np.asarray(r.aux), np.asarray(_smooth(r.good)[1]))
    assert int(r.evaluations) <= 12  # superlinear on a smooth function
    np.testing.assert_allclose(float(r.slope), -3.0, rtol=1e-3)


def test_illinois_status_codes_and_vmap():
    goods = jnp.array([0.5, -0.5, 0.2, 1.0])
    bads = jnp.array([-1.0, -1.0, 0.1, -1.0])
    r = jax.vmap(lambda g, b: roots.illinois(_smooth, g, b, 1e-8))(goods, bads)
    # row 1: F(good) > 0; row 2: F(bad) <= 0 (root below the bracket); others fine
    assert list(np.asarray(r.status)) == [
        Status.OPTIMAL, Status.INFEASIBLE, Status.BRACKET_TOO_SMALL, Status.OPTIMAL
    ]
    assert np.all(np.abs(np.asarray(r.good)[[0, 3]] - ROOT) <= 1e-8)
    # unresolved rows return the initial good end
    assert float(r.good[1]) == -0.5 and float(r.good[2]) == 0.2


def test_illinois_on_a_step_function_bisects():
    def step(x):
        v = jnp.where(x < 0.3, 1.0, -1.0)
        return v, v

    r = roots.illinois(step, 1.0, -1.0, 1e-7)
    assert int(r.status) == Status.OPTIMAL
    assert 0.3 <= float(r.good) <= 0.3 + 1e-7


@pytest.mark.parametrize("gap,slope", [(1e-3, -3.01), (-1e-3, -2.9), (2e-3, -3.1)])
def test_warm_bracket_from_a_nearby_start(gap, slope):
    r = roots.warm_bracket(_smooth, ROOT + gap, slope, 1e-7)
    assert int(r.status) == Status.OPTIMAL and int(r.evaluations) == 4
    assert float(r.bad) < ROOT <= float(r.good) <= float(r.bad) + 1e-7 * (1 + 1e-9)


def test_warm_bracket_reports_known_ends_when_it_fails():
    r = roots.warm_bracket(_smooth, ROOT + 0.3, -30.0, 1e-9)  # slope off by 10x
    assert int(r.status) == Status.MAX_ITERATIONS
    g, b = float(r.good), float(r.bad)
    # whatever was seen, the ends it reports are on the correct sides
    assert np.isnan(g) or g >= ROOT
    assert np.isnan(b) or b < ROOT

