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

Where each piece lives: shell volumes and costs in closed form
(:mod:`dpjax.spherical.shells`); cell volumes by Gauss-Legendre quadrature, the
band as two matrix products (:mod:`dpjax.spherical.cells_quadrature`, ``m <= 31``),
or through the incomplete beta function (:mod:`dpjax.spherical.cells_beta`,
``m >= 32``); ``m = 1`` (the 1-D cactus case) has its own exact kernel here;
the geometric tail's sums and the row truncation (:mod:`dpjax.spherical.tails`).
This module assembles them (:func:`log_cell_volumes`, :func:`coefficients`) and
re-exports the public names of those modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from dpjax.spherical.cells_beta import BETA_MIN_DIM, log_cell_volumes_beta
from dpjax.spherical.cells_quadrature import SPECIAL_ORDER, log_cell_volumes_quadrature
from dpjax.spherical.shells import (
    log_A,
    log_cost_coefficients,
    log_diff_powers,
    log_power_cost_at,
    log_radial_cost_at,
    log_shell_volume_at,
    log_shell_volumes,
    log_unit_ball_volume,
)
from dpjax.spherical.tails import log_tail_sum, tail_rows, tail_sums

#: default number of Gauss-Legendre nodes per dimension of each regular cell (``None``: by ``m``)
DEFAULT_ORDER = None


def _log_cells_m1(rows: int, n: int) -> np.ndarray:
    """Exact ``m = 1`` kernel: ``log(1/n)`` at ``(i, i+n)`` and ``(i, i-n)`` or ``(i, n-1-i)``.

    ``J_i``'s two intervals move under ``x -> x + 1`` onto shells ``i + n`` and
    ``|i - n|``-reflected (``i - n`` for ``i >= n``, ``n - 1 - i`` otherwise),
    each with volume ``1 / n``.
    """
    out = np.full((rows, 2 * n + 1), -np.inf)
    i = np.arange(rows)
    out[:, 2 * n] = -math.log(n)
    reflect = np.where(i >= n, 0, 2 * n - 1 - 2 * i)
    out[i, reflect] = -math.log(n)
    return out


def log_cell_volumes(m: int, n: int, rows: int, order: int | None = DEFAULT_ORDER,
                     special_order: int = SPECIAL_ORDER, block: int = 256,
                     method: str | None = None) -> np.ndarray:
    r"""Banded ``log w_ij = log(A_m gamma_ij)`` (eq. (23) of spherical-kl-optimal-mechanisms).

    ``out[i, d]`` for ``j = i + d - n``, ``d = 0..2n``; entries with ``j < 0`` or
    outside the triangle inequality are ``-inf``.  ``w_ij`` is the volume of
    ``{|x| in J_i, |x - e1| in J_j}`` (measure identity; ``m = 1`` uses the exact
    1-D kernel).  Host function.

    Args:
      m: dimension, ``>= 1``.
      n: shells per unit radius.
      rows: shells ``0..rows-1``.
      order: Gauss-Legendre order of the regular cells (quadrature methods).
      special_order: order of the rule on the special cells (quadrature methods).
      block: rows per jitted block (quadrature methods).
      method: ``"gemm"`` or ``"elementwise"``
        (:func:`dpjax.spherical.cells_quadrature.log_cell_volumes_quadrature`),
        ``"beta"`` (:func:`dpjax.spherical.cells_beta.log_cell_volumes_beta`);
        ``None`` picks ``"beta"`` for ``m >= BETA_MIN_DIM`` (where the fixed-order
        rules lose accuracy) and ``"gemm"`` below.

    Raises:
      ValueError: ``m``, ``n`` or ``rows`` below 1, or an unknown method.
    """
    if m < 1 or n < 1 or rows < 1:
        raise ValueError("need m >= 1, n >= 1, rows >= 1")
    if m == 1:
        return _log_cells_m1(rows, n)
    if method is None:
        method = "beta" if m >= BETA_MIN_DIM else "gemm"
    if method == "beta":
        return log_cell_volumes_beta(m, n, rows)
    return log_cell_volumes_quadrature(m, n, rows, order, special_order, block, method)


def log_gamma(m: int, n: int, rows: int, order: int | None = DEFAULT_ORDER) -> np.ndarray:
    r"""Banded ``log gamma_{i,j,n}`` (eq. 23), ``m >= 2``: ``log_cell_volumes - log A_m``.

    Args:
      m: dimension, ``>= 2``.
      n: shells per unit radius.
      rows: shells ``0..rows-1``.
      order: Gauss-Legendre order of the regular cells.
    """
    return log_cell_volumes(m, n, rows, order) - log_A(m)


class Coefficients(NamedTuple):
    """Everything the spherical KL programme needs, in logs (host NumPy arrays).

    Attributes:
      m, n: dimension and shells per unit radius.
      rows: ``M``; rows ``0..M-1`` of the banded kernel.
      log_w: ``(M, 2n+1)`` ``log(A_m gamma_ij)`` (cell volumes), ``j = i + d - n``.
      log_v: ``(M,)`` ``log v_i``.
      log_c: ``(M,)`` ``log c_i``.
      cost: description of the cost.
      log_c_fn: ``i -> log c_i`` at any shell indices (for the tail sums).
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
                 radial_cost: Callable | None = None,
                 order: int | None = DEFAULT_ORDER) -> Coefficients:
    r"""Build :class:`Coefficients` for ``rows`` shells (eqs. 23, 24, 26).

    Args:
      m: dimension.
      n: shells per unit radius.
      rows: shells ``0..rows-1`` (:func:`dpjax.spherical.tails.tail_rows` sizes it).
      power: the cost ``|x|^power`` (used when ``radial_cost`` is ``None``).
      radial_cost: vectorised NumPy radial cost ``c~(rho) >= 0``, or ``None``.
      order: Gauss-Legendre order of the regular cells.
    """
    log_w = log_cell_volumes(m, n, rows, order)
    log_v = log_shell_volumes(m, n, rows)

    def log_c_fn(i):
        i = np.asarray(i)
        flat = i.ravel()
        if radial_cost is None:
            val = log_power_cost_at(m, n, flat, power)
        else:
            val = log_radial_cost_at(m, n, flat, radial_cost)
        return val.reshape(i.shape)

    log_c = log_c_fn(np.arange(rows))
    desc = f"|x|^{power:g}" if radial_cost is None else getattr(radial_cost, "__name__", "custom")
    return Coefficients(m, n, rows, log_w, log_v, log_c, desc, log_c_fn)


__all__ = [
    "BETA_MIN_DIM",
    "Coefficients",
    "DEFAULT_ORDER",
    "SPECIAL_ORDER",
    "coefficients",
    "log_A",
    "log_cell_volumes",
    "log_cell_volumes_beta",
    "log_cell_volumes_quadrature",
    "log_cost_coefficients",
    "log_diff_powers",
    "log_gamma",
    "log_power_cost_at",
    "log_radial_cost_at",
    "log_shell_volume_at",
    "log_shell_volumes",
    "log_tail_sum",
    "log_unit_ball_volume",
    "tail_rows",
    "tail_sums",
]
