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
