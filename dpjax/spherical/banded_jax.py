r"""Banded barrier-Newton solver of the windowed monotone spherical KL programme in JAX.

The same method as the host solver :func:`dpjax.spherical.banded.solve_banded_kl` -- the
programme of Theorem 4 of spherical-kl-optimal-mechanisms (eqs. 28-30, monotone as
Definition 2 requires) on the window's free shells ``k = 0..N``, the geometric tail
``p_{N+t} = p_N r^t`` folded into node ``N``:

.. math:: \min_\mu \sum_{i,j} K_{ij}\,\mu_i \log\frac{p_i}{p_j}
          \quad\text{s.t.}\quad a^\top\mu = 1,\; c^\top\mu = 1,\; p_{k+1} \le p_k ,

solved by a weighted log-barrier path ``t -> t_factor t`` with Newton centring in relative
coordinates ``mu <- mu (1 + d)`` (fraction to the boundary 0.99, Armijo backtracking) -- but
the whole path (centring stages, Newton steps, line searches) runs inside **one** jitted
program (``lax.while_loop``), in float64, with no host round trip per step: the design
kernel runs on a GPU or TPU as it runs on the CPU.

The derivatives are those of :func:`dpjax.spherical.banded.derivatives` (the flows, the
barrier pieces and the closing 3x3 system are shared with the host solver,
:mod:`._banded_newton`, written once against an array namespace), evaluated for all rows at
once (memory ``O(M b)``).  The banded Hessian (grounded at node ``N``) is factored
by a block-tridiagonal Cholesky (:func:`band_cholesky_solve`): blocks of size
``s = max(b, MIN_BLOCK)`` (a band of half-width ``b <= s`` is block tridiagonal), a
``lax.scan`` over the ``ceil(N / s)`` block rows with an ``s x s`` Cholesky and triangular
solves each -- work ``O(N s^2)``, memory ``O(N s)``; the dense ``(N+1)^2`` matrix is never
formed (a window of at most ``s`` nodes is one block: that *is* the dense Cholesky, so no
separate small-size path is needed).

Status: 0 converged, 1 ``max_newton`` ran out, 2 a non-finite Newton direction (the host
solver raises ``LinAlgError`` there).  Compiled once per shape ``(M, 2b+1, N+1)``: the
budget, the weights, ``gap_tol``, ``t0``, ``max_newton`` and ``t_factor`` are traced.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.linalg import solve_triangular

from dpjax.numerics import float64_kernel
from dpjax.spherical._banded_newton import barrier, barrier_terms, close_direction, flows
from dpjax.spherical.banded import BandedKL

#: smallest block of the block-tridiagonal Cholesky (narrow bands get blocks of this size:
#: fewer, larger steps of the scan; any block size ``>= b`` is exact)
MIN_BLOCK = 32
#: Newton steps per centring stage (as the host solver)
STAGE_STEPS = 60


# --------------------------------------------------------------------- banded SPD solve


def _mask_band(D):
    """Zero the entries ``D[i, k] = H[i, i+k]`` that fall past the last row (``i + k >= n``)."""
    n, w = D.shape
    i = lax.broadcasted_iota(jnp.int32, (n, w), 0)
    k = lax.broadcasted_iota(jnp.int32, (n, w), 1)
    return jnp.where(i + k < n, D, 0.0)


def _skew(X):
    r"""Shift row ``r`` of ``X`` (``(..., R, C)``) right by ``r``: ``Y[r, r + c] = X[r, c]``.

    ``(..., R, C + R - 1)``, zeros elsewhere; by padding and reshaping (no gather).
    """
    *lead, R, C = X.shape
    Z = jnp.concatenate([X, jnp.zeros((*lead, R, R), X.dtype)], axis=-1)
    V = C + R - 1
    return Z.reshape(*lead, R * (C + R))[..., : R * V].reshape(*lead, R, V)


def _to_blocks(D, s):
    r"""Diagonal and super-diagonal ``s x s`` blocks of the symmetric band ``D[i, k] = H[i, i+k]``.

    ``D`` must be zero where ``i + k >= n``; the matrix is padded to ``ceil(n/s) s`` rows with
    the identity.  The rows of block ``q``, each shifted right by its index (:func:`_skew`),
    hold ``H[qs + r, qs + c]`` for ``c >= r`` in columns ``c < s`` (the upper triangle of
    ``A_q``) and the super-diagonal block ``B_q^T`` in columns ``s..2s-1`` (``s >= b``), where
    ``B_q = H[(q+1)s.., qs..]`` is the sub-diagonal one.

    Returns:
      ``(A, B^T)``: ``(nb, s, s)`` and ``(nb - 1, s, s)``.
    """
    D = D[:, : s + 1]  # a band wider than one block: one block (s = n), k >= n are zero
    n, w = D.shape
    nb = -(-n // s)
    Dp = jnp.concatenate([D, jnp.zeros((nb * s - n, w), D.dtype)]).reshape(nb, s, w)
    Y = _skew(Dp)  # (nb, s, w + s - 1), w + s - 1 <= 2 s
    Y = jnp.concatenate([Y, jnp.zeros((nb, s, 2 * s - Y.shape[2]), D.dtype)], axis=2)
    U = Y[:, :, :s]
    eye = jnp.eye(s, dtype=D.dtype)
    row = lax.broadcasted_iota(jnp.int32, (nb, s, s), 0) * s + lax.broadcasted_iota(
        jnp.int32, (nb, s, s), 1)
    diag = U + jnp.swapaxes(U, 1, 2) - eye * U + jnp.where(row >= n, eye, 0.0)
    return diag, Y[:-1, :, s:]


def _block_factor_forward(diag, sub_t, rhs):
    r"""Block Cholesky ``H = L L^T`` and the forward substitution ``L z = rhs`` in one scan.

    ``L`` is block bidiagonal: diagonal blocks ``L_q``, sub-diagonal ``C_q``; ``L_0 = chol(A_0)``,
    ``C_q = B_{q-1} L_{q-1}^{-T}``, ``L_q = chol(A_q - C_q C_q^T)``, ``z_q = L_q^{-1} (r_q -
    C_q z_{q-1})`` (triangular solves, no inverse).  Kept as ``C_q^T = L_{q-1}^{-1} B_{q-1}^T``
    (``sub_t`` holds the ``B^T``): no transposes.

    Returns:
      ``(L, C^T, z)``: ``(nb, s, s)``, ``(nb - 1, s, s)``, ``(nb, s, k)``.
    """
    L0 = lax.linalg.cholesky(diag[0], symmetrize_input=False)
    z0 = solve_triangular(L0, rhs[0], lower=True)

    def step(carry, blocks):
        L_prev, z_prev = carry
        A, B_t, r = blocks
        C_t = solve_triangular(L_prev, B_t, lower=True)  # C L_prev^T = B
        L = lax.linalg.cholesky(A - C_t.T @ C_t, symmetrize_input=False)
        z = solve_triangular(L, r - C_t.T @ z_prev, lower=True)
        return (L, z), (L, C_t, z)

    _, (Ls, Cts, zs) = lax.scan(step, (L0, z0), (diag[1:], sub_t, rhs[1:]))
    return jnp.concatenate([L0[None], Ls]), Cts, jnp.concatenate([z0[None], zs])


def _block_backward(Ls, Cts, z):
    r"""The backward substitution ``L^T x = z``: ``x_q = L_q^{-T} (z_q - C_{q+1}^T x_{q+1})``."""
    x_last = solve_triangular(Ls[-1], z[-1], lower=True, trans=1)

    def step(x_next, blocks):
        L, C_t_next, zq = blocks
        x = solve_triangular(L, zq - C_t_next @ x_next, lower=True, trans=1)
        return x, x

    _, xs = lax.scan(step, x_last, (Ls[:-1], Cts, z[:-1]), reverse=True)
    return jnp.concatenate([xs, x_last[None]])


def _band_solve(D, rhs, block: int | None = None):
    """Solve ``H X = rhs`` for the SPD band ``D[i, k] = H[i, i+k]`` (``(n, b+1)``, masked)."""
    n, w = D.shape
    s = min(n, max(w - 1, MIN_BLOCK if block is None else block))
    nb = -(-n // s)
    diag, sub_t = _to_blocks(D, s)
    k = rhs.shape[1]
    r = jnp.concatenate([rhs, jnp.zeros((nb * s - n, k), rhs.dtype)]).reshape(nb, s, k)
    Ls, Cts, z = _block_factor_forward(diag, sub_t, r)
    return _block_backward(Ls, Cts, z).reshape(nb * s, k)[:n]


@float64_kernel
def band_cholesky_solve(ab, rhs, block: int | None = None):
    r"""Solve ``H x = rhs`` for a symmetric positive definite band matrix, in JAX.

    ``H`` is given in :func:`scipy.linalg.solveh_banded`'s lower form, ``ab[i - j, j] = H_ij``
    (``0 <= i - j <= b``, shape ``(b+1, n)``; entries past the last row are ignored).  A
    band of half-width ``b`` is block tridiagonal in blocks of size ``s >= b``:

    .. math:: H = L L^\top,\quad L_0 L_0^\top = A_0,\quad C_q = B_{q-1} L_{q-1}^{-\top},
              \quad L_q L_q^\top = A_q - C_q C_q^\top ,

    then a forward and a backward block substitution -- ``lax.scan`` over ``ceil(n/s)`` block
    rows, work ``O(n s^2)``, memory ``O(n s)`` (the Newton step of the spherical KL
    programme, Theorem 4 of spherical-kl-optimal-mechanisms, is one such solve).  Jittable;
    not SPD gives NaN (no exception under ``jit``).

    Args:
      ab: ``(b+1, n)`` lower band form.
      rhs: ``(n,)`` or ``(n, k)`` right-hand sides.
      block: block size ``s`` (default ``max(b, MIN_BLOCK)``, at most ``n``; at least ``b``).

    Returns:
      ``x`` of ``rhs``'s shape.

    Example:
      >>> import jax, numpy as np
      >>> with jax.enable_x64(True):
      ...     ab = np.array([[4.0, 4.0, 4.0, 4.0], [1.0, 1.0, 1.0, 0.0]])  # tridiag(1, 4, 1)
      ...     x = band_cholesky_solve(ab, np.ones(4))
      >>> np.round(np.asarray(x), 6)
      array([0.210526, 0.157895, 0.157895, 0.210526])
    """
    ab = jnp.asarray(ab, jnp.float64)
    rhs = jnp.asarray(rhs, jnp.float64)
    if block is not None and block < ab.shape[0] - 1:
        raise ValueError(f"block must be at least the half-width {ab.shape[0] - 1}, got {block}")
    vec = rhs.ndim == 1
    x = _BAND_SOLVE(ab, rhs[:, None] if vec else rhs, block)
    return x[:, 0] if vec else x


_BAND_SOLVE = jax.jit(lambda ab, rhs, block: _band_solve(_mask_band(ab.T), rhs, block),
                      static_argnums=2)


def _band_row_sums(D):
    r"""``H 1`` for the symmetric band ``D[i, k] = H[i, i+k]`` (masked past the last row).

    ``sum_k H[i, i+k] + sum_{k >= 1} H[i-k, i]``, the second from the rows of ``D^T`` shifted
    right by ``k`` (:func:`_skew`: ``Y[k, j] = D[j-k, k]``), as the host's ``_row_sums``.
    """
    n = D.shape[0]
    return D.sum(axis=1) + _skew(D.T)[1:, :n].sum(axis=0)


# --------------------------------------------------------------------- the programme


class _Data(NamedTuple):
    log_w: jax.Array  # (M, 2b+1)
    log_v: jax.Array  # (N+1,) log shell volumes of the nodes
    mass: jax.Array  # (N+1,)
    cost: jax.Array  # (N+1,)
    log_r: jax.Array  # ()


def _log_p_full(data: _Data, y):
    """``y`` on the nodes, ``y_N + t log r`` on the tail rows ``N+1..M-1``."""
    M, N = data.log_w.shape[0], y.shape[0] - 1
    t = jnp.arange(1, M - N, dtype=y.dtype)
    return jnp.concatenate([y, y[N] + t * data.log_r])


def _band_rows(data: _Data, y):
    """``(lw, log p_i, log p_j)`` of every row (``(M, 2b+1)``), partners outside ``-inf``."""
    lp = _log_p_full(data, y)
    M, w = data.log_w.shape
    b = (w - 1) // 2
    pad = jnp.concatenate([jnp.full(b, lp[0]), lp, jnp.full(b, lp[-1])])
    i = lax.broadcasted_iota(jnp.int32, (M, w), 0)
    d = lax.broadcasted_iota(jnp.int32, (M, w), 1)
    j = i + d - b
    lw = jnp.where((j >= 0) & (j < M), data.log_w, -jnp.inf)
    # partner j = i + d - b of row i sits at pad[i + d]: the sliding windows of pad, by
    # shifting the rows of a broadcast left (reshape to one column more; no gather)
    L = pad.shape[0]
    flat = jnp.concatenate([jnp.broadcast_to(pad, (w, L)).reshape(-1), jnp.zeros(w, pad.dtype)])
    return lw, lp[:, None], flat.reshape(w, L + 1)[:, :M].T


def _pairwise_sum(x):
    """Sum of a vector by halving: error ``~ log2(n)`` ulps, as NumPy's pairwise sum."""
    n = x.shape[0]
    size = 1 << max(0, (n - 1).bit_length())
    x = jnp.concatenate([x, jnp.zeros(size - n, x.dtype)])
    while x.shape[0] > 1:
        half = x.shape[0] // 2
        x = x[:half] + x[half:]
    return x[0]


def _objective(data: _Data, y):
    r"""The KL ``sum_ij F_ij log(p_i / p_j)`` (eq. 28): row sums, then a pairwise total."""
    F, _, loss = flows(*_band_rows(data, y), jnp)
    return _pairwise_sum(jnp.sum(F * loss, axis=1))


def _derivatives(data: _Data, y):
    r"""``(f, g, D)`` as :func:`dpjax.spherical.banded.derivatives`, ``D[i, k] = H[i, i+k]``.

    ``g_a = sum_j F_aj loss_aj + out_a - in_a`` (rows past ``N`` summed into node ``N``); ``H``
    is the Laplacian of ``S_ij = F_ij + G_ij = w_ij (p_i + p_j)``: for a node ``i < N`` the
    partners ``i + k < N`` couple to node ``i + k`` and those ``>= N`` to node ``N``; its
    diagonal is the row sum of ``S`` off ``j = i``, node ``N``'s the sum of its couplings.
    """
    N = y.shape[0] - 1
    w = data.log_w.shape[1]
    b = (w - 1) // 2
    F, G, loss = flows(*_band_rows(data, y), jnp)
    row_loss = jnp.sum(F * loss, axis=1)
    f = _pairwise_sum(row_loss)
    g_full = row_loss + F.sum(axis=1) - G.sum(axis=1)
    g = jnp.concatenate([g_full[:N], jnp.sum(g_full[N:])[None]])
    S = (F + G)[:N]
    Su = S[:, b + 1:]  # S(i, i + k), k = 1..b
    i = lax.broadcasted_iota(jnp.int32, (N, b), 0)
    k = lax.broadcasted_iota(jnp.int32, (N, b), 1) + 1
    tail = jnp.sum(jnp.where(i + k >= N, Su, 0.0), axis=1)  # flows between i and rows >= N
    off = jnp.where(i + k < N, -Su, jnp.where(i + k == N, -tail[:, None], 0.0))
    diag = jnp.concatenate([S.sum(axis=1) - S[:, b], jnp.sum(tail)[None]])
    off = jnp.concatenate([off, jnp.zeros((1, b), off.dtype)])
    return f, g, jnp.concatenate([diag[:, None], off], axis=1)


def _merit(data: _Data, weight, y, t):
    """``t f(y) - sum w log sig`` (``inf`` outside the monotone cone)."""
    _, sig = barrier(y, jnp)
    inside = jnp.all(sig > 0)
    return jnp.where(inside, t * _objective(data, y)
                     - _pairwise_sum(weight * jnp.log(jnp.where(sig > 0, sig, 1.0))), jnp.inf)


class _State(NamedTuple):
    y: jax.Array  # log densities of the nodes
    t: jax.Array  # barrier parameter
    steps: jax.Array  # Newton steps in all
    inner: jax.Array  # Newton steps in this centring stage
    dec: jax.Array  # the last Newton decrement
    done: jax.Array
    status: jax.Array


def _direction(data: _Data, weight, y, t, g, D):
    """The Newton direction of ``t f + barrier`` at ``y`` keeping the two rows (host twin)."""
    N = y.shape[0] - 1
    e, sig, gb, hq = barrier_terms(y, weight, jnp)
    Ht = t * D
    Ht = Ht.at[:, 0].add(jnp.concatenate([hq, jnp.zeros(1)])
                         + jnp.concatenate([jnp.zeros(1), hq * e * e]))
    Ht = Ht.at[:N, 1].add(-hq * e)
    grad = t * g + gb
    mu = jnp.exp(y + data.log_v)
    A = jnp.stack([mu * data.mass, mu * data.cost])
    h1 = _band_row_sums(Ht)
    X = _band_solve(_mask_band(Ht[:N]), jnp.column_stack([-grad[:N], h1[:N], A[:, :N].T]))
    d = close_direction(grad, h1, A, X, data.cost, data.mass, jnp)
    return d, -grad @ d, e, sig


def _line_search(data: _Data, weight, y, t, d, dec, e, sig):
    """Fraction to the boundary (0.99), then Armijo backtracking (halving, ``alpha > 1e-12``).

    The merit at ``y`` (the Armijo base) and at every trial are evaluated by the same code (one
    loop body; its first pass is ``alpha = 0``, its second ``alpha_max``): near the centre the
    decrease ``1e-4 alpha dec`` is a few ulps of ``t f``, so base and trials are summed alike.

    Returns:
      ``(ok, y_new)``.
    """
    md = jnp.max(-d)
    amax = jnp.where(md > 0, jnp.minimum(1.0, 0.99 / jnp.where(md > 0, md, 1.0)), 1.0)
    ds = d[:-1] - e * d[1:]  # relative change of the slack, per p_k
    ratio = jnp.where(ds < 0, sig / jnp.where(ds < 0, -ds, 1.0), jnp.inf)
    amax = jnp.minimum(amax, 0.99 * jnp.min(ratio, initial=jnp.inf))

    def armijo(base, alpha, trial):
        return trial <= base - 1e-4 * alpha * dec

    def cond(c):
        k, base, alpha, trial, _ = c
        return (k < 2) | ((alpha > 1e-12) & ~armijo(base, alpha, trial))

    def body(c):
        k, base, alpha, trial, _ = c
        alpha = jnp.where(k == 0, 0.0, jnp.where(k == 1, amax, 0.5 * alpha))
        y_new = y + jnp.log1p(alpha * d)
        merit = _merit(data, weight, y_new, t)
        return k + 1, jnp.where(k == 0, merit, base), alpha, merit, y_new

    inf = jnp.asarray(jnp.inf)
    k0 = jnp.zeros((), jnp.int32)
    _, base, alpha, trial, y_new = lax.while_loop(cond, body, (k0, inf, amax, inf, y))
    return (alpha > 1e-12) & armijo(base, alpha, trial), y_new


def _solve_core(data: _Data, y0, weight, gap_tol, t0, max_newton, t_factor):
    wsum = jnp.sum(weight)
    f0 = _objective(data, y0)
    t_init = jnp.where(jnp.isnan(t0), 1e4 * wsum / jnp.maximum(f0, 1e-300), t0)
    zero = jnp.zeros((), jnp.int32)
    state = _State(y0, t_init, zero, zero, jnp.asarray(jnp.inf), jnp.asarray(False),
                   jnp.ones((), jnp.int32))

    def cond(s: _State):
        return ~s.done & (s.steps < max_newton)

    def body(s: _State):
        # the derivatives at y: one evaluation per step (the host solver reuses those of an
        # accepted first trial; here the line search evaluates the merit only, at y and at the
        # trials, which keeps one copy of the derivatives in the compiled program)
        f, g, D = _derivatives(data, s.y)
        d, dec, e, sig = _direction(data, weight, s.y, s.t, g, D)
        steps = s.steps + 1
        finite = jnp.all(jnp.isfinite(d)) & jnp.isfinite(dec)
        centred = dec / 2.0 <= 1e-12 * jnp.maximum(1.0, jnp.abs(s.t * f))
        move = finite & ~centred
        ok, y = lax.cond(move, lambda: _line_search(data, weight, s.y, s.t, d, dec, e, sig),
                         lambda: (jnp.asarray(False), s.y))
        stepped = move & ok
        inner = s.inner + 1
        stage_end = ~stepped | (inner >= STAGE_STEPS) | (steps >= max_newton)
        # the gap is judged with f at the step's start (as the host solver)
        gap_ok = stage_end & (wsum / s.t <= gap_tol * jnp.maximum(f, 1e-300))
        grow = stage_end & ~gap_ok & finite
        status = jnp.where(~finite, 2, jnp.where(gap_ok, 0, s.status)).astype(jnp.int32)
        return _State(y=jnp.where(stepped, y, s.y), t=jnp.where(grow, s.t * t_factor, s.t),
                      steps=steps, inner=jnp.where(stage_end, 0, inner), dec=dec,
                      done=gap_ok | ~finite, status=status)

    s = lax.while_loop(cond, body, state)
    mu = jnp.exp(s.y + data.log_v)
    return {"y": s.y, "kl": _objective(data, s.y), "status": s.status, "gap": wsum / s.t,
            "decrement": s.dec, "newton_steps": s.steps,
            "mass_error": jnp.abs(mu @ data.mass - 1.0),
            "cost_error": jnp.abs(mu @ data.cost - 1.0)}


#: the compiled path (one compile per shape; everything else traced)
_SOLVE = jax.jit(_solve_core)


@float64_kernel
def solve_banded_kl_jax(prob: BandedKL, y0, weight, gap_tol: float = 1e-9,
                        t0: float | None = None, max_newton: int = 400,
                        t_factor: float = 100.0) -> dict:
    r"""Solve the windowed monotone KL programme by banded barrier Newton in one jitted program.

    The programme of Theorem 4 of spherical-kl-optimal-mechanisms (eqs. 28-30: the KL
    ``sum_ij K_ij mu_i log(p_i / p_j)`` at the maximal shift, mass and cost rows, monotone
    ``p_{k+1} <= p_k``) with the tail folded into node ``N``; the barrier
    ``-sum_k w_k log(p_k - p_{k+1})`` weighted by the reference shell masses, the path
    ``t -> t_factor t`` until ``sum(w) / t <= gap_tol * KL``.  Each Newton step solves the
    grounded banded Hessian by a block-tridiagonal Cholesky (:func:`band_cholesky_solve`)
    inside ``lax.while_loop``: no host round trip per step, float64 (guarded: x64 must be on).
    Same arguments, method and result keys as the host
    :func:`dpjax.spherical.banded.solve_banded_kl` (module docstring).

    Args:
      prob: the :class:`~dpjax.spherical.banded.BandedKL` data.
      y0: ``(N+1,)`` strictly feasible, strictly decreasing start (log p).
      weight: ``(N,)`` barrier weights (reference shell masses).
      gap_tol: stop when the gap bound ``sum(weight) / t`` is below ``gap_tol`` times the KL.
      t0: first barrier parameter (default ``10^4 sum(weight) / f(y0)``).
      max_newton: most Newton steps in all.
      t_factor: the barrier parameter's growth between centring stages.

    Returns:
      ``{"y", "kl", "status", "gap", "decrement", "newton_steps", "mass_error",
      "cost_error"}`` as host values; ``status`` 0 converged, 1 ``max_newton`` ran out, 2 a
      non-finite Newton direction.

    Example:
      >>> import jax, numpy as np
      >>> from dpjax.spherical.geometric import plan, programme
      >>> prob, _, log_v, y_ref = programme(plan(10, 2.5, n=4))
      >>> mu = np.exp(y_ref + log_v[: prob.N + 1])
      >>> with jax.enable_x64(True):
      ...     out = solve_banded_kl_jax(prob, y_ref, mu[:-1] / mu.sum())
      >>> out["status"], round(out["kl"], 6)
      (0, 2.169759)
    """
    data = _Data(*(jnp.asarray(a, jnp.float64) for a in (
        prob.log_w, np.asarray(prob.log_v)[: prob.N + 1], prob.mass, prob.cost, prob.log_r)))
    out = _SOLVE(data, jnp.asarray(y0, jnp.float64), jnp.asarray(weight, jnp.float64),
                 jnp.asarray(gap_tol, jnp.float64),
                 jnp.asarray(math.nan if t0 is None else t0, jnp.float64),
                 jnp.asarray(max_newton, jnp.int32), jnp.asarray(t_factor, jnp.float64))
    out = jax.device_get(out)
    res = {k: float(v) for k, v in out.items() if k not in ("y", "status", "newton_steps")}
    return {"y": np.asarray(out["y"]), **res, "status": int(out["status"]),
            "newton_steps": int(out["newton_steps"])}


__all__ = ["MIN_BLOCK", "STAGE_STEPS", "band_cholesky_solve", "solve_banded_kl_jax"]
