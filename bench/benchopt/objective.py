"""benchopt Objective: a convex programme of ``solvers``, judged by its own KKT residual.

``evaluate_result`` never trusts a solver: it evaluates the problem's shared
KKT residual at the returned point and multipliers (float64) and reports
``value`` (the objective there), ``residual`` and whether the point counts
as solved at 1e-6 and 1e-8 (``solvers.bench.runner.verify``).
"""

from benchopt import BaseObjective


class Objective(BaseObjective):
    """The programme handed over by a dataset (a ``solvers.ConvexProblem``)."""

    name = "convex-programme-kkt"
    url = "https://github.com/"  # the repository's own README documents the benchmark
    requirements = ["pip:cvxpy", "pip:clarabel"]
    min_benchopt_version = "1.5"
    sampling_strategy = "run_once"

    def set_data(self, problem, instance):
        """Keep the problem and its reproducible name (from ``Dataset.get_data``)."""
        import jax

        jax.config.update("jax_enable_x64", True)
        self.problem = problem
        self.instance = instance

    def get_objective(self):
        """What every solver receives in ``set_objective``."""
        return dict(problem=self.problem)

    def evaluate_result(self, x, lam, nu):
        """Verify the answer by the problem's residual (the solver's status is not consulted)."""
        from solvers.bench.runner import TOLERANCES, verify

        residual, value = verify(self.problem, x, lam, nu)
        out = dict(value=value, residual=residual)
        for tol in TOLERANCES:
            out[f"solved_{tol:g}"] = float(residual <= tol)
        return out

    def get_one_result(self):
        """A result of the right shape (the problem's start where it has one)."""
        import numpy as np

        n = self.problem.num_variables
        x = np.asarray(self.problem.reference()) if hasattr(self.problem, "reference") \
            else np.ones(n)
        lam = np.zeros(np.shape(self.problem.inequality_constraints(x)))
        nu = np.zeros(np.shape(self.problem.equality_constraints(x)))
        return dict(x=x, lam=lam, nu=nu)
