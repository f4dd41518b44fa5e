"""benchopt Solver: cvxpy with Clarabel, SCS or ECOS at the tight tolerances of the runner."""

from benchopt import BaseSolver


class Solver(BaseSolver):
    """``solvers.CvxpySolver``: benchopt times ``run``, so its time is the runner's end-to-end
    time of a warmed-up size (model build and canonicalisation included)."""

    name = "cvxpy"
    parameters = {"solver": ["CLARABEL", "SCS", "ECOS"]}
    sampling_strategy = "run_once"
    requirements = ["pip:cvxpy", "pip:clarabel", "pip:scs", "pip:ecos"]

    def skip(self, problem):
        """Skip solvers that are not installed."""
        import cvxpy as cp

        if self.solver not in cp.installed_solvers():
            return True, f"{self.solver} is not installed"
        return False, None

    def set_objective(self, problem):
        """Keep the problem; solver options as in ``solvers.bench.runner.CVXPY_SETTINGS``."""
        from solvers.bench.runner import CVXPY_SETTINGS
        from solvers.cvxpy_reference import CvxpySolver

        self.problem = problem
        _, tight = CVXPY_SETTINGS.get(self.solver, (None, {}))
        self.backend = CvxpySolver(solver=self.solver, options=tuple(tight.items()))

    def warm_up(self):
        """Untimed, as in ``python -m solvers.bench``: the solver's lazy imports, then one
        whole solve of this size (the model's JAX ops and the Newton polish compile)."""
        from solvers.bench.cvxpy_backend import warm_up

        warm_up(self.problem, self.solver)
        self.backend.solve(self.problem)

    def run(self, _):
        """One solve."""
        self.raw = self.backend.solve(self.problem)

    def get_result(self):
        """Point and multipliers for ``Objective.evaluate_result`` (NaN after a failure)."""
        import numpy as np

        return dict(x=np.asarray(self.raw.x), lam=np.asarray(self.raw.inequality_multipliers),
                    nu=np.asarray(self.raw.equality_multipliers))
