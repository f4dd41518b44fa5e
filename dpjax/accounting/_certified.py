"""The safety margin every certified accounting answer keeps.

Calibrations and inverse profiles target ``delta (1 - MARGIN)`` rather than
``delta``.  dpjax's float64 profile kernels are accurate to ~1e-12 relative or
better (tested against 50-80 digit mpmath), so an answer certified against the
margin is private for the exact profile, not only for its float64 evaluation.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

MARGIN = 1e-10


def log_target(delta: ArrayLike) -> Array:
    """``log(delta (1 - MARGIN))``: the level a certified answer must reach (``-inf`` for 0)."""
    return jnp.log(jnp.asarray(delta)) + jnp.log1p(-MARGIN)
