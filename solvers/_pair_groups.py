r"""Ratio constraints in :class:`solvers.BarrierNewton`: slacks, merged groups, multipliers.

A ratio constraint ``p_a <= e^l p_b`` that is active keeps ``log p_a - log p_b``
fixed; in relative coordinates (``x <- x (1 + delta)``) that is
``delta_a = delta_b``.  The polish therefore moves the shells of a connected
set of active pairs together (one merged variable per group).  The monotone
chain ``p_{k+1} <= p_k`` makes contiguous plateaus; other pairs (the loss cap
``log p_i - log p_{i+n} <= L_max`` of the spherical KL programme) join
plateaus that are not neighbours, so the groups are the connected components
of the graph of all active pairs (:func:`pair_groups`).

Multipliers: at a point where the merged programme is stationary, the pair
multipliers solve

.. math:: c + J^\top \lambda = 0, \qquad J_{k,a_k} = A_k,\ J_{k,b_k} = -B_k
          \ (\text{active } k), \qquad c = \nabla f + A_{rows}^\top \nu,

in relative coordinates (``dg_k = A_k delta_a - B_k delta_b``).  On a chain
plateau that is a recursion along the plateau (solved by the polish itself);
:func:`pair_multipliers` solves the general case in the least-squares sense
(the normal equations of the active rows; exact when the active graph is a
forest, which it is unless several caps close a cycle).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array


def floored_slacks(problem, x) -> tuple[Array, Array, Array]:
    """``(A, B, s)`` of the pairs with the slack floored at ``1e-15 B`` (relative round-off).

    A pair at its bound to rounding (the innermost, near-massless shells of a
    plateau, whose log densities carry absolute round-off ~1e-14) must not make
    the barrier NaN and stall the method.

    Args:
      problem: the problem (``pair_slacks`` hook).
      x: the point.
    """
    big_a, big_b, s, _ = problem.pair_slacks(x)
    return big_a, big_b, jnp.maximum(s, 1e-15 * big_b)


def pair_groups(chain_gid: Array, pair_a: Array, pair_b: Array, active: Array) -> Array:
    """Group label of every variable: connected components of the active pairs.

    Args:
      chain_gid: ``(n,)`` labels of the chain plateaus (``cumsum`` of the inactive chain
        pairs: contiguous, non-decreasing).
      pair_a, pair_b: indices of every pair constraint.
      active: ``(num_pairs,)`` pairs held as equalities (the chain pairs included).

    Returns:
      ``(n,)`` labels in ``[0, n)``, equal exactly on each connected component (the
      smallest plateau label of the component).
    """
    size = chain_gid.shape[0]
    big = jnp.asarray(size, chain_gid.dtype)

    def body(carry):
        lab, _ = carry
        m = jnp.where(active, jnp.minimum(lab[pair_a], lab[pair_b]), big)
        new = lab.at[pair_a].min(m).at[pair_b].min(m)
        # spread over each plateau (labels of one plateau stay equal)
        new = jax.ops.segment_min(new, chain_gid, num_segments=size)[chain_gid]
        return new, jnp.any(new != lab)

    lab, _ = jax.lax.while_loop(lambda c: c[1], body, (chain_gid, jnp.ones((), bool)))
    return lab


def pair_multipliers(c: Array, pair_a: Array, pair_b: Array, big_a: Array, big_b: Array,
                     active: Array) -> Array:
    r"""Least-squares ``lambda`` of the active pairs from ``c + J^T lambda = 0`` (module docstring).

    Solves the normal equations ``(J J^T) lambda = -J c`` on the active rows
    (inactive rows: ``lambda = 0``), after scaling each row of ``J`` to unit norm.

    Args:
      c: ``(n,)`` ``grad f + A_rows^T nu`` in relative coordinates.
      pair_a, pair_b: indices of every pair constraint.
      big_a, big_b: the pair terms ``A_k``, ``B_k`` (``dg_k = A_k delta_a - B_k delta_b``).
      active: ``(num_pairs,)`` pairs held as equalities.

    Returns:
      ``(num_pairs,)`` multipliers (0 on inactive pairs).
    """
    k = jnp.arange(pair_a.shape[0])
    jac = (jnp.zeros((pair_a.shape[0], c.shape[0]), c.dtype)
           .at[k, pair_a].add(big_a).at[k, pair_b].add(-big_b))
    norm = jnp.where(active, jnp.linalg.norm(jac, axis=1), 1.0)
    jac = jnp.where(active[:, None], jac / norm[:, None], 0.0)
    # a tiny shift keeps a cycle of active pairs (several caps) solvable (minimum norm)
    gram = jac @ jac.T + jnp.diag(jnp.where(active, 1e-13, 1.0))
    lam = jnp.linalg.solve(gram, -(jac @ c))
    return jnp.where(active, lam / norm, 0.0)


__all__ = ["floored_slacks", "pair_groups", "pair_multipliers"]
