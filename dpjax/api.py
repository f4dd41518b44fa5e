"""The public entry points: :func:`calibrate`, :func:`profile`, :func:`account`.

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
from dpjax.calibration.result import Calibration
from dpjax.certificate import certify_epsilon
from dpjax.errors import CertificationError
from dpjax.mechanisms import Query, get
from dpjax.sensitivity import Sensitivity

CONDITIONS = ("exact", "sufficient")


def _query(dim, l1, l2, linf, compositions, sampling_rate, condition, mechanism, default_unit):
    if l1 is None and l2 is None and linf is None:
        if not default_unit:
            raise ValueError("give a sensitivity: l1, l2 or linf (a finite number > 0)")
        l1 = l2 = linf = 1.0
        if dim != 1:
            raise ValueError("with dim > 1 give a sensitivity: l1, l2 or linf")
    compositions = _validate.positive_int(
        compositions, "compositions", maximum=_validate.MAX_COMPOSITIONS
    )
    if sampling_rate is not None:
        sampling_rate = _validate.probability(sampling_rate, "sampling_rate")
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    if condition not in mechanism.conditions:
        raise ValueError(
            f"{mechanism.name} supports condition {', '.join(mechanism.conditions)}, "
            f"got {condition!r}"
        )
    return Query(
        sensitivity=Sensitivity(dim=dim, l1=l1, l2=l2, linf=linf),
        compositions=compositions,
        sampling_rate=sampling_rate,
        condition=condition,
    )


def _output(arr: np.ndarray, what: str = "value"):
    arr = np.asarray(arr, dtype=np.float64)
    if np.any(np.isnan(arr)):
        raise CertificationError(f"the computed {what} is NaN: dpjax cannot certify it")
    return float(arr) if arr.ndim == 0 else arr


def _certified_parameters(mech, cal: Calibration) -> Calibration:
    """The calibrated parameters must be valid parameters (finite, normal float64; no
    zero scale from an underflow), else :class:`CertificationError`."""
    try:
        mech.validate_params(cal.params)
    except ValueError as err:
        raise CertificationError(
            f"{mech.name}: the calibrated parameters are outside what dpjax can represent "
            f"and certify ({err}); rescale the sensitivity or the target"
        ) from None
    return cal


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
) -> Calibration:
    """Least-error parameters of ``mechanism`` meeting ``(epsilon, delta)``, certified.

    ``epsilon`` and ``delta`` may be arrays (broadcast together; one
    calibration per element in one vectorised call).  The result's
    ``delta_at_params`` is the privacy profile re-evaluated at the returned
    parameters and is always ``<= delta``; if dpjax cannot certify, it raises
    :class:`dpjax.errors.CertificationError`.  Targets no parameter can meet
    raise :class:`dpjax.errors.InfeasibleTargetError`.

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
    query = _query(dim, l1, l2, linf, compositions, sampling_rate, condition, mech, False)
    with jax.enable_x64(True):
        return _certified_parameters(mech, mech.calibrate(eps, dlt, query))


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
) -> np.ndarray | float:
    """Privacy profile ``delta(epsilon)`` of ``mechanism`` with ``params``.

    Exact where the mechanism's profile is exact, otherwise a certified upper
    bound (the mechanism's docstring says which).  With no sensitivity given,
    ``dim = 1`` and unit sensitivity are assumed (``params`` in units of the
    sensitivity, e.g. a noise multiplier).

    Example:
      >>> import dpjax
      >>> float(dpjax.profile("laplace", {"scale": 1.0}, epsilon=0.0, l1=1.0))  # doctest: +ELLIPSIS
      0.393469...
    """
    mech = get(mechanism)
    eps = _validate.epsilon(epsilon)
    params = mech.validate_params(params)
    query = _query(dim, l1, l2, linf, compositions, sampling_rate, "exact", mech, True)
    with jax.enable_x64(True):
        return _output(mech.profile(params, eps, query), "delta")


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
) -> np.ndarray | float:
    """Privacy of ``params`` after ``compositions`` uses (optionally subsampled), or of an event.

    ``mechanism`` may instead be an event of :mod:`dpjax.accounting.events` (or a
    dp_accounting ``DpEvent``): it is then accounted by
    :class:`dpjax.accounting.PLDAccountant` under ``relation`` (``params``, ``compositions``,
    ``sampling_rate`` and the sensitivities are not used: the event carries them).

    Give exactly one of ``delta`` (returns the least certified ``epsilon``)
    or ``epsilon`` (returns ``delta``).  Sensitivity defaults to 1 (so
    ``sigma`` is the noise multiplier, as in DP-SGD).

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
    if not isinstance(mechanism, str):
        from dpjax.accounting import PLDAccountant

        acc = PLDAccountant(relation).compose(mechanism)
        if delta is not None:
            values = np.vectorize(acc.get_epsilon, otypes=[float])(_validate.delta(delta))
            return _output(values, "epsilon")
        values = np.vectorize(acc.get_delta, otypes=[float])(_validate.epsilon(epsilon))
        return _output(values, "delta")
    if params is None:
        raise ValueError(f"{mechanism}: give params (e.g. {{'sigma': 1.0}})")
    mech = get(mechanism)
    params = mech.validate_params(params)
    query = _query(dim, l1, l2, linf, compositions, sampling_rate, "exact", mech, True)
    with jax.enable_x64(True):
        if delta is not None:
            dlt = _validate.delta(delta)
            eps = _output(mech.epsilon_for_delta(params, dlt, query), "epsilon")
            return _output(
                certify_epsilon(mech.name, lambda e: mech.profile(params, e, query), eps, dlt),
                "epsilon",
            )
        return _output(mech.profile(params, _validate.epsilon(epsilon), query), "delta")
