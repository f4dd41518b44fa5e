"""Optimal i.n.i.d. Gaussian / Laplace scales: closed forms, certificates, baselines, errors.

References: the paper's closed forms (Theorems 4, 5, Table I), the solvers/
programme (jax closed form and cvxpy), Monte Carlo (errors, and the exact
i.n.i.d. Gaussian profile of Lemma 3), the foundation's 1-D Laplace profile.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from dpjax.accounting.gaussian import log_delta_gaussian_mu
from dpjax.accounting.laplace import log_delta_laplace
from dpjax.errors import InfeasibleTargetError
from dpjax.inid import (
    gaussian_design,
    gaussian_scales,
    gaussian_scales_for_rho,
    laplace_design,
    laplace_scales,
    make_profile,
    mu0,
    resource_shares,
)

EPS, DELTA = 0.7, 1e-6
RNG = np.random.default_rng(7)
LAM = RNG.uniform(0.05, 1.0, 12)


@pytest.fixture(scope="module")
def mu():
    return float(mu0(EPS, DELTA).mu0)


def test_theorem4_and_table1_gaussian(mu):
    d = gaussian_design(LAM, EPS, DELTA)
    l1, l2, k = LAM.sum(), np.linalg.norm(LAM), LAM.size
    # Theorem 4: sigma_i^2 = lambda_i ||lambda||_1 / mu0^2, MSE ||lambda||_1^2 / mu0^2
    np.testing.assert_allclose(d.scales**2, LAM * l1 / mu**2, rtol=1e-12)
    assert d.error == pytest.approx(l1**2 / mu**2, rel=1e-12)
    assert d.mse == pytest.approx(d.error, rel=1e-14)
    # Table I: i.i.d. sigma = Delta_2 / mu0, SPR sigma_i = sqrt(K) lambda_i / mu0
    assert d.iid_scale == pytest.approx(l2 / mu, rel=1e-14)
    assert d.error_iid == pytest.approx(k * l2**2 / mu**2, rel=1e-12)
    np.testing.assert_allclose(d.spr_scales, math.sqrt(k) * LAM / mu, rtol=1e-14)
    assert d.error_spr == pytest.approx(d.error_iid, rel=1e-12)  # equal when decoupled
    assert d.reduction_db == pytest.approx(10 * math.log10(k * l2**2 / l1**2), rel=1e-12)
    # certificate: Lemma 3's mu equals mu0 and the exact profile is <= delta
    assert d.privacy_parameter == pytest.approx(mu, rel=1e-12)
    assert d.delta_at_params <= DELTA
    # resource view: eta_i = lambda_i / ||lambda||_1 * mu0^2 / 2
    np.testing.assert_allclose(d.allocation, LAM / l1 * mu**2 / 2, rtol=1e-12)


def test_theorem5_and_table1_laplace():
    d = laplace_design(LAM, EPS)
    s23 = np.sum(LAM ** (2 / 3))
    np.testing.assert_allclose(d.scales, LAM ** (1 / 3) * s23 / EPS, rtol=1e-12)
    assert d.error == pytest.approx(2 / EPS**2 * s23**3, rel=1e-12)
    assert d.iid_scale == pytest.approx(LAM.sum() / EPS, rel=1e-14)
    assert d.error_iid == pytest.approx(2 * LAM.size * LAM.sum() ** 2 / EPS**2, rel=1e-12)
    assert d.error_spr == pytest.approx(2 * LAM.size**2 * np.sum(LAM**2) / EPS**2, rel=1e-12)
    assert d.error < d.error_iid <= d.error_spr  # Sec. IV
    assert d.privacy_parameter <= EPS and d.delta_at_params == 0.0
    np.testing.assert_allclose(d.allocation, LAM ** (2 / 3) / s23 * EPS, rtol=1e-12)


@pytest.mark.parametrize("p", [1.0, 1.5, 3.0])
def test_general_lp_errors_eqs_9_and_12(mu, p):
    g = gaussian_design(LAM, EPS, DELTA, error_power=p)
    s = np.sum(LAM ** (2 * p / (p + 2)))
    np.testing.assert_allclose(g.scales**2, LAM ** (4 / (p + 2)) / mu**2 * s, rtol=1e-12)
    m_p = math.sqrt(2**p / math.pi) * math.gamma((p + 1) / 2)
    assert g.error == pytest.approx(m_p * s ** (1 + p / 2) / mu**p, rel=1e-11)
    lap = laplace_design(LAM, EPS, error_power=p)
    s = np.sum(LAM ** (p / (p + 1)))
    np.testing.assert_allclose(lap.scales, LAM ** (1 / (p + 1)) / EPS * s, rtol=1e-12)
    assert lap.error == pytest.approx(math.gamma(p + 1) * s ** (p + 1) / EPS**p, rel=1e-11)


def test_weighted_mse_remark4():
    """w = alpha^2: the optimum is Theorem 4/5 for alpha * lambda in the coordinates alpha * f."""
    alpha = RNG.uniform(0.3, 3.0, LAM.size)
    g = gaussian_design(LAM, EPS, DELTA, weights=alpha**2)
    g_t = gaussian_design(alpha * LAM, EPS, DELTA)
    np.testing.assert_allclose(g.scales, g_t.scales / alpha, rtol=1e-12)
    lap = laplace_design(LAM, EPS, weights=alpha**2)
    lap_t = laplace_design(alpha * LAM, EPS)
    np.testing.assert_allclose(lap.scales, lap_t.scales / alpha, rtol=1e-12)
    # literally reusing the scales for alpha * lambda is not private for, e.g., alpha < 1:
    # sum lambda^2 / sigma^2 = mu0^2 sum(lambda / alpha) / sum(alpha lambda) > mu0^2
    small = alpha / alpha.max() * 0.9
    literal = gaussian_design(small * LAM, EPS, DELTA).scales
    assert math.sqrt(np.sum((LAM / literal) ** 2)) > g.privacy_parameter * 1.1


@pytest.mark.parametrize("solver", ["jax", "cvxpy"])
@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_programme_backends_agree_with_closed_form(solver, mechanism):
    lam = np.random.default_rng(11).lognormal(0, 1, 200)
    w = np.random.default_rng(12).uniform(0.5, 2, 200)
    design = gaussian_design if mechanism == "gaussian" else laplace_design
    ref = design(lam, EPS, DELTA, weights=w)
    got = design(lam, EPS, DELTA, weights=w, solver=solver)
    assert got.solver_stats["status"] == 0
    assert got.error == pytest.approx(ref.error, rel=1e-8)
    np.testing.assert_allclose(got.scales, ref.scales, rtol=1e-12 if solver == "jax" else 1e-8)
    assert got.delta_at_params <= DELTA  # programme output rescaled onto the constraint


def test_programme_design_is_traced_once_per_size(monkeypatch):
    """The jittable backend runs through one module-level compiled solve: a second design
    of the same size does not trace the programme again (issue 11: no jax.jit per call)."""
    from dpjax.inid import _design

    traced, solve = [], _design.solve

    def counting_solve(problem, solver):
        traced.append(solver)
        return solve(problem, solver)

    monkeypatch.setattr(_design, "solve", counting_solve)
    for eps in (0.5, 0.9):
        for mechanism in (gaussian_design, laplace_design):
            mechanism([3.0, 4.0, 1.0], eps, 1e-6, solver="jax")
    # one trace at most: both programmes are the same pytree of 3 coordinates (per-call
    # jax.jit wrappers traced all four)
    assert len(traced) <= 1


@given(st.integers(0, 10**6), st.floats(-0.5, 0.5), st.integers(0, 11))
def test_closed_form_is_optimal_against_feasible_perturbations(seed, step, i):
    """Any other allocation on the constraint surface has larger MSE (Theorems 4, 5)."""
    lam = np.random.default_rng(seed).uniform(0.01, 1.0, 12)
    mu = 0.3
    sigma = np.asarray(gaussian_scales(lam, mu))
    other = sigma.copy()
    other[i] *= math.exp(step)
    other *= math.sqrt(np.sum((lam / other) ** 2)) / mu  # back onto sum lambda^2/sigma^2 = mu^2
    assert np.sum(other**2) >= np.sum(sigma**2) * (1 - 1e-12)
    b = np.asarray(laplace_scales(lam, 1.0))
    ob = b.copy()
    ob[i] *= math.exp(step)
    ob *= np.sum(lam / ob)
    assert np.sum(ob**2) >= np.sum(b**2) * (1 - 1e-12)


def test_kernels_jit_vmap_and_zero_entries():
    lam = jnp.array([0.0, 1.0, 2.0, 0.0])
    mus = jnp.array([0.1, 0.2, 0.4])
    s = jax.jit(jax.vmap(lambda m: gaussian_scales(lam, m)))(mus)
    assert s.shape == (3, 4)
    np.testing.assert_allclose(s[:, 0], 0.0)
    np.testing.assert_allclose(s[0, 1:3] / s[1, 1:3], 2.0, rtol=1e-14)
    d = gaussian_design([0.0, 1.0, 2.0], EPS, DELTA)
    assert d.scales[0] == 0.0 and d.delta_at_params <= DELTA
    assert laplace_design([0.0, 3.0], EPS).scales[0] == 0.0


def test_monte_carlo_errors_of_sampled_noise():
    key = jax.random.key(3)
    n = 200_000
    for design, p in ((gaussian_design(LAM, EPS, DELTA), 2.0),
                      (laplace_design(LAM, EPS, error_power=1.0), 1.0)):
        t = np.asarray(design.sample(key, (n,)))
        assert t.shape == (n, LAM.size)
        per = np.sum(np.abs(t) ** p, axis=1)
        se = per.std() / math.sqrt(n)
        assert abs(per.mean() - design.error) < 5 * se
        np.testing.assert_allclose(t.std(axis=0), np.sqrt(np.asarray(design.noise().variance)),
                                   rtol=0.02)


def test_sampled_noise_refuses_non_float_dtypes():
    """Complex noise would put half the certified variance in a discarded imaginary part."""
    design = laplace_design(LAM, EPS)
    for dtype in (jnp.complex64, jnp.int32, jnp.bool_):
        with pytest.raises(TypeError, match=r"dtype must be a real floating type .* got "):
            design.sample(jax.random.key(0), (4,), dtype)


@pytest.mark.parametrize("kind", ["exponential", "linear"])
def test_design_answers_profiles_with_tiny_coordinates(kind, mu):
    """The exponential profile at K = 1000 has ~300 coordinates below the least normal
    float64: they were flushed to scale 0 and certification failed (divide by zero); every
    coordinate gets noise and the certificate holds by an independent host evaluation."""
    k = 1000
    for design, norm in ((laplace_design, "l1"), (gaussian_design, "l2")):
        lam = make_profile(kind, k, norm)
        d = design(lam, EPS, DELTA) if design is gaussian_design else design(lam, EPS)
        assert np.all(d.scales > 0) and np.all(np.isfinite(d.scales))
        if design is laplace_design:  # Theorem 5: pure DP iff sum lambda_i / b_i <= eps
            assert math.fsum(lam / d.scales) <= EPS
            ref = lam ** (1 / 3) * math.fsum(lam ** (2 / 3)) / EPS  # eq. (12), p = 2
        else:  # Lemma 3: the Gaussian profile at mu = ||lambda / sigma||_2, by scipy
            m = math.sqrt(math.fsum((lam / d.scales) ** 2))
            ref_delta = (scipy.stats.norm.cdf(-EPS / m + m / 2)
                         - math.exp(EPS) * scipy.stats.norm.cdf(-EPS / m - m / 2))
            assert ref_delta <= DELTA
            ref = np.sqrt(lam * math.fsum(lam)) / mu  # Theorem 4 at mu0 of (P2)
        np.testing.assert_allclose(d.scales, ref, rtol=1e-9)
        if kind == "exponential":
            assert any("least normal float64" in note for note in d.notes)


def test_error_beyond_float64_is_inf_not_a_traceback():
    """Scales near the float64 limit: their squared sum overflows (fsum raised OverflowError);
    the design is still certified and its error is reported as inf.  Scales that overflow
    themselves raise InfeasibleTargetError (no noise a sampler can draw)."""
    d = laplace_design([1e300, 1.0, 1e300], 1.0)
    assert np.all(np.isfinite(d.scales)) and d.error == math.inf and d.mse == math.inf
    assert math.fsum(np.array([1e300, 1.0, 1e300]) / d.scales) <= 1.0
    with pytest.raises(InfeasibleTargetError, match="leave the float64 range"):
        gaussian_design([1e308] * 3, EPS, DELTA)


def test_reduction_in_decibels_when_errors_underflow():
    """epsilon = 1e300: b ~ 1e-300, so b^2 and both errors underflow to 0 and the dB ratio
    divided 0 by 0 (ZeroDivisionError).  It is now taken in log space; the design is
    scale-invariant, so it equals Theorem 5's ratio K ||lambda||_1^2 / ||lambda||_{2/3}^{2/3*3}."""
    lam = np.array([1.0, 2.0])
    ref = 10 * math.log10(lam.size * lam.sum() ** 2 / np.sum(lam ** (2 / 3)) ** 3)
    for eps in (1e300, 1.0):
        d = laplace_design(lam, eps)
        assert d.reduction_db == pytest.approx(ref, rel=1e-9)
    assert laplace_design(lam, 1e300).error == 0.0  # the error itself is below float64


def test_lemma3_exact_profile_by_monte_carlo():
    """The i.n.i.d. Gaussian privacy loss is N(m/2... ) with m = mu_eff: Monte Carlo delta(eps)."""
    lam = np.array([1.0, 0.5, 0.2])
    sigma = np.array([2.0, 1.5, 0.7])
    mu_eff = math.sqrt(np.sum((lam / sigma) ** 2))
    eps = 0.3
    t = np.random.default_rng(5).normal(size=(400_000, 3)) * sigma
    loss = np.sum((2 * t * lam + lam**2) / (2 * sigma**2), axis=1)  # zeta_d(t), d = lambda
    vals = np.maximum(1 - np.exp(eps - loss), 0.0)
    exact = float(np.exp(log_delta_gaussian_mu(eps, mu_eff)))
    assert abs(vals.mean() - exact) < 5 * vals.std() / math.sqrt(vals.size)


def test_corollary6_bound_and_delta_scales():
    d0 = laplace_design(LAM, EPS)
    d = laplace_design(LAM, EPS, 1e-3)
    budget = EPS - math.log1p(-1e-3 * (1 - 1e-10))  # Corollary 6 at the certified level
    np.testing.assert_allclose(d.scales, d0.scales * EPS / budget, rtol=1e-12)
    assert 0 < d.delta_at_params <= 1e-3
    # for K = 1 the Corollary 6 bound dominates the exact 1-D Laplace profile
    for eps, b in [(0.5, 1.0), (1.0, 0.7), (0.1, 3.0)]:
        exact = float(jnp.exp(log_delta_laplace(eps, b, 1.0)))
        bound = max(0.0, 1 - math.exp(eps - 1.0 / b))
        assert exact <= bound + 1e-16


def test_resource_shares_and_rho():
    np.testing.assert_allclose(resource_shares(LAM, "gaussian"), LAM / LAM.sum(), rtol=1e-14)
    sh = resource_shares(LAM, "laplace")
    np.testing.assert_allclose(sh, LAM ** (2 / 3) / np.sum(LAM ** (2 / 3)), rtol=1e-14)
    rho = 0.05
    sigma = gaussian_scales_for_rho(LAM, rho)
    assert np.sum(LAM**2 / (2 * sigma**2)) <= rho
    assert np.sum(LAM**2 / (2 * sigma**2)) == pytest.approx(rho, rel=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match=">= 0"):
        gaussian_design([1.0, -1.0], EPS, DELTA)
    with pytest.raises(ValueError, match="entry > 0"):
        laplace_design([0.0, 0.0], EPS)
    with pytest.raises(ValueError, match="finite"):
        gaussian_design([1.0, np.nan], EPS, DELTA)
    with pytest.raises(ValueError, match="empty"):
        laplace_design([], EPS)
    with pytest.raises(ValueError, match="3 entries but the profile has 2"):
        gaussian_design([1.0, 2.0], EPS, DELTA, weights=[1, 1, 1])
    with pytest.raises(ValueError, match="epsilon"):
        laplace_design([1.0], -1.0)
    with pytest.raises(ValueError, match="delta"):
        gaussian_design([1.0], EPS, 1.5)
    with pytest.raises(InfeasibleTargetError, match="delta > 0"):
        gaussian_design([1.0], EPS, 0.0)
    with pytest.raises(InfeasibleTargetError):
        laplace_design([1.0], 0.0, 0.0)
    with pytest.raises(ValueError, match="solver"):
        laplace_design([1.0], EPS, solver="newton")
    with pytest.raises(ValueError, match="error_power"):
        laplace_design([1.0], EPS, error_power=0.0)


def test_profile_families_reduction_ordering():
    """Theorems 9, 10: more spread profiles (majorisation) give larger reductions."""
    red = [gaussian_design(make_profile(k, 10, "l2"), EPS, DELTA).reduction_db
           for k in ("uniform", "linear", "quadratic", "one-hot")]
    assert red[0] == pytest.approx(0.0, abs=1e-12)
    assert red[0] < red[1] < red[2] < red[3] == pytest.approx(10.0, rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.0, 1e-300])
def test_gaussian_design_at_delta_1e_300(epsilon):
    """At delta = 1e-300 the scales are ~1e299 and lambda_i^2 / sigma_i^2 underflowed to 0:
    mu = 0 failed the certificate ("profile re-evaluated to 1.0").  mu is summed relative
    to the largest ratio; the design is certified and its mu agrees with mpmath."""
    import mpmath as mp

    from dpjax.inid import gaussian_design, make_profile
    from dpjax.inid.gaussian import _mu_of

    lam = make_profile("linear", 3, "l2")
    design = gaussian_design(lam, epsilon, 1e-300)
    assert 0 < design.delta_at_params <= 1e-300
    sigma = np.asarray(design.scales)
    ratios = [mp.mpf(float(a)) / mp.mpf(float(s)) for a, s in zip(lam, sigma, strict=True)]
    exact = mp.sqrt(mp.fsum(r**2 for r in ratios))
    mu = _mu_of(lam, sigma)
    assert float(exact) <= mu <= float(exact) * (1 + 4e-15)
    assert _mu_of(np.array([1e-300]), np.array([1e300])) == np.finfo(np.float64).tiny
    assert _mu_of(lam, np.array([1.0, 0.0, 1.0])) == np.inf
