r"""Cell volumes of the spherical KL programme at large ``m``: the incomplete-beta path.

The cell ``{|x| in J_i, |x - e1| in J_j}`` has volume ``w_ij = A_m gamma_ij``
(eq. (23) of spherical-kl-optimal-mechanisms and the measure identity
``dx = A_m rho theta H^(m-3) d rho d theta``).  At large ``m`` the integrand
``H^(m-3)`` is too peaked for a fixed polynomial rule, so
:func:`log_cell_volumes_beta` integrates instead the conditional law of
``|x - e1|`` given ``|x|`` -- a regularised incomplete beta
``I_y((m-1)/2, (m-1)/2)`` -- against the shell's radial law in the variable
``rho^m`` (dyadic composite Gauss): neither ``H^(m-3)`` nor ``rho^(m-1)`` is
integrated by a polynomial rule.  Agrees with the Gauss-Legendre path to
<= 8e-14 in log at m = 3, 10, 31; at (m, n) = (100, 20) with 2-D mpmath
quadrature to ~1e-13, row sums to 1e-14 (by construction: they telescope),
symmetry ``w_ij = w_ji`` to 1e-12 (5e-12 at m = 1000); Monte Carlo row kernel
at m = 1000 (tests/spherical/test_scale.py).  Host function (NumPy, SciPy).
"""

from __future__ import annotations

import functools
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dpjax.numerics.constants import LOG_2
from dpjax.numerics.lazy_scipy import special
from dpjax.spherical.cells_quadrature import unit_gauss_legendre
from dpjax.spherical.shells import log_shell_volume_at

#: from this dimension on, :func:`dpjax.spherical.coefficients.log_cell_volumes` defaults to
#: the incomplete-beta path (the fixed-order Gauss rules lose accuracy)
BETA_MIN_DIM = 32
#: most Gauss nodes of the one-panel ``tau`` rule on thin shells (truncated band); fewer where
#: the integrand is smooth enough (:func:`thin_nodes`)
THIN_ORDER = 8
#: model error (relative) that :func:`thin_nodes` allows a thin-shell cell: calibrated so that
#: the chosen rule agrees with a 20-node rule to the float64 floor of the betainc differences
#: (~1e-12 in log, tests/spherical/test_geometric.py)
THIN_MODEL_ERROR = 1e-17
#: thin shells: ``log (i / (i + 1))^m`` at least this (``rho^m`` nearly linear across the shell)
THIN_LOG_RATIO = -0.5
#: rows per thread task of :func:`log_cell_volumes_beta` (SciPy's ``betainc`` releases the GIL)
ROWS_PER_TASK = 256


def thin_nodes(m: int, n: int, b: int, i: int, most: int = THIN_ORDER) -> int:
    r"""Gauss nodes for a thin shell's ``tau`` integral: the fewest in ``4..most`` that suffice.

    Across one shell the integrand ``I_{y_{j+1}} - I_{y_j}`` changes like ``e^{s tau}`` with
    ``s = m (b + 1) / n^2 + m / i``: the kernel's log-slope ``m |theta - rho|`` at the band's
    edge times the shell width ``1/n``, plus the curvature of ``rho^m`` across the shell
    (``log (i/(i+1))^m ~ -m/i``).  The ``k``-node Gauss-Legendre error for ``e^{s tau}`` on
    ``[0, 1]`` is ``~ s^{2k} (k!)^4 / ((2k+1) ((2k)!)^3)``; the fewest ``k`` with this below
    ``THIN_MODEL_ERROR`` is used (at the geometric design's shells, ``s ~ 0.7``: six nodes).

    Args:
      m: dimension.
      n: shells per unit radius.
      b: band half-width.
      i: the first row of the block (its smallest ``i``: the largest ``m / i``).
      most: the largest rule.

    Example:
      >>> thin_nodes(10000, 1826, 211, 169622), thin_nodes(100, 40, 30, 1000)
      (6, 8)
    """
    return _nodes_for(m * (b + 1.0) / (n * n) + m / max(i, 1), most)


@functools.lru_cache(maxsize=8)
def _largest_slopes(most: int) -> np.ndarray:
    """``s_k`` for ``k = 4..most - 1``: the largest ``s`` whose ``k``-node Gauss error model
    ``s^{2k} (k!)^4 / ((2k+1) ((2k)!)^3)`` (:func:`thin_nodes`) is ``THIN_MODEL_ERROR``."""
    k = np.arange(4, most)
    log_c = np.array([4 * math.lgamma(j + 1) - math.log(2 * j + 1) - 3 * math.lgamma(2 * j + 1)
                      for j in k])
    return np.exp((math.log(THIN_MODEL_ERROR) - log_c) / (2 * k))


def _nodes_for(s, most: int, beyond: int | None = None):
    """The fewest ``k`` in ``4..most - 1`` whose Gauss error model for ``e^{s tau}``
    (:func:`thin_nodes`) is below ``THIN_MODEL_ERROR``; else ``most`` (or ``beyond``)."""
    slopes = _largest_slopes(most)
    k = 4 + np.searchsorted(slopes, np.asarray(s, float), side="left")
    k = np.where(k >= most, most if beyond is None else beyond, k)
    return int(k) if np.ndim(k) == 0 else k


def _thin_columns(m: int, n: int, i: int, lo: int, width: int, most: int) -> tuple[int, np.ndarray]:
    r"""Nodes of the one-panel rule of the thin shell ``i`` and the cells it fits.

    The cell of partner ``j = i + d`` is the difference of two edge functions ``I_y``; across
    the shell each changes by the factor ``e^{s_e}``, ``s_e = |log I_z((i+1)h) - log I_z(ih)|``
    on its tail side ``z = min(y, 1 - y)`` (infinite where ``z`` reaches 0 at a boundary of the
    shell: the partners ``|d| >= n - 1``, whose integrand starts like ``tau^a``).  A cell takes
    ``s = max(s_e, s_{e+1}, m (|d| + 1) / n^2) + m / i`` (the kernel's log-slope at its distance
    and the curvature of ``rho^m``, as in :func:`thin_nodes`) and the one-panel rule where
    :func:`thin_nodes`' error model is met with at most ``most`` nodes, else the dyadic rule.

    Returns:
      ``(nodes, fits)``: the nodes (the most any fitting cell needs) and a boolean per cell.
    """
    a, h = 0.5 * (m - 1), 1.0 / n
    rho = np.array([[i * h], [(i + 1.0) * h]])
    c = np.maximum((i + lo + np.arange(width + 1)[None, :]) * h, 0.0)
    y = np.clip((c - 1.0 + rho) * (c + 1.0 - rho) / (4.0 * rho), 0.0, 1.0)
    tail = special.betainc(a, a, np.minimum(y, 1.0 - y))
    with np.errstate(divide="ignore", invalid="ignore"):
        change = np.abs(np.log(tail[1]) - np.log(tail[0]))
    change = np.where(np.all(tail == tail[:1], axis=0), 0.0, change)  # a constant edge
    change = np.where(np.isnan(change), np.inf, change)
    d = lo + np.arange(width)
    s = np.maximum(np.maximum(change[:-1], change[1:]), m * (np.abs(d) + 1.0) / (n * n))
    need = _nodes_for(s + m / max(i, 1), most + 1)
    fits = need <= most
    return (int(np.max(need[fits])) if np.any(fits) else 0), fits


def _workers() -> int:
    """Threads for the cell rows: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _tau_rule(panels: int, order: int):
    """Composite Gauss-Legendre rule on ``[0, 1]`` with dyadic panels ``[2^-(k+1), 2^-k]``
    (and ``[0, 2^-panels]``): resolves integrands that vary on a ``log tau`` scale near 0."""
    x, wq = unit_gauss_legendre(order)
    edges = np.concatenate([[0.0], 2.0 ** -np.arange(panels, -1, -1.0)])
    lo, width = edges[:-1], np.diff(edges)
    return ((lo[:, None] + width[:, None] * x[None, :]).ravel(),
            (width[:, None] * wq[None, :]).ravel())


def log_cell_volumes_beta(m: int, n: int, rows: int, max_panels: int = 400, order: int = 16,
                          block: int = 8, start: int = 0, half_width: int | None = None,
                          thin_order: int = THIN_ORDER, upper: bool = False) -> np.ndarray:
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
    Rows ``start..rows-1`` only (``out[i - start]``; rows are independent).  A band
    ``half_width = b < n`` keeps the partners ``|j - i| <= b`` only (the rest of the row,
    where ``theta - rho`` is many kernel widths ``1/sqrt(m)`` away, is left out: ``-inf``,
    i.e. accounted at loss ``+inf``).  Thin shells (``(i/(i+1))^m >= e^THIN_LOG_RATIO``:
    ``rho^m`` nearly linear across the shell) use one Gauss panel of at most ``thin_order``
    nodes for the cells whose edge functions change little across the shell
    (:func:`_thin_columns`, checked at the first and last row of each task of
    ``ROWS_PER_TASK`` rows), and the dyadic rule for the others: the partners
    ``|j - i| >= n - 1``, whose edge reaches ``y = 0`` or ``1`` at a boundary of the shell,
    and those near them.  Row blocks run on a thread per CPU (SciPy's ``betainc`` releases
    the GIL; the rows are independent).

    Args:
      m: dimension, ``>= 2`` (the default path from ``BETA_MIN_DIM = 32`` on).
      n: shells per unit radius.
      rows: shells ``0..rows-1``.
      max_panels: dyadic panels of the ``tau`` rule at most.
      order: Gauss-Legendre nodes per panel.
      block: rows evaluated together.
      start: first row computed.
      half_width: band half-width ``b <= n`` (default ``n``: the whole band).
      thin_order: most Gauss nodes of the one-panel rule on thin shells.
      upper: compute the partners ``j >= i`` only (``(rows - start, b+1)``, ``j = i + d``);
        :func:`log_cell_volumes_beta_symmetric` fills the rest by ``w_ij = w_ji``.

    Returns:
      ``(rows - start, 2b+1)`` banded ``log w_ij`` (``-inf`` where empty), ``j = i + d - b``.
    """
    b = n if half_width is None else int(half_width)
    if not 1 <= b <= n:
        raise ValueError(f"half_width must be an integer in [1, n = {n}], got {half_width!r}")

    a = 0.5 * (m - 1)
    h = 1.0 / n
    lv = log_shell_volume_at(m, n, np.arange(start, rows))  # rows start.. only
    lo, width = (0, b + 1) if upper else (-b, 2 * b + 1)
    out = np.empty((rows - start, width))

    def sums(i, lratio, rule, c):
        """``v_i^-1 w`` of the cells between consecutive edges ``c`` (rows x edges) of the
        rows ``i``: the ``tau`` rule ``(nodes, weights)`` on ``I_{y(c_{k+1})} - I_{y(c_k)}``."""
        tau, wt = rule
        inner = np.logaddexp(np.log(tau)[None, :], np.log1p(-tau)[None, :] + lratio[:, None])
        rho = ((i + 1.0) * h)[:, None] * np.exp(inner / m)  # (B, T)
        r_, c_ = rho[:, :, None], c[:, None, :]
        y = np.clip((c_ - 1.0 + r_) * (c_ + 1.0 - r_) / (4.0 * r_), 0.0, 1.0)
        yb = np.clip((1.0 + r_ - c_) * (1.0 + r_ + c_) / (4.0 * r_), 0.0, 1.0)
        low = y[..., :-1] < 0.5  # lower edge below the median: difference of I, else of 1 - I
        # one incomplete beta per point: I_y where y < 1/2, else the complement side I_{1-y}
        side = y < 0.5
        val = special.betainc(a, a, np.where(side, y, yb))
        g, gb = np.where(side, val, 1.0 - val), np.where(side, 1.0 - val, val)
        diff = np.where(low, g[..., 1:] - g[..., :-1], gb[..., :-1] - gb[..., 1:])
        return np.einsum("btd,t->bd", np.maximum(diff, 0.0), wt)

    def fill(first: int, rule=None) -> None:
        i = np.arange(first, min(first + block, rows), dtype=np.float64)
        # rho = b (tau + (1 - tau) (lo/b)^m)^(1/m), computed in logs
        with np.errstate(divide="ignore"):
            lratio = m * (np.log(i) - np.log1p(i))  # log (lo/b)^m, -inf for i = 0
        panels = int(min(max_panels, math.ceil(-max(lratio[0], -1e4) / LOG_2) + 4))
        dyadic = _tau_rule(panels, order)
        c = np.maximum((i[:, None] + lo + np.arange(width + 1)[None, :]) * h, 0.0)  # (B, E)
        thin = lratio[0] >= THIN_LOG_RATIO
        nodes, fits = ((rule or one_panel(int(i[0]), int(i[-1]))) if thin
                       else (0, np.zeros(width, bool)))
        if nodes:  # thin shells: one panel where it fits, the dyadic rule on the other cells
            cell = np.empty((i.size, width))
            cell[:, fits] = sums(i, lratio, unit_gauss_legendre(nodes), c)[:, fits]
            edge = np.diff(np.concatenate([[0], (~fits).astype(np.int8), [0]]))
            for start_, end_ in zip(np.flatnonzero(edge == 1), np.flatnonzero(edge == -1),
                                    strict=True):  # runs of cells, one call each
                cell[:, start_:end_] = sums(i, lratio, dyadic, c[:, start_: end_ + 1])
        else:
            cell = sums(i, lratio, dyadic, c)
        k = i.astype(np.int64) - start
        with np.errstate(divide="ignore"):
            out[k] = np.log(cell) + lv[k][:, None]

    def one_panel(first: int, last: int) -> tuple[int, np.ndarray]:
        """:func:`_thin_columns` of the rows ``first..last``: checked at both ends (the most
        nodes, the cells that fit at both)."""
        k0, fit0 = _thin_columns(m, n, first, lo, width, thin_order)
        k1, fit1 = _thin_columns(m, n, last, lo, width, thin_order)
        fits = fit0 & fit1
        return (max(k0, k1) if np.any(fits) else 0), fits

    def fill_task(task_start: int) -> None:
        end = min(task_start + ROWS_PER_TASK, rows)
        # one check per task of thin rows (the rule changes slowly with the radius)
        rule = (one_panel(task_start, end - 1)
                if task_start and m * math.log(task_start / (task_start + 1.0)) >= THIN_LOG_RATIO
                else None)
        for first in range(task_start, end, block):
            fill(first, rule)

    tasks = range(start, rows, ROWS_PER_TASK)
    workers = min(_workers(), len(tasks))
    if workers <= 1:
        for task_start in tasks:
            fill_task(task_start)
    else:  # disjoint rows of ``out`` per task; list() re-raises a worker's error
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(fill_task, tasks))
    return out


def log_cell_volumes_beta_symmetric(m: int, n: int, rows: int, start: int = 0,
                                    half_width: int | None = None) -> np.ndarray:
    r""":func:`log_cell_volumes_beta` at half the cost: ``j >= i`` computed, ``w_ij = w_ji``.

    The cell volume is symmetric (measure identity: ``{|x| in J_i, |x - e1| in J_j}`` is the
    mirror image of ``{|x| in J_j, |x - e1| in J_i}`` under ``x -> e1 - x``), so the partners
    ``j = i - k`` of row ``i`` are row ``i - k``'s partners ``i``; rows from ``start - b`` are
    computed for that.

    Args:
      m: dimension, ``>= 2``.
      n: shells per unit radius.
      rows: shells ``0..rows-1``.
      start: first row returned.
      half_width: band half-width ``b <= n`` (default ``n``).

    Returns:
      ``(rows - start, 2b+1)`` banded ``log w_ij``, ``j = i + d - b`` (as
      :func:`log_cell_volumes_beta`).
    """
    b = n if half_width is None else int(half_width)
    s0 = max(start - b, 0)
    up = log_cell_volumes_beta(m, n, rows, start=s0, half_width=b, upper=True)
    out = np.full((rows - start, 2 * b + 1), -np.inf)
    out[:, b:] = up[start - s0:]
    i = np.arange(start, rows)
    for k in range(1, b + 1):
        src = i - k
        ok = src >= s0
        out[ok, b - k] = up[src[ok] - s0, k]
    return out


__all__ = ["BETA_MIN_DIM", "ROWS_PER_TASK", "THIN_LOG_RATIO", "THIN_MODEL_ERROR", "THIN_ORDER",
           "log_cell_volumes_beta", "log_cell_volumes_beta_symmetric", "thin_nodes"]
