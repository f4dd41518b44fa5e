r"""Privacy events: a small frozen pytree algebra named after dp_accounting's ``DpEvent``.

An event describes *what was released*; an accountant
(:class:`dpjax.accounting.accountant.PLDAccountant`) turns it into a certified
``(epsilon, delta)`` under a neighbouring relation (``"add_remove"``, ``"add"``,
``"remove"``, ``"replace_one"``, ``"replace_special"``).  ``"replace_special"`` is
dp_accounting's ``REPLACE_SPECIAL`` (a record replaced by a special "zero" record,
Definition 1.1 of arXiv:2103.00039): both directions are accounted, as under
``"add_remove"``, and for every event but randomized response the pairs are the same;
randomized response compares ``R(x)`` with the uniform output of the special record.
Parameters are in units of the sensitivity unless the event has a ``sensitivity`` field (as in
dp_accounting).  Event, mechanism, relations:

* ``Gaussian(m)``: ``f(D) + N(0, m^2)`` with ``|f(D) - f(D')|_2 <= 1``; all relations
  (replace-one: shift 2);
* ``Laplace(m)``: ``f(D) + Lap(m)`` with ``|f(D) - f(D')|_1 <= 1``; all (replace-one: shift 2);
* ``Noise(name, params)``: ``f(D) + T`` for any 1-D family of :mod:`dpjax.noise`; all;
* ``DiscreteLaplace(a, s)``: integer ``f`` plus ``DLap(a)`` (pmf ``tanh(a/2) e^{-a|k|}``); all
  (replace-one: shift ``2 s``);
* ``DiscreteGaussian(sigma, s)``: integer ``f`` plus ``N_Z(0, sigma^2)``; all (``2 s``);
* ``RandomizedResponse(p, k)``: the true bucket w.p. ``1 - p``, else uniform; replace-one,
  replace-special;
* ``MixtureOfGaussians(sigma, c, p)``: ``N(0, sigma^2)`` vs ``sum_i p_i N(c_i, sigma^2)``;
  add, remove, add_remove;
* ``EpsilonDelta(epsilon, delta)``: any ``(epsilon, delta)``-DP mechanism; all;
* ``ZCDP(rho)``: any ``rho``-zCDP mechanism; all;
* ``PoissonSampled(q, e)``: each record kept w.p. ``q``, then ``e``; all (replace-one: additive
  noise events only);
* ``TruncatedSubsampledGaussian(n, q, B, m)``: Poisson sampling at ``q`` of ``n`` records,
  truncated to at most ``B``, then ``Gaussian(m)``; all (dp_accounting's
  ``TruncatedSubsampledGaussianDpEvent``);
* ``SampledWithoutReplacement(n, m, e)``: ``m`` distinct records of ``n``, then ``e``;
  replace-one;
* ``SampledWithReplacement(n, m, e)``: ``m`` draws of ``n``: expressible, not accounted (raises);
* ``Composed([e1, ...])``, ``SelfComposed(e, k)``, ``NoOp()``, ``NonPrivate()``: all.

Every event is a frozen dataclass registered as a JAX pytree: real parameters are leaves
(``jax.tree_util.tree_map`` rescales them), counts, sizes and names are static.

Every constructor validates its fields: a real parameter must be a real number (``int``,
``float``, a NumPy scalar or 0-d array; ``bool``, strings and complex numbers raise
``TypeError``), finite, and in its range (``ValueError``); both messages name the field,
its value and what is allowed.  Noise scales need only be positive: one too small for a
loss grid (e.g. ``Gaussian(5e-324)``, a subnormal float that XLA flushes to zero) is
accounted as what it nearly is, no privacy: ``delta = 1``, ``epsilon = inf`` from the grid
(a certified, vacuous answer; closed forms and the RDP bound may still give a finite one).
Placeholders that JAX's tree utilities put in leaf positions (tracers, ``None``) are not
checked by the constructors; the accountant checks every value it reads.

Example:
  >>> from dpjax.accounting import events as ev
  >>> step = ev.PoissonSampled(0.01, ev.Gaussian(1.0))
  >>> ev.Composed([ev.Laplace(2.0), ev.SelfComposed(step, 1000)])  # doctest: +ELLIPSIS
  Composed(events=(Laplace(noise_multiplier=2.0), SelfComposed(...count=1000)))
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, fields

import jax
import numpy as np

from dpjax import noise
from dpjax._batching import device_array
from dpjax.numerics import float64_kernel

__all__ = [
    "RELATIONS",
    "Composed",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "EpsilonDelta",
    "Event",
    "Gaussian",
    "Laplace",
    "MixtureOfGaussians",
    "NoOp",
    "NonPrivate",
    "Noise",
    "PoissonSampled",
    "RandomizedResponse",
    "SampledWithReplacement",
    "SampledWithoutReplacement",
    "SelfComposed",
    "TruncatedSubsampledGaussian",
    "ZCDP",
    "check_values",
    "noise_family",
]

#: The neighbouring relations an accountant can account under.
RELATIONS = ("add_remove", "add", "remove", "replace_one", "replace_special")


def _static(**kw):
    return field(metadata={"static": True}, **kw)


def _concrete(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _real(name: str, value):
    """``value`` as a float64 NumPy array if it is concrete and real; ``None`` for a placeholder.

    Real numbers (``int``, ``float``, NumPy scalars) and real arrays (NumPy, concrete JAX:
    a batch of events for ``vmap``) are returned as float64 arrays; ``bool``, strings,
    complex numbers and non-real arrays raise :class:`TypeError` naming the field.  JAX
    tracers and the other non-numeric placeholders that JAX's tree utilities put in leaf
    positions (``None``, sentinels) are not checked here; an accountant checks them when it
    reads the values (:func:`check_values`).
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or (
        isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real)
    ):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    if isinstance(value, numbers.Real):
        return np.asarray(float(value))
    if isinstance(value, jax.core.Tracer):
        return None
    if isinstance(value, (np.ndarray, jax.Array)):
        dtype = np.dtype(value.dtype)
        if not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)) or (
            dtype == np.bool_
        ):
            raise TypeError(f"{name} must be a real number, got {value!r}")
        return np.asarray(value, np.float64)
    return None


def _check(name: str, value, lo: float, hi: float = math.inf, lo_open=False, hi_open=False):
    """``TypeError`` unless ``value`` is a real number (:func:`_real`), ``ValueError`` unless
    it is finite and ``lo <(=) value <(=) hi`` (NaN and infinities fail; every element of
    an array); placeholders (tracers, ``None``) are skipped."""
    v = _real(name, value)
    if v is None:
        return
    above = (v > lo) if lo_open else (v >= lo)
    below = (v < hi) if hi_open else (v <= hi)
    ok = np.isfinite(v) & above & below
    if not np.all(ok):
        lo_s = f"{'>' if lo_open else '>='} {lo}"
        hi_s = "" if hi == math.inf else f" and {'<' if hi_open else '<='} {hi}"
        raise ValueError(f"{name} must be a finite real number {lo_s}{hi_s}, got {value!r}")


class Event:
    """Base class of the events (a marker: every event is a frozen pytree dataclass)."""


def _event(cls):
    return jax.tree_util.register_dataclass(dataclass(frozen=True)(cls))


@_event
class NoOp(Event):
    """Releases nothing (zero privacy loss)."""


@_event
class NonPrivate(Event):
    """Releases something without any guarantee: every accountant answers ``epsilon = inf``."""


@_event
class Gaussian(Event):
    """Gaussian mechanism with noise multiplier ``m = sigma / Delta_2`` (``GaussianDpEvent``)."""

    noise_multiplier: float

    def __post_init__(self):
        _check("Gaussian.noise_multiplier", self.noise_multiplier, 0.0, lo_open=True)


@_event
class Laplace(Event):
    """Laplace mechanism with scale in units of ``Delta_1`` (``LaplaceDpEvent``)."""

    noise_multiplier: float

    def __post_init__(self):
        _check("Laplace.noise_multiplier", self.noise_multiplier, 0.0, lo_open=True)


@_event
class Noise(Event):
    """Additive noise of any 1-D family of :mod:`dpjax.noise`, parameters in sensitivity units.

    ``Noise("flipped-huber", {"alpha": 2.0, "gamma": 1.0})`` is ``f(D) + T`` with
    ``|f(D) - f(D')| <= 1``.
    """

    mechanism: str = _static()
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.mechanism, str):
            raise TypeError(f"Noise.mechanism must be a noise family name (str), got "
                            f"{self.mechanism!r}")
        if not isinstance(self.params, dict):
            raise TypeError(f"Noise.params must be a dict of real numbers, got {self.params!r}")
        for k, v in self.params.items():
            _check(f"Noise.params[{k!r}]", v, -math.inf)


@_event
class DiscreteLaplace(Event):
    """Discrete Laplace ``P(k) = tanh(a/2) e^{-a|k|}`` on integer queries.

    dp_accounting's ``DiscreteLaplaceDpEvent``.
    """

    noise_parameter: float
    sensitivity: int = _static(default=1)

    def __post_init__(self):
        _check("DiscreteLaplace.noise_parameter", self.noise_parameter, 0.0, lo_open=True)
        _positive_int("DiscreteLaplace.sensitivity", self.sensitivity)


@_event
class DiscreteGaussian(Event):
    """Discrete Gaussian ``P(k) ∝ e^{-k^2 / (2 sigma^2)}`` on integer queries (Canonne et al. 2020).
    """

    sigma: float
    sensitivity: int = _static(default=1)

    def __post_init__(self):
        _check("DiscreteGaussian.sigma", self.sigma, 0.0, 1e5, lo_open=True)
        _positive_int("DiscreteGaussian.sensitivity", self.sensitivity)


@_event
class RandomizedResponse(Event):
    """k-ary randomized response: the true bucket w.p. ``1 - p``, else uniform over ``k``."""

    noise_parameter: float
    num_buckets: int = _static()

    def __post_init__(self):
        _check("RandomizedResponse.noise_parameter", self.noise_parameter, 0.0, 1.0)
        _positive_int("RandomizedResponse.num_buckets", self.num_buckets)


@_event
class MixtureOfGaussians(Event):
    """``N(0, sigma^2)`` vs ``sum_i p_i N(c_i, sigma^2)``, ``c_i >= 0``.

    dp_accounting's ``MixtureOfGaussiansDpEvent``.
    """

    standard_deviation: float
    sensitivities: tuple
    sampling_probs: tuple

    def __post_init__(self):
        _check("MixtureOfGaussians.standard_deviation", self.standard_deviation, 0, lo_open=True)
        c, p = _tuple("MixtureOfGaussians.sensitivities", self.sensitivities), _tuple(
            "MixtureOfGaussians.sampling_probs", self.sampling_probs)
        object.__setattr__(self, "sensitivities", c)
        object.__setattr__(self, "sampling_probs", p)
        for i, x in enumerate(c):
            _check(f"MixtureOfGaussians.sensitivities[{i}]", x, 0.0)
        for i, x in enumerate(p):
            _check(f"MixtureOfGaussians.sampling_probs[{i}]", x, 0.0, 1.0)
        if all(_concrete(x) for x in c + p):
            if len(c) != len(p) or not c:
                raise ValueError("MixtureOfGaussians: sensitivities and sampling_probs must be "
                                 f"non-empty and of the same length, got {len(c)} and {len(p)}")
            if abs(sum(p) - 1.0) > 1e-9:
                raise ValueError(f"MixtureOfGaussians.sampling_probs must sum to 1, got {sum(p)}")


@_event
class EpsilonDelta(Event):
    """Any ``(epsilon, delta)``-DP mechanism (dominated by generalised randomized response)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self):
        _check("EpsilonDelta.epsilon", self.epsilon, 0.0)
        _check("EpsilonDelta.delta", self.delta, 0.0, 1.0)


@_event
class ZCDP(Event):
    """Any ``rho``-zCDP mechanism (Bun & Steinke 2016) (``ZCDpEvent`` with ``xi = 0``)."""

    rho: float

    def __post_init__(self):
        _check("ZCDP.rho", self.rho, 0.0, lo_open=True)


@_event
class Composed(Event):
    """Adaptive composition of events, in any order (``ComposedDpEvent``)."""

    events: tuple

    def __post_init__(self):
        object.__setattr__(self, "events", tuple(self.events))
        for e in self.events:
            _is_event("Composed.events", e)


@_event
class SelfComposed(Event):
    """``count`` adaptive repetitions of ``event`` (``SelfComposedDpEvent``)."""

    event: Event
    count: int = _static()

    def __post_init__(self):
        _is_event("SelfComposed.event", self.event)
        _positive_int("SelfComposed.count", self.count, allow_zero=True)


@_event
class PoissonSampled(Event):
    """Each record kept independently w.p. ``sampling_probability``, then ``event``."""

    sampling_probability: float
    event: Event

    def __post_init__(self):
        _check("PoissonSampled.sampling_probability", self.sampling_probability, 0.0, 1.0)
        _is_event("PoissonSampled.event", self.event)


@_event
class TruncatedSubsampledGaussian(Event):
    r"""Poisson sampling at ``q``, the batch truncated to ``B`` records, then ``Gaussian(m)``.

    Each of ``dataset_size`` records is kept w.p. ``sampling_probability``; a batch larger
    than ``truncated_batch_size`` is cut to a uniform subset of that size; the Gaussian
    mechanism with noise multiplier ``m`` is applied to it (dp_accounting's
    ``TruncatedSubsampledGaussianDpEvent``, arXiv:2508.15089).  Its dominating pair, per
    direction, is the mixture (dp_accounting ``from_truncated_subsampled_gaussian_mechanism``)

    .. math:: (1 - t)\,\mathrm{PS}_q(\mathcal N(0, m^2)) + t\,
              \mathrm{PS}^{\text{replace}}_{q'}(\mathcal N(0, (m/2)^2)),\qquad
              t = P[\mathrm{Bin}(n - 1, q) \ge B],\quad
              q' = \frac{B\,P[\mathrm{Bin}(n, q) > B]}{n\,t}

    (``t``: truncation given that the record was sampled; ``q'``: the record's sampling
    probability given truncation).  ``q = 0``, ``B = 0`` or ``n = 0`` release nothing.
    """

    dataset_size: int = _static()
    sampling_probability: float
    truncated_batch_size: int = _static()
    noise_multiplier: float

    def __post_init__(self):
        _positive_int("TruncatedSubsampledGaussian.dataset_size", self.dataset_size,
                      allow_zero=True)
        _check("TruncatedSubsampledGaussian.sampling_probability", self.sampling_probability,
               0.0, 1.0)
        _positive_int("TruncatedSubsampledGaussian.truncated_batch_size",
                      self.truncated_batch_size, allow_zero=True)
        _check("TruncatedSubsampledGaussian.noise_multiplier", self.noise_multiplier, 0.0,
               lo_open=True)


@dataclass(frozen=True)
class _FixedSizeSample(Event):
    """``sample_size`` records of ``source_dataset_size``, then ``event`` (the fields and checks
    of the two fixed-size samplings below; not an event itself)."""

    source_dataset_size: int = _static()
    sample_size: int = _static()
    event: Event = None

    def __post_init__(self):
        name = type(self).__name__
        _sizes(name, self.source_dataset_size, self.sample_size)
        _is_event(f"{name}.event", self.event)


@_event
class SampledWithoutReplacement(_FixedSizeSample):
    """``sample_size`` distinct records of ``source_dataset_size``, uniformly, then ``event``."""


@_event
class SampledWithReplacement(_FixedSizeSample):
    """``sample_size`` uniform draws (with repetition) of ``source_dataset_size``, then ``event``.
    """


@float64_kernel
def noise_family(event: Event):
    """The :mod:`dpjax.noise` instance of an additive leaf event, or ``None``.

    ``Gaussian(s)`` is ``noise.Gaussian(s)``, ``Laplace(b)`` is ``noise.Laplace(b)`` and
    ``Noise(name, params)`` is ``noise.make(name, **params)``, all in sensitivity units
    (float64 parameters); any other event (discrete, composed, sampled, ...) has none.
    Requires x64 (:func:`dpjax.numerics.float64_kernel`): without it the parameters would
    silently be float32.

    Args:
      event: a dpjax event.

    Returns:
      The noise family, or ``None``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> type(noise_family(Gaussian(2.0))).__name__, noise_family(DiscreteLaplace(1.0))
      ('Gaussian', None)
    """
    if isinstance(event, Gaussian):
        return noise.Gaussian(device_array(float(event.noise_multiplier), np.float64))
    if isinstance(event, Laplace):
        return noise.Laplace(device_array(float(event.noise_multiplier), np.float64))
    if isinstance(event, Noise):
        return noise.make(event.mechanism, **{k: float(v) for k, v in event.params.items()})
    return None


def _tuple(name, value) -> tuple:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a sequence of real numbers, got {value!r}")
    return tuple(value)


def check_values(event: Event) -> None:
    """Every real parameter of ``event`` (recursively) is a concrete real number.

    The constructors skip placeholders (tracers, ``None``: what JAX's tree utilities put
    in leaf positions); an accountant, which reads the values, calls this first.

    Args:
      event: a dpjax event.

    Raises:
      TypeError: a field that is not a concrete real number (named in the message).
    """

    def walk(name, value):
        if isinstance(value, Event):
            for f in fields(value):
                if not f.metadata.get("static"):
                    walk(f"{type(value).__name__}.{f.name}", getattr(value, f.name))
        elif isinstance(value, tuple):
            for i, v in enumerate(value):
                walk(name if isinstance(v, Event) else f"{name}[{i}]", v)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(f"{name}[{k!r}]", v)
        elif _real(name, value) is None:
            raise TypeError(f"{name} must be a concrete real number, got {value!r}")

    walk(type(event).__name__, event)


def _positive_int(name, value, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise ValueError(f"{name} must be an integer >= {0 if allow_zero else 1}, got {value!r}")


def _sizes(name, n, m):
    _positive_int(f"{name}.source_dataset_size", n)
    _positive_int(f"{name}.sample_size", m)
    if m > n:
        raise ValueError(f"{name}: sample_size ({m}) must be <= source_dataset_size ({n})")


def _is_event(name, e):
    if not isinstance(e, Event):
        raise TypeError(f"{name} must be a dpjax event, got {type(e).__name__}")

