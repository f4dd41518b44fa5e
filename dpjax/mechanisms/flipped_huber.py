r"""The flipped Huber mechanism: noise ``FH(alpha, gamma^2)`` per coordinate.

Parameters (flipped-huber-mechanism, Def. 7): ``alpha >= 0`` (transition
from the Laplace centre to the Gaussian tails) and ``gamma > 0`` (scale).

* ``dim = 1``, condition ``"exact"``: the necessary and sufficient profile of
  Theorem 3 (eq. (13)); calibration gives the least-variance ``(alpha, gamma)``.
* condition ``"sufficient"`` (any ``dim``): Theorem 8 with the per-coordinate
  sensitivity ``Delta = linf`` and ``Delta_1 = l1``, ``Delta_2 = l2``
  (missing ones derived soundly, see :mod:`dpjax.sensitivity`).
* ``dim > 1`` with ``"exact"``: the necessary and sufficient condition through
  the PLD engine (``K``-fold composition of the exact 1-D pair at the
  ``linf`` corner, pessimistic discretisation): :mod:`dpjax.calibration.flipped_huber_kdim`.
* ``profile``/``account`` for ``dim > 1`` return a certified upper bound: the
  minimum of Theorem 8 and the zCDP bound of Sec. VI-A.
* ``T`` compositions of a ``K``-dim query are one ``K T``-dim query (the outputs stacked;
  sensitivities ``Delta_1 T``, ``Delta_2 sqrt(T)``, ``Delta_inf``, rounded up): calibration,
  profile and epsilon run on it (:func:`stacked`);
* ``T`` Poisson-subsampled uses of a 1-D query (``0 < q < 1``): the PLD engine's shape
  search on the subsampled pair (:func:`dpjax.calibration.flipped_huber_kdim.
  calibrate_flipped_huber_subsampled`), the profile and epsilon by the engine;
* ``T`` Poisson-subsampled uses of a ``K``-dim query: one coin per use for the ``K``
  coordinates (its subsampled pair is not a product of 1-D pairs): the accountant's profile
  of the ``K``-fold pair at the ``linf`` corner on one coin, under the query's relation, and a
  shape survey from the Gaussian to the Laplace end (:mod:`dpjax.calibration.
  one_coin_family`).
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax._batching import call_padded
from dpjax.accounting import flipped_huber as _acc
from dpjax.accounting import flipped_huber_kdim as _kdim
from dpjax.calibration import members
from dpjax.calibration.flipped_huber import (
    calibrate_flipped_huber_1d,
    calibrate_flipped_huber_sufficient,
)
from dpjax.calibration.flipped_huber_kdim import (
    BIN_WIDTH,
    SHAPES,
    calibrate_flipped_huber_exact_source,
    calibrate_flipped_huber_subsampled,
    variance_by_shape,
)
from dpjax.calibration.gaussian import calibrate_sigma
from dpjax.calibration.result import Calibration
from dpjax.certificate import reported_delta, require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._shape_family import (
    engine_answer,
    on_one_coin,
    one_coin_answer,
    one_coin_calibration,
)
from dpjax.mechanisms._spec import About, Mechanism, Query, calibration
from dpjax.noise.flipped_huber import FlippedHuber
from dpjax.numerics.export_cache import exported_jit

NAME = "flipped-huber"

# the façade is the caller, so it decides to jit (one compile per shape, not per call)
log_delta_flipped_huber = exported_jit(_acc.log_delta_flipped_huber)
log_delta_flipped_huber_sufficient = jax.jit(_kdim.log_delta_flipped_huber_sufficient)
log_delta_flipped_huber_bound = jax.jit(_kdim.log_delta_flipped_huber_bound)
epsilon_flipped_huber = jax.jit(_acc.epsilon_flipped_huber)
epsilon_flipped_huber_bound = jax.jit(_kdim.epsilon_flipped_huber_bound)


def _reported(log_delta, error: float) -> np.ndarray:
    """The delta to report: an upper bound (:func:`dpjax.certificate.reported_delta`)."""
    return np.asarray(reported_delta(log_delta, error))


def _subsampled(query: Query) -> bool:
    """Poisson subsampling with ``0 < q < 1`` (``q = 1`` keeps every record: plain uses)."""
    return query.sampling_rate is not None and query.sampling_rate < 1.0


def _engine_answer(what: str, params: dict, x, query: Query) -> np.ndarray:
    """The PLD engine's ``profile`` or ``epsilon`` of ``T`` Poisson-subsampled uses (the
    accountant's on one coin for a ``K``-dim query)."""
    if on_one_coin(query):
        return one_coin_answer(what, FlippedHuber, params, x, query)
    return engine_answer(what, FlippedHuber, params, x, query.sensitivity.resolve("linf")[0],
                         query.compositions, query.sampling_rate)


def _calibrate_subsampled(epsilon, delta, query: Query) -> Calibration:
    """``T`` Poisson-subsampled uses: of a 1-D query the engine's shape search, of a ``K``-dim
    one the accountant's on one coin (module docstring)."""
    if on_one_coin(query):
        return one_coin_calibration(FlippedHuber, variance_by_shape, epsilon, delta, query)
    linf, notes = query.sensitivity.resolve("linf")
    q, uses = float(query.sampling_rate), int(query.compositions)
    alpha, gamma, variance, delta_at, ok = calibrate_flipped_huber_subsampled(
        epsilon, delta, uses, q, linf)
    require_certified(NAME, ok & (delta_at <= delta), epsilon, delta, delta_at)
    member = members.name_member(alpha / gamma, 0.0, SHAPES[-1], "gaussian", "laplace")
    notes += (
        f"{uses} Poisson-subsampled uses (q = {q}), add and remove adjacency, worse reported: "
        f"PLD engine shape search (pessimistic connect-the-dots, bin width {BIN_WIDTH})",
        "member that won: " + "; ".join(
            f"{m} alpha = {a:.6g}, gamma = {g:.6g} (b = {a / g:.4g})"
            for m, a, g in zip(*(np.ravel(x) for x in (member, alpha, gamma)), strict=True)),
    )
    return calibration(
        NAME, query, params={"alpha": alpha, "gamma": gamma}, variance=variance,
        epsilon=epsilon, delta=delta, delta_at_params=delta_at, sensitivity={"linf": linf},
        notes=notes, condition="exact", member=member,
    )


def _up(x: float) -> float:
    """The next float64 above ``x`` (a rounded product made an upper bound)."""
    return float(np.nextafter(x, np.inf))


def stacked(query: Query) -> tuple[int, dict, tuple[str, ...]]:
    r"""``T`` uses of a ``K``-dim query as one ``K T``-dim query: ``(K T, sensitivities, notes)``.

    The ``T`` outputs, each ``f_t(D) + Z_t`` with i.i.d. ``FH`` coordinates, are one query of
    ``K T`` coordinates whose shift ``(d_1, ..., d_T)`` has

    .. math:: \|d\|_\infty \le \Delta_\infty,\quad \|d\|_1 \le T \Delta_1,\quad
              \|d\|_2 \le \sqrt{T} \Delta_2,

    so adaptive composition of the ``T`` uses is the ``K T``-dim mechanism (the exact
    condition composes the 1-D pair ``K T`` times at the ``linf`` corner; Theorem 8 takes the
    three norms).  Products are rounded up (never below the true sensitivity).

    Args:
      query: the query (``dim``, sensitivities, ``compositions``).

    Returns:
      ``(k, {"l1", "l2", "linf"}, notes)``.
    """
    notes: tuple[str, ...] = ()
    values = {}
    for norm in ("l1", "l2", "linf"):
        values[norm], extra = query.sensitivity.resolve(norm)
        notes += extra
    uses = int(query.compositions)
    if uses > 1:
        values["l1"] = _up(values["l1"] * uses)
        values["l2"] = _up(_up(values["l2"] * _up(float(np.sqrt(uses)))))
        notes += (
            f"{uses} uses of the {query.dim}-dim query stacked into one {query.dim * uses}-dim "
            f"query (l1 x {uses}, l2 x sqrt({uses}), linf unchanged)",
        )
    return query.dim * uses, values, notes


def _exact_1d(k: int, query: Query) -> bool:
    return k == 1 and query.condition == "exact"


def _winner_note(member, alpha, gamma, variance, source, theorem8) -> str:
    """One note naming, per target, the member that won (``"gaussian end"`` ``alpha = 0``,
    ``"laplace end"`` ``b = alpha / gamma`` at the grid's last shape, or ``"interior"``), its
    parameters, where it came from, and Theorem 8's certified variance beside it."""
    parts = []
    for m, a, g, v, s, t in zip(*(np.ravel(x) for x in (
        member, alpha, gamma, variance, source, theorem8)), strict=True):
        name = str(m) if str(m) == members.INTERIOR else f"{m} end"
        parts.append(
            f"{name} alpha = {a:.6g}, gamma = {g:.6g} (b = {a / g:.4g}; {s}); variance "
            f"{v:.6g} <= Theorem 8's member {t:.6g}"
        )
    return "member that won: " + "; ".join(parts)


def _gaussian_end_where_uncertified(epsilon, delta, linf, alpha, gamma, variance, delta_at, ok,
                                    recheck):
    r"""Where the 1-D shape search's member fails its re-check (at ``epsilon = delta =
    1e-300`` it returned the Laplace end with ``alpha = inf``: every member's variance
    overflows float64, so the search cannot rank them), take the Gaussian end instead:
    ``alpha = 0``, ``gamma = sigma`` of the Gaussian calibration at the target (flipped
    Huber with ``alpha = 0`` is the Gaussian, eq. (10) of flipped-huber-mechanism),
    re-checked with the same exact kernel.

    Returns:
      ``(alpha, gamma, variance, delta_at, ok, recheck, fell_back)``.
    """
    alpha, gamma, variance, delta_at, ok, recheck = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.float64) for x in (alpha, gamma, variance, delta_at, ok,
                                                      recheck))
    )
    bad = ~((ok > 0) & (recheck <= delta) & np.isfinite(gamma) & np.isfinite(alpha))
    if not np.any(bad):
        return alpha, gamma, variance, delta_at, ok > 0, recheck, False
    eps_b, delta_b = (np.broadcast_to(x, bad.shape)[bad] for x in (epsilon, delta))
    sigma = np.asarray(calibrate_sigma(eps_b, delta_b, linf)[0], dtype=np.float64)
    zero = np.zeros_like(sigma)
    check = _reported(call_padded(log_delta_flipped_huber, eps_b, zero, sigma, linf), _acc.ERROR)
    alpha, gamma, variance, delta_at, recheck = (
        np.array(x) for x in (alpha, gamma, variance, delta_at, recheck))
    ok = np.array(ok > 0)
    with np.errstate(over="ignore"):
        for arr, val in ((alpha, zero), (gamma, sigma), (variance, np.square(sigma)),
                         (delta_at, check), (recheck, check)):
            arr[bad] = val
    ok[bad] = (check <= delta_b) & np.isfinite(sigma)
    return alpha, gamma, variance, delta_at, ok, recheck, True


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least-variance ``(alpha, gamma)`` meeting the target, certified.

    * 1-D, ``"exact"``: the necessary and sufficient profile of Theorem 3 (eq. (13) of
      flipped-huber-mechanism) at ``Delta = linf``;
    * ``K`` dims, ``"exact"``: the PLD engine's ``K``-fold composition of the exact 1-D
      pair at the ``linf`` corner (:mod:`dpjax.calibration.flipped_huber_kdim`);
    * ``"sufficient"``: Theorem 8 (``Delta_inf``, ``Delta_1``, ``Delta_2``), variance
      ``gamma^2 v(alpha / gamma)`` of eq. (11).

    Every result is re-evaluated at the returned parameters.

    Args:
      epsilon: target epsilons (broadcast with ``delta``).
      delta: target deltas, ``> 0`` (the Gaussian tails give ``delta(eps) > 0``).
      query: ``linf`` (and ``l1``, ``l2`` for Theorem 8), ``K``, ``T`` uses (:func:`stacked`:
        one ``K T``-dim query), or ``T`` Poisson-subsampled uses (module docstring).
    """
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            f"{NAME}: delta = 0 is infeasible "
            "(the Gaussian tails give delta(eps) > 0 for every eps)"
        )
    if _subsampled(query):
        return _calibrate_subsampled(epsilon, delta, query)
    k, sens, notes = stacked(query)
    member = None
    if _exact_1d(k, query):
        linf = sens["linf"]
        alpha, gamma, variance, delta_at, ok = calibrate_flipped_huber_1d(epsilon, delta, linf)
        # independent re-evaluation at exactly the returned parameters
        recheck = _reported(
            call_padded(log_delta_flipped_huber, epsilon, alpha, gamma, linf), _acc.ERROR
        )
        alpha, gamma, variance, delta_at, ok, recheck, fell_back = _gaussian_end_where_uncertified(
            epsilon, delta, linf, alpha, gamma, variance, delta_at, ok, recheck
        )
        if fell_back:
            notes += ("gaussian end (alpha = 0) where the shape search's member could not be "
                      "certified (every member's variance beyond float64 there)",)
        sensitivity = {"linf": linf}
        condition = "exact"
        limits = {
            "gaussian": members.gaussian_limit_variance(epsilon, delta, linf),
            "laplace": members.laplace_limit_variance(epsilon, delta, linf),
        }
    elif query.condition == "exact":
        # K-dim necessary-and-sufficient: PLD engine (K-fold composition of the exact 1-D pair
        # at the per-coordinate sensitivity), shape grid x certified scale search
        linf = sens["linf"]
        alpha, gamma, variance, delta_at, ok, source, thm8 = (
            calibrate_flipped_huber_exact_source(epsilon, delta, k, linf)
        )
        recheck = delta_at
        sensitivity = {"linf": linf}
        condition = "exact"
        # the ends: the Gaussian by its closed form or the grid's shape b = 0 (the engine's
        # pessimistic grid puts the K-fold Gaussian a bit above its closed form at large K);
        # the Laplace member is the grid's last shape b = 1e4 (no closed form for it)
        gauss = members.gaussian_limit_variance(epsilon, delta, np.sqrt(k) * linf)
        member = members.name_by_variance(variance, {"gaussian": gauss})
        at_end = members.name_member(alpha / gamma, 0.0, SHAPES[-1], "gaussian", "laplace")
        member = np.where(member == members.INTERIOR, at_end, member)
        notes += (
            _winner_note(member, alpha, gamma, variance, source, thm8),
            f"exact K-dim condition: PLD engine, {k}-fold composition of the 1-D pair at "
            f"linf = {linf!r} (worst corner of the linf box; pessimistic discretisation)",
        )
    else:
        alpha, gamma, variance, delta_at, ok = calibrate_flipped_huber_sufficient(
            epsilon, delta, k, sens["l1"], sens["l2"], sens["linf"]
        )
        recheck = _reported(
            log_delta_flipped_huber_sufficient(
                epsilon, alpha, gamma, k, sens["l1"], sens["l2"], sens["linf"]
            ),
            _kdim.BOUND_ERROR,
        )
        sensitivity = dict(sens)
        condition = "sufficient"
        # Theorem 8's ends: alpha = 0 is exactly the Gaussian (theta = 0, R = 0); b -> inf
        # forces K R_Delta(alpha) <= 2 gamma^2 eps, i.e. pure eps-DP Laplace of scale l1 / eps
        limits = {
            "gaussian": members.gaussian_limit_variance(epsilon, delta, sens["l2"]),
            "laplace": members.laplace_limit_variance(epsilon, 0.0, sens["l1"]),
        }
        notes += (
            "Theorem 8 sufficient condition (per-coordinate linf, l1, l2)",
            "Laplace limit member (b -> inf) in closed form: variance 2 (l1 / eps)^2 = "
            + np.array2string(np.asarray(limits["laplace"]), precision=6),
        )
    if member is None:
        member = members.name_by_variance(variance, limits)
    delta_at = np.maximum(delta_at, recheck)
    ok = np.asarray(ok) & (recheck <= delta) & np.isfinite(gamma)
    require_certified(NAME, ok, epsilon, delta, delta_at)
    return calibration(
        NAME, query, params={"alpha": alpha, "gamma": gamma}, variance=variance,
        epsilon=epsilon, delta=delta, delta_at_params=delta_at, sensitivity=sensitivity,
        notes=notes, condition=condition, member=member,
    )


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    r"""``delta(epsilon)`` of ``FH(alpha, gamma^2)`` noise, reported as an upper bound.

    1-D: the exact profile of Theorem 3 (eq. (13) of flipped-huber-mechanism); ``K`` dims:
    the minimum of Theorem 8 and the zCDP bound of Theorem 9 (a certified upper bound).

    Args:
      params: ``{"alpha", "gamma"}`` (validated).
      epsilon: the epsilons to evaluate at.
      query: ``linf`` (and ``l1``, ``l2`` in ``K`` dims), ``T`` uses (:func:`stacked`).
    """
    return _answer(
        "profile", params, epsilon, query,
        lambda *a: _reported(call_padded(log_delta_flipped_huber, *a), _acc.ERROR),
        lambda *a: _reported(log_delta_flipped_huber_bound(*a), _kdim.BOUND_ERROR),
    )


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    r"""Least certified ``epsilon`` of ``FH(alpha, gamma^2)`` noise at ``delta``.

    The inverse of eq. (13) in 1-D, of the Theorem 8 / zCDP bound in ``K`` dims.

    Args:
      params: as for :func:`profile`; query likewise.
      delta: the deltas to invert at.
    """
    return _answer(
        "epsilon", params, delta, query,
        lambda *a: call_padded(epsilon_flipped_huber, *a),
        lambda *a: np.asarray(epsilon_flipped_huber_bound(*a)),
    )


def _answer(kind: str, params: dict, x: np.ndarray, query: Query, one_dim, k_dim):
    """The answer of :func:`profile` (``kind = "profile"``) or :func:`epsilon_for_delta`
    (``"epsilon"``) at ``x``: the PLD engine's under Poisson subsampling, else ``one_dim(x,
    alpha, gamma, linf)`` in 1-D and ``k_dim(x, alpha, gamma, K, l1, l2, linf)`` in ``K``
    dims."""
    if _subsampled(query):
        return _engine_answer(kind, params, x, query)
    k, sens, _ = stacked(query)
    alpha, gamma = params["alpha"], params["gamma"]
    if k == 1:
        return one_dim(x, alpha, gamma, sens["linf"])
    return k_dim(x, alpha, gamma, k, sens["l1"], sens["l2"], sens["linf"])


SUMMARY = (
    "flipped Huber FH(alpha, gamma^2): Laplace centre, Gaussian tails; exact 1-D (Thm 3), "
    "sufficient K-dim (Thm 8)"
)
ABOUT = About(
    "flipped-huber-mechanism", ("linf", "l1", "l2"),
    "1-D exact (Thm 3); K dims exact (PLD engine) or Thm 8; T uses as one K T-dim query; "
    "Poisson-subsampled uses by the PLD engine (1-D) or the accountant (K dims, one coin)",
)
MECHANISM = Mechanism(
    NAME, SUMMARY, calibrate, profile, epsilon_for_delta, noise=FlippedHuber,
    conditions=("exact", "sufficient"), about=ABOUT
)
