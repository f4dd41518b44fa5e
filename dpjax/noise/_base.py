"""What every 1-D noise family provides.

A noise family is a small immutable pytree (a ``NamedTuple`` of its
parameters) whose methods are pure, shape-polymorphic kernels:

``logpdf(x)``, ``cdf(x)``, ``sf(x)``, ``log_sf(x)``, ``quantile(u)``,
``sample(key, shape, dtype)``, ``from_bits(bits, dtype)`` (the sampler as a
deterministic function of its random words), ``abs_isf(log_u, one_minus_u, deep)``
(``|x|`` with ``P(|T| > |x|) = U``, the tail quantile the samplers invert),
``variance``, and
``privacy_loss(t, sensitivity) = log g(t) - log g(t + sensitivity)``
(the equivalent privacy loss ``zeta_d(t)`` of Sec. II-C of
flipped-huber-mechanism).  Parameters are arrays, so a family object can
be passed through ``jit``/``vmap`` and batched.

Every family here is symmetric and a scale family, which the calibration
layer exploits (privacy improves monotonically with the scale).

Samplers draw ``U`` with its logarithm resolved from several random words
(:mod:`dpjax.noise._tail`), so float32/bfloat16 samples keep the tails the
accountant assumes down to ``tail_floor(dtype)`` (``2^-128`` in float32,
``2^-256`` in float64) instead of stopping at ``2^-24``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from jax import Array
from jax.typing import ArrayLike


@runtime_checkable
class NoiseFamily(Protocol):
    """Structural type of a dpjax noise family (see module docstring)."""

    @property
    def variance(self) -> Array: ...

    def logpdf(self, x: ArrayLike) -> Array: ...

    def cdf(self, x: ArrayLike) -> Array: ...

    def sf(self, x: ArrayLike) -> Array: ...

    def log_sf(self, x: ArrayLike) -> Array: ...

    def quantile(self, u: ArrayLike) -> Array: ...

    def sample(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array: ...

    def from_bits(self, bits: ArrayLike, dtype=None) -> Array: ...

    def abs_isf(self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True) -> Array: ...

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array: ...


def sample_dtype(dtype):
    """The dtype to sample in: the caller's, else the default float (float32 without x64)."""
    import jax.numpy as jnp

    return jnp.dtype(dtype) if dtype is not None else jnp.result_type(float)
