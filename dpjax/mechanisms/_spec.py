"""The contract between a mechanism and the façade (``dpjax.calibrate`` etc.).

A :class:`Mechanism` bundles, for one dpjax mechanism name, its noise and
parameters and how to calibrate, profile and account it for a :class:`Query`
(sensitivities, compositions, subsampling, condition).  The façade validates
targets and sensitivities, then dispatches here; each mechanism module owns only
the glue between its kernels and this contract.  A mechanism adding 1-D noise
names its family (:mod:`dpjax.noise`), which declares the parameter names and
constraints; one whose noise is designed in ``K`` dimensions (``spherical``)
declares its parameters itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from dpjax import _validate
from dpjax._batching import call_padded
from dpjax.calibration.result import Calibration
from dpjax.errors import CertificationError
from dpjax.noise import NoiseFamily
from dpjax.noise.registry import validate_params
from dpjax.sensitivity import Sensitivity


@dataclass(frozen=True)
class Query:
    """How the mechanism is used: sensitivities, repetitions, subsampling, condition.

    Attributes:
      sensitivity: the query's stated sensitivities (:class:`~dpjax.sensitivity.Sensitivity`).
      compositions: number of uses ``T``.
      sampling_rate: Poisson subsampling rate ``q`` (``None``: no subsampling).
      condition: ``"exact"`` or ``"sufficient"``.
      relation: the neighbouring relation (:data:`RELATIONS`; ``"add_remove"``: the worse
        of adding and removing a record).
    """

    sensitivity: Sensitivity
    compositions: int = 1
    sampling_rate: float | None = None
    condition: str = "exact"
    relation: str = "add_remove"

    @property
    def dim(self) -> int:
        """The number of coordinates ``K``."""
        return self.sensitivity.dim


class About(NamedTuple):
    """What ``dpjax mechanisms`` says about a mechanism beyond its parameters.

    Attributes:
      paper: the slug of the paper that specifies it (:data:`dpjax.papers.CITATIONS`).
      sensitivities: the sensitivity norms it uses (others are converted soundly).
      supports: what it supports beyond one 1-D release (dims, compositions, subsampling).
      reference: the full citation of a mechanism from outside the four papers (used when
        ``paper`` is empty).
    """

    paper: str = ""
    sensitivities: tuple[str, ...] = ()
    supports: str = ""
    reference: str = ""


@dataclass(frozen=True)
class Mechanism:
    """One noise mechanism as the façade sees it.

    Attributes:
      name: the dpjax name (same in Python, CLI and JSON).
      summary: one line for ``dpjax design`` and the CLI help.
      calibrate: ``(epsilon, delta, query) -> Calibration`` (certified).
      profile: ``(params, epsilon, query) -> delta`` (exact or an upper bound).
      epsilon_for_delta: ``(params, delta, query) -> epsilon`` (certified upper end).
      domain: ``"real"`` (additive noise on real-valued queries, compared by
        ``dpjax.design``) or ``"integer"`` (discrete noise on integer queries: calibrated
        and accounted on its own, not compared with the real-valued mechanisms).
      epsilon_lower: ``(params, delta, query) -> epsilon`` (certified lower end), or
        ``None``: the lower end of a bracket is then 0.
      noise: its 1-D noise family (:mod:`dpjax.noise`), whose ``constraints`` are the
        mechanism's parameters; ``None`` for noise designed in ``K`` dimensions.
      constraints: parameter name -> constraint (:data:`dpjax.noise.registry.CONSTRAINTS`),
        in the papers' notation; taken from ``noise`` when not given.
      conditions: the values ``query.condition`` may take.
      min_dim: the least dimension the mechanism applies to (``dpjax.design`` leaves it
        out below).
      about: its paper, sensitivities and support (:class:`About`, for ``dpjax mechanisms``).
    """

    name: str
    summary: str
    calibrate: Callable[[np.ndarray, np.ndarray, Query], Calibration]
    profile: Callable[[dict, np.ndarray, Query], np.ndarray]
    epsilon_for_delta: Callable[[dict, np.ndarray, Query], np.ndarray]
    noise: type[NoiseFamily] | None = None
    constraints: Mapping[str, str] = field(default_factory=dict)
    conditions: tuple[str, ...] = ("exact",)
    min_dim: int = 1
    about: About = About()
    epsilon_lower: Callable[[dict, np.ndarray, Query], np.ndarray] | None = None
    domain: str = "real"

    def __post_init__(self):
        if self.noise is not None:
            if self.noise.name != self.name:
                raise ValueError(f"mechanism {self.name!r} names noise {self.noise.name!r}")
            object.__setattr__(self, "constraints", dict(self.noise.constraints))
        if not self.constraints:
            raise ValueError(f"mechanism {self.name!r} declares no parameters")

    @property
    def param_names(self) -> tuple[str, ...]:
        """Parameter names in the papers' notation."""
        return tuple(self.constraints)

    def validate_params(self, params: Mapping) -> dict:
        """Check a parameter dict (names and values); float64 arrays out.

        Args:
          params: parameter name -> value.

        Raises:
          ValueError: unknown or missing names, or a value outside its constraint.
        """
        return validate_params(self.name, self.constraints, params)

    def calibrate_certified(
        self, epsilon: np.ndarray, delta: np.ndarray, query: Query
    ) -> Calibration:
        """:attr:`calibrate`, whose parameters must themselves be valid parameters.

        The calibration certifies ``delta_at_params <= delta``; the returned parameters
        must also be finite, normal float64 values within their constraints (no zero
        scale from an underflow), else :class:`~dpjax.errors.CertificationError`.

        Args:
          epsilon, delta: validated, broadcast float64 target arrays.
          query: the :class:`Query`.
        """
        cal = self.calibrate(epsilon, delta, query)
        try:
            self.validate_params(cal.params)
        except ValueError as err:
            raise CertificationError(
                f"{self.name}: the calibrated parameters are outside what dpjax can represent "
                f"and certify ({err}); rescale the sensitivity or the target"
            ) from None
        return cal

    def make_noise(self, params: Mapping) -> NoiseFamily:
        """The mechanism's 1-D noise with validated ``params`` (ValueError if it has none).

        Args:
          params: parameter name -> value.
        """
        if self.noise is None:
            raise ValueError(f"{self.name} noise is not a 1-D family of dpjax.noise")
        return self.noise(**self.validate_params(params))


#: The conditions a query may ask for.
CONDITIONS = ("exact", "sufficient")
#: The neighbouring relations a calibration may ask for (dp_accounting's, by name).
RELATIONS = ("add_remove", "add", "remove", "replace_one")


def make_query(
    mechanism: Mechanism, use: Mapping, condition: str = "exact", default_unit: bool = False
) -> Query:
    """A validated :class:`Query` for ``mechanism`` from the façade's keyword arguments.

    Args:
      mechanism: the :class:`Mechanism` the query is for (its conditions are checked).
      use: the façade's ``dim``, ``l1``, ``l2``, ``linf`` (:class:`~dpjax.sensitivity.
        Sensitivity`), ``compositions`` (``T >= 1``), ``sampling_rate`` (``q`` in
        ``(0, 1]`` or ``None``) and ``relation`` (:data:`RELATIONS`); missing ones take the
        façade's defaults.
      condition: ``"exact"`` or ``"sufficient"``.
      default_unit: with no sensitivity given and ``dim = 1``, assume unit sensitivity
        (parameters in units of the sensitivity, e.g. a noise multiplier).

    Raises:
      ValueError: a bad argument (named, with what is allowed; for an integer-domain
        mechanism also a sensitivity that is not an integer).
      NotImplementedError: ``dim > 1`` for an integer-domain mechanism.
    """
    unknown = set(use) - {"dim", "l1", "l2", "linf", "compositions", "sampling_rate", "relation"}
    if unknown:
        raise ValueError(f"unknown query arguments: {', '.join(sorted(unknown))}")
    dim, compositions = use.get("dim", 1), use.get("compositions", 1)
    l1, l2, linf = (use.get(norm) for norm in ("l1", "l2", "linf"))
    sampling_rate = use.get("sampling_rate")
    relation = use.get("relation", "add_remove")
    if not isinstance(relation, str) or relation not in RELATIONS:
        raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")
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
    query = Query(
        sensitivity=Sensitivity(dim=dim, l1=l1, l2=l2, linf=linf),
        compositions=compositions,
        sampling_rate=sampling_rate,
        condition=condition,
        relation=relation,
    )
    if mechanism.domain == "integer":  # discrete noise: an integer query, checked up front
        integer_sensitivity(mechanism.name, query)
    return query


def calibration(
    mechanism: str,
    query: Query,
    *,
    params: dict,
    variance,
    epsilon,
    delta,
    delta_at_params,
    sensitivity: dict,
    notes: tuple[str, ...] = (),
    condition: str = "exact",
    member=None,
) -> Calibration:
    """The :class:`Calibration` of ``query``: its dimension, uses and sampling rate recorded,
    and ``mse = dim * variance`` (independent identical noise per coordinate).

    Args:
      mechanism: the dpjax name.
      query: the :class:`Query` calibrated for.
      params: parameter name -> array.
      variance: per-coordinate noise variance.
      epsilon, delta: the target.
      delta_at_params: the certificate (``<= delta``).
      sensitivity: the sensitivities used (after sound derivation).
      notes: what was assumed or derived.
      condition: ``"exact"`` or ``"sufficient"``.
      member: which member of a shape family won (see :class:`Calibration`), or ``None``.
    """
    return Calibration(
        mechanism=mechanism,
        params=params,
        variance=variance,
        mse=query.dim * variance,
        epsilon=epsilon,
        delta=delta,
        delta_at_params=delta_at_params,
        dim=query.dim,
        compositions=query.compositions,
        sampling_rate=query.sampling_rate,
        condition=condition,
        sensitivity=sensitivity,
        notes=notes,
        member=member,
    )


def unsupported(mechanism: str, what: str) -> NotImplementedError:
    """The error for a query a mechanism cannot (yet) answer with a certificate.

    Args:
      mechanism: the dpjax name.
      what: the unsupported part of the query (e.g. ``"Poisson subsampling"``).
    """
    return NotImplementedError(f"{mechanism}: {what} is not supported yet")


def integer_sensitivity(name: str, query: Query) -> tuple[int, tuple[str, ...]]:
    """The query's integer sensitivity ``Delta`` (``linf``), in one dimension.

    Args:
      name: the mechanism's name, for messages.
      query: the :class:`Query`.

    Raises:
      NotImplementedError: ``dim > 1``.
      ValueError: a sensitivity that is not an integer.
    """
    if query.dim != 1:
        raise unsupported(name, "dim > 1 (discrete noise is accounted for one integer query)")
    sens, notes = query.sensitivity.resolve("linf")
    if sens != int(sens) or sens < 1 or sens > 2**31:
        raise ValueError(
            f"{name} needs an integer sensitivity (linf, l1 or l2) in [1, 2^31], got {sens!r}"
        )
    return int(sens), notes


def single_release(mechanism: str, query: Query, needs: str = "") -> tuple[float, tuple[str, ...]]:
    """The ``linf`` sensitivity of one release in one dimension: what an exact 1-D profile covers.

    Args:
      mechanism: the dpjax name, for messages.
      query: the :class:`Query`.
      needs: what more dimensions or uses would take, for the message.

    Raises:
      NotImplementedError: for subsampling, ``dim > 1`` or ``compositions > 1``.
    """
    if query.sampling_rate is not None:
        raise unsupported(mechanism, "Poisson subsampling (needs the PLD engine)")
    if query.dim != 1 or query.compositions != 1:
        what = "dim > 1 or compositions > 1"
        raise unsupported(mechanism, f"{what} ({needs})" if needs else what)
    return query.sensitivity.resolve("linf")


def exact_1d_accounting(
    family: type[NoiseFamily], delta_kernel, epsilon_kernel, reference: str, needs: str = ""
) -> tuple[Callable, Callable]:
    """``(profile, epsilon_for_delta)`` of a mechanism with exact 1-D kernels only.

    The kernels take ``(x, *params, sensitivity)`` with the family's parameters in the order
    of its ``constraints``; one release in one dimension (:func:`single_release`).

    Args:
      family: the noise family (its dpjax name and parameter names).
      delta_kernel: ``(epsilon, *params, sensitivity) -> delta``, the exact profile.
      epsilon_kernel: ``(delta, *params, sensitivity) -> epsilon``, its certified inverse.
      reference: where the profile comes from, for the docstrings.
      needs: what more dimensions or uses would take, for the error message.
    """
    name, names = family.name, tuple(family.constraints)

    def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
        sens, _ = single_release(name, query, needs)
        return call_padded(delta_kernel, epsilon, *(params[n] for n in names), sens)

    def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
        sens, _ = single_release(name, query, needs)
        return call_padded(epsilon_kernel, delta, *(params[n] for n in names), sens)

    def doc(summary: str, x: str) -> str:
        return f"""{summary}

        Args:
          params: ``{{{", ".join(names)}}}`` (validated).
          {x}
          query: one release in one dimension, sensitivity ``linf``.
        """

    profile.__doc__ = doc(
        f"Exact 1-D ``delta(epsilon)`` of {name} noise ({reference}).",
        "epsilon: the epsilons to evaluate at.",
    )
    epsilon_for_delta.__doc__ = doc(
        f"Least certified ``epsilon`` of {name} noise at ``delta`` (inverse of {reference}).",
        "delta: the deltas to invert at.",
    )
    return profile, epsilon_for_delta


def exact_1d_mechanism(
    family: type[NoiseFamily], summary: str, calibrate: Callable, delta_kernel,
    epsilon_kernel, reference: str, needs: str = "",
) -> Mechanism:
    """The registry entry of a 1-D mechanism of flipped-huber-mechanism with exact kernels.

    One release in one dimension, sensitivity ``linf``; profile and inverse by
    :func:`exact_1d_accounting`.

    Args:
      family: the noise family (its dpjax name, parameters and constraints).
      summary: the one-line summary.
      calibrate: its ``(epsilon, delta, query) -> Calibration``.
      delta_kernel, epsilon_kernel, reference, needs: as in :func:`exact_1d_accounting`.
    """
    profile, epsilon_for_delta = exact_1d_accounting(
        family, delta_kernel, epsilon_kernel, reference, needs
    )
    return Mechanism(
        family.name, summary, calibrate, profile, epsilon_for_delta, noise=family,
        about=About("flipped-huber-mechanism", ("linf",), "one release in one dimension"),
    )
