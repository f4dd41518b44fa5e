"""solvers/: the common interface and the power-allocation programme.

References: the closed form (independent derivation, Hölder equality case),
cvxpy + Clarabel (the reference backend), and the shared KKT residual.
"""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import solvers
from solvers import PowerAllocation, RawResult, Status, solve


def _problem(k, p, q, seed, weighted=True):
    rng = np.random.default_rng(seed)
    lam = rng.uniform(0.05, 1.0, k)
    w = rng.uniform(0.5, 2.0, k) if weighted else None
    budget = 0.3**q if q == 2 else 0.7
    return PowerAllocation.create(lam**q, budget, p, q, weights=w)


def _closed_form_np(a, w, c, p, q):
    """Independent NumPy evaluation of the closed form (module docstring of allocation)."""
    s = np.sum(a ** (p / (p + q)) * w ** (q / (p + q)))
    x = (a / w) ** (1 / (p + q)) * (s / c) ** (1 / q)
    return x, s ** ((p + q) / q) / c ** (p / q)


@pytest.mark.parametrize("p,q", [(2.0, 2.0), (1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (3.0, 2.0)])
def test_jax_backend_is_the_closed_form_and_kkt_optimal(p, q):
    prob = _problem(300, p, q, seed=1)
    sol = solve(prob, "jax")
    x_ref, v_ref = _closed_form_np(np.asarray(prob.coefficients), np.asarray(prob.weights),
                                   float(prob.budget), p, q)
    assert int(sol.status) == Status.OPTIMAL
    np.testing.assert_allclose(sol.x, x_ref, rtol=1e-12)
    np.testing.assert_allclose(sol.value, v_ref, rtol=1e-12)
    assert float(sol.residual.total) < 1e-12
    # the constraint is active (7)/(11)
    assert abs(float(prob.inequality_constraints(sol.x)[0])) < 1e-13


@pytest.mark.parametrize("k", [2, 10, 100, 1000])
@pytest.mark.parametrize("p,q", [(2.0, 2.0), (1.0, 2.0), (2.0, 1.0), (1.0, 1.0)])
def test_cvxpy_reference_agrees_with_closed_form(k, p, q):
    """Acceptance: optimal values agree to 1e-8 relative up to K = 1000.

    An interior-point method pins the optimal *value* to about its gap
    tolerance (1e-12 here) but the *point* only to about its square root
    where the objective is flat (error in x is second order in the value),
    so the scales are compared at 1e-3 and the point is judged by the
    shared KKT residual.
    """
    prob = _problem(k, p, q, seed=k)
    ref = solve(prob, "cvxpy")
    fast = solve(prob, "jax")
    assert ref.stats["backend"] == "cvxpy" and ref.stats["solver"] == "CLARABEL"
    assert int(ref.status) in (Status.OPTIMAL, Status.INACCURATE)
    assert abs(float(ref.value) / float(fast.value) - 1) < 1e-8
    np.testing.assert_allclose(ref.x, fast.x, rtol=1e-3)
    assert float(ref.residual.primal) < 1e-8
    assert float(ref.residual.total) < 1e-4
    assert float(fast.residual.total) < 1e-12


def test_residual_detects_a_suboptimal_point_and_solve_downgrades_status():
    prob = _problem(20, 2.0, 2.0, seed=3)
    x, _, lam = prob.closed_form()
    # move mass between two coordinates, staying on the constraint: feasible, not optimal
    x_bad = x.at[0].multiply(1.2)
    g = float(prob.inequality_constraints(x_bad)[0])
    x_bad = x_bad * (1 + g) ** (1 / 2)
    assert abs(float(prob.inequality_constraints(x_bad)[0])) < 1e-12
    assert float(prob.objective(x_bad)) > float(prob.objective(x))
    res = prob.residual(x_bad, jnp.reshape(lam, (1,)))
    assert float(res.stationarity) > 1e-2

    class Perturbed:
        name = "perturbed"
        jittable = True

        def solve(self, problem, **_):
            return RawResult(x_bad, jnp.reshape(lam, (1,)), jnp.zeros(0), Status.OPTIMAL, {})

    solvers.register_backend(Perturbed())
    sol = solve(prob, "perturbed")
    assert int(sol.status) == Status.INACCURATE
    assert not sol.ok


def test_generic_residual_matches_hand_kkt():
    """min x1^2 + x2^2 s.t. 1 - x1 - x2 <= 0: x* = (1/2, 1/2), lambda* = 1."""

    class Toy(solvers.ConvexProblem):
        def objective(self, x):
            return jnp.sum(x * x)

        def inequality_constraints(self, x):
            return jnp.reshape(1.0 - jnp.sum(x), (1,))

    r = Toy().residual(jnp.array([0.5, 0.5]), jnp.array([1.0]))
    assert float(r.total) == 0.0
    r = Toy().residual(jnp.array([0.5, 0.5]), jnp.array([-1.0]))
    assert float(r.dual) > 0 and float(r.stationarity) > 0
    r = Toy().residual(jnp.array([0.25, 0.25]), jnp.array([0.5]))
    assert float(r.primal) == pytest.approx(0.5)


def test_solve_is_jittable_and_vmappable_over_budgets():
    prob = _problem(50, 2.0, 2.0, seed=4, weighted=False)
    sol = jax.jit(lambda pr: solve(pr, "jax"))(prob)
    assert int(sol.status) == Status.OPTIMAL

    def value(budget):
        pr = PowerAllocation(prob.coefficients, prob.weights, budget, prob.objective_power,
                             prob.constraint_power)
        return solve(pr, "jax").value

    budgets = jnp.array([0.05, 0.09, 0.5])
    vals = jax.vmap(value)(budgets)
    # value scales as c^(-p/q) = 1/c
    np.testing.assert_allclose(vals * budgets, vals[0] * budgets[0], rtol=1e-12)


def test_errors_and_registry():
    with pytest.raises(ValueError, match="unknown solver backend"):
        solve(_problem(3, 2.0, 2.0, 0), "nope")
    with pytest.raises(ValueError, match="weights shape"):
        PowerAllocation.create([1.0, 2.0], 1.0, weights=[1.0])
    with pytest.raises(ValueError, match="coefficients"):
        PowerAllocation.create([1.0, -2.0], 1.0)
    with pytest.raises(ValueError, match="budget"):
        PowerAllocation.create([1.0, 2.0], 0.0)

    class NoSolver(solvers.ConvexProblem):
        name = "no-solver"

        def objective(self, x):
            return jnp.sum(x)

    with pytest.raises(NotImplementedError, match="no JAX solver"):
        solve(NoSolver(), "jax")
    with pytest.raises(NotImplementedError, match="no cvxpy model"):
        solve(NoSolver(), "cvxpy")
    assert {"jax", "cvxpy"} <= set(solvers.backends())


def test_solvers_imports_nothing_from_dpjax_and_cvxpy_lazily():
    code = (
        "import sys, solvers; "
        "assert not [m for m in sys.modules if m.split('.')[0] == 'dpjax'], 'dpjax imported'; "
        "assert 'cvxpy' not in sys.modules, 'cvxpy imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
