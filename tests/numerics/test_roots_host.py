"""Host-driven root finding (dpjax/numerics/roots_host.py)."""

import numpy as np

from dpjax.numerics import newton_host


def test_newton_host_closes_the_bracket_from_either_side():
    def f(x):  # feasible above the cube root of 5
        return 5.0 - x**3, -3.0 * x**2

    x0 = np.array([0.5, 1.0, 3.0, 100.0])
    good, ok = newton_host(f, x0, good=np.full(4, 200.0), bad=np.zeros(4))
    assert ok.all()
    assert np.all(f(good)[0] <= 0) and np.all(f(good - 1e-12)[0] > 0)
    np.testing.assert_allclose(good, 5 ** (1 / 3), rtol=1e-12)


def test_newton_host_reports_an_open_bracket():
    def flat(x):  # never feasible: the start stays, unverified
        return np.ones_like(x), np.zeros_like(x)

    good, ok = newton_host(flat, np.array([1.0]), good=np.array([10.0]), bad=np.array([0.0]),
                           max_iterations=5)
    assert not ok[0] and good[0] == 10.0


def test_illinois_host_closes_every_row_and_returns_evaluated_feasible_points():
    from dpjax.numerics import illinois_host

    seen = []

    def f(x):  # decreasing; feasible above the roots 5^(1/3), 2, 0.3; +inf near 0
        seen.append(np.array(x))
        with np.errstate(divide="ignore"):
            return np.where(x > 0.01, np.array([5.0, 8.0, 0.027]) - x**3, np.inf)

    good, ok = illinois_host(f, np.full(3, 10.0), np.zeros(3), tol=1e-12)
    assert ok.all()
    np.testing.assert_allclose(good, [5 ** (1 / 3), 2.0, 0.3], rtol=1e-11)
    assert np.all(f(good) <= 0) and np.all(f(good - 1e-11) > 0)
    # every returned point was evaluated (no interpolated answer)
    assert all(np.any([g == s[i] for s in seen]) for i, g in enumerate(good))
    # superlinear: far fewer evaluations than the 44 halvings of a bisection to 1e-12
    assert len(seen) < 30


def test_illinois_host_assumed_ends_bisect_first_and_keep_open_rows():
    from dpjax.numerics import illinois_host

    calls = []

    def f(x):
        calls.append(np.array(x))
        assert np.all(x < 1e3) and np.all(x > -1e3)  # the assumed ends are never evaluated
        return np.array([1.0, -1.0]) * np.ones_like(x) + np.array([-x[0] / 10.0, 0.0])

    good, ok = illinois_host(
        f, np.array([1e3, 1e3]), np.array([-1e3, -1e3]), tol=1e-9,
        f_good=np.array([-np.inf, -np.inf]), f_bad=np.array([np.inf, np.inf]),
    )
    assert ok[0] and abs(good[0] - 10.0) < 1e-8 and f(good)[0] <= 0
    # the second row is feasible everywhere: it closes at the bottom of its bracket
    assert good[1] < -999.0


def test_bisect_host_arrays_match_the_scalar_loop_and_stop_at_tol():
    from dpjax.numerics import bisect_host

    targets = np.array([2.0, 3.0, 50.0])
    calls = []

    def holds(x):
        calls.append(1)
        return x * x >= targets, x * x

    good, aux, bad = bisect_host(holds, np.full(3, 100.0), np.full(3, 1.0), 80,
                                 good_aux=np.full(3, 1e4), geometric=True, tol=1e-10)
    assert np.all(good * good >= targets) and np.all(bad * bad < targets)
    np.testing.assert_array_equal(aux, good * good)  # the aux of the returned point
    assert np.all(good - bad <= 1e-10 * bad) and len(calls) < 80
    # without a tolerance, elementwise the same iterates as the scalar loop, bit for bit
    good, _, bad = bisect_host(lambda x: (x * x >= targets, None), np.full(3, 100.0),
                               np.full(3, 1.0), 30, geometric=True)
    for i, t in enumerate(targets):
        g, _, b = bisect_host(lambda x, t=t: (x * x >= t, None), 100.0, 1.0, 30, geometric=True)
        assert (g, b) == (good[i], bad[i])


def test_least_integer_host_against_a_linear_scan():
    from dpjax.numerics import least_integer_host

    for lo, hi, k in [(0, 100, 8), (0, 1, 0), (0, 1, 1), (5, 5, 5), (3, 1000, 999),
                      (3, 1000, 3), (3, 1000, 4)]:
        assert least_integer_host(lambda c, k=k: c >= k, lo, hi) == k


def test_bisect_host_arrays_keep_the_feasible_end():
    from dpjax.numerics import bisect_host

    roots = np.array([0.3, 2.0, 7.5])
    good, _, bad = bisect_host(lambda x: (x * x <= roots, None), np.zeros(3), np.full(3, 10.0),
                               60)
    assert np.all(good * good <= roots) and np.all(bad * bad > roots)
    np.testing.assert_allclose(good, np.sqrt(roots), rtol=1e-15, atol=2e-16 * 10)
