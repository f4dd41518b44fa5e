"""The noise families by their dpjax names, and the validation of their parameters.

Every family declares its dpjax ``name`` and its parameters' ``constraints``
(class attributes; :mod:`dpjax.noise._base`); :func:`make` resolves the name and
validates the parameters here, so :mod:`dpjax.noise` needs nothing above it
(the mechanism registry, :mod:`dpjax.mechanisms`, builds on this).  To add a
family: write its module in ``dpjax/noise/`` and list its class in
:data:`FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from dpjax import _validate
from dpjax.noise._base import NoiseFamily
from dpjax.noise.flipped_huber import FlippedHuber
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.laplace import Laplace
from dpjax.noise.osgt import OSGT
from dpjax.noise.staircase import Staircase
from dpjax.noise.truncated_laplace import TruncatedLaplace

#: The families, in display order.
FAMILIES: tuple[type, ...] = (Gaussian, Laplace, FlippedHuber, OSGT, TruncatedLaplace, Staircase)


def _unit_interval(value, name: str) -> np.ndarray:
    arr = _validate.nonnegative(value, name)
    if np.any(arr > 1):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return arr


def _open_unit_interval(value, name: str) -> np.ndarray:
    arr = _validate.positive(value, name)
    if np.any(arr >= 1):
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    return arr


def _integer(least: int) -> Callable[[object, str], np.ndarray]:
    def check(value, name: str) -> np.ndarray:
        arr = _validate.positive(value, name)
        if np.any(arr != np.floor(arr)) or np.any(arr < least):
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
        return arr

    return check


#: The constraints a parameter may declare, each a check ``(value, name) -> float64 array``
#: that raises ``ValueError`` naming the parameter, its value and what is allowed.
CONSTRAINTS: dict[str, Callable[[object, str], np.ndarray]] = {
    "> 0": _validate.positive,
    ">= 0": _validate.nonnegative,
    "in [0, 1]": _unit_interval,
    "in (0, 1)": _open_unit_interval,
    "integer >= 1": _integer(1),
    "integer >= 2": _integer(2),
}


def validate_params(owner: str, constraints: Mapping[str, str], params: Mapping) -> dict:
    """Check names and values of ``params`` against ``constraints``; float64 arrays out.

    Args:
      owner: the family's (or mechanism's) dpjax name, for messages.
      constraints: parameter name -> a key of :data:`CONSTRAINTS`.
      params: parameter name -> value (number or array).

    Returns:
      parameter name -> validated float64 array, in the order of ``constraints``.

    Raises:
      ValueError: unknown or missing names (all named), or a value outside its constraint.
    """
    unknown, missing = set(params) - set(constraints), set(constraints) - set(params)
    if unknown or missing:
        allowed = ", ".join(f"{n} ({c})" for n, c in constraints.items())
        raise ValueError(
            f"{owner} takes parameters {allowed}; "
            + (f"unknown: {', '.join(sorted(unknown))}; " if unknown else "")
            + (f"missing: {', '.join(sorted(missing))}" if missing else "")
        )
    return {n: CONSTRAINTS[c](params[n], n) for n, c in constraints.items()}


def names() -> tuple[str, ...]:
    """The dpjax names of the noise families, in display order."""
    return tuple(f.name for f in FAMILIES)


def family(name: str) -> type:
    """The noise family class registered under ``name``.

    Args:
      name: a dpjax name (:func:`names`).

    Raises:
      ValueError: an unknown name (the known ones are listed).
    """
    for f in FAMILIES:
        if f.name == name:
            return f
    raise ValueError(f"unknown noise family {name!r}; known: {', '.join(names())}")


def make(name: str, /, **params) -> NoiseFamily:
    """Noise of a named family with validated parameters, e.g. ``make("gaussian", sigma=2.0)``.

    Args:
      name: the family's dpjax name (``gaussian``, ``laplace``, ``flipped-huber``, ``osgt``,
        ``truncated-laplace``, ``staircase``).
      **params: its parameters in the papers' notation (e.g. ``alpha``, ``gamma``).

    Returns:
      The family with float64 NumPy parameters.

    Example:
      >>> import dpjax
      >>> dpjax.noise.make("flipped-huber", alpha=2.0, gamma=1.0).name
      'flipped-huber'
    """
    cls = family(name)
    return cls(**validate_params(cls.name, cls.constraints, params))


__all__ = ["CONSTRAINTS", "FAMILIES", "family", "make", "names", "validate_params"]
