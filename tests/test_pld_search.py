"""Root finding of the calibration (:mod:`dpjax.numerics.roots`) and its use.

The searches are judged on functions with known roots (tolerances are the
requested bracket widths) and, end to end, by re-evaluating the engine at the
returned scale: the certificate must be the profile of exactly that scale.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.accounting.gaussian import delta_gaussian
from dpjax.accounting.pld import engine
from dpjax.calibration import scale_search
from dpjax.numerics import roots

ROOT = float(np.log(0.959103))


def _smooth(x):
    # decreasing, nearly linear in x (like F of a calibration), root at ROOT
    u = x - ROOT
    big_f = -3.0 * u + 0.4 * u**2 + 0.05 * u**3
    return big_f, jnp.stack([big_f, jnp.exp(x)])


@pytest.mark.parametrize("tol", [1e-5, 1e-7, 1e-10])
def test_illinois_brackets_the_root_to_tol(tol):
    r = jax.jit(lambda g, b: roots.illinois(_smooth, g, b, tol))(np.log(1.5), np.log(0.5))
    assert int(r.status) == roots.OK
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
    assert list(np.asarray(r.status)) == [0, 1, 2, 0]
    assert np.all(np.abs(np.asarray(r.good)[[0, 3]] - ROOT) <= 1e-8)
    # unresolved rows return the initial good end
    assert float(r.good[1]) == -0.5 and float(r.good[2]) == 0.2


def test_illinois_on_a_step_function_bisects():
    def step(x):
        v = jnp.where(x < 0.3, 1.0, -1.0)
        return v, v

    r = roots.illinois(step, 1.0, -1.0, 1e-7)
    assert int(r.status) == roots.OK
    assert 0.3 <= float(r.good) <= 0.3 + 1e-7


@pytest.mark.parametrize("gap,slope", [(1e-3, -3.01), (-1e-3, -2.9), (2e-3, -3.1)])
def test_warm_bracket_from_a_nearby_start(gap, slope):
    r = roots.warm_bracket(_smooth, ROOT + gap, slope, 1e-7)
    assert int(r.status) == roots.OK and int(r.evaluations) == 4
    assert float(r.bad) < ROOT <= float(r.good) <= float(r.bad) + 1e-7 * (1 + 1e-9)


def test_warm_bracket_reports_known_ends_when_it_fails():
    r = roots.warm_bracket(_smooth, ROOT + 0.3, -30.0, 1e-9)  # slope off by 10x
    assert int(r.status) == roots.NOT_CONVERGED
    g, b = float(r.good), float(r.bad)
    # whatever was seen, the ends it reports are on the correct sides
    assert np.isnan(g) or g >= ROOT
    assert np.isnan(b) or b < ROOT


def test_calibration_certificate_is_the_profile_at_the_returned_scale():
    eps = np.array([0.5, 1.0, 2.0])
    res = scale_search.calibrate_scale(
        engine.gaussian_noise, 0.0, 1.0, eps, 1e-6, 3, None, 1e-3, upper=20.0, lower=1.0
    )
    assert np.all(res.certified)
    again = [
        engine.profile(engine.gaussian_noise, s, 0.0, 1.0, e, 3, None, 1e-3)
        for s, e in zip(res.scale, eps, strict=True)
    ]
    # the same engine at the same scale (sizes may differ: the window only moves bounded tails)
    np.testing.assert_allclose(again, res.delta_at, rtol=1e-6)
    assert np.all(res.delta_at <= 1e-6)
    # least: the exact (Balle-Wang) delta at scale (1 - 1e-4) already exceeds the target
    exact = np.asarray(delta_gaussian(eps, res.scale * (1 - 1e-4), np.sqrt(3.0)))
    assert np.all(exact > 1e-6)


def test_coarse_to_fine_agrees_with_a_search_at_full_resolution():
    from dpjax.calibration.gaussian import sigma_gaussian

    kw = dict(upper=100.0, lower=4.0, tolerance=1e-8)
    eps = np.array([0.3, 1.0])
    two = scale_search.calibrate_scale(engine.gaussian_noise, 0.0, 1.0, eps, 1e-8, 5, None, 1e-3, **kw)
    one = scale_search.calibrate_scale(engine.gaussian_noise, 0.0, 1.0, eps, 1e-8, 5, None, 1e-3, coarsen=1, **kw)
    assert np.all(two.certified) and np.all(one.certified)
    # both are pessimistic: above the exact answer (5-fold Gaussian = Gaussian, l2 = sqrt 5)
    exact = np.asarray(sigma_gaussian(eps, 1e-8, np.sqrt(5.0))[0])
    for r in (two, one):
        assert np.all(r.scale >= exact) and np.all(r.scale <= exact * (1 + 2e-4))
    # the one-stage search sizes its grids for the bracket's low end: larger FFTs, a
    # larger certified round-off term, so a slightly larger scale; never a smaller one
    assert np.all(two.scale <= one.scale * (1 + 2e-8))
