r"""The PLD engine's answers for a Gaussian-to-Laplace shape family, from a parameter dict.

Flipped Huber ``FH(alpha, gamma^2)`` and OSGT ``O(vartheta, rho^2)`` are scale families
(:meth:`from_scale`): scale ``gamma`` / ``rho``, shape ``alpha / gamma`` / ``vartheta / rho``
(flipped-huber-mechanism, Def. 7 and App. F(c)).  :data:`SCALE_AND_SHAPE` names, per family,
the scale parameter and the one that is ``shape * scale``; :func:`engine_answer` evaluates the
certified profile or epsilon of ``T`` (possibly Poisson-subsampled) uses of one pair
(:func:`dpjax.accounting.pld.engine.profile` / :func:`~dpjax.accounting.pld.engine.epsilon`).
A ``K``-dim query under Poisson subsampling draws one coin per use for its ``K`` coordinates
(:func:`on_one_coin`): :func:`one_coin_calibration` and :func:`one_coin_answer` calibrate and
account it through the accountant (:mod:`dpjax.calibration.one_coin_family`).
"""

from __future__ import annotations

import numpy as np

from dpjax.accounting.pld import engine
from dpjax.calibration import members
from dpjax.calibration.composed_family import BIN_WIDTH
from dpjax.calibration.event_scale import event_answer
from dpjax.calibration.one_coin_family import BIN_WIDTH as ONE_COIN_BIN_WIDTH
from dpjax.calibration.one_coin_family import SURVEY, calibrate_one_coin, one_coin_event
from dpjax.calibration.result import Calibration
from dpjax.certificate import require_certified
from dpjax.mechanisms._spec import Query, calibration

#: ``{name: (scale parameter, parameter = shape * scale)}``
SCALE_AND_SHAPE = {"flipped-huber": ("gamma", "alpha"), "osgt": ("rho", "vartheta")}


def engine_answer(what: str, family, params: dict, x, linf: float, uses: int,
                  sampling_rate: float | None) -> np.ndarray:
    """The engine's ``profile`` (``x`` = epsilons) or ``epsilon`` (``x`` = deltas) of one pair.

    Args:
      what: ``"profile"`` or ``"epsilon"``.
      family: the noise class (its ``name`` and ``from_scale``).
      params: the family's parameters (one value each).
      x: the epsilons or deltas.
      linf: the sensitivity.
      uses: the 1-D pairs composed.
      sampling_rate: Poisson rate ``q < 1`` of every use, or ``None``.

    Raises:
      ValueError: several parameter values at once.
    """
    scale, shape = _one_member(family, params, "over several uses")
    fn = engine.profile if what == "profile" else engine.epsilon
    return np.asarray(fn(family.from_scale, scale, shape, linf, x, uses, sampling_rate,
                         BIN_WIDTH))


def _one_member(family, params: dict, where: str) -> tuple[float, float]:
    """``(scale, shape)`` of one member's parameters; several values raise ``ValueError``."""
    scale_name, other = SCALE_AND_SHAPE[family.name]
    scale, along = (np.asarray(params[n], np.float64) for n in (scale_name, other))
    if scale.ndim or along.ndim:
        raise ValueError(f"{family.name}: {where}, give one ({other}, {scale_name}) at a time")
    return float(scale), float(along) / float(scale)


def on_one_coin(query: Query) -> bool:
    """A ``K``-dim query (``K > 1``) Poisson-subsampled at ``q < 1``: one coin per use."""
    q = query.sampling_rate
    return query.dim > 1 and q is not None and q < 1.0


def one_coin_calibration(family, variance_fn, epsilon, delta, query: Query) -> Calibration:
    """Least-variance member of the family for ``T`` uses of a ``K``-dim query on one Poisson
    coin per use, under ``query.relation`` (:func:`dpjax.calibration.one_coin_family.
    calibrate_one_coin`), certified by the accountant; the member that won named.

    Args:
      family: the noise class (its ``name``).
      variance_fn: ``variance_fn(scale, shape)`` -> the variance (host arrays).
      epsilon, delta: validated, broadcast targets.
      query: the query (``dim``, ``linf``, ``compositions``, ``sampling_rate``, ``relation``).
    """
    scale_name, other = SCALE_AND_SHAPE[family.name]
    linf, notes = query.sensitivity.resolve("linf")
    q, uses = float(query.sampling_rate), int(query.compositions)
    shape, scale, variance, delta_at, ok = calibrate_one_coin(
        family.name, (scale_name, other), variance_fn, epsilon, delta, query.dim, uses, q,
        linf, query.relation)
    require_certified(family.name, ok & (delta_at <= delta), epsilon, delta, delta_at)
    member = members.name_member(shape, 0.0, SURVEY[-1], "gaussian", "laplace")
    notes += (
        f"{uses} uses of the {query.dim}-dim query, each on one Poisson coin (q = {q}) for its "
        f"{query.dim} coordinates, at the linf corner, relation {query.relation}: "
        f"PLDAccountant (the one-coin pair from both orders' profiles; pessimistic, bin width "
        f"{ONE_COIN_BIN_WIDTH}); shape {other} / {scale_name} surveyed over {SURVEY} and "
        "refined around the best",
        "member that won: " + "; ".join(
            f"{m} {other} = {b * s:.6g}, {scale_name} = {s:.6g} (shape {b:.4g})"
            for m, b, s in zip(*(np.ravel(x) for x in (member, shape, scale)), strict=True)),
    )
    return calibration(
        family.name, query, params={other: np.asarray(shape * scale), scale_name: scale},
        variance=variance, epsilon=epsilon, delta=delta, delta_at_params=delta_at,
        sensitivity={"linf": linf}, notes=notes, member=member,
    )


def one_coin_answer(what: str, family, params: dict, x, query: Query) -> np.ndarray:
    """The accountant's ``profile`` (``x`` = epsilons) or ``epsilon`` (``x`` = deltas) of ``T``
    uses of a ``K``-dim query on one Poisson coin per use, under ``query.relation``.

    Args:
      what: ``"profile"`` or ``"epsilon"``.
      family: the noise class (its ``name``).
      params: the family's parameters (one value each).
      x: the epsilons or deltas.
      query: the query.

    Raises:
      ValueError: several parameter values at once.
    """
    scale, shape = _one_member(family, params, "on one Poisson coin")
    event = one_coin_event(family.name, SCALE_AND_SHAPE[family.name], scale, shape, query.dim,
                           int(query.compositions), float(query.sampling_rate),
                           query.sensitivity.resolve("linf")[0])
    return event_answer(event, what, x, query.relation, ONE_COIN_BIN_WIDTH)


__all__ = ["SCALE_AND_SHAPE", "engine_answer", "on_one_coin", "one_coin_answer",
           "one_coin_calibration"]
