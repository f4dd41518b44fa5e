"""Certified Rényi moments of the noise families against mpmath quadrature of the definition."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from dpjax import noise
from dpjax.accounting.rdp.families import ORDERS, family_log_moments
from dpjax.accounting.rdp.laplace import laplace_log_moments

ALPHAS = (1.5, 2.0, 8.0, 64.0, 256.0)
_IDX = [int(np.flatnonzero(ORDERS == a)[0]) for a in ALPHAS]


def _fh_log_density(alpha_fh, gamma):
    """Unnormalised ``log p`` of ``FH(alpha, gamma^2)`` (eq. (7)), mpmath."""
    a, g2 = mp.mpf(alpha_fh), mp.mpf(gamma) ** 2

    def f(x):
        ax = abs(x)
        return -(a * ax if ax <= a else (x * x + a * a) / 2) / g2

    return f, [-alpha_fh, 0.0, alpha_fh]


def _osgt_log_density(vartheta, rho):
    """Unnormalised ``log p`` of ``O(vartheta, rho^2)``, mpmath."""
    t, r = mp.mpf(vartheta), mp.mpf(rho)
    return (lambda x: -((abs(x) + t) ** 2) / (2 * r * r)), [0.0]


def _log_quad(logf, points):
    """``log int e^{logf}`` by ``mp.quad`` split at ``points`` and at each piece's maximiser."""
    pts = sorted(set(points))
    edges = [-mp.inf] + [mp.mpf(p) for p in pts] + [mp.inf]
    split = []
    span = 10.0 + max(abs(p) for p in pts)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        a = float(lo) if lo != -mp.inf else float(hi) - 100 * span
        b = float(hi) if hi != mp.inf else float(lo) + 100 * span
        res = minimize_scalar(
            lambda x: -float(logf(mp.mpf(x))),
            bounds=(a, b),
            method="bounded",
            options={"xatol": 1e-12 * span},
        )
        split.append(mp.mpf(res.x))
    peak = max(logf(x) for x in split + [mp.mpf(p) for p in pts])
    nodes = sorted(set(edges + split), key=lambda v: (v != -mp.inf, v))
    total = mp.quad(lambda x: mp.exp(logf(x) - peak), nodes)
    return mp.log(total) + peak


def _reference(logp, points, delta, alpha):
    """``log int p^alpha p(. - Delta)^(1 - alpha)``, ``p`` normalised by quadrature too."""
    log_z = _log_quad(logp, points)
    al, d = mp.mpf(alpha), mp.mpf(delta)
    shifted = points + [p + delta for p in points]
    return _log_quad(lambda x: al * logp(x) + (1 - al) * logp(x - d), shifted) - log_z


CASES = [
    ("flipped-huber", {"alpha": 1.0, "gamma": 1.0}, 1.0),
    ("flipped-huber", {"alpha": 3.0, "gamma": 2.0}, 1.0),
    ("flipped-huber", {"alpha": 0.5, "gamma": 4.0}, 2.5),
    ("osgt", {"vartheta": 1.0, "rho": 1.0}, 1.0),
    ("osgt", {"vartheta": 5.0, "rho": 2.0}, 0.5),
]


@pytest.mark.parametrize(("name", "params", "delta"), CASES)
def test_quadratic_families_against_mpmath(name, params, delta):
    """Upper bound, within 1e-8 relative (1e-9 absolute) of 40-digit quadrature."""
    mp.mp.dps = 40
    if name == "flipped-huber":
        logp, pts = _fh_log_density(params["alpha"], params["gamma"])
    else:
        logp, pts = _osgt_log_density(params["vartheta"], params["rho"])
    _, got = family_log_moments(noise.make(name, **params), delta)
    for alpha, i in zip(ALPHAS, _IDX, strict=True):
        ref = _reference(logp, pts, delta, alpha)
        excess = float(mp.mpf(float(got[i])) - ref)
        assert excess >= 0.0, (alpha, excess)
        assert excess <= max(1e-8 * abs(float(ref)), 1e-9), (alpha, excess, float(ref))


def _piece_integral(phi, lo, hi):
    """``int_lo^hi e^{phi}`` for ``phi`` quadratic on ``(lo, hi)``, in closed form (erf, erfc,
    erfi): the coefficients from three points inside, so no quadrature is involved."""
    if lo == -mp.inf:
        xs = (hi - 3, hi - 2, hi - 1)
    elif hi == mp.inf:
        xs = (lo + 1, lo + 2, lo + 3)
    else:
        xs = tuple(lo + j * (hi - lo) / 4 for j in (1, 2, 3))
    y0, y1, y2 = (phi(x) for x in xs)
    h = xs[1] - xs[0]
    a2 = (y2 - 2 * y1 + y0) / (2 * h * h)
    a1 = (y2 - y0) / (2 * h) - 2 * a2 * xs[1]
    a0 = y1 - a2 * xs[1] ** 2 - a1 * xs[1]
    if abs(a2) < mp.mpf(10) ** -50:  # linear (both ends finite here)
        return (mp.exp(a0 + a1 * hi) - mp.exp(a0 + a1 * lo)) / a1
    v, top = -a1 / (2 * a2), a0 - a1 * a1 / (4 * a2)
    k = mp.sqrt(abs(a2))
    zl, zh = k * (lo - v), k * (hi - v)
    if a2 > 0:
        diff = mp.erfi(zh) - mp.erfi(zl)
    elif zl >= 0:
        diff = mp.erfc(zl) - mp.erfc(zh)
    elif zh <= 0:
        diff = mp.erfc(-zh) - mp.erfc(-zl)
    else:
        diff = mp.erf(zh) - mp.erf(zl)
    return mp.exp(top) * mp.sqrt(mp.pi) / (2 * k) * diff


def _closed_form_reference(f, points, delta, alpha):
    """``log A_alpha`` piece by piece in closed form (80 digits), ``p = e^{-f} / Z``."""
    mp.mp.dps = 80
    d, al = mp.mpf(delta), mp.mpf(alpha)
    pts = [mp.mpf(p) for p in points]

    def total(g, bps):
        edges = [-mp.inf] + sorted(set(bps)) + [mp.inf]
        return sum(
            _piece_integral(g, lo, hi)
            for lo, hi in zip(edges[:-1], edges[1:], strict=True)
            if hi > lo
        )

    num = total(lambda x: -al * f(x) + (al - 1) * f(x - d), pts + [p + d for p in pts])
    return mp.log(num) - mp.log(total(lambda x: -f(x), pts))


@pytest.mark.parametrize(
    ("name", "params", "delta"),
    [
        ("flipped-huber", {"alpha": 1.2642, "gamma": 0.4917}, 1.7733),
        ("flipped-huber", {"alpha": 0.0, "gamma": 0.5}, 3.0),
        ("osgt", {"vartheta": 15.8276, "rho": 0.6935}, 1.2663),
        ("osgt", {"vartheta": 1000.0, "rho": 1.0}, 1.0),
    ],
)
def test_high_orders_against_closed_form_pieces(name, params, delta):
    """Orders up to 1024 and offsets up to 1000 rho, where ``log A`` reaches 1e7 and a
    quadrature reference loses the peak: every piece of ``phi`` is quadratic, so it is
    integrated in closed form instead; upper bound, within 1e-8 relative."""
    if name == "flipped-huber":
        a, g2 = mp.mpf(params["alpha"]), mp.mpf(params["gamma"]) ** 2

        def f(x):
            return (a * abs(x) if abs(x) <= a else (x * x + a * a) / 2) / g2

        pts = [-params["alpha"], 0.0, params["alpha"]]
    else:
        t, r = mp.mpf(params["vartheta"]), mp.mpf(params["rho"])

        def f(x):
            return (abs(x) + t) ** 2 / (2 * r * r)

        pts = [0.0]
    _, got = family_log_moments(noise.make(name, **params), delta)
    for alpha in (1.1, 2.0, 64.0, 1024.0):
        i = int(np.flatnonzero(np.isclose(ORDERS, alpha))[0])
        ref = _closed_form_reference(f, pts, delta, ORDERS[i])
        excess = float(mp.mpf(float(got[i])) - ref)
        assert 0.0 <= excess <= max(1e-8 * abs(float(ref)), 1e-9), (alpha, excess, float(ref))


def _staircase_reference(decay, width, gamma, delta, alpha):
    """Direct sum over the pieces of ``[-N, N]`` (the rest is below ``1e-40`` relative)."""
    mp.mp.dps = 40
    e, g, al = mp.mpf(decay), mp.mpf(gamma), mp.mpf(alpha)
    d = mp.mpf(delta) / mp.mpf(width)
    b = mp.exp(-e)
    log_a = mp.log((1 - b) / (2 * (g + (1 - g) * b)))

    def level(y):
        y = abs(y)
        k = mp.floor(y)
        return k + (1 if y - k >= g else 0)

    n = int(100 / decay) + int(d) + 2
    pts = set()
    for s in (0, d):
        for m in range(-n - 2, n + 3):
            pts.update((s + m, s + m + g, s + m - g))
    xs = sorted(x for x in pts if -n <= x <= n)
    total = mp.mpf(0)
    for x0, x1 in zip(xs[:-1], xs[1:], strict=True):
        if x1 > x0:  # mp.quad of a constant over the piece
            mid = (x0 + x1) / 2
            total += (x1 - x0) * b ** (al * level(mid) + (1 - al) * level(mid - d))
    return log_a + mp.log(total)


@pytest.mark.parametrize(
    ("params", "delta"),
    [
        ({"decay": 1.0, "width": 1.0, "gamma": 0.3}, 1.0),
        ({"decay": 0.7, "width": 0.4, "gamma": 0.5}, 1.0),
        ({"decay": 2.0, "width": 3.0, "gamma": 0.0}, 1.0),
    ],
)
def test_staircase_against_direct_sum(params, delta):
    """Upper bound, within 1e-12 relative of the direct 40-digit sum over pieces."""
    _, got = family_log_moments(noise.make("staircase", **params), delta)
    for alpha, i in zip(ALPHAS, _IDX, strict=True):
        ref = _staircase_reference(params["decay"], params["width"], params["gamma"], delta, alpha)
        excess = float(mp.mpf(float(got[i])) - ref)
        assert 0.0 <= excess <= 1e-12 * max(abs(float(ref)), 1.0), (alpha, excess)


def test_flipped_huber_limits():
    """Gaussian end (alpha = 0) and Laplace end (b = 40: the tails hold e^{-1600})."""
    _, gauss = family_log_moments(noise.make("flipped-huber", alpha=0.0, gamma=2.0), 1.5)
    exact = ORDERS * (ORDERS - 1.0) * 1.5**2 / (2.0 * 4.0)
    assert np.all(gauss >= exact) and np.all(gauss - exact <= 1e-9 * exact)
    # FH(alpha, gamma^2) with gamma^2 / alpha = 1 is Laplace(1) in the centre |x| <= 1600
    _, lap_end = family_log_moments(noise.make("flipped-huber", alpha=1600.0, gamma=40.0), 1.0)
    lap = laplace_log_moments(1.0)[1]
    assert np.all(np.abs(lap_end - lap) <= 1e-9 * lap)
    # and the Gaussian / Laplace families themselves dispatch to their closed forms
    _, g2 = family_log_moments(noise.make("gaussian", sigma=2.0), 1.5)
    assert np.all(g2 >= exact) and np.all(g2 - exact <= 1e-14 * exact)
    assert np.array_equal(family_log_moments(noise.make("laplace", scale=1.0))[1], lap)


def test_truncated_laplace_is_infinite():
    lam, log_a = family_log_moments(noise.make("truncated-laplace", scale=1.0, bound=3.0))
    assert np.array_equal(lam, ORDERS - 1.0) and np.all(np.isinf(log_a) & (log_a > 0))


def test_invalid_input_and_unknown_family():
    fh = noise.make("flipped-huber", alpha=1.0, gamma=1.0)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="sensitivity"):
            family_log_moments(fh, bad)
    with pytest.raises(ValueError, match="gamma"):
        family_log_moments(noise.FlippedHuber(alpha=1.0, gamma=-1.0))
    with pytest.raises(ValueError, match="scalar"):
        family_log_moments(noise.FlippedHuber(alpha=np.ones(2), gamma=1.0))
    assert family_log_moments(object()) is None


def test_monotone_in_scale():
    """More noise, smaller moments (a sanity property of the certified values)."""
    small = family_log_moments(noise.make("osgt", vartheta=1.0, rho=1.0))[1]
    large = family_log_moments(noise.make("osgt", vartheta=2.0, rho=2.0))[1]
    assert np.all(large < small)
