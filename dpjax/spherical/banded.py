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
barrier dominates in the massless inner shells); the path follows ``t -> 100 t`` until the
barrier's duality-gap bound ``sum w / t`` is below ``gap_tol`` times the KL (``1e-9``: the
KL to nine digits; at m = 3 .. 1000 it agrees with the ``1e-12`` path to ``1e-13``).  Steps keep
the linear rows exactly (``A (mu delta) = 0``) and stay strictly inside (fraction to the
boundary 0.99), with an Armijo backtracking line search.  Not jittable: a host reference,
like the cvxpy backend, and free of compilation.
"""

from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import numpy as np

from dpjax.numerics.lazy_scipy import linalg
from dpjax.spherical._banded_newton import barrier, barrier_terms, close_direction, flows

#: band entries evaluated together (rows per block ``= BLOCK_ENTRIES // (2b+1)``): the
#: flows are never held for the whole window (memory ``O(N b)`` for the cells and the
#: Hessian band only, at ``m = 10^6`` too)
BLOCK_ENTRIES = 1 << 21


class BandedKL(NamedTuple):
    """The windowed programme's data (host arrays).

    Attributes:
      log_w: ``(M, 2b+1)`` banded log cell volumes ``log w_ij = log(A_m gamma_ij)`` (eq. 23),
        ``j = i + d - b``; **symmetric** (``w_ij = w_ji``: the cell of ``(i, j)`` is the
        mirror image of ``(j, i)`` under ``x -> e_1 - x``, and
        :func:`dpjax.spherical.cells_beta.log_cell_volumes_beta_symmetric` stores it so),
        partners outside rows ``0..M-1`` are ignored (left out of the programme).
      log_v: ``(M,)`` log shell volumes (the kernel is ``K_ij = w_ij / v_i``).
      mass: ``(N+1,)`` mass row (tail folded into node ``N``).
      cost: ``(N+1,)`` cost row divided by the budget (tail folded).
      log_r: ``log r`` of the tail.
      N: last free node.
    """

    log_w: np.ndarray
    log_v: np.ndarray
    mass: np.ndarray
    cost: np.ndarray
    log_r: float
    N: int

    @property
    def half_width(self) -> int:
        """The band half-width ``b``."""
        return (self.log_w.shape[1] - 1) // 2

    def log_p_full(self, y: np.ndarray) -> np.ndarray:
        """Log densities of all rows: ``y`` on the nodes, ``y_N + t log r`` past ``N``."""
        t = np.arange(1, self.log_w.shape[0] - self.N)
        return np.concatenate([y, y[self.N] + t * self.log_r])

    def _band_rows(self, y: np.ndarray):
        r"""Row blocks ``(lo, lw, log p_i, log p_j)`` of the band at log densities ``y``.

        ``lw`` is ``log w_ij`` for rows ``lo..`` (``(rows, 2b+1)``), ``-inf`` for partners
        outside rows ``0..M-1``; ``log p_i`` is ``(rows, 1)`` and ``log p_j`` the partners'
        ``(rows, 2b+1)`` (a strided view of the padded log densities, no gather).
        """
        lp = self.log_p_full(y)
        M, width = self.log_w.shape
        b = self.half_width
        pad = np.concatenate([np.full(b, lp[0]), lp, np.full(b, lp[-1])])
        # partner j = i + d - b of row i sits at pad[i + d]: a strided view, no gather
        view = np.lib.stride_tricks.sliding_window_view(pad, width)
        step = max(1, BLOCK_ENTRIES // width)
        d = np.arange(width) - b
        for lo in range(0, M, step):
            hi = min(M, lo + step)
            lw = self.log_w[lo:hi]
            if lo < b or hi > M - b:  # partners outside the rows: left out
                j = np.arange(lo, hi)[:, None] + d[None, :]
                lw = np.where((j >= 0) & (j < M), lw, -np.inf)
            yield lo, lw, lp[lo:hi, None], view[lo:hi]

    def blocks(self, y: np.ndarray):
        r"""Row blocks ``(lo, F, G, loss)`` of the flows on the band.

        ``F_ij = K_ij mu_i = w_ij p_i`` (out of row ``i``), ``G_ij = w_ij p_j = F_ji`` (into
        row ``i``, by the symmetry of ``w``) and ``loss_ij = log p_i - log p_j``, each
        ``(rows, 2b+1)`` for rows ``lo..``; ``F = G = 0`` off the band and for partners
        outside rows ``0..M-1``.  Both exponents are log *masses* (``log w_ij + log p``),
        so nothing overflows at any ``m``.
        """
        for lo, lw, pi, pj in self._band_rows(y):
            yield (lo, *flows(lw, pi, pj))

    def objective(self, y: np.ndarray) -> float:
        r"""The KL ``sum_ij F_ij log(p_i / p_j)`` (eq. 28) at log densities ``y``."""
        total = 0.0
        for _, lw, pi, pj in self._band_rows(y):
            F, _, loss = flows(lw, pi, pj)
            total += float(np.sum(F * loss))
        return total


def derivatives(prob: BandedKL, y: np.ndarray):
    r"""``f``, gradient and banded Hessian (upper form) in relative coordinates, tail folded.

    ``mu_a g_a = sum_j F_aj loss_aj + out_a - in_a``; the Hessian is the Laplacian of
    ``S_ij = F_ij + F_ji = w_ij (p_i + p_j)`` (off the diagonal), rows past ``N`` summed into
    node ``N``.  Computed in row blocks (:meth:`BandedKL.blocks`).

    Returns:
      ``(f, g, ab)``: ``ab`` of shape ``(b+1, N+1)`` for :func:`scipy.linalg.solveh_banded`
      (``ab[b + i - j, j] = H_ij``, ``i <= j``).
    """
    b, N = prob.half_width, prob.N
    M = prob.log_w.shape[0]
    g_full = np.empty(M)
    f = 0.0
    ab = np.zeros((b + 1, N + 1))
    diag = np.zeros(N + 1)
    tail_edge = np.zeros(N + 1)  # flows between node a < N and rows >= N
    for lo, F, G, loss in prob.blocks(y):
        hi = lo + F.shape[0]
        row_loss = np.sum(F * loss, axis=1)
        f += float(row_loss.sum())
        g_full[lo:hi] = row_loss + F.sum(axis=1) - G.sum(axis=1)
        s_blk = (F[:, b + 1:] + G[:, b + 1:]).T.copy()  # S(i, i + k) at [k - 1, i - lo]
        for k in range(1, min(b, M - 1) + 1):
            top = min(hi, M - k)  # rows i of this block with a partner i + k
            if top <= lo:
                continue
            s = s_blk[k - 1, : top - lo]  # S(i, i + k), i = lo..top-1
            inner = min(top, N - k)  # pairs with both ends free nodes < N: i < N - k
            if inner > lo:
                c = inner - lo
                ab[b - k, lo + k:inner + k] = -s[:c]
                diag[lo:inner] += s[:c]
                diag[lo + k:inner + k] += s[:c]
            t0, t1 = max(lo, N - k), min(top, N)  # i < N <= i + k: node i and the tail block
            if t1 > t0:
                tail_edge[t0:t1] += s[t0 - lo:t1 - lo]
    g = np.concatenate([g_full[:N], [g_full[N:].sum()]])
    diag[:N] += tail_edge[:N]
    diag[N] += tail_edge[:N].sum()
    # node N's couplings: H[a, N] = -(flows between a and all rows >= N)
    a_idx = np.arange(max(N - b, 0), N)
    ab[b - (N - a_idx), N] = -tail_edge[a_idx]
    ab[b] = diag
    return f, g, ab


def _row_sums(ab: np.ndarray) -> np.ndarray:
    """``H 1`` of a symmetric band matrix in upper form (``ab[b + i - j, j] = H_ij``)."""
    b = ab.shape[0] - 1
    out = ab[b].copy()
    for k in range(1, b + 1):
        out[: out.size - k] += ab[b - k, k:]
        out[k:] += ab[b - k, k:]
    return out


def solve_banded_kl(prob: BandedKL, y0: np.ndarray, weight: np.ndarray, gap_tol: float = 1e-9,
                    t0: float | None = None, max_newton: int = 400,
                    t_factor: float = 100.0) -> dict:
    r"""Solve the programme from a strictly feasible, strictly monotone start ``y0`` (log p).

    Args:
      prob: the :class:`BandedKL` data.
      y0: ``(N+1,)`` start (mass and cost rows exactly 1, ``y0`` strictly decreasing).
      weight: ``(N,)`` barrier weights (reference shell masses).
      gap_tol: stop when the barrier's gap bound ``sum(weight) / t`` is below ``gap_tol``
        times the KL.
      t0: first barrier parameter (default ``10^4 sum(weight) / f(y0)``: the start, the grid
        Gaussian, is near the optimum, so the path starts at a gap bound of ``1e-4 f``).
      max_newton: most Newton steps in all.
      t_factor: the barrier parameter's growth between centring stages.

    Returns:
      ``{"y", "kl", "status", "gap", "decrement", "newton_steps", "mass_error",
      "cost_error"}``; ``status`` 0 when converged, 1 when ``max_newton`` ran out.
    """
    y = np.asarray(y0, np.float64).copy()
    N = prob.N
    wsum = float(np.sum(weight))
    mu_of = lambda yy: np.exp(yy + prob.log_v[: N + 1])  # noqa: E731
    f0 = prob.objective(y)
    t = 1e4 * wsum / max(f0, 1e-300) if t0 is None else t0
    with _one_blas_thread():
        return _solve(prob, y, weight, gap_tol, t, max_newton, wsum, mu_of, t_factor)


def _one_blas_thread():
    """One BLAS thread for the band solves (a narrow band gains nothing from threads, and
    spinning BLAS threads on a busy machine made ``dpbtrf`` a hundred times slower)."""
    try:
        # deferred: threadpoolctl (optional: scikit-learn's dependency)
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: scikit-learn's dependency
        return contextlib.nullcontext()
    return threadpool_limits(1, "blas")


def _solve(prob, y, weight, gap_tol, t, max_newton, wsum, mu_of, t_factor):
    N = prob.N
    steps, status, dec, f = 0, 1, math.inf, math.inf

    def merit(yy, tt):
        _, sig = barrier(yy)
        if np.any(sig <= 0):
            return math.inf
        return tt * prob.objective(yy) - float(np.sum(weight * np.log(sig)))

    cur = None  # derivatives at y, when the line search already computed them
    while steps < max_newton:
        for _ in range(60):
            f, g, ab = derivatives(prob, y) if cur is None else cur
            cur = None
            e, sig, gb, hq = barrier_terms(y, weight)
            ab_t = t * ab
            ab_t[-1, :-1] += hq
            ab_t[-1, 1:] += hq * e * e
            ab_t[-2, 1:] -= hq * e
            grad = t * g + gb
            mu = mu_of(y)
            A = np.stack([mu * prob.mass, mu * prob.cost])
            # ground node N (a nonsingular band), close with a 3x3 system (close_direction)
            h1 = _row_sums(ab_t)
            X = linalg.solveh_banded(ab_t[:, :N], np.column_stack([-grad[:N], h1[:N], A[:, :N].T]),
                              check_finite=False)
            d = close_direction(grad, h1, A, X, prob.cost, prob.mass)
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
            base = t * f - float(np.sum(weight * np.log(sig)))  # merit(y, t), f at this y
            alpha = amax
            # the first trial (usually accepted) gets the derivatives the next step needs
            y_new = y + np.log1p(alpha * d)
            _, sig_new = barrier(y_new)
            if np.all(sig_new > 0):
                cur = derivatives(prob, y_new)
                trial = t * cur[0] - float(np.sum(weight * np.log(sig_new)))
            else:
                trial = math.inf
            while alpha > 1e-12:
                if trial <= base - 1e-4 * alpha * dec:
                    break
                cur = None
                alpha *= 0.5
                y_new = y + np.log1p(alpha * d)
                trial = merit(y_new, t)
            else:
                break
            y = y_new
            if steps >= max_newton:
                break
        if wsum / t <= gap_tol * max(f, 1e-300):
            status = 0
            break
        t *= t_factor
    mu = mu_of(y)
    return {"y": y, "kl": prob.objective(y), "status": status, "gap": wsum / t,
            "decrement": dec, "newton_steps": steps,
            "mass_error": float(abs(mu @ prob.mass - 1.0)),
            "cost_error": float(abs(mu @ prob.cost - 1.0))}


__all__ = ["BandedKL", "derivatives", "solve_banded_kl"]
