"""M_mean (Mechanism 1): unbiased per coordinate, variance within its bound, server estimate."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.bcdp import budget, mean

N = 8_000
# Every eager M_mean call below draws N users' 4 coordinates on 2 released rows, as the
# fixture's budget does: eager JAX compiles each operation per shape, so they all reuse the
# fixture's compiled operations (the jitted programs of the compile-once tests are their own)


@pytest.fixture(scope="module", params=["duchi", "privunit"])
def run(request):
    b = budget.theorem2_budget([2.0, 0.3, 2.0, 0.6], 2.0, 0.3)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-1, 1, size=(N, 4)))
    est = mean.mean_mechanism(jax.random.key(1), x, b.c, request.param)
    return request.param, b, x, np.asarray(est)


def test_unbiased_per_coordinate(run):
    name, b, x, est = run
    bound = mean.variance_bound(b.c, N, name)  # variance of the mean, worst case
    err = est.mean(0) - np.asarray(x).mean(0)
    assert np.all(np.abs(err) < 5 * np.sqrt(bound))


def test_variance_within_bound(run):
    name, b, x, est = run
    per_user = mean.variance_bound(b.c, 1, name)
    emp = (est - np.asarray(x)).var(0)
    assert np.all(emp <= per_user * 1.05)
    # the bound is attained up to the data's own variance (Duchi: B^2/m - x_i^2 per row)
    assert np.all(emp >= per_user * 0.5)


def test_server_estimate(run):
    name, b, x, est = run
    out = mean.server_estimate(est)
    np.testing.assert_allclose(out.mean, est.mean(0))
    np.testing.assert_allclose(out.variance, est.var(0, ddof=1) / N)
    assert np.all(np.abs(out.projected) <= 1)
    # the estimated variance is below the worst-case bound (within sampling error)
    assert np.all(np.asarray(out.variance) <= mean.variance_bound(b.c, N, name) * 1.05)


def test_mse_rate_is_eq17():
    c = np.array([0.1, 0.5, 0.5])
    w = np.array([0.1**2 / 3, 0.4**2 / 2, 0.0])
    expected = sum(1 / np.cumsum(w)) / 10
    assert mean.mse_rate(c, 10) == pytest.approx(min(expected, 3.0))
    assert mean.mse_rate(c, 1) == 3.0  # the "wedge d" cap


def test_zero_budget_coordinate_and_order():
    # c given out of order; a coordinate with c = 0 gets estimate 0
    x = jnp.full((N, 4), 0.5)
    c = [1.0, 0.0, 0.5, 0.5]
    assert mean.plan(c).active.tolist() == [1, 3]  # two released rows, as the fixture's
    est = mean.mean_mechanism(jax.random.key(0), x, c)
    assert np.all(np.asarray(est[:, 1]) == 0)
    assert np.isinf(mean.variance_bound(c, N)[1])


def test_one_compile_for_new_data():
    p = mean.plan([0.2, 1.0, 1.0])
    f = jax.jit(lambda k, x: mean.combine(mean.release(k, x, p), p))
    f(jax.random.key(0), jnp.zeros((8, 3)))
    f(jax.random.key(1), jnp.ones((8, 3)) * 0.3)
    assert f._cache_size() == 1


@pytest.mark.parametrize("x, c, match", [
    (np.full((2, 2), 1.5), [1.0, 1.0], "cube"),
    (np.zeros((2, 3)), [1.0, 1.0], "coordinates"),
    (np.zeros((2, 2)), [1.0, -1.0], "budget vector"),
])
def test_rejects(x, c, match):
    with pytest.raises(ValueError, match=match):
        mean.mean_mechanism(jax.random.key(0), jnp.asarray(x), c)


@pytest.mark.parametrize("channel", ["duchi", "privunit"])
def test_plan_arrays_traced_one_compile(channel):
    # weights and channel constants travel as arguments: budgets with the same released
    # rows share one program, and it draws what the plan closed over draws (same key)
    x = jnp.asarray(np.random.default_rng(1).choice([-1.0, 1.0], size=(N, 4)))
    p1 = mean.plan([0.3, 1.5, 1.5, 1.5], channel)
    p2 = mean.plan([0.1, 0.7, 0.7, 0.7], channel)
    assert p1.active.tolist() == p2.active.tolist() == [0, 1]

    def run(key, xx, w, prm):
        p = p1._replace(weights=w, params=prm)
        return mean.combine(mean.release(key, xx, p), p)

    f = jax.jit(run)
    for p in (p1, p2):
        traced = f(jax.random.key(3), x, jnp.asarray(p.weights), p.params)
        closed = mean.combine(mean.release(jax.random.key(3), x, p), p)
        np.testing.assert_allclose(traced, closed, rtol=1e-12, atol=1e-12)
    assert f._cache_size() == 1
