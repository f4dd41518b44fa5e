r"""Staircase calibration: GV's optimal epsilon-DP noise, per coordinate for K dimensions.

* One dimension: ``decay = epsilon``, ``width = Delta``, ``gamma = gamma^*(epsilon)``
  (Geng & Viswanath 2016): the least-variance epsilon-DP additive noise.  Its
  exact profile at ``epsilon`` is 0, so any ``delta >= 0`` is met; ``delta`` is
  not exploited (the paper compares (epsilon, delta) flipped Huber with
  epsilon-DP staircase, footnote 5 of flipped-huber-mechanism).
* ``dim = K`` (and ``T`` compositions): independent staircases per coordinate
  (Table II of flipped-huber-mechanism) with the budget split evenly:
  ``decay = epsilon / (K T)``, ``width = Delta_inf``.  Each coordinate is
  ``(epsilon / (K T))``-DP for shifts ``|d_i| <= Delta_inf``, so the whole is
  ``epsilon``-DP by basic composition.  With ``Delta_1 = K Delta_inf`` (the
  paper's setting) this is the l1 budget ``epsilon_i = epsilon Delta_inf / Delta_1``
  that Laplace uses (``b = Delta_1 / epsilon``), and it reproduces the printed
  staircase row 19999.92, 4999.92, 799.92, 165.21, 31.92.  (Using one
  ``epsilon``-DP staircase of width ``Delta_1`` per coordinate instead gives
  19966.69, 4966.76, 767.24, 134.91, 11.88, and is not private.)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from dpjax.noise.staircase import staircase_optimal_gamma, staircase_unit_variance
from dpjax.numerics import float64_kernel


@float64_kernel
def staircase_pure(epsilon: ArrayLike, sensitivity: ArrayLike, num_coordinates: ArrayLike = 1):
    r"""``(decay, width, gamma, variance)`` of the per-coordinate epsilon-DP staircase.

    Geng & Viswanath's optimal epsilon-DP noise per coordinate with the budget split
    evenly (Table II of flipped-huber-mechanism; module docstring):

    .. math:: \text{decay} = \epsilon / K, \quad \text{width} = \Delta_\infty, \quad
              \gamma = \gamma^*(\text{decay}), \quad
              \mathrm{Var} = \text{width}^2\, V(\text{decay}, \gamma^*) .

    Args:
      epsilon: target ``epsilon > 0``.
      sensitivity: the per-coordinate (l-infinity) sensitivity.
      num_coordinates: ``K`` (times the number of compositions, for ``T`` uses).

    Returns:
      ``(decay, width, gamma, variance)``, broadcast over the inputs (one compiled
      program: a first call compiles it once instead of dispatching each operation).
    """
    return _staircase_pure(epsilon, sensitivity, num_coordinates)


@jax.jit
def _staircase_pure(epsilon, sensitivity, num_coordinates):
    decay = jnp.asarray(epsilon) / jnp.asarray(num_coordinates)
    width = jnp.asarray(sensitivity)
    decay, width = jnp.broadcast_arrays(decay, width)
    gamma = staircase_optimal_gamma(decay)
    return decay, width, gamma, jnp.square(width) * staircase_unit_variance(decay, gamma)
