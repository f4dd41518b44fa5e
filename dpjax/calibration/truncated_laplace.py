r"""Least-variance truncated Laplace noise meeting (epsilon, delta) in one dimension, certified.

Truncated Laplace is a scale family with shape ``c = A / lambda``
(:mod:`dpjax.noise.truncated_laplace`); it is log-concave and symmetric, so
at fixed ``c`` the exact profile (:mod:`dpjax.accounting.truncated_laplace`)
increases with ``mu = Delta / lambda``.  By structure:

1. per shape ``c``, the largest feasible ``mu`` by bisection on ``log mu``;
2. the variance ``(Delta / mu)^2 v(c)`` minimised over ``log c`` by a zooming grid;
3. at the chosen shape the least ``lambda`` bisected again with the exact kernel
   (:func:`dpjax.accounting.truncated_laplace.log_delta_truncated_laplace`) and returned
   only where that kernel was evaluated and met ``delta (1 - MARGIN)`` (certificate).

Steps 1-2 run on the host in float64 NumPy over every target and shape at once
(:mod:`dpjax.calibration.host_shape`; nothing to compile), step 3 calls one compiled kernel.

GDGK 2020's closed form (``lambda = Delta / epsilon``,
``A = lambda log(1 + (e^epsilon - 1) / (2 delta))``;
:func:`dpjax.accounting.truncated_laplace.truncated_laplace_gdgk`) lies exactly on
the boundary ``delta(epsilon) = delta``; the search returns at most its
variance (slightly less: ``mu`` may exceed ``epsilon`` by ``O(delta)``), certified
with the margin of :mod:`dpjax.certificate`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from jax.typing import ArrayLike

from dpjax._batching import call_padded
from dpjax.accounting import events as ev
from dpjax.accounting.truncated_laplace import (
    ERROR,
    log_delta_truncated_laplace,
    truncated_laplace_loss_atoms,
)
from dpjax.calibration.composed_family import laplace_zcdp_scale
from dpjax.calibration.event_scale import event_delta
from dpjax.calibration.host_shape import least_certified_scale, log_delta_lemma11, search_shape
from dpjax.certificate import TINY, log_target, reported_delta, scale_is_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.noise.truncated_laplace import (
    truncated_laplace_unit_log_variance_host as log_unit_variance,
)
from dpjax.numerics import bisect_host, float64_kernel, illinois_host, zoom_minimize_array
from dpjax.numerics.constants import LOG_2
from dpjax.numerics.export_cache import exported_jit

#: the search's private end ``mu = e^-690 ~ 1.4e-300`` (the profile is below the total
#: variation ``~mu``; the exact kernel resolves ``mu`` down to about there): targets down to
#: ``delta ~ 1e-300`` are in the bracket at shapes ``c >~ 1``
_LOG_MU_MIN = -690.0
#: largest ``log`` of a returned parameter (``lambda``, ``A``): shapes needing more are not
#: searched (near ``delta ~ 1e-300`` the uniform end asks for ``A / c`` beyond float64)
_LOG_PARAM_MAX = 700.0
#: shape range ``c = A / lambda``: ``c -> 0`` is the uniform member (variance ``A^2 / 3`` to
#: ``O(c)``), ``c = 2e3`` the Laplace member to ``O(e^{-c})``; the range reaches further
#: where the target asks for it (:func:`shape_range`)
C_MIN, C_MAX = 1e-7, 2e3


def shape_range(epsilon, delta) -> tuple[np.ndarray, np.ndarray]:
    r"""``(log c_min, log c_max)`` of the shape search for each target.

    .. math:: c_{\max} = \max\big(C_{\max},\ 2\,(\epsilon + \log(1/\delta))\big)

    GDGK's optimum ``c = log(1 + (e^eps - 1) / (2 delta)) <= eps + log(1 / delta)`` (for
    ``delta <= 1/2``) grows with ``epsilon``: beyond ``epsilon ~ C_MAX / 2`` the range grows
    with it (twice the optimum, so the zooming grid brackets it).

    Args:
      epsilon: targets ``epsilon`` (array).
      delta: targets ``delta`` (broadcast).

    Returns:
      ``log c`` bounds, shaped like the broadcast targets.
    """
    eps, dlt = np.broadcast_arrays(np.asarray(epsilon, np.float64), np.asarray(delta, np.float64))
    with np.errstate(divide="ignore", over="ignore"):
        reach = 2.0 * (eps - np.log(dlt))  # inf at delta = 0 (never certified): C_MAX
    reach = np.where(np.isfinite(reach), np.minimum(reach, 1e300), C_MAX)
    return np.full(eps.shape, np.log(C_MIN)), np.log(np.maximum(C_MAX, reach))
#: the exact profile for the final bisection, on padded host batches (call_padded): a
#: scalar target and a small grid share one compiled program
_exact_profile = functools.partial(call_padded, exported_jit(log_delta_truncated_laplace))


def _host_log_delta(eps, log_c, log_mu):
    r"""The unit profile through Lemma 11 (host steer; :mod:`dpjax.calibration.host_shape`).

    ``P(T > t) = (e^{-t} - e^{-c}) / (2 (1 - e^{-c}))`` on ``[0, c]``; the centred loss is
    ``2t`` for ``|t| <= mu / 2``, ``mu`` beyond and ``+inf`` past ``c - mu / 2``, so
    ``x* = c - mu / 2`` for ``eps >= mu`` and ``min(eps / 2, c - mu / 2)`` below; the
    density ``e^{-t} / (2 (1 - e^{-c}))`` for small ``mu``.
    """
    c, mu = np.exp(log_c), np.exp(log_mu)
    log_norm = LOG_2 + np.log(-np.expm1(-c))

    def log_sf(t):
        inside = t < c
        gap = np.where(inside, c - t, 1.0)
        return np.where(inside, -t + np.log(-np.expm1(-gap)) - log_norm, -np.inf)

    def log_pdf(t):  # the density e^{-t} / (2 (1 - e^{-c})) on [0, c] (x* = c - mu / 2 may
        return np.where(t <= c, -t - log_norm, -np.inf)  # round to c)

    x = np.where(eps >= mu, c - 0.5 * mu, np.minimum(0.5 * eps, c - 0.5 * mu))
    return log_delta_lemma11(eps, mu, log_sf, x, log_pdf)


def _log_mu_range(log_c):
    """``log mu``: private at ``-690``, not at ``log 2c`` (disjoint supports)."""
    return np.full(log_c.shape, _LOG_MU_MIN), LOG_2 + log_c


@float64_kernel
def truncated_laplace_least_variance(
    epsilon: ArrayLike,
    delta: ArrayLike,
    sensitivity: ArrayLike,
    num_points: int = 17,
    num_rounds: int = 10,
    num_iterations: int = 80,
):
    r"""Least-variance ``(scale, bound)`` with the exact 1-D profile ``<= delta`` at ``epsilon``.

    Per shape ``c = A / lambda`` the least scale meeting the exact profile (derived from
    eq. (26) of flipped-huber-mechanism, App. F; :mod:`dpjax.accounting.truncated_laplace`),
    then the least variance over the shape:

    .. math:: \min_c\ \lambda^*(c)^2\, v(c), \qquad
              \lambda^*(c) = \min\{\lambda : \delta_{\lambda, c\lambda}(\epsilon) \le
              \delta (1 - \mathrm{MARGIN})\}

    (module docstring), re-certified at the returned parameters.  ``delta > 0`` is
    required (with ``delta = 0`` no truncation is private; use Laplace).  Shapes whose
    ``lambda`` or ``A`` would exceed ``e^700`` are left out of the search.

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array).
      sensitivity: ``Delta > 0`` (array; the three broadcast).
      num_points: number of shapes per round of the zooming grid.
      num_rounds: number of rounds.
      num_iterations: number of halvings of ``log mu`` per shape.

    Returns:
      NumPy arrays ``(scale, bound, variance, delta_at_params, certified)`` shaped like
      the broadcast targets.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> scale, bound, var, delta_at, ok = truncated_laplace_least_variance(0.3, 1e-6, 1.0)
      >>> round(float(var), 2), bool(ok)
      (22.21, True)
    """
    eps, dlt, sens = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.float64) for x in (epsilon, delta, sensitivity))
    )
    level = np.asarray(log_target(dlt), np.float64)
    lo, hi = (x.reshape(-1, 1) for x in shape_range(eps, dlt))
    grid = lo + (hi - lo) * np.linspace(0.0, 1.0, num_points)
    log_sens = np.log(sens.reshape(-1, 1))

    def value(log_c, log_mu):
        """``log`` variance, ``inf`` where ``lambda`` or ``A = c lambda`` would overflow."""
        fits = log_sens - log_mu + np.maximum(log_c, 0.0) <= _LOG_PARAM_MAX
        return np.where(fits, -2.0 * log_mu + log_unit_variance(log_c), np.inf)

    log_c, log_mu, found = search_shape(
        _host_log_delta, None, grid,
        eps.ravel(), level.ravel(), _log_mu_range, num_rounds, num_iterations, value=value,
    )
    c = np.exp(log_c).reshape(eps.shape)

    def log_delta_at(lam):
        return np.asarray(_exact_profile(eps, lam, c * lam, sens))

    least = (sens.ravel() * np.exp(-log_mu)).reshape(eps.shape)
    scale, log_d, ok = least_certified_scale(log_delta_at, least, level)
    ok = ok & found.reshape(eps.shape) & scale_is_certified(scale, log_d, level) & (dlt > 0)
    with np.errstate(over="ignore"):  # inf beyond float64 (delta ~ 1e-300): honest
        variance = np.square(scale) * np.exp(log_unit_variance(np.log(c)))
    return scale, c * scale, variance, np.asarray(reported_delta(log_d, ERROR)), ok


#: Loss-grid bin width of the accountant for ``T > 1`` uses (:func:`truncated_laplace_composed`).
COMPOSED_BIN_WIDTH = 1e-4
#: Width of the final ``log lambda`` bracket at the returned shape (relative precision of the
#: least scale there) and at the shapes the survey compares (:data:`SURVEY_TOL`).
SCALE_TOL = 1e-6
SURVEY_TOL = 1e-4
#: Rounds of the zooming grid (5 points) over ``log c`` for ``T > 1`` uses: the bracket halves
#: per round, two new shapes each.
COMPOSED_ROUNDS = 6
#: Beyond ``c = c_lo + 60`` the unit variance ``v(c) = 2 - O(c^2 e^{-c})`` is 2 to float64:
#: those shapes are the Laplace member (evaluated at :data:`C_MAX`).
_FLAT = 60.0


def _use_floor(delta, uses: int) -> float:
    r"""``p_max = 1 - (1 - delta)^{1 / T}``: the most ``+infinity`` mass one use may have
    (``T`` uses lose ``1 - (1 - p)^T <= delta``)."""
    return -math.expm1(math.log1p(-float(delta)) / uses)


def _scale_floor(log_c, p_max: float):
    r"""``lambda_min(c) = 1 / log(1 + 2 p_max (e^c - 1))``: below it one use's mass at
    ``+infinity``, ``(e^mu - 1) / (2 (e^c - 1))``, exceeds ``p_max`` (NumPy, elementwise)."""
    c = np.exp(np.asarray(log_c, np.float64))
    with np.errstate(over="ignore"):
        log_gap = np.where(c < 700.0, np.log(np.expm1(np.minimum(c, 700.0))), c)
    arg = math.log(2.0 * p_max) + log_gap  # log(2 p_max (e^c - 1))
    return 1.0 / np.where(arg > 30.0, arg + np.log1p(np.exp(-np.abs(arg))),
                          np.log1p(np.exp(np.minimum(arg, 30.0))))


def composed_event(scale: float, bound: float, uses: int, sampling_rate=None,
                   dim: int = 1) -> ev.Event:
    """``T`` uses of ``TL(scale, bound)`` at unit shift, Poisson-subsampled at
    ``sampling_rate`` (``None`` or ``1``: not subsampled) ``dim`` pairs at a time (the
    coordinates of one use of a ``dim``-dim query share one coin), as one event.

    Args:
      scale: ``lambda`` per unit sensitivity.
      bound: ``A`` per unit sensitivity.
      uses: ``T``, the 1-D pairs (a multiple of ``dim``).
      sampling_rate: ``q`` or ``None``.
      dim: the pairs under one coin (``K``).
    """
    leaf = ev.Noise("truncated-laplace", {"scale": scale, "bound": bound})
    if sampling_rate is None or sampling_rate >= 1.0:
        return ev.SelfComposed(leaf, uses)
    if dim > 1:  # one coin for the K coordinates: sampled as a whole
        leaf = ev.SelfComposed(leaf, dim)
    return ev.SelfComposed(ev.PoissonSampled(float(sampling_rate), leaf), uses // dim)


def _composed_search(epsilon: float, delta: float, uses: int, bin_width: float,
                     sampling_rate=None, relation: str = "add_remove", dim: int = 1):
    r"""``(c, lambda, bad_lambda)`` of the least-variance shape for unit sensitivity (host).

    :func:`truncated_laplace_composed` (its docstring has the formulas); every value of the
    profile is a fresh accountant's (:func:`dpjax.calibration.event_scale.event_delta`).
    """

    level = float(log_target(delta))
    memo: dict = {}

    def gap(lam: float, c: float) -> float:
        """``log delta_T(epsilon) - level`` at ``(lambda, c lambda)`` (``-inf`` at delta 0)."""
        key = (lam, c)
        if key not in memo:
            if not (TINY <= lam and c * lam <= 1e300):  # not evaluated: not feasible
                memo[key] = math.inf
            else:
                event = composed_event(lam, c * lam, uses, sampling_rate, dim)
                d = event_delta(event, epsilon, relation, bin_width)
                memo[key] = math.log(d) - level if d > 0.0 else -math.inf
        return memo[key]

    solved: dict = {}  # c -> (least feasible lambda, infeasible lambda below it)

    def least_scale(c: float, tol: float = SURVEY_TOL) -> tuple[float, float]:
        r"""Least ``lambda`` with ``delta_T <= target`` at shape ``c`` (Illinois on
        ``log lambda`` to ``tol``), bracketed by the shapes already solved: ``lambda*``
        decreases in ``c`` (the profile decreases in ``c`` at fixed ``lambda``)."""
        if c in solved:
            lam, bad = solved[c]
            if math.log(lam / bad) <= tol:
                return lam, bad
            x = illinois_host(
                lambda x: np.array([gap(math.exp(float(x[0])), c)]),
                np.array([math.log(lam)]), np.array([math.log(bad)]), tol,
                f_good=np.array([gap(lam, c)]),
                f_bad=np.array([gap(bad, c) if (bad, c) in memo else math.inf])).good
            return _settle(c, math.exp(float(x[0])), bad)
        above = [k for k in solved if k > c]
        below = [k for k in solved if k < c]
        bad = solved[min(above)][1] if above else None
        good = solved[max(below)][0] if below else None
        if good is None:  # grow from a guess until feasible
            good = max(bad * 2.0 if bad else guess, TINY)
            while gap(good, c) > 0.0:
                if good > 1e300:
                    raise InfeasibleTargetError(
                        f"truncated-laplace: no scale up to 1e300 meets (epsilon={epsilon!r}, "
                        f"delta={delta!r}) after {uses} uses")
                bad, good = good, good * 2.0
            f_good = gap(good, c)  # memoised
        else:
            f_good = -math.inf  # feasible: feasible at a smaller shape
        if bad is None:  # shrink until infeasible
            bad = good / 2.0
            while gap(bad, c) <= 0.0:
                good, bad = bad, bad / 2.0
                if bad < TINY:
                    break
            f_good = gap(good, c)
        f_bad = gap(bad, c) if (bad, c) in memo else math.inf  # else: infeasible at a larger c
        x = illinois_host(
            lambda x: np.array([gap(math.exp(float(x[0])), c)]),
            np.array([math.log(good)]), np.array([math.log(bad)]), tol,
            f_good=np.array([f_good]), f_bad=np.array([f_bad])).good
        return _settle(c, math.exp(float(x[0])), bad)

    def _settle(c: float, lam: float, bad: float) -> tuple[float, float]:
        """Record ``lambda*(c)`` with its bracket's infeasible end (the largest evaluated
        infeasible scale below it)."""
        lows = [k[0] for k, v in memo.items() if k[1] == c and k[0] < lam and v > 0.0]
        solved[c] = (lam, max(lows) if lows else bad)
        return solved[c]

    with np.errstate(divide="ignore"):
        guess = float(min(uses / max(epsilon, delta),
                          1.05 * laplace_zcdp_scale(epsilon, delta, uses, 1.0)))
    lam_l, _ = least_scale(C_MAX)  # the Laplace member (raises where even it fails)
    v_l = lam_l**2 * float(np.exp(log_unit_variance(np.log(C_MAX))))
    # shapes whose floor lambda_min(c)^2 v(c) exceeds the Laplace member's variance cannot win
    # (one use's mass at +infinity is q p under remove, none under add with q < 1; the floor's
    # formula holds while that mass stays below 1/2)
    q = 1.0 if sampling_rate is None else float(sampling_rate)
    p_max = _use_floor(delta, uses) / q
    # the floor is the mass of independent coins: not for K coordinates under one coin, nor
    # for the replace-one bound (both accounted through profiles, :mod:`.pld.amplification`)
    profiled = q < 1.0 and (dim > 1 or relation == "replace_one")
    floored = p_max < 0.5 and not (relation == "add" and q < 1.0) and not profiled

    def floor_beats(log_c: float) -> tuple[bool, None]:
        lam_min = float(_scale_floor(log_c, p_max))
        return lam_min**2 * float(np.exp(log_unit_variance(log_c))) < v_l, None

    lo = math.log(C_MIN)
    if floored and not floor_beats(lo)[0]:
        lo = bisect_host(floor_beats, math.log(C_MAX), lo, 60).bad
    hi = min(math.log(C_MAX), math.log(math.exp(lo) + _FLAT))

    def objective(points):
        vals = np.empty(points.shape)
        for i in np.ndindex(points.shape):
            c = float(np.exp(points[i]))
            try:
                lam, _ = least_scale(c)
            except InfeasibleTargetError:  # no scale up to 1e300 at this shape
                vals[i] = math.inf
                continue
            vals[i] = 2.0 * math.log(lam) + float(log_unit_variance(points[i]))
        return vals, np.zeros(points.shape)

    if hi > lo:
        grid = (lo + (hi - lo) * np.linspace(0.0, 1.0, 5))[None, :]
        x, value, _ = zoom_minimize_array(objective, grid, COMPOSED_ROUNDS)
        c_best, v_best = float(np.exp(x[0])), float(np.exp(value[0]))
    else:
        c_best, v_best = C_MAX, math.inf
    if not v_best < v_l:
        c_best = C_MAX
    lam, bad = least_scale(c_best, SCALE_TOL)  # the winner settled to SCALE_TOL
    return c_best, lam, bad


@float64_kernel
def truncation_mass(scale, bound, uses: int, sensitivity=1.0, sampling_rate=None,
                    dim: int = 1) -> np.ndarray:
    r"""Mass at ``+infinity`` after ``T`` uses: ``1 - (1 - q p)^T``, ``p = P(T > A - Delta)``
    (``1 - (1 - q (1 - (1 - p)^K))^{T / K}`` when ``K = dim`` pairs share one coin).

    .. math:: p = \frac{e^{\mu} - 1}{2\,(e^{c} - 1)}\quad(\mu = \Delta/\lambda \le c = A/\lambda)

    (the flat part of the 1-D profile, eq. (26) of flipped-huber-mechanism; ``1/2 + ...`` for
    ``c < mu``, :func:`dpjax.accounting.truncated_laplace.truncated_laplace_loss_atoms`):
    the part of ``delta`` the truncation costs, for the calibration's note.  Host NumPy.

    Args:
      scale: ``lambda > 0``.
      bound: ``A > 0``.
      uses: ``T``.
      sensitivity: ``Delta``.
      sampling_rate: Poisson rate ``q`` of every use (``None``: 1); the remove direction's
        mass (the add direction of a subsampled use has none).
      dim: the pairs under one coin (``K``; ``uses`` a multiple of it).

    Returns:
      The mass (NumPy array), ``1`` where the supports are disjoint and ``q = 1``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> f"{float(truncation_mass(1.0, 20.0, 10)):.6e}"  # ~ 10 (e - 1) / (2 e^20)
      '1.770821e-08'
    """
    lam, a, d = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in (scale, bound,
                                                                          sensitivity)))

    out = np.empty(lam.shape)
    for i in np.ndindex(lam.shape):
        losses, probs = truncated_laplace_loss_atoms(lam[i], a[i], d[i], 1.0)
        p = float(np.sum(probs[np.isinf(losses)]))
        coins = uses
        if sampling_rate is not None:
            if dim > 1:  # K pairs under one coin: the coin's mass 1 - (1 - p)^K
                p, coins = -math.expm1(dim * math.log1p(-p)) if p < 1.0 else 1.0, uses // dim
            p *= float(sampling_rate)
        out[i] = -math.expm1(coins * math.log1p(-p)) if p < 1.0 else 1.0
    return out


@float64_kernel
def truncated_laplace_composed(
    epsilon: ArrayLike,
    delta: ArrayLike,
    uses: int,
    sensitivity: float,
    bin_width: float = COMPOSED_BIN_WIDTH,
    sampling_rate: float | None = None,
    relation: str = "add_remove",
    dim: int = 1,
):
    r"""Least-variance ``(scale, bound)`` whose certified profile after ``T`` uses is ``<= delta``.

    The 1-D pair of ``TL(lambda, A)`` at shift ``Delta`` (exact loss law, eq. (26) of
    flipped-huber-mechanism / App. F; truncated Laplace is the comparator of Fig. 3a) composed
    ``T`` times by :class:`~dpjax.accounting.PLDAccountant` (pessimistic, bin width
    ``bin_width``), ``delta_T(epsilon; lambda, c)`` with shape ``c = A / lambda``:

    .. math:: \min_c\ \lambda^*(c)^2\, v(c), \qquad
              \lambda^*(c) = \min\{\lambda : \delta_T(\epsilon; \lambda, c) \le
              \delta (1 - \mathrm{MARGIN})\},\qquad
              v(c) = \frac{2 P(3, c)}{1 - e^{-c}}.

    Both searches are monotone by structure: at fixed ``c`` the pair at a larger ``lambda``
    is the pair at a smaller shift (scaling), and the 1-D profile increases with the shift
    (:func:`dpjax.accounting.truncated_laplace.log_delta_truncated_laplace`), so
    ``delta_T`` decreases in ``lambda`` (composition keeps dominance); at fixed ``lambda``
    every branch of the 1-D profile decreases in ``c``, so ``lambda*(c)`` decreases in
    ``c``.  ``lambda*(c)`` is found by Illinois steps on ``log lambda``
    (:func:`dpjax.numerics.illinois_host`), bracketed by the shapes already solved; the
    shape by a zooming grid on ``log c`` (:func:`dpjax.numerics.zoom_minimize_array`,
    :data:`COMPOSED_ROUNDS` rounds).  Shapes are compared at the relative width
    :data:`SURVEY_TOL` of their ``lambda*`` (the winner is least to about ``2 SURVEY_TOL``
    in variance; beyond a few uses the variance varies less than that between ``c ~ 15``
    and the Laplace member), and the winner's ``lambda*`` is settled to :data:`SCALE_TOL`.
    The ``+infinity`` atoms add up over the uses (``1 - (1 - p)^T <= delta``,
    ``p = (e^mu - 1) / (2 (e^c - 1))``), so the truncation grows with ``T``; the family's
    ends are both searched: the Laplace member ``c = C_MAX`` first, then
    ``c in [c_lo, c_lo + 60]``, ``c_lo`` where the floor
    ``lambda_min(c)^2 v(c)``, ``lambda_min(c) = 1 / log(1 + 2 p_max (e^c - 1))``, reaches
    the Laplace member's variance (no smaller shape can win; ``c_lo = C_MIN``, the uniform
    end, where the floor stays below it).  With Poisson subsampling at rate ``q`` each use is
    ``PoissonSampled(q, TL)`` (:func:`dpjax.accounting.truncated_laplace.
    poisson_truncated_laplace_atoms`) under ``relation``; one use's mass at ``+infinity``
    is then ``q p`` under remove (the floor takes ``p_max / q``) and none under add (no
    floor: the search starts at the uniform end).  With ``dim = K > 1`` the ``K`` pairs of one
    use share the coin (a ``K``-dim query subsampled once per use): each use is
    ``PoissonSampled(q, SelfComposed(TL, K))``, accounted through the profile of the ``K``
    pairs (:mod:`dpjax.accounting.pld.amplification`), as is ``relation = "replace_one"``
    under subsampling (no floor there).  The result is re-checked by a fresh
    accountant at the returned parameters (the certificate).  Host driver (one accountant
    query per step); ``T = 1`` without subsampling is
    :func:`truncated_laplace_least_variance` (closed form).

    Args:
      epsilon: target ``epsilon >= 0`` (array).
      delta: target ``delta`` in ``(0, 1)`` (array, broadcast).
      uses: ``T >= 1`` uses of the 1-D pair.
      sensitivity: ``Delta > 0``.
      bin_width: the accountant's loss-grid spacing.
      sampling_rate: Poisson rate ``q`` in ``(0, 1)`` of every use, or ``None``.
      relation: ``"add_remove"`` (default), ``"add"``, ``"remove"`` or ``"replace_one"``.
      dim: the pairs of one use under one Poisson coin (``K``; ``uses`` a multiple of it).

    Returns:
      NumPy arrays ``(scale, bound, variance, delta_at_params, certified)`` shaped like the
      broadcast targets.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> lam, a, var, d, ok = truncated_laplace_composed(1.0, 1e-5, 2, 1.0, bin_width=1e-3)
      >>> bool(ok), float(d) <= 1e-5, round(float(var), 3)  # Laplace: 2 (T / epsilon)^2 = 8
      (True, True, 7.992)
    """

    eps, dlt = np.broadcast_arrays(np.asarray(epsilon, np.float64), np.asarray(delta, np.float64))
    sens, uses = float(sensitivity), int(uses)
    out = {k: np.empty(eps.shape) for k in ("scale", "bound", "variance", "delta")}
    ok = np.zeros(eps.shape, bool)
    for i in np.ndindex(eps.shape):
        c, lam, _ = _composed_search(float(eps[i]), float(dlt[i]), uses, float(bin_width),
                                     sampling_rate, relation, dim)
        scale, bound = lam * sens, c * lam * sens
        event = composed_event(scale / sens, bound / sens, uses, sampling_rate, dim)
        d = event_delta(event, float(eps[i]), relation,
                        float(bin_width))  # the certificate: a fresh accountant
        out["scale"][i], out["bound"][i], out["delta"][i] = scale, bound, d
        out["variance"][i] = scale**2 * float(np.exp(log_unit_variance(np.log(bound / scale))))
        ok[i] = d <= dlt[i] and math.isfinite(out["variance"][i])
    return out["scale"], out["bound"], out["variance"], out["delta"], ok
