"""An independent reference for composed truncated Laplace: the loss law of one use built from
SciPy's Laplace CDF, rounded up and down onto a loss grid and self-convolved by NumPy's FFT.

No dpjax code: the masses are differences of ``scipy.stats.laplace.cdf`` over the sets of ``t``
where the loss ``L(t) = (|t - Delta| - |t|) / lambda`` lies in a grid bin (``+infinity`` where
``t - Delta < -A``), normalised by ``P(|T| <= A)``.  Rounding every loss up (down) gives an
upper (lower) bound on ``delta_T(epsilon)`` of the ``T``-fold composition.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats


def _pmf(scale, bound, shift, h, up):
    lap = scipy.stats.laplace(scale=scale)
    z = 1.0 - 2.0 * lap.sf(bound)

    def mass(a, b):  # P(a <= T < b), T ~ TL(scale, bound)
        a, b = np.maximum(a, -bound), np.minimum(b, bound)
        return np.where(b > a, (lap.cdf(b) - lap.cdf(a)) / z, 0.0)

    mu = shift / scale
    p_inf = float(mass(-bound, shift - bound))
    rnd = np.ceil if up else np.floor
    k_lo, k_hi = int(rnd(-mu / h)) - 1, int(rnd(mu / h)) + 1
    pmf = np.zeros(k_hi - k_lo + 1)
    pmf[int(rnd(mu / h)) - k_lo] += float(mass(shift - bound, 0.0))  # L = mu
    pmf[int(rnd(-mu / h)) - k_lo] += float(mass(shift, bound))  # L = -mu
    # middle: t in (max(0, shift - A), min(shift, A)), L = (shift - 2t) / scale in ((k-1)h, kh]
    k = np.arange(k_lo + 1, k_hi + 1)
    t_hi = (shift - (k - 1) * h * scale) / 2.0
    t_lo = (shift - k * h * scale) / 2.0
    lo_t, hi_t = max(0.0, shift - bound), min(shift, bound)
    m = mass(np.clip(t_lo, lo_t, hi_t), np.clip(t_hi, lo_t, hi_t))
    idx = (k if up else k - 1) - k_lo
    np.add.at(pmf, idx, m)
    return pmf, k_lo, p_inf


def composed_delta_bounds(epsilon, scale, bound, shift, uses, h):
    """``(lower, upper)`` bounds on ``delta(epsilon)`` of ``uses`` compositions of the pair
    ``(T, T - shift)``, ``T ~ TL(scale, bound)``, on a loss grid of spacing ``h``."""
    out = []
    for up in (False, True):
        pmf, k_lo, p_inf = _pmf(scale, bound, shift, h, up)
        n = uses * (pmf.size - 1) + 1
        size = 1 << (n - 1).bit_length()
        comp = np.fft.irfft(np.fft.rfft(pmf, size) ** uses, size)[:n]
        comp = np.maximum(comp, 0.0)
        losses = (uses * k_lo + np.arange(n)) * h
        sel = losses > epsilon
        finite = float(np.sum(comp[sel] * -np.expm1(epsilon - losses[sel])))
        out.append(finite - math.expm1(uses * math.log1p(-p_inf)))
    return out[0], out[1]


def two_use_delta(epsilon, scale, bound, shift, one_use_profile):
    r"""``delta(epsilon)`` of two uses, by one quadrature over the first use's ``t``.

    .. math:: \delta_2(\epsilon) = \mathbb{E}_{t_1}\big[H(\epsilon - L(t_1))\big],\qquad
              H(x) = \int [g(t) - e^x g(t - \Delta)]_+\,dt

    (``H = 1`` at ``L = +infinity``); ``H(x)`` is the one-use profile for ``x >= 0`` and
    ``1 - e^x + e^x H(-x)`` below (a symmetric pair).  ``one_use_profile(x)`` is the exact
    1-D profile at ``x >= 0`` (checked against mpmath quadrature on its own); the two-use
    composition here is independent of any PLD.  Masses from SciPy's Laplace CDF.
    """
    import scipy.integrate

    lap = scipy.stats.laplace(scale=scale)
    z = 1.0 - 2.0 * lap.sf(bound)

    def mass(a, b):
        a, b = max(a, -bound), min(b, bound)
        return (lap.cdf(b) - lap.cdf(a)) / z if b > a else 0.0

    def h(x):
        if x >= 0:
            return one_use_profile(x)
        return -math.expm1(x) + math.exp(x) * one_use_profile(-x)

    mu = shift / scale
    total = mass(-bound, shift - bound)  # L = +inf
    total += mass(shift - bound, 0.0) * h(epsilon - mu) + mass(shift, bound) * h(epsilon + mu)
    lo, hi = max(0.0, shift - bound), min(shift, bound)
    if hi > lo:
        def integrand(t):
            return lap.pdf(t) / z * h(epsilon - (shift - 2.0 * t) / scale)

        # kinks of the integrand: epsilon - L(t) in {0, +-mu, +-(2c - mu)}
        c = bound / scale
        kinks = [(shift - scale * (epsilon - x)) / 2.0 for x in (0.0, mu, -mu, 2 * c - mu)]
        pts = sorted(p for p in kinks if lo < p < hi)
        val, err = scipy.integrate.quad(integrand, lo, hi, points=pts or None, limit=400,
                                        epsabs=1e-16, epsrel=1e-12)
        total += val
    return total
