r"""Methods the families share, assigned in their class bodies (``sf = _shared.sf``).

For a law symmetric about 0, ``P(T <= x) = P(T > -x)`` and, for ``x < 0``,
``P(T > x) = 1 - P(T > |x|)``; a family then only writes its half tail
``log P(T > a)`` (``a >= 0``) and its tail quantile ``abs_isf``, and samples
``+-|T|`` with an independent sign from a tail-exact uniform
(:mod:`dpjax.noise._tail`).  Its privacy loss at a shift ``d`` is
``zeta_d(t) = log g(t) - log g(t + d)`` (Sec. II-C of flipped-huber-mechanism).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise._base import sample_dtype
from dpjax.noise._tail import symmetric_from_bits, symmetric_sample


def scale_only(cls, scale: ArrayLike, shape: ArrayLike):
    """A one-parameter family at that parameter ``= scale`` (the PLD engine's ``noise_fn``).

    Assigned as ``from_scale = classmethod(_shared.scale_only)``.

    Args:
      scale: the family's one parameter (``sigma``, ``b``).
      shape: ignored (no shape parameter).
    """
    del shape
    return cls(scale)


def log_sf(self, x: ArrayLike) -> Array:
    r"""``log P(T > x)`` from the family's half tail ``_log_half_tail(|x|)``.

    .. math:: \log P(T > x) = \begin{cases} \log P(T > x) & x \ge 0 \\
              \log(1 - P(T > |x|)) & x < 0 \end{cases}

    Args:
      x: points at which the survival function is wanted.
    """
    x = jnp.asarray(x)
    lt = self._log_half_tail(jnp.abs(x))
    pos = x >= 0
    return jnp.where(pos, lt, jnp.log1p(-jnp.exp(jnp.where(pos, -1.0, lt))))


def sf(self, x: ArrayLike) -> Array:
    """The survival function ``P(T > x) = exp(log_sf(x))``.

    Args:
      x: points.
    """
    return jnp.exp(self.log_sf(x))


def log_cdf(self, x: ArrayLike) -> Array:
    """``log P(T <= x) = log P(T > -x)`` by symmetry.

    Args:
      x: the points, any real.
    """
    return self.log_sf(-jnp.asarray(x))


def cdf(self, x: ArrayLike) -> Array:
    """The distribution function ``P(T <= x) = P(T > -x)`` (symmetry).

    Args:
      x: where to evaluate it.
    """
    return jnp.exp(self.log_sf(-jnp.asarray(x)))


def pdf(self, x: ArrayLike) -> Array:
    """The density ``g(x) = exp(logpdf(x))``.

    Args:
      x: points of the real line.
    """
    return jnp.exp(self.logpdf(x))


def log_density_ratio(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
    """The privacy loss ``zeta_d(t) = log g(t) - log g(t + d)`` from ``logpdf`` (Sec. II-C).

    ``+inf`` where only ``t`` lies in a bounded support, ``-inf`` where only ``t + d`` does.

    Args:
      t: points.
      sensitivity: the shift ``d``.
    """
    t = jnp.asarray(t)
    return self.logpdf(t) - self.logpdf(t + sensitivity)


def from_bits(self, bits: ArrayLike, dtype=None) -> Array:
    """Samples ``+-abs_isf(U)`` as a deterministic function of their random words.

    Args:
      bits: the :class:`~dpjax.noise.TailWords` of the batch (:func:`dpjax.noise.random_words`).
      dtype: output dtype (default: JAX's default float).
    """
    return symmetric_from_bits(bits, dtype, self.abs_isf)


def compiled_sampler(draw):
    """``draw(noise, key, shape, dtype)`` as a method run as one compiled program.

    Called outside ``jit`` a sampler would dispatch its few hundred operations one by
    one, and JAX compiles each new (operation, shape) on first use: seconds before the
    first draw.  The method jits ``draw`` with the shape and dtype static (one program
    per family, shape and dtype; the family's parameters are traced, as its pytree
    leaves), so a first call compiles one program; inside ``jit``/``vmap`` it is inlined
    as before.  The numbers are those of ``draw`` under ``jit``.

    Args:
      draw: ``(noise, key, shape, dtype) -> samples``, traceable.

    Returns:
      The method ``sample(self, key, shape=(), dtype=None)``.
    """

    @functools.partial(jax.jit, static_argnames=("shape", "dtype"))
    def program(noise, key, shape, dtype):
        return draw(noise, key, shape, dtype)

    @functools.wraps(draw)
    def method(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array:
        dtype = sample_dtype(dtype)  # refuses non-float dtypes before anything is traced
        return program(self, key, tuple(shape), dtype)

    return method


def _sample(self, key: Array, shape: tuple[int, ...] = (), dtype=None) -> Array:
    """Draws by exact inversion of ``|T|`` (``abs_isf``) with an independent sign.

    ``U`` is tail-exact down to ``tail_floor(dtype)`` (:mod:`dpjax.noise._tail`); the work
    is done in float32 for float32 and narrower output, in float64 for float64.  One
    compiled program per family, shape and dtype (:func:`compiled_sampler`).

    Args:
      key: a JAX PRNG key.
      shape: the sample shape.
      dtype: output dtype (default: JAX's default float).
    """
    return symmetric_sample(key, shape, dtype, self.abs_isf)


sample = compiled_sampler(_sample)
