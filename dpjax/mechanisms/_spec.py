"""The contract between a mechanism and the façade (``dpjax.calibrate`` etc.).

A :class:`Mechanism` bundles, for one dpjax mechanism name, how to build its
noise from named parameters and how to calibrate, profile and account it for
a :class:`Query` (sensitivities, compositions, subsampling, condition).  The
façade validates targets and sensitivities, then dispatches here; each
mechanism module owns only the glue between its kernels and this contract.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpjax import _validate
from dpjax.calibration.result import Calibration
from dpjax.noise._base import NoiseFamily
from dpjax.sensitivity import Sensitivity


@dataclass(frozen=True)
class Query:
    """How the mechanism is used: sensitivities, repetitions, subsampling, condition."""

    sensitivity: Sensitivity
    compositions: int = 1
    sampling_rate: float | None = None
    condition: str = "exact"

    @property
    def dim(self) -> int:
        return self.sensitivity.dim


@dataclass(frozen=True)
class Mechanism:
    """One noise mechanism as the façade sees it.

    Attributes:
      name: the dpjax name (same in Python, CLI and JSON).
      param_names: parameter names in the papers' notation.
      summary: one line for ``dpjax design`` and the CLI help.
      noise: builds the noise family from validated float parameters.
      calibrate: ``(epsilon, delta, query) -> Calibration`` (certified).
      profile: ``(params, epsilon, query) -> delta`` (exact or an upper bound).
      epsilon_for_delta: ``(params, delta, query) -> epsilon`` (certified upper end).
      validate_params: checks a parameter dict and returns float arrays.
      conditions: the values ``query.condition`` may take.
    """

    name: str
    param_names: tuple[str, ...]
    summary: str
    noise: Callable[..., NoiseFamily]
    calibrate: Callable[[np.ndarray, np.ndarray, Query], Calibration]
    profile: Callable[[dict, np.ndarray, Query], np.ndarray]
    epsilon_for_delta: Callable[[dict, np.ndarray, Query], np.ndarray]
    validate_params: Callable[[dict], dict]
    conditions: tuple[str, ...] = ("exact",)

    def make_noise(self, params: dict) -> NoiseFamily:
        return self.noise(**self.validate_params(params))


def check_param_names(mechanism: str, names: tuple[str, ...], params: dict) -> dict:
    """A copy of ``params``; ValueError naming unknown and missing parameter names."""
    params = dict(params)
    unknown, missing = set(params) - set(names), set(names) - set(params)
    if unknown or missing:
        raise ValueError(
            f"{mechanism} takes parameters {', '.join(names)}; "
            + (f"unknown: {', '.join(sorted(unknown))}; " if unknown else "")
            + (f"missing: {', '.join(sorted(missing))}" if missing else "")
        )
    return params


def positive_params(mechanism: str, names: tuple[str, ...]) -> Callable[[dict], dict]:
    """Validator for mechanisms whose parameters are all finite and > 0."""

    def validate(params: dict) -> dict:
        params = check_param_names(mechanism, names, params)
        return {n: _validate.positive(params[n], n) for n in names}

    return validate


def unsupported(mechanism: str, what: str) -> NotImplementedError:
    """The error for a query a mechanism cannot (yet) answer with a certificate."""
    return NotImplementedError(f"{mechanism}: {what} is not supported yet")


def composed_sensitivity(value, compositions: int) -> float:
    r"""``value * sqrt(T)`` rounded up (exactly: the least float64 ``x`` with
    ``x^2 >= value^2 T`` in rational arithmetic): the sensitivity of ``T`` composed
    Gaussian uses.  ``T`` may exceed float64's exact integers.
    """
    x = float(value) * math.sqrt(float(compositions))
    bound = Fraction(float(value)) ** 2 * compositions
    while Fraction(x) ** 2 < bound:
        x = math.nextafter(x, math.inf)
    return x


def composed_budget(compositions: int, value, scale) -> np.ndarray:
    r"""``T * value / scale`` rounded up (exactly, in rational arithmetic): the pure-DP epsilon
    of ``T`` uses (e.g. ``T Delta_1 / b``), elementwise over array ``value`` / ``scale``."""

    def one(v: float, s: float) -> float:
        exact = compositions * Fraction(v) / Fraction(s)
        try:
            x = float(exact)  # correctly rounded (may round down)
        except OverflowError:
            return math.inf
        return math.nextafter(x, math.inf) if Fraction(x) < exact else x

    return np.vectorize(one, otypes=[np.float64])(
        np.asarray(value, np.float64), np.asarray(scale, np.float64)
    )
