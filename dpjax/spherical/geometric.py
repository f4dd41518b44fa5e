r"""The spherical mechanism with shells, window and tail chosen from the geometry (any ``m``).

The (n, N, r) family of spherical-kl-optimal-mechanisms (Definition 2) is piecewise constant
on shells of width ``h = 1/n``.  Near the mass (radius ``~ sqrt(C)``) the budget's Gaussian
``N(0, s^2 I_m)``, ``s^2 = C/m``, has log-density slope ``a = rho / s^2 ~ m / sqrt(C)`` per unit
radius, and a unit shift moves the radius by ``theta - rho = (1 - 2 rho t) / (rho + theta)``,
``t = x_1 / rho`` with ``(1 + t)/2 ~ Beta((m-1)/2, (m-1)/2)``: spread ``1/sqrt(m)``.  A step
density then pays a discretisation excess in the KL of about ``(a h)^2 / 12`` nats (the
in-shell tilt of the shifted radius), i.e. ``m h^2 / 6`` relative to the Gaussian's
``m / (2C)``: at ``m = C = 10^4`` and ``n = 100`` that is the measured 16 %.  So:

* **shells**: ``n = ceil(sqrt(m / (6 tol)))`` (relative excess ``<= tol``; ``a h = f``, a
  fraction ``f = sqrt(12 tol KL_G)`` of a nat per shell), at least ``MIN_SHELLS``;
* **band**: the kernel's row ``i`` carries mass only for ``|theta - rho| <= t_max +
  1/(2 rho)``, ``t_max = sqrt(2 K / (m - 3))`` (``P(|t| > t_max) < e^-K``, ``K = BAND_NATS``):
  partners ``|j - i| <= b = ceil(n (t_max + 1/(2 rho_min))) + 1 <= n``; the rest of each row is
  left out (accounted at loss ``+inf``);
* **window**: free shells from where the budget's Gaussian radial density is ``e^log_tol``
  of its peak (below: a flat core, accounted at loss ``+inf``) to ``N``, eight radial
  standard deviations past ``sqrt(C)``
  (:func:`dpjax.spherical.windowed.default_last_shell`);
* **tail**: ``r`` continues the Gaussian's log-density slope at ``N``
  (:func:`dpjax.spherical.windowed.slope_rule_r`).

The programme is solved by the banded barrier-Newton method (memory ``O(N b)``): on the host
in NumPy/SciPy (:mod:`.banded`, ``solver="host"``, the default: no compilation) or as one
jitted JAX program (:mod:`.banded_jax`, ``solver="jax"``: no host round trip per step, for an
accelerator; compiled once per window shape); the design reports its KL beside the continuous
and the grid Gaussian's, and a continuum estimate from a second solve at half the shells
(Richardson on ``h^2``).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from dpjax.numerics import bisect_host
from dpjax.spherical import coefficients as co
from dpjax.spherical.banded import BandedKL, solve_banded_kl
from dpjax.spherical.banded_jax import solve_banded_kl_jax
from dpjax.spherical.cells_beta import log_cell_volumes_beta_symmetric
from dpjax.spherical.mechanism import SphericalMechanism
from dpjax.spherical.windowed import check_budget, default_last_shell, slope_rule_r
from solvers._spherical_kl_data import reference_profile

#: target relative discretisation excess ``m h^2 / 6`` of the KL
TOL = 5e-4
#: fewest shells per unit radius
MIN_SHELLS = 16
#: nats of kernel mass left out of each row by the band (``P(|t| > t_max) < e^-K``)
BAND_NATS = 60.0
#: log of the Gaussian's relative radial density below which shells form the flat core
LOG_TOL = -50.0


def shells_per_unit(m: int, tol: float = TOL) -> int:
    r"""``n = max(MIN_SHELLS, ceil(sqrt(m / (6 tol))))``: relative KL excess ``m h^2 / 6 <= tol``.

    Args:
      m: dimension.
      tol: target relative excess.

    Example:
      >>> shells_per_unit(10), shells_per_unit(10000)
      (58, 1826)
    """
    return max(MIN_SHELLS, math.ceil(math.sqrt(m / (6.0 * tol))))


def _core_radius(m: int, budget: float, log_tol: float) -> float:
    """Radius below which the budget's Gaussian radial density is ``< e^log_tol`` of its peak."""
    s2 = budget / m
    peak = math.sqrt(max(m - 1, 1) * s2)
    if m <= 1:
        return 0.0
    g = lambda rho: (m - 1) * math.log(rho) - rho * rho / (2.0 * s2)  # noqa: E731
    lo, hi = peak * 1e-300, peak  # g(lo) - g(peak) < -690 (m - 1) < log_tol
    if g(lo) - g(peak) >= log_tol:
        return 0.0
    return bisect_host(lambda rho: (g(rho) - g(peak) < log_tol, None), lo, hi, 1100).good


def plan(m: int, budget: float, n: int | None = None, tol: float = TOL,
         log_tol: float = LOG_TOL, band_nats: float = BAND_NATS) -> dict:
    r"""Shells, band, window and tail for ``E|Z|^2 <= C`` (module docstring).

    Args:
      m: dimension, ``>= 2``.
      budget: the cost budget ``C``.
      n: shells per unit radius (default :func:`shells_per_unit`).
      tol: target relative discretisation excess.
      log_tol: the core's relative radial density.
      band_nats: ``K`` of the band rule.

    Returns:
      ``{"m", "n", "b", "first", "N", "r", "rows", "budget"}``.
    """
    budget = check_budget(budget)
    if not isinstance(m, (int, np.integer)) or m < 2:
        raise ValueError(f"dim must be an integer >= 2 for the geometric design, got {m!r}")
    n = shells_per_unit(m, tol) if n is None else int(n)
    N = default_last_shell(m, n, budget)
    rho_core = _core_radius(m, budget, log_tol)
    t_max = math.sqrt(2.0 * band_nats / (m - 3)) if m > 3 else math.inf
    b = n
    first = 0
    if t_max < 1.0 and rho_core > 0.0:
        b0 = n
        for _ in range(3):  # first depends on b, b on the first row's radius
            first = max(0, min(math.floor(rho_core * n) - b0 - 1, N - b0 - 1))
            rho_min = max(first, 1) / n
            b0 = min(n, math.ceil(n * (t_max + 0.5 / rho_min)) + 1)
        b = b0
        first = max(0, min(math.floor(rho_core * n) - b - 1, N - b - 1))
    r = slope_rule_r(m, n, N, budget)
    rows = co.tail_rows(m, n, N, r, band=b)
    return {"m": int(m), "n": n, "b": b, "first": first, "N": N, "r": r, "rows": rows,
            "budget": budget}


def programme(p: dict, log_w: np.ndarray | None = None
              ) -> tuple[BandedKL, np.ndarray, np.ndarray, np.ndarray]:
    r"""The windowed programme of a :func:`plan` (rows ``first..rows-1``), its data and start.

    Args:
      p: the plan (:func:`plan`, or any dict with its keys).
      log_w: the window's banded log cell volumes, if already computed (they do not depend
        on the budget: a budget search computes them once).

    Returns:
      ``(problem, log_w, log_v, y_ref)``: the :class:`~dpjax.spherical.banded.BandedKL`, the
      window's banded log cell volumes and log shell volumes (rows ``first..``), and the
      reference (grid Gaussian, cost exactly ``C``) log densities on the free shells.
    """
    m, n, b, first, N, r, rows, C = (p[k] for k in ("m", "n", "b", "first", "N", "r", "rows",
                                                     "budget"))
    # the incomplete-beta cells at every m >= 2 (host NumPy: no compilation; they agree with
    # the Gauss-Legendre cells to ~1e-13 in log at m = 3, 10, 31)
    if log_w is None:
        log_w = log_cell_volumes_beta_symmetric(m, n, rows, start=first, half_width=b)
    idx = np.arange(first, rows)
    log_v = co.log_shell_volume_at(m, n, idx)
    log_c = co.log_power_cost_at(m, n, idx, 2.0)
    log_tv, log_tc = co.tail_sums(m, n, N, r, lambda i: co.log_power_cost_at(m, n, i, 2.0))
    Nw = N - first
    mass = np.ones(Nw + 1)
    mass[Nw] = 1.0 + math.exp(log_tv - log_v[Nw])
    shell_cbar = np.exp(log_c[: Nw + 1] - log_v[: Nw + 1])
    cbar = shell_cbar.copy()
    cbar[Nw] = math.exp(np.logaddexp(log_c[Nw], log_tc) - log_v[Nw])
    y_ref = reference_profile(shell_cbar, cbar, mass, log_v[: Nw + 1], C, np.inf)
    prob = BandedKL(log_w, log_v, mass, cbar / C, math.log(r), Nw)
    return prob, log_w, log_v, y_ref


#: the banded barrier-Newton backends of :func:`solve_plan`
SOLVERS = ("host", "jax")


def _check_solver(solver: str) -> str:
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
    return solver


def solve_plan(p: dict, log_w: np.ndarray | None = None, solver: str = "host") -> dict:
    r"""Solve the programme of a plan; the mechanism and the numbers that judge it.

    Args:
      p: the plan.
      log_w: precomputed window cells (:func:`programme`), or ``None``.
      solver: ``"host"`` (:func:`dpjax.spherical.banded.solve_banded_kl`, NumPy/SciPy) or
        ``"jax"`` (:func:`dpjax.spherical.banded_jax.solve_banded_kl_jax`, one jitted
        program, run in a scoped ``jax.enable_x64(True)``): the same method and result.

    Returns:
      ``p`` plus ``mechanism``, ``kl``, ``grid_gaussian_kl``, ``gaussian_kl`` (``m / (2C)``),
      ``status``, ``gap``, ``newton_steps``, ``mass_error``, ``cost_error``.
    """
    _check_solver(solver)
    prob, log_w, log_v, y_ref = programme(p, log_w)
    mu_ref = np.exp(y_ref + log_v[: prob.N + 1])
    if solver == "jax":
        with jax.enable_x64(True):
            out = solve_banded_kl_jax(prob, y_ref, mu_ref[:-1] / mu_ref.sum())
    else:
        out = solve_banded_kl(prob, y_ref, mu_ref[:-1] / mu_ref.sum())
    m, n, N, first = p["m"], p["n"], p["N"], p["first"]
    log_p = np.concatenate([np.full(first, out["y"][0]), out["y"]])
    full_v = co.log_shell_volumes(m, n, p["rows"])
    # the core's cells are not stored (first): accounted at loss +inf
    mech = SphericalMechanism(m, n, N, float(p["r"]), log_p, log_w, full_v, p["budget"],
                              out["kl"], first)
    return {**p, "mechanism": mech, "log_w": log_w, "kl": out["kl"],
            "grid_gaussian_kl": prob.objective(y_ref),
            "gaussian_kl": m / (2.0 * p["budget"]), "status": out["status"],
            "gap": out["gap"], "newton_steps": out["newton_steps"],
            "mass_error": out["mass_error"], "cost_error": out["cost_error"]}


def design_geometric(m: int, budget: float, n: int | None = None, tol: float = TOL,
                     refine: bool = True, solver: str = "host"
                     ) -> tuple[SphericalMechanism, dict]:
    r"""Design the monotone KL-optimal spherical noise for ``E|Z|^2 <= C`` at any ``m >= 2``.

    Shells, band, window and tail from the geometry (:func:`plan`), solved by banded Newton
    (:mod:`.banded` on the host, or :mod:`.banded_jax` in JAX).  With ``refine``, a second
    solve at ``ceil(n / 2)`` shells gives the continuum estimate
    ``KL_* ~ KL_h - (KL_2h - KL_h) / 3`` (excess ``~ h^2``) and
    ``excess_estimate = KL_h - KL_*``.  ``above_gaussian`` says (never silently) whether the
    design's KL exceeds the continuous Gaussian's ``m / (2C)`` of the same cost.

    Args:
      m: dimension ``>= 2``.
      budget: the cost budget ``C = E|Z|^2``.
      n: shells per unit radius (default from the geometry).
      tol: target relative discretisation excess.
      refine: also solve at half the shells for the continuum estimate.
      solver: the banded barrier-Newton backend, ``"host"`` (NumPy/SciPy, no compilation) or
        ``"jax"`` (one jitted program per window shape; :func:`solve_plan`).

    Returns:
      ``(mechanism, info)``; ``info`` has ``kl``, ``gaussian_kl``, ``grid_gaussian_kl``,
      ``continuum_kl_estimate``, ``excess_estimate``, ``above_gaussian``,
      ``relative_to_gaussian`` (``kl / gaussian_kl - 1``), ``verdict`` (:func:`verdict`)
      and the plan.

    Raises:
      ValueError: bad arguments.
      RuntimeError: the programme was not solved (status != 0).
    """
    _check_solver(solver)
    p = plan(m, budget, n, tol)
    res = solve_plan(p, solver=solver)
    if res["status"] != 0:
        raise RuntimeError(f"KL programme not solved (gap {res['gap']:.3g}) at m={m}, "
                           f"n={p['n']}")
    info = {k: v for k, v in res.items() if k not in ("mechanism", "log_w")}
    if refine:
        coarse = solve_plan(plan(m, budget, max(MIN_SHELLS // 2, math.ceil(p["n"] / 2)), tol),
                            solver=solver)
        h1, h2 = 1.0 / p["n"], 1.0 / coarse["n"]
        est = (res["kl"] * h2 * h2 - coarse["kl"] * h1 * h1) / (h2 * h2 - h1 * h1)
        info.update(coarse_n=coarse["n"], coarse_kl=coarse["kl"], continuum_kl_estimate=est,
                    excess_estimate=res["kl"] - est)
    info["above_gaussian"] = bool(res["kl"] > info["gaussian_kl"])
    info["relative_to_gaussian"] = res["kl"] / info["gaussian_kl"] - 1.0
    info["verdict"] = verdict(info)
    return res["mechanism"], info


#: relative excess over the continuous Gaussian's KL within which the Gaussian is the answer
NEAR_GAUSSIAN = 1e-3


def verdict(info: dict, near: float = NEAR_GAUSSIAN) -> str:
    r"""One sentence judging a design against the continuous Gaussian of the same cost.

    The Gaussian is monotone and spherically symmetric, so the continuum optimum of the
    programme is never above its KL ``m / (2C)``; a design above it pays for its shells
    (``excess_estimate``).  Below it: the design pays.  Within ``near`` (relative) above it:
    the Gaussian is near-optimal at this ``m`` and is the simpler answer.  Further above:
    prefer the Gaussian.

    Args:
      info: a design's numbers (``kl``, ``gaussian_kl``; ``continuum_kl_estimate`` if refined).
      near: the relative excess counted as "near".

    Example:
      >>> verdict({"kl": 1.949, "gaussian_kl": 2.0})[:40]
      "the design's KL is 2.550% below the cont"
    """
    g = info["gaussian_kl"]
    rel = info["kl"] / g - 1.0
    est = info.get("continuum_kl_estimate")
    cont = "" if est is None else (f"; continuum optimum estimated at {est:.7g}, "
                                   f"{est / g - 1.0:+.3%} from the Gaussian's")
    if rel <= 0.0:
        return (f"the design's KL is {-rel:.3%} below the continuous Gaussian's of the same "
                f"cost: the designed mechanism pays{cont}")
    if rel <= near:
        return (f"the design's KL is {rel:.3%} above the continuous Gaussian's of the same cost "
                f"(the shells' discretisation{cont}): the Gaussian is near-optimal at this "
                "dimension and is the simpler answer")
    return (f"the design's KL is {rel:.3%} above the continuous Gaussian's of the same cost "
            f"(more than {near:.1%}{cont}): prefer the Gaussian")


__all__ = ["BAND_NATS", "LOG_TOL", "MIN_SHELLS", "NEAR_GAUSSIAN", "SOLVERS", "TOL",
           "design_geometric",
           "plan", "programme", "shells_per_unit", "solve_plan", "verdict"]
