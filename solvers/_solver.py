r"""The solver side of the interface: what a solver is, and the loop every JAX solver shares.

A solver is an object with a ``name``, a ``jittable`` flag and
``solve(problem, **options) -> RawResult`` (the :class:`Solver` protocol); it
is configured when it is built (``BarrierNewton(max_iterations=50)``) and
holds no per-problem state, so one solver object serves any problem that
provides the hooks it ``requires`` (:func:`require_hooks` names what is
missing).

A JAX solver derives from :class:`IterativeSolver`, in the style of
optimistix's ``init`` / ``step`` / ``terminate`` / ``postprocess`` split:

.. math::
   s_0 = \mathrm{init}(P, x_0), \qquad
   s_{k+1} = \mathrm{step}(P, s_k) \ \text{while not } \mathrm{terminate}(P, s_k), \qquad
   \mathrm{result} = \mathrm{postprocess}(P, s_K),

with the state ``s`` a ``NamedTuple`` (a pytree) and the loop a
``lax.while_loop`` (:meth:`IterativeSolver.run`), so ``solve`` works under
``jax.jit`` and ``jax.vmap``.  Options given to ``solve`` replace the
solver's configuration for that call (``dataclasses.replace``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Protocol

import jax
from jax import Array

from solvers._solution import RawResult


class Solver(Protocol):
    """What :func:`solvers.solve` needs from a solver (a registered backend or an object).

    Attributes:
      name: short name used in messages and stats.
      jittable: ``True`` when ``solve`` may run under ``jax.jit`` (its stats are then numeric).
    """

    name: str
    jittable: bool

    def solve(self, problem: Any, **options) -> RawResult:
        """Solve ``problem``; ``options`` configure this call only."""
        ...


def require_hooks(solver: Any, problem: Any, hooks: tuple[str, ...]) -> None:
    """Raise a clear error when ``problem`` lacks a hook that ``solver`` needs.

    Args:
      solver: the solver (its ``name`` is used in the message).
      problem: the problem (its ``name`` is used in the message).
      hooks: attribute names the solver reads from the problem.

    Raises:
      NotImplementedError: naming the missing hooks, the problem, and its default solver.
    """
    missing = [h for h in hooks if not hasattr(problem, h)]
    if missing:
        pname = getattr(problem, "name", type(problem).__name__)
        default = getattr(problem, "default_solver", None)
        hint = f"its default JAX solver is {default().name!r}; " if default is not None else ""
        raise NotImplementedError(
            f"solver {solver.name!r} needs {', '.join(missing)} from the problem, which "
            f"{pname!r} does not provide ({hint}'cvxpy' needs only a cvxpy model)")


class IterativeSolver:
    """Base class of the JAX solvers: ``init`` / ``step`` / ``terminate`` / ``postprocess``.

    Subclasses are frozen dataclasses whose fields are the configuration
    (tolerances, iteration limits); they set ``name`` and ``requires`` (the
    hooks read from the problem) and implement the four methods.  The state
    is a ``NamedTuple`` defined beside each solver.
    """

    name: ClassVar[str] = "iterative"
    jittable: ClassVar[bool] = True
    #: names of the problem's hooks this solver reads (checked before it runs)
    requires: ClassVar[tuple[str, ...]] = ()

    def init(self, problem: Any, start: Any = None) -> Any:  # pragma: no cover - abstract
        """The state before the first step (``start``: an optional starting point)."""
        raise NotImplementedError

    def step(self, problem: Any, state: Any) -> Any:  # pragma: no cover - abstract
        """One iteration: ``state -> state`` (pure; runs inside ``lax.while_loop``)."""
        raise NotImplementedError

    def terminate(self, problem: Any, state: Any) -> Array:  # pragma: no cover - abstract
        """A scalar boolean: ``True`` once the loop should stop."""
        raise NotImplementedError

    def postprocess(self, problem: Any, state: Any) -> RawResult:  # pragma: no cover
        """The :class:`RawResult` (point, multipliers, status, stats) of the final state."""
        raise NotImplementedError

    def run(self, problem: Any, start: Any = None) -> Any:
        r"""``init``, then ``step`` under ``lax.while_loop`` until ``terminate``; the final state.

        Args:
          problem: a problem providing every hook in ``requires``.
          start: optional starting point, passed to :meth:`init`.

        Returns:
          The final state (``terminate(problem, state)`` is ``True``, or the
          solver's own iteration limit stopped it).
        """
        require_hooks(self, problem, self.requires)
        state = self.init(problem, start)
        return jax.lax.while_loop(lambda s: ~self.terminate(problem, s),
                                  lambda s: self.step(problem, s), state)

    def solve(self, problem: Any, start: Any = None, **options) -> RawResult:
        """:meth:`run` then :meth:`postprocess`; ``options`` replace configuration fields.

        Args:
          problem: the problem.
          start: optional starting point (see :meth:`init`).
          **options: configuration fields to replace for this call.

        Returns:
          The :class:`RawResult` that :func:`solvers.solve` judges by the shared residual.
        """
        solver = self.replace(**options)
        return solver.postprocess(problem, solver.run(problem, start))

    def replace(self, **options) -> IterativeSolver:
        """A copy with some configuration fields replaced (a clear error for unknown ones).

        Args:
          **options: field name to new value.
        """
        if not options:
            return self
        is_dc = dataclasses.is_dataclass(self)
        fields = {f.name for f in dataclasses.fields(self)} if is_dc else set()
        unknown = sorted(set(options) - fields)
        if unknown:
            known = ", ".join(sorted(fields)) or "none"
            raise TypeError(f"solver {self.name!r} has no option {', '.join(unknown)} "
                            f"(its options: {known})")
        return dataclasses.replace(self, **options)


__all__ = ["IterativeSolver", "Solver", "require_hooks"]
