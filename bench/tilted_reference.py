r"""An independent reference for composed subsampled-Gaussian epsilon at tiny delta (NumPy/SciPy).

No dpjax code: the privacy loss of one use of the Poisson-subsampled Gaussian (both
adjacencies) is put on the grid ``l = i h`` from exact normal CDFs in log space
(``scipy.special.log_ndtr``); each cell's mass goes to its upper end (``up``: a pessimistic
pmf), its lower end (``down``: optimistic) or half to each (``half``: the estimate, bias
``O(h^2)`` per use).  It is composed ``T`` times by an *exponentially tilted* NumPy FFT
(tilt ``lambda`` at the saddle point of the target, window of 24 tilted standard
deviations around the tilted mean ``T E_lambda[L]``), untilted in log space and the
hockey stick ``delta(eps) = sum_{l > eps} p(l) (1 - e^{eps - l}) (+ mass at infinity)``
inverted by bisection.  With ``q = 1`` it
is the ``T``-fold Gaussian, whose closed form validates it (``check()``).

    python bench/tilted_reference.py     # the q = 1 check against the closed form
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, logsumexp
from scipy.stats import norm

LAMBDAS = np.geomspace(1e-2, 1e2, 120)


def _log_sf_mix(x, sigma, q, shift):
    """log P(X > x) for X ~ (1 - q) N(0, s^2) + q N(shift, s^2) (q = 0: N(0, s^2))."""
    a = log_ndtr(-x / sigma)
    if q == 0.0:
        return a
    b = log_ndtr(-(x - shift) / sigma)
    if q == 1.0:
        return b
    return np.logaddexp(np.log1p(-q) + a, np.log(q) + b)


def _log_cdf_mix(x, sigma, q, shift):
    a = log_ndtr(x / sigma)
    if q == 0.0:
        return a
    b = log_ndtr((x - shift) / sigma)
    if q == 1.0:
        return b
    return np.logaddexp(np.log1p(-q) + a, np.log(q) + b)


def _log_diff(hi, lo):
    """log(e^hi - e^lo), hi >= lo."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return hi + np.log(-np.expm1(np.minimum(lo - hi, 0.0)))


def one_use(sigma, q, h, adjacency, span=16.0):
    """``(i0, log_pmf, log_inf)``: the one-use loss law on ``l = (i0 + j) h`` as cell masses
    ``log P(l_j < L <= l_{j+1})`` (cell ``j``), and the mass above the grid."""
    # x -> loss, monotone; x range: span sigma on each side
    xs = np.array([-span * sigma, 1.0 + span * sigma])
    if adjacency == "remove":  # P = mixture, Q = N(0, s^2): L(x) increasing
        loss = lambda x: np.logaddexp(np.log1p(-q), np.log(q) + (2 * x - 1) / (2 * sigma**2))  # noqa: E731
    else:  # P = N(0, s^2), Q = mixture: L(x) decreasing
        loss = lambda x: -np.logaddexp(np.log1p(-q), np.log(q) + (2 * x - 1) / (2 * sigma**2))  # noqa: E731
    if q == 1.0:
        loss = (lambda x: (2 * x - 1) / (2 * sigma**2)) if adjacency == "remove" else (  # noqa: E731
            lambda x: (1 - 2 * x) / (2 * sigma**2))
    lmin, lmax = np.sort(loss(xs))
    i0, i1 = int(np.floor(lmin / h)), int(np.ceil(lmax / h))
    edges = np.arange(i0, i1 + 1) * h

    def x_of(m):  # x with loss(x) = m (remove) / loss(x) = -m... via the increasing form
        with np.errstate(divide="ignore", invalid="ignore"):
            if q == 1.0:
                return sigma**2 * m + 0.5
            return sigma**2 * np.log((np.expm1(m) + q) / q) + 0.5

    if adjacency == "remove":
        x = x_of(edges)
        x = np.where(np.isnan(x), -np.inf, x)  # loss below log(1 - q): no x
        ls = _log_sf_mix(x, sigma, q, 1.0)  # P(L > l) = P(X > x(l))
        lc = _log_cdf_mix(x, sigma, q, 1.0)
    else:
        x = x_of(-edges)  # L > l  <=>  x < x(-l)
        x = np.where(np.isnan(x), -np.inf, x)  # loss above -log(1 - q): no x
        ls = log_ndtr(x / sigma)
        lc = log_ndtr(-x / sigma)
    # cell mass: differences on the side where they are small
    upper = ls < np.log(0.5)
    cell = np.where(upper[:-1], _log_diff(ls[:-1], ls[1:]), _log_diff(lc[1:], lc[:-1]))
    log_below = lc[0]
    cell[0] = np.logaddexp(cell[0], log_below)  # mass below the grid lumped on the bottom
    return i0, cell, ls[-1]


def _pmf(i0, cell, mode):
    """Cell masses placed on grid points (``up``, ``down`` or ``half``)."""
    n = cell.size
    out = np.full(n + 1, -np.inf)
    if mode == "up":
        out[1:] = cell
    elif mode == "down":
        out[:-1] = cell
    else:
        out[1:] = cell + np.log(0.5)
        out[:-1] = np.logaddexp(out[:-1], cell + np.log(0.5))
    return i0, out


def log_mgf(i0, log_p, h, lam):
    l = (i0 + np.arange(log_p.size)) * h
    keep = np.isfinite(log_p)
    return np.array([logsumexp(log_p[keep] + v * l[keep]) for v in lam])


def log_delta_curve(i0, log_p, log_inf, h, steps, lam):
    """``(lo, hi, log_delta)``: ``log delta(eps)`` of the composition for ``eps`` in ``[lo, hi]``
    (the middle of the tilted window), from the tilted FFT at ``lam``."""
    l = (i0 + np.arange(log_p.size)) * h
    a = log_p + lam * l
    c = logsumexp(a)
    w = np.exp(a - c)
    mean = np.sum(w * l)
    sd = np.sqrt(np.sum(w * (l - mean) ** 2))
    half = 12.0 * sd * np.sqrt(steps) + 50 * h
    n = 1 << int(np.ceil(np.log2(2 * half / h)))
    start = int(np.floor((steps * mean - half) / h))
    idx = (i0 + np.arange(log_p.size)) % n
    x = np.bincount(idx, weights=w, minlength=n)
    y = np.fft.irfft(np.fft.rfft(x) ** steps, n)
    pos = start + (np.arange(n) - start) % n  # absolute index in [start, start + n)
    order = np.argsort(pos)
    pos, y = pos[order], y[order]
    lk = pos * h
    with np.errstate(divide="ignore"):
        log_pk = np.where(y > 1e-290, np.log(np.maximum(y, 1e-300)), -np.inf) + steps * c - lam * lk
    log_inf_k = np.log(-np.expm1(steps * np.log1p(-np.exp(log_inf)))) if log_inf > -700 else -np.inf

    def log_delta(e):
        m = lk > e
        with np.errstate(divide="ignore"):
            terms = log_pk[m] + np.log(-np.expm1(e - lk[m]))
        return np.logaddexp(logsumexp(terms), log_inf_k)

    return lk[n // 8], lk[7 * n // 8], log_delta


def epsilon(sigma, q, steps, delta, h=5e-5, mode="half"):
    """Reference ``epsilon(delta)``: the worse adjacency (``q = 1``: one pair)."""
    res = []
    for adjacency in (("remove",) if q == 1.0 else ("remove", "add")):
        i0, cell, log_inf = one_use(sigma, q, h, adjacency)
        i0, log_p = _pmf(i0, cell, mode)
        if mode == "down":
            log_inf = -np.inf
        lm = steps * log_mgf(i0, log_p, h, LAMBDAS)
        log_c = LAMBDAS * np.log(LAMBDAS) - (1 + LAMBDAS) * np.log1p(LAMBDAS)
        lam = LAMBDAS[np.argmin((lm + log_c - np.log(delta)) / LAMBDAS)]
        lo, hi, log_delta = log_delta_curve(i0, log_p, log_inf, h, steps, lam)
        target = np.log(delta)
        if not log_delta(lo) > target >= log_delta(hi):
            res.append(np.nan)  # the crossing is outside the tilted window
            continue
        for _ in range(50):  # bisection: delta(eps) of the discrete pmf is continuous
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if log_delta(mid) > target else (lo, mid)
        res.append(0.5 * (lo + hi))
    return float(np.max(res))  # nan if either adjacency failed


def closed_form(sigma, steps, delta):
    """``epsilon(delta)`` of the T-fold Gaussian, mu = sqrt(T) / sigma (bisection)."""
    mu = np.sqrt(steps) / sigma

    def d(e):
        return norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2)

    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def check():
    """The reference at q = 1 against the closed form (deltas where float64 resolves it)."""
    for delta in (1e-5, 1e-8, 1e-10, 1e-12, 1e-15, 1e-30):
        print(delta, epsilon(2.0, 1.0, 100, delta), closed_form(2.0, 100, delta))


if __name__ == "__main__":
    check()
