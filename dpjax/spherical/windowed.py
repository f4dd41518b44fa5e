r"""The spherical mechanism at gradient dimension (m = 10 .. 10^5), designed and accounted in logs.

At large ``m`` the spherical KL programme (Theorem 4 of spherical-kl-optimal-mechanisms)
lives on a thin radial window: the budget's Gaussian puts its radius at
``sqrt(C) +- O(sqrt(C/m))``, and the shells well inside that window carry a mass that
underflows float64 (``log v_i`` spans thousands).  :func:`design_windowed` solves the
cost-``|x|^2`` programme on the shells that carry mass
(:func:`dpjax.spherical.design.scale_programme`: shells ``first..N``, cell volumes by the
incomplete beta in log form) and turns the solution into a full
:class:`~dpjax.spherical.mechanism.SphericalMechanism`:

* the density is **flat** on the core ``i < first`` (``p_i = p_first``), so the
  mechanism is a well-defined monotone density on all of ``R^m`` (Definition 2) and
  Lemma 1 (worst shift ``e_1``) applies;
* the core's cells are not computed: their log volumes are ``-inf``, so the
  accounting (:meth:`~dpjax.spherical.mechanism.SphericalMechanism.atoms`) puts their
  ``P``- and ``Q``-mass at loss ``+inf`` -- pessimistic, and of size ``~e^log_tol``
  relative to the window's mass;
* the sampler draws shells from their log masses ``log p_i + log v_i`` (core included,
  exactly), the radius by inversion of ``rho^m`` in logs, the direction uniformly.

The tail ratio defaults to the **slope rule** ``r = exp(-rho_N / (n s^2))``,
``s^2 = C / m``: the budget's Gaussian log-density slope at the junction ``rho_N = N/n``
per shell (a fixed ``r = 0.9`` puts a tail whose cost exceeds the budget at large ``m``).
The last free shell defaults to ``rho_N = sqrt(C) + 4 sqrt(2) s``, eight standard
deviations of the Gaussian's radius past its mean.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax import _validate
from dpjax.spherical import coefficients as co
from dpjax.spherical import design as de
from dpjax.spherical.mechanism import SphericalMechanism
from solvers import solve

#: Largest cost budget accepted: ``sqrt(C)`` shells of width ``1/n`` must stay countable.
MAX_BUDGET = 1e12


def slope_rule_r(m: int, n: int, N: int, budget: float) -> float:
    r"""The tail ratio of the slope rule: ``r = exp(-(N/n) / (n C/m))``.

    The budget's Gaussian ``N(0, (C/m) I_m)`` has radial log-density slope
    ``-rho / s^2`` per unit radius; per shell at the junction ``rho_N = N/n`` this is the
    geometric ratio above (the tail continues the Gaussian's decay; eqs. 17-18 of
    spherical-kl-optimal-mechanisms for the tail's form).

    Args:
      m: dimension.
      n: shells per unit radius.
      N: last free shell.
      budget: the cost budget ``C = E|Z|^2``.

    Returns:
      ``r`` in ``(0, 1)``.

    Example:
      >>> round(slope_rule_r(10, 100, 300, 2.5), 6)
      0.88692
    """
    _check(m, n, N, budget)
    return math.exp(-(N / n) / (n * budget / m))


def default_last_shell(m: int, n: int, budget: float) -> int:
    r"""``N = ceil(n (sqrt(C) + 4 sqrt(2 C / m)))``: eight Gaussian radius deviations past the mean.

    The budget's Gaussian radius ``|Z|`` has mean ``~ sqrt(C)`` and standard deviation
    ``~ sqrt(C / (2m))``; past ``N / n`` its relative radial density is below ``e^-32``.

    Args:
      m: dimension.
      n: shells per unit radius.
      budget: the cost budget ``C = E|Z|^2``.

    Example:
      >>> default_last_shell(10000, 100, 2500.0)
      5283
    """
    budget = check_budget(budget)
    if m < 1 or n < 1:
        raise ValueError(f"need m >= 1 and n >= 1, got ({m}, {n})")
    return math.ceil(n * (math.sqrt(budget) + 4.0 * math.sqrt(2.0 * budget / m)))


def check_budget(budget) -> float:
    r"""Validate the cost budget ``C = E|Z|^2``: a finite number ``> 0``.

    Args:
      budget: the cost budget (``--cost`` on the command line).

    Returns:
      ``budget`` as a float.

    Raises:
      ValueError: ``budget`` is not a finite number ``> 0`` (``inf`` or ``1e308`` would
        overflow the shell count ``n sqrt(C)``); the message names ``cost``.
    """
    value = float(_validate.positive(budget, "cost (the budget C = E|Z|^2)"))
    if value > MAX_BUDGET:
        raise ValueError(f"cost (the budget C = E|Z|^2) must be finite, > 0 and <= "
                         f"{MAX_BUDGET:.0e} (the shells reach radius sqrt(C)), got {value!r}")
    return value


def _check(m, n, N, budget):
    check_budget(budget)
    if m < 1 or n < 1 or N < 2:
        raise ValueError(f"need m >= 1, n >= 1, N >= 2, got m={m}, n={n}, N={N}")


def design_windowed(m: int, budget: float, n: int = 100, N: int | None = None,
                    r: float | None = None, log_tol: float = -80.0, solver="jax"):
    r"""Design the KL-optimal spherical mechanism for ``E|Z|^2 <= C`` at any ``m`` (module doc).

    Solves the windowed monotone KL programme (Theorem 4 of
    spherical-kl-optimal-mechanisms, ``|x|^2`` cost, shells ``first..N`` of
    :func:`dpjax.spherical.design.scale_programme`) and extends the solution by a flat core
    (``p_i = p_first``, ``i < first``) whose cells are accounted at loss ``+inf``.

    Args:
      m: dimension, ``>= 1``.
      budget: the cost budget ``C = E|Z|^2`` (the per-coordinate variance is ``C / m``).
      n: shells per unit radius.
      N: last free shell (default :func:`default_last_shell`).
      r: tail ratio in ``(0, 1)`` (default :func:`slope_rule_r`).
      log_tol: log of the relative radial density of the Gaussian left to the core.
      solver: a registered solver name or object (:func:`solvers.solve`).

    Returns:
      ``(mechanism, info)``: the :class:`~dpjax.spherical.mechanism.SphericalMechanism` and
      ``{"m", "n", "N", "budget", "first", "rows", "r", "status", "residual", "kl",
      "grid_gaussian_kl", "gaussian_kl", "iterations"}``.

    Raises:
      ValueError: bad arguments.
      RuntimeError: the programme was not solved to tolerance.
    """
    budget = check_budget(budget)
    N = default_last_shell(m, n, budget) if N is None else int(N)
    _check(m, n, N, budget)
    if r is None:
        r = slope_rule_r(m, n, N, budget)
    if not 0.0 < r < 1.0:
        raise ValueError(f"r must be in (0, 1), got {r}")
    prob, info = de.scale_programme(m, n, N, budget, r, log_tol)
    sol = de.JAX_SOLVE(prob) if isinstance(solver, str) and solver == "jax" \
        else solve(prob, solver)
    summary = de.scale_summary(prob, info, sol)
    if summary["status"] != 0 or not np.all(np.isfinite(np.asarray(sol.x))):
        raise RuntimeError(f"KL programme not solved to tolerance (status {summary['status']}, "
                           f"residual {summary['residual']:.3g}) at m={m}, n={n}, N={N}, r={r}")
    return mechanism_from_window(prob, sol, info), summary


def mechanism_from_window(problem, solution, info: dict) -> SphericalMechanism:
    r"""A full :class:`~dpjax.spherical.mechanism.SphericalMechanism` from a windowed solution.

    Shell ``first + k`` has mass ``solution.x[k]``; ``log p_i = log mu_i - log v_i``; the core
    ``i < first`` gets ``log p_first`` and ``-inf`` cell volumes (its mass goes to loss
    ``+inf`` in the accounting, pessimistic).

    Args:
      problem: the :class:`solvers.SphericalKL` of :func:`dpjax.spherical.design.scale_programme`.
      solution: its :class:`solvers.Solution`.
      info: the ``info`` dict of ``scale_programme``.
    """
    m, n, N, first, rows = info["m"], info["n"], info["N"], info["first"], info["rows"]
    mu = np.asarray(solution.x, np.float64)
    log_v = co.log_shell_volumes(m, n, rows)
    with np.errstate(divide="ignore"):
        log_p_win = np.log(mu) - log_v[first:N + 1]
    if not np.all(np.isfinite(log_p_win)):
        raise RuntimeError("a free shell of the solution has zero or non-finite mass")
    log_p = np.concatenate([np.full(first, log_p_win[0]), log_p_win])
    log_w = np.full((rows, 2 * n + 1), -np.inf)
    # the programme's kernel is log(w_ij / v_i) on rows first..rows-1 (partners below
    # ``first`` are -inf there: accounted at loss +inf, pessimistic)
    log_w[first:] = np.asarray(problem.log_kernel, np.float64) + log_v[first:, None]
    return SphericalMechanism(m, n, N, float(info["r"]), log_p, log_w, log_v,
                              float(info["budget"]), float(solution.value))


__all__ = ["MAX_BUDGET", "check_budget", "default_last_shell", "design_windowed",
           "mechanism_from_window", "slope_rule_r"]
