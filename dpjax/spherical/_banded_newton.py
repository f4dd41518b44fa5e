r"""The banded barrier-Newton method's formulas, shared by the host and the JAX solver.

Written once against an array namespace ``xp`` (NumPy in :mod:`.banded`, ``jax.numpy`` in
:mod:`.banded_jax`), so the two solvers of the windowed monotone KL programme (Theorem 4 of
spherical-kl-optimal-mechanisms, eqs. 28-30) cannot drift apart: the flows of the band
entries, the monotone chain's log-barrier in relative coordinates, and the closing of the
Newton step around the grounded banded solve.
"""

from __future__ import annotations

import numpy as np


def flows(lw, pi, pj, xp=np):
    r"""The flows of band entries: ``(F, G, loss)`` from ``log w_ij``, ``log p_i``, ``log p_j``.

    ``F_ij = w_ij p_i`` (out of row ``i``), ``G_ij = w_ij p_j`` (into row ``i``) and
    ``loss_ij = log p_i - log p_j``: the KL (eq. 28) is ``sum F * loss``.  Written once against
    an array namespace ``xp`` (NumPy in :mod:`.banded`, ``jax.numpy`` in :mod:`.banded_jax`).
    """
    return xp.exp(lw + pi), xp.exp(lw + pj), pi - pj


def barrier(y, xp=np):
    """The monotone chain at log densities ``y``: ``e_k = p_{k+1}/p_k`` and the relative slack
    ``sig_k = (p_k - p_{k+1}) / p_k`` of the barrier ``-sum w_k log(p_k - p_{k+1})``."""
    e = xp.exp(y[1:] - y[:-1])  # p_{k+1} / p_k
    sig = -xp.expm1(y[1:] - y[:-1])  # relative slack (p_k - p_{k+1}) / p_k
    return e, sig


def barrier_terms(y, weight, xp=np):
    r"""The barrier's gradient ``gb`` and curvature ``hq`` in relative coordinates (one place).

    The slack ``s_k = p_k (1+d_k) - p_{k+1} (1+d_{k+1})``; ``-w_k log s_k`` has gradient
    ``-w_k/sig_k (1, -e_k)`` and Hessian ``w_k/sig_k^2 (1, -e_k)(1, -e_k)^T`` on ``(d_k, d_{k+1})``
    (``e_k = p_{k+1}/p_k``, ``sig_k = 1 - e_k``).

    Returns:
      ``(e, sig, gb, hq)``: ``gb`` of length ``N+1``, the others of length ``N``.
    """
    e, sig = barrier(y, xp)
    coef = weight / sig
    zero = xp.zeros(1, dtype=coef.dtype)
    gb = xp.concatenate([-coef, zero]) + xp.concatenate([zero, coef * e])
    return e, sig, gb, weight / sig**2


def close_direction(grad, h1, A, X, cost, mass, xp=np):
    r"""The Newton direction from the grounded solves (one place for both backends).

    The Laplacian's null vector ``1`` (the KL is 1-homogeneous) makes ``H`` singular up to the
    barrier: ``d = alpha 1 + (d_hat, 0)`` with node ``N`` grounded, ``X = H_NN^{-1} [-grad,
    H 1, A^T]`` (first ``N`` rows), closed by a 3x3 system for ``(alpha, lambda)``; the 3x3
    system's conditioning grows with ``t``, so ``A (mu d) = 1 - A mu`` is then restored
    exactly along ``1`` and the cost profile (their 2x2 block is well conditioned).

    Args:
      grad: ``(N+1,)`` gradient of ``t f + barrier``.
      h1: ``(N+1,)`` row sums ``H 1``.
      A: ``(2, N+1)`` rows ``mu * mass``, ``mu * cost``.
      X: ``(N, 4)`` solutions of the grounded system.
      cost, mass: the programme's rows.
      xp: the array namespace.
    """
    N = X.shape[0]
    x0, x1, x2 = X[:, 0], X[:, 1], X[:, 2:]
    asum = A.sum(axis=1)
    rhs = 1.0 - asum  # A (mu d) = 1 - A mu: zero on the feasible set, kept to round-off
    aq = A[:, :N]
    top = xp.concatenate([(h1.sum() - h1[:N] @ x1)[None], asum - h1[:N] @ x2])
    bottom = xp.concatenate([(asum - aq @ x1)[:, None], -aq @ x2], axis=1)
    u = xp.linalg.solve(xp.concatenate([top[None], bottom]),
                        xp.concatenate([(-grad.sum() - h1[:N] @ x0)[None], rhs - aq @ x0]))
    d = xp.concatenate([x0 - u[0] * x1 - x2 @ u[1:], xp.zeros(1, dtype=x0.dtype)]) + u[0]
    basis = xp.stack([xp.ones_like(cost), cost / mass])
    return d + basis.T @ xp.linalg.solve(A @ basis.T, rhs - A @ d)


__all__ = ["barrier", "barrier_terms", "close_direction", "flows"]
