"""Gauss-Legendre quadrature rules.

Nodes and weights are computed once on the host in float64 (NumPy's
Golub-Welsch implementation) and cached; they are static data for the
kernels that integrate densities on panels between their kinks.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike


@functools.lru_cache(maxsize=64)
def legendre_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = np.polynomial.legendre.leggauss(n)
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def gauss_legendre(
    n: int, lower: float = -1.0, upper: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    r"""``n``-point Gauss-Legendre nodes and weights on ``[lower, upper]``.

    .. math:: \int_l^u f(t)\,dt \approx \sum_i w_i f(x_i)

    exact for polynomials of degree ``2n - 1`` (Golub & Welsch 1969, through
    ``numpy.polynomial.legendre.leggauss``).  Returned as float64 NumPy arrays
    (static data; wrap with ``jnp.asarray`` inside kernels).

    Args:
      n: number of nodes, a positive integer.
      lower: finite left end of the interval.
      upper: finite right end, ``upper > lower``.

    Returns:
      ``(nodes, weights)``, two float64 arrays of length ``n``.

    Raises:
      ValueError: ``n`` is not a positive integer or the interval is not finite and
        non-empty.

    Example:
      >>> x, w = gauss_legendre(3, 0.0, 1.0)
      >>> round(float((w * x**5).sum()), 12)  # int_0^1 t^5 dt, exact for degree <= 5
      0.166666666667
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not (np.isfinite(lower) and np.isfinite(upper)) or upper <= lower:
        raise ValueError(f"need finite lower < upper, got lower={lower!r}, upper={upper!r}")
    x, w = legendre_nodes(int(n))
    half = 0.5 * (upper - lower)
    return lower + half * (x + 1.0), half * w


def integrate_panels(f, edges: ArrayLike, n: int = 32) -> Array:
    r"""Integrate ``f`` over consecutive panels ``[edges[k], edges[k+1]]``.

    .. math:: \int_{e_0}^{e_P} f(t)\,dt \approx \sum_{k=0}^{P-1} h_k \sum_i w_i\,
              f\big(e_k + h_k (x_i + 1)\big),\qquad h_k = \tfrac12 (e_{k+1} - e_k)

    Each panel gets an ``n``-point Gauss-Legendre rule (nodes ``x_i``, weights ``w_i``
    on ``[-1, 1]``), so placing panel edges at the kinks of a piecewise smooth
    integrand gives spectral accuracy (the K-fold integration of Alg. 2 of
    flipped-huber-mechanism integrates on such panels).

    Args:
      f: vectorised integrand (called once on an array of nodes of shape
        ``(..., P, n)``).
      edges: panel edges, shape ``(..., P + 1)``, increasing; may be traced.
      n: nodes per panel (static).

    Returns:
      The integral, shape ``(...,)``.

    Example:
      >>> import jax, jax.numpy as jnp; jax.config.update("jax_enable_x64", True)
      >>> round(float(integrate_panels(jnp.abs, jnp.array([-1.0, 0.0, 2.0]))), 12)  # kink at 0
      2.5
    """
    edges = jnp.asarray(edges)
    x, w = legendre_nodes(int(n))
    lo, hi = edges[..., :-1], edges[..., 1:]
    half = 0.5 * (hi - lo)
    nodes = lo[..., None] + half[..., None] * (jnp.asarray(x) + 1.0)
    vals = f(nodes)
    return jnp.sum(half * jnp.sum(vals * jnp.asarray(w), axis=-1), axis=-1)
