"""Shape searches reach the limits of their families (issue 13, item 5), and say which won.

Reference: for each family an independent dense sweep over the shape -- its exact 1-D
profile written from the densities (``delta = F(x*) - e^eps F(x* - m)``, ``x*`` where the
log density ratio crosses ``eps``, survival functions in scipy), the least private scale
per shape by bisection, the variance in mpmath -- and the limit members in closed form
(Gaussian: scipy root of the Gaussian profile; Laplace: ``b = Delta / (eps - 2 log(1 -
delta))``; uniform: ``A = Delta / (2 delta)``).  The family's infimum is the least of
those; dpjax's certified variance must be within 0.1% of it (never below it by more than
the sweep's own resolution) and name the right member.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

import dpjax

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _gaussian_var(eps, delta, l2=1.0):
    def f(s):
        return (stats.norm.cdf(l2 / (2 * s) - eps * s / l2)
                - math.exp(eps) * stats.norm.cdf(-l2 / (2 * s) - eps * s / l2) - delta)
    return optimize.brentq(f, 1e-3, 1e5, xtol=1e-15, rtol=1e-15) ** 2


def _laplace_var(eps, delta, l1=1.0):
    return 2.0 * (l1 / (eps - 2.0 * math.log1p(-delta))) ** 2


# --- unit densities (scale 1) per family, vectorised over the shape: (log density up to a
# constant, survival t >= 0, variance of one shape) ---


def _fh(b):
    """Flipped Huber FH(b, 1): rho(x) = b|x| (|x| <= b), (x^2 + b^2) / 2 beyond."""
    b = np.asarray(b, float)
    bs = np.where(b > 0, b, 1.0)
    gauss = np.exp(-0.5 * b * b) * math.sqrt(2 * math.pi)
    half = np.where(b > 0, -np.expm1(-b * b) / bs, 0.0) + gauss * stats.norm.sf(b)

    def logf(x):
        a = np.abs(x)
        return -np.where(a <= b, b * a, 0.5 * (a * a + b * b))

    def sf(t):
        centre = np.where(b > 0, (np.exp(-b * np.minimum(t, b)) - np.exp(-b * b)) / bs, 0.0)
        return np.where(t <= b, centre + gauss * stats.norm.sf(b), gauss * stats.norm.sf(t)) / (
            2 * half)

    return logf, sf


def _fh_var(b):
    """Variance of FH(b, 1) by scipy quadrature (u = b x in the centre, x = b + y beyond)."""
    def both(n):
        inner = (integrate.quad(lambda u: u**n * math.exp(-u), 0, min(b * b, 800.0))[0]
                 / b ** (n + 1) if b > 0 else 0.0)
        outer = math.exp(-b * b) * integrate.quad(
            lambda y: (b + y) ** n * math.exp(-b * y - 0.5 * y * y), 0, np.inf)[0]
        return inner + outer

    return both(2) / both(0)


def _osgt(k):
    """OSGT O(k, 1): density ~ phi(|t| + k)."""
    k = np.asarray(k, float)

    def logf(x):
        return -0.5 * np.square(np.abs(x) + k)

    def sf(t):
        return 0.5 * np.exp(special.log_ndtr(-(k + t)) - special.log_ndtr(-k))

    return logf, sf


def _osgt_var(k):
    mpmath.mp.dps = 50
    kk = mpmath.mpf(k)
    return float(1 + kk**2 - kk * mpmath.npdf(kk) / mpmath.ncdf(-kk))


def _tl(c):
    """Truncated Laplace: density ~ e^{-|t|} on [-c, c]."""
    c = np.asarray(c, float)

    def logf(x):
        return np.where(np.abs(x) <= c, -np.abs(x), -np.inf)

    def sf(t):
        inside = (np.exp(-np.minimum(t, c)) - np.exp(-c)) / (2 * -np.expm1(-c))
        return np.where(t < c, inside, 0.0)

    return logf, sf


def _tl_var(c):
    mpmath.mp.dps = 40
    cc = mpmath.mpf(c)
    return float((2 - mpmath.exp(-cc) * (cc**2 + 2 * cc + 2)) / (1 - mpmath.exp(-cc)))


def _delta(logf, sf, eps, m):
    """Exact profile of symmetric log-concave unit noises shifted by m (vectorised)."""
    def cdf(y):
        return np.where(y <= 0, sf(np.abs(y)), 1.0 - sf(np.abs(y)))

    lo, hi = np.full_like(m, -1e4), np.full_like(m, 1e4)
    with np.errstate(all="ignore"):
        for _ in range(120):  # x*: the log ratio log f(x) - log f(x - m) crosses eps
            mid = 0.5 * (lo + hi)
            a, b = logf(mid), logf(mid - m)
            above = np.where(np.isneginf(b), ~np.isneginf(a) | (mid < 0.5 * m), a - b > eps)
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        x = 0.5 * (lo + hi)
        return np.maximum(cdf(x) - math.exp(eps) * cdf(x - m), 0.0)


FAMILIES = {
    "flipped-huber": (_fh, _fh_var),
    "osgt": (_osgt, _osgt_var),
    "truncated-laplace": (_tl, _tl_var),
}


def _least_variance(mech, shapes, eps, delta):
    """Per shape, the least variance scale^2 v(shape) with the profile <= delta."""
    family, var = FAMILIES[mech]
    logf, sf = family(shapes)
    lo, hi = np.full(shapes.shape, -40.0), np.full(shapes.shape, 40.0)  # log m
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = _delta(logf, sf, eps, np.exp(mid)) <= delta
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return np.exp(-2.0 * lo) * np.array([var(float(s)) for s in shapes])


def _sweep(mech, lo, hi, eps, delta):
    """Dense log sweep of the shape (and 0 for flipped Huber), zoomed twice."""
    shapes = np.geomspace(lo, hi, 41)
    if mech == "flipped-huber":
        shapes = np.concatenate([[0.0], shapes])
    best = np.inf
    for _ in range(3):
        v = _least_variance(mech, shapes, eps, delta)
        i = int(np.argmin(v))
        best = min(best, v[i])
        shapes = np.linspace(shapes[max(i - 1, 0)], shapes[min(i + 1, len(shapes) - 1)], 15)
    return best


CASES = [
    # mechanism, shape range of the sweep, eps, delta, the member that wins
    ("flipped-huber", (1e-2, 1e3), 0.3, 1e-6, "interior"),
    ("flipped-huber", (1e-2, 1e3), 20.0, 1e-10, "laplace"),
    ("flipped-huber", (1e-2, 1e3), 0.01, 0.3, "gaussian"),
    ("osgt", (1e-2, 1e3), 2.0, 0.3, "interior"),
    ("osgt", (1e-2, 1e3), 8.0, 1e-6, "laplace"),
    ("osgt", (1e-2, 1e3), 0.01, 0.3, "gaussian"),
    ("truncated-laplace", (1e-3, 60.0), 0.3, 1e-6, "interior"),
    ("truncated-laplace", (1e-3, 60.0), 20.0, 1e-10, "laplace"),
    ("truncated-laplace", (1e-3, 60.0), 0.0, 0.2, "uniform"),
]


@pytest.mark.parametrize("mech, rng, eps, delta, member", CASES)
def test_one_dim_search_reaches_the_family_infimum(mech, rng, eps, delta, member):
    limits = {"laplace": _laplace_var(eps, delta)}
    if mech == "truncated-laplace":
        limits["uniform"] = (1.0 / (2.0 * delta)) ** 2 / 3.0
    else:
        limits["gaussian"] = _gaussian_var(eps, delta)
    sweep = _sweep(mech, *rng, eps, delta)
    ref = min(sweep, *limits.values())
    cal = dpjax.calibrate(mech, epsilon=eps, delta=delta, linf=1.0)
    var = float(cal.variance)
    assert abs(var / ref - 1.0) < 1e-3, (var, ref, sweep, limits)
    assert str(cal.member) == member and cal.to_json()["member"] == member
    if member != "interior":  # the winning end is that limit member's own variance
        assert abs(var / limits[member] - 1.0) < 1e-3
        assert ref >= limits[member] * (1 - 1e-6)
    else:  # an interior shape beats both ends
        assert var < min(limits.values()) * (1 - 1e-6)


def _theorem8_var(b, eps, delta, k, l1, l2, linf):
    """Least gamma^2 v(b) meeting Theorem 8 of flipped-huber-mechanism (independent form)."""
    # omega = e^{b^2/2} int e^{-rho_b}; theta / gamma = Q^{-1}(sqrt(pi/2) / omega) (eq. (22))
    z = 2 * ((-math.expm1(-b * b) / b if b > 0 else 0.0)
             + math.exp(-0.5 * b * b) * math.sqrt(2 * math.pi) * stats.norm.sf(b))
    log_omega = 0.5 * b * b + math.log(z)
    theta = -special.ndtri_exp(0.5 * math.log(math.pi / 2) - log_omega) if b > 0 else 0.0

    def ok(log_g):
        g = math.exp(log_g)
        a = b * g
        r = a * a if a < linf else (2 * a - linf) * linf
        if k * r > 2 * g * g * eps - l2 * l2:
            return False
        shift = l2 / (2 * g) + k * r / (2 * g * l2)
        a1, a2 = g * eps / l2 - shift, g * eps / l2 + shift + theta * l1 / l2
        return stats.norm.sf(a1) - math.exp(eps) * stats.norm.sf(a2) <= delta

    lo, hi = -10.0, 30.0  # log gamma: not private at lo, private at hi
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return math.exp(2 * hi) * _fh_var(b)


@pytest.mark.parametrize(
    "k, eps, delta, member",
    [(10, 0.7, 1e-7, "laplace"), (20, 1.0, 1e-8, "gaussian"), (10, 2.1, 1e-6, "laplace")],
)
def test_theorem8_search_reaches_the_infimum(k, eps, delta, member):
    """Theorem 8 (linf = 1, l1 = K, l2 = sqrt K): at K = 10, eps = 0.7, delta = 1e-7 the bound
    keeps improving toward the Laplace end, whose pure-DP variance 2 (K / eps)^2 = 408.16 is
    the infimum (the sweep stays above it and reaches it within 0.1%).  The sweeps found no
    interior optimum of Theorem 8 (K = 1..20, eps = 0.1..5, delta = 1e-3..1e-8): an end
    wins, the Laplace one by 0.35% at the crossover K = 10, eps = 2.1, delta = 1e-6."""
    l1, l2 = float(k), math.sqrt(k)
    shapes = np.concatenate([[0.0], np.geomspace(1e-2, 1e5, 57)])
    sweep = np.array([_theorem8_var(b, eps, delta, k, l1, l2, 1.0) for b in shapes])
    limits = {"gaussian": _gaussian_var(eps, delta, l2), "laplace": 2 * (l1 / eps) ** 2}
    ref = min(sweep.min(), *limits.values())
    assert sweep.min() >= ref * (1 - 1e-9)  # no interior shape beats the winning end
    cal = dpjax.calibrate("flipped-huber", epsilon=eps, delta=delta, dim=k, linf=1.0,
                          condition="sufficient")
    var = float(cal.variance)
    assert abs(var / ref - 1.0) < 1e-3, (var, ref, sweep.min(), limits)
    assert str(cal.member) == member and abs(var / limits[member] - 1.0) < 1e-3
    if member == "laplace":
        assert sweep[-1] < limits["laplace"] * (1 + 1e-3)  # reached by large shapes
