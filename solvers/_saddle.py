r"""The saddle-point (KKT) solve of a Newton step with two linear constraint rows.

.. math::
   \begin{bmatrix} H & A^\top \\ A & 0 \end{bmatrix}
   \begin{bmatrix} \delta \\ \nu \end{bmatrix} =
   \begin{bmatrix} -g \\ 0 \end{bmatrix}, \qquad A \in \mathbb{R}^{2 \times n},

solved by a dense Cholesky factorisation after symmetric diagonal
equilibration ``D = diag(H)^(-1/2)``.  On ``A delta = 0`` the system is
unchanged by adding ``A^T A`` to ``H`` (for the KL programme the scaling
direction ``1``, the null vector of its Laplacian Hessian, is not in the null
space of ``A``), so the shifted matrix is positive definite; ``nu`` then
follows from the 2x2 Schur complement by Cramer's rule.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array


def saddle_solve(hmat: Array, amat: Array, g: Array) -> tuple[Array, Array]:
    r"""Solve ``[[H, A^T], [A, 0]] [delta; nu] = [-g; 0]`` for two rows ``A`` (module docstring).

    Args:
      hmat: ``(n, n)`` symmetric ``H``, positive definite on the null space of ``A``.
      amat: ``(2, n)`` constraint rows ``A``.
      g: ``(n,)`` gradient.

    Returns:
      ``(delta, nu)``: the step ``(n,)`` and the multipliers ``(2,)`` of the rows.
    """
    d = 1.0 / jnp.sqrt(jnp.maximum(jnp.diagonal(hmat), 1e-300))
    a_s = amat * d[None, :]
    a_s = a_s / jnp.linalg.norm(a_s, axis=1, keepdims=True)
    # tiny Levenberg shift: active barrier pairs make 2x2 blocks nearly rank one (pivots at
    # round-off level); the shifted matrix is safely PD and the step stays a descent direction.
    # Written elementwise (rank-2 term as two outer products, shift on the iota diagonal) so
    # that XLA forms the scaled matrix in one pass.
    shape = hmat.shape
    eye = jax.lax.broadcasted_iota(jnp.int32, shape, 0) == jax.lax.broadcasted_iota(
        jnp.int32, shape, 1)
    hr = (d[:, None] * hmat * d[None, :] + a_s[0][:, None] * a_s[0][None, :]
          + a_s[1][:, None] * a_s[1][None, :] + jnp.where(eye, 1e-12, 0.0))
    chol = jax.lax.linalg.cholesky(hr, symmetrize_input=False)
    rhs = jnp.concatenate([(-g * d)[:, None], a_s.T], axis=1)
    tri = jax.lax.linalg.triangular_solve
    z = tri(chol, tri(chol, rhs, left_side=True, lower=True), left_side=True, lower=True,
            transpose_a=True)
    z_g, z_a = z[:, 0], z[:, 1:]
    schur = a_s @ z_a
    b = a_s @ z_g
    det = schur[0, 0] * schur[1, 1] - schur[0, 1] * schur[1, 0]
    nu_s = jnp.stack([schur[1, 1] * b[0] - schur[0, 1] * b[1],
                      schur[0, 0] * b[1] - schur[1, 0] * b[0]]) / det
    delta_s = z_g - z_a @ nu_s
    delta = d * delta_s
    # nu in the original scaling: A^T nu = D^-1 a_s^T nu_s, a_s = (A D) / row norms
    norms = jnp.linalg.norm(amat * d[None, :], axis=1)
    return delta, nu_s / norms


__all__ = ["saddle_solve"]
