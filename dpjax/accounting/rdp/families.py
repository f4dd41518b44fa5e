r"""Exact Rényi moments of one use of every 1-D noise family (NumPy, host).

For noise of density ``p`` and sensitivity ``Delta`` (the shift), the order-``alpha`` moment

.. math:: A_\alpha = \int p(x)^\alpha\, p(x - \Delta)^{1 - \alpha}\,dx
          = e^{(\alpha - 1) D_\alpha(P \| Q)},\qquad \alpha > 1,

is bounded **from above** on :data:`~.rdp.laplace.ORDERS` (symmetric noise: one
direction is both).  Gaussian: ``alpha (alpha - 1) Delta^2 / (2 sigma^2)``; Laplace:
:func:`~.rdp.laplace.laplace_log_moments` (Mironov, "Rényi differential privacy", 2017,
Prop. 6).  The other families:

* **Flipped Huber** ``FH(a, gamma^2)`` (eqs. (7)-(9) of flipped-huber-mechanism) and **OSGT**
  ``O(vartheta, rho^2)`` (App. F(c) of flipped-huber-mechanism; Sadeghi & Korki,
  "Offset-symmetric Gaussians for differential privacy", 2022) share the form ``p = e^{-f}/Z``
  with ``f(x) = h|x|/s^2`` for ``|x| <= h`` and ``((|x| + o)^2 + c) / (2 s^2)`` beyond (FH:
  ``h = a, o = 0, c = a^2, s = gamma``, C^1 at ``|x| = h``; OSGT: ``h = 0, o = vartheta, c =
  0, s = rho``, a kink at 0).  With ``phi(x) = -alpha f(x) + (alpha - 1) f(x - Delta)``,
  ``A_alpha = Z^{-1} int e^{phi}``.  Between the breakpoints ``{-h, 0, h, Delta - h, Delta,
  Delta + h}``, ``phi`` is quadratic with ``phi'' in {0, -alpha, alpha - 1, -1} / s^2``;
  beyond them both ``f`` are Gaussian and

  .. math:: \int_{\Delta + h}^\infty e^{\phi} = e^{P}\, s\sqrt{2\pi}\,
            Q\Big(\frac{\Delta + h + o + (\alpha - 1)\Delta}{s}\Big),\qquad
            P = \frac{\alpha(\alpha - 1)\Delta^2 - c}{2 s^2},

  (left: ``Q((h + o - (alpha - 1) Delta) / s)``) by ``scipy.special.log_ndtr``.  On each
  finite piece, panels: ``phi`` is below its chord (convex) or its tangent at the panel's
  midpoint (concave), and ``int e^{linear}`` is exact (``w e^{c} sinh(x) / x``), so every
  panel sum is an **upper bound**, too large by at most ``|phi''| w^2 / 8`` relative; the
  panels are placed as in :mod:`.rdp.laplace` (a coarse pass, then ``k_i ~ (u_i w_i^2
  |phi''|)^{1/3}``) for a relative excess ``~1e-9``.  A float breakpoint off by ``eps``
  changes ``phi`` by ``<= |phi''| eps^2`` (``phi`` is C^1 there, or the breakpoint is exact),
  far below the pads.  ``Z``: FH's ``gamma Z(b)`` (:func:`~dpjax.noise.flipped_huber.standard.
  log_normaliser`), OSGT's ``2 rho sqrt(2 pi) Q(k)``, both padded **down** by their rounding.
* **Staircase** (Geng & Viswanath, "The optimal noise-adding mechanism in differential
  privacy", IEEE Trans. IT 62(2), 2016, eq. (11)): ``p = a b^{L(|x|)}`` with the level
  ``L(y) = floor(y) + 1[frac(y) >= gamma]`` (width units), so the integrand is ``a
  b^{alpha L(|x|) + (1 - alpha) L(|x - d|)}``, piecewise constant.  Left of 0 and right of
  ``d`` it repeats with ratio ``b`` per period, on ``[0, floor(d)]`` with ratio ``b^{2 alpha -
  1}``: the sum is three periods and a remainder (breakpoints and levels in exact rational
  arithmetic) times closed-form geometric series.
* **Truncated Laplace** (Geng, Ding, Guo & Kumar, "Tight analysis of privacy and utility
  tradeoff in approximate differential privacy", AISTATS 2020): supports ``[-A, A]`` and
  ``[Delta - A, Delta + A]`` differ, so ``p(x - Delta) = 0 < p(x)`` on a set of positive mass
  and ``D_alpha = +inf`` for every ``alpha > 1``: the moments are ``+inf`` (the RDP bound is
  vacuous; the PLD answer stands).

Every log-term is padded by its float64 rounding; the result is never below the exact value.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from dpjax.accounting.rdp.laplace import (
    MAX_PANELS,
    ORDERS,
    REL,
    laplace_log_moments,
    log_sinhc,
)
from dpjax.noise.flipped_huber.standard import log_normaliser
from dpjax.numerics import float64_kernel, log1mexp_host, logsumexp_host
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U
from dpjax.numerics.lazy_scipy import special

#: Coarse panels per finite piece (the first pass, which places the others).
_COARSE_PIECE = 64


class _Shape:
    """``f(x) = h|x|/s^2`` (``|x| <= h``), ``((|x| + o)^2 + c) / (2 s^2)`` beyond."""

    def __init__(self, h: float, o: float, c: float, s: float):
        self.h, self.o, self.c, self.s2 = h, o, c, s * s
        self.s = s

    def f(self, x):
        """``f(x)``."""
        ax = np.abs(x)
        quad = ((ax + self.o) ** 2 + self.c) / (2.0 * self.s2)
        return np.where(ax <= self.h, self.h * ax / self.s2, quad)

    def df(self, x):
        """``f'(x)`` (one-sided at a kink: the side of ``x``'s sign)."""
        ax = np.abs(x)
        return np.sign(x) * np.where(ax <= self.h, self.h, ax + self.o) / self.s2

    def d2f(self, x):
        """``f''(x)`` inside a piece."""
        return np.where(np.abs(x) <= self.h, 0.0, 1.0 / self.s2)


def _phi(shape: _Shape, x, alpha, delta: float):
    """``(phi(x), magnitude)`` with ``phi = -alpha f(x) + (alpha - 1) f(x - Delta)``."""
    f0, f1 = shape.f(x), shape.f(x - delta)
    # the rounding of f and of the argument x - Delta
    shift = (alpha - 1.0) * np.abs(shape.df(x - delta)) * (np.abs(x) + delta)
    return -alpha * f0 + (alpha - 1.0) * f1, alpha * f0 + (alpha - 1.0) * f1 + shift


def _dphi(shape: _Shape, x, alpha, delta: float):
    """``(phi'(x), magnitude)``."""
    g0, g1 = shape.df(x), shape.df(x - delta)
    return -alpha * g0 + (alpha - 1.0) * g1, alpha * np.abs(g0) + (alpha - 1.0) * np.abs(g1)


def _panels(shape: _Shape, alpha, kappa, t0, t1, delta: float):
    """``log`` of the chord (``kappa >= 0``) or midpoint-tangent (``kappa < 0``) bound on
    ``int_{t0}^{t1} e^{phi}``, padded by its rounding (module docstring)."""
    w = t1 - t0
    m = 0.5 * (t0 + t1)
    p0, mag0 = _phi(shape, t0, alpha, delta)
    p1, mag1 = _phi(shape, t1, alpha, delta)
    pm, magm = _phi(shape, m, alpha, delta)
    slope, mags = _dphi(shape, m, alpha, delta)
    convex = kappa >= 0.0
    centre = np.where(convex, 0.5 * (p0 + p1), pm)
    half = np.where(convex, 0.5 * (p1 - p0), 0.5 * slope * w)
    tm = np.maximum(np.abs(t0), np.abs(t1))
    mag = np.where(convex, np.maximum(mag0, mag1), magm + mags * w + tm * np.abs(slope))
    pad = 64.0 * _U * (mag + np.abs(half) + 1.0)
    with np.errstate(divide="ignore"):
        return np.log(w) + centre + log_sinhc(half) + pad


def _log_tails(shape: _Shape, alpha, delta: float):
    """``log`` of the exact integrals of ``e^{phi}`` beyond ``Delta + h`` and below ``-h``
    (module docstring), padded up."""
    s, o, c, h = shape.s, shape.o, shape.c, shape.h
    am1 = alpha - 1.0
    prefactor = (alpha * am1 * delta * delta - c) / (2.0 * shape.s2)
    base = prefactor + math.log(s) + HALF_LOG_2PI
    pad_p = 8.0 * _U * ((alpha * am1 * delta * delta + c) / (2.0 * shape.s2) + 1.0)
    out = []
    for z in ((delta + h + o + am1 * delta) / s, (h + o - am1 * delta) / s):
        v = special.log_ndtr(-z)
        zmag = (delta + h + o + am1 * delta) / s
        pad = pad_p + 64.0 * _U * (np.abs(v) + 1.0) + 8.0 * _U * zmag * (np.abs(z) + 1.0)
        out.append(base + v + pad)
    return out


def _quadratic_family(shape: _Shape, delta: float, log_z: float) -> np.ndarray:
    """Certified ``log A_alpha`` on :data:`ORDERS` of a flipped-Huber-like shape.

    ``log_z`` is a certified lower bound on ``log Z``."""
    h = shape.h
    edges = np.unique(np.array([-h, 0.0, h, delta - h, delta, delta + h]))
    edges = edges[(edges >= -h) & (edges <= delta + h)]
    alpha = ORDERS[:, None]
    tail_r, tail_l = _log_tails(shape, ORDERS, delta)
    if edges.size < 2:
        parts = np.stack([tail_r, tail_l], axis=1)
    else:
        # coarse pass: _COARSE_PIECE panels per piece
        nodes = np.concatenate(
            [
                np.clip(np.linspace(a, b, _COARSE_PIECE + 1)[:-1], a, b)
                for a, b in zip(edges[:-1], edges[1:], strict=True)
            ]
            + [edges[-1:]]
        )
        mids = 0.5 * (edges[:-1] + edges[1:])
        piece = np.searchsorted(edges, nodes[:-1], side="right") - 1
        kap_piece = -alpha * shape.d2f(mids) + (alpha - 1.0) * shape.d2f(mids - delta)
        kappa = kap_piece[:, piece]
        t0, t1 = nodes[:-1], nodes[1:]
        coarse = _panels(shape, alpha, kappa, t0, t1, delta)
        total = logsumexp_host(np.concatenate([coarse, tail_r[:, None], tail_l[:, None]], 1), 1)
        w = t1 - t0
        with np.errstate(divide="ignore"):
            lc = (coarse - total[:, None] + np.log(w * w * np.abs(kappa) / 8.0)) / 3.0
        cw = np.exp(lc)
        # relative excess of log A ~ REL: of A where log A >= 1, of log A down to 1e-2
        rel = REL * np.clip(total - log_z, 1e-2, 1.0)[:, None]
        k = np.ceil(cw * np.sqrt(np.sum(cw, axis=1, keepdims=True) / rel))
        k = k * np.minimum(1.0, MAX_PANELS / np.maximum(np.sum(k, axis=1, keepdims=True), 1.0))
        k = np.maximum(np.floor(k), 1.0).astype(np.int64)
        # fine pass, all orders at once (ragged): panel j of coarse panel i of order r
        kk = k.reshape(-1)
        first = np.repeat(np.cumsum(kk) - kk, kk)
        j = np.arange(first.size) - first
        rep = np.repeat
        c0, c1 = np.tile(t0, len(ORDERS)), np.tile(t1, len(ORDERS))
        step = rep((c1 - c0) / kk, kk)
        lo = np.minimum(rep(c0, kk) + step * j, rep(c1, kk))
        hi = np.where(
            j == rep(kk, kk) - 1, rep(c1, kk), np.minimum(rep(c0, kk) + step * (j + 1), rep(c1, kk))
        )
        order = rep(np.repeat(np.arange(len(ORDERS)), t0.size), kk)
        keep = hi > lo
        lo, hi, order = lo[keep], hi[keep], order[keep]
        fine = _panels(shape, ORDERS[order], rep(kappa.reshape(-1), kk)[keep], lo, hi, delta)
        starts = np.searchsorted(order, np.arange(len(ORDERS)))
        top = np.maximum.reduceat(fine, starts)
        sums = np.add.reduceat(np.exp(fine - top[order]), starts)
        count = np.diff(np.append(starts, order.size))
        inner = top + np.log(sums) + np.log1p(4.0 * (count + 16) * _U)
        parts = np.stack([inner, tail_r, tail_l], axis=1)
    log_int = logsumexp_host(parts, axis=1) + 8.0 * _U * 3
    return log_int - log_z + 8.0 * _U * (np.abs(log_int) + abs(log_z) + 1.0)


def _flipped_huber(a: float, gamma: float, delta: float) -> np.ndarray:
    """``FH(a, gamma^2)``: ``log Z = log gamma + log Z(b)`` (eq. (9)), padded down."""
    b = a / gamma
    log_zb = float(log_normaliser(np.float64(b)))
    log_z = math.log(gamma) + log_zb
    # its rounding, and that of b = a / gamma: |d log Z / db| = E min(|X|, b) <= min(b, Z/2)
    # (E|X| <= 1 / (2 p(0)) for symmetric log-concave X; p(0) = 1 / Z)
    sens = b * min(b, 0.5 * math.exp(min(log_zb, 700.0)))
    log_z -= 64.0 * _U * (abs(log_z) + abs(log_zb) + 2.0) + 4.0 * _U * sens
    return _quadratic_family(_Shape(a, 0.0, a * a, gamma), delta, log_z)


def _osgt(vartheta: float, rho: float, delta: float) -> np.ndarray:
    """``O(vartheta, rho^2)``: ``log Z = log(2 rho sqrt(2 pi) Q(k))``, padded down."""
    k = vartheta / rho
    lq = float(special.log_ndtr(-k))
    log_z = math.log(2.0 * rho) + HALF_LOG_2PI + lq
    # rounding of log Q and of k (|d log Q / dk| <= k + 1)
    log_z -= 64.0 * _U * (abs(log_z) + abs(lq) + 2.0) + 4.0 * _U * k * (k + 1.0)
    return _quadratic_family(_Shape(0.0, vartheta, 0.0, rho), delta, log_z)


def _level(y: Fraction, g: Fraction) -> int:
    """``L(|y|) = floor(|y|) + 1[frac(|y|) >= gamma]`` (exact)."""
    y = abs(y)
    k = math.floor(y)
    return k + (1 if y - k >= g else 0)


def _staircase_sum(lo: Fraction, hi: Fraction, d: Fraction, g: Fraction, decay: float):
    """``log`` of ``int_lo^hi b^{alpha L(|x|) + (1 - alpha) L(|x - d|)} dx`` on
    :data:`ORDERS` (exact pieces, padded up)."""
    cands = {lo, hi}
    for r in (Fraction(0), g, -g, d, d + g, d - g):
        m = math.ceil(lo - r)
        while r + m < hi:
            if r + m > lo:
                cands.add(r + m)
            m += 1
    xs = sorted(cands)
    lens, l1, l2 = [], [], []
    for x0, x1 in zip(xs[:-1], xs[1:], strict=True):
        mid = (x0 + x1) / 2
        lens.append(float(x1 - x0) * (1.0 + 2.0 * _U))
        l1.append(_level(mid, g))
        l2.append(_level(mid - d, g))
    lens, l1, l2 = np.array(lens), np.array(l1, float), np.array(l2, float)
    diff = ORDERS[:, None] * (l1 - l2)[None, :]
    expo = l2[None, :] + diff
    terms = np.log(lens)[None, :] - decay * expo
    pad = 8.0 * _U * (decay * (np.abs(diff) + np.abs(l2) + np.abs(expo)) + 1.0)
    return logsumexp_host(terms + pad, axis=1) + np.log1p(4.0 * (len(lens) + 4) * _U)


def _staircase(decay: float, width: float, gamma: float, delta: float) -> np.ndarray:
    """Staircase moments (module docstring), in width units with exact breakpoints."""
    g = Fraction(gamma)
    d = Fraction(delta) / Fraction(width)
    n = math.floor(d)
    rem = d - n
    b = math.exp(-decay)
    l1b = float(log1mexp_host(-decay))  # log(1 - b)
    log_a = l1b - LOG_2 - math.log(gamma + (1.0 - gamma) * b)
    log_a += 16.0 * _U * (abs(log_a) + decay + 2.0)
    zero = Fraction(0)
    parts = [
        _staircase_sum(Fraction(-1), zero, d, g, decay) - l1b,
        _staircase_sum(d, d + 1, d, g, decay) - l1b,
    ]
    ratio = (2.0 * ORDERS - 1.0) * decay  # -log r, r = b^{2 alpha - 1}
    if n >= 1:
        geo = log1mexp_host(-n * ratio) - log1mexp_host(-ratio)
        parts.append(_staircase_sum(zero, Fraction(1), d, g, decay) + geo)
    if rem > 0:
        parts.append(_staircase_sum(zero, rem, d, g, decay) - n * ratio)
    stacked = np.stack(parts, axis=1)
    pad = 16.0 * _U * (np.abs(stacked) + n * ratio[:, None] + 1.0)
    return log_a + logsumexp_host(stacked + pad, axis=1) + 8.0 * _U * (abs(log_a) + 4.0)


def _scalar(value, name: str, lo: float, lo_open: bool, hi: float = math.inf) -> float:
    """``float(value)``, or ``ValueError`` unless finite, scalar and in range."""
    arr = np.asarray(value, np.float64)
    if arr.size != 1:
        raise ValueError(f"family moments: {name} must be a scalar, got shape {arr.shape}")
    v = float(arr.reshape(()))
    if not (math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi):
        raise ValueError(
            f"family moments: {name} must be finite and {'>' if lo_open else '>='} "
            f"{lo}{'' if hi == math.inf else f' and <= {hi}'}, got {value!r}"
        )
    return v


@functools.lru_cache(maxsize=256)
def _cached(name: str, params: tuple, delta: float) -> np.ndarray:
    """Certified ``log A_alpha`` on :data:`ORDERS` (cached; module docstring)."""
    if name == "gaussian":
        out = ORDERS * (ORDERS - 1.0) * (delta * delta / (2.0 * params[0] ** 2)) * (1.0 + 8.0 * _U)
    elif name == "laplace":
        out = np.array(laplace_log_moments(params[0], None, delta)[1])
    elif name == "flipped-huber":
        out = _flipped_huber(*params, delta)
    elif name == "osgt":
        out = _osgt(*params, delta)
    elif name == "staircase":
        out = _staircase(*params, delta)
    else:  # truncated-laplace: disjoint supports
        out = np.full(len(ORDERS), np.inf)
    # fail closed: nan / -inf -> +inf; log A_alpha >= 0 (D_alpha >= 0) for alpha > 1
    out = np.where(np.isfinite(out), np.maximum(out, 0.0), np.inf)
    out.setflags(write=False)
    return out


#: ``name -> ((parameter, lower bound, open?, upper bound), ...)`` of the known families.
_PARAMS = {
    "gaussian": (("sigma", 0.0, True, math.inf),),
    "laplace": (("scale", 0.0, True, math.inf),),
    "flipped-huber": (("alpha", 0.0, False, math.inf), ("gamma", 0.0, True, math.inf)),
    "osgt": (("vartheta", 0.0, False, math.inf), ("rho", 0.0, True, math.inf)),
    "staircase": (
        ("decay", 0.0, True, math.inf),
        ("width", 0.0, True, math.inf),
        ("gamma", 0.0, False, 1.0),
    ),
    "truncated-laplace": (("scale", 0.0, True, math.inf), ("bound", 0.0, True, math.inf)),
}


@float64_kernel
def family_log_moments(noise, sensitivity=1.0):
    r"""Certified ``log A_alpha`` of one use of ``noise`` with shift ``Delta`` at :data:`ORDERS`.

    .. math:: \log A_\alpha = \log \int p(x)^\alpha\, p(x - \Delta)^{1 - \alpha}\,dx
              = (\alpha - 1)\, D_\alpha(P \| Q)

    (no subsampling): closed forms, certified panel quadrature or exact sums per family
    (module docstring); an upper bound, ``+inf`` for truncated Laplace (disjoint supports)
    and wherever a value is ``nan`` (fail closed).

    Args:
      noise: a :mod:`dpjax.noise` instance with scalar parameters (Gaussian, Laplace,
        flipped Huber, OSGT, staircase or truncated Laplace).
      sensitivity: the shift ``Delta > 0``.

    Returns:
      ``(lambdas, log_moments)``: ``lambdas = ORDERS - 1`` and ``log A`` on :data:`ORDERS`
      (NumPy), or ``None`` for a family not known here.

    Raises:
      ValueError: a parameter or the sensitivity is not finite, not scalar or out of range.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax import noise
      >>> lam, log_a = family_log_moments(noise.make("flipped-huber", alpha=0.0, gamma=2.0))
      >>> bool(0.0 <= log_a[0] - 2 * 1 / (2 * 4.0) < 1e-9)  # alpha = 2: Gaussian N(0, 4)
      True
    """
    name = getattr(noise, "name", None)
    if name not in _PARAMS:
        return None
    delta = _scalar(sensitivity, "sensitivity", 0.0, True)
    params = tuple(
        _scalar(getattr(noise, p), f"{name} {p}", lo, is_open, hi)
        for p, lo, is_open, hi in _PARAMS[name]
    )
    return ORDERS - 1.0, _cached(name, params, delta)
