"""The root finders of :mod:`dpjax.numerics.roots` (traced and host-driven, one result type),
judged on functions with known roots (tolerances are the requested bracket widths)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.numerics import (
    Root,
    Status,
    bisect_host,
    illinois_host,
    least_integer_host,
    newton_host,
    roots,
)

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

def test_newton_host_closes_the_bracket_from_either_side():
    def f(x):  # feasible above the cube root of 5
        return 5.0 - x**3, -3.0 * x**2

    x0 = np.array([0.5, 1.0, 3.0, 100.0])
    r = newton_host(f, x0, good=np.full(4, 200.0), bad=np.zeros(4))
    good = r.good
    assert np.all(r.status == Status.OPTIMAL) and np.all(r.bad < good)
    assert np.all(f(good)[0] <= 0) and np.all(f(good - 1e-12)[0] > 0)
    np.testing.assert_allclose(good, 5 ** (1 / 3), rtol=1e-12)


def test_newton_host_reports_an_open_bracket():
    def flat(x):  # never feasible: the start stays, unverified
        return np.ones_like(x), np.zeros_like(x)

    r = newton_host(flat, np.array([1.0]), good=np.array([10.0]), bad=np.array([0.0]),
                    max_iterations=5)
    assert r.status[0] == Status.INFEASIBLE and r.good[0] == 10.0 and r.evaluations == 6


def test_illinois_host_closes_every_row_and_returns_evaluated_feasible_points():
    seen = []

    def f(x):  # decreasing; feasible above the roots 5^(1/3), 2, 0.3; +inf near 0
        seen.append(np.array(x))
        with np.errstate(divide="ignore"):
            return np.where(x > 0.01, np.array([5.0, 8.0, 0.027]) - x**3, np.inf)

    r = illinois_host(f, np.full(3, 10.0), np.zeros(3), tol=1e-12)
    good = r.good
    assert np.all(r.status == Status.OPTIMAL) and r.evaluations == len(seen)
    assert np.all(np.abs(good - r.bad) <= 1e-12) and np.all(r.slope < 0)
    np.testing.assert_allclose(good, [5 ** (1 / 3), 2.0, 0.3], rtol=1e-11)
    assert np.all(f(good) <= 0) and np.all(f(good - 1e-11) > 0)
    # every returned point was evaluated (no interpolated answer)
    assert all(np.any([g == s[i] for s in seen]) for i, g in enumerate(good))
    # superlinear: far fewer evaluations than the 44 halvings of a bisection to 1e-12
    assert len(seen) < 30


def test_illinois_host_assumed_ends_bisect_first_and_keep_open_rows():
    calls = []

    def f(x):
        calls.append(np.array(x))
        assert np.all(x < 1e3) and np.all(x > -1e3)  # the assumed ends are never evaluated
        return np.array([1.0, -1.0]) * np.ones_like(x) + np.array([-x[0] / 10.0, 0.0])

    r = illinois_host(
        f, np.array([1e3, 1e3]), np.array([-1e3, -1e3]), tol=1e-9,
        f_good=np.array([-np.inf, -np.inf]), f_bad=np.array([np.inf, np.inf]),
    )
    good = r.good
    assert r.status[0] == Status.OPTIMAL and abs(good[0] - 10.0) < 1e-8 and f(good)[0] <= 0
    # the second row is feasible everywhere: it closes at the bottom of its bracket
    assert good[1] < -999.0


def test_bisect_host_arrays_match_the_scalar_loop_and_stop_at_tol():
    targets = np.array([2.0, 3.0, 50.0])
    calls = []

    def holds(x):
        calls.append(1)
        return x * x >= targets, x * x

    r = bisect_host(holds, np.full(3, 100.0), np.full(3, 1.0), 80,
                    good_aux=np.full(3, 1e4), geometric=True, tol=1e-10)
    good, aux, bad = r.good, r.aux, r.bad
    assert np.all(r.status == Status.OPTIMAL) and r.evaluations == len(calls)
    assert np.all(good * good >= targets) and np.all(bad * bad < targets)
    np.testing.assert_array_equal(aux, good * good)  # the aux of the returned point
    assert np.all(good - bad <= 1e-10 * bad) and len(calls) < 80
    # without a tolerance, elementwise the same iterates as the scalar loop, bit for bit
    r = bisect_host(lambda x: (x * x >= targets, None), np.full(3, 100.0),
                    np.full(3, 1.0), 30, geometric=True)
    assert np.all(r.status == Status.MAX_ITERATIONS) and r.evaluations == 30
    for i, t in enumerate(targets):
        s = bisect_host(lambda x, t=t: (x * x >= t, None), 100.0, 1.0, 30, geometric=True)
        assert (s.good, s.bad) == (r.good[i], r.bad[i]) and s.status == Status.MAX_ITERATIONS


def test_least_integer_host_against_a_linear_scan():
    for lo, hi, k in [(0, 100, 8), (0, 1, 0), (0, 1, 1), (5, 5, 5), (3, 1000, 999),
                      (3, 1000, 3), (3, 1000, 4)]:
        assert least_integer_host(lambda c, k=k: c >= k, lo, hi) == k


def test_bisect_host_arrays_keep_the_feasible_end():
    roots = np.array([0.3, 2.0, 7.5])
    r = bisect_host(lambda x: (x * x <= roots, None), np.zeros(3), np.full(3, 10.0), 60)
    good, bad = r.good, r.bad
    assert np.all(good * good <= roots) and np.all(bad * bad > roots)
    np.testing.assert_allclose(good, np.sqrt(roots), rtol=1e-15, atol=2e-16 * 10)


def test_every_search_returns_one_result_type():
    """bisect_bracket, bisect_monotone, illinois, warm_bracket and the host searches all
    return a :class:`Root` with the same fields; fixed-iteration loops say MAX_ITERATIONS."""

    def sq(x):
        return 2.0 - x * x, x

    traced = [
        roots.bisect_bracket(lambda x: x * x <= 2.0, 0.0, 2.0, 50),
        roots.bisect_monotone(lambda x: x * x <= 2.0, 0.0, 2.0, num_iterations=50),
        roots.illinois(sq, 2.0, 0.0, 1e-10),
        roots.warm_bracket(sq, 1.4142, -2.8284, 1e-9),
    ]
    host = [
        bisect_host(lambda x: (x * x >= 2.0, None), 2.0, 0.0, 50),
        newton_host(lambda x: (2.0 - x * x, -2.0 * x), np.array([2.0]), np.array([2.0]),
                    np.array([0.0])),
        illinois_host(lambda x: 2.0 - x * x, np.array([2.0]), np.array([0.0]), 1e-12),
    ]
    for r in traced + host:
        assert type(r) is Root
        assert abs(float(np.ravel(r.good)[0]) - 2**0.5) < 1e-6
    assert [int(np.ravel(r.status)[0]) for r in traced + host] == [
        Status.MAX_ITERATIONS, Status.OPTIMAL, Status.OPTIMAL, Status.OPTIMAL,
        Status.MAX_ITERATIONS, Status.OPTIMAL, Status.OPTIMAL]
    # the bisections have no function values: no aux, no slope
    assert traced[0].aux is None and traced[1].aux is None and np.isnan(traced[1].slope)
    # under jit and vmap too
    jitted = jax.jit(jax.vmap(lambda t: roots.bisect_monotone(lambda x: x <= t, 0.0, 5.0)))
    r = jitted(jnp.array([1.0, 2.0, 6.0]))
    assert type(r) is Root and r.aux is None
    assert list(np.asarray(r.status)) == [Status.OPTIMAL, Status.OPTIMAL,
                                          Status.BRACKET_TOO_SMALL]
