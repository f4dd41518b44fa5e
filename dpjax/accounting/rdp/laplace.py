r"""Exact Rényi moments of the (Poisson-subsampled) Laplace mechanism (NumPy, host).

For ``Lap(b)`` noise, sensitivity ``Delta`` and ``a = Delta / b``, the loss of the base pair
``(P0, Q0) = (Lap(0, b), Lap(Delta, b))`` is ``L0 = a`` left of ``0``, ``-a`` right of
``Delta`` and linear between.  With ``g(t) = 1 - q + q e^t`` and the change of variable
``t = -/+ L0`` on ``(0, Delta)``, the moments ``A_alpha = E_Q[(P/Q)^alpha] = E_P[e^{(alpha -
1) L}]`` of both dominating pairs of :mod:`.subsample` (Zhu, Dong & Wang 2022, Thm 11) are

.. math:: A(\beta) = \tfrac12\, g(-a)^\beta + \tfrac12 e^{-a} g(a)^\beta
          + \tfrac14 e^{-a/2} \int_{-a}^{a} e^{-t/2} g(t)^\beta\, dt,

with ``beta = alpha`` for remove (``P = q P0 + (1 - q) Q0``, ``Q = Q0``) and ``beta = 1 -
alpha`` for add (``P = P0``, ``Q = (1 - q) P0 + q Q0``).  At ``q = 1`` this is Mironov's
closed form (Rényi differential privacy, 2017, Prop. 6), the one dp_accounting's RDP
accountant uses,

.. math:: \log A_\alpha = (\alpha - 1) a + \mathrm{log1p}\Big(\frac{(\alpha - 1)
          (e^{-(2\alpha - 1) a} - 1)}{2\alpha - 1}\Big).

**Certified quadrature** (``q < 1``).  ``log g`` is convex (``(log g)'' = q (1 - q) e^t /
g^2 >= 0``), so the exponent ``phi(t) = -t/2 + beta log g(t)`` is convex for ``beta > 0``
and concave for ``beta < 0``.  On each panel, ``phi`` is then below its chord (convex) or
below its tangent at the panel's midpoint (concave), and the integral of ``e^{linear}`` is
exact: ``w e^{c} sinh(x) / x``.  Every panel sum is therefore an **upper bound** on the
integral, too large by at most ``|beta| w^2 / 32`` relative (``|phi''| <= |beta| / 4``);
the panel width makes that ``<= 1e-9`` up to :data:`MAX_PANELS` panels (beyond, still an
upper bound, looser).  Each log-term is padded by its float64 rounding.  The reported
moment is the **maximum over the two directions** (an adjacency-free upper bound).

Orders: :data:`ORDERS` = the integer and fractional orders of :mod:`.subsampled_gaussian`
(a superset of dp_accounting's defaults); :func:`laplace_rdp_epsilon` converts ``T`` uses by
:func:`.subsampled_gaussian.rdp_epsilon` (Canonne, Kamath & Steinke 2020).  dp_accounting's RDP
accountant has no Poisson-subsampled Laplace (``UnsupportedEventError``); without
subsampling these are its moments, on more orders.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpjax.accounting.rdp.subsampled_gaussian import (
    FRACTIONAL_ORDERS,
    RDP_ORDERS,
    rdp_epsilon,
    rdp_log_delta,
)
from dpjax.numerics import bisect_host, float64_kernel, logsumexp_host
from dpjax.numerics.constants import LOG_2
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

#: Rényi orders ``alpha`` of :func:`laplace_log_moments`: integers then fractional ones.
ORDERS = np.concatenate([RDP_ORDERS, FRACTIONAL_ORDERS])
#: Target relative excess of the panel bounds (``|phi''| w^2 / 8`` per panel).
REL = 1e-9
#: Most panels per order (a larger ``a = Delta / b`` gets wider panels: looser, still certified).
MAX_PANELS = 2**17
#: Panels of the first pass, which places the others.
_COARSE = 512


def _log_g(t, lq: float, l1q: float):
    """``log(1 - q + q e^t)``."""
    return np.logaddexp(l1q, lq + t)


def log_sinhc(x, lower: bool = False):
    """``log(sinh(x) / x)`` (even; near 0 ``x^2 / 6``, an upper bound, or with ``lower`` its
    lower bound ``0``)."""
    ax = np.abs(x)
    small = ax < 1e-4
    safe = np.where(small, 1.0, ax)
    big = safe - LOG_2 + np.log1p(-np.exp(-2.0 * safe)) - np.log(safe)
    return np.where(small, 0.0 if lower else ax * ax / 6.0, big)


def _panel_bounds(t, beta, lq: float, l1q: float, lower: bool = False):
    """``log`` of the chord (``beta > 0``) or midpoint-tangent (``beta < 0``) upper bound on
    ``int e^{phi}`` over each panel between consecutive nodes ``t`` (last axis), padded up by
    its rounding (module docstring); with ``lower``, the other line (below ``phi``) and the
    pad taken off: a lower bound.  ``beta`` broadcasts against ``t``'s leading axes."""
    t0, t1 = t[..., :-1], t[..., 1:]
    w = t1 - t0
    if np.all(beta > 0) != lower:  # the chord through the nodes (above a convex phi)
        lg = _log_g(t, lq, l1q)
        phi = -t / 2.0 + beta * lg
        centre, x = (phi[..., :-1] + phi[..., 1:]) / 2.0, (phi[..., 1:] - phi[..., :-1]) / 2.0
        lg_mag = np.maximum(np.abs(lg[..., :-1]), np.abs(lg[..., 1:]))
    else:  # the tangent at the midpoint (above a concave phi)
        m = (t0 + t1) / 2.0
        lg = _log_g(m, lq, l1q)
        centre = -m / 2.0 + beta * lg
        x = (-0.5 + beta * np.exp(lq + m - lg)) * w / 2.0  # phi'(m) w / 2
        lg_mag = np.abs(lg) + 1.0
    tm = np.maximum(np.abs(t0), np.abs(t1))
    mag = tm + np.abs(beta) * (lg_mag + abs(lq) + abs(l1q) + tm) * (1.0 + np.abs(w))
    # rounding: of phi (and its slope), of the sinhc, of the node spacing
    pad = 64.0 * _U * (mag + np.abs(x) + 1.0) + 16.0 * _U * tm / w
    return np.log(w) + centre + log_sinhc(x, lower) + (-pad if lower else pad)


def _coarse_panels(a: float, betas: np.ndarray, lq: float, l1q: float, lower: bool = False):
    """The :data:`_COARSE` equal panels on ``[-a, a]``: ``(nodes, log panel bounds)``, one
    row of bounds per ``beta`` (upper, or with ``lower`` lower: :func:`_panel_bounds`)."""
    nodes = np.linspace(-a, a, _COARSE + 1)
    grid = np.broadcast_to(nodes, (len(betas), nodes.size))
    return nodes, _panel_bounds(grid, betas[:, None], lq, l1q, lower)


def _sum_pad(count: int) -> float:
    """``log`` of the relative rounding of a ``logsumexp`` over ``count`` panel bounds."""
    return math.log1p(4.0 * (count + 16) * _U)


def _log_integrals_lower(a: float, betas: np.ndarray, lq: float, l1q: float) -> np.ndarray:
    r"""``log`` of lower bounds on ``int_{-a}^{a} e^{-t/2} g(t)^beta dt``, one per ``beta``
    (all of one sign): the :data:`_COARSE` panels alone, with the line below ``phi`` on each
    (the midpoint tangent of a convex ``phi``, the chord of a concave one), so below by at
    most ``|beta| w^2 / 32`` relative, ``w = 2 a / 512`` (``|phi''| <= |beta| / 4``)."""
    nodes, low = _coarse_panels(a, betas, lq, l1q, lower=True)
    return logsumexp_host(low, axis=1) - _sum_pad(nodes.size)


def _log_integrals(a: float, betas: np.ndarray, lq: float, l1q: float) -> np.ndarray:
    r"""``log`` of upper bounds on ``int_{-a}^{a} e^{-t/2} g(t)^beta dt``, one per ``beta``
    (all of one sign).

    Any panels give an upper bound; they are placed so that the bound's excess is about
    ``REL`` relative: a coarse pass of :data:`_COARSE` panels, then coarse panel ``i`` is
    split into ``k_i ~ (u_i w_i^2 |beta| kappa_i / 8 U)^{1/3} S`` pieces (``u_i`` its bound,
    ``U`` their sum, ``|beta| kappa_i`` the panel's bound on ``|phi''|``; the split that
    minimises the count for the excess ``sum u_i |beta| kappa_i (w_i / k_i)^2 / 8 <= REL
    U``), at most :data:`MAX_PANELS` in all per order."""
    nodes, coarse = _coarse_panels(a, betas, lq, l1q)
    b = betas[:, None]
    w = np.diff(nodes)
    rel = coarse - logsumexp_host(coarse, axis=1, keepdims=True)
    # |phi''| <= |beta| kappa on a panel: kappa = q (1 - q) e^t / g(t)^2 at the t nearest
    # to its peak log((1 - q) / q) (value 1/4)
    tc = np.clip(l1q - lq, nodes[:-1], nodes[1:])
    kappa = np.exp(lq + l1q + tc - 2.0 * _log_g(tc, lq, l1q))
    c = np.exp((rel + np.log(w * w * kappa)[None, :] + np.log(np.abs(b) / 8.0)) / 3.0)
    k = np.ceil(c * np.sqrt(np.sum(c, axis=1, keepdims=True) / REL))
    total = np.sum(k, axis=1, keepdims=True)
    k = np.maximum(np.floor(k * np.minimum(1.0, MAX_PANELS / total)), 1.0).astype(np.int64)
    out = np.empty(len(betas))
    for r, beta in enumerate(betas):
        first = np.repeat(np.cumsum(k[r]) - k[r], k[r])
        j = np.arange(first.size) - first
        t = np.append(np.repeat(nodes[:-1], k[r]) + np.repeat(w / k[r], k[r]) * j, a)
        out[r] = logsumexp_host(_panel_bounds(t, beta, lq, l1q)) + _sum_pad(t.size)
    return out


def _log_moments(a: float, q: float, betas: np.ndarray, lower: bool = False) -> np.ndarray:
    """Certified ``log A(beta)`` of the subsampled pair (module docstring), ``q < 1``: an
    upper bound (the refined panels), or with ``lower`` a lower bound (the coarse ones)."""
    lq, l1q = math.log(q), math.log1p(-q)
    integrals = (_log_integrals_lower if lower else _log_integrals)(a, betas, lq, l1q)
    parts = np.stack(
        [
            -LOG_2 + betas * float(_log_g(-a, lq, l1q)),
            -LOG_2 - a + betas * float(_log_g(a, lq, l1q)),
            -math.log(4.0) - a / 2.0 + integrals,
        ]
    )
    mag = np.abs(parts) + np.abs(betas) * (abs(lq) + abs(l1q) + a) + a
    sign = -1.0 if lower else 1.0
    return (logsumexp_host(parts + sign * 64.0 * _U * mag, axis=0)
            + sign * 8.0 * _U * (1.0 + np.max(mag, axis=0)))


def _closed_form(a: float, alpha: np.ndarray, lower: bool = False) -> np.ndarray:
    """Mironov's ``log A_alpha`` of ``Lap(b)`` at ``a = Delta / b`` (``q = 1``), padded up (or
    with ``lower`` down) by its rounding."""
    inner = (alpha - 1.0) * np.expm1(-(2.0 * alpha - 1.0) * a) / (2.0 * alpha - 1.0)
    out = (alpha - 1.0) * a + np.log1p(inner)
    pad = 64.0 * _U * ((alpha - 1.0) * a + np.abs(np.log1p(inner)) + 1.0)
    return out - pad if lower else out + pad


@functools.lru_cache(maxsize=256)
def _cached(a: float, q: float, lower: bool = False) -> np.ndarray:
    """Certified ``max(log A_remove, log A_add)`` on :data:`ORDERS` (cached): upper bounds,
    or with ``lower`` lower bounds, at least ``0`` (``D_alpha >= 0``)."""
    if q >= 1.0:
        out = _closed_form(a, ORDERS, lower)
    else:
        out = np.maximum(_log_moments(a, q, ORDERS, lower),
                         _log_moments(a, q, 1.0 - ORDERS, lower))
    if lower:
        out = np.maximum(out, 0.0)
    out.setflags(write=False)
    return out


def _moments(scale, sampling_rate, sensitivity, lower: bool):
    """``(ORDERS - 1, log A)`` of :func:`laplace_log_moments` (``lower``: of
    :func:`laplace_log_moments_lower`), the arguments checked."""
    q = 1.0 if sampling_rate is None else float(sampling_rate)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1], got {sampling_rate!r}")
    a = float(sensitivity) / np.asarray(scale, np.float64)
    if np.any(~(a > 0)) or np.any(~np.isfinite(a)):
        raise ValueError("laplace moments: need scale > 0 and sensitivity > 0, finite")
    flat = [_cached(float(x), q, lower) for x in a.reshape(-1)]
    return ORDERS - 1.0, np.stack(flat).reshape(a.shape + (len(ORDERS),))


@float64_kernel
def laplace_log_moments(scale, sampling_rate=None, sensitivity=1.0):
    r"""Certified log-moments of one (Poisson-subsampled) Laplace use at :data:`ORDERS`.

    .. math:: \log A_\alpha = \max\big(\log A(\alpha),\ \log A(1 - \alpha)\big)
              \ \ge\ (\alpha - 1) D_\alpha(P \| Q)

    ``A(beta)`` as in the module docstring: Mironov's closed form without subsampling
    (``sampling_rate`` ``None`` or 1), else the certified panel quadrature of both
    directions (Zhu, Dong & Wang 2022, Thm 11).

    Args:
      scale: Laplace scale(s) ``b > 0`` (any shape ``S``).
      sampling_rate: Poisson rate ``q`` in ``(0, 1]``, or ``None`` (no subsampling).
      sensitivity: ``Delta > 0`` (the shift of one use).

    Returns:
      ``(lambdas, log_moments)``: ``lambdas = ORDERS - 1`` and an array of shape
      ``S + (len(ORDERS),)`` (NumPy).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> lam, log_a = laplace_log_moments(1.0)  # alpha = 2: log(2/3 e + 1/3 e^-2)
      >>> bool(abs(log_a[0] - math.log(2 / 3 * math.e + math.exp(-2) / 3)) < 1e-13)
      True
    """
    return _moments(scale, sampling_rate, sensitivity, lower=False)


@float64_kernel
def laplace_log_moments_lower(scale, sampling_rate=None, sensitivity=1.0):
    r"""Certified *lower* bounds on the log-moments of :func:`laplace_log_moments` (cheap).

    .. math:: \max\big(0,\ \underline{\log A}(\alpha),\ \underline{\log A}(1 - \alpha)\big)
              \ \le\ \max\big(\log A(\alpha),\ \log A(1 - \alpha)\big)

    With subsampling, the integral of the module docstring on the 512 coarse panels alone,
    each bounded below by the line under ``phi`` (the midpoint tangent where ``phi`` is
    convex, the chord where it is concave) and padded down by its rounding: far fewer
    panels than the upper bound, below the exact integral by at most ``|beta| w^2 / 32``
    relative (``w = 2 a / 512``).  Without subsampling, Mironov's closed form padded down.
    A search uses them to skip the exact moments where even these miss its target
    (:func:`~dpjax.accounting.rdp.ledger.ledger_rdp_delta_exceeds`).

    Args:
      scale, sampling_rate, sensitivity: as in :func:`laplace_log_moments`.

    Returns:
      ``(lambdas, log_moments)`` as :func:`laplace_log_moments`, each entry at most the
      upper bound there.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> low, up = laplace_log_moments_lower(0.5, 0.2)[1], laplace_log_moments(0.5, 0.2)[1]
      >>> bool(np.all(low <= up)), bool(np.all(up - low <= 1e-2 * (1.0 + up)))
      (True, True)
    """
    return _moments(scale, sampling_rate, sensitivity, lower=True)


@float64_kernel
def laplace_rdp_epsilon(scale, sampling_rate, compositions, delta, sensitivity=1.0):
    r"""Certified RDP epsilon of ``T`` (Poisson-subsampled) Laplace uses at ``delta`` (NumPy).

    .. math:: \epsilon = \min_\alpha \frac{T \log A_\alpha + \log c(\alpha - 1)
              - \log\delta}{\alpha - 1}

    on the moments of :func:`laplace_log_moments` (:func:`.subsampled_gaussian.rdp_epsilon`;
    Canonne, Kamath & Steinke 2020).  Without subsampling never above dp_accounting's RDP accountant
    (the same moments on a superset of its orders), up to rounding pads.

    Args:
      scale: ``b > 0`` (one scale or an array).
      sampling_rate: ``q`` in ``(0, 1]`` or ``None``.
      compositions: ``T >= 1``.
      delta: target ``delta`` in ``(0, 1)``.
      sensitivity: ``Delta``.

    Returns:
      ``epsilon`` (a float for scalar input).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(laplace_rdp_epsilon(10.0, None, 100, 1e-5), 4)  # dp_accounting RDP: 4.5327
      4.5327
    """
    lam, log_a = laplace_log_moments(scale, sampling_rate, sensitivity)
    return rdp_epsilon(lam, float(compositions) * log_a, delta)


@float64_kernel
def laplace_rdp_log_delta(scale, sampling_rate, compositions, epsilon, sensitivity=1.0):
    """Certified ``log delta(epsilon)`` of ``T`` (Poisson-subsampled) Laplace uses (NumPy).

    :func:`.subsampled_gaussian.gaussian_rdp_log_delta` with the moments of
    :func:`laplace_log_moments` (the arguments of :func:`laplace_rdp_epsilon`, and
    ``epsilon >= 0``): the RDP conversion :func:`.subsampled_gaussian.rdp_log_delta` of
    ``T`` times them, a NumPy array of ``log delta``.
    """
    lam, log_a = laplace_log_moments(scale, sampling_rate, sensitivity)
    return rdp_log_delta(lam, float(compositions) * log_a, epsilon)


#: Relative margin by which an RDP bound from the cheap *lower* moments must exceed an
#: answer before the certified (upper) moments are skipped: the two conversions round
#: apart by a few ulps (about 1e-14 relative), far below it.
SKIP_MARGIN = 1e-9


def _unless_beaten(answer, lower_bound, upper_bound):
    """``np.minimum(answer, upper_bound())``, where ``lower_bound()`` is at most
    ``upper_bound()`` entry by entry: when every entry of ``answer`` is below the lower
    bound by :data:`SKIP_MARGIN` relative, the upper bound cannot win the minimum and is
    not computed (the same doubles; a NaN in ``answer`` compares false and computes it)."""
    answer = np.asarray(answer, np.float64)
    low = np.asarray(lower_bound(), np.float64)
    with np.errstate(invalid="ignore"):
        beaten = low > answer + SKIP_MARGIN * np.abs(answer)
    if np.all(beaten):
        return np.minimum(answer, np.full(low.shape, np.inf))
    return np.minimum(answer, upper_bound())


def _least_with_rdp(answer, convert, args):
    """:func:`_unless_beaten` of ``answer`` and the RDP bound ``convert(lambdas, T log A,
    target)``, ``args = (scale, sampling_rate, T, target, sensitivity)``: on the lower
    moments first, on the certified ones where those do not decide."""
    scale, sampling_rate, compositions, target, sensitivity = args

    def bound(moments):
        def at():
            lam, log_a = moments(scale, sampling_rate, sensitivity)
            return convert(lam, float(compositions) * log_a, target)

        return at

    return _unless_beaten(answer, bound(laplace_log_moments_lower), bound(laplace_log_moments))


@float64_kernel
def least_with_laplace_rdp_epsilon(
    epsilon, scale, sampling_rate, compositions, delta, sensitivity=1.0
):
    r"""``min(epsilon, laplace_rdp_epsilon(...))``: a certified answer tightened by the RDP
    bound, the certified moments computed only where that bound can win.

    .. math:: \min\big(\epsilon,\ \epsilon_{RDP}(\log A)\big) = \epsilon
              \quad\text{if}\quad \epsilon_{RDP}(\underline{\log A}) > \epsilon\,
              (1 + 10^{-9})

    (``epsilon_RDP``, :func:`.subsampled_gaussian.rdp_epsilon`, the conversion of Canonne,
    Kamath & Steinke 2020, is increasing in the moments, and
    :func:`laplace_log_moments_lower` is below :func:`laplace_log_moments`, both of the
    pairs of Zhu, Dong & Wang 2022, Thm 11).
    With subsampling the certified moments take millions of quadrature panels, the lower
    ones 512 per order; a PLD answer is usually well below the RDP bound, and then the
    lower ones decide.  The same doubles as ``np.minimum(epsilon, laplace_rdp_epsilon(scale,
    sampling_rate, compositions, delta, sensitivity))``.

    Args:
      epsilon: a certified epsilon at ``delta`` (array; a NaN entry computes the RDP bound).
      scale, sampling_rate, compositions, delta, sensitivity: as in
        :func:`laplace_rdp_epsilon`.

    Returns:
      The least of the two, a NumPy array (the broadcast shape).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> float(least_with_laplace_rdp_epsilon(4.6622, 1.0, 0.1, 100, 1e-6))  # RDP: 5.0012
      4.6622
    """
    return _least_with_rdp(
        epsilon, rdp_epsilon, (scale, sampling_rate, compositions, delta, sensitivity))


def _rdp_delta(lam, total, epsilon):
    """``exp(min(log delta_RDP, 0))``: :func:`.subsampled_gaussian.rdp_log_delta` as a
    ``delta`` (increasing in ``total``)."""
    return np.exp(np.minimum(rdp_log_delta(lam, total, epsilon), 0.0))


@float64_kernel
def least_with_laplace_rdp_delta(
    delta, scale, sampling_rate, compositions, epsilon, sensitivity=1.0
):
    r"""``min(delta, exp(min(laplace_rdp_log_delta(...), 0)))``: a certified ``delta``
    tightened by the RDP bound, the certified moments computed only where that bound can
    win (as :func:`least_with_laplace_rdp_epsilon`; ``log delta_RDP`` is increasing in the
    moments).

    .. math:: \min\big(\delta,\ \delta_{RDP}(\log A)\big) = \delta
              \quad\text{if}\quad \delta_{RDP}(\underline{\log A}) > \delta\,(1 + 10^{-9})

    Args:
      delta: a certified ``delta`` at ``epsilon`` (array; a NaN entry computes the RDP
        bound).
      scale, sampling_rate, compositions, epsilon, sensitivity: as in
        :func:`laplace_rdp_log_delta`.

    Returns:
      The least of the two, a NumPy array (the broadcast shape).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> float(least_with_laplace_rdp_delta(1e-6, 1.0, 0.1, 100, 4.6622))
      1e-06
    """
    return _least_with_rdp(
        delta, _rdp_delta, (scale, sampling_rate, compositions, epsilon, sensitivity))


@float64_kernel
def laplace_rdp_scale(epsilon, delta, compositions, sensitivity=1.0):
    """Least scale ``b`` whose RDP epsilon of ``T`` uses (no subsampling) meets the target (NumPy).

    Geometric bisection of :func:`laplace_rdp_epsilon` (Mironov's closed-form moments) over
    ``[1e-3, 1e4] T Delta / epsilon``, 48 steps: the upper end, which meets ``(epsilon, delta)``
    by the RDP conversion, certified like it.

    Args:
      epsilon: target ``epsilon > 0`` (array).
      delta: target ``delta`` in ``(0, 1)`` (broadcast with ``epsilon``).
      compositions: ``T >= 1`` uses of sensitivity ``Delta``.
      sensitivity: ``Delta``.

    Returns:
      The scales (NumPy, broadcast shape of the targets); ``inf`` where none in the range
      meets the target.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> b = laplace_rdp_scale(4.5327, 1e-5, 100)
      >>> bool(abs(b - 10.0) < 1e-3 and laplace_rdp_epsilon(b, None, 100, 1e-5) <= 4.5327)
      True
    """
    eps, dlt = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    shape, eps, dlt = eps.shape, eps.reshape(-1), dlt.reshape(-1)
    ref = float(compositions) * float(sensitivity) / eps
    lo, hi = 1e-3 * ref, 1e4 * ref

    def meets(b):
        return np.asarray(laplace_rdp_epsilon(b, None, compositions, dlt, sensitivity)) <= eps

    feasible = meets(hi)
    hi = bisect_host(lambda b: (meets(b), None), hi, lo, 48,  # ratio 1e7 -> 1 + 3e-13
                           geometric=True).good
    return np.where(feasible, hi, np.inf).reshape(shape)
