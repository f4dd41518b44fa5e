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
"""

from __future__ import annotations

import importlib

from dpjax.mechanisms._spec import Mechanism, Query

__all__ = ["ELSEWHERE", "Mechanism", "Query", "get", "names"]

_MODULES = {
    "gaussian": "dpjax.mechanisms.gaussian",
    "laplace": "dpjax.mechanisms.laplace",
    "flipped-huber": "dpjax.mechanisms.flipped_huber",
    "osgt": "dpjax.mechanisms.osgt",
    "truncated-laplace": "dpjax.mechanisms.truncated_laplace",
    "staircase": "dpjax.mechanisms.staircase",
    "spherical": "dpjax.mechanisms.spherical",
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
