"""The public entry points: :func:`calibrate`, :func:`profile`, :func:`account`
(and :func:`dpjax.design`, which compares every mechanism for one target).

Each validates its input (``ValueError`` naming the argument), resolves the
sensitivities soundly (:mod:`dpjax.sensitivity`), runs the mechanism's
float64 kernels inside a scoped ``jax.enable_x64(True)`` context (dpjax never
flips x64 globally) and returns NumPy float64 results.

Every number returned is certified at this boundary (fail closed):

* :func:`calibrate`: the mechanism certifies ``delta_at_params <= delta``; the
  returned parameters must themselves be valid parameters (finite, normal
  float64), else :class:`~dpjax.errors.CertificationError`;
* :func:`account` with ``delta``: the mechanism's profile is re-evaluated at the
  returned epsilon (:func:`dpjax.certificate.certify_epsilon`), so an
  epsilon is returned only if its own profile is ``<= delta``;
* :func:`profile` / :func:`account` with ``epsilon``: reported deltas are upper
  bounds (:func:`dpjax.certificate.reported_delta`); a NaN raises.
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax import _validate
from dpjax.accounting import PLDAccountant
from dpjax.accounting.bracket import EpsilonBracket
from dpjax.accounting.bracket.refine import (  # noqa: F401  (MAX_REFINEMENTS: tests)
    MAX_REFINEMENTS,
    refine_bracket,
    validate_epsilon_error,
)
from dpjax.accounting.events import Event
from dpjax.calibration.result import Calibration
from dpjax.certificate import certify_epsilon
from dpjax.errors import CertificationError
from dpjax.mechanisms import CONDITIONS, accounted_under, calibrate_under, get, make_query

__all__ = ["CONDITIONS", "EpsilonBracket", "account", "calibrate", "profile"]

#: Where the ends of :func:`account`'s bracket come from.
_FACADE_NOTE = ("lower: the optimistic PLD (or the family's exact lower end), every error "
                "subtracted; upper: the certified epsilon account returns")


def _use(dim, l1, l2, linf, compositions, sampling_rate) -> dict:
    """The query's keyword arguments, as :func:`~dpjax.mechanisms.make_query` takes them."""
    return {"dim": dim, "l1": l1, "l2": l2, "linf": linf, "compositions": compositions,
            "sampling_rate": sampling_rate}


def _output(arr: np.ndarray, what: str = "value"):
    arr = np.asarray(arr, dtype=np.float64)
    if np.any(np.isnan(arr)):
        raise CertificationError(f"the computed {what} is NaN: dpjax cannot certify it")
    return float(arr) if arr.ndim == 0 else arr


def calibrate(
    mechanism: str,
    epsilon,
    delta,
    *,
    dim: int = 1,
    l1: float | None = None,
    l2: float | None = None,
    linf: float | None = None,
    compositions: int = 1,
    sampling_rate: float | None = None,
    condition: str = "exact",
    relation: str = "add_remove",
) -> Calibration:
    r"""Least-error parameters of ``mechanism`` meeting ``(epsilon, delta)``, certified.

    .. math:: \min_\theta \mathrm{Var}(T_\theta)\quad\text{s.t.}\quad
              \delta_\theta(\epsilon) \le \delta

    with ``delta_theta`` the mechanism's privacy profile (e.g. eq. (13) of
    flipped-huber-mechanism for ``flipped-huber``, eq. (29) for ``gaussian``).
    ``epsilon`` and ``delta`` may be arrays (broadcast together; one calibration per
    element in one vectorised call).  The result's ``delta_at_params`` is the privacy
    profile re-evaluated at the returned parameters and is always ``<= delta``; if
    dpjax cannot certify, it raises :class:`dpjax.errors.CertificationError`.  Targets
    no parameter can meet raise :class:`dpjax.errors.InfeasibleTargetError`; targets that
    hold without noise (``relation="add"`` under Poisson rate ``q`` with ``delta >= 1 -
    e^epsilon (1 - q)^T``) raise :class:`dpjax.errors.TrivialTargetError`.

    Args:
      mechanism: a registry name (:func:`dpjax.mechanisms.names`).
      epsilon: target ``epsilon >= 0`` (number or array).
      delta: target ``delta`` in ``[0, 1)`` (number or array).
      dim: number of coordinates ``K``.
      l1, l2, linf: the query's sensitivities (at least one; missing ones derived soundly).
      compositions: number of uses ``T``.
      sampling_rate: Poisson subsampling rate ``q`` in ``(0, 1]``, or ``None``.
      condition: ``"exact"`` (necessary and sufficient) or ``"sufficient"``.
      relation: the neighbouring relation (dp_accounting's): ``"add_remove"`` (default: the
        worse of adding and removing a record), ``"add"``, ``"remove"`` or ``"replace_one"``.
        Without subsampling, additive symmetric noise has one pair for add and remove, and
        ``"replace_one"`` is the calibration at twice the sensitivities (dp_accounting's
        ``REPLACE`` convention); with Poisson subsampling the relation is honoured exactly
        for ``gaussian``, ``laplace``, ``staircase`` and the discrete mechanisms (certified
        profile of their events, :mod:`dpjax.mechanisms._relation`), others raise
        ``NotImplementedError``.

    Returns:
      A :class:`~dpjax.Calibration` (arrays shaped like the broadcast targets).

    Example:
      >>> import dpjax
      >>> cal = dpjax.calibrate("gaussian", epsilon=0.3, delta=1e-6, l2=1.0)
      >>> round(float(cal.variance), 3)
      168.802
    """
    mech = get(mechanism)
    eps, dlt = _validate.broadcast(
        epsilon=_validate.epsilon(epsilon), delta=_validate.delta(delta)
    )
    use = _use(dim, l1, l2, linf, compositions, sampling_rate) | {"relation": relation}
    query = make_query(mech, use, condition)
    with jax.enable_x64(True):
        return calibrate_under(mech, eps, dlt, query)


def profile(
    mechanism: str,
    params: dict,
    epsilon,
    *,
    dim: int = 1,
    l1: float | None = None,
    l2: float | None = None,
    linf: float | None = None,
    compositions: int = 1,
    sampling_rate: float | None = None,
    relation: str = "add_remove",
) -> np.ndarray | float:
    r"""Privacy profile ``delta(epsilon)`` of ``mechanism`` with ``params``.

    .. math:: \delta(\epsilon) = \sup_{D \simeq D'} \sup_S
              \big(P[M(D) \in S] - e^\epsilon P[M(D') \in S]\big)

    Exact where the mechanism's profile is exact (e.g. eq. (13) of
    flipped-huber-mechanism), otherwise a certified upper bound (the mechanism's
    docstring says which).  With no sensitivity given, ``dim = 1`` and unit sensitivity
    are assumed (``params`` in units of the sensitivity, e.g. a noise multiplier).

    Args:
      mechanism: a registry name (:func:`dpjax.mechanisms.names`).
      params: parameter name -> value, in the papers' notation (e.g. ``{"sigma": 2.0}``).
      epsilon: the epsilons (number or array).
      dim: number of coordinates ``K``.
      l1, l2, linf: the query's sensitivities.
      compositions: number of uses ``T``.
      sampling_rate: Poisson subsampling rate ``q`` in ``(0, 1]``, or ``None``.
      relation: the neighbouring relation, as for :func:`calibrate`: ``"add_remove"``
        (default), ``"add"``, ``"remove"`` or ``"replace_one"`` (without subsampling the
        add-or-remove profile, at twice the sensitivities for ``"replace_one"``; with Poisson
        subsampling the mechanism's own profile under the relation, or for ``gaussian``,
        ``laplace``, ``flipped-huber`` and ``osgt`` on a 1-D query the certified profile of
        their events under it, :func:`dpjax.mechanisms.accounted_under`).

    Returns:
      ``delta`` (a float for a scalar ``epsilon``, else an array).

    Example:
      >>> import dpjax
      >>> float(dpjax.profile("laplace", {"scale": 1.0}, epsilon=0.0, l1=1.0))  # doctest: +ELLIPSIS
      0.393469...
    """
    mech = get(mechanism)
    eps = _validate.epsilon(epsilon)
    params = mech.validate_params(params)
    use = _use(dim, l1, l2, linf, compositions, sampling_rate) | {"relation": relation}
    route = accounted_under(mech, params, make_query(mech, use, "exact", True))
    if isinstance(route, Event):
        return account(route, epsilon=eps, relation=relation)
    with jax.enable_x64(True):
        return _output(mech.profile(params, eps, route), "delta")


def account(
    mechanism,
    params: dict | None = None,
    *,
    compositions: int = 1,
    sampling_rate: float | None = None,
    epsilon=None,
    delta=None,
    dim: int = 1,
    l1: float | None = None,
    l2: float | None = None,
    linf: float | None = None,
    relation: str = "add_remove",
    bracket: bool = False,
    epsilon_error: float | None = None,
) -> np.ndarray | float | EpsilonBracket:
    r"""Privacy of ``params`` after ``compositions`` uses (optionally subsampled), or of an event.

    ``mechanism`` may instead be an event of :mod:`dpjax.accounting.events` (or a
    dp_accounting ``DpEvent``): it is then accounted by
    :class:`dpjax.accounting.PLDAccountant` under ``relation``; the event carries its uses,
    sampling and sensitivities, so ``params``, ``compositions``, ``sampling_rate``, ``dim``
    and the sensitivities must be left at their defaults (``ValueError`` otherwise).

    Give exactly one of ``delta`` (returns the least certified
    ``epsilon = min{eps : delta(eps) <= delta}``, re-checked at the boundary) or
    ``epsilon`` (returns ``delta(epsilon)``, as :func:`profile`).  Sensitivity defaults to
    1 (so ``sigma`` is the noise multiplier, as in DP-SGD).

    Args:
      mechanism: a registry name (:func:`dpjax.mechanisms.names`), or an event.
      params: parameter name -> value, in the papers' notation (not for events).
      compositions: number of uses ``T``.
      sampling_rate: Poisson subsampling rate ``q`` in ``(0, 1]``, or ``None``.
      epsilon: the epsilon to evaluate ``delta`` at (or ``None``).
      delta: the delta to find the least certified ``epsilon`` for (or ``None``).
      dim: number of coordinates ``K``.
      l1, l2, linf: the query's sensitivities.
      relation: the neighbouring relation (``"add_remove"``, ``"add"``, ``"remove"``,
        ``"replace_one"``; events also ``"replace_special"``): for a registry mechanism as
        :func:`profile` takes it.
      bracket: with ``delta``, also a certified lower end of epsilon (an
        :class:`~dpjax.accounting.bracket.EpsilonBracket`).
      epsilon_error: with ``bracket=True``, the width ``upper - lower`` asked for (as
        prv-accountant's ``eps_error``): the loss grid is refined (bin width halved, up to
        :data:`~dpjax.accounting.bracket.refine.MAX_REFINEMENTS` times) until every
        bracket is at most this wide; where the grid cannot get finer within its memory
        cap, the narrowest brackets found are returned (still certified) with an
        :class:`~dpjax.accounting.pld.plan.EngineNote` warning.  ``None``: the default grid.

    Returns:
      ``epsilon`` (given ``delta``) or ``delta`` (given ``epsilon``); with ``bracket=True`` a
      :class:`~dpjax.accounting.bracket.EpsilonBracket` ``(lower, upper)`` whose ``epsilon``
      (= ``upper``) is that same value and ``bracket = (lower, upper)``
      (``upper = epsilon``; ``lower`` from the mechanism's optimistic accounting, 0 where it
      has none).

    Example:
      >>> import dpjax
      >>> round(float(dpjax.account("gaussian", {"sigma": 1.0}, delta=1e-5)), 4)
      4.3772
      >>> from dpjax.accounting import events as ev
      >>> round(dpjax.account(ev.Composed([ev.Gaussian(3.0), ev.Gaussian(4.0)]), delta=1e-5), 4)
      1.627
    """
    if (epsilon is None) == (delta is None):
        raise ValueError("give exactly one of epsilon (to get delta) or delta (to get epsilon)")
    if bracket and delta is None:
        raise ValueError("bracket=True brackets epsilon: give delta")
    if epsilon_error is not None:
        err = validate_epsilon_error(epsilon_error)
        if not bracket:
            raise ValueError("epsilon_error sets the width of the bracket: give bracket=True")
    if not isinstance(mechanism, str):
        _refuse_query_arguments(params, compositions, sampling_rate, dim, l1, l2, linf)
        acc = PLDAccountant(relation).compose(mechanism)
        if bracket:
            dlt = _validate.delta(delta)

            def ledger_bracket(acc=acc):
                lo, up = np.vectorize(acc.bracket, otypes=[float, float])(dlt)
                up = _output(up, "epsilon")
                return EpsilonBracket(_output(lo, "epsilon"), up, _FACADE_NOTE)

            if epsilon_error is None:
                return ledger_bracket()
            return _refined_ledger(mechanism, relation, dlt, err)
        if delta is not None:
            values = np.vectorize(acc.get_epsilon, otypes=[float])(_validate.delta(delta))
            return _output(values, "epsilon")
        values = np.vectorize(acc.get_delta, otypes=[float])(_validate.epsilon(epsilon))
        return _output(values, "delta")
    if params is None:
        raise ValueError(f"{mechanism}: give params (e.g. {{'sigma': 1.0}})")
    mech = get(mechanism)
    params = mech.validate_params(params)
    use = _use(dim, l1, l2, linf, compositions, sampling_rate) | {"relation": relation}
    route = accounted_under(mech, params, make_query(mech, use, "exact", True))
    if isinstance(route, Event):
        return account(route, epsilon=epsilon, delta=delta, relation=relation, bracket=bracket,
                       epsilon_error=epsilon_error)
    query = route
    with jax.enable_x64(True):
        if delta is not None:
            dlt = _validate.delta(delta)
            if not bracket:
                return _certified_epsilon(mech, params, dlt, query)
            if epsilon_error is None:
                return _bracket(mech, params, dlt, query)
            return _refined(lambda: _bracket(mech, params, dlt, query), err)
        return _output(mech.profile(params, _validate.epsilon(epsilon), query), "delta")


def query_arguments_given(params, compositions, sampling_rate, dim, l1, l2, linf) -> list[str]:
    """The names of the query's arguments given a value other than their default (``None``,
    or one for ``compositions`` and ``dim``): what an event, which carries its own uses, rate
    and sensitivities, must not be given (here and in ``dpjax account --events``).

    Args:
      params, compositions, sampling_rate, dim, l1, l2, linf: as given to :func:`account`.

    Returns:
      The names given, in the order params, sampling_rate, l1, l2, linf, compositions, dim.

    Example:
      >>> query_arguments_given(None, 100, None, 1, 1.0, None, None)
      ['l1', 'compositions']
    """
    given = [n for n, v in (("params", params), ("sampling_rate", sampling_rate), ("l1", l1),
                            ("l2", l2), ("linf", linf)) if v is not None]
    return given + [n for n, v in (("compositions", compositions), ("dim", dim))
                    if not (np.ndim(v) == 0 and v == 1)]


def _refuse_query_arguments(params, compositions, sampling_rate, dim, l1, l2, linf) -> None:
    """Raise where an event comes with a query's arguments: the event carries its uses, rate
    and sensitivities, and accounting it as given while ignoring them would fail open."""
    given = query_arguments_given(params, compositions, sampling_rate, dim, l1, l2, linf)
    if given:
        raise ValueError(
            f"an event carries its uses, sampling and sensitivities: {', '.join(given)} "
            "apply to a registry mechanism (compose the event instead, e.g. "
            "SelfComposed(PoissonSampled(q, event), T))")


def _refined_ledger(event, relation, dlt, epsilon_error: float) -> EpsilonBracket:
    """:meth:`~dpjax.accounting.PLDAccountant.bracket` with ``epsilon_error`` at each delta."""
    acc = PLDAccountant(relation).compose(event)
    lo, up = np.vectorize(lambda d: acc.bracket(d, epsilon_error=epsilon_error),
                          otypes=[float, float])(dlt)
    up = _output(up, "epsilon")
    return EpsilonBracket(_output(lo, "epsilon"), up, _FACADE_NOTE)


def _certified_epsilon(mech, params, dlt, query):
    eps = _output(mech.epsilon_for_delta(params, dlt, query), "epsilon")
    return _output(
        certify_epsilon(mech.name, lambda e: mech.profile(params, e, query), eps, dlt),
        "epsilon",
    )


def _bracket(mech, params, dlt, query) -> EpsilonBracket:
    eps = _certified_epsilon(mech, params, dlt, query)
    lower = np.zeros_like(dlt) if mech.epsilon_lower is None else (
        mech.epsilon_lower(params, dlt, query))
    return EpsilonBracket(_output(np.minimum(lower, eps), "epsilon"), eps, _FACADE_NOTE)


def _refined(compute, epsilon_error: float) -> EpsilonBracket:
    """:func:`~dpjax.accounting.bracket.refine.refine_bracket` of an :class:`EpsilonBracket`."""
    lo, up = refine_bracket(lambda: compute().bracket, epsilon_error)
    up = _output(up, "epsilon")
    return EpsilonBracket(_output(lo, "epsilon"), up, _FACADE_NOTE)
