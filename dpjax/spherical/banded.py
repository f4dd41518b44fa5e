r"""Banded barrier-Newton solver of the windowed monotone spherical KL programme (host, NumPy).

The programme (Theorem 4 of spherical-kl-optimal-mechanisms, eqs. 28-30, monotone as
Definition 2 requires) on the window's free shells ``k = 0..N`` (shell masses ``mu_k``),
the geometric tail ``p_{N+t} = p_N r^t`` folded into node ``N``:

.. math:: \min_\mu \sum_{i,j} K_{ij}\,\mu_i \log\frac{p_i}{p_j}
          \quad\text{s.t.}\quad a^\top\mu = 1,\; c^\top\mu = 1,\; p_{k+1} \le p_k .

A unit shift moves a radius by at most one unit, so the kernel ``K`` is banded
(``|i - j| <= b``, ``b <= n``) and so is the Hessian: in relative coordinates
``mu <- mu (1 + delta)`` it is the graph Laplacian of the flows ``F_ij = K_ij mu_i``
(spherical-kl notes), the log-barrier of the monotone chain adds a tridiagonal term and the
tail fold keeps the band.  Each Newton step is therefore one banded Cholesky solve
(:func:`scipy.linalg.solveh_banded`, ``O(N b^2)``) with three right-hand sides and a
2x2 Schur complement for the mass and cost rows -- memory ``O(N b)``, never ``(N+1)^2``.

The barrier on ``p_k - p_{k+1}`` is weighted by the reference shell mass (an unweighted
barrier dominates in the massless inner shells); the path follows ``t -> 20 t`` until the
barrier's duality-gap bound ``sum w / t`` is below ``gap_tol`` times the KL.  Steps keep
the linear rows exactly (``A (mu delta) = 0``) and stay strictly inside (fraction to the
boundary 0.99), with an Armijo backtracking line search.  Not jittable: a host reference,
like the cvxpy backend, and free of compilation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import solveh_banded


class BandedKL(NamedTuple):
    """The windowed programme's data (host arrays).

    Attributes:
      log_kernel: ``(M, 2b+1)`` ``log K_ij = log(w_ij / v_i)``, ``j = i + d - b`` (``-inf`` off
        the band or outside rows ``0..M-1``).
      log_v: ``(M,)`` log shell volumes.
      mass: ``(N+1,)`` mass row (tail folded into node ``N``).
      cost: ``(N+1,)`` cost row divided by the budget (tail folded).
      log_r: ``log r`` of the tail.
      N: last free node.
    """

    log_kernel: np.ndarray
    log_v: np.ndarray
    mass: np.ndarray
    cost: np.ndarray
    log_r: float
    N: int

    @property
    def half_width(self) -> int:
        """The band half-width ``b``."""
        return (self.log_kernel.shape[1] - 1) // 2

    def log_p_full(self, y: np.ndarray) -> np.ndarray:
        """Log densities of all rows: ``y`` on the nodes, ``y_N + t log r`` past ``N``."""
        t = np.arange(1, self.log_kernel.shape[0] - self.N)
        return np.concatenate([y, y[self.N] + t * self.log_r])

    def flows(self, y: np.ndarray):
        """``(F, loss)``: flows ``K_ij mu_i`` and losses ``log p_i - log p_j`` on the band
        (``F = 0`` off the band: ``log_kernel`` is ``-inf`` there)."""
        lp = self.log_p_full(y)
        M, width = self.log_kernel.shape
        b = self.half_width
        flow = np.exp(self.log_kernel + (lp + self.log_v)[:, None])
        pad = np.concatenate([np.full(b, lp[0]), lp, np.full(b, lp[-1])])
        # partner j = i + d - b of row i sits at pad[i + d]: a strided view, no gather
        view = np.lib.stride_tricks.sliding_window_view(pad, width)[:M]
        return flow, lp[:, None] - view
    def objective(self, y: np.ndarray) -> float:
        r"""The KL ``sum_ij F_ij log(p_i / p_j)`` (eq. 28) at log densities ``y``."""
        flow, loss = self.flows(y)
        return float(np.sum(flow * loss))


def _in_flows(flow: np.ndarray, b: int) -> np.ndarray:
    """``in_a = sum_i F_ia`` from the banded ``F`` (row ``i``, column ``d``: ``j = i + d - b``)."""
    M = flow.shape[0]
    out = np.zeros(M)
    for d in range(flow.shape[1]):
        k = d - b
        if k >= 0:
            out[k:] += flow[: M - k, d]
        else:
            out[: M + k] += flow[-k:, d]
    return out


def derivatives(prob: BandedKL, y: np.ndarray):
    r"""``f``, gradient and banded Hessian (upper form) in relative coordinates, tail folded.

    ``mu_a g_a = sum_j F_aj loss_aj + out_a - in_a``; the Hessian is the Laplacian of
    ``S_ij = F_ij + F_ji`` (off the diagonal), rows past ``N`` summed into node ``N``.

    Returns:
      ``(f, g, ab)``: ``ab`` of shape ``(b+1, N+1)`` for :func:`scipy.linalg.solveh_banded`
      (``ab[b + i - j, j] = H_ij``, ``i <= j``).
    """
    flow, loss = prob.flows(y)
    b, N = prob.half_width, prob.N
    M = flow.shape[0]
    row_loss = np.sum(flow * loss, axis=1)
    g_full = row_loss + flow.sum(axis=1) - _in_flows(flow, b)
    g = np.concatenate([g_full[:N], [g_full[N:].sum()]])
    ab = np.zeros((b + 1, N + 1))
    diag = np.zeros(N + 1)
    tail_edge = np.zeros(N + 1)  # flows between node a < N and rows >= N
    for k in range(1, min(b, M - 1) + 1):
        s = flow[: M - k, b + k] + flow[k:, b - k]  # S(i, i + k), i = 0..M-k-1
        inner = max(N - k, 0)  # pairs with both ends free nodes < N: i < N - k
        ab[b - k, k:k + inner] = -s[:inner]
        diag[:inner] += s[:inner]
        diag[k:k + inner] += s[:inner]
        lo = max(N - k, 0)  # i < N <= i + k: first end a node < N, second in the tail block
        tail_edge[lo:N] += s[lo:N]
    diag[:N] += tail_edge[:N]
    diag[N] += tail_edge[:N].sum()
    # node N's couplings: H[a, N] = -(flows between a and all rows >= N)
    a_idx = np.arange(max(N - b, 0), N)
    ab[b - (N - a_idx), N] = -tail_edge[a_idx]
    ab[b] = diag
    return float(row_loss.sum()), g, ab


def _row_sums(ab: np.ndarray) -> np.ndarray:
    """``H 1`` of a symmetric band matrix in upper form (``ab[b + i - j, j] = H_ij``)."""
    b = ab.shape[0] - 1
    out = ab[b].copy()
    for k in range(1, b + 1):
        out[: out.size - k] += ab[b - k, k:]
        out[k:] += ab[b - k, k:]
    return out


def _barrier(y: np.ndarray, w: np.ndarray):
    """Monotone-chain barrier ``-sum w_k log(1 - p_{k+1}/p_k)`` pieces in relative coordinates."""
    e = np.exp(y[1:] - y[:-1])  # p_{k+1} / p_k
    sig = -np.expm1(y[1:] - y[:-1])  # relative slack (p_k - p_{k+1}) / p_k
    return e, sig


def solve_banded_kl(prob: BandedKL, y0: np.ndarray, weight: np.ndarray, gap_tol: float = 1e-12,
                    t0: float | None = None, max_newton: int = 400) -> dict:
    r"""Solve the programme from a strictly feasible, strictly monotone start ``y0`` (log p).

    Args:
      prob: the :class:`BandedKL` data.
      y0: ``(N+1,)`` start (mass and cost rows exactly 1, ``y0`` strictly decreasing).
      weight: ``(N,)`` barrier weights (reference shell masses).
      gap_tol: stop when the barrier's gap bound ``sum(weight) / t`` is below ``gap_tol``
        times the KL.
      t0: first barrier parameter (default ``100 sum(weight) / f(y0)``).
      max_newton: most Newton steps in all.

    Returns:
      ``{"y", "kl", "status", "gap", "decrement", "newton_steps", "mass_error",
      "cost_error"}``; ``status`` 0 when converged, 1 when ``max_newton`` ran out.
    """
    y = np.asarray(y0, np.float64).copy()
    N = prob.N
    wsum = float(np.sum(weight))
    mu_of = lambda yy: np.exp(yy + prob.log_v[: N + 1])  # noqa: E731
    f0 = prob.objective(y)
    t = 100.0 * wsum / max(f0, 1e-300) if t0 is None else t0
    with _one_blas_thread():
        return _solve(prob, y, weight, gap_tol, t, max_newton, wsum, mu_of)


def _one_blas_thread():
    """One BLAS thread for the band solves (a narrow band gains nothing from threads, and
    spinning BLAS threads on a busy machine made ``dpbtrf`` a hundred times slower)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: scikit-learn's dependency
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, "blas")


def _solve(prob, y, weight, gap_tol, t, max_newton, wsum, mu_of):
    N = prob.N
    steps, status, dec, f = 0, 1, math.inf, math.inf

    def merit(yy, tt):
        _, sig = _barrier(yy, weight)
        if np.any(sig <= 0):
            return math.inf
        return tt * prob.objective(yy) - float(np.sum(weight * np.log(sig)))

    while steps < max_newton:
        for _ in range(60):
            f, g, ab = derivatives(prob, y)
            e, sig = _barrier(y, weight)
            # barrier in relative coordinates: s_k = p_k (1+d_k) - p_{k+1} (1+d_{k+1}),
            # -w log(s_k): grad -w/sig (1, -e), Hessian w/sig^2 (1, -e)(1, -e)^T
            coef = weight / sig
            gb = np.zeros(N + 1)
            gb[:-1] -= coef
            gb[1:] += coef * e
            hq = weight / sig**2
            ab_t = t * ab
            ab_t[-1, :-1] += hq
            ab_t[-1, 1:] += hq * e * e
            ab_t[-2, 1:] -= hq * e
            grad = t * g + gb
            mu = mu_of(y)
            A = np.stack([mu * prob.mass, mu * prob.cost])
            # the Laplacian's null vector 1 (the KL is 1-homogeneous) makes H singular up to
            # the barrier: write d = alpha 1 + (d_hat, 0), ground node N (a nonsingular band)
            # and close with a 3x3 system for (alpha, lambda)
            h1 = _row_sums(ab_t)
            X = solveh_banded(ab_t[:, :N], np.column_stack([-grad[:N], h1[:N], A[:, :N].T]),
                              check_finite=False)
            x0, x1, x2 = X[:, 0], X[:, 1], X[:, 2:]
            asum = A.sum(axis=1)
            rhs = 1.0 - asum  # A (mu d) = 1 - A mu: zero on the feasible set, kept to round-off
            aq = A[:, :N]
            sys_ = np.zeros((3, 3))
            sys_[0, 0] = h1.sum() - h1[:N] @ x1
            sys_[0, 1:] = asum - h1[:N] @ x2
            sys_[1:, 0] = asum - aq @ x1
            sys_[1:, 1:] = -aq @ x2
            u = np.linalg.solve(sys_, np.concatenate([[-grad.sum() - h1[:N] @ x0],
                                                      rhs - aq @ x0]))
            d = np.append(x0 - u[0] * x1 - x2 @ u[1:], 0.0) + u[0]
            # the 3x3 system's conditioning grows with t: restore A (mu d) = rhs exactly
            # along 1 and the cost profile (their 2x2 block is well conditioned)
            basis = np.stack([np.ones(N + 1), prob.cost / prob.mass])
            d = d + basis.T @ np.linalg.solve(A @ basis.T, rhs - A @ d)
            dec = float(-grad @ d)
            steps += 1
            if dec / 2.0 <= 1e-12 * max(1.0, abs(t * f)):
                break
            # fraction to the boundary: 1 + a d > 0 and s_k + a (p_k d_k - p_{k+1} d_{k+1}) > 0
            amax = 1.0
            neg = d < 0
            if np.any(neg):
                amax = min(amax, 0.99 / float(np.max(-d[neg])))
            ds = d[:-1] - e * d[1:]  # relative change of the slack, per p_k
            bad = ds < 0
            if np.any(bad):
                amax = min(amax, 0.99 * float(np.min(sig[bad] / -ds[bad])))
            base = merit(y, t)
            alpha = amax
            while alpha > 1e-12:
                y_new = y + np.log1p(alpha * d)
                if merit(y_new, t) <= base - 1e-4 * alpha * dec:
                    break
                alpha *= 0.5
            else:
                break
            y = y_new
            if steps >= max_newton:
                break
        if wsum / t <= gap_tol * max(f, 1e-300):
            status = 0
            break
        t *= 20.0
    mu = mu_of(y)
    return {"y": y, "kl": prob.objective(y), "status": status, "gap": wsum / t,
            "decrement": dec, "newton_steps": steps,
            "mass_error": float(abs(mu @ prob.mass - 1.0)),
            "cost_error": float(abs(mu @ prob.cost - 1.0))}


__all__ = ["BandedKL", "derivatives", "solve_banded_kl"]
