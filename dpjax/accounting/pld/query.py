r"""Certified ``delta(epsilon)`` and ``epsilon(delta)`` of a PLD, vectorised.

From the grid (``l_i``, ``p_i``), ``inf_mass`` and ``roundoff``:

.. math:: \delta_{grid}(\epsilon) = m_\infty + \sum_{l_i > \epsilon} p_i (1 - e^{\epsilon - l_i})
          + r \sqrt{\#\{i : l_i > \epsilon\}},

an upper bound for a pessimistic PLD (the last term bounds the floating-point
error of ``pmf`` by Cauchy-Schwarz).  It cannot go below ``~1e-12`` where
round-off dominates, so the reported value is the minimum with the Chernoff
bound of :mod:`.tail_bounds` (computed in log space from the same
discretised pair): both are certified upper bounds, hence so is their minimum,
and ``epsilon(delta)`` stays finite down to ``delta = 1e-300``.

Evaluation uses suffix sums ``S0_i = sum_{j >= i} p_j``,
``S1_i = sum_{j >= i} p_j e^{-l_j}``, on which ``delta`` is
``A - e^eps B`` between grid points; ``epsilon(delta)`` finds the segment by
``searchsorted`` and solves it in closed form.  Everything is jittable and
vectorised over ``epsilon`` / ``delta`` arrays.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld._pld import PLD
from dpjax.numerics import float64_kernel


def _suffix(pld: PLD):
    p = jnp.maximum(pld.pmf, 0.0)
    ls = pld.losses()
    s0 = jnp.cumsum(p[::-1])[::-1]
    s1 = jnp.cumsum((p * jnp.exp(-ls))[::-1])[::-1]
    zero = jnp.zeros((1,), p.dtype)
    return ls, jnp.concatenate([s0, zero]), jnp.concatenate([s1, zero])


def _grid_delta(pld: PLD, epsilon: Array) -> Array:
    ls, s0, s1 = _suffix(pld)
    n = ls.shape[0]
    eps = jnp.asarray(epsilon, jnp.float64)
    i = jnp.searchsorted(ls, eps, side="right")  # first index with l_i > eps
    cnt = (n - i).astype(jnp.float64)
    d = pld.inf_mass + s0[i] - jnp.exp(eps) * s1[i] + pld.roundoff * jnp.sqrt(cnt)
    return jnp.maximum(d, pld.inf_mass)


def _padded(fn):
    """Evaluate ``fn(pld, x)`` on ``x`` flattened and padded to a multiple of 16 (few compiles)."""

    @functools.wraps(fn)
    def wrapper(pld: PLD, x: ArrayLike) -> Array:
        x = jnp.asarray(x, jnp.float64)
        flat = x.reshape(-1)
        n = flat.shape[0]
        m = max(16, -(-n // 16) * 16)
        out = fn(pld, jnp.pad(flat, (0, m - n), mode="edge") if n else jnp.zeros(m))
        return out[:n].reshape(x.shape)

    return wrapper


@float64_kernel
@_padded
@jax.jit
def log_delta_for_epsilon(pld: PLD, epsilon: ArrayLike) -> Array:
    """``log delta(epsilon)``: min of the grid value and the Chernoff bound (certified)."""
    eps = jnp.asarray(epsilon, jnp.float64)
    grid = _grid_delta(pld, eps)
    log_grid = jnp.log(jnp.minimum(grid, 1.0))
    log_ch = jnp.logaddexp(jnp.log(pld.atom_inf), tail_bounds.log_delta_chernoff(pld.log_mgf, eps))
    return jnp.minimum(log_grid, log_ch)


@float64_kernel
def delta_for_epsilon(pld: PLD, epsilon: ArrayLike) -> Array:
    """``delta(epsilon)`` of a PLD (see :func:`log_delta_for_epsilon`)."""
    return jnp.exp(log_delta_for_epsilon(pld, epsilon))


def _grid_epsilon(pld: PLD, delta: Array) -> Array:
    ls, s0, s1 = _suffix(pld)
    n = ls.shape[0]
    cnt = (n - jnp.arange(n + 1)).astype(jnp.float64)
    # delta at eps = l_i counts the entries j > i: (s0, s1)[i + 1]
    d_at = pld.inf_mass + s0[1:] - jnp.exp(ls) * s1[1:] + pld.roundoff * jnp.sqrt(cnt[1:])
    d_at = jax.lax.cummax(d_at, reverse=True)  # enforce non-increasing (pessimistic)
    dl = jnp.asarray(delta, jnp.float64)
    # first i with d_at[i] <= delta (d_at non-increasing)
    i = jnp.searchsorted(-d_at, -dl, side="left")
    found = i < n
    ic = jnp.minimum(i, n - 1)
    # on the segment [l_{i-1}, l_i): entries above eps are j >= i
    a = pld.inf_mass + s0[ic] + pld.roundoff * jnp.sqrt(cnt[ic])
    b = s1[ic]
    arg = (a - dl) / jnp.where(b > 0, b, 1.0)
    eps = jnp.where((b > 0) & (arg > 0), jnp.log(jnp.where(arg > 0, arg, 1.0)), -jnp.inf)
    eps = jnp.minimum(eps, ls[ic])
    eps = jnp.where(ic > 0, jnp.maximum(eps, ls[jnp.maximum(ic - 1, 0)]), eps)
    return jnp.where(found, eps, jnp.inf)


@float64_kernel
@_padded
@jax.jit
def epsilon_for_delta(pld: PLD, delta: ArrayLike) -> Array:
    r"""Least ``epsilon >= 0`` with certified ``delta(epsilon) <= delta``; ``inf`` if none.

    Minimum of the grid answer and the Chernoff answer (both certified for a
    pessimistic PLD).  Finite for any ``delta > atom_inf`` (e.g. ``1e-30``).
    """
    dl = jnp.asarray(delta, jnp.float64)
    grid = _grid_epsilon(pld, dl)
    rest = dl - pld.atom_inf
    log_rest = jnp.log(jnp.where(rest > 0, rest, 1.0))
    ch = jnp.where(rest > 0, tail_bounds.epsilon_chernoff(pld.log_mgf, log_rest), jnp.inf)
    eps = jnp.minimum(grid, ch)
    # round up by a few ulps so that the returned epsilon is on the safe side of rounding
    eps = eps + 4.0 * jnp.finfo(jnp.float64).eps * (1.0 + jnp.abs(eps))
    return jnp.maximum(eps, 0.0)
