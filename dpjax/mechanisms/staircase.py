r"""The staircase mechanism (Geng & Viswanath 2016): the optimal epsilon-DP additive noise.

Parameters ``decay`` (GV's epsilon, ``> 0``), ``width`` (GV's Delta, ``> 0``) and
``gamma`` (in ``[0, 1]``); see :mod:`dpjax.noise.staircase`.

* ``dim = 1``, one use: exact profile ``sup_{|d| <= Delta} delta_d(epsilon)``
  (:mod:`dpjax.accounting.staircase`); calibration ``decay = epsilon``,
  ``width = Delta``, ``gamma = gamma^*`` (pure epsilon-DP; ``delta`` is met with
  ``delta(epsilon) = 0``, and used only where ``2 artanh(delta)`` exceeds ``epsilon``:
  :func:`calibrate`).
* ``dim = K`` or ``T`` compositions: independent staircases per coordinate
  with ``decay = epsilon / (K T)`` and ``width = Delta_inf`` (Table II of
  flipped-huber-mechanism; :mod:`dpjax.calibration.staircase`).  A coordinate
  shifted by ``|d_i| <= Delta_inf`` has privacy loss at most
  ``decay * ceil(Delta_inf / width)``, so the whole is ``epsilon_0``-DP with
  ``epsilon_0 = K T decay ceil(Delta_inf / width)``; profiles below
  ``epsilon_0`` use the dominating pair of any ``epsilon_0``-DP mechanism
  (randomized response): ``delta(eps) <= (e^{eps_0} - e^{eps}) / (1 + e^{eps_0})``,
  a certified upper bound.
* Poisson subsampling at rate ``q`` (and ``T`` uses): one staircase per coordinate of
  ``width = Delta_inf`` and ``gamma = gamma^*(decay)``, accounted by
  :class:`~dpjax.accounting.PLDAccountant` (the pair at the shift of its width dominates
  every smaller shift: :func:`dpjax.accounting.events.plds.staircase_as_pure_dp`) under the
  relation ``add_remove``, ``add``, ``remove`` or ``replace_one``; calibration bisects
  ``1 / decay`` on that certified profile
  (:func:`dpjax.calibration.event_scale.calibrate_event_scale`).  In ``K`` dimensions one
  coin samples all ``K`` coordinates, so a use is ``PoissonSampled(q, SelfComposed(step,
  K))``: the ``K``-fold product at the corner ``|d_i| = Delta_inf`` dominates every shift
  of the box (a product of dominating pairs dominates the product, and subsampling keeps a
  domination: the channel that maps the one pair to the other maps the mixtures too), and
  the accountant amplifies that composite through its profile (Balle et al. 2018).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial

import jax
import numpy as np

from dpjax._batching import call_padded
from dpjax.accounting import events as ev
from dpjax.accounting.laplace import epsilon_pure_dp
from dpjax.accounting.staircase import ERROR, log_delta_staircase
from dpjax.calibration.event_scale import calibrate_event_scale
from dpjax.calibration.result import Calibration
from dpjax.calibration.staircase import staircase_pure
from dpjax.certificate import MARGIN, log_target, reported_delta, require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._composition import amplified_budget, composed_budget, pure_dp_delta
from dpjax.mechanisms._discrete import event_queries, ledger
from dpjax.mechanisms._spec import About, Mechanism, Query, calibration
from dpjax.noise.staircase import Staircase
from dpjax.numerics import least_feasible

NAME = "staircase"


def _check(query: Query) -> bool:
    """True for the exact 1-D case (one use, no subsampling)."""
    return query.sampling_rate is None and query.dim == 1 and query.compositions == 1


def _subsampled(query: Query) -> bool:
    """True for a Poisson-subsampled query (any dim, any relation), accounted by
    :class:`~dpjax.accounting.PLDAccountant` (1-D replace-one through the exact loss atoms
    of :func:`dpjax.accounting.staircase.replace_one_poisson_atoms`)."""
    return query.sampling_rate is not None


def _event(params: dict, query: Query) -> ev.Event:
    """The accountant's event of the query's uses: one ``Noise("staircase")`` release (its
    width in sensitivity units) per coordinate, the ``K`` coordinates under one coin
    (``SelfComposed(step, K)``, the corner of the box: module docstring),
    Poisson-subsampled, ``T`` times (:func:`._discrete.ledger`)."""
    linf, _ = query.sensitivity.resolve("linf")
    values = {k: np.asarray(params[k], np.float64) for k in ("decay", "width", "gamma")}
    if any(v.ndim for v in values.values()):
        raise ValueError(f"{NAME}: give one parameter set at a time with Poisson subsampling")
    step = ev.Noise(NAME, {"decay": float(values["decay"]),
                           "width": float(values["width"]) / linf,
                           "gamma": float(values["gamma"])})
    return ledger(ev.SelfComposed(step, query.dim) if query.dim > 1 else step, query)


_accountant_profile, _accountant_epsilon = event_queries(_event)


def _amplified_epsilon(params: dict, query: Query) -> np.ndarray:
    """The pure-DP epsilon of the subsampled uses: ``T log(1 + q (e^{eps_0} - 1))`` with
    ``eps_0 = K decay ceil(Delta_inf / width)`` of one use (:func:`amplified_budget`),
    rounded up; ``inf`` under ``replace_one`` (the amplification theorem is for add or
    remove adjacency)."""
    if query.relation == "replace_one":
        return np.full(np.shape(params["decay"]), np.inf)
    linf, _ = query.sensitivity.resolve("linf")
    per_use = composed_budget(query.dim, np.asarray(params["decay"]) * _steps(
        linf, params["width"]), 1.0)
    return amplified_budget(per_use, query.sampling_rate, query.compositions)


def _subsampled_profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    """Certified ``delta(epsilon)`` of the subsampled uses: the least of the accountant's
    profile and the randomized-response bound of :func:`_amplified_epsilon`."""
    pure = pure_dp_delta(epsilon, _amplified_epsilon(params, query))
    return np.minimum(_accountant_profile(params, epsilon, query), pure)


def _subsampled_epsilon(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    """Least certified ``epsilon``: the least of the accountant's and the pure-DP bound's."""
    pure = epsilon_pure_dp(delta, _amplified_epsilon(params, query))
    return np.minimum(_accountant_epsilon(params, delta, query), np.asarray(pure))


def _calibrate_subsampled(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least certified noise of Poisson-subsampled staircases (``K`` dims, ``T`` uses).

    The staircase with ``width = Delta_inf``, ``gamma = gamma^*(decay)`` per coordinate;
    the largest ``decay`` (least variance) whose accountant profile meets the target,

    .. math:: \text{decay}^\star = \max\{d : \hat\delta_d(\epsilon) \le \delta\},

    bisected on ``s = 1 / decay`` (:func:`~dpjax.calibration.event_scale.
    calibrate_event_scale`, re-checked at the returned parameters) from the pure-DP
    amplification guess ``decay_0 = log(1 + (e^{epsilon / T} - 1) / q) / K``; ``decay_0``
    itself (rounded down until :func:`_amplified_epsilon` certifies it) where it is
    larger (add or remove adjacency), ``delta_at`` then the randomized-response bound.

    Args:
      epsilon, delta: the targets.
      query: ``linf``, ``K``, ``T``, ``q`` and the relation.
    """
    linf, notes = query.sensitivity.resolve("linf")
    q, uses = float(query.sampling_rate), query.compositions

    def params_at(scale):
        decay, width, gamma, var = staircase_pure(1.0 / np.asarray(scale, np.float64), linf, 1)
        return {"decay": np.asarray(decay), "width": np.asarray(width),
                "gamma": np.asarray(gamma)}, np.asarray(var)

    with np.errstate(over="ignore", divide="ignore"):
        decay_0 = np.log1p(np.expm1(np.asarray(epsilon, np.float64) / uses) / q) / query.dim
        guess = np.where(decay_0 > 0.0, 1.0 / decay_0, 1e12)
    scale, delta_at = calibrate_event_scale(
        lambda s: _event(params_at(s)[0], query), epsilon, delta, query.relation, guess,
        name=NAME,
    )
    # the amplified pure-DP decay where it is larger (the accountant's grid rounds the loss
    # atoms of K coordinates up, and at T = 1 the pure bound is the exact answer's edge)
    pure_scale = guess * (1.0 + 2.0**-44)  # absorbs the padding of the amplified budget
    pure = _amplified_epsilon(params_at(pure_scale)[0], query)
    for _ in range(8):  # rounding: make sure the amplified budget, rounded up, is <= epsilon
        pure_scale = np.where(pure > epsilon, np.nextafter(pure_scale, np.inf), pure_scale)
        pure = _amplified_epsilon(params_at(pure_scale)[0], query)
    by_pure = (pure <= epsilon) & (pure_scale < scale)
    params, var = params_at(np.where(by_pure, pure_scale, scale))
    # the pure bound re-read off the returned parameters (what the profile reports)
    delta_at = np.where(by_pure, pure_dp_delta(epsilon, _amplified_epsilon(params, query)),
                        delta_at)
    require_certified(NAME, delta_at <= delta, epsilon, delta, delta_at)
    coords = (f"{query.dim} staircases under one coin per use (the corner |d_i| = linf)"
              if query.dim > 1 else "one staircase")
    won = "amplified pure DP" if np.all(by_pure) else (
        "the PLDAccountant profile" if not np.any(by_pure) else "each target's better")
    notes += (
        f"{coords} (width = linf, gamma*), decay the largest certified by the PLDAccountant "
        f"profile of {uses} uses at Poisson rate {q:g}, relation {query.relation}, or by "
        f"amplified pure DP (Balle et al. 2018, add/remove only): {won} won",
    )
    # K dims: the box's corner, exact for an l-infinity query; an l1 or l2 bound the query
    # may also have makes the corner a sufficient bound only, so never called exact there
    return calibration(
        NAME, query, params=params, variance=var, epsilon=epsilon, delta=delta,
        delta_at_params=delta_at, sensitivity={"linf": linf}, notes=notes,
        condition="exact" if query.dim == 1 else "sufficient",
    )


def _max_periods(sens: float, width) -> int:
    return int(math.ceil(float(np.max(sens / np.asarray(width))))) + 3


#: Largest ``ceil(Delta / width) + 3`` the exact 1-D profile is evaluated at: its cost grows
#: as the square of the periods a shift spans (every worst-shift candidate cuts every
#: window at every jump point; ~0.6 GB and a few seconds at 64 periods, 67 GB at 1000).
#: Beyond it the profile is the randomized-response bound of ``eps_0 = decay ceil(Delta /
#: width)`` (the staircase is ``eps_0``-DP for such shifts): certified, looser.
EXACT_MAX_PERIODS = 64


def _exact_profile(query: Query, params: dict) -> bool:
    """True where the exact 1-D profile is used: one use, one coordinate, and a shift of at
    most :data:`EXACT_MAX_PERIODS` periods (else the pure-DP bound)."""
    if not _check(query):
        return False
    linf, _ = query.sensitivity.resolve("linf")
    return _max_periods(linf, params["width"]) <= EXACT_MAX_PERIODS


def _exact_log_delta(epsilon, params, sens):
    """The exact 1-D log-profile on a padded host batch (one program for up to 16 targets)."""
    kernel = partial(log_delta_staircase, max_periods=_max_periods(sens, params["width"]))
    return call_padded(kernel, epsilon, params["decay"], params["width"], params["gamma"], sens)


@partial(jax.jit, static_argnames=("max_periods",))
def _epsilon_exact(delta, decay, width, gamma, sens, eps_0, *, max_periods):
    r"""Least certified epsilon of the exact 1-D staircase profile (one compiled program).

    .. math:: \epsilon^* = \min\{\epsilon \in [0, \epsilon_0] :
              \log\delta(\epsilon) \le \log(\delta (1 - \text{MARGIN}))\}

    by :func:`dpjax.numerics.least_feasible` (``inf`` where no certificate); the profile
    is :func:`dpjax.accounting.staircase.log_delta_staircase` (Geng & Viswanath 2016), 0 at
    ``eps_0 = decay ceil(Delta_inf / width)``.

    Args:
      delta: target deltas (``delta = 0``: the least epsilon where the profile is 0).
      decay, width, gamma: the staircase parameters (broadcast with ``delta``).
      sens: the sensitivity ``Delta_inf``.
      eps_0: the pure-DP epsilon, the bracket's upper end.
      max_periods: static period count of the profile's candidate shifts.
    """
    level = log_target(delta)  # -inf at delta = 0: the least epsilon with delta(eps) = 0

    def ok(e):
        return log_delta_staircase(e, decay, width, gamma, sens, max_periods=max_periods) <= level

    return least_feasible(ok, eps_0, num_iterations=100)


def _steps(linf: float, width) -> np.ndarray:
    """``ceil(Delta_inf / width)`` in exact rational arithmetic (a shift of ``Delta_inf`` crosses
    at most that many steps; a rounded quotient could land one below)."""
    exact = np.vectorize(lambda w: math.ceil(Fraction(linf) / Fraction(float(w))), otypes=[float])
    return exact(np.asarray(width, np.float64))


def _exact_delta(epsilon, params, sens) -> np.ndarray:
    return np.asarray(reported_delta(_exact_log_delta(epsilon, params, sens), ERROR))


def _pure_epsilon(params: dict, query: Query) -> np.ndarray:
    """``eps_0 = K T decay ceil(Delta_inf / width)``, rounded up."""
    linf, _ = query.sensitivity.resolve("linf")
    steps = _steps(linf, params["width"])
    return composed_budget(query.dim * query.compositions, np.asarray(params["decay"]) * steps, 1.0)


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""The variance-optimal pure epsilon-DP staircase (Geng & Viswanath 2016), certified.

    ``decay = epsilon / (K T)``, ``width = Delta_inf``, ``gamma = gamma^*(decay)``
    (:func:`~dpjax.noise.staircase.staircase_optimal_gamma`; Table II of
    flipped-huber-mechanism for ``K`` coordinates); ``delta`` is met with
    ``delta(epsilon) = 0`` where ``epsilon_0 = K T decay ceil(Delta_inf / width) <= epsilon``
    (exact rational arithmetic; Geng & Viswanath 2016: the staircase is
    ``epsilon_0``-DP), else with the exact 1-D profile, or in ``K`` dims / ``T`` uses
    with the randomized-response bound of ``epsilon_0``.

    ``delta`` is used only where it buys more than ``epsilon``: the pure budget is
    ``epsilon_0 = max(epsilon, 2 artanh(delta (1 - MARGIN)))``.  An ``epsilon_0``-DP
    mechanism has ``delta(eps) <= (e^{eps_0} - e^{eps}) / (1 + e^{eps_0}) <=
    tanh(eps_0 / 2)`` at every ``eps >= 0`` (randomized response, Kairouz et al. 2015), so
    a target with ``epsilon = 0 < delta`` (or ``epsilon`` far below ``delta``) is met; at
    the papers' targets (``epsilon >= 2 artanh(delta)``) nothing changes.

    Args:
      epsilon: target epsilons, ``>= 0`` (broadcast with ``delta``).
      delta: target deltas (used only through ``epsilon_0`` above).
      query: ``linf``, ``K``, ``T``; with a sampling rate ``q`` the subsampled
        calibration of :func:`_calibrate_subsampled`.
    """
    if _subsampled(query):
        return _calibrate_subsampled(epsilon, delta, query)
    exact = _check(query)
    budget = np.maximum(epsilon, 2.0 * np.arctanh(np.asarray(delta) * (1.0 - MARGIN)))
    if np.any(budget == 0):
        raise InfeasibleTargetError(
            "staircase: epsilon = delta = 0 is infeasible for additive noise"
        )
    linf, notes = query.sensitivity.resolve("linf")
    coords = query.dim * query.compositions
    decay, width, gamma, var = (np.asarray(x) for x in staircase_pure(budget, linf, coords))
    for _ in range(8):  # rounding: make sure coords * decay, rounded up, is <= the budget
        over = composed_budget(coords, decay, 1.0) > budget
        decay = np.where(over, np.nextafter(decay, 0.0), decay)
    used = (
        "delta used: pure budget 2 artanh(delta (1 - MARGIN)) > epsilon"
        if np.any(budget > epsilon) else "delta not used"
    )
    params = {"decay": decay, "width": width, "gamma": gamma}
    if exact:
        # eps_0 = decay ceil(Delta_inf / width) <= epsilon (exact rational arithmetic) proves
        # delta(epsilon) = 0 without the compiled profile; the profile only where it does not
        pure = _pure_epsilon(params, query) <= epsilon
        delta_at = np.where(pure, 0.0, 1.0)
        if not np.all(pure):
            delta_at = _exact_delta(epsilon, params, linf)
        notes += (f"pure epsilon-DP staircase (gamma*); {used}",)
    else:
        delta_at = pure_dp_delta(epsilon, _pure_epsilon(params, query))
        notes += (
            f"independent staircases per coordinate, decay = budget / {coords} "
            f"(l1 budget split over coordinates), width = linf; pure DP, {used}",
        )
    require_certified(NAME, delta_at <= delta, epsilon, delta, delta_at)
    return calibration(
        NAME, query, params=params, variance=var, epsilon=epsilon, delta=delta,
        delta_at_params=np.broadcast_to(delta_at, np.shape(var)).copy(),
        sensitivity={"linf": linf}, notes=notes, condition="exact" if exact else "sufficient",
    )


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    r"""``delta(epsilon)`` of staircase noise: exact in 1-D, else the pure-DP bound.

    One use in 1-D: ``sup_{|d| <= Delta} delta_d(epsilon)`` over the staircase's shifts
    (:func:`dpjax.accounting.staircase.log_delta_staircase`); otherwise
    ``(e^{eps_0} - e^{eps}) / (1 + e^{eps_0})`` with ``eps_0 = K T decay ceil(Delta_inf / width)``.

    A shift of more than :data:`EXACT_MAX_PERIODS` periods also uses the pure-DP bound
    (certified, looser; the exact profile's cost grows as the square of the periods).

    Args:
      params: ``{"decay", "width", "gamma"}`` (validated).
      epsilon: the epsilons to evaluate at.
      query: ``linf``, ``K``, ``T``.
    """
    if _subsampled(query):
        return _subsampled_profile(params, epsilon, query)
    if _exact_profile(query, params):
        linf, _ = query.sensitivity.resolve("linf")
        return _exact_delta(epsilon, params, linf)
    return pure_dp_delta(epsilon, _pure_epsilon(params, query))


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    r"""Least certified ``epsilon`` with ``delta(epsilon) <= delta (1 - MARGIN)``.

    One use in 1-D: bisection (:func:`dpjax.numerics.least_feasible`) of the exact profile
    on ``[0, eps_0]`` (it vanishes at ``eps_0``); otherwise the inverse of the pure-DP bound.

    Args:
      params: as for :func:`profile`; query likewise.
      delta: the deltas to invert at.
    """
    if _subsampled(query):
        return _subsampled_epsilon(params, delta, query)
    if not _exact_profile(query, params):
        return np.asarray(epsilon_pure_dp(delta, _pure_epsilon(params, query)))
    linf, _ = query.sensitivity.resolve("linf")
    # bisection on [0, eps_0] (the profile is 0 at eps_0) against delta (1 - MARGIN)
    kernel = partial(_epsilon_exact, max_periods=_max_periods(linf, params["width"]))
    return call_padded(
        kernel, delta, params["decay"], params["width"], params["gamma"], linf,
        _pure_epsilon(params, query),
    )


SUMMARY = "staircase (Geng & Viswanath 2016), optimal eps-DP; exact 1-D, per coordinate in K-D"
ABOUT = About(
    "flipped-huber-mechanism", ("linf",),
    "any dim and T uses (per-coordinate budget split; pure DP); Poisson subsampling at any "
    "dim (PLDAccountant, one coin for the coordinates; relation add_remove / add / remove / "
    "replace_one)",
)
MECHANISM = Mechanism(
    NAME, SUMMARY, calibrate, profile, epsilon_for_delta, noise=Staircase, about=ABOUT
)
