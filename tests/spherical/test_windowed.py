"""The spherical mechanism at gradient dimension (windowed log-space design), at m = 10^3 and
10^4: sampler KS, loss Monte Carlo against the exact cells, the Gaussian limit and a certified
subsampled, composed epsilon.  m = 10^4 (about two minutes on one core: the design's compiles
and its draws) is marked ``slow`` (``python -m pytest -m "slow or not slow"``); m = 10^3 runs
the same assertions by default.  (m = 10^5: bench/bench_spherical.py --large, same checks.)"""

import math

import jax
import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from dpjax.spherical.windowed import default_last_shell, design_windowed, slope_rule_r

SAMPLES, CHUNK = 4000, 1000  # draws in R^m, CHUNK at a time (m = 10^4: 80 MB a chunk)
# (m, n): n ~ sqrt(m) keeps the Gaussian's log-density drop per shell (sqrt(m) / n ~ 3.1)
# the same, so the grid's price and the tolerances below do not change with m
DESIGNS = [(1000, 10), pytest.param((10000, 32), marks=pytest.mark.slow)]


@pytest.fixture(scope="module", params=DESIGNS, ids=["m1000-n10", "m10000-n32"])
def designed(request):
    m, n = request.param
    mech, info = design_windowed(m, float(m), n=n)  # per-coordinate variance 1
    return mech, info


@pytest.fixture(scope="module")
def draws(designed):
    """``(|z|, z_1, loss)`` of SAMPLES exact draws; loss = log f(z) - log f(z - e_1)."""
    mech, _ = designed
    out = []
    for c in range(SAMPLES // CHUNK):
        z = np.asarray(mech.sample(jax.random.fold_in(jax.random.key(19), c), (CHUNK,)))
        shifted = z.copy()
        shifted[:, 0] -= 1.0
        out.append(np.stack([np.linalg.norm(z, axis=-1), z[:, 0],
                             mech.log_density(z) - mech.log_density(shifted)]))
    return np.concatenate(out, axis=1)


def test_design_is_solved_monotone_and_meets_the_budget(designed):
    mech, info = designed
    budget = float(mech.m)
    assert info["status"] == 0 and info["residual"] < 1e-10 and info["first"] > 0
    assert np.all(np.diff(mech.log_p) <= 1e-12)
    assert mech.expected_cost() == pytest.approx(budget, rel=1e-9)
    assert mech.N == default_last_shell(mech.m, mech.n, budget)
    assert mech.r == pytest.approx(slope_rule_r(mech.m, mech.n, mech.N, budget), rel=1e-15)


def test_sampler_ks_radius_and_direction(designed, draws):
    mech, _ = designed
    rho, x1, _ = draws
    assert stats.kstest(rho, lambda x: mech.radial_cdf(x)).pvalue > 1e-3
    # direction uniform on the sphere: (1 + x_1/|x|)/2 ~ Beta((m-1)/2, (m-1)/2)
    a = 0.5 * (mech.m - 1)
    assert stats.kstest(0.5 * (1.0 + x1 / rho), stats.beta(a, a).cdf).pvalue > 1e-3


def test_loss_monte_carlo_matches_the_atoms(designed, draws):
    # the privacy loss at the maximal shift e1 (Lemma 1): log f(x) - log f(x - e1), x ~ P
    mech, _ = designed
    loss_mc = draws[2]
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
    budget = float(mech.m)
    gain = 1.0 - info["kl"] / info["grid_gaussian_kl"]
    assert 0.0 < gain < 1e-3
    s2 = budget / mech.m
    rho = np.linspace(math.sqrt(budget) - 3.0, math.sqrt(budget) + 3.0, 601)
    chi = stats.chi(mech.m, scale=math.sqrt(s2)).cdf(rho)
    assert np.max(np.abs(mech.radial_cdf(rho) - chi)) < 0.05
    # E|Z|^2 of the Gaussian with the same budget
    log_moment = math.log(2 * s2) + gammaln(mech.m / 2 + 1) - gammaln(mech.m / 2)
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
