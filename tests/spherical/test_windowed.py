"""The spherical mechanism at m = 10^3 (windowed log-space design): sampler KS, loss Monte
Carlo, the Gaussian limit and a certified subsampled, composed epsilon."""

import math

import jax
import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from dpjax.spherical.windowed import default_last_shell, design_windowed, slope_rule_r

M_DIM, N_SHELLS = 1000, 10
BUDGET = float(M_DIM)  # per-coordinate variance 1
SAMPLES = 4000


@pytest.fixture(scope="module")
def designed():
    return design_windowed(M_DIM, BUDGET, n=N_SHELLS)


@pytest.fixture(scope="module")
def samples(designed):
    mech, _ = designed
    return np.asarray(mech.sample(jax.random.key(19), (SAMPLES,)))


def _radial_cdf(mech, rho):
    """Exact CDF of |Z|: shell masses, then rho^m uniform inside the shell."""
    lm = mech.shell_log_masses()
    mu = np.exp(lm - np.logaddexp.reduce(lm))
    cum = np.concatenate([[0.0], np.cumsum(mu)])
    k = np.minimum(np.floor(rho * mech.n).astype(np.int64), mu.size - 1)
    a, b = k / mech.n, (k + 1.0) / mech.n
    with np.errstate(divide="ignore"):
        ratio = np.exp(mech.m * (np.log(a) - np.log(b)))
    frac = (np.exp(mech.m * (np.log(rho) - np.log(b))) - ratio) / (1.0 - ratio)
    return cum[k] + mu[k] * np.clip(frac, 0.0, 1.0)


def test_design_is_solved_monotone_and_meets_the_budget(designed):
    mech, info = designed
    assert info["status"] == 0 and info["residual"] < 1e-10 and info["first"] > 0
    assert np.all(np.diff(mech.log_p) <= 1e-12)
    assert mech.expected_cost() == pytest.approx(BUDGET, rel=1e-9)
    assert mech.N == default_last_shell(M_DIM, N_SHELLS, BUDGET)
    assert mech.r == pytest.approx(slope_rule_r(M_DIM, N_SHELLS, mech.N, BUDGET), rel=1e-15)


def test_sampler_ks_radius_and_direction(designed, samples):
    mech, _ = designed
    rho = np.linalg.norm(samples, axis=-1)
    assert stats.kstest(rho, lambda x: _radial_cdf(mech, x)).pvalue > 1e-3
    # direction uniform on the sphere: (1 + x_1/|x|)/2 ~ Beta((m-1)/2, (m-1)/2)
    a = 0.5 * (M_DIM - 1)
    assert stats.kstest(0.5 * (1.0 + samples[:, 0] / rho), stats.beta(a, a).cdf).pvalue > 1e-3


def test_loss_monte_carlo_matches_the_atoms(designed, samples):
    # the privacy loss at the maximal shift e1 (Lemma 1): log f(x) - log f(x - e1), x ~ P
    mech, _ = designed
    shifted = samples.copy()
    shifted[:, 0] -= 1.0
    loss_mc = mech.log_density(samples) - mech.log_density(shifted)
    loss, pm, _, p_out, _ = mech.atoms()
    assert p_out < 1e-12
    assert abs(loss_mc.mean() - mech.kl) < 5.0 * loss_mc.std() / math.sqrt(SAMPLES)
    order = np.argsort(loss)
    values, cdf = loss[order], np.cumsum(pm[order])
    for t in np.quantile(loss_mc, [0.05, 0.25, 0.5, 0.75, 0.95]):
        exact = cdf[np.searchsorted(values, t, side="right") - 1]
        empirical = np.mean(loss_mc <= t)
        assert abs(empirical - exact) < 5.0 * math.sqrt(exact * (1 - exact) / SAMPLES) + 1e-9


def test_gaussian_limit(designed):
    # at large m the optimum is the budget's Gaussian: its gain on the same grid ~1/m, and its
    # radius follows the Gaussian's (s chi_m, s^2 = C/m) up to the shell discretisation
    mech, info = designed
    gain = 1.0 - info["kl"] / info["grid_gaussian_kl"]
    assert 0.0 < gain < 1e-3
    s2 = BUDGET / M_DIM
    rho = np.linspace(math.sqrt(BUDGET) - 3.0, math.sqrt(BUDGET) + 3.0, 601)
    chi = stats.chi(M_DIM, scale=math.sqrt(s2)).cdf(rho)
    assert np.max(np.abs(_radial_cdf(mech, rho) - chi)) < 0.05
    # E|Z|^2 of the Gaussian with the same budget
    log_moment = math.log(2 * s2) + gammaln(M_DIM / 2 + 1) - gammaln(M_DIM / 2)
    assert math.exp(log_moment) == pytest.approx(mech.expected_cost(), rel=1e-9)


def test_subsampled_composed_epsilon_is_certified(designed):
    mech, _ = designed
    # single use at delta = 1e-5: ~6.5 (grid-discretised Gaussian with KL ~1.2); subsampled at
    # q = 0.01 and composed 10 times it is far below
    eps = mech.epsilon(1e-5, compositions=10, sampling_rate=0.01)
    assert 0.0 < eps < 2.0
    assert mech.delta(eps, compositions=10, sampling_rate=0.01) <= 1e-5


def test_bad_arguments():
    with pytest.raises(ValueError, match="budget"):
        design_windowed(10, -1.0)
    with pytest.raises(ValueError, match="r must be"):
        design_windowed(10, 2.5, n=10, N=40, r=1.5)
