"""Staircase (Geng & Viswanath 2016): noise, exact 1-D profile, gamma*, Table II row."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
import scipy.stats
from _helpers import assert_nonincreasing
from _references import staircase_delta_shift as mp_profile_shift
from _references import staircase_density as mp_density
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

import dpjax
from dpjax.accounting.staircase import log_delta_staircase, log_delta_staircase_shift
from dpjax.calibration.laplace import scale_laplace_pure
from dpjax.noise.staircase import Staircase, staircase_optimal_gamma, staircase_unit_variance

CASES = [
    (1.0, 0.3, 1.0, 0.5),
    (1.0, 0.3, 0.7, 0.2),
    (2.0, 0.1, 1.0, 0.0),
    (0.5, 0.45, 1.0, 0.3),
    (1.0, 0.3, 1.5, 1.2),
    (3.0, 0.26, 0.4, 1.0),
    (0.3, 0.475, 1.0, 0.1),
]


@pytest.mark.parametrize("decay,gamma,d,eps", CASES)
def test_shift_profile_matches_direct_integral(decay, gamma, d, eps):
    ref = float(mp_profile_shift(eps, decay, gamma, d))
    got = float(jnp.exp(log_delta_staircase_shift(eps, decay, gamma, d)))
    assert abs(got - ref) <= 1e-10 * ref


@pytest.mark.parametrize(
    "decay,gamma,eps",
    [(1.0, 0.3, 0.5), (1.0, 0.3, 0.0), (0.5, 0.45, 0.2), (1.0, 0.7, 0.4), (2, 0.1, 1.5)],
)
def test_worst_shift_candidates_match_dense_scan(decay, gamma, eps):
    ds = np.linspace(1e-4, 1.0, 2001)
    dense = np.max(np.asarray(log_delta_staircase_shift(eps, decay, gamma, ds)))
    full = float(log_delta_staircase(eps, decay, 1.0, gamma, 1.0))
    assert full >= dense - 1e-12 and full <= dense + 1e-9


def test_pure_dp_at_decay():
    # GV: (decay, 0)-DP for shifts up to the width; slightly beyond, delta > 0
    for decay, gamma in [(0.3, 0.475), (1.0, 0.42), (3.0, 0.26)]:
        assert float(log_delta_staircase(decay, decay, 1.0, gamma, 1.0)) == -np.inf
        assert float(log_delta_staircase(decay, decay, 1.0, gamma, 0.5)) == -np.inf
        assert float(log_delta_staircase(decay, decay, 1.0, gamma, 1.01)) > -np.inf


@pytest.mark.parametrize(
    "decay,gamma", [(0.05, 0.5), (0.5, 0.3), (2.0, 0.1), (2.0, 1.0), (2.0, 0.0)]
)
def test_variance_vs_mpmath_sum(mp, decay, gamma):
    e, gm = mp.mpf(decay), mp.mpf(gamma)
    b = mp.exp(-e)
    a = (1 - b) / (2 * (gm + (1 - gm) * b))
    ref = 2 * mp.nsum(
        lambda k: a * b**k * (((k + gm) ** 3 - k**3) / 3 + b * ((k + 1) ** 3 - (k + gm) ** 3) / 3),
        [0, mp.inf],
    )
    assert abs(float(staircase_unit_variance(decay, gamma)) / float(ref) - 1) < 1e-12


@pytest.mark.parametrize("decay", [5e-5, 1e-3, 0.01, 0.05, 0.3, 1.0, 3.0, 10.0, 30.0])
def test_optimal_gamma_minimises_variance(decay):
    g_star = float(staircase_optimal_gamma(decay))
    res = minimize_scalar(
        lambda g: float(staircase_unit_variance(decay, g)),
        bounds=(0, 1),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert float(staircase_unit_variance(decay, g_star)) <= res.fun * (1 + 1e-13)
    # and the formula agrees with GV's closed form in 50-digit arithmetic
    with mpmath.workdps(50):
        b = mpmath.exp(-mpmath.mpf(decay))
        ref = -b / (1 - b) + mpmath.cbrt(b - 2 * b**2 + 2 * b**4 - b**5) / (
            mpmath.cbrt(2) * (1 - b) ** 2
        )
    assert abs(g_star / float(ref) - 1) < 1e-14


def test_cdf_quantile_logpdf(mp):
    noise = Staircase(0.7, 2.0, 0.35)
    g = mp_density(0.7, 0.35)
    for x in (-5.3, -0.1, 0.0, 0.69, 0.71, 3.9, 12.0):
        xx = mp.mpf(x) / 2
        n = 200
        cuts = sorted(
            {p for k in range(-n, n + 1) for p in (k, k + mp.mpf("0.35"), k - mp.mpf("0.35"))}
            | {xx}
        )
        pairs = zip(cuts[:-1], cuts[1:], strict=True)
        sf = sum(g((lo + hi) / 2) * (hi - lo) for lo, hi in pairs if lo >= xx)
        assert abs(float(noise.sf(x)) / float(sf) - 1) < 1e-12
        assert abs(float(noise.logpdf(x)) - float(mp.log(g(xx) / 2))) < 1e-12
    u = jnp.array([1e-200, 1e-9, 0.01, 0.3, 0.5, 0.77, 1 - 1e-12])
    assert np.allclose(np.asarray(noise.cdf(noise.quantile(u))), np.asarray(u), rtol=1e-9, atol=0)


@pytest.mark.parametrize(
    "decay,width,gamma", [(0.3, 1.0, 0.475), (2.0, 0.5, 0.1), (0.05, 1.0, 0.5)]
)
def test_sampler_ks_and_moments(decay, width, gamma):
    noise = Staircase(decay, width, gamma)
    x = np.asarray(noise.sample(jax.random.key(11), (40_000,)))
    ks = scipy.stats.kstest(x, lambda t: np.asarray(noise.cdf(jnp.asarray(t))))
    assert ks.pvalue > 1e-3
    var = float(noise.variance)
    assert abs(x.mean()) < 5 * np.sqrt(var / x.size)
    assert abs(x.var() / var - 1) < 5 * np.sqrt(5.0 / x.size)


def test_sampler_float32():
    with jax.enable_x64(False):
        x = Staircase(1.0, 1.0, 0.4).sample(jax.random.key(2), (1000,), dtype=jnp.float32)
    assert x.dtype == jnp.float32 and np.all(np.isfinite(np.asarray(x)))


@given(
    decay=st.floats(0.05, 5.0),
    gamma=st.floats(0.0, 1.0),
    w1=st.floats(0.7, 3.0),
    w2=st.floats(0.7, 3.0),
)
def test_profile_decreases_with_width(decay, gamma, w1, w2):
    lo, hi = min(w1, w2), max(w1, w2)
    eps = 0.5 * decay
    d_small = float(log_delta_staircase(eps, decay, lo, gamma, 1.0))
    d_big = float(log_delta_staircase(eps, decay, hi, gamma, 1.0))
    assert_nonincreasing(d_small, d_big)


def test_table_ii_staircase_and_laplace_rows():
    # flipped-huber-mechanism Table II: K = 20, Delta_inf = 1, Delta_1 = 20, Delta_2 = sqrt(20)
    eps = np.array([0.2, 0.4, 1.0, 2.2, 5.0])
    kw = dict(dim=20, linf=1.0, l2=np.sqrt(20.0), l1=20.0)
    st_ = dpjax.calibrate("staircase", epsilon=eps, delta=1e-8, **kw)
    # the printed Laplace row is pure DP with l1 budget, b = Delta_1 / eps
    lap_var = 2.0 * np.asarray(scale_laplace_pure(eps, 20.0)) ** 2
    assert np.round(st_.variance, 2).tolist() == [19999.92, 4999.92, 799.92, 165.21, 31.92]
    assert np.round(lap_var, 2).tolist() == [20000.0, 5000.0, 800.0, 165.29, 32.0]
    assert np.all(st_.delta_at_params == 0) and st_.condition == "sufficient"
    assert np.allclose(st_.params["decay"], eps / 20)


def test_one_dim_calibration_and_account():
    cal = dpjax.calibrate("staircase", epsilon=[0.3, 3.0], delta=1e-6, linf=1.0)
    assert np.all(cal.delta_at_params == 0)
    assert np.allclose(cal.params["gamma"], staircase_optimal_gamma(np.array([0.3, 3.0])))
    p = {k: float(v[0]) for k, v in cal.params.items()}
    # least epsilon at delta = 0.01 lies below the design epsilon and inverts the profile
    e = float(dpjax.account("staircase", p, delta=0.01, linf=1.0))
    assert 0 < e < 0.3
    assert float(dpjax.profile("staircase", p, e, linf=1.0)) <= 0.01
    assert float(dpjax.profile("staircase", p, e * (1 - 1e-9), linf=1.0)) > 0.01


def test_bad_inputs_name_the_argument():
    good = {"decay": 1.0, "width": 1.0, "gamma": 0.4}
    with pytest.raises(ValueError, match="gamma"):
        dpjax.profile("staircase", {**good, "gamma": 1.5}, 0.5)
    with pytest.raises(ValueError, match="decay"):
        dpjax.profile("staircase", {**good, "decay": 0.0}, 0.5)
    with pytest.raises(ValueError, match="width"):
        dpjax.profile("staircase", {**good, "width": -2.0}, 0.5)
    with pytest.raises(dpjax.errors.InfeasibleTargetError, match="epsilon = delta = 0"):
        dpjax.calibrate("staircase", epsilon=0.0, delta=0.0, linf=1.0)


@pytest.mark.parametrize("dim", [1, 3])
def test_epsilon_zero_with_delta_is_met_by_the_rr_budget(dim):
    """(0, delta) is feasible: an eps_0-DP staircase has delta(eps) <= tanh(eps_0 / 2) at
    every eps >= 0 (randomized response), so eps_0 = 2 artanh(delta) meets it (it raised
    InfeasibleTargetError).  The answer is certified by the exact 1-D profile (dim 1) or
    the RR bound (dim 3), and tight: the RR bound of the returned budget is delta to
    1e-9 relative; at the papers' targets (epsilon >= 2 artanh(delta)) nothing changes."""
    delta = 0.1
    cal = dpjax.calibrate("staircase", epsilon=0.0, delta=delta, linf=1.0, dim=dim)
    budget = dim * float(cal.params["decay"])
    assert budget == pytest.approx(2 * np.arctanh(delta), rel=1e-9)
    assert float(cal.delta_at_params) <= delta
    assert float(dpjax.profile("staircase", cal.params, 0.0, linf=1.0, dim=dim)) <= delta
    assert any("delta used" in note for note in cal.notes)
    same = dpjax.calibrate("staircase", epsilon=1.0, delta=1e-6, linf=1.0, dim=dim)
    assert dim * float(same.params["decay"]) == pytest.approx(1.0, rel=1e-15)
    assert any("delta not used" in note for note in same.notes)


@pytest.mark.parametrize("epsilon", [1e3, 1e4, 1e5])
def test_huge_epsilon_is_answered(epsilon):
    """epsilon >= 710 gave gamma = NaN (expm1(epsilon) overflowed; the certificate then
    failed): gamma* comes from log space, held at the least normal float once it
    underflows, and the variance is its float64 value (~gamma^2 / 3, 0 beyond ~1100)."""
    cal = dpjax.calibrate("staircase", epsilon=epsilon, delta=1e-6, linf=1.0)
    gamma = float(cal.params["gamma"])
    assert 0 < gamma < 1e-100
    assert np.isfinite(float(cal.variance)) and 0 <= float(cal.variance) < 1e-200
    assert float(cal.delta_at_params) == 0.0
    assert float(cal.params["decay"]) == pytest.approx(epsilon, rel=1e-15)


@pytest.mark.parametrize("width", [0.3, 1.0, 2.5])
def test_account_at_delta_zero_is_the_pure_epsilon(width):
    """delta = 0: the least epsilon where the exact profile vanishes, eps_0 = decay
    ceil(Delta / width) (it raised CertificationError: the search's level was that of
    delta = 1, so it returned ~0, which the certificate rejected)."""
    params = {"decay": 0.5, "width": width, "gamma": 0.3}
    eps = dpjax.account("staircase", params, delta=np.array([0.0, 1e-300]), linf=1.0)
    eps_0 = 0.5 * np.ceil(1.0 / width)
    np.testing.assert_allclose(eps, eps_0, rtol=1e-12)
    assert np.all(dpjax.profile("staircase", params, epsilon=eps, linf=1.0) == 0.0)


def test_many_periods_use_the_pure_dp_bound_instead_of_exhausting_memory():
    """A shift of 1000 periods (width 1e-3, sensitivity 1) asked the exact profile for
    ~5000 worst-shift candidates x ~8000 cuts each and died allocating 67 GB; beyond
    EXACT_MAX_PERIODS the profile is the RR bound of eps_0 = decay ceil(Delta / width),
    which is above the exact delta of the full shift (computed for that one shift)."""
    from dpjax.accounting.staircase import log_delta_staircase_shift
    from dpjax.mechanisms.staircase import EXACT_MAX_PERIODS

    params = {"decay": 1e-3, "width": 1e-3, "gamma": 0.5}
    eps = np.array([0.0, 0.5, 0.9, 5.0])
    got = dpjax.profile("staircase", params, eps, linf=1.0)
    eps0 = 1e-3 * 1000
    rr = np.maximum(np.expm1(eps0) - np.expm1(eps), 0.0) / (1.0 + np.exp(eps0))
    np.testing.assert_allclose(got, rr, rtol=1e-12, atol=0)
    periods = 1000
    assert periods + 3 > EXACT_MAX_PERIODS
    one_shift = np.exp(np.asarray(log_delta_staircase_shift(
        eps, 1e-3, 0.5, float(periods), max_periods=periods + 3)))
    assert np.all(got >= one_shift) and one_shift[0] > 0.5 * got[0]
    e = float(dpjax.account("staircase", params, delta=0.1, linf=1.0))
    assert float(dpjax.profile("staircase", params, e, linf=1.0)) <= 0.1


def _subsampled_reference(decay, gamma, q, eps, periods=80):
    """``delta(eps)`` of one Poisson-subsampled width-1 staircase at shift 1, the worse of
    remove ``(q g(t) + (1 - q) g(t + 1), g(t + 1))`` and add (the reverse order): direct sums
    of the piecewise-constant integrands between their breakpoints (mpmath density)."""
    g = mp_density(decay, gamma)
    ks = np.arange(-periods, periods + 1, dtype=float)
    cuts = np.unique(np.concatenate([ks, ks + gamma, ks - gamma, ks - 1, ks - 1 + gamma,
                                     ks - 1 - gamma]))
    e = mpmath.exp(eps)
    remove = add = mpmath.mpf(0)
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        mid, width = (lo + hi) / 2, hi - lo
        mix = q * g(mid) + (1 - q) * g(mid + 1)
        remove += max(mix - e * g(mid + 1), 0) * width
        add += max(g(mid + 1) - e * mix, 0) * width
    return float(max(remove, add))


def test_subsampled_calibration_certified_minimal_and_below_pure_amplification():
    # one Poisson-subsampled use (q = 0.2): the staircase of width linf and gamma*, its decay
    # the largest the accountant certifies; the accountant's profile at the returned decay
    # against a direct sum over the exact subsampled pair; beats the pure-DP amplification
    # decay_0 = log(1 + (e^eps - 1) / q) (delta used) and the staircase without subsampling.
    # The target is the add-relation test's below: its add_remove calibration is this one
    # (programs shared; at epsilon = 0.5 this search compiled its own, ~3 s more)
    eps, delta, q = 0.15, 1e-5, 0.2
    cal = dpjax.calibrate("staircase", eps, delta, linf=1.0, sampling_rate=q)
    params = {k: float(v) for k, v in cal.params.items()}
    assert params["width"] == 1.0
    assert params["gamma"] == pytest.approx(float(staircase_optimal_gamma(params["decay"])))
    assert float(cal.delta_at_params) <= delta
    ref = _subsampled_reference(params["decay"], params["gamma"], q, eps)
    assert ref <= float(cal.delta_at_params) <= ref * (1 + 1e-3) + 1e-12
    # minimal: a decay 1e-3 larger is not certified (the direct sum exceeds the target)
    bigger = params["decay"] * 1.001
    assert _subsampled_reference(bigger, float(staircase_optimal_gamma(bigger)), q, eps) > delta
    assert params["decay"] >= np.log1p(np.expm1(eps) / q)
    plain = dpjax.calibrate("staircase", eps, delta, linf=1.0)
    assert float(cal.variance) < float(plain.variance)
    # the profile and account facades answer the same subsampled uses
    prof = dpjax.profile("staircase", params, epsilon=eps, linf=1.0, sampling_rate=q)
    assert float(prof) == pytest.approx(float(cal.delta_at_params), rel=1e-9)
    assert float(dpjax.account("staircase", params, delta=delta, linf=1.0,
                               sampling_rate=q)) <= eps * (1 + 1e-9)


def test_subsampled_add_relation_needs_less_noise_and_is_certified_under_it():
    # the add direction alone: a larger decay than add_remove's, certified by the accountant
    # under "add" and, at that decay, breaking the add_remove target (remove is the worse).
    # epsilon below -log(1 - q) = 0.223: above it the add direction's loss never exceeds
    # epsilon and no noise is needed at all (the search runs to the end of its range)
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    eps, delta, q = 0.15, 1e-5, 0.2
    both = dpjax.calibrate("staircase", eps, delta, linf=1.0, sampling_rate=q)
    add = dpjax.calibrate("staircase", eps, delta, linf=1.0, sampling_rate=q, relation="add")
    assert float(add.params["decay"]) >= float(both.params["decay"])
    step = ev.PoissonSampled(q, ev.Noise("staircase", {k: float(v)
                                                       for k, v in add.params.items()}))
    assert PLDAccountant("add").compose(step).get_delta(eps) <= delta
    assert PLDAccountant("add_remove").compose(step).get_delta(eps) > delta
    assert any("relation add" in n for n in add.notes)


def test_subsampled_replace_one_is_certified_minimal_and_needs_more_noise():
    # replace-one under Poisson sampling: the pair's exact loss atoms (any width); more
    # noise than add_remove (a record replaced moves the subsampled query twice as far)
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    eps, delta, q = 1.0, 1e-6, 0.1
    rep = dpjax.calibrate("staircase", eps, delta, linf=1.0, sampling_rate=q,
                          relation="replace_one")
    both = dpjax.calibrate("staircase", eps, delta, linf=1.0, sampling_rate=q)
    assert float(rep.delta_at_params) <= delta and float(rep.variance) > float(both.variance)
    params = {k: float(v) for k, v in rep.params.items()}

    def delta_at(decay):
        noise = ev.Noise("staircase", params | {"decay": decay})
        return PLDAccountant("replace_one").compose(ev.PoissonSampled(q, noise)).get_delta(eps)

    assert delta_at(params["decay"]) <= delta < delta_at(params["decay"] * 1.01)
    assert any("relation replace_one" in n for n in rep.notes)


def _two_dim_subsampled_reference(decay, gamma, q, eps, periods=40):
    """``delta(eps)`` of one use of two width-1 staircases under one Poisson coin at the
    corner shift ``(1, 1)``, the worse of remove and add: direct sums over the products of
    the 1-D cells on which both ``g(t)`` and ``g(t + 1)`` are constant (NumPy, float64)."""
    b = np.exp(-decay)
    a = (1 - b) / (2 * (gamma + (1 - gamma) * b))

    def g(t):
        at = np.abs(t)
        k = np.floor(at)
        return a * b**k * np.where(at - k < gamma, 1.0, b)

    ks = np.arange(-periods, periods + 1, dtype=float)
    cuts = np.unique(np.concatenate([ks, ks + gamma, ks - gamma, ks - 1, ks - 1 + gamma,
                                     ks - 1 - gamma]))
    mid, width = (cuts[:-1] + cuts[1:]) / 2, np.diff(cuts)
    base = np.outer(g(mid + 1) * width, g(mid + 1) * width)
    shifted = np.outer(g(mid) * width, g(mid) * width)
    mix = q * shifted + (1 - q) * base
    e = np.exp(eps)
    return max(np.maximum(mix - e * base, 0).sum(), np.maximum(base - e * mix, 0).sum())


def test_k_dim_subsampled_calibration_is_the_corner_of_one_coin_certified_and_minimal():
    # two coordinates under one Poisson coin: the accountant's profile of the product of the
    # coordinates' pairs at the corner, subsampled as a whole, against direct 2-D sums; the
    # decay the largest certified (1% larger breaks the target); less noise than without
    # subsampling
    eps, delta, q = 1.0, 1e-6, 0.1
    cal = dpjax.calibrate("staircase", eps, delta, dim=2, linf=1.0, sampling_rate=q)
    params = {k: float(v) for k, v in cal.params.items()}
    assert params["width"] == 1.0 and cal.condition == "sufficient"
    ref = _two_dim_subsampled_reference(params["decay"], params["gamma"], q, eps)
    assert ref <= float(cal.delta_at_params) <= delta
    # the whole profile: equal to the direct sums away from the loss atoms (measured within
    # 1e-8 relative; at an atom, e.g. the target's epsilon here, the grid rounds it up)
    grid = np.array([0.05, 0.3, 0.6])
    got = dpjax.profile("staircase", params, epsilon=grid, dim=2, linf=1.0, sampling_rate=q)
    want = [_two_dim_subsampled_reference(params["decay"], params["gamma"], q, e) for e in grid]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert np.all(got >= want)
    bigger = params["decay"] * 1.01
    gamma = float(staircase_optimal_gamma(bigger))
    assert _two_dim_subsampled_reference(bigger, gamma, q, eps) > delta
    # at one use the amplified pure-DP decay log(1 + (e^eps - 1) / q) / K is the edge of the
    # exact answer (the largest loss atom, log(1 - q + q e^{K decay}), reaches eps there);
    # the accountant's grid rounds that atom up, so the pure bound wins and is named
    assert params["decay"] >= np.log1p(np.expm1(eps) / q) / 2 * (1 - 1e-12)
    assert any("2 staircases under one coin" in n and "amplified pure DP won" in n
               for n in cal.notes)
    plain = dpjax.calibrate("staircase", eps, delta, dim=2, linf=1.0)
    assert float(plain.variance) > float(cal.variance)
    # the profile and account facades answer the same uses
    prof = dpjax.profile("staircase", params, epsilon=eps, dim=2, linf=1.0, sampling_rate=q)
    assert float(prof) == pytest.approx(float(cal.delta_at_params), rel=1e-9)
    assert float(dpjax.account("staircase", params, delta=delta, dim=2, linf=1.0,
                               sampling_rate=q)) <= eps * (1 + 1e-9)
