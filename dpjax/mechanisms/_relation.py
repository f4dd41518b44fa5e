r"""Calibration under a neighbouring relation other than add-or-remove.

The registry's continuous mechanisms calibrate ``"add_remove"`` (the worse of adding and
removing a record).  Other relations (dp_accounting's conventions, as
``dpjax.account(event, relation=...)``):

* without Poisson subsampling (or at ``q = 1``, which keeps every record), additive noise
  that is symmetric gives the *same* pair for adding and for removing a record, so
  ``"add"`` and ``"remove"`` are ``"add_remove"``; ``"replace_one"`` moves the query by up
  to twice the sensitivity (one record leaves, another arrives): the calibration at the
  doubled sensitivities (dp_accounting's ``REPLACE`` adjacency: "twice the sensitivity");
* with Poisson subsampling ``0 < q < 1`` the directions differ: ``gaussian`` and
  ``laplace`` are calibrated by bisection on the certified profile of their events
  (``T`` uses of ``PoissonSampled(q, Gaussian(sigma / Delta_2))`` /
  ``Laplace(b / Delta_1)``) under the relation (:func:`dpjax.calibration.event_scale.
  calibrate_event_scale`, re-checked at the returned scale); ``flipped-huber`` and
  ``osgt`` (a 1-D query) keep the shape (``alpha / gamma``, ``vartheta / rho``) of their
  add-or-remove calibration (the engine's shape search) and re-search the scale the same
  way on ``PoissonSampled(q, Noise(name, ...))`` under the relation; ``staircase``,
  ``truncated-laplace``, ``spherical``, and ``laplace``, ``flipped-huber`` and ``osgt`` in
  ``K > 1`` dimensions (one coin for the coordinates: :mod:`dpjax.mechanisms.laplace`,
  :mod:`dpjax.calibration.one_coin_family`) take the relation themselves (their subsampled
  calibrations are searches on their own profiles, :mod:`dpjax.mechanisms.staircase`,
  :mod:`dpjax.mechanisms.truncated_laplace`, :mod:`dpjax.mechanisms.spherical`; the last two
  refuse ``replace_one`` there, no worst pair of contributions being known); a family
  outside these lists raises ``NotImplementedError``;
* the discrete mechanisms take the relation themselves (their accounting is the event's).

Under ``"add"`` with Poisson subsampling the target may need no noise at all: the output
law with the record added, ``(1 - q) P + q P'``, is at least ``(1 - q) P``, so every
mechanism's loss is at most ``log(1 / (1 - q))`` per use and

.. math:: \delta_{\text{add}}(\epsilon) \le 1 - e^{\epsilon} (1 - q)^T

for any noise; a target with ``delta`` at least this raises
:class:`~dpjax.errors.TrivialTargetError` (a search would return the end of its range).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpjax.accounting import events as ev
from dpjax.calibration.event_scale import COARSE, calibrate_event_scale
from dpjax.calibration.result import Calibration
from dpjax.errors import InfeasibleTargetError, TrivialTargetError
from dpjax.mechanisms._discrete import ledger
from dpjax.mechanisms._shape_family import SCALE_AND_SHAPE
from dpjax.mechanisms._spec import Mechanism, Query, calibration, unsupported
from dpjax.sensitivity import Sensitivity

#: The continuous mechanisms calibrated through their events under Poisson subsampling.
_EVENT_FAMILIES = ("gaussian", "laplace")
#: ... and those whose shape comes from their add-or-remove calibration first.
_SHAPE_EVENT_FAMILIES = SCALE_AND_SHAPE
#: ... and those whose own subsampled calibration honours the relation.
_OWN_SUBSAMPLED_RELATION = ("staircase", "truncated-laplace", "spherical")


def _doubled(s: Sensitivity) -> Sensitivity:
    """The stated sensitivities times two (exact in float64)."""
    two = {n: (None if getattr(s, n) is None else 2.0 * float(getattr(s, n)))
           for n in ("l1", "l2", "linf")}
    return Sensitivity(dim=s.dim, **two)


def equivalent_query(mech: Mechanism, query: Query) -> tuple[Query | None, str | None]:
    """A query whose add-or-remove answers (or the mechanism's own, under the relation) are
    ``mech``'s answers under ``query.relation`` (module docstring), with the note saying
    why; ``(None, None)`` where only the events under the relation can tell.

    Args:
      mech: the mechanism.
      query: the query (its ``relation``, ``sampling_rate`` and ``dim``).
    """
    relation = query.relation
    if relation == "add_remove" or mech.domain == "integer":
        return query, None
    plain = dataclasses.replace(query, relation="add_remove")
    q = query.sampling_rate
    if q is None or q == 1.0:
        if relation in ("add", "remove"):
            return plain, (f"relation {relation}: without subsampling symmetric additive noise "
                           "has the same pair for adding and removing a record (= add_remove)")
        doubled = dataclasses.replace(plain, sensitivity=_doubled(query.sensitivity))
        return doubled, ("relation replace_one: one record replaced moves the query by up to "
                         "twice its sensitivity; taken at the doubled sensitivities "
                         "(dp_accounting's REPLACE convention)")
    if mech.name in _OWN_SUBSAMPLED_RELATION or (
            query.dim > 1 and (mech.name == "laplace" or mech.name in _SHAPE_EVENT_FAMILIES)):
        return query, None
    return None, None


def _unsupported_relation(mech: Mechanism, relation: str) -> NotImplementedError:
    return unsupported(
        mech.name, f"relation {relation!r} with Poisson subsampling (gaussian, laplace, "
        "flipped-huber, osgt, staircase, truncated-laplace, spherical, discrete-laplace "
        "and discrete-gaussian support it; add_remove bounds every direction)",
    )


def calibrate_under(mech: Mechanism, epsilon, delta, query: Query) -> Calibration:
    """:meth:`Mechanism.calibrate_certified` under ``query.relation`` (module docstring).

    Args:
      mech: the mechanism.
      epsilon, delta: validated, broadcast float64 targets.
      query: the query (its ``relation``).

    Raises:
      NotImplementedError: a relation under Poisson subsampling that ``mech`` cannot honour.
    """
    if query.relation == "add":
        _require_noise(mech.name, epsilon, delta, query)
    same, note = equivalent_query(mech, query)
    if same is not None:
        cal = mech.calibrate_certified(epsilon, delta, same)
        return cal if note is None else dataclasses.replace(cal, notes=cal.notes + (note,))
    if mech.name in _SHAPE_EVENT_FAMILIES:
        return _shape_then_event(mech, epsilon, delta, query)
    if mech.name not in _EVENT_FAMILIES:
        raise _unsupported_relation(mech, query.relation)
    return _event_calibration(mech, epsilon, delta, query)


def accounted_under(mech: Mechanism, params: dict, query: Query) -> Query | ev.Event:
    r"""What :func:`dpjax.profile` and :func:`dpjax.account` evaluate for ``params`` under
    ``query.relation``: a query at which ``mech``'s own profile is the relation's
    (:func:`equivalent_query`), or else the ledger of events (``T`` uses of
    ``PoissonSampled(q, release)``, the release in sensitivity units) that
    :class:`~dpjax.accounting.PLDAccountant` accounts under the relation.  Without
    subsampling, for symmetric additive noise,

    .. math:: \delta_{\text{add}} = \delta_{\text{remove}} = \delta_{\text{add\_remove}}
              \big|_{\Delta}, \qquad \delta_{\text{replace\_one}} =
              \delta_{\text{add\_remove}}\big|_{2 \Delta}

    (one record replaced moves the query by at most ``2 Delta``; dp_accounting's ``REPLACE``).

    Args:
      mech: the mechanism.
      params: its validated parameters (one value each on the events' route).
      query: the query (its ``relation``).

    Raises:
      NotImplementedError: a relation under Poisson subsampling that ``mech`` cannot honour.
      ValueError: several parameter values on the events' route.
    """
    same, _ = equivalent_query(mech, query)
    if same is not None:
        return same
    if mech.name not in _EVENT_FAMILIES and mech.name not in _SHAPE_EVENT_FAMILIES:
        raise _unsupported_relation(mech, query.relation)
    if any(np.ndim(v) for v in params.values()):
        raise ValueError(f"{mech.name}: under relation {query.relation!r} with Poisson "
                         "subsampling, give one parameter set at a time")
    return ledger(_release(mech.name, {k: float(v) for k, v in params.items()}, query), query)


def _release(name: str, params: dict, query: Query) -> ev.Event:
    """One release of ``name`` with ``params``, in units of the query's sensitivity: the
    Gaussian at ``l2``, the Laplace at ``l1``, a shape family's noise at ``linf``."""
    if name == "gaussian":
        return ev.Gaussian(params["sigma"] / query.sensitivity.resolve("l2")[0])
    if name == "laplace":
        return ev.Laplace(params["scale"] / query.sensitivity.resolve("l1")[0])
    linf, _ = query.sensitivity.resolve("linf")
    return ev.Noise(name, {k: v / linf for k, v in params.items()})


def no_noise_add_bound(epsilon, sampling_rate: float, uses: int) -> np.ndarray:
    r"""Upper bound on ``delta(epsilon)`` under ``"add"`` that holds for *every* mechanism.

    .. math:: \delta_{\text{add}}(\epsilon) \le \big(1 - e^{\epsilon} (1 - q)^T\big)_+

    (module docstring): the exponent ``epsilon + T log(1 - q)`` is lowered by its rounding
    and the result raised by ``4 u`` relative, so the bound stays an upper bound.

    Args:
      epsilon: ``epsilon >= 0`` (array).
      sampling_rate: Poisson rate ``q`` in ``(0, 1)``.
      uses: ``T >= 1``.

    Returns:
      The bound, NumPy float64 (``0`` where ``epsilon >= T log(1 / (1 - q))``).

    Example:
      >>> round(float(no_noise_add_bound(0.1, 0.2, 1)), 6)  # 1 - 0.8 e^0.1
      0.115863
    """
    eps = np.asarray(epsilon, np.float64)
    log_stay = uses * math.log1p(-float(sampling_rate))
    u = np.finfo(np.float64).eps
    x = (eps + log_stay) - 4.0 * u * (np.abs(eps) + abs(log_stay))
    return np.maximum(-np.expm1(x), 0.0) * (1.0 + 4.0 * u)


def _require_noise(name: str, epsilon, delta, query: Query) -> None:
    """Raise :class:`TrivialTargetError` where the ``"add"`` target holds without noise."""
    q = query.sampling_rate
    if q is None or q >= 1.0:
        return
    bound = no_noise_add_bound(epsilon, q, query.compositions)
    trivial = np.asarray(delta, np.float64) >= bound
    if np.any(trivial):
        i = np.unravel_index(int(np.argmax(trivial)), np.shape(trivial)) if trivial.ndim else ()
        eps_i, dlt_i = (float(np.broadcast_to(v, trivial.shape)[i]) for v in (epsilon, delta))
        raise TrivialTargetError(
            f"{name}: (epsilon={eps_i:g}, delta={dlt_i:g}) under relation 'add' holds without "
            f"noise: with Poisson rate q = {q:g} and T = {query.compositions} uses, adding a "
            f"record changes any output law by at most a factor 1/(1 - q) per use, so "
            f"delta(epsilon) <= 1 - e^epsilon (1 - q)^T = {float(bound[i]):.6g} <= delta for "
            "every noise level (calibrate under 'remove' or 'add_remove' to protect removals)"
        )


def _shape_then_event(mech: Mechanism, epsilon, delta, query: Query) -> Calibration:
    """A shape family under Poisson subsampling and ``query.relation``: the shape of the
    add-or-remove calibration, the scale re-searched on the certified profile of the events
    under the relation (module docstring)."""
    plain = dataclasses.replace(query, relation="add_remove")
    base = mech.calibrate_certified(epsilon, delta, plain)
    scale_name, other = _SHAPE_EVENT_FAMILIES[mech.name]
    linf, _ = query.sensitivity.resolve("linf")
    relation = query.relation
    scale, along = np.broadcast_arrays(*(np.asarray(base.params[n], np.float64)
                                         for n in (scale_name, other)))
    eps = np.broadcast_to(np.asarray(epsilon, np.float64), scale.shape)
    dlt = np.broadcast_to(np.asarray(delta, np.float64), scale.shape)
    new_scale, delta_at = np.empty(scale.shape), np.empty(scale.shape)
    for i in np.ndindex(scale.shape):
        shape = float(along[i] / scale[i])

        def build(s, shape=shape):
            s = float(s)
            return ledger(_release(mech.name, {other: shape * s, scale_name: s}, query), query)

        guess = (2.0 if relation == "replace_one" else 1.0) * float(scale[i])
        new_scale[i], delta_at[i] = calibrate_event_scale(
            build, eps[i], dlt[i], relation, guess, name=mech.name,
            lo_limit=1e-6 * linf, hi_limit=1e12 * linf,
        )
    ratio = new_scale / scale
    notes = base.notes + (
        f"relation {relation}: the shape {other} / {scale_name} of the add_remove calibration "
        f"kept, {scale_name} re-searched on the PLDAccountant of the events (pessimistic "
        "connect-the-dots) by bisection",
    )
    return dataclasses.replace(
        base, params={other: np.asarray(along * ratio), scale_name: new_scale},
        variance=np.asarray(base.variance) * ratio**2, mse=np.asarray(base.mse) * ratio**2,
        delta_at_params=delta_at, notes=notes,
    )


def _event_calibration(mech: Mechanism, epsilon, delta, query: Query) -> Calibration:
    """Gaussian or Laplace under Poisson subsampling and ``query.relation``: bisection on the
    certified profile of the ledger of events, in units of the resolved sensitivity."""
    gaussian = mech.name == "gaussian"
    norm = "l2" if gaussian else "l1"
    sens, notes = query.sensitivity.resolve(norm)
    q, uses = float(query.sampling_rate), query.compositions
    if gaussian and np.any(np.asarray(delta) == 0):
        raise InfeasibleTargetError(
            "gaussian: delta = 0 is infeasible (every Gaussian mechanism has delta(eps) > 0)")
    name = "sigma" if gaussian else "scale"

    def build(scale):
        return ledger(_release(mech.name, {name: float(scale)}, query), query)

    # a start: the un-subsampled pure/closed-form scale (subsampling never hurts)
    shift = 2.0 if query.relation == "replace_one" else 1.0
    eps = np.maximum(np.asarray(epsilon, np.float64), 1e-3)
    if gaussian:
        dlt = np.clip(np.asarray(delta, np.float64), 1e-300, 0.5)
        guess = shift * sens * math.sqrt(uses) * np.sqrt(2.0 * np.log(1.25 / dlt)) / eps
    else:
        guess = shift * sens * uses / eps
    scale, delta_at = calibrate_event_scale(
        build, epsilon, delta, query.relation, q * guess, name=mech.name,
        lo_limit=1e-6 * sens, hi_limit=1e12 * sens, coarse=COARSE,
    )
    notes += (
        f"{uses} Poisson-subsampled uses (q = {q}), relation {query.relation}: PLDAccountant of "
        "the events (pessimistic connect-the-dots), bisection on the scale",
    )
    variance = scale**2 if gaussian else 2.0 * scale**2
    params = {name: scale}
    return calibration(
        mech.name, query, params=params, variance=variance, epsilon=epsilon, delta=delta,
        delta_at_params=delta_at, sensitivity={norm: sens}, notes=notes,
    )
