r"""Cell volumes of the spherical KL programme by Gauss-Legendre quadrature (``m <= 31``).

The cell ``{|x| in J_i, |x - e1| in J_j}`` has volume ``w_ij = A_m gamma_ij``
with ``gamma_ij = int_{J_i} int_{J_j} rho theta H(1, rho, theta)^(m-3) d theta d rho``
(eqs. (22)-(23) of spherical-kl-optimal-mechanisms; the measure identity
``dx = A_m rho theta H^(m-3) d rho d theta``, ``rho = |x|``, ``theta = |x - e1|``).

With ``u = rho + theta``, ``w = rho - theta``,
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
The GEMM path agrees with the cell-by-cell path (``method="elementwise"``) to
~1e-14 in log.  Accuracy limit: the plain rule's order is
``min(8 + m // 15, 16)``; row sums ``sum_j w_ij = v_i`` hold to ~1e-13 for
m <= 31 but only to ~5e-6 at (m, n) = (100, 20) and ~0.4 at (1000, 10)
(``H^(m-3)`` too peaked for 16 nodes per cell; both paths alike): larger ``m``
use :mod:`dpjax.spherical.cells_beta`.  Timings: ``bench/bench_spherical.py``.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp

from dpjax.numerics.constants import LOG_2
from dpjax.spherical.shells import log_unit_ball_volume

#: order of the endpoint-smoothed rule on the cells touched by a degeneracy line
SPECIAL_ORDER = 24


def unit_gauss_legendre(order: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Gauss-Legendre nodes and weights on ``[0, 1]``: ``x = (t + 1) / 2``, ``w = w_t / 2``.

    Args:
      order: number of nodes.
    """
    t, wt = np.polynomial.legendre.leggauss(order)
    return 0.5 * (t + 1.0), 0.5 * wt


def _log_cells(i, j, m: int, n: int, rule):
    """``log(A_m gamma_ij)`` for arrays ``i, j`` with the tensor 1-D ``rule`` (nodes, weights)."""
    x, wx = (jnp.asarray(a) for a in rule)
    h = 1.0 / n
    rho = (i[..., None] + x) * h  # (..., Q)
    # clip theta to [|1 - rho|, 1 + rho]
    a = jnp.maximum((j * h)[..., None], jnp.abs(1.0 - rho))
    b = jnp.minimum(((j + 1.0) * h)[..., None], 1.0 + rho)
    valid = (b > a) & (j[..., None] >= 0)
    length = jnp.where(valid, b - a, 1.0)
    theta = a[..., None] + length[..., None] * x  # (..., Q, Q)
    log_f = _log_integrand(rho[..., None], theta, m)  # (..., Q, Q)
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
    log_const = math.log(m - 1) + log_unit_ball_volume(m - 1) - (m - 3) * LOG_2
    val = log_const + k * log16h2 + jnp.log(safe(rho)) + jnp.log(safe(theta))
    return jnp.where(pos, val, -jnp.inf)


def _touch_rule(order: int):
    """Unit-square rule for an integrand ~ (X + Y)^k at the corner (0, 0): two Duffy triangles
    (X = xi, Y = xi eta and swapped), ``xi = tau^2``; weights include all Jacobians."""
    t, wt = unit_gauss_legendre(order)
    tau, eta = np.meshgrid(t, t, indexing="ij")
    wgt = np.outer(wt, wt) * 2.0 * tau * tau**2  # d xi = 2 tau d tau, Duffy Jacobian xi
    xi = tau**2
    x = np.concatenate([xi.ravel(), (xi * eta).ravel()])
    y = np.concatenate([(xi * eta).ravel(), xi.ravel()])
    return x, y, np.concatenate([wgt.ravel(), wgt.ravel()])


def _cut_rule(order: int):
    """Rule on the triangle ``X + Y <= 1`` for an integrand ~ (1 - X - Y)^k:
    ``X = s (1 - t), Y = s t``, ``s = 1 - (1 - sigma)^2``."""
    t, wt = unit_gauss_legendre(order)
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
    row = _log_cells(jnp.full_like(d, i), i + d - n, m, n, unit_gauss_legendre(order))
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
    x, wq = unit_gauss_legendre(order)
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
        log_const = math.log(m - 1) + log_unit_ball_volume(m - 1) - (m - 3) * LOG_2
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


@functools.lru_cache(maxsize=16)
def _row_fn(m, n, order, special_order):
    return jax.jit(jax.vmap(lambda i: _log_cell_row(i, m, n, order, special_order)))


@functools.lru_cache(maxsize=16)
def _special_fn(m, n, special_order):
    return jax.jit(jax.vmap(lambda i: _special_cells(i, m, n, special_order)))


@functools.lru_cache(maxsize=16)
def _cells_fn(m, n, order):
    return jax.jit(lambda i, j: _log_cells(i, j, m, n, unit_gauss_legendre(order)))


def log_cell_volumes_quadrature(m: int, n: int, rows: int, order: int | None = None,
                                special_order: int = SPECIAL_ORDER, block: int = 256,
                                method: str = "gemm") -> np.ndarray:
    r"""Banded ``log w_ij = log(A_m gamma_ij)`` by Gauss-Legendre quadrature (module docstring).

    ``method="gemm"``: the regular cells (``i + j >= n + 1``,
    ``|i - j| <= n - 2``: no degeneracy line meets them) by
    :func:`_log_plain_cells_gemm` (two matrix products; cells where those lose
    accuracy are redone elementwise), the <= 6 special cells per row by
    :func:`_special_cells`, all other cells are empty.  ``method="elementwise"``:
    the same rules cell by cell (jitted in blocks of ``block`` rows), kept as a
    reference.

    Args:
      m: dimension, ``>= 2``.
      n: shells per unit radius.
      rows: shells ``0..rows-1``.
      order: nodes per dimension of each regular cell (``None``: ``min(8 + m // 15, 16)``).
      special_order: order of the rule on the special cells.
      block: rows per jitted block (``"elementwise"``; also the least padded size).
      method: ``"gemm"`` or ``"elementwise"``.

    Returns:
      ``(rows, 2n+1)``: ``out[i, d]`` for ``j = i + d - n`` (``-inf`` where empty).
    """
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


__all__ = ["SPECIAL_ORDER", "log_cell_volumes_quadrature", "unit_gauss_legendre"]
