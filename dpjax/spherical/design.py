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


def coefficients_for(m: int, n: int, N: int, r_max: float, power: float = 2.0,
                     radial_cost=None) -> co.Coefficients:
    """Coefficients with enough rows for every tail ratio ``r <= r_max`` (adaptive truncation)."""
    return co.coefficients(m, n, co.tail_rows(m, n, N, r_max), power, radial_cost)


def design_mechanism(coeffs: co.Coefficients, N: int, r: float, budget: float,
                     solver: str = "jax", loss_cap: float | None = None):
    """Solve and wrap: ``(SphericalMechanism, problem, solution, seconds)``."""
    from dpjax.spherical.mechanism import SphericalMechanism

    prob, sol, sec = design(coeffs, N, r, budget, solver, loss_cap)
    if int(np.asarray(sol.status)) != 0:
        raise RuntimeError(f"KL programme not solved to tolerance (status {int(sol.status)}, "
                           f"residual {float(sol.residual.total):.3g})")
    return SphericalMechanism.from_solution(prob, sol, coeffs, budget), prob, sol, sec


def epsilon_criterion(delta: float, compositions: int, sampling_rate: float | None = None):
    """Criterion ``mech -> epsilon(delta)`` after ``compositions`` uses (Poisson rate q)."""
    return lambda mech: mech.epsilon(delta, compositions, sampling_rate)


def kl_criterion(mech) -> float:
    """Criterion: the KL of the designed mechanism."""
    return mech.kl


def search_r(coeffs: co.Coefficients, N: int, budget: float, criterion=kl_criterion,
             decay_bounds: tuple[float, float] = (2.0, 45.0), iterations: int = 8,
             loss_cap: float | None = None):
    r"""Outer 1-D golden-section search over the tail ratio ``r``.

    ``r = exp(-s / n)`` with ``s`` (the tail's log-density drop per unit radius,
    ``n ln(1/r)``) searched in ``decay_bounds``; each point solves the
    programme and evaluates ``criterion(mech)`` (:func:`kl_criterion` or
    :func:`epsilon_criterion`).  ``coeffs`` must have rows for the smallest
    ``s`` (largest ``r``).  Returns ``(best_mech, best_r, history)`` where
    history lists ``(r, criterion)``.
    """
    n = coeffs.n
    history = []
    cache = {}

    def evaluate(s):
        if s not in cache:
            r = math.exp(-s / n)
            mech = design_mechanism(coeffs, N, r, budget, loss_cap=loss_cap)[0]
            cache[s] = (criterion(mech), mech, r)
            history.append((r, cache[s][0]))
        return cache[s][0]

    lo, hi = decay_bounds
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = evaluate(a), evaluate(b)
    for _ in range(max(iterations - 2, 0)):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = evaluate(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = evaluate(b)
    best = min(cache.values(), key=lambda v: v[0])
    return best[1], best[2], sorted(history)
