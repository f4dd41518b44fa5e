"""The registry of mechanisms by their dpjax names.

To add a mechanism: write ``dpjax/mechanisms/<name>.py`` exposing a
``MECHANISM`` (:class:`Mechanism`) and add it to ``_MODULES`` below; a new 1-D
noise family goes in ``dpjax/noise/`` (:mod:`dpjax.noise.registry`).

Reachable elsewhere: the i.n.i.d. designs (per-coordinate Gaussian and Laplace
scales for a sensitivity *profile*, inid-noise-laplace-beats-gaussian) need the
profile itself, which the façade's scalar sensitivities cannot carry; they are
not registry entries, and :func:`get` answers their names with what to call
(:func:`dpjax.inid.gaussian_design`, :func:`dpjax.inid.laplace_design`, or
``dpjax.design(..., profile=...)`` to compare them with the i.i.d. mechanisms).

The registry's vocabulary is public here for the layers above it (the façade, the CLI,
the comparison, the spherical calibration): :class:`Query` and :func:`make_query` (a
query from keyword arguments), :data:`CONDITIONS` and :data:`RELATIONS` (what a
calibration may ask for), :func:`calibrate_under` (a mechanism's certified calibration
under a neighbouring relation, :mod:`dpjax.mechanisms._relation`) and
:func:`accounted_under` (what its profile is evaluated on under one).
"""

from __future__ import annotations

import importlib

from dpjax.mechanisms._relation import accounted_under, calibrate_under
from dpjax.mechanisms._spec import CONDITIONS, RELATIONS, Mechanism, Query, make_query
from dpjax.papers import cite

__all__ = [
    "CONDITIONS",
    "ELSEWHERE",
    "Mechanism",
    "Query",
    "RELATIONS",
    "accounted_under",
    "calibrate_under",
    "describe",
    "get",
    "make_query",
    "names",
    "parameter_help",
]

_MODULES = {
    "gaussian": "dpjax.mechanisms.gaussian",
    "laplace": "dpjax.mechanisms.laplace",
    "flipped-huber": "dpjax.mechanisms.flipped_huber",
    "osgt": "dpjax.mechanisms.osgt",
    "truncated-laplace": "dpjax.mechanisms.truncated_laplace",
    "staircase": "dpjax.mechanisms.staircase",
    "spherical": "dpjax.mechanisms.spherical",
    "discrete-laplace": "dpjax.mechanisms.discrete_laplace",
    "discrete-gaussian": "dpjax.mechanisms.discrete_gaussian",
}


def _inid(call: str) -> str:
    return (
        "i.n.i.d. noise is designed from a per-coordinate sensitivity profile lambda, which "
        f"the scalar sensitivities of dpjax.calibrate cannot carry; call {call}, or "
        "dpjax.design(epsilon, delta, profile=profile) to compare it with the i.i.d. mechanisms"
    )


#: Names that are not registry entries, and what to call instead.
ELSEWHERE = {
    "inid": _inid("dpjax.inid.gaussian_design or dpjax.inid.laplace_design"),
    "inid-gaussian": _inid("dpjax.inid.gaussian_design(profile, epsilon, delta) (eq. (9))"),
    "inid-laplace": _inid("dpjax.inid.laplace_design(profile, epsilon, delta) (eq. (12))"),
}


def names() -> tuple[str, ...]:
    """The mechanism names dpjax knows, in display order."""
    return tuple(_MODULES)


def get(name: str) -> Mechanism:
    """The :class:`Mechanism` registered under ``name``.

    Args:
      name: a dpjax mechanism name (:func:`names`).

    Raises:
      ValueError: an unknown name (the known ones listed), or a name reachable elsewhere
        (:data:`ELSEWHERE`: the message says what to call).
    """
    if name in ELSEWHERE:
        raise ValueError(f"{name} is not a registry mechanism: {ELSEWHERE[name]}")
    if name not in _MODULES:
        raise ValueError(f"unknown mechanism {name!r}; known: {', '.join(_MODULES)}")
    return importlib.import_module(_MODULES[name]).MECHANISM


def describe(name: str | None = None) -> list[dict]:
    """What each mechanism is, takes and supports: the data behind ``dpjax mechanisms``.

    Args:
      name: one mechanism (default: all, in display order).

    Returns:
      One dict per mechanism: ``name``, ``summary``, ``parameters`` (name -> constraint,
      in the papers' notation), ``sensitivities`` (the norms it uses), ``conditions``
      (what ``condition=`` may be), ``min_dim``, ``supports`` and ``paper`` (the full
      citation, :func:`dpjax.papers.cite`).

    Raises:
      ValueError: an unknown name (as :func:`get`).

    Example:
      >>> d = describe("gaussian")[0]
      >>> d["parameters"], d["sensitivities"]
      ({'sigma': '> 0'}, ['l2'])
    """
    out = []
    for n in (name,) if name is not None else names():
        m = get(n)
        out.append({
            "name": m.name,
            "summary": m.summary,
            "parameters": dict(m.constraints),
            "sensitivities": list(m.about.sensitivities),
            "conditions": list(m.conditions),
            "min_dim": m.min_dim,
            "supports": m.about.supports,
            "paper": cite(m.about.paper) if m.about.paper else m.about.reference,
        })
    return out


def parameter_help() -> str:
    """One line per mechanism, ``name: param (constraint), ...``, for the CLI's ``--param``.

    Returns:
      The text (``; ``-separated).
    """
    return "; ".join(
        f"{d['name']}: " + ", ".join(f"{p} {c}" for p, c in d["parameters"].items())
        for d in describe()
    )
