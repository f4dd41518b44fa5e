r"""Compare every mechanism for one target: the ranked, certified comparison as data.

:func:`design` (exported as ``dpjax.design``) is the main job of dpjax; this module is
named for what it returns, so that the function does not shadow it.

For a target ``(epsilon, delta)`` and a query (dimension, sensitivities, compositions,
subsampling) calibrate every mechanism of the registry (:mod:`dpjax.mechanisms`; each
result certified, ``delta_at_params <= delta``), rank them by total mean squared error,
and say why each one left out was left out.  With
a per-coordinate sensitivity *profile* ``lambda`` the i.i.d. mechanisms get the sound
bounds ``Delta_p <= ||lambda||_p`` (Remark 1 of inid-noise-laplace-beats-gaussian) and
the i.n.i.d. Gaussian (eq. (9), Theorem 4) and Laplace (eq. (12), Theorem 5,
Corollary 6) designs join the ranking.  ``dpjax design`` prints exactly this.

Conditions (``condition="auto"``): exact in one dimension; in ``K`` dimensions a
mechanism's closed-form sufficient condition first where it has one (its exact
``K``-dim calibration runs the PLD engine, far more work), then the exact one.
Mechanisms that need more dimensions than the query has (``spherical``: ``K >= 2``)
are not part of the comparison.

Neighbouring relation (``relation``, as for :func:`dpjax.calibrate`): each row is the
mechanism's calibration under it (:func:`dpjax.mechanisms.calibrate_under`); a mechanism
that cannot honour it under Poisson subsampling is skipped with that reason.  The
i.n.i.d. designs (one release) take ``"add"`` and ``"remove"`` as ``"add_remove"``
(symmetric noise) and ``"replace_one"`` at the doubled profile ``2 lambda`` (one record
replaced moves coordinate ``i`` by up to ``2 lambda_i``, the convention of the i.i.d. rows).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from dpjax import _progress, _validate
from dpjax.calibration.result import Calibration
from dpjax.errors import InfeasibleTargetError
from dpjax.inid import gaussian_design, laplace_design, validate_profile
from dpjax.mechanisms import Mechanism, calibrate_under, get, make_query, names

#: Condition preferences: ``auto`` (module docstring), or one condition tried first.
CONDITIONS = ("auto", "exact", "sufficient")
#: Why the i.n.i.d. designs are left out of composed or subsampled queries.
INID_SINGLE_RELEASE = "single release only (compose via the resource view, Sec. IV-B)"
#: The note of an i.n.i.d. design under ``relation="replace_one"``.
INID_REPLACE_ONE = ("relation replace_one: one record replaced moves coordinate i by up to "
                    "2 lambda_i; designed for the doubled profile 2 lambda")


#: What the spherical row optimised: its shape by the KL programme, its scale by the target.
SPHERICAL_OBJECTIVE = ("shape: kl (large-T limit, Theorem 4); scale: least mse with certified "
                       "delta(epsilon) <= delta, one release")


def objective(mechanism: str, compositions: int = 1, sampling_rate: float | None = None) -> str:
    """Which objective a mechanism's row optimised (``dpjax design``'s column and JSON field).

    Every calibrated mechanism minimises its variance (mse) subject to the certified
    ``delta(epsilon) <= delta`` at the query's compositions ``T`` and sampling rate ``q``;
    the spherical row's *shape* is the KL programme's optimum (the large-``T`` limit of
    the epsilon objective, spherical-kl-optimal-mechanisms), only its scale is chosen by the
    certified ``(epsilon, delta)`` at the use (:data:`SPHERICAL_OBJECTIVE` for one release).

    Args:
      mechanism: the dpjax name of the row's mechanism.
      compositions: ``T``.
      sampling_rate: ``q`` (``None``: no subsampling).

    Example:
      >>> objective("gaussian", 10, 0.01)
      'variance: least mse with certified delta(epsilon) <= delta at (T=10, q=0.01)'
      >>> objective("spherical", 10, 0.01).split("; ")[1]
      'scale: least mse with certified delta(epsilon) <= delta at (T=10, q=0.01)'
    """
    use = f"T={compositions}" + ("" if sampling_rate is None else f", q={sampling_rate:.6g}")
    if mechanism == "spherical":
        if compositions == 1 and sampling_rate is None:
            return SPHERICAL_OBJECTIVE
        return SPHERICAL_OBJECTIVE.split("; ")[0] + (
            f"; scale: least mse with certified delta(epsilon) <= delta at ({use})")
    return f"variance: least mse with certified delta(epsilon) <= delta at ({use})"


@dataclass(frozen=True)
class Row:
    """One certified mechanism of the comparison.

    Attributes:
      mechanism: the dpjax name (``gaussian``, ``laplace``, ..., ``spherical``).
      params: parameter name -> value (i.n.i.d.: the per-coordinate scales).
      variance: per-coordinate noise variance (i.n.i.d.: one per coordinate).
      mse: total mean squared error over the coordinates (the ranking key).
      delta_at_params: the certificate: the profile at ``params`` (``<= delta``).
      condition: what the certificate means (``exact``, ``sufficient``, ...).
      notes: what was assumed or derived.
      inid: whether this is an i.n.i.d. design (from a sensitivity profile).
      result: the full :class:`~dpjax.Calibration` or :class:`~dpjax.inid.InidDesign`.
    """

    mechanism: str
    params: dict[str, Any]
    variance: Any
    mse: float
    delta_at_params: float
    condition: str
    notes: tuple[str, ...]
    inid: bool
    result: Any

    @classmethod
    def of_calibration(cls, cal: Calibration) -> Row:
        """The row of an i.i.d. calibration.

        Args:
          cal: a certified :class:`~dpjax.Calibration` of scalar targets.
        """
        params = {k: float(v) for k, v in cal.params.items()}
        return cls(cal.mechanism, params, float(cal.variance), float(cal.mse),
                   float(cal.delta_at_params), cal.condition, tuple(cal.notes), False, cal)

    @classmethod
    def of_inid(cls, d) -> Row:
        """The row of an i.n.i.d. design (Gaussian ``sigma_i`` or Laplace ``b_i``).

        Args:
          d: a certified :class:`~dpjax.inid.InidDesign`.
        """
        scales = np.asarray(d.scales, np.float64)
        if d.mechanism == "gaussian":
            params, variance = {"sigma": scales}, scales**2
        else:
            params, variance = {"scale": scales}, 2.0 * scales**2
        return cls(d.mechanism, params, variance, float(d.mse), float(d.delta_at_params),
                   d.condition, tuple(d.notes), True, d)


@dataclass(frozen=True)
class Skipped:
    """A mechanism left out of the comparison, and why (its errors, joined)."""

    mechanism: str
    reason: str


@dataclass(frozen=True)
class Design:
    """The ranked, certified comparison for one target (what ``dpjax design`` prints).

    Attributes:
      epsilon, delta: the target.
      query: ``dim``, ``l1``, ``l2``, ``linf``, ``compositions``, ``sampling_rate`` and
        ``relation`` as given (with a profile: its size and norms).
      rows: the certified mechanisms, least total MSE first (i.i.d. and i.n.i.d.).
      skipped: the mechanisms left out, with the reason.
      profile: the sensitivity profile ``lambda``, or ``None``.
      inid: the i.n.i.d. designs, in the order built (Gaussian, Laplace pure, Laplace
        Corollary 6).
    """

    epsilon: float
    delta: float
    query: dict[str, Any]
    rows: tuple[Row, ...]
    skipped: tuple[Skipped, ...]
    profile: np.ndarray | None = None
    inid: tuple[Any, ...] = field(default=())

    @property
    def best(self) -> Row | None:
        """The row of least total MSE (``None`` when nothing could be certified)."""
        return self.rows[0] if self.rows else None

    @property
    def results(self) -> tuple[Calibration, ...]:
        """The i.i.d. calibrations, least total MSE first."""
        return tuple(r.result for r in self.rows if not r.inid)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (``dpjax design --json``; floats at full precision)."""
        out: dict[str, Any] = {"epsilon": self.epsilon, "delta": self.delta, "query": self.query}
        if self.profile is None:
            out["best"] = self.best.mechanism if self.rows else None
        else:
            out["profile"] = self.profile.tolist()
        goal = {"compositions": self.query.get("compositions", 1),
                "sampling_rate": self.query.get("sampling_rate")}
        out["results"] = [dict(c.to_json(), objective=objective(c.mechanism, **goal))
                          for c in self.results]
        if self.profile is not None:
            out["inid"] = [d.to_json() for d in self.inid]
        out["skipped"] = [{"mechanism": s.mechanism, "reason": s.reason} for s in self.skipped]
        return out


def _conditions(mech: Mechanism, preference: str, dim: int) -> list[str]:
    """Conditions to try, in order (``auto``: module docstring)."""
    order = {"exact": ("exact",), "sufficient": ("sufficient", "exact")}.get(
        preference, ("exact", "sufficient") if dim == 1 else ("sufficient", "exact")
    )
    return [cond for cond in order if cond in mech.conditions]


def compare(epsilon, delta, condition: str = "auto", **query) -> tuple[list, list]:
    """Calibrate every registered mechanism that applies to the query, ranked.

    Args:
      epsilon, delta: the target (scalars).
      condition: ``auto``, ``exact`` or ``sufficient`` (module docstring).
      **query: ``dim``, ``l1``, ``l2``, ``linf``, ``compositions``, ``sampling_rate``,
        ``relation``.

    Returns:
      ``(calibrations, skipped)``: certified :class:`~dpjax.Calibration` s, least total
      MSE first, and ``(name, reason)`` pairs for the mechanisms that could not answer
      (:class:`NotImplementedError` or :class:`~dpjax.InfeasibleTargetError`; any other
      error is raised).  Each mechanism is a stage of :func:`dpjax._progress.mark` (its
      name on stderr while it runs, on a terminal; ``dpjax design`` sums them up).
    """
    eps, dlt = _validate.broadcast(
        epsilon=_validate.epsilon(epsilon), delta=_validate.delta(delta)
    )
    dim = query.get("dim", 1)
    results, skipped = [], []
    for name in names():
        mech = get(name)
        if dim < mech.min_dim or mech.domain != "real":  # discrete noise: integer queries
            continue
        _progress.mark(name)  # on a terminal: which mechanism is being calibrated
        errors = []
        for cond in _conditions(mech, condition, dim):
            q = make_query(mech, query, condition=cond)
            try:
                with jax.enable_x64(True):
                    results.append(calibrate_under(mech, eps, dlt, q))
                break
            except (NotImplementedError, InfeasibleTargetError) as err:
                errors.append(str(err))
        else:
            skipped.append((name, "; ".join(dict.fromkeys(errors)) or "condition not supported"))
    results.sort(key=lambda r: float(r.mse))
    return results, skipped


def _sensitivity(value, name: str) -> float | None:
    """``None`` or a validated single sensitivity (finite, ``> 0``, a real number: not a
    string or a boolean, which ``float`` would have turned into numbers)."""
    if value is None:
        return None
    arr = _validate.positive(value, name)
    if arr.ndim:
        raise ValueError(f"{name} must be a single number, got {_validate.shown(value)}")
    return float(arr)


def _reasons(skipped) -> list[str]:
    """``mechanism: reason`` once per skipped mechanism (repeated clauses dropped)."""
    out = []
    for name, reason in skipped:
        prefix = f"{name}: "
        parts = [p[len(prefix):] if p.startswith(prefix) else p for p in reason.split("; ")]
        out.append(prefix + "; ".join(dict.fromkeys(parts)))
    return out


def design(
    epsilon,
    delta,
    *,
    dim: int | None = None,
    l1: float | None = None,
    l2: float | None = None,
    linf: float | None = None,
    compositions: int = 1,
    sampling_rate: float | None = None,
    condition: str = "auto",
    profile=None,
    relation: str = "add_remove",
) -> Design:
    r"""Every mechanism dpjax has, calibrated to ``(epsilon, delta)``, certified and ranked.

    Each row minimises its mechanism's error subject to ``delta(epsilon) <= delta`` and is
    re-checked at its parameters; rows are ranked by total MSE ``sum_i Var(T_i)``.  With
    ``profile`` (per-coordinate sensitivities ``lambda``) the i.i.d. rows use
    ``Delta_p = ||lambda||_p`` (Remark 1 of inid-noise-laplace-beats-gaussian) and the
    i.n.i.d. Gaussian (eq. (9)) and Laplace (eq. (12), Corollary 6) designs are added.

    Args:
      epsilon: target ``epsilon >= 0`` (a scalar).
      delta: target ``delta`` in ``[0, 1)`` (a scalar).
      dim: number of coordinates ``K`` (default 1; with ``profile``, its length).
      l1, l2, linf: the query's sensitivities (at least one, unless ``profile``).
      compositions: number of uses ``T``.
      sampling_rate: Poisson subsampling rate ``q`` in ``(0, 1]``, or ``None``.
      condition: ``auto`` (exact in 1-D, sufficient first in ``K`` dims), ``exact`` or
        ``sufficient``.
      profile: a sensitivity profile ``lambda`` (instead of ``dim``/``l1``/``l2``/``linf``).
      relation: the neighbouring relation (:data:`dpjax.mechanisms.RELATIONS`, checked by
        :func:`dpjax.mechanisms.make_query`; module docstring): ``"add_remove"`` (default),
        ``"add"``, ``"remove"`` or ``"replace_one"``.

    Returns:
      A :class:`Design`: ``rows`` (best first), ``skipped`` (with reasons), ``to_json()``.

    Example:
      >>> import dpjax
      >>> d = dpjax.design(epsilon=0.3, delta=1e-6, linf=1.0)  # Fig. 3a of flipped-huber-mechanism
      >>> [(r.mechanism, round(r.variance, 2)) for r in d.rows][1:3]
      [('truncated-laplace', 22.21), ('flipped-huber', 22.21)]
      >>> d.rows[-1].mechanism, round(d.rows[-1].variance, 2), d.best.mechanism
      ('gaussian', 168.8, 'staircase')
      >>> all(r.delta_at_params <= 1e-6 for r in d.rows)
      True
    """
    eps, dlt = _validate.epsilon(epsilon), _validate.delta(delta)
    if eps.ndim or dlt.ndim:
        raise ValueError(
            "design compares the mechanisms for one target: give epsilon and delta as single "
            f"numbers, got shapes {eps.shape} and {dlt.shape} (dpjax.calibrate takes arrays)"
        )
    eps, dlt = float(eps), float(dlt)
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    lam = None
    if profile is None:
        sens = {"dim": 1 if dim is None else _validate.positive_int(dim, "dim"),
                "l1": _sensitivity(l1, "l1"), "l2": _sensitivity(l2, "l2"),
                "linf": _sensitivity(linf, "linf")}
    else:
        lam = validate_profile(profile)
        if (l1, l2, linf) != (None, None, None) or dim not in (None, lam.size):
            raise ValueError(
                "give either a sensitivity profile or dim/l1/l2/linf (the profile sets them: "
                "dim = its length, l_p = ||lambda||_p)"
            )
        sens = {"dim": int(lam.size), "l1": float(np.sum(lam)),
                "l2": float(np.sqrt(np.sum(lam * lam))), "linf": float(np.max(lam))}
    rate = None if sampling_rate is None else _validate.probability(sampling_rate, "sampling_rate")
    query = dict(sens, compositions=compositions, sampling_rate=rate, relation=relation)
    results, skipped = compare(eps, dlt, condition=condition, **query)
    inid = []
    if lam is not None:
        if compositions == 1 and sampling_rate is None:
            moved = 2.0 * lam if relation == "replace_one" else lam  # module docstring
            if dlt > 0:
                inid.append(gaussian_design(moved, eps, dlt))
            inid.append(laplace_design(moved, eps, 0.0))
            if dlt > 0:
                inid.append(laplace_design(moved, eps, dlt))
            if relation == "replace_one":
                inid = [dataclasses.replace(d, notes=tuple(d.notes) + (INID_REPLACE_ONE,))
                        for d in inid]
        else:
            skipped.append(("i.n.i.d.", INID_SINGLE_RELEASE))
    rows = [Row.of_calibration(c) for c in results] + [Row.of_inid(d) for d in inid]
    if not rows:  # an empty table is no answer
        raise InfeasibleTargetError(
            f"epsilon={eps!r}, delta={dlt!r} is infeasible for every mechanism ("
            + "; ".join(_reasons(skipped)) + ")"
        )
    rows.sort(key=lambda r: r.mse)
    return Design(
        epsilon=eps,
        delta=dlt,
        query=query,
        rows=tuple(rows),
        skipped=tuple(Skipped(n, why) for n, why in skipped),
        profile=lam,
        inid=tuple(inid),
    )


__all__ = ["CONDITIONS", "SPHERICAL_OBJECTIVE", "Design", "Row", "Skipped", "compare", "design",
           "objective"]
