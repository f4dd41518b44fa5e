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
def _legendre_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = np.polynomial.legendre.leggauss(n)
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def gauss_legendre(n: int, lower: float = -1.0, upper: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""``n``-point Gauss-Legendre nodes and weights on ``[lower, upper]``.

    .. math:: \int_l^u f(t)\,dt \approx \sum_i w_i f(x_i)

    exact for polynomials of degree ``2n - 1``.  Returned as float64 NumPy
    arrays (static data; wrap with ``jnp.asarray`` inside kernels).
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not (np.isfinite(lower) and np.isfinite(upper)) or upper <= lower:
        raise ValueError(f"need finite lower < upper, got lower={lower!r}, upper={upper!r}")
    x, w = _legendre_nodes(int(n))
    half = 0.5 * (upper - lower)
    return lower + half * (x + 1.0), half * w


def integrate_panels(f, edges: ArrayLike, n: int = 32) -> Array:
    r"""Integrate ``f`` over consecutive panels ``[edges[k], edges[k+1]]``.

    ``f`` is vectorised over its argument.  Each panel gets an ``n``-point
    Gauss-Legendre rule, so placing panel edges at the kinks of a piecewise
    smooth integrand gives spectral accuracy.  ``edges`` may be traced
    (shape ``(..., P + 1)``); the result has shape ``(...,)``.
    """
    edges = jnp.asarray(edges)
    x, w = _legendre_nodes(int(n))
    lo, hi = edges[..., :-1], edges[..., 1:]
    half = 0.5 * (hi - lo)
    nodes = lo[..., None] + half[..., None] * (jnp.asarray(x) + 1.0)
    vals = f(nodes)
    return jnp.sum(half * jnp.sum(vals * jnp.asarray(w), axis=-1), axis=-1)
