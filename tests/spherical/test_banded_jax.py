"""The banded barrier-Newton solver in JAX (issue 35, item 6) against the host solver.

References: the host NumPy/SciPy solver :func:`dpjax.spherical.banded.solve_banded_kl` (same
method, independent linear algebra: LAPACK's ``dpbtrf``/``dpbtrs`` through
:func:`scipy.linalg.solveh_banded`), and ``solveh_banded`` itself for the block-tridiagonal
Cholesky.  Small windows (seconds each); m = 3000 is in the slow tier.
"""

import jax
import numpy as np
import pytest
from scipy.linalg import solveh_banded

from dpjax.numerics import Float64RequiredError
from dpjax.spherical import banded_jax as bj
from dpjax.spherical.banded import solve_banded_kl
from dpjax.spherical.banded_jax import band_cholesky_solve, solve_banded_kl_jax
from dpjax.spherical.geometric import design_geometric, plan, programme, solve_plan


def _instance(m, cost, n, **over):
    p = {**plan(m, cost, n), **over}  # over: e.g. another budget on the same plan
    prob, _, log_v, y_ref = programme(p)
    mu = np.exp(y_ref + log_v[: prob.N + 1])
    return prob, log_v[: prob.N + 1], y_ref, mu[:-1] / mu.sum()


def _agree(host, jx, log_v, mass_atol=1e-10, y_atol=1e-6):
    assert host["status"] == 0 and jx["status"] == 0
    assert jx["kl"] == pytest.approx(host["kl"], rel=1e-9)
    assert jx["mass_error"] < 1e-12 and jx["cost_error"] < 1e-12
    assert jx["gap"] <= 1e-9 * jx["kl"]
    mu_h, mu_j = np.exp(host["y"] + log_v), np.exp(jx["y"] + log_v)
    # the masses to 1e-10 of the whole; log densities to 1e-6 where the mass is not negligible
    # (the KL is flat along shells without mass: there y is fixed by the barrier only)
    np.testing.assert_allclose(mu_j, mu_h, rtol=0, atol=mass_atol)
    if y_atol is not None:
        heavy = mu_h > 1e-8
        np.testing.assert_allclose(jx["y"][heavy], host["y"][heavy], rtol=0, atol=y_atol)
    assert np.all(np.diff(jx["y"]) < 0)  # strictly monotone (the barrier keeps it inside)


@pytest.mark.parametrize("m, budget, n", [(10, 2.5, 8), (100, 100.0, 20)])
def test_jax_solver_matches_the_host_solver(m, budget, n):
    prob, log_v, y0, weight = _instance(m, budget, n)
    host = solve_banded_kl(prob, y0, weight)
    jx = solve_banded_kl_jax(prob, y0, weight)
    _agree(host, jx, log_v)
    # same path: t0 and the stages are the host's, so the step counts are close
    assert abs(jx["newton_steps"] - host["newton_steps"]) <= 3


def test_tail_fold_and_band_cut_match_the_host_solver():
    # m = 1000: a flat core left out (first > 0), a band cut short (b < n) and a long tail
    prob, log_v, y0, weight = _instance(1000, 1000.0, 40)
    assert prob.half_width < 40 and prob.log_w.shape[0] > prob.N + prob.half_width
    _agree(solve_banded_kl(prob, y0, weight), solve_banded_kl_jax(prob, y0, weight), log_v)


def test_max_newton_reports_status_one_and_a_larger_gap():
    prob, _, y0, weight = _instance(10, 2.5, 8)
    host = solve_banded_kl(prob, y0, weight, max_newton=3)
    jx = solve_banded_kl_jax(prob, y0, weight, max_newton=3)
    assert host["status"] == jx["status"] == 1
    assert jx["newton_steps"] == host["newton_steps"] == 3
    assert jx["gap"] == pytest.approx(host["gap"], rel=1e-12)
    assert jx["kl"] == pytest.approx(host["kl"], rel=1e-9)


def test_compiles_once_for_two_budgets_at_the_same_shapes():
    # a second budget on the same plan (same N, r, rows): new data, same shapes
    a = _instance(10, 2.5, 8)
    b = _instance(10, 2.5, 8, budget=3.0)
    assert a[0].cost[-1] != b[0].cost[-1]
    first = solve_banded_kl_jax(a[0], a[2], a[3])
    before = bj._SOLVE._cache_size()
    second = solve_banded_kl_jax(b[0], b[2], b[3], gap_tol=1e-10, t_factor=50.0)
    assert bj._SOLVE._cache_size() == before  # budget, gap_tol, t_factor are traced
    assert first["status"] == second["status"] == 0
    assert second["kl"] < first["kl"]  # a larger budget buys a smaller KL
    host = solve_banded_kl(b[0], b[2], b[3], gap_tol=1e-10, t_factor=50.0)
    assert second["kl"] == pytest.approx(host["kl"], rel=1e-10)


def test_refuses_without_x64():
    prob, _, y0, weight = _instance(10, 2.5, 8)
    with jax.enable_x64(False):
        with pytest.raises(Float64RequiredError, match="x64 is disabled"):
            solve_banded_kl_jax(prob, y0, weight)


def test_solve_plan_and_design_take_the_jax_solver():
    p = plan(10, 2.5, 8)
    host, jx = solve_plan(p), solve_plan(p, solver="jax")
    assert jx["status"] == 0 and jx["kl"] == pytest.approx(host["kl"], rel=1e-9)
    np.testing.assert_allclose(jx["mechanism"].log_p[-5:], host["mechanism"].log_p[-5:],
                               rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="solver must be one of 'host', 'jax'"):
        solve_plan(p, solver="cvxpy")
    with pytest.raises(ValueError, match="solver must be one of"):
        design_geometric(10, 2.5, solver="gpu")


def _random_band(rng, n, b, junk=True):
    """A random SPD band in solveh_banded's lower form; junk past the last row when asked."""
    ab = np.zeros((b + 1, n))
    ab[1:] = rng.standard_normal((b, n))
    ab[0] = 2.0 * b + 1.0 + rng.random(n)  # diagonally dominant: SPD
    for k in range(1, b + 1):
        tail = ab[k, max(n - k, 0):]
        tail[:] = rng.standard_normal(tail.size) * 1e3 if junk else 0.0  # not part of H
    return ab


@pytest.mark.parametrize("n, b, block", [
    (7, 3, None),  # one block (n <= MIN_BLOCK): the dense Cholesky
    (67, 8, None),  # blocks of MIN_BLOCK = 32, the last one partial
    (67, 8, 8),  # blocks of b, n not a multiple of b
    (130, 40, None),  # blocks of b = 40 > MIN_BLOCK, the last one partial
    (33, 40, None),  # a band wider than the matrix
])
def test_band_cholesky_matches_solveh_banded(n, b, block):
    rng = np.random.default_rng(n * 100 + b)
    ab = _random_band(rng, n, b)
    rhs = rng.standard_normal((n, 3))
    ref = solveh_banded(ab, rhs, lower=True)
    np.testing.assert_allclose(np.asarray(band_cholesky_solve(ab, rhs, block)), ref,
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(band_cholesky_solve(ab, rhs[:, 0], block)),
                               ref[:, 0], rtol=1e-12, atol=1e-13)


def test_band_cholesky_on_an_ill_conditioned_laplacian_band():
    # the Newton matrices' kind: a grounded weighted path Laplacian with weights over 12 orders
    rng = np.random.default_rng(1)
    n, b = 301, 6
    w = 10.0 ** rng.uniform(-6, 6, (b, n))
    ab = np.zeros((b + 1, n))
    for k in range(1, b + 1):
        ab[k, : n - k] = -w[k - 1, : n - k]
        ab[0, : n - k] += w[k - 1, : n - k]
        ab[0, k:] += w[k - 1, : n - k]
    ab[0, 0] += 1.0  # ground
    x = rng.standard_normal(n)
    H = np.diag(ab[0]) + sum(np.diag(ab[k, : n - k], -k) + np.diag(ab[k, : n - k], k)
                             for k in range(1, b + 1))
    rhs = H @ x
    ref = solveh_banded(ab, rhs, lower=True)
    got = np.asarray(band_cholesky_solve(ab, rhs))
    # both backward stable: residuals at round-off relative to |H| |x|
    scale = np.abs(H) @ np.abs(ref)
    assert np.max(np.abs(H @ got - rhs) / scale) < 1e-13
    assert np.max(np.abs(got - ref)) <= 10 * np.max(np.abs(ref - x)) + 1e-12


def test_band_cholesky_refuses_a_block_below_the_half_width():
    with pytest.raises(ValueError, match="block must be at least the half-width 3"):
        band_cholesky_solve(np.ones((4, 10)), np.ones(10), block=2)


@pytest.mark.slow
def test_jax_solver_matches_the_host_solver_at_m_3000():
    # the geometric design's own window at m = C = 3000; at m = C = 10^4 (N ~ 23 000 nodes,
    # b = 211) the JAX solver takes 80 Newton steps against the host's 22, about 15 minutes
    # on 2 CPU cores: its KL agreement (9e-16) is recorded in
    # bench/results/spherical_solver_2026-11-29.txt, not run here.  Cause (measured at m =
    # 3000, where the counts are 28 and 13-17): the grounded Hessian's diagonal spans 1e-23
    # (shells without mass, held by the barrier alone) to 22, so the two Cholesky solves agree
    # to 6e-14 relative and the decrements to 1e-10, yet the closed directions differ by O(1)
    # in those flat shells (max |d| 104 vs 6.6 at the first step); the fraction-to-the-boundary
    # rule then shortens the JAX path's steps.  Neither direction is wrong (the merit is flat
    # there); the step count follows the round-off.
    # Measured here: the KL agrees to 1e-9 and both stop at the gap bound, but the masses
    # differ by up to 6e-9 (7e-5 relative, shells of mass ~1e-6): the stopping rule bounds the
    # objective's excess, not the distance to the minimiser, so at this size the masses are
    # compared at the 1e-8 the two runs reach, besides everything the stopping rule implies.
    prob, log_v, y0, weight = _instance(3000, 3000.0, None)
    host, jx = solve_banded_kl(prob, y0, weight), solve_banded_kl_jax(prob, y0, weight)
    _agree(host, jx, log_v, mass_atol=1e-8, y_atol=None)
