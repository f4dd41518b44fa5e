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
from hypothesis import given, settings
from hypothesis import strategies as st

import solvers
from dpjax.inid import gaussian_scales, laplace_scales, make_profile
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


# --- cvxpy reference vs the paper's closed forms (acceptance: 1e-8 relative, K <= 1000) ------

#: (name, p, q, weighted): Gaussian l_p^p error (q = 2; eq. 9, Theorem 4 for p = 2),
#: weighted MSE (Remark 4), Laplace l_p^p error (q = 1; eq. 12, Theorem 5 for p = 2)
ALLOCATIONS = [
    ("gaussian-mse", 2.0, 2.0, False),
    ("gaussian-l1", 1.0, 2.0, False),
    ("gaussian-weighted-mse", 2.0, 2.0, True),
    ("laplace-mse", 2.0, 1.0, False),
    ("laplace-l1", 1.0, 1.0, False),
]


def _profile(kind, k, seed):
    rng = np.random.default_rng(seed)
    if kind == "random-uniform":
        return rng.uniform(0.05, 1.0, k)
    if kind == "random-lognormal":
        return rng.lognormal(0.0, 1.0, k)
    if kind == "random-span-1e-6":  # log-uniform sensitivities spanning 1e-6..1
        return np.exp(rng.uniform(np.log(1e-6), 0.0, k))
    return make_profile(kind, k)


def _paper_scales(lam, p, q, w):
    """eq. (9) / eq. (12) via dpjax.inid (mu0 = 0.3 for the Gaussian, epsilon = 0.7 for Laplace)."""
    if q == 2.0:
        return np.asarray(gaussian_scales(lam, 0.3, p, w)), 0.09
    return np.asarray(laplace_scales(lam, 0.7, p, w)), 0.7


def _check_reference(lam, p, q, weighted, seed):
    """cvxpy + Clarabel (+ KKT polish) against the paper's closed form; returns the discrepancy."""
    w = np.random.default_rng(seed + 1).uniform(0.5, 2.0, lam.size) if weighted else None
    x_ref, budget = _paper_scales(lam, p, q, 1.0 if w is None else w)
    pos = lam > 0
    prob = PowerAllocation.create(lam[pos] ** q, budget, p, q,
                                  weights=None if w is None else w[pos])
    sol = solve(prob, "cvxpy")
    assert sol.stats["solver"] == "CLARABEL"
    assert int(sol.status) == Status.OPTIMAL, sol.stats
    x = np.zeros_like(lam)
    x[pos] = np.asarray(sol.x)
    err = float(np.max(np.abs(x[pos] / x_ref[pos] - 1)))
    assert np.all(x_ref[~pos] == 0)
    assert err < 1e-8
    value_ref = float(np.sum((1.0 if w is None else w) * x_ref**p))
    assert abs(float(sol.value) / value_ref - 1) < 1e-8
    assert float(sol.residual.total) < 1e-12  # honest: per-coordinate stationarity included
    return err


@pytest.mark.parametrize("k,kind", [
    (1, "random-uniform"),
    *[(k, kind) for k in (10, 100) for kind in (
        "random-uniform", "random-lognormal", "random-span-1e-6",
        "uniform", "linear", "quadratic", "one-hot")],
    # the hardest at K = 1000 (uniform/linear in the bench): the same property at K = 100
    # runs by default, K = 1000 in the slow tier
    *[pytest.param(1000, kind, marks=pytest.mark.slow) for kind in (
        "random-uniform", "random-lognormal", "random-span-1e-6", "quadratic", "one-hot")],
    (10, "exponential"), (50, "exponential"),
])
def test_cvxpy_reference_agrees_with_closed_forms_to_1e_8(k, kind):
    """Acceptance of issue 5: the scales themselves (not only the value) agree to 1e-8 relative.

    The IPM point alone does not (up to 6e-4 relative error at K = 1000; see
    solvers/_polish.py); the reference's KKT polish does, from the problem's own
    derivatives.  Zero-sensitivity entries of one-hot are
    dropped before the programme (scale 0, as dpjax.inid.design does).
    """
    lam = _profile(kind, k, seed=k)
    for _, p, q, weighted in ALLOCATIONS:
        _check_reference(lam, p, q, weighted, seed=k)


@given(st.integers(1, 4), st.floats(0.0, 5.0), st.sampled_from(ALLOCATIONS),
       st.integers(0, 2**31))
@settings(max_examples=25)
def test_cvxpy_reference_agrees_on_random_small_profiles(k, spread, allocation, seed):
    """Lognormal sensitivities with log-spread up to 5 (ranges up to ~1e-7..1e7 at K = 4).

    Few distinct K: each new K compiles the polish once (~1-2 s).
    """
    lam = np.random.default_rng(seed).lognormal(0.0, spread, k)
    _, p, q, weighted = allocation
    _check_reference(lam, p, q, weighted, seed)


@pytest.mark.parametrize("k,kind,p,q", [
    (1000, "quadratic", 2.0, 2.0),
    (1000, "random-span-1e-6", 2.0, 2.0),
    (50, "exponential", 2.0, 1.0),
])
def test_ipm_point_alone_is_reported_honestly(k, kind, p, q):
    """Without the polish the IPM point misses the low-share coordinates, and says so.

    The residual folds in per-coordinate stationarity, so its total bounds the
    worst relative error of the scales (it is about (p + q) / 2 times it): the
    status is INACCURATE exactly when the scales are off by more than ~tol.
    """
    lam = _profile(kind, k, seed=k)
    x_ref, budget = _paper_scales(lam, p, q, 1.0)
    prob = PowerAllocation.create(lam**q, budget, p, q)
    sol = solve(prob, "cvxpy", polish=False)
    err = float(np.max(np.abs(np.asarray(sol.x) / x_ref - 1)))
    assert "merit_before" not in sol.stats  # no polish ran
    assert err > 1e-6  # the IPM floor (measured 3e-4, 4e-6, 8)
    assert float(sol.residual.total) >= min(err, 0.9)
    assert int(sol.status) != Status.OPTIMAL
    # and the old global measure alone would have hidden it (stationarity / |f| ~ gap)
    base = solvers.ConvexProblem.residual(prob, sol.x, sol.inequality_multipliers)
    assert float(base.stationarity) < err
    # the default (polished) reference recovers every coordinate
    polished = solve(prob, "cvxpy")
    assert polished.stats["merit_before"] == pytest.approx(float(sol.residual.stationarity),
                                                          rel=1e-6)
    assert float(np.max(np.abs(np.asarray(polished.x) / x_ref - 1))) < 1e-8


@pytest.mark.parametrize("k,p,q,converges", [
    # both sides of the boundary by default; the other allocations in the slow tier
    pytest.param(200, 2.0, 1.0, True, marks=pytest.mark.slow),
    pytest.param(200, 1.0, 2.0, True, marks=pytest.mark.slow),
    (355, 2.0, 2.0, True),
    pytest.param(355, 1.0, 1.0, True, marks=pytest.mark.slow),
    (355, 2.0, 1.0, False),
    pytest.param(355, 1.0, 2.0, False, marks=pytest.mark.slow),
])
def test_exponential_profile_boundary(k, p, q, converges):
    """Where the reference stops: lambda_i ~ e^i spans e^-(K-1).

    The IPM misses the low-share coordinates by O(1) or more (x off by 1e6 at
    K = 90, Laplace MSE).  Damped Newton in log coordinates walks such a
    coordinate back by about 1/p (too large) or 1/q (too small) in log per
    step, then converges quadratically: within the 100 polish steps up to
    K = 200 for every allocation, and up to the representable K = 355 when
    p = q.  At K = 355 the Gaussian l1 IPM point is not finite and the Laplace
    MSE one is off by ~1e37 (the polish fails from there from K ~ 300): the
    status then says so.  Beyond K = 355
    (q = 2), lambda^2 is subnormal and the programme cannot be stated in
    float64 at all (next test).
    """
    lam = make_profile("exponential", k)
    x_ref, budget = _paper_scales(lam, p, q, 1.0)
    sol = solve(PowerAllocation.create(lam**q, budget, p, q), "cvxpy")
    err = float(np.max(np.abs(np.asarray(sol.x) / x_ref - 1)))
    if converges:
        assert int(sol.status) == Status.OPTIMAL and err < 1e-8
    else:
        assert int(sol.status) != Status.OPTIMAL
        assert not err <= 1e-8  # NaN (failed) or off
        assert not float(sol.residual.total) <= 1e-8


def test_underflowing_coefficients_are_rejected():
    """Coefficients below the smallest normal float64 cannot be stated (exact boundary).

    Zeros would drop a coordinate (no noise); subnormals are flushed to zero by
    XLA on CPU.  For the l2-normalised exponential profile, lambda^2 stays
    normal up to K = 355; for the l1-normalised one, lambda up to K = 708.
    """
    with pytest.raises(ValueError, match="underflow"):
        PowerAllocation.create(make_profile("exponential", 1000)[-400:] ** 2, 0.09)
    with pytest.raises(ValueError, match="subnormal"):
        PowerAllocation.create(make_profile("exponential", 356) ** 2, 0.09)
    # make_profile now rounds entries below the least normal float up to it (an upper
    # bound on the sensitivity), so a subnormal coefficient is stated directly
    with pytest.raises(ValueError, match="subnormal"):
        PowerAllocation.create(np.array([0.5, 1e-310]), 0.7, 2.0, 1.0)
    with pytest.raises(ValueError, match="weights"):
        PowerAllocation.create([1.0, 2.0], 1.0, weights=[1.0, 1e-310])
    prob = PowerAllocation.create(make_profile("exponential", 355) ** 2, 0.09)
    x, _, _ = prob.closed_form()
    lam = make_profile("exponential", 355)
    np.testing.assert_allclose(x, gaussian_scales(lam, 0.3), rtol=1e-12)
    PowerAllocation.create(make_profile("exponential", 708, norm="l1"), 0.7, 2.0, 1.0)


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
