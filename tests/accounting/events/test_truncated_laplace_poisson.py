"""Poisson-sampled truncated Laplace under add/remove (bounded support: mass at loss
``+infinity`` in the remove direction).

References built here, independently of :mod:`dpjax.accounting.truncated_laplace`: one use by
mpmath quadrature of ``int [M - e^eps N]_+`` over the two densities; two uses by a loss law
tabulated on a fine output grid (each cell's mass integrated exactly, its loss at the cell's
ends), which brackets the true ``E[(1 - e^{eps - L1 - L2})_+]`` from both sides.
"""

import math

import mpmath as mp
import numpy as np
import pytest

import dpjax
from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.accounting.truncated_laplace import poisson_truncated_laplace_atoms

SETTINGS = [(1.0, 8.0, 0.1, 0.05), (0.5, 3.0, 0.3, 0.2), (2.0, 2.5, 0.5, 0.1)]


def _event(scale, bound):
    return ev.Noise("truncated-laplace", {"scale": scale, "bound": bound})


def _quad_delta(lam, bound, q, eps, direction):
    """One use, unit shift: remove ``(q P + (1 - q) Q, Q)``, add ``(Q, (1 - q) Q + q P)``
    with ``Q = TL(lam, A)``, ``P`` its shift by 1 (mpmath, 30 digits).

    The integrand ``[h]_+`` is smooth between the supports' ends and the two modes
    (``-A, 1 - A, 0, 1, A, A + 1``) except where ``h`` changes sign; there ``h`` is a sum of
    two exponentials, with at most one zero, found by bisection.  mpmath's quadrature then
    integrates smooth pieces only (to double precision: the same answer at 50 digits)."""
    mp.mp.dps = 30
    lam, a, q = mp.mpf(lam), mp.mpf(bound), mp.mpf(q)
    z = 2 * lam * (1 - mp.exp(-a / lam))

    def g(t):
        return mp.exp(-abs(t) / lam) / z if -a <= t <= a else mp.mpf(0)

    e = mp.exp(mp.mpf(eps))
    if direction == "remove":
        def h(t):
            return q * g(t - 1) + (1 - q) * g(t) - e * g(t)
    else:
        def h(t):
            return g(t) - e * ((1 - q) * g(t) + q * g(t - 1))

    knots = sorted({-a, 1 - a, mp.mpf(0), mp.mpf(1), a, a + 1})
    pts = list(knots)
    for u, v in zip(knots[:-1], knots[1:], strict=True):
        lo, hi = u + (v - u) * mp.mpf(10) ** -20, v - (v - u) * mp.mpf(10) ** -20
        if (h(lo) > 0) != (h(hi) > 0):  # the sign change inside (u, v)
            for _ in range(110):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if (h(mid) > 0) == (h(lo) > 0) else (lo, mid)
            pts.append((lo + hi) / 2)
    return float(mp.quad(lambda t: max(h(t), 0), sorted(pts)))


@pytest.mark.parametrize("lam,bound,q,eps", SETTINGS)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_use_is_a_tight_upper_bound_of_the_quadrature(lam, bound, q, eps, direction):
    acc = PLDAccountant(direction, 1e-4).compose(ev.PoissonSampled(q, _event(lam, bound)), 1)
    got, ref = acc.get_delta(eps), _quad_delta(lam, bound, q, eps, direction)
    assert ref <= got <= ref * (1 + 1e-4)


def _loss_table(lam, bound, q, direction, cells=200_000):
    """Per output cell: the first measure's mass and the loss at the cell's two ends (NumPy,
    the cell masses integrated exactly); ``+inf`` cells kept apart."""
    a = bound
    z = 2 * lam * -math.expm1(-a / lam)
    knots = [-a, 1 - a, 0.0, 1.0, a, a + 1]
    edges = np.unique(np.concatenate(
        [np.linspace(lo, hi, cells // 5 + 1) for lo, hi in zip(knots[:-1], knots[1:],
                                                               strict=True)
         if hi > lo]))
    left, right = edges[:-1], edges[1:]

    def cdf(t):  # TL(lam, a) distribution function, exact
        t = np.clip(t, -a, a)
        neg = (np.exp(t / lam) - math.exp(-a / lam)) * lam / z
        pos = 0.5 + (1 - np.exp(-t / lam)) * lam / z
        return np.where(t < 0, neg, pos)

    def mass(shift):
        return cdf(right - shift) - cdf(left - shift)

    mq, mp_ = mass(0.0), mass(1.0)

    def dens(t, shift):
        u = t - shift
        return np.where((u >= -a) & (u <= a), np.exp(-np.abs(u) / lam) / z, 0.0)

    with np.errstate(divide="ignore"):
        if direction == "remove":
            first = q * mp_ + (1 - q) * mq
            ends = [np.log((1 - q) + q * dens(t, 1.0) / dens(t, 0.0)) for t in (left, right)]
            infinite = (mq == 0) & (first > 0)
        else:
            first = mq
            ends = [-np.log((1 - q) + q * dens(t, 1.0) / dens(t, 0.0)) for t in (left, right)]
            infinite = np.zeros(first.shape, bool)
    lo, hi = np.minimum(*ends), np.maximum(*ends)
    live = (first > 0) & ~infinite
    return first[live], lo[live], hi[live], float(first[infinite].sum())


def _two_uses(p, loss, inf_mass, eps):
    """``E[(1 - e^{eps - L1 - L2})_+]`` over two independent uses, with ``+inf`` atoms."""
    order = np.argsort(loss)
    p, loss = p[order], loss[order]
    tail_p = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
    tail_w = np.concatenate([np.cumsum((p * np.exp(-loss))[::-1])[::-1], [0.0]])
    j = np.searchsorted(loss, eps - loss, side="right")
    finite = float(np.sum(p * (tail_p[j] - np.exp(eps - loss) * tail_w[j])))
    return finite + 1.0 - (1.0 - inf_mass) ** 2


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_two_uses_lie_in_an_independent_bracket(direction):
    lam, bound, q = 1.0, 6.0, 0.2
    p, lo, hi, inf_mass = _loss_table(lam, bound, q, direction)
    acc = PLDAccountant(direction, 1e-4).compose(ev.PoissonSampled(q, _event(lam, bound)), 2)
    for eps in (0.02, 0.1, 0.25):
        low, high = _two_uses(p, lo, inf_mass, eps), _two_uses(p, hi, inf_mass, eps)
        got = acc.get_delta(eps)
        assert low <= got <= high * (1 + 1e-3), (eps, low, got, high)


def test_atoms_keep_the_mass_and_put_the_truncation_at_infinity():
    lam, bound, q = 1.0, 5.0, 0.25
    p_inf = math.expm1(1.0) * math.exp(-5.0) / (2 * -math.expm1(-5.0))
    rl, rp = poisson_truncated_laplace_atoms(lam, bound, 1.0, q, "remove", 1e-3)
    al, ap = poisson_truncated_laplace_atoms(lam, bound, 1.0, q, "add", 1e-3)
    assert abs(rp.sum() - 1) < 1e-11 and abs(ap.sum() - 1) < 1e-11
    np.testing.assert_allclose(rp[np.isinf(rl)].sum(), q * p_inf, rtol=1e-12)
    assert np.all(np.isfinite(al)) and al.max() <= -math.log1p(-q) * (1 + 1e-12)
    assert rl[np.isfinite(rl)].min() >= math.log1p(-q) * (1 + 1e-12)
    with pytest.raises(ValueError, match="sampling_rate"):
        poisson_truncated_laplace_atoms(lam, bound, 1.0, 1.0, "add", 1e-3)


def test_replace_one_has_an_upper_end_only():
    """Accounted through the profiles (no worst pair known): certified upper end, no lower
    discretisation, so the bracket's lower end is the trivial 0."""
    event = ev.PoissonSampled(0.1, _event(1.0, 8.0))
    acc = PLDAccountant("replace_one", 1e-4).compose(event, 2)
    lower, upper = acc.bracket(1e-4)
    assert math.isfinite(upper) and upper == pytest.approx(acc.get_epsilon(1e-4), rel=1e-12)
    assert lower <= upper


@pytest.mark.parametrize("relation", ["add_remove", "remove", "add"])
def test_calibration_under_poisson_sampling_is_certified_and_least(relation):
    eps, delta, q, uses = 0.15, 1e-5, 0.2, 1  # eps < log(1 / (1 - q)): add needs noise
    cal = dpjax.calibrate("truncated-laplace", eps, delta, linf=1.0, sampling_rate=q,
                          compositions=uses, relation=relation)
    scale, bound = float(cal.params["scale"]), float(cal.params["bound"])
    assert float(cal.delta_at_params) <= delta
    leaf = ev.PoissonSampled(q, _event(scale, bound))
    acc = PLDAccountant(relation, 1e-4).compose(leaf, uses)
    assert acc.get_delta(eps) <= delta
    # the family's Laplace end is searched: never more variance than Laplace calibrated alike
    lap = dpjax.calibrate("laplace", eps, delta, linf=1.0, sampling_rate=q, compositions=uses,
                          relation=relation)
    assert float(cal.variance) <= float(lap.variance) * (1 + 1e-4)
    # 1% less noise at the same shape breaks the target
    smaller = ev.PoissonSampled(q, _event(0.99 * scale, 0.99 * bound))
    assert PLDAccountant(relation, 1e-4).compose(smaller, uses).get_delta(eps) > delta
