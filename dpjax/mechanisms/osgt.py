r"""The OSGT mechanism: noise ``O(vartheta, rho^2)`` (Sadeghi & Korki 2022), one dimension.

Parameters ``vartheta >= 0`` (offset) and ``rho > 0`` (scale); see
:mod:`dpjax.noise.osgt`.  Profile: exact 1-D (App. F(c) of
flipped-huber-mechanism; :mod:`dpjax.accounting.osgt`).  Calibration: least
variance over the whole parameter space (:mod:`dpjax.calibration.osgt`; the
shape is searched over ``vartheta / rho`` in ``[1e-4, 1e4]``).

``T`` uses of a ``K``-dim query (i.i.d. coordinates, sensitivity ``linf`` per coordinate:
the corner of the ``linf`` box is the worst shift, the 1-D profile increasing in the shift)
are ``K T`` uses of the 1-D pair: calibrated, profiled and inverted by the PLD engine's
``K T``-fold composition (:func:`dpjax.calibration.composed_family.calibrate_composed`: the
shape ``k`` from the Gaussian ``k = 0`` to the Laplace end ``k = 1e4``; without subsampling
the Gaussian member also in closed form,
:func:`~dpjax.calibration.composed_family.gaussian_end`, and profiled exactly), each use
Poisson-subsampled at ``q`` for a 1-D query.  ``T`` Poisson-subsampled uses of a ``K``-dim
query draw one coin per use for the ``K`` coordinates (not a product of 1-D subsampled
pairs): the accountant's profile of the ``K``-fold pair at the corner on one coin, under the
query's relation, with a shape survey from the Gaussian to the Laplace end
(:mod:`dpjax.calibration.one_coin_family`).
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax._batching import call_padded
from dpjax.accounting.gaussian import delta_gaussian, epsilon_gaussian
from dpjax.accounting.osgt import delta_osgt, epsilon_osgt
from dpjax.calibration.composed_family import (
    BIN_WIDTH,
    SHAPES,
    calibrate_composed,
    gaussian_end,
    with_gaussian_end,
)
from dpjax.calibration.members import (
    gaussian_limit_variance,
    laplace_limit_variance,
    name_by_variance,
    name_member,
)
from dpjax.calibration.osgt import K_MAX, K_MIN, osgt_least_variance
from dpjax.calibration.result import Calibration
from dpjax.certificate import require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._shape_family import (
    engine_answer,
    on_one_coin,
    one_coin_answer,
    one_coin_calibration,
)
from dpjax.mechanisms._spec import (
    About,
    Mechanism,
    Query,
    calibration,
    exact_1d_accounting,
    single_release,
)
from dpjax.noise.osgt import OSGT, osgt_unit_variance_host

NAME = "osgt"
_delta = jax.jit(delta_osgt)
_gaussian_delta, _gaussian_epsilon = jax.jit(delta_gaussian), jax.jit(epsilon_gaussian)
_NEEDS = "needs K-fold numerical integration"


def _rate(query: Query) -> float | None:
    """The Poisson rate ``q < 1``, or ``None`` (``q = 1`` keeps every record: plain uses)."""
    q = query.sampling_rate
    return None if q is None or q >= 1.0 else float(q)


def _uses(query: Query) -> int:
    """``K T``: the 1-D pairs composed (a ``K``-dim query under subsampling is accounted on
    one coin instead, :func:`~dpjax.mechanisms._shape_family.on_one_coin`)."""
    return query.dim * query.compositions


def _by_engine(query: Query) -> bool:
    """More than one pair, or a subsampled one: the PLD engine (else the exact 1-D profile)."""
    return _uses(query) > 1 or _rate(query) is not None


def _variance(rho, k):
    """``rho^2 v(k)`` on host arrays (NumPy: nothing to compile)."""
    return np.asarray(rho) ** 2 * osgt_unit_variance_host(k)


def _calibrate_composed(epsilon, delta, query: Query) -> Calibration:
    """``K T`` (subsampled) uses of the 1-D pair through the engine, or ``T`` uses of a
    ``K``-dim query on one Poisson coin each through the accountant (module docstring)."""
    if on_one_coin(query):
        return one_coin_calibration(OSGT, _variance, epsilon, delta, query)
    linf, notes = query.sensitivity.resolve("linf")
    uses, q = _uses(query), _rate(query)
    # plain uses: the Gaussian member k = 0 also in closed form (exact; the engine's grid is
    # pessimistic), and no engine row at or above its variance re-checked
    gauss = None if q is not None else gaussian_end(epsilon, delta, uses, linf)
    found = calibrate_composed(OSGT.from_scale, _variance, epsilon, delta, uses, linf, q,
                               f"osgt, {uses} uses", beat=None if gauss is None else gauss[3])
    closed = np.zeros(np.shape(found[0]), bool)
    if gauss is not None:
        found, closed = with_gaussian_end(found, gauss)
    k, rho, variance, delta_at, ok = found
    require_certified(NAME, ok & (delta_at <= delta), epsilon, delta, delta_at)
    member = name_member(k, 0.0, SHAPES[-1], "gaussian", "laplace")
    if np.any(closed):
        notes += ("the Gaussian member (vartheta = 0) in closed form: the Gaussian mechanism "
                  "with l2 = sqrt(K T) linf (Balle & Wang 2018, Thm. 8), exact",)
    notes += (
        f"{uses} uses of the 1-D pair ({query.dim} dims x {query.compositions} compositions"
        + (f", each Poisson-subsampled at q = {q}" if q else "")
        + f"), add and remove adjacency, worse reported: PLD engine shape search over "
        f"k = vartheta / rho (pessimistic connect-the-dots, bin width {BIN_WIDTH})",
    )
    return calibration(
        NAME, query, params={"vartheta": np.asarray(k * rho), "rho": rho}, variance=variance,
        epsilon=epsilon, delta=delta, delta_at_params=delta_at, sensitivity={"linf": linf},
        notes=notes, member=member,
    )


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least-variance ``(vartheta, rho)`` with the exact 1-D profile ``<= delta``, certified.

    The profile is App. F(c) of flipped-huber-mechanism (a scale family in ``rho`` at
    shape ``k = vartheta / rho``); the shape is searched over ``[1e-4, 1e4]``
    (:func:`dpjax.calibration.osgt.osgt_least_variance`), variance ``rho^2 v(k)``.

    Args:
      epsilon: target epsilons (broadcast with ``delta``).
      delta: target deltas, ``> 0``.
      query: sensitivity ``linf``; ``K`` dims, ``T`` uses, rate ``q`` through the engine
        (module docstring).
    """
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "osgt: delta = 0 is infeasible (Gaussian tails: delta(eps) > 0)"
        )
    if _by_engine(query):
        return _calibrate_composed(epsilon, delta, query)
    sens, notes = single_release(NAME, query, _NEEDS)
    res = osgt_least_variance(epsilon, delta, sens)
    require_certified(NAME, res.certified, epsilon, delta, res.delta_at_params)
    notes += (f"least variance over vartheta/rho in [{K_MIN:g}, {K_MAX:g}]",)
    return calibration(
        NAME, query, params={"vartheta": res.vartheta, "rho": res.rho}, variance=res.variance,
        epsilon=epsilon, delta=delta, delta_at_params=res.delta_at_params,
        sensitivity={"linf": sens}, notes=notes,
        member=name_by_variance(res.variance, {
            "gaussian": gaussian_limit_variance(epsilon, delta, sens),
            "laplace": laplace_limit_variance(epsilon, delta, sens),
        }),
    )


_profile_1d, _epsilon_1d = exact_1d_accounting(
    OSGT, _delta, epsilon_osgt, "App. F(c) of flipped-huber-mechanism", _NEEDS)


def _engine_answer(what: str, params: dict, x, query: Query) -> np.ndarray:
    """The PLD engine's ``profile`` or ``epsilon`` of ``K T`` (subsampled) uses (the
    accountant's on one coin for a subsampled ``K``-dim query)."""
    if on_one_coin(query):
        return one_coin_answer(what, OSGT, params, x, query)
    return engine_answer(what, OSGT, params, x, query.sensitivity.resolve("linf")[0],
                         _uses(query), _rate(query))


def _gaussian_l2(params: dict, query: Query) -> float | None:
    """``Delta_2 = sqrt(K T) linf`` where the composed pair is exactly the Gaussian mechanism
    (``vartheta = 0``: ``O(0, rho^2) = N(0, rho^2)``, no subsampling), else ``None``."""
    vartheta = np.asarray(params["vartheta"])
    if _rate(query) is not None or vartheta.ndim or float(vartheta) != 0.0:
        return None
    return float(np.sqrt(_uses(query)) * query.sensitivity.resolve("linf")[0])


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    """``delta(epsilon)`` of OSGT noise: exact in 1-D (App. F(c) of flipped-huber-mechanism),
    the PLD engine's ``K T``-fold composition otherwise (module docstring), except the
    Gaussian member ``vartheta = 0`` without subsampling: the Gaussian mechanism's exact
    profile (eq. (29) of flipped-huber-mechanism) at ``Delta_2 = sqrt(K T) linf``, as its
    calibration certifies it.

    Args:
      params: ``{vartheta, rho}`` (validated).
      epsilon: the epsilons to evaluate at.
      query: sensitivity ``linf``, ``K`` dims, ``T`` uses, rate ``q``.
    """
    if not _by_engine(query):
        return _profile_1d(params, epsilon, query)
    if (l2 := _gaussian_l2(params, query)) is not None:
        return np.asarray(call_padded(_gaussian_delta, epsilon, float(params["rho"]), l2))
    return _engine_answer("profile", params, epsilon, query)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    """Least certified ``epsilon`` of OSGT noise at ``delta`` (as :func:`profile`).

    Args:
      params: ``{vartheta, rho}`` (validated).
      delta: the deltas to invert at.
      query: sensitivity ``linf``, ``K`` dims, ``T`` uses, rate ``q``.
    """
    if not _by_engine(query):
        return _epsilon_1d(params, delta, query)
    if (l2 := _gaussian_l2(params, query)) is not None:
        return np.asarray(call_padded(_gaussian_epsilon, delta, float(params["rho"]), l2))
    return _engine_answer("epsilon", params, delta, query)


SUMMARY = "OSGT (offset symmetric Gaussian tails, Sadeghi & Korki 2022); exact 1-D profile"
MECHANISM = Mechanism(
    NAME, SUMMARY, calibrate, profile, epsilon_for_delta, noise=OSGT,
    about=About("flipped-huber-mechanism", ("linf",),
                "exact 1-D (App. F(c)); K dims x T uses by the PLD engine; Poisson-subsampled "
                "uses by the engine (1-D) or the accountant (K dims, one coin)"),
)
