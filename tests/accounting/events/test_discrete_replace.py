"""Poisson-sampled discrete noise under replace-one: the pair ``(1 - r) X + r (X + s)`` against
``(1 - r) X + r (X - s)`` (dp_accounting refuses ``REPLACE`` for its discrete classes).

References: exact sums over a materialised integer support built here from the pmfs
(not the closed-form half-lines of :mod:`dpjax.accounting.pld.finite_pairs`), and every pair
of integer contributions in ``[-s, s]`` for the claim that ``+-s`` is the worst pair.
"""

import math

import numpy as np
import pytest

import dpjax
from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.accounting.pld.finite_pairs import (
    discrete_gaussian_replace_pair,
    discrete_laplace_replace_pair,
)

K = np.arange(-3000, 3001, dtype=np.float64)
EPS = (0.0, 0.1, 0.4, 1.0)


def _dlap(a):
    return math.tanh(a / 2) * np.exp(-a * np.abs(K))


def _dgauss(sigma):
    w = np.exp(-K * K / (2 * sigma * sigma))
    return w / w.sum()


def _shifted(pmf, c):
    return np.interp(K - c, K, pmf, left=0.0, right=0.0)  # integer c: an exact shift


def _delta(p, q, e):
    return float(np.sum(np.maximum(p - math.exp(e) * q, 0.0)))


def _mixture_delta(pmf, r, a, b, e):
    base = (1 - r) * pmf
    return _delta(base + r * _shifted(pmf, a), base + r * _shifted(pmf, b), e)


@pytest.mark.parametrize("a,s,r", [(1.0, 1, 0.3), (0.2, 2, 0.7), (3.0, 3, 1.0), (0.05, 1, 0.01)])
def test_discrete_laplace_pair_is_the_exact_sum(a, s, r):
    p, q = discrete_laplace_replace_pair(a, s, r)
    assert abs(p.sum() - 1) < 1e-14 and abs(q.sum() - 1) < 1e-14
    for e in EPS:
        want = _mixture_delta(_dlap(a), r, s, -s, e)
        assert _delta(p, q, e) == pytest.approx(want, rel=1e-11, abs=1e-15)


@pytest.mark.parametrize("sigma,s,r", [(1.5, 1, 0.3), (0.6, 2, 0.9), (4.0, 1, 1.0)])
def test_discrete_gaussian_pair_is_the_exact_sum(sigma, s, r):
    p, q = discrete_gaussian_replace_pair(sigma, s, r)
    for e in EPS:
        want = _mixture_delta(_dgauss(sigma), r, s, -s, e)
        assert _delta(p, q, e) == pytest.approx(want, rel=1e-11, abs=1e-15)


@pytest.mark.parametrize("family,param", [("laplace", 0.1), ("laplace", 0.7), ("laplace", 3.0),
                                          ("gaussian", 0.5), ("gaussian", 1.2),
                                          ("gaussian", 3.0)])
def test_plus_and_minus_s_is_the_worst_pair_of_integer_contributions(family, param):
    # every (a, b) in [-s, s]^2: integer records move an integer query by integers
    pmf = _dlap(param) if family == "laplace" else _dgauss(param)
    for s in (1, 2, 3):
        for r in (0.05, 0.3, 0.9):
            for e in (0.0, 0.2, 0.6, 1.5):
                corner = _mixture_delta(pmf, r, s, -s, e)
                worst = max(_mixture_delta(pmf, r, a, b, e)
                            for a in range(-s, s + 1) for b in range(-s, s + 1))
                assert worst <= corner * (1 + 1e-12) + 1e-300, (s, r, e)


def test_accountant_takes_the_pair_and_its_plain_limit():
    acc = PLDAccountant("replace_one", 1e-4)
    acc.compose(ev.PoissonSampled(0.3, ev.DiscreteLaplace(1.0, 1)))
    p, q = discrete_laplace_replace_pair(1.0, 1, 0.3)
    for e in (0.0, 0.3, 0.5):
        exact = _delta(p, q, e)
        assert exact * (1 - 1e-12) <= acc.get_delta(e) <= exact + 0.3 * 1e-4 + 1e-12
    # r = 1 keeps every record: the un-sampled replace-one pair (a shift of 2 s)
    full = PLDAccountant("replace_one", 1e-4).compose(
        ev.PoissonSampled(1.0, ev.DiscreteGaussian(1.5, 1)))
    plain = PLDAccountant("replace_one", 1e-4).compose(ev.DiscreteGaussian(1.5, 1))
    for e in (0.0, 0.3):
        assert full.get_delta(e) == pytest.approx(plain.get_delta(e), rel=1e-9)


def test_calibration_under_replace_one_is_certified_and_minimal():
    kw = {"linf": 1, "sampling_rate": 0.2, "relation": "replace_one", "compositions": 3}
    cal = dpjax.calibrate("discrete-laplace", 0.5, 1e-6, **kw)
    a = float(cal.params["noise_parameter"])
    assert float(cal.delta_at_params) <= 1e-6
    both = dpjax.calibrate("discrete-laplace", 0.5, 1e-6, **{**kw, "relation": "add_remove"})
    assert a < float(both.params["noise_parameter"])  # more noise than add_remove
    event = ev.SelfComposed(ev.PoissonSampled(0.2, ev.DiscreteLaplace(a * 1.01, 1)), 3)
    assert PLDAccountant("replace_one", 1e-4).compose(event).get_delta(0.5) > 1e-6
