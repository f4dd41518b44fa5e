r"""Solver registry and the single entry point :func:`solve`.

A solver is given to :func:`solve` by registered name or as an object (the
:class:`solvers.Solver` protocol).  Names: ``"jax"`` (the problem's default
JAX solver, :meth:`default_solver`), ``"cvxpy"`` (the CPU reference),
``"closed-form"``, ``"barrier-newton"`` and ``"kkt-polish"``; others may be
added with :func:`register_backend`.  :func:`solve` evaluates the objective
and the problem's shared KKT residual at what the solver returned and
downgrades an ``OPTIMAL`` status to ``INACCURATE`` when that residual exceeds
``tol``:

.. math::
   \text{status} = \begin{cases}
     \text{FAILED} & \text{OPTIMAL and } (r = \text{NaN or } x \notin \mathbb{R}^n)\\
     \text{INACCURATE} & \text{OPTIMAL and } r > \text{tol} \\
     \text{the solver's} & \text{otherwise.}
   \end{cases}

with ``r = problem.residual(x, lambda, nu).total``.  Everything after the
solver call is written with ``jnp.where`` (no Python branching on values),
so ``solve`` is jittable whenever the solver is.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from solvers._names import NameRegistry
from solvers._problem import ConvexProblem
from solvers._solution import RawResult, Solution, Status
from solvers._solver import Solver

_BACKENDS = NameRegistry("solver backend")


class DefaultJaxSolver:
    """The name ``"jax"``: whichever JAX solver the problem declares as its default.

    A problem declares it with a ``default_solver()`` method returning a
    solver object (:class:`solvers.PowerAllocation`: the closed form;
    :class:`solvers.SphericalKL`: the barrier Newton method).
    """

    name = "jax"
    jittable = True

    def for_problem(self, problem: Any) -> Solver:
        """The solver object ``problem.default_solver()``.

        Args:
          problem: the problem.

        Raises:
          NotImplementedError: the problem declares no JAX solver.
        """
        default = getattr(problem, "default_solver", None)
        if default is None:
            name = getattr(problem, "name", type(problem).__name__)
            raise NotImplementedError(
                f"{name}: no JAX solver (default_solver) is defined; pass a solver object "
                "or a registered name such as 'cvxpy'")
        return default()

    def solve(self, problem: Any, **options) -> RawResult:
        """Solve with the problem's default solver; ``options`` configure that solver.

        Args:
          problem: the problem.
          **options: passed to the default solver's ``solve``.
        """
        return self.for_problem(problem).solve(problem, **options)


def register_backend(backend: Solver) -> Solver:
    """Register a solver object under ``backend.name`` (replaces an existing one).

    Args:
      backend: an object with ``name``, ``jittable`` and ``solve(problem, **options)``.

    Returns:
      ``backend`` (so it can be used as a decorator on an instance).
    """
    return _BACKENDS.register(backend)


def get_backend(name: str) -> Solver:
    """The solver registered under ``name``.

    Args:
      name: a registered name (:func:`backends`).

    Raises:
      ValueError: no solver is registered under ``name``.
    """
    return _BACKENDS.get(name)


def backends() -> tuple[str, ...]:
    """Names of the registered solvers, sorted."""
    return _BACKENDS.names()


def resolve(solver: str | Solver) -> Solver:
    """A solver object from a registered name or an object.

    Args:
      solver: a registered name or an object with ``name``, ``jittable`` and ``solve``.

    Raises:
      ValueError: unknown name.
      TypeError: neither a name nor a solver object.
    """
    if isinstance(solver, str):
        return get_backend(solver)
    if not callable(getattr(solver, "solve", None)) or not hasattr(solver, "name"):
        raise TypeError(f"solver must be a registered name ({', '.join(backends())}) or an "
                        f"object with name, jittable and solve(problem), got {solver!r}")
    return solver


def solve(
    problem: ConvexProblem, solver: str | Solver = "jax", /, *, tol: float = 1e-8, **options
) -> Solution:
    """Solve ``problem`` with ``solver``; judge the answer by ``problem.residual``.

    Args:
      problem: a :class:`ConvexProblem`.
      solver: a registered name (``"jax"``: the problem's default JAX solver;
        ``"cvxpy"``; :func:`backends` lists all) or a solver object.
      tol: a solver's ``OPTIMAL`` whose shared residual exceeds ``tol`` is
        reported as ``INACCURATE`` (module docstring).
      **options: passed to the solver's ``solve`` (e.g. ``polish=False`` for
        ``"cvxpy"``, ``max_iterations=50`` for the barrier Newton method).

    Returns:
      A :class:`Solution`: the point, its objective and status, the shared
      residual, multipliers and the solver's stats.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from solvers import ClosedForm, PowerAllocation, solve
      >>> prob = PowerAllocation.create([1.0, 4.0], budget=1.0)
      >>> float(solve(prob, ClosedForm()).value) == float(solve(prob, "jax").value)
      True
    """
    chosen = resolve(solver)
    raw = chosen.solve(problem, **options)
    x = jnp.asarray(raw.x)
    lam = jnp.asarray(raw.inequality_multipliers)
    nu = jnp.asarray(raw.equality_multipliers)
    res = problem.residual(x, lam, nu)
    status = jnp.asarray(raw.status, dtype=jnp.int32)
    bad = jnp.isnan(res.total) | ~jnp.all(jnp.isfinite(x))
    status = jnp.where((status == Status.OPTIMAL) & bad, Status.FAILED, status)
    status = jnp.where((status == Status.OPTIMAL) & (res.total > tol), Status.INACCURATE, status)
    stats = dict(raw.stats)
    if not chosen.jittable:  # jittable solvers keep stats numeric so Solution can leave jax.jit
        stats.setdefault("backend", chosen.name)
    return Solution(
        x=x,
        value=problem.objective(x),
        status=status,
        residual=res,
        inequality_multipliers=lam,
        equality_multipliers=nu,
        stats=stats,
    )


__all__ = ["DefaultJaxSolver", "backends", "get_backend", "register_backend", "resolve", "solve"]
