r"""The closed-form solver: evaluate a problem's own optimality formula.

For a problem with a known optimum (hook ``closed_form() -> (x, value,
multipliers)``, e.g. Hölder's equality case of :class:`solvers.PowerAllocation`,
eqs. (9) and (12) of inid-noise-laplace-beats-gaussian)

.. math::
   s_0 = (x^\star, \lambda^\star, 0), \qquad \text{terminate}(s) = \text{True},

so the loop of :class:`solvers.IterativeSolver` takes no step; :meth:`ClosedForm.run`
skips it altogether, which keeps the answer differentiable (``jax.grad``
through a ``lax.while_loop`` is not defined).  The status is ``OPTIMAL``
when the point and multipliers are finite, ``FAILED`` otherwise; the shared
residual then judges it like any other solver's answer.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax.numpy as jnp
from jax import Array

from solvers._solution import RawResult, Status
from solvers._solver import IterativeSolver, require_hooks


class ClosedFormState(NamedTuple):
    """State of :class:`ClosedForm`.

    Attributes:
      x: the optimal point of the closed form.
      multipliers: multipliers of the inequality constraints ``g(x) <= 0``.
      iterations: steps taken (always 0).
    """

    x: Array
    multipliers: Array
    iterations: Array


@dataclasses.dataclass(frozen=True)
class ClosedForm(IterativeSolver):
    r"""Solver for problems with a closed-form optimum (hook ``closed_form``; module docstring).

    The problem's ``closed_form()`` returns ``(x, value, multipliers)`` with
    the multipliers of its (dimensionless) inequality constraints; problems
    with equality constraints are not served (their ``nu`` is not returned).
    Jittable, vmappable and differentiable; no options.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from solvers import ClosedForm, PowerAllocation, solve
      >>> sol = solve(PowerAllocation.create([1.0, 4.0], budget=1.0), ClosedForm())
      >>> round(float(sol.value), 12), int(sol.stats["iterations"])
      (9.0, 0)
    """

    name = "closed-form"
    requires = ("closed_form",)

    def init(self, problem: Any, start: Any = None) -> ClosedFormState:
        """Evaluate ``problem.closed_form()``.

        Args:
          problem: a problem with the ``closed_form`` hook.
          start: must be ``None`` (a closed form needs no starting point).
        """
        if start is not None:
            raise TypeError(f"solver {self.name!r} takes no starting point")
        x, _, lam = problem.closed_form()
        return ClosedFormState(x, jnp.reshape(lam, (-1,)), jnp.zeros((), jnp.int32))

    def step(self, problem: Any, state: ClosedFormState) -> ClosedFormState:
        """The identity: the closed form is the answer.

        Args:
          problem: the problem (unused).
          state: the state.
        """
        return state

    def terminate(self, problem: Any, state: ClosedFormState) -> Array:
        """Always ``True``.

        Args:
          problem: the problem (unused).
          state: the state (unused).
        """
        return jnp.ones((), bool)

    def run(self, problem: Any, start: Any = None) -> ClosedFormState:
        """:meth:`init` only (zero steps, no loop: the result stays differentiable).

        Args:
          problem: a problem with the ``closed_form`` hook.
          start: must be ``None``.
        """
        require_hooks(self, problem, self.requires)
        return self.init(problem, start)

    def postprocess(self, problem: Any, state: ClosedFormState) -> RawResult:
        """``OPTIMAL`` when point and multipliers are finite, else ``FAILED``.

        Args:
          problem: the problem (unused).
          state: the final state.
        """
        x, lam = state.x, state.multipliers
        finite = jnp.all(jnp.isfinite(x)) & jnp.all(jnp.isfinite(lam))
        status = jnp.where(finite, Status.OPTIMAL, Status.FAILED).astype(jnp.int32)
        return RawResult(x, lam, jnp.zeros((0,), x.dtype), status,
                         {"iterations": state.iterations})


__all__ = ["ClosedForm", "ClosedFormState"]
