"""benchopt Solver: the problem's default JAX solver, compiled before the timing."""

from benchopt import BaseSolver


class Solver(BaseSolver):
    """``solve(problem, "jax")`` in float64 or on the problem cast to float32."""

    name = "jax"
    parameters = {"dtype": ["float64", "float32"]}
    sampling_strategy = "run_once"
    requirements = ["pip:jax"]

    def set_objective(self, problem):
        """Compile ahead of time (``JaxBackend``): benchopt times ``run`` only."""
        import jax.numpy as jnp

        from solvers.bench.runner import JaxBackend, cast_problem

        backend = JaxBackend(self.dtype)
        self.problem = cast_problem(problem, jnp.float32) if self.dtype == "float32" else problem
        self.compiled, _ = backend.compiled_program(self.problem)

    def warm_up(self):
        """One solve before the timed ones (the compile already happened)."""
        self.run(None)

    def run(self, _):
        """One compiled solve."""
        import jax

        self.out = jax.block_until_ready(self.compiled(self.problem))

    def get_result(self):
        """Point and multipliers for ``Objective.evaluate_result``."""
        import numpy as np

        x, lam, nu = (np.asarray(v) for v in self.out[:3])  # then status, iterations
        return dict(x=x, lam=lam, nu=nu)
