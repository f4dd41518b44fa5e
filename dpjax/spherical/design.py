r"""Build and solve the monotone spherical KL programme (spherical-kl-optimal-mechanisms, Thm 4).

:func:`programme` turns :class:`~dpjax.spherical.coefficients.Coefficients`
into a :class:`solvers.SphericalKL` for a tail ratio ``r`` and budget ``C``
(the geometric tail's mass and cost sums folded in exactly, summed
adaptively); :func:`design` solves it with a solver of :mod:`solvers` (by
name or as an object); :func:`design_mechanism` wraps the solution as a
:class:`~dpjax.spherical.mechanism.SphericalMechanism`; :func:`search_r` searches
the tail ratio.  :func:`scale_design` solves the ``|x|^2`` programme at large
``m`` (10^2 .. 10^4) on the shells that carry mass; its measured table (gain
over the Gaussian ~1/m) and all timings are in ``bench/bench_spherical.py``.
"""

from __future__ import annotations

import math

import jax
import numpy as np

from dpjax.spherical import coefficients as co
from dpjax.spherical.mechanism import SphericalMechanism, check_use
from solvers import solve
from solvers.spherical_kl import SphericalKL


def programme(coeffs: co.Coefficients, N: int, r: float, budget: float,
              loss_cap: float | None = None) -> SphericalKL:
    r"""The monotone KL programme (Theorem 4, eqs. 28-30) on rows ``0..M-1`` of ``coeffs``.

    ``M = tail_rows(m, n, N, r)`` (checked against ``coeffs.rows``); the
    geometric tail's sums ``sum_t r^t v_{N+t}`` and ``sum_t r^t c_{N+t}`` are folded
    into the constraints of shell ``N``.

    Args:
      coeffs: the programme's coefficients (enough rows for ``(N, r)``).
      N: last free shell.
      r: tail ratio, ``0 < r < 1``.
      budget: the cost budget ``C``.
      loss_cap: optional cap ``L_max`` on ``log p_i - log p_{i+n}``.

    Raises:
      ValueError: too few rows, or a budget the grid cannot reach.
    """
    need = co.tail_rows(coeffs.m, coeffs.n, N, r)
    if coeffs.rows < min(need, N + 2):
        raise ValueError(f"coefficients have {coeffs.rows} rows; (N, r) = ({N}, {r}) needs {need}")
    rows = min(coeffs.rows, need)
    log_tv, log_tc = co.tail_sums(coeffs.m, coeffs.n, N, r, coeffs.log_c_fn)
    return SphericalKL.create(coeffs.log_w[:rows], coeffs.log_v[:rows], coeffs.log_c[:rows], N, r,
                              budget, log_tv, log_tc, loss_cap)


JAX_SOLVE = jax.jit(lambda prob: solve(prob, "jax"))


def design(coeffs: co.Coefficients, N: int, r: float, budget: float, solver="jax",
           loss_cap: float | None = None, **options):
    r"""Build the programme (:func:`programme`) and solve it.

    Args:
      coeffs: the programme's coefficients.
      N: last free shell.
      r: tail ratio.
      budget: the cost budget ``C``.
      solver: a registered solver name (``"jax"``: the barrier Newton method,
        compiled once per shape) or a solver object.
      loss_cap: optional cap ``L_max`` on ``log p_i - log p_{i+n}``.
      **options: passed to the solver.

    Returns:
      ``(problem, solution)``: the :class:`solvers.SphericalKL` and its :class:`solvers.Solution`.
    """
    prob = programme(coeffs, N, r, budget, loss_cap)
    jitted = isinstance(solver, str) and solver == "jax" and not options
    sol = JAX_SOLVE(prob) if jitted else solve(prob, solver, **options)
    return prob, sol


def gaussian_core_shells(m: int, n: int, budget: float, log_tol: float = -80.0) -> int:
    r"""Shells ``i < first`` that carry no mass for the budget's Gaussian.

    Their band ``J_i .. J_{i+n}`` lies where the Gaussian with ``E|Z|^2 = budget``
    has radial density ``rho^(m-1) e^(-rho^2 / (2 s^2))`` (``s^2 = C/m``) below
    ``e^log_tol`` of its peak (``0`` when there is no such shell).

    Args:
      m: dimension.
      n: shells per unit radius.
      budget: the cost budget ``C``.
      log_tol: log of the relative radial density that counts as no mass.
    """
    s2 = budget / m
    peak = math.sqrt(max(m - 1, 1) * s2)
    g = lambda rho: (m - 1) * math.log(rho) - rho * rho / (2.0 * s2)  # noqa: E731
    first = 0
    while (first + n + 1) / n < peak and g((first + n + 1) / n) - g(peak) < log_tol:
        first += 1
    return first


def scale_programme(m: int, n: int, N: int, budget: float, r: float | None = None,
                    log_tol: float = -80.0) -> tuple[SphericalKL, dict]:
    r"""The cost-``|x|^2`` programme at large ``m`` on the shells that carry mass.

    At large ``m`` the shell masses of the inner shells underflow float64 (``log v_i``
    spans ``-5000..1000`` at ``m = 1000``; the solver's variables are shell masses), and
    they carry none of the KL.  So the programme is set on shells
    ``first..N`` (:func:`gaussian_core_shells`: below ``first + n`` the budget's Gaussian
    has relative radial density ``< e^log_tol``), i.e. with a flat core ``p_i = p_first``
    for ``i < first`` whose mass, cost and flows are left out -- an approximation of the
    programme by ``O(e^log_tol)`` (a monotone profile puts at most the reference's order of
    mass there), exact at ``first = 0``.  ``r`` defaults to ``exp(-rho_N / (n s^2))``, the
    budget's Gaussian log-density slope at the junction ``rho_N = N / n`` per shell
    (a fixed ``r = 0.9`` at ``n = 20``, ``m = 100`` puts a slowly decaying tail with a
    cost far beyond the budget: not solvable).

    Args:
      m: dimension.
      n: shells per unit radius.
      N: last free shell.
      budget: the cost budget ``C = E|Z|^2``.
      r: tail ratio (default: the junction slope above).
      log_tol: log of the relative radial density left out (``-inf``: no window).

    Returns:
      ``(problem, info)`` with ``info = {"m", "n", "N", "budget", "first", "rows", "r"}``.
    """
    s2 = budget / m
    if r is None:
        r = math.exp(-(N / n) / (n * s2))
    first = min(gaussian_core_shells(m, n, budget, log_tol), max(N - n - 1, 0))
    rows = co.tail_rows(m, n, N, r)
    if m >= co.BETA_MIN_DIM:
        log_w = co.log_cell_volumes_beta(m, n, rows, start=first)
    else:
        log_w = co.log_cell_volumes(m, n, rows)[first:]
    log_v = co.log_shell_volumes(m, n, rows)[first:]
    log_c = co.log_cost_coefficients(m, n, rows)[first:]
    log_tv, log_tc = co.tail_sums(m, n, N, r, lambda i: co.log_power_cost_at(m, n, i, 2.0))
    prob = SphericalKL.create(log_w, log_v, log_c, N - first, r, budget, log_tv, log_tc)
    return prob, {"m": m, "n": n, "N": N, "budget": budget, "first": first, "rows": rows, "r": r}


def scale_summary(problem: SphericalKL, info: dict, solution) -> dict:
    r"""The large-``m`` comparison of a solved :func:`scale_programme` with the Gaussian.

    The reference KL is that of the budget's Gaussian discretised on the same
    shells (the programme's reference profile, cost exactly ``C``); the
    continuous Gaussian's is ``m / (2 C)`` (its KL at unit shift).

    Args:
      problem: the programme of :func:`scale_programme`.
      info: its ``info`` dict.
      solution: the :class:`solvers.Solution` of ``problem``.

    Returns:
      ``info`` plus ``status``, ``residual``, ``iterations``, ``kl``,
      ``grid_gaussian_kl`` and ``gaussian_kl``.
    """
    kl, ref = float(solution.value), float(problem.objective(problem.reference()))
    return {**info, "status": int(solution.status), "residual": float(solution.residual.total),
            "iterations": int(solution.stats["iterations"]), "kl": kl, "grid_gaussian_kl": ref,
            "gaussian_kl": info["m"] / (2.0 * info["budget"])}


def scale_design(m: int, n: int, N: int, budget: float, r: float | None = None,
                 log_tol: float = -80.0) -> dict:
    r"""Solve :func:`scale_programme` with the JAX solver; :func:`scale_summary` of the result.

    Args:
      m: dimension.
      n: shells per unit radius.
      N: last free shell.
      budget: the cost budget ``C = E|Z|^2``.
      r: tail ratio (default: :func:`scale_programme`'s).
      log_tol: log of the relative radial density left out.
    """
    prob, info = scale_programme(m, n, N, budget, r, log_tol)
    return scale_summary(prob, info, JAX_SOLVE(prob))


def coefficients_for(m: int, n: int, N: int, r_max: float, power: float = 2.0,
                     radial_cost=None) -> co.Coefficients:
    r"""Coefficients with enough rows for every tail ratio ``r <= r_max`` (adaptive truncation).

    Args:
      m: dimension.
      n: shells per unit radius.
      N: last free shell.
      r_max: the largest tail ratio that will be used.
      power: the cost ``|x|^power``.
      radial_cost: a radial cost ``c~(rho)`` instead (vectorised NumPy), or ``None``.
    """
    return co.coefficients(m, n, co.tail_rows(m, n, N, r_max), power, radial_cost)


def design_mechanism(coeffs: co.Coefficients, N: int, r: float, budget: float,
                     solver="jax", loss_cap: float | None = None):
    r"""Solve the programme (:func:`design`) and wrap the solution as a mechanism (Definition 2).

    Args:
      coeffs: the programme's coefficients.
      N: last free shell.
      r: tail ratio.
      budget: the cost budget ``C``.
      solver: a registered solver name or a solver object.
      loss_cap: optional cap ``L_max`` on ``log p_i - log p_{i+n}``.

    Returns:
      ``(SphericalMechanism, problem, solution)``.

    Raises:
      RuntimeError: the programme was not solved to tolerance.
    """
    prob, sol = design(coeffs, N, r, budget, solver, loss_cap)
    if int(np.asarray(sol.status)) != 0:
        raise RuntimeError(f"KL programme not solved to tolerance (status {int(sol.status)}, "
                           f"residual {float(sol.residual.total):.3g})")
    return SphericalMechanism.from_solution(prob, sol, coeffs, budget), prob, sol


def epsilon_criterion(delta: float, compositions: int, sampling_rate: float | None = None):
    r"""Criterion ``mech -> epsilon(delta)`` after ``compositions`` uses (Poisson rate ``q``).

    The certified PLD accounting of the mechanism at the maximal shift (Lemma 1
    of spherical-kl-optimal-mechanisms), composed and subsampled as in its Fig. 2.

    Args:
      delta: the target ``delta``.
      compositions: number of uses.
      sampling_rate: Poisson subsampling rate, or ``None``.

    Raises:
      ValueError: ``delta`` outside ``(0, 1)``, ``compositions < 1`` or a rate outside
        ``(0, 1]`` (checked here, before any programme is solved).
    """
    check_use(delta, [compositions], sampling_rate)
    return lambda mech: mech.epsilon(delta, compositions, sampling_rate)


def kl_criterion(mech) -> float:
    r"""Criterion: the KL ``D(P || T_e1 P)`` of the designed mechanism (eq. 28).

    Args:
      mech: a :class:`~dpjax.spherical.mechanism.SphericalMechanism`.
    """
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
