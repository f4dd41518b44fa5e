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

Where the problem asks for it (``cvxpy_polish = True``, or ``polish=True``),
the IPM point is then Newton-polished on its own KKT system
(:mod:`solvers._polish`): the IPM leaves a coordinate whose share of the
objective is ``s`` off by about ``gap / (cones * s)`` *relative*, which no
Clarabel setting removes (see that module); the polish resolves every
coordinate to rounding.  ``stats`` then records ``merit_before`` (the IPM
point's componentwise residual), ``merit_after``, ``polish_iterations`` and
``polish_seconds``; the returned residual is always recomputed by
:func:`solvers.solve`.
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

    def solve(self, problem, solver: str = "CLARABEL", polish: bool | None = None,
              **options) -> RawResult:
        """Solve ``problem.cvxpy_model(cp)``; ``polish`` (default: the problem's
        ``cvxpy_polish`` attribute, else ``False``) runs :func:`solvers._polish.kkt_polish`
        on the IPM point; ``options`` go to the cvxpy solver."""
        if polish is None:
            polish = bool(getattr(problem, "cvxpy_polish", False))
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
        if polish and status in (Status.OPTIMAL, Status.MAX_ITERATIONS):
            from solvers._polish import kkt_polish

            start = time.perf_counter()
            x, lam, nu, info = kkt_polish(problem, x, lam, nu)
            stats.update(info, polish_seconds=time.perf_counter() - start)
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
