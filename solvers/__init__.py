"""Convex programmes and the solvers that solve them (knows nothing of privacy).

A problem (:class:`ConvexProblem`) is data plus its objective, constraints and
one KKT residual shared by every solver, plus the hooks its solvers read
(derivatives, structure).  A solver is an object: configured when built,
stateless across problems, run by :func:`solve`, which returns a
:class:`Solution` (value, status code, residual, stats) judged by the
problem's residual.  JAX solvers (:class:`IterativeSolver`: ``init`` /
``step`` / ``terminate`` / ``postprocess`` under ``lax.while_loop``;
jittable, any device): :class:`ClosedForm`, :class:`BarrierNewton`; host
solvers: :class:`CvxpySolver` (the CPU reference with Clarabel; imported
lazily) and :class:`KKTPolish` (Newton polish of another solver's point).
Registered names: ``"jax"`` (the problem's default JAX solver), ``"cvxpy"``,
``"closed-form"``, ``"barrier-newton"``, ``"kkt-polish"``.  ``solvers``
never imports ``dpjax`` (dependencies run ``dpjax -> solvers``).

Example:
  >>> import jax; jax.config.update("jax_enable_x64", True)
  >>> from solvers import PowerAllocation, solve
  >>> prob = PowerAllocation.create([1.0, 4.0], budget=1.0, objective_power=2, constraint_power=2)
  >>> sol = solve(prob, "jax")
  >>> round(float(sol.value), 6), int(sol.status)
  (9.0, 0)
"""

from solvers._problem import ConvexProblem
from solvers._registry import DefaultJaxSolver, backends, get_backend, register_backend, solve
from solvers._solution import RawResult, Residual, Solution, Status
from solvers._solver import IterativeSolver, Solver, require_hooks
from solvers.allocation import PowerAllocation
from solvers.barrier_newton import BarrierNewton
from solvers.closed_form import ClosedForm
from solvers.cvxpy_reference import CvxpyModel, CvxpySolver
from solvers.kkt_polish import KKTPolish
from solvers.linear_program import LinearProgram
from solvers.spherical_kl import SphericalKL

for _solver in (DefaultJaxSolver(), CvxpySolver(), ClosedForm(), BarrierNewton(), KKTPolish()):
    register_backend(_solver)
del _solver

__all__ = [
    "BarrierNewton",
    "ClosedForm",
    "ConvexProblem",
    "CvxpyModel",
    "CvxpySolver",
    "DefaultJaxSolver",
    "IterativeSolver",
    "KKTPolish",
    "LinearProgram",
    "PowerAllocation",
    "RawResult",
    "Residual",
    "Solution",
    "Solver",
    "SphericalKL",
    "Status",
    "backends",
    "get_backend",
    "register_backend",
    "require_hooks",
    "solve",
]
