"""Convex-programme backends behind one interface (knows nothing of privacy).

A problem (:class:`ConvexProblem`) is data plus its objective, constraints and
one KKT residual shared by every backend; :func:`solve` runs a registered
backend and returns a :class:`Solution` (value, status code, residual, stats)
judged by that residual.  Backends: ``"jax"`` (the problem's own JAX solver:
closed form or Newton; jittable, any device) and ``"cvxpy"`` (the CPU
reference with Clarabel; imported lazily).  ``solvers`` never imports
``dpjax`` (dependencies run ``dpjax -> solvers``).

Example:
  >>> import jax; jax.config.update("jax_enable_x64", True)
  >>> from solvers import PowerAllocation, solve
  >>> prob = PowerAllocation.create([1.0, 4.0], budget=1.0, objective_power=2, constraint_power=2)
  >>> sol = solve(prob, "jax")
  >>> round(float(sol.value), 6), int(sol.status)
  (9.0, 0)
"""

from solvers._cvxpy_backend import CvxpyBackend, CvxpyModel
from solvers._jax_backend import JaxBackend
from solvers._problem import ConvexProblem
from solvers._registry import Backend, backends, get_backend, register_backend, solve
from solvers._solution import RawResult, Residual, Solution, Status
from solvers.allocation import PowerAllocation
from solvers.spherical_kl import SphericalKL

register_backend(JaxBackend())
register_backend(CvxpyBackend())

__all__ = [
    "Backend",
    "ConvexProblem",
    "CvxpyBackend",
    "CvxpyModel",
    "JaxBackend",
    "PowerAllocation",
    "RawResult",
    "Residual",
    "Solution",
    "SphericalKL",
    "Status",
    "backends",
    "get_backend",
    "register_backend",
    "solve",
]
