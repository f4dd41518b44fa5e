r"""What every 1-D noise family provides, and what it may provide to plug into the engine.

A noise family is a small immutable pytree (a ``NamedTuple`` of its
parameters) whose methods are pure, shape-polymorphic kernels:

``logpdf(x)``, ``cdf(x)``, ``sf(x)``, ``log_sf(x)``, ``quantile(u)``,
``sample(key, shape, dtype)``, ``from_bits(bits, dtype)`` (the sampler as a
deterministic function of its random words), ``abs_isf(log_u, one_minus_u, deep, u)``
(``|x|`` with ``P(|T| > |x|) = U``, the tail quantile the samplers invert),
``variance``, and its monotone privacy loss at a shift ``d``

.. math:: \zeta_d(t) = \log g(t) - \log g(t + d)

(Sec. II-C of flipped-huber-mechanism; non-decreasing in ``t`` for the
symmetric log-concave families here).  Parameters are arrays, so a family
object can be passed through ``jit``/``vmap`` and batched.

Each family also declares, as class attributes, its dpjax ``name`` (the same in
Python, the CLI and JSON) and its parameters' ``constraints`` (name -> one of
:data:`dpjax.noise.registry.CONSTRAINTS`), from which
:func:`dpjax.noise.make` validates parameters.  Optionally it provides, for the
PLD engine (:mod:`dpjax.accounting.pld`), which asks the family and falls back
on bisection (:mod:`dpjax.noise.privacy_loss`):

* ``privacy_loss_inverse(epsilon, sensitivity)``: the closed-form right-continuous
  inverse ``sup{t : zeta_d(t) <= epsilon}`` (:class:`InvertibleLoss`);
* ``tail_point(tail)``: a closed-form ``t >= 0`` with ``log_sf(t) <= log(tail)``
  (:class:`KnownTail`);
* ``from_scale(scale, shape)`` (a classmethod): the family at a traced scale and
  shape (e.g. ``alpha / gamma``), which the engine's calibration searches over
  (:class:`ScaleFamily`).

Every family here is symmetric and a scale family, which the calibration
layer exploits (privacy improves monotonically with the scale).

Samplers draw ``U`` with its logarithm resolved from several random words
(:mod:`dpjax.noise._tail`), so float32/bfloat16 samples keep the tails the
accountant assumes down to ``tail_floor(dtype)`` (``2^-128`` in float32,
``2^-256`` in float64) instead of stopping at ``2^-24``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax import _validate


@runtime_checkable
class NoiseFamily(Protocol):
    """Structural type of a dpjax noise family (see the module docstring).

    Attributes:
      name: the dpjax name of the family (class attribute).
      constraints: parameter name -> constraint (class attribute).
      variance: the variance of one coordinate.
    """

    name: str
    constraints: dict[str, str]

    @property
    def variance(self) -> Array: ...

    def logpdf(self, x: ArrayLike) -> Array: ...

    def cdf(self, x: ArrayLike) -> Array: ...

    def sf(self, x: ArrayLike) -> Array: ...

    def log_sf(self, x: ArrayLike) -> Array: ...

    def quantile(self, u: ArrayLike) -> Array: ...

    def sample(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array: ...

    def from_bits(self, bits: ArrayLike, dtype=None) -> Array: ...

    def abs_isf(
        self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True, u=None
    ) -> Array: ...

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array: ...


@runtime_checkable
class InvertibleLoss(Protocol):
    """A family whose privacy loss has a closed-form right-continuous inverse."""

    def privacy_loss_inverse(self, epsilon: ArrayLike, sensitivity: ArrayLike) -> Array: ...


@runtime_checkable
class KnownTail(Protocol):
    """A family with a closed-form point beyond which at most ``tail`` mass lies."""

    def tail_point(self, tail: float) -> Array: ...


@runtime_checkable
class ScaleFamily(Protocol):
    """A family the PLD engine can build from a traced ``(scale, shape)``."""

    @classmethod
    def from_scale(cls, scale: ArrayLike, shape: ArrayLike) -> NoiseFamily: ...


def sample_dtype(dtype):
    """The dtype to sample in: the caller's, else the default float (float32 without x64).

    Every sampler and ``from_bits`` path resolves its dtype here, so all of them refuse
    integer, boolean, complex and float8 outputs (:func:`dpjax._validate.sample_dtype`).

    Args:
      dtype: the requested dtype, or ``None``.

    Raises:
      TypeError: ``dtype`` is not one of ``bfloat16``, ``float16``, ``float32``, ``float64``.
    """
    return _validate.sample_dtype(dtype) if dtype is not None else jnp.result_type(float)
