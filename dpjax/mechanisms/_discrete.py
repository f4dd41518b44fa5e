r"""Discrete noise on integer queries: the glue shared by ``discrete-laplace`` and
``discrete-gaussian``.

Both are accounted exactly by :class:`~dpjax.accounting.PLDAccountant` (their pairs are
atoms: :mod:`dpjax.accounting.pld.finite_pairs`), under any neighbouring relation of
:data:`~dpjax.mechanisms._spec.RELATIONS` (replace-one: the shift ``2 Delta``; Poisson-
subsampled, the pair ``(1 - q) X + q (X + Delta)`` against ``(1 - q) X + q (X - Delta)``), ``T``
compositions and Poisson subsampling at rate ``q``; calibration bisects the scale on that
certified profile (:func:`dpjax.calibration.event_scale.calibrate_event_scale`), re-checked
at the returned parameter.  One release in one dimension, integer sensitivity ``Delta``
(``linf``; ``l1 = l2 = linf`` when ``dim = 1``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.calibration.event_scale import calibrate_event_scale
from dpjax.certificate import require_certified
from dpjax.mechanisms._spec import About, Mechanism, Query, calibration, integer_sensitivity


def ledger(step: ev.Event, query: Query) -> ev.Event:
    """``T`` uses of ``step``, each Poisson-subsampled at ``q`` if the query says so.

    Args:
      step: one release.
      query: ``T`` and ``q``.
    """
    if query.sampling_rate is not None:
        step = ev.PoissonSampled(float(query.sampling_rate), step)
    return ev.SelfComposed(step, query.compositions) if query.compositions > 1 else step


def _uses(query: Query) -> str:
    out = f"relation {query.relation}"
    if query.compositions > 1:
        out += f", {query.compositions} compositions"
    if query.sampling_rate is not None:
        out += f", Poisson subsampling q = {query.sampling_rate}"
    return out


def event_queries(
    build: Callable[[dict, Query], ev.Event],
) -> tuple[Callable, Callable]:
    """``(profile, epsilon_for_delta)`` of a mechanism accounted through one event.

    Args:
      build: ``(params, query) -> event`` of the query's uses (e.g. :func:`ledger` of one
        release).

    Returns:
      ``profile(params, epsilon, query)`` and ``epsilon_for_delta(params, delta, query)``:
      :class:`~dpjax.accounting.PLDAccountant`'s certified answers under the query's
      relation, one accountant per call.
    """
    def acc(params, query):
        return PLDAccountant(query.relation).compose(build(params, query))

    def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
        return np.vectorize(acc(params, query).get_delta, otypes=[float])(epsilon)

    def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
        return np.vectorize(acc(params, query).get_epsilon, otypes=[float])(delta)

    return profile, epsilon_for_delta


def accounting(
    name: str, param: str, event: Callable[[float, int], ev.Event]
) -> tuple[Callable, Callable]:
    """``(profile, epsilon_for_delta)`` of a discrete mechanism through its event.

    Args:
      name: the dpjax name.
      param: its one parameter's name.
      event: ``(param value, Delta) -> event`` of one release.
    """

    def build(params, query):
        sens, _ = integer_sensitivity(name, query)
        value = np.asarray(params[param], np.float64)
        if value.ndim:
            raise ValueError(f"{name}: give one {param} at a time")
        return ledger(event(float(value), sens), query)

    profile, epsilon_for_delta = event_queries(build)
    profile.__doc__ = f"""Certified ``delta(epsilon)`` of {name} (exact atoms; PLDAccountant).

        Args:
          params: ``{{"{param}": ...}}`` (validated, one value).
          epsilon: the epsilons.
          query: integer sensitivity, uses, sampling rate, relation.
        """
    epsilon_for_delta.__doc__ = f"""Least certified ``epsilon`` of {name} at ``delta``.

        Args:
          params: ``{{"{param}": ...}}`` (validated, one value).
          delta: the deltas.
          query: integer sensitivity, uses, sampling rate, relation.
        """
    return profile, epsilon_for_delta


def calibrate_discrete(
    name: str,
    param: str,
    epsilon: np.ndarray,
    delta: np.ndarray,
    query: Query,
    *,
    event: Callable[[float, int], ev.Event],
    from_scale: Callable[[np.ndarray], np.ndarray],
    guess: Callable[[np.ndarray, np.ndarray, int], np.ndarray],
    variance: Callable[[np.ndarray], np.ndarray],
    hi_limit: float,
):
    """The certified calibration of a discrete mechanism (module docstring).

    Args:
      name, param: the dpjax name and its parameter.
      epsilon, delta: the targets.
      query: the :class:`Query`.
      event: ``(param value, Delta) -> event`` of one release.
      from_scale: the scale searched (privacy improving with it) -> the parameter.
      guess: ``(epsilon, delta, Delta) -> starting scale``.
      variance: ``param -> noise variance``.
      hi_limit: the largest scale searched.
    """
    sens, notes = integer_sensitivity(name, query)

    def build(scale):
        return ledger(event(float(from_scale(scale)), sens), query)

    scale, delta_at = calibrate_event_scale(
        build, epsilon, delta, query.relation, guess(epsilon, delta, sens), name=name,
        hi_limit=hi_limit,
    )
    value = from_scale(scale)  # the parameter of the event re-checked at ``scale``
    delta_at = np.asarray(delta_at, np.float64)
    require_certified(name, delta_at <= delta, epsilon, delta, delta_at)
    notes += (f"exact discrete pair, PLDAccountant ({_uses(query)}), bisection on the scale",)
    return calibration(
        name, query, params={param: value}, variance=variance(value), epsilon=epsilon,
        delta=delta, delta_at_params=delta_at, sensitivity={"linf": float(sens)}, notes=notes,
    )


#: What both discrete mechanisms support (their :class:`~dpjax.mechanisms._spec.About` line).
SUPPORTS = (
    "dim 1, integer sensitivity; T uses, Poisson subsampling, relation add_remove / add / "
    "remove / replace_one (PLDAccountant, exact atoms)"
)


def discrete_mechanism(
    name: str, param: str, summary: str, reference: str, calibrate: Callable,
    event: Callable[[float, int], ev.Event],
) -> Mechanism:
    """The registry entry of a discrete mechanism accounted through its event.

    Args:
      name: the dpjax name.
      param: its one parameter's name (constraint ``> 0``).
      summary: the one-line summary.
      reference: the full citation (:attr:`~dpjax.mechanisms._spec.About.reference`).
      calibrate: its ``(epsilon, delta, query) -> Calibration``.
      event: ``(param value, Delta) -> event`` of one release (:func:`accounting`).
    """
    profile, epsilon_for_delta = accounting(name, param, event)
    return Mechanism(
        name, summary, calibrate, profile, epsilon_for_delta, constraints={param: "> 0"},
        about=About("", ("linf",), SUPPORTS, reference), domain="integer",
    )
