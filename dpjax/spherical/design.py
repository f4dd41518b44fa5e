r"""Build and solve the monotone spherical KL programme (spherical-kl-optimal-mechanisms, Thm 4).

:func:`programme` turns :class:`~dpjax.spherical.coefficients.Coefficients`
into a :class:`solvers.SphericalKL` for a tail ratio ``r`` and budget ``C``
(the geometric tail's mass and cost sums folded in exactly, summed
adaptively); :func:`design` solves it with a backend of :mod:`solvers`.
:func:`scale_design` solves the ``|x|^2`` programme at large ``m`` (10^2 .. 10^4) on the
shells that carry mass; its measured table (gain over the Gaussian ~1/m) is in
``bench/bench_spherical.py`` (``--scale``).
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


def gaussian_core_shells(m: int, n: int, budget: float, log_tol: float = -80.0) -> int:
    r"""Shells ``i < first`` whose band ``J_i .. J_{i+n}`` lies where the Gaussian with
    ``E|Z|^2 = budget`` has radial density ``rho^(m-1) e^(-rho^2 / (2 s^2))`` (``s^2 = C/m``)
    below ``e^log_tol`` of its peak (``0`` when there is no such shell)."""
    s2 = budget / m
    peak = math.sqrt(max(m - 1, 1) * s2)
    g = lambda rho: (m - 1) * math.log(rho) - rho * rho / (2.0 * s2)  # noqa: E731
    first = 0
    while (first + n + 1) / n < peak and g((first + n + 1) / n) - g(peak) < log_tol:
        first += 1
    return first


def scale_design(m: int, n: int, N: int, budget: float, r: float | None = None,
                 log_tol: float = -80.0) -> dict:
    r"""Solve the cost-``|x|^2`` programme at large ``m`` on the shells that carry mass.

    At large ``m`` the shell masses of the inner shells underflow float64 (``log v_i``
    spans ``-5000..1000`` at ``m = 1000``; the solver's variables are shell masses), and
    they carry none of the KL.  So the programme is solved on shells
    ``first..N`` (:func:`gaussian_core_shells`: below ``first + n`` the budget's Gaussian
    has relative radial density ``< e^log_tol``), i.e. with a flat core ``p_i = p_first``
    for ``i < first`` whose mass, cost and flows are left out -- an approximation of the
    programme by ``O(e^log_tol)`` (a monotone profile puts at most the reference's order of
    mass there), exact at ``first = 0``.  ``r`` defaults to ``exp(-rho_N / (n s^2))``, the
    budget's Gaussian log-density slope at the junction ``rho_N = N / n`` per shell
    (a fixed ``r = 0.9`` at ``n = 20``, ``m = 100`` puts a slowly decaying tail with a
    cost far beyond the budget: not solvable).  Returns a dict with the KL, the
    KL of the reference (the budget's Gaussian discretised on the same shells,
    cost exactly ``C``), the continuous Gaussian's ``m / (2 C)``, status, KKT residual
    and timings (coefficients; solve after a compile warm-up).
    """
    from dpjax.spherical.coefficients import BETA_MIN_DIM, _log_cells_beta

    s2 = budget / m
    if r is None:
        r = math.exp(-(N / n) / (n * s2))
    first = min(gaussian_core_shells(m, n, budget, log_tol), max(N - n - 1, 0))
    t0 = time.perf_counter()
    rows = co.tail_rows(m, n, N, r)
    if m >= BETA_MIN_DIM:
        log_w = _log_cells_beta(m, n, rows, start=first)
    else:
        log_w = co.log_cell_volumes(m, n, rows)[first:]
    log_v = co.log_shell_volumes(m, n, rows)[first:]
    log_c = co.log_cost_coefficients(m, n, rows)[first:]
    lr = math.log(r)
    lv0 = co.log_unit_ball_volume(m) - m * math.log(n)
    lc0 = math.log(m) + co.log_unit_ball_volume(m) - math.log(m + 2.0) - (m + 2.0) * math.log(n)
    log_tv, _ = co.log_tail_sum(lambda i: lv0 + co._log_diff_powers(i, m), lr, N, -60.0)
    log_tc, _ = co.log_tail_sum(lambda i: lc0 + co._log_diff_powers(i, m + 2.0), lr, N, -60.0)
    prob = SphericalKL.create(log_w, log_v, log_c, N - first, r, budget, log_tv, log_tc)
    coef_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready(_JAX_SOLVE(prob))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sol = jax.block_until_ready(_JAX_SOLVE(prob))
    solve_s = time.perf_counter() - t0
    kl, ref = float(sol.value), float(prob.objective(prob.reference()))
    return {"m": m, "n": n, "N": N, "first": first, "rows": rows, "budget": budget, "r": r,
            "status": int(sol.status), "residual": float(sol.residual.total),
            "iterations": int(sol.stats["iterations"]), "kl": kl, "grid_gaussian_kl": ref,
            "gaussian_kl": m / (2.0 * budget), "coef_seconds": coef_s,
            "compile_seconds": compile_s, "solve_seconds": solve_s}


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
