"""The ``cvxpy`` solver: the CPU reference (cvxpy + Clarabel), imported lazily.

Not jittable, CPU only, float64.  The problem supplies its cvxpy model via
the hook ``problem.cvxpy_model(cp) -> CvxpyModel``; :class:`CvxpySolver`
solves it with Clarabel at tight tolerances, maps the cvxpy status to
:class:`Status` and hands the primal point and multipliers (in the problem's
own constraint form) back to :func:`solvers.solve`, which judges them by
the shared residual (cf. jaxopt ``_src/cvxpy_wrapper.py``).  A conic
interior-point method determines the optimal *value* to about its gap
tolerance, but the *point* only to about the square root of it where the
objective is flat: compare points with that in mind and judge them by the
residual.

Where the problem asks for it (``cvxpy_polish = True``, or ``polish=True``),
the IPM point is then Newton-polished on its own KKT system: the solver
becomes ``KKTPolish(start=CvxpySolver(polish=False))``
(:class:`solvers.KKTPolish`).  The IPM leaves a coordinate whose share of the
objective is ``s`` off by about ``gap / (cones * s)`` *relative*, which no
Clarabel setting removes (see :mod:`solvers.kkt_polish`); the polish resolves
every coordinate to rounding.  ``stats`` then records ``merit_before`` (the
IPM point's componentwise residual), ``merit_after`` and
``polish_iterations``; the returned residual is always recomputed by
:func:`solvers.solve`.  Wall times are measured by ``bench/``, not here;
``stats["setup_s"]`` (the model build and cvxpy's canonicalisation of this
solve) lets the benchmark report setup apart from the solve.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from solvers._solution import RawResult, Status

#: Clarabel settings used unless overridden: the reference is run tight.
DEFAULT_OPTIONS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "max_iter": 400}


class CvxpyModel(NamedTuple):
    """A problem expressed in cvxpy (what a problem's ``cvxpy_model(cp)`` hook returns).

    Attributes:
      problem: the ``cvxpy.Problem``.
      recover: ``recover() -> (x, inequality_multipliers, equality_multipliers)``
        called after solving; maps cvxpy values back to the problem's
        variables and normalised constraint form.
    """

    problem: Any
    recover: Callable[[], tuple]


_STATUS = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.OPTIMAL,  # the shared residual decides
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "unbounded_inaccurate": Status.UNBOUNDED,
    "user_limit": Status.MAX_ITERATIONS,
}


@dataclasses.dataclass(frozen=True)
class CvxpySolver:
    """The cvxpy reference solver (module docstring).

    Args:
      solver: the cvxpy solver name (Clarabel by default, run at the tolerances
        of ``DEFAULT_OPTIONS``).
      polish: Newton-polish the IPM point (:class:`solvers.KKTPolish`); ``None``
        follows the problem's ``cvxpy_polish`` attribute (default ``False``).
      options: further keyword options of the cvxpy solver, as ``(name, value)`` pairs.

    Options given to ``solve`` replace these for that call; unknown names go
    to the cvxpy solver.
    """

    solver: str = "CLARABEL"
    polish: bool | None = None
    options: tuple = ()

    name = "cvxpy"
    jittable = False
    requires = ("cvxpy_model",)

    def solve(self, problem, solver: str | None = None, polish: bool | None = None,
              **options) -> RawResult:
        """Solve ``problem.cvxpy_model(cp)`` (then polish, see the class docstring).

        Args:
          problem: a problem with the ``cvxpy_model`` hook.
          solver: the cvxpy solver name for this call.
          polish: polish the IPM point for this call.
          **options: options of the cvxpy solver for this call.

        Raises:
          NotImplementedError: the problem has no cvxpy model.
        """
        cfg = dataclasses.replace(
            self, solver=self.solver if solver is None else solver,
            polish=self.polish if polish is None else polish,
            options=tuple({**dict(self.options), **options}.items()))
        if getattr(problem, "cvxpy_model", None) is None:
            raise NotImplementedError(f"{problem.name}: no cvxpy model (cvxpy_model) is defined")
        do_polish = cfg.polish
        if do_polish is None:
            do_polish = bool(getattr(problem, "cvxpy_polish", False))
        if do_polish:
            from solvers.kkt_polish import KKTPolish

            return KKTPolish(start=dataclasses.replace(cfg, polish=False)).solve(problem)
        return cfg._solve_ipm(problem)

    def _solve_ipm(self, problem) -> RawResult:
        try:
            import cvxpy as cp
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "the cvxpy backend needs cvxpy and clarabel: pip install 'dpjax[cvxpy]'"
            ) from err
        start = time.perf_counter()
        model = problem.cvxpy_model(cp)
        build_s = time.perf_counter() - start
        opts = dict(DEFAULT_OPTIONS) if self.solver.upper() == "CLARABEL" else {}
        opts.update(dict(self.options))
        cvx_status = "solver_error"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "solution may be inaccurate": the residual decides
            try:
                model.problem.solve(solver=self.solver, **opts)
                cvx_status = model.problem.status
            except cp.error.SolverError:
                cvx_status = "solver_error"
        status = _STATUS.get(cvx_status, Status.FAILED)
        try:
            x, lam, nu = model.recover()
            x = np.asarray(x, dtype=np.float64)
        except Exception:  # noqa: BLE001 - no values after a failed solve
            x, lam, nu, status = None, None, None, Status.FAILED
        if x is None or status == Status.FAILED:
            n = getattr(problem, "num_variables", 1)
            x, lam, nu = np.full(n, np.nan), np.zeros(0), np.zeros(0)
            status = Status.FAILED
        stats = {
            "backend": self.name,
            "solver": self.solver,
            "solver_status": cvx_status,
            "iterations": _iterations(model.problem),
            # model build + cvxpy's canonicalisation: setup, reported apart by solvers.bench
            "setup_s": build_s + float(getattr(model.problem, "compilation_time", None) or 0.0),
        }
        return RawResult(
            x=x,
            inequality_multipliers=np.asarray(lam, dtype=np.float64),
            equality_multipliers=np.asarray(nu, dtype=np.float64),
            status=int(status),
            stats=stats,
        )


def _iterations(problem) -> int | None:
    stats = getattr(problem, "solver_stats", None)
    return None if stats is None else stats.num_iters


__all__ = ["DEFAULT_OPTIONS", "CvxpyModel", "CvxpySolver"]
