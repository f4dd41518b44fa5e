"""The ``jax`` backend: the problem's own JAX solver (closed form, Newton, ...).

Dispatches to ``problem.jax_solve(**options) -> RawResult``.  Jittable and
device-agnostic when the problem's solver is.
"""

from __future__ import annotations

from solvers._solution import RawResult


class JaxBackend:
    name = "jax"
    jittable = True

    def solve(self, problem, **options) -> RawResult:
        solver = getattr(problem, "jax_solve", None)
        if solver is None:
            raise NotImplementedError(f"{problem.name}: no JAX solver (jax_solve) is defined")
        return solver(**options)
