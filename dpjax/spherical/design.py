r"""Build and solve the monotone spherical KL programme (spherical-kl-optimal-mechanisms, Thm 4).

:func:`programme` turns :class:`~dpjax.spherical.coefficients.Coefficients`
into a :class:`solvers.SphericalKL` for a tail ratio ``r`` and budget ``C``
(the geometric tail's mass and cost sums folded in exactly, summed
adaptively); :func:`design` solves it with a backend of :mod:`solvers`.
"""

from __future__ import annotations

import math
import time

import jax
import numpy as np

from dpjax.spherical import coefficients as co
from solvers import solve
from solvers.spherical_kl import SphericalKL


def tail_sums(coeffs: co.Coefficients, N: int, r: float) -> tuple[float, float]:
    """``log sum_{t>=1} r^t v_{N+t}`` and ``log sum_{t>=1} r^t c_{N+t}`` (adaptive)."""
    m, n = coeffs.m, coeffs.n
    lr = math.log(r)
    lv0 = co.log_unit_ball_volume(m) - m * math.log(n)
    log_tv, _ = co.log_tail_sum(lambda i: lv0 + co._log_diff_powers(i, m), lr, N, -60.0)
    log_tc, _ = co.log_tail_sum(coeffs.log_c_fn, lr, N, -60.0)
    return log_tv, log_tc


def programme(coeffs: co.Coefficients, N: int, r: float, budget: float,
              loss_cap: float | None = None) -> SphericalKL:
    """The programme on rows ``0..M-1`` of ``coeffs`` (``M >= tail_rows(m, n, N, r)`` checked)."""
    need = co.tail_rows(coeffs.m, coeffs.n, N, r)
    if coeffs.rows < min(need, N + 2):
        raise ValueError(f"coefficients have {coeffs.rows} rows; (N, r) = ({N}, {r}) needs {need}")
    rows = min(coeffs.rows, need)
    log_tv, log_tc = tail_sums(coeffs, N, r)
    return SphericalKL.create(coeffs.log_w[:rows], coeffs.log_v[:rows], coeffs.log_c[:rows], N, r,
                              budget, log_tv, log_tc, loss_cap)


_JAX_SOLVE = jax.jit(lambda prob: solve(prob, "jax"))


def design(coeffs: co.Coefficients, N: int, r: float, budget: float, solver: str = "jax",
           loss_cap: float | None = None, **options):
    """Solve the programme; returns ``(problem, solution, seconds)``."""
    prob = programme(coeffs, N, r, budget, loss_cap)
    start = time.perf_counter()
    sol = _JAX_SOLVE(prob) if solver == "jax" and not options else solve(prob, solver, **options)
    np.asarray(sol.x)
    return prob, sol, time.perf_counter() - start
