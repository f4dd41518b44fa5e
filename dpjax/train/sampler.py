r"""Batch samplers of a plan: Poisson sampling into a fixed-size padded batch with a mask.

:class:`PoissonSampler` keeps each of the ``N`` records independently with probability
``q`` (exactly ``floor(q 2^32) / 2^32 <= q``: a comparison of 32 random bits, so the
inclusion rate never exceeds the accounted one), returns the first ``B_max`` kept indices
padded with index 0, and a mask of the real rows: every shape is static, so the sampler
runs under ``jit`` and ``lax.scan``.  A draw of more than ``B_max`` records is truncated;
the plan accounts for that event (:mod:`dpjax.train.plan`).

:class:`FixedBatchSampler` draws ``round(q N)`` records without replacement: it exists only
with ``assume_poisson=True``, and its accountant report says that the epsilon assumes
Poisson sampling and is *not* certified for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

MODES = ("poisson", "fixed")


class Batch(NamedTuple):
    """A padded batch: ``indices`` into the dataset, ``mask`` of real rows, ``size`` (real rows).

    With ``accumulation_steps = k > 1`` ``indices`` and ``mask`` are ``(k, B_max / k)``.
    """

    indices: jax.Array
    mask: jax.Array
    size: jax.Array


def _shape(sampler, flat: jax.Array) -> jax.Array:
    k = sampler.accumulation_steps
    return flat if k == 1 else flat.reshape(k, -1)


@dataclass(frozen=True)
class PoissonSampler:
    """Poisson sampling with rate ``q`` into ``max_batch_size`` padded rows (module docstring).

    Attributes:
      dataset_size: ``N``.
      sampling_rate: ``q``.
      max_batch_size: padded rows ``B_max``.
      accumulation_steps: micro-batches ``k`` (rows reshaped to ``(k, B_max / k)``).
    """

    dataset_size: int
    sampling_rate: float
    max_batch_size: int
    accumulation_steps: int = 1
    guarantee: str = "Poisson sampling, as accounted (certified)"

    def sample(self, key: jax.Array) -> Batch:
        """One logical batch (jittable).

        Example:
          >>> import jax
          >>> s = PoissonSampler(dataset_size=100, sampling_rate=0.1, max_batch_size=32)
          >>> b = s.sample(jax.random.key(0))
          >>> b.indices.shape, b.mask.shape
          ((32,), (32,))
        """
        n, b = self.dataset_size, self.max_batch_size
        if self.sampling_rate >= 1.0:
            keep = jnp.ones((n,), bool)
        else:
            threshold = jnp.uint32(int(self.sampling_rate * 2**32))  # floor: rate <= q
            keep = jax.random.bits(key, (n,), jnp.uint32) < threshold
        (idx,) = jnp.nonzero(keep, size=b, fill_value=0)
        size = jnp.minimum(jnp.sum(keep), b).astype(jnp.int32)
        mask = jnp.arange(b, dtype=jnp.int32) < size
        return Batch(_shape(self, idx.astype(jnp.int32)), _shape(self, mask), size)


@dataclass(frozen=True)
class FixedBatchSampler:
    """``round(q N)`` records without replacement per step; the accounting assumes Poisson."""

    dataset_size: int
    sampling_rate: float
    max_batch_size: int
    accumulation_steps: int = 1
    guarantee: str = (
        "fixed-size batches: the reported epsilon ASSUMES Poisson sampling and is not "
        "certified for this sampler"
    )

    def sample(self, key: jax.Array) -> Batch:
        """One batch of ``round(q N)`` distinct records, padded to ``max_batch_size``."""
        n, b = self.dataset_size, self.max_batch_size
        size = min(max(1, round(self.sampling_rate * n)), b)
        idx = jax.random.permutation(key, n)[:size].astype(jnp.int32)
        idx = jnp.concatenate([idx, jnp.zeros((b - size,), jnp.int32)])
        mask = jnp.arange(b, dtype=jnp.int32) < size
        return Batch(_shape(self, idx), _shape(self, mask), jnp.int32(size))


def make_sampler(plan, mode: str = "poisson", assume_poisson: bool = False):
    """The plan's sampler: ``"poisson"`` (certified) or ``"fixed"`` (needs ``assume_poisson``).

    Args:
      plan: the :class:`~dpjax.train.plan.PrivacyPlan`.
      mode: ``"poisson"`` or ``"fixed"``.
      assume_poisson: required ``True`` for ``"fixed"``: you accept that the plan's
        epsilon is computed for Poisson sampling.

    Returns:
      A :class:`PoissonSampler` or :class:`FixedBatchSampler`.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    args = (plan.dataset_size, plan.sampling_rate, plan.max_batch_size, plan.accumulation_steps)
    if mode == "poisson":
        return PoissonSampler(*args)
    if not assume_poisson:
        raise ValueError(
            "fixed-size batches are not what the plan accounts for (Poisson sampling); pass "
            "assume_poisson=True to accept an epsilon that assumes Poisson sampling"
        )
    return FixedBatchSampler(*args)
