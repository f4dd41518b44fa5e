r"""Coefficients of the spherical KL programme (Theorem 4 of spherical-kl-optimal-mechanisms).

For a spherically symmetric density constant on the shells
``{x in R^m : |x| in J_i}``, ``J_i = [i/n, (i+1)/n)``, everything the KL
programme needs is a set of shell integrals:

* ``v_i`` (eq. 26): shell volume ``V_m ((i+1)^m - i^m) / n^m``;
* ``c_i`` (eq. 24): ``int_{|x| in J_i} c(x) dx = m V_m int_{J_i} c~(rho) rho^(m-1) d rho``;
* ``gamma_ij`` (eq. 23): ``int_{J_i} int_{J_j} rho theta H(1, rho, theta)^(m-3) d theta d rho``
  with ``H`` the triangle area (eq. 22), ``A_m = 2^(m-3) (m-1) V_{m-1}``.

By the measure identity ``dx = A_m rho theta H^(m-3) d rho d theta`` (rho = |x|,
theta = |x - e1|), ``w_ij = A_m gamma_ij`` is the volume of the cell
``{|x| in J_i, |x - e1| in J_j}``: symmetric, zero for ``|i - j| > n`` (banded),
and ``sum_j w_ij = v_i``.  The natural object is the row-normalised kernel
``K_ij = w_ij / v_i`` (a Markov kernel: the law of the shell of ``X + e1``
given the shell of ``X``, for ``X`` uniform in shell ``i``); everything is
kept in logs (``H^(m-3)``, ``A_m`` and ``V_m`` under/overflow for large ``m``).

Computation: with ``u = rho + theta``, ``w = rho - theta``,
``16 H^2 = (u - 1)(u + 1)(1 - w)(1 + w)`` and ``rho theta = (u^2 - w^2) / 4``.
Because ``1 = n / n`` the degeneracy lines ``u = 1`` and ``|w| = 1`` run through
cell corners or cell diagonals, so every cell is regular (analytic integrand),
empty, or one of <= 6 special cells per row that a line cuts or touches.
Regular cells use a tensor Gauss-Legendre rule; on its nodes ``u`` depends only
on ``s = i + j`` and ``w`` only on ``d = i - j``, so the whole band is two matrix
products ``P_2 Q_0^T - P_0 Q_2^T`` (``P_q[s, ab] = W_a W_b u^q (u^2-1)^k``,
``Q_q[d, ab] = w^q (1-w^2)^k``, ``k = (m-3)/2``) with per-row and per-column log
shifts (:func:`_log_plain_cells_gemm`; cells where the shifted product
under-/overflows or the difference cancels are redone cell by cell).  Special
cells use a rule that makes the singularity an endpoint one (triangle map, or
Duffy at a corner) with an endpoint-smoothing substitution
(:func:`_special_cells`; this also removes ``m = 2``'s inverse square root).
``m = 1`` (the 1-D cactus case) has its own exact kernel: ``J_i``'s two
intervals move under ``x -> x + 1`` onto shells ``i + n`` and
``|i - n|``-reflected (``i - n`` for ``i >= n``, ``n - 1 - i`` otherwise), each
with volume ``1 / n``.  The GEMM path agrees with the cell-by-cell path
(``method="elementwise"``) to ~1e-14 in log; at (m, n, rows) = (10, 400, 1926) it
takes ~1 s instead of ~7 s (2 shared CPU cores).  Accuracy limit: the plain rule's
order is ``min(8 + m // 15, 16)``; row sums ``sum_j w_ij = v_i`` hold to ~1e-13
for m <= 31 but only to ~5e-6 at (m, n) = (100, 20) and ~0.4 at (1000, 10)
(``H^(m-3)`` too peaked for 16 nodes per cell; both paths alike, measured).

Large ``m`` (default for ``m >= BETA_MIN_DIM = 32``, ``method="beta"``):
:func:`_log_cells_beta` integrates the conditional law of ``|x - e1|`` given
``|x|`` -- a regularised incomplete beta ``I_y((m-1)/2, (m-1)/2)`` -- against
the shell's radial law in the variable ``rho^m`` (dyadic composite Gauss), so
neither ``H^(m-3)`` nor ``rho^(m-1)`` is ever integrated by a polynomial rule.
Measured: agrees with the GEMM path to <= 8e-14 in log at m = 3, 10, 31; at
(m, n) = (100, 20) with 2-D mpmath quadrature to ~1e-13, row sums to 1e-14 (by
construction: they telescope), symmetry ``w_ij = w_ji`` to 1e-12 (5e-12 at
m = 1000); Monte Carlo row kernel at m = 1000.  Time (2 shared cores): 0.9 s
for (100, 20, 400 rows), 1.0 s for (1000, 10, 400), 5 s for (10^4, 10, 700).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp

#: default number of Gauss-Legendre nodes per dimension of each regular cell (``None``: by ``m``)
DEFAULT_ORDER = None
#: order of the endpoint-smoothed rule on the cells touched by a degeneracy line
SPECIAL_ORDER = 24


def log_unit_ball_volume(m: int) -> float:
    r"""``log V_m = (m/2) log pi - log Gamma(m/2 + 1)`` (eq. 27)."""
    return 0.5 * m * math.log(math.pi) - math.lgamma(0.5 * m + 1.0)


def log_A(m: int) -> float:
    r"""``log A_m``, ``A_m = 2^(m-3) (m-1) V_{m-1}`` (Theorem 4); ``m >= 2``."""
    if m < 2:
        raise ValueError("A_m is defined for m >= 2 (m = 1 has its own exact kernel)")
    return (m - 3) * math.log(2.0) + math.log(m - 1) + log_unit_ball_volume(m - 1)


def _log_diff_powers(i: np.ndarray, p: float) -> np.ndarray:
    """``log((i+1)^p - i^p)`` for integers ``i >= 0``, ``p > 0`` (no cancellation)."""
    i = np.asarray(i, np.float64)
    hi = p * np.log1p(i)
    with np.errstate(divide="ignore"):
        ratio = np.where(i > 0, p * (np.log(np.maximum(i, 1.0)) - np.log1p(i)), -np.inf)
    return hi + np.log(-np.expm1(ratio))


def log_shell_volumes(m: int, n: int, count: int) -> np.ndarray:
    r"""``log v_i`` for ``i = 0..count-1`` (eq. 26): ``log V_m - m log n + log((i+1)^m - i^m)``."""
    i = np.arange(count)
    return log_unit_ball_volume(m) - m * math.log(n) + _log_diff_powers(i, m)


def log_cost_coefficients(
    m: int, n: int, count: int, power: float | None = 2.0,
    radial_cost: Callable | None = None, order: int = 16,
) -> np.ndarray:
    r"""``log c_i`` (eq. 24) for the cost ``|x|^power`` or a radial cost ``c~(rho)``.

    ``c_i = m V_m int_{J_i} c~(rho) rho^(m-1) d rho``; for ``c~ = rho^a`` in
    closed form ``m V_m ((i+1)^(m+a) - i^(m+a)) / ((m + a) n^(m+a))``, otherwise by
    an ``order``-point Gauss-Legendre rule per shell (``radial_cost`` must be
    a vectorised NumPy function, ``>= 0``; ``log 0 = -inf`` allowed).
    """
    i = np.arange(count)
    log_mv = math.log(m) + log_unit_ball_volume(m)
    if radial_cost is None:
        a = float(power)
        return log_mv - math.log(m + a) - (m + a) * math.log(n) + _log_diff_powers(i, m + a)
    x, wq = np.polynomial.legendre.leggauss(order)
    rho = (i[:, None] + 0.5 * (x[None, :] + 1.0)) / n
    with np.errstate(divide="ignore"):
        lc = np.log(np.asarray(radial_cost(rho), np.float64))
    terms = lc + (m - 1) * np.log(rho) + np.log(0.5 * wq / n)[None, :]
    from scipy.special import logsumexp as np_lse

    return log_mv + np_lse(terms, axis=1)


def _smooth_rule(order: int):
    """Nodes/weights on [0, 1] after ``x = tau^2 (3 - 2 tau)`` (zero derivative at both ends)."""
    t, wt = np.polynomial.legendre.leggauss(order)
    tau = 0.5 * (t + 1.0)
    x = tau * tau * (3.0 - 2.0 * tau)
    jac = 6.0 * tau * (1.0 - tau)
    return x, 0.5 * wt * jac


def _plain_rule(order: int):
    """Gauss-Legendre nodes/weights on [0, 1]."""
    t, wt = np.polynomial.legendre.leggauss(order)
    return 0.5 * (t + 1.0), 0.5 * wt


def _log_cells(i, j, m: int, n: int, rule):
    """``log(A_m gamma_ij)`` for arrays ``i, j`` with the tensor 1-D ``rule`` (nodes, weights)."""
    x, wx = (jnp.asarray(a) for a in rule)
    h = 1.0 / n
    k = 0.5 * (m - 3)
    rho = (i[..., None] + x) * h  # (..., Q)
    # clip theta to [|1 - rho|, 1 + rho]
    a = jnp.maximum((j * h)[..., None], jnp.abs(1.0 - rho))
    b = jnp.minimum(((j + 1.0) * h)[..., None], 1.0 + rho)
    valid = (b > a) & (j[..., None] >= 0)
    length = jnp.where(valid, b - a, 1.0)
    theta = a[..., None] + length[..., None] * x  # (..., Q, Q)
    r_ = rho[..., None]
    u = r_ + theta
    w = r_ - theta
    f1 = jnp.maximum(u - 1.0, 0.0)
    f3 = jnp.maximum(1.0 - w, 0.0)
    f4 = jnp.maximum(1.0 + w, 0.0)
    pos = (f1 > 0) & (f3 > 0) & (f4 > 0)
    safe = lambda z: jnp.where(pos, z, 1.0)  # noqa: E731
    log16h2 = jnp.log(safe(f1)) + jnp.log(u + 1.0) + jnp.log(safe(f3)) + jnp.log(safe(f4))
    # A_m H^(m-3) rho theta = (m-1) V_{m-1} 2^-(m-3) (16 H^2)^k rho theta
    log_const = math.log(m - 1) + log_unit_ball_volume(m - 1) - (m - 3) * math.log(2.0)
    log_f = log_const + k * log16h2 + jnp.log(r_) + jnp.log(safe(theta))
    log_f = jnp.where(pos, log_f, -jnp.inf)
    inner = logsumexp(log_f + jnp.log(wx), axis=-1) + jnp.log(length)
    inner = jnp.where(valid, inner, -jnp.inf)
    return logsumexp(inner + jnp.log(wx * h), axis=-1)


def _log_integrand(rho, theta, m: int):
    """``log(A_m rho theta H(1, rho, theta)^(m-3))`` (``-inf`` outside the triangle inequality)."""
    k = 0.5 * (m - 3)
    u = rho + theta
    w = rho - theta
    f1 = u - 1.0
    f3 = 1.0 - w
    f4 = 1.0 + w
    pos = (f1 > 0) & (f3 > 0) & (f4 > 0) & (rho > 0) & (theta > 0)
    safe = lambda z: jnp.where(pos, z, 1.0)  # noqa: E731
    log16h2 = jnp.log(safe(f1)) + jnp.log(u + 1.0) + jnp.log(safe(f3)) + jnp.log(safe(f4))
    log_const = math.log(m - 1) + log_unit_ball_volume(m - 1) - (m - 3) * math.log(2.0)
    val = log_const + k * log16h2 + jnp.log(safe(rho)) + jnp.log(safe(theta))
    return jnp.where(pos, val, -jnp.inf)


def _touch_rule(order: int):
    """Unit-square rule for an integrand ~ (X + Y)^k at the corner (0, 0): two Duffy triangles
    (X = xi, Y = xi eta and swapped), ``xi = tau^2``; weights include all Jacobians."""
    t, wt = _plain_rule(order)
    tau, eta = np.meshgrid(t, t, indexing="ij")
    wgt = np.outer(wt, wt) * 2.0 * tau * tau**2  # d xi = 2 tau d tau, Duffy Jacobian xi
    xi = tau**2
    x = np.concatenate([xi.ravel(), (xi * eta).ravel()])
    y = np.concatenate([(xi * eta).ravel(), xi.ravel()])
    return x, y, np.concatenate([wgt.ravel(), wgt.ravel()])


def _cut_rule(order: int):
    """Rule on the triangle ``X + Y <= 1`` for an integrand ~ (1 - X - Y)^k:
    ``X = s (1 - t), Y = s t``, ``s = 1 - (1 - sigma)^2``."""
    t, wt = _plain_rule(order)
    sig, tt = np.meshgrid(t, t, indexing="ij")
    s = 1.0 - (1.0 - sig) ** 2
    wgt = np.outer(wt, wt) * 2.0 * (1.0 - sig) * s
    return (s * (1.0 - tt)).ravel(), (s * tt).ravel(), wgt.ravel()


def _special_cells(i, m: int, n: int, special_order: int):
    """The <= 6 cells of row ``i`` that a degeneracy line ``rho + theta = 1`` or
    ``|rho - theta| = 1`` cuts (along a diagonal) or touches (at a corner): their columns
    ``j`` (6,) and ``log(A_m gamma_ij)`` (6,) by a rule that makes the singularity an
    endpoint one (triangle map, or Duffy at the corner) with an endpoint-smoothing
    substitution.  Order matters: touches first, cuts override."""
    i = jnp.asarray(i, jnp.float64)
    tx, ty, tw = _touch_rule(special_order)
    cx_, cy_, cw = _cut_rule(special_order)
    pad = tx.size - cx_.size  # pad the cut rule with zero-weight nodes: one batched evaluation
    cut = (np.concatenate([cx_, np.full(pad, 0.25)]), np.concatenate([cy_, np.full(pad, 0.25)]),
           np.concatenate([cw, np.zeros(pad)]))
    # (kind, j, corner_rho, corner_theta, sign_rho, sign_theta): touches first, cuts override
    one = jnp.ones(())
    specs = (
        (0, n - i, i, n - i, 1.0, 1.0),
        (0, i - n + 1, i + 1.0, i - n + 1, -1.0, 1.0),
        (0, i + n - 1, i, i + n, 1.0, -1.0),
        (1, n - 1 - i, i + 1.0, n - i, -1.0, -1.0),
        (1, i - n, i, i - n + 1, 1.0, -1.0),
        (1, i + n, i + 1.0, i + n, -1.0, 1.0),
    )
    js = jnp.stack([one * s[1] for s in specs])
    cxs = jnp.stack([one * s[2] for s in specs])
    cys = jnp.stack([one * s[3] for s in specs])
    sxs = jnp.asarray([s[4] for s in specs])[:, None]
    sys_ = jnp.asarray([s[5] for s in specs])[:, None]
    kind = np.array([s[0] for s in specs])
    xs = jnp.asarray(np.where(kind[:, None] == 0, tx[None], cut[0][None]))
    ys = jnp.asarray(np.where(kind[:, None] == 0, ty[None], cut[1][None]))
    ws = jnp.asarray(np.where(kind[:, None] == 0, tw[None], cut[2][None]))
    h = 1.0 / n
    rho = h * (cxs[:, None] + sxs * xs)
    theta = h * (cys[:, None] + sys_ * ys)
    lf = _log_integrand(rho, theta, m)
    vals = logsumexp(lf + jnp.log(ws), axis=-1) + 2.0 * math.log(h)
    return js, vals


def _log_cell_row(i, m: int, n: int, order: int, special_order: int):
    """Row ``i`` of the banded ``log(A_m gamma)`` cell by cell (elementwise reference path):
    plain Gauss for cells away from the degeneracy lines, :func:`_special_cells` on them."""
    i = jnp.asarray(i, jnp.float64)
    d = jnp.arange(2 * n + 1, dtype=jnp.float64)
    row = _log_cells(jnp.full_like(d, i), i + d - n, m, n, _plain_rule(order))
    js, vals = _special_cells(i, m, n, special_order)
    for t in range(6):
        j = js[t]
        dd = j - i + n
        ok = (dd >= 0) & (dd <= 2 * n) & (j >= 0)
        idx = jnp.clip(dd, 0, 2 * n).astype(jnp.int32)
        row = row.at[idx].set(jnp.where(ok, vals[t], row[idx]))
    return row


def _log_plain_cells_gemm(m: int, n: int, rows: int, order: int):
    r"""Plain tensor-Gauss ``log(A_m gamma_ij)`` of the whole band as two matrix products.

    With ``u = rho + theta``, ``w = rho - theta`` the integrand is
    ``C (u^2 - w^2) / 4 * (u^2 - 1)^k (1 - w^2)^k``, ``k = (m - 3)/2``,
    ``C = (m-1) V_{m-1} 2^-(m-3)``.  On the node ``(rho, theta) = ((i + x_a) h, (j + x_b) h)``,
    ``u = (s + x_a + x_b) h`` depends only on ``s = i + j`` and ``w = (d + x_a - x_b) h``
    only on ``d = i - j``; so with ``P_q[s, ab] = W_a W_b u^q (u^2-1)^k`` and
    ``Q_q[d, ab] = w^q (1-w^2)^k`` the cell is ``C h^2 / 4 (P_2 Q_0^T - P_0 Q_2^T)[s, d]`` --
    the same quadrature as the elementwise path, as GEMMs, with per-row and per-column
    log shifts.  Returns ``(band, ok)``: ``ok`` False where the product under- or
    overflowed or cancelled (those cells are recomputed elementwise).
    """
    x, wq = _plain_rule(order)
    h = 1.0 / n
    k = 0.5 * (m - 3)
    xa = np.repeat(x, x.size)
    xb = np.tile(x, x.size)
    lw = np.log(np.repeat(wq, wq.size) * np.tile(wq, wq.size))
    svals = np.arange(2 * rows + 2 * n)
    dvals = np.arange(-n, n + 1)
    u = (svals[:, None] + (xa + xb)[None, :]) * h
    w = (dvals[:, None] + (xa - xb)[None, :]) * h
    with np.errstate(divide="ignore", invalid="ignore"):
        lu = np.where(u > 1.0, k * (np.log(u - 1.0) + np.log(u + 1.0)), -np.inf) + lw[None, :]
        lv = np.where(np.abs(w) < 1.0, k * (np.log1p(-w) + np.log1p(w)), -np.inf)
        lp0, lp2 = lu, lu + 2.0 * np.log(u)
        lq0, lq2 = lv, lv + 2.0 * np.log(np.abs(w))
        alpha = np.max(np.maximum(lp0, lp2), axis=1, keepdims=True)
        beta = np.max(np.maximum(lq0, lq2), axis=1, keepdims=True)
        alpha = np.where(np.isfinite(alpha), alpha, 0.0)
        beta = np.where(np.isfinite(beta), beta, 0.0)
        big = np.exp(lp2 - alpha) @ np.exp(lq0 - beta).T
        small = np.exp(lp0 - alpha) @ np.exp(lq2 - beta).T
        diff = big - small
        log_const = math.log(m - 1) + log_unit_ball_volume(m - 1) - (m - 3) * math.log(2.0)
        lg = np.log(diff) + alpha + beta.T + log_const + 2.0 * math.log(h) - math.log(4.0)
    # band: out[i, e] = cell(s = 2i + e - n, d = n - e)
    i = np.arange(rows)[:, None]
    e = np.arange(2 * n + 1)[None, :]
    s_idx = np.clip(2 * i + e - n, 0, svals.size - 1)
    d_idx = 2 * n - e
    band = lg[s_idx, d_idx]
    # cancellation guard: the difference must keep ~1e-13 of its two terms
    good = (diff > 1e-3 * big) & (big > 1e-250) & np.isfinite(big)
    return band, good[s_idx, d_idx]


def _log_cells_m1(rows: int, n: int) -> np.ndarray:
    """Exact ``m = 1`` kernel: ``log(1/n)`` at ``(i, i+n)`` and ``(i, i-n)`` or ``(i, n-1-i)``."""
    out = np.full((rows, 2 * n + 1), -np.inf)
    i = np.arange(rows)
    out[:, 2 * n] = -math.log(n)
    reflect = np.where(i >= n, 0, 2 * n - 1 - 2 * i)
    out[i, reflect] = -math.log(n)
    return out


#: above this dimension :func:`log_cell_volumes` defaults to ``method="beta"``
BETA_MIN_DIM = 32


def _tau_rule(panels: int, order: int):
    """Composite Gauss-Legendre rule on ``[0, 1]`` with dyadic panels ``[2^-(k+1), 2^-k]``
    (and ``[0, 2^-panels]``): resolves integrands that vary on a ``log tau`` scale near 0."""
    x, wq = _plain_rule(order)
    edges = np.concatenate([[0.0], 2.0 ** -np.arange(panels, -1, -1.0)])
    lo, width = edges[:-1], np.diff(edges)
    return ((lo[:, None] + width[:, None] * x[None, :]).ravel(),
            (width[:, None] * wq[None, :]).ravel())


def _log_cells_beta(m: int, n: int, rows: int, max_panels: int = 400, order: int = 16,
                    block: int = 8, start: int = 0) -> np.ndarray:
    r"""Banded ``log w_ij`` through the conditional law of ``theta = |x - e1|`` given ``|x| = rho``.

    For ``x`` uniform on the sphere of radius ``rho``, ``t = x_1 / rho`` has density
    ``~ (1 - t^2)^((m-3)/2)``, i.e. ``(1 + t)/2 ~ Beta(a, a)``, ``a = (m-1)/2``; so
    ``P(theta <= c | rho) = I_y(a, a)`` (regularised incomplete beta) with
    ``y = (c - 1 + rho)(c + 1 - rho) / (4 rho)`` and ``1 - y = (1 + rho - c)(1 + rho + c) /
    (4 rho)`` (both clipped to ``[0, 1]``).  With ``rho^m`` uniform on the shell (the
    radial law of the uniform distribution on ``J_i``),
    ``w_ij / v_i = E_tau[I_{y_{j+1}} - I_{y_j}]``, ``rho = ((ih)^m + tau (((i+1)h)^m -
    (ih)^m))^(1/m)``: a bounded integrand whose kinks (``y`` reaching 0 or 1) sit at the
    shell boundaries only (the degeneracy lines run through cell corners, ``1 = n/n``).
    ``tau`` is integrated by :func:`_tau_rule` (large ``m``: the in-shell variation is on a
    ``log tau`` scale) with dyadic panels down to ``tau ~ (ih / ((i+1)h))^m`` (below it
    ``rho`` sits at the inner edge of the shell; at most ``max_panels``, i.e. the innermost
    shells -- which carry no mass at large ``m`` -- leave ``2^-max_panels`` of their mass to
    one coarse panel).  The differences use ``I`` or its complement ``I_{1-y}`` on the
    side away from the median (no cancellation in either tail).  Row sums telescope:
    ``sum_j w_ij = v_i`` holds to round-off by construction, so accuracy is checked
    against the two-GEMM path (m <= 31) and mpmath (tests).  Cells below ~1e-300 of their
    row underflow to ``-inf`` (dropped; relevant only for ``m`` in the thousands).
    Rows ``start..rows-1`` only (``out[i - start]``; rows are independent).
    """
    from scipy.special import betainc

    a = 0.5 * (m - 1)
    h = 1.0 / n
    lv = log_shell_volumes(m, n, rows)
    out = np.empty((rows - start, 2 * n + 1))
    for first in range(start, rows, block):
        i = np.arange(first, min(first + block, rows), dtype=np.float64)
        # rho = b (tau + (1 - tau) (lo/b)^m)^(1/m), computed in logs
        with np.errstate(divide="ignore"):
            lratio = m * (np.log(i) - np.log1p(i))  # log (lo/b)^m, -inf for i = 0
        panels = int(min(max_panels, math.ceil(-max(lratio[0], -1e4) / math.log(2.0)) + 4))
        tau, wt = _tau_rule(panels, order)
        inner = np.logaddexp(np.log(tau)[None, :], np.log1p(-tau)[None, :] + lratio[:, None])
        rho = ((i + 1.0) * h)[:, None] * np.exp(inner / m)  # (B, T)
        c = np.maximum((i[:, None] - n + np.arange(2 * n + 2)[None, :]) * h, 0.0)  # (B, E)
        r_, c_ = rho[:, :, None], c[:, None, :]
        y = np.clip((c_ - 1.0 + r_) * (c_ + 1.0 - r_) / (4.0 * r_), 0.0, 1.0)
        yb = np.clip((1.0 + r_ - c_) * (1.0 + r_ + c_) / (4.0 * r_), 0.0, 1.0)
        low = y[..., :-1] < 0.5  # lower edge below the median: difference of I, else of 1 - I
        g, gb = betainc(a, a, y), betainc(a, a, yb)
        diff = np.where(low, g[..., 1:] - g[..., :-1], gb[..., :-1] - gb[..., 1:])
        cell = np.einsum("btd,t->bd", np.maximum(diff, 0.0), wt)
        with np.errstate(divide="ignore"):
            out[i.astype(np.int64) - start] = np.log(cell) + lv[i.astype(np.int64)][:, None]
    return out


@functools.lru_cache(maxsize=16)
def _row_fn(m, n, order, special_order):
    return jax.jit(jax.vmap(lambda i: _log_cell_row(i, m, n, order, special_order)))


@functools.lru_cache(maxsize=16)
def _special_fn(m, n, special_order):
    return jax.jit(jax.vmap(lambda i: _special_cells(i, m, n, special_order)))


@functools.lru_cache(maxsize=16)
def _cells_fn(m, n, order):
    return jax.jit(lambda i, j: _log_cells(i, j, m, n, _plain_rule(order)))


def log_cell_volumes(m: int, n: int, rows: int, order: int = DEFAULT_ORDER,
                     special_order: int = SPECIAL_ORDER, block: int = 256,
                     method: str | None = None) -> np.ndarray:
    r"""Banded ``log w_ij = log(A_m gamma_ij)``: ``out[i, d]``, ``j = i + d - n``, ``d = 0..2n``.

    Entries with ``j < 0`` or outside the triangle inequality are ``-inf``.
    ``w_ij`` is the volume of ``{|x| in J_i, |x - e1| in J_j}`` (measure
    identity; ``m = 1`` uses the exact 1-D kernel).  Host function.

    ``method="gemm"`` (default): the regular cells (``i + j >= n + 1``,
    ``|i - j| <= n - 2``: no degeneracy line meets them) by
    :func:`_log_plain_cells_gemm` (two matrix products; cells where those lose
    accuracy are redone elementwise), the <= 6 special cells per row by
    :func:`_special_cells`, all other cells are empty.  ``method="elementwise"``: the
    same rules cell by cell (jitted in blocks of ``block`` rows), kept as a reference.
    ``method="beta"`` (:func:`_log_cells_beta`; the default, ``method=None``, picks it
    for ``m >= BETA_MIN_DIM``, where the fixed-order rules lose accuracy).
    """
    if m < 1 or n < 1 or rows < 1:
        raise ValueError("need m >= 1, n >= 1, rows >= 1")
    if m == 1:
        return _log_cells_m1(rows, n)
    if method is None:
        method = "beta" if m >= BETA_MIN_DIM else "gemm"
    if method == "beta":
        return _log_cells_beta(m, n, rows)
    if order is None:
        order = min(8 + m // 15, 16)
    if method == "elementwise":
        fn = _row_fn(m, n, order, special_order)
        nblocks = -(-rows // block)
        idx = np.arange(nblocks * block, dtype=np.float64).reshape(nblocks, block)
        out = [np.asarray(fn(jnp.asarray(b))) for b in idx]
        return np.concatenate(out, axis=0)[:rows]
    if method != "gemm":
        raise ValueError(f"unknown method {method!r}")
    band, good = _log_plain_cells_gemm(m, n, rows, order)
    i = np.arange(rows)[:, None]
    e = np.arange(2 * n + 1)[None, :]
    j = i + e - n
    regular = (i + j >= n + 1) & (np.abs(i - j) <= n - 2) & (j >= 0)
    out = np.where(regular, band, -np.inf)
    redo = regular & ~good
    if redo.any():
        ri, rj = np.nonzero(redo)
        size = 1 << int(np.ceil(np.log2(ri.size)))  # padded: one compilation serves many sizes
        ii = np.zeros(size)
        jj = np.zeros(size)
        ii[: ri.size], jj[: ri.size] = ri, (ri + rj - n)
        vals = np.asarray(_cells_fn(m, n, order)(jnp.asarray(ii), jnp.asarray(jj)))
        out[ri, rj] = vals[: ri.size]
    size = max(block, 1 << int(np.ceil(np.log2(rows))))
    js, vals = (np.asarray(v)[:rows] for v in
                _special_fn(m, n, special_order)(jnp.arange(size, dtype=jnp.float64)))
    rows_idx = np.arange(rows)
    for t in range(6):  # touches first, cuts override (as in _log_cell_row)
        dd = (js[:, t] - rows_idx + n).astype(np.int64)
        ok = (dd >= 0) & (dd <= 2 * n) & (js[:, t] >= 0)
        out[rows_idx[ok], dd[ok]] = vals[ok, t]
    return out


def log_gamma(m: int, n: int, rows: int, order: int = DEFAULT_ORDER) -> np.ndarray:
    r"""Banded ``log gamma_{i,j,n}`` (eq. 23), ``m >= 2``: ``log_cell_volumes - log A_m``."""
    return log_cell_volumes(m, n, rows, order) - log_A(m)


def log_tail_sum(log_terms_fn: Callable, log_r: float, start: int, log_rel_tol: float = -80.0,
                 chunk: int = 4096, max_terms: int = 10**8) -> tuple[float, int]:
    r"""``log sum_{t >= 1} r^t a_{start + t}``, summed adaptively (``log a_i = log_terms_fn(i)``).

    Terms ``r^t (start+t)^(m-1)`` grow until ``start + t ~ (m-1)/(-ln r)`` and
    then decay geometrically: summation stops once past the peak a whole
    chunk lies below ``exp(log_rel_tol)`` times the running sum.  Returns the
    log-sum and the number of terms used.
    """
    total = -np.inf
    t0 = 1
    while t0 < max_terms:
        t = np.arange(t0, t0 + chunk)
        lt = t * log_r + log_terms_fn(start + t)
        from scipy.special import logsumexp as np_lse

        total = np.logaddexp(total, np_lse(lt))
        if lt[-1] < lt[0] and lt.max() - total < log_rel_tol:
            return float(total), int(t0 + chunk - 1)
        t0 += chunk
    raise ValueError("geometric tail did not converge (r too close to 1?)")


def tail_rows(m: int, n: int, N: int, r: float, log_rel_tol: float = -32.0) -> int:
    r"""Rows ``M``: tail shells past ``M - n`` have mass ``< e^log_rel_tol`` of shell ``N``'s each.

    Mass of shell ``N + t`` relative to shell ``N``: ``r^t v_{N+t} / v_N``.  The
    objective is summed explicitly over rows ``< M`` (plus ``n`` for the band);
    what is left out is bounded by that mass times ``n |log r|``.
    """
    log_r = math.log(r)
    lv = lambda i: _log_diff_powers(i, m)  # noqa: E731
    base = lv(np.array([N]))[0]
    _, terms = log_tail_sum(lambda i: lv(i) - base, log_r, N, log_rel_tol, chunk=256)
    # find the exact cut: first t past the peak with log term < tol
    t = np.arange(1, terms + 1)
    lt = t * log_r + lv(N + t) - base
    peak = int(np.argmax(lt))
    below = np.nonzero((np.arange(t.size) > peak) & (lt < log_rel_tol))[0]
    cut = int(t[below[0]]) if below.size else int(t[-1])
    # + n: the band partners (|j - i| <= n) of every row that carries mass must be present too
    return N + 1 + cut + n


class Coefficients(NamedTuple):
    """Everything the spherical KL programme needs, in logs (host NumPy arrays).

    Attributes:
      m, n: dimension and shells per unit radius.
      rows: ``M``; rows ``0..M-1`` of the banded kernel.
      log_w: ``(M, 2n+1)`` ``log(A_m gamma_ij)`` (cell volumes), ``j = i + d - n``.
      log_v: ``(M,)`` ``log v_i``.
      log_c: ``(M,)`` ``log c_i``.
      cost: description of the cost.
    """

    m: int
    n: int
    rows: int
    log_w: np.ndarray
    log_v: np.ndarray
    log_c: np.ndarray
    cost: str
    log_c_fn: Callable

    @property
    def log_kernel(self) -> np.ndarray:
        """Row-normalised kernel ``log(w_ij / v_i)`` (each row sums to 1)."""
        return self.log_w - self.log_v[:, None]


def coefficients(m: int, n: int, rows: int, power: float = 2.0,
                 radial_cost: Callable | None = None, order: int = DEFAULT_ORDER) -> Coefficients:
    """Build :class:`Coefficients` for ``rows`` shells (cost ``|x|^power`` or ``radial_cost``)."""
    log_w = log_cell_volumes(m, n, rows, order)
    log_v = log_shell_volumes(m, n, rows)

    def log_c_fn(i):
        i = np.asarray(i)
        flat = i.ravel()
        if radial_cost is None:
            a = float(power)
            val = (math.log(m) + log_unit_ball_volume(m) - math.log(m + a)
                   - (m + a) * math.log(n) + _log_diff_powers(flat, m + a))
        else:
            val = _log_cost_at(m, n, flat, radial_cost)
        return val.reshape(i.shape)

    log_c = log_c_fn(np.arange(rows))
    desc = f"|x|^{power:g}" if radial_cost is None else getattr(radial_cost, "__name__", "custom")
    return Coefficients(m, n, rows, log_w, log_v, log_c, desc, log_c_fn)


def _log_cost_at(m, n, i, radial_cost, order=16):
    x, wq = np.polynomial.legendre.leggauss(order)
    rho = (i[:, None] + 0.5 * (x[None, :] + 1.0)) / n
    with np.errstate(divide="ignore"):
        lc = np.log(np.asarray(radial_cost(rho), np.float64))
    from scipy.special import logsumexp as np_lse

    terms = lc + (m - 1) * np.log(rho) + np.log(0.5 * wq / n)[None, :]
    return math.log(m) + log_unit_ball_volume(m) + np_lse(terms, axis=1)


__all__ = [
    "Coefficients",
    "coefficients",
    "log_A",
    "log_cell_volumes",
    "log_cost_coefficients",
    "log_gamma",
    "log_shell_volumes",
    "log_tail_sum",
    "log_unit_ball_volume",
    "tail_rows",
]
