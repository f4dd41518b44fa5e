r"""The l1-optimal 2-D staircase mechanism (Geng, Kairouz, Oh & Viswanath 2015): its l1 error.

Comparator of Table II of inid-noise-laplace-beats-gaussian.  For a 2-D query
with l1-sensitivity ``Delta`` the staircase noise has a density that depends
on ``r = ||x||_1`` only and is piecewise constant with an exponential envelope
(``q = e^{-epsilon}``, ``0 <= gamma <= 1``):

.. math:: f(x) \propto q^{k} \text{ for } r \in [k\Delta, (k+\gamma)\Delta), \qquad
          f(x) \propto q^{k+1} \text{ for } r \in [(k+\gamma)\Delta, (k+1)\Delta).

``f`` is non-increasing in ``r`` with ``f(r + Delta) = q f(r)``, and a shift with
``||d||_1 <= Delta`` changes ``r`` by at most ``Delta``, so the mechanism is
epsilon-DP for every ``gamma``; Geng et al. (Theorem 1) show that the best
``gamma`` gives the least ``E||X||_1`` over all epsilon-DP noise in two
dimensions.  The l1-shell ``{r <= ||x||_1 < r + dr}`` has area ``4 r dr``, so with
``S_n = sum_k k^n q^k`` (``S_0 = 1/(1-q)``, ``S_1 = q/(1-q)^2``,
``S_2 = q(1+q)/(1-q)^3``), in units of ``Delta``:

.. math::
   N(\gamma) &= \tfrac{1-q}{2}(2\gamma S_1 + \gamma^2 S_0) + \tfrac{q}{2}(2S_1 + S_0), \\
   M(\gamma) &= \tfrac{1-q}{3}(3\gamma S_2 + 3\gamma^2 S_1 + \gamma^3 S_0)
               + \tfrac{q}{3}(3S_2 + 3S_1 + S_0), \qquad
   E\|X\|_1 = \Delta\, M(\gamma) / N(\gamma),

minimised over ``gamma`` by a fixed-iteration golden-section search
(:func:`dpjax.numerics.golden_section`; jit/vmap-safe).  ``gamma = 0`` or ``1`` is the
plain l1-exponential staircase with unit steps.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise.staircase import geometric_sums
from dpjax.numerics import golden_section


def staircase_2d_mae(
    epsilon: ArrayLike, gamma: ArrayLike, l1_sensitivity: ArrayLike = 1.0
) -> Array:
    r"""``E||X||_1`` of the 2-D staircase with parameter ``gamma``: ``Delta M(gamma) / N(gamma)``.

    The closed form of the module docstring (Geng, Kairouz, Oh & Viswanath 2015; the
    comparator of Table II of inid-noise-laplace-beats-gaussian).

    Args:
      epsilon: ``epsilon > 0``.
      gamma: the step parameter ``gamma`` in ``[0, 1]``.
      l1_sensitivity: ``Delta``.

    Returns:
      ``E||X||_1``, broadcast over the inputs.
    """
    gamma = jnp.asarray(gamma)
    q, omq, s0, s1, s2 = geometric_sums(epsilon)
    n = 0.5 * omq * (2.0 * gamma * s1 + gamma**2 * s0) + 0.5 * q * (2.0 * s1 + s0)
    m = omq / 3.0 * (3.0 * gamma * s2 + 3.0 * gamma**2 * s1 + gamma**3 * s0) + q / 3.0 * (
        3.0 * s2 + 3.0 * s1 + s0
    )
    return jnp.asarray(l1_sensitivity) * m / n


def staircase_2d_l1_error(
    epsilon: ArrayLike, l1_sensitivity: ArrayLike = 1.0, num_iterations: int = 90
) -> tuple[Array, Array]:
    r"""``(gamma*, least E||X||_1)`` of the l1-optimal 2-D staircase (Table II's "Staircase" row).

    .. math:: \gamma^* = \arg\min_{\gamma \in [0, 1]} \Delta\, M(\gamma) / N(\gamma)

    (module docstring; Table II of inid-noise-laplace-beats-gaussian), by golden section.

    Args:
      epsilon: ``epsilon > 0``.
      l1_sensitivity: ``Delta``.
      num_iterations: static number of golden-section steps.

    Returns:
      ``(gamma*, E||X||_1 at gamma*)``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> gamma, mae = staircase_2d_l1_error(0.5)
      >>> round(float(mae), 4)
      3.9962
    """
    epsilon = jnp.asarray(epsilon)
    a, b = golden_section(
        lambda g: staircase_2d_mae(epsilon, g),
        jnp.zeros_like(epsilon),
        jnp.ones_like(epsilon),
        num_iterations,
    )
    gamma = 0.5 * (a + b)
    return gamma, staircase_2d_mae(epsilon, gamma, l1_sensitivity)
