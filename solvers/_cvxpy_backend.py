"""The ``cvxpy`` backend: the CPU reference (cvxpy + Clarabel), imported lazily.

Not jittable, CPU only, float64.  The problem supplies its cvxpy model via
``problem.cvxpy_model(cp) -> CvxpyModel``; this driver solves it with
Clarabel at tight tolerances, maps the cvxpy status to :class:`Status` and
hands the primal point and multipliers (in the problem's own constraint
form) back to :func:`solvers.solve`, which judges them by the shared
residual (cf. jaxopt ``_src/cvxpy_wrapper.py``).  A conic interior-point
method determines the optimal *value* to about its gap tolerance, but the
*point* only to about the square root of it where the objective is flat:
compare points with that in mind and judge them by the residual.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from solvers._solution import RawResult, Status

#: Clarabel settings used unless overridden: the reference is run tight.
DEFAULT_OPTIONS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "max_iter": 400}


class CvxpyModel(NamedTuple):
    """A problem expressed in cvxpy.

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


class CvxpyBackend:
    name = "cvxpy"
    jittable = False

    def solve(self, problem, solver: str = "CLARABEL", **options) -> RawResult:
        builder = getattr(problem, "cvxpy_model", None)
        if builder is None:
            raise NotImplementedError(f"{problem.name}: no cvxpy model (cvxpy_model) is defined")
        try:
            import cvxpy as cp
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "the cvxpy backend needs cvxpy and clarabel: pip install 'dpjax[cvxpy]'"
            ) from err
        model = builder(cp)
        opts = dict(DEFAULT_OPTIONS) if solver.upper() == "CLARABEL" else {}
        opts.update(options)
        start = time.perf_counter()
        cvx_status = "solver_error"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "solution may be inaccurate": the residual decides
            try:
                model.problem.solve(solver=solver, **opts)
                cvx_status = model.problem.status
            except cp.error.SolverError:
                cvx_status = "solver_error"
        elapsed = time.perf_counter() - start
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
            "solver": solver,
            "solver_status": cvx_status,
            "solve_seconds": elapsed,
            "iterations": _iterations(model.problem),
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
