"""Truncated Laplace (GDGK 2020): noise, exact 1-D profile, calibration vs mpmath, closed forms."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
import scipy.stats
from _helpers import assert_matches_reference
from hypothesis import given
from hypothesis import strategies as st

import dpjax
from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.accounting.truncated_laplace import (
    epsilon_truncated_laplace,
    log_delta_truncated_laplace,
    truncated_laplace_gdgk,
)
from dpjax.calibration.truncated_laplace import COMPOSED_BIN_WIDTH
from dpjax.noise.truncated_laplace import TruncatedLaplace, truncated_laplace_unit_variance

log_delta_jit = jax.jit(log_delta_truncated_laplace)


def mp_profile(eps, lam, bound, sens=1.0):
    """``int [g(t) - e^eps g(t + Delta)]_+ dt`` by quadrature with breakpoints at every kink
    of the integrand: the support ends and the kinks of both densities."""
    with mpmath.workdps(30):
        eps, lam, A, d = (mpmath.mpf(x) for x in (eps, lam, bound, sens))
        z = 2 * lam * (1 - mpmath.exp(-A / lam))

        def g(t):
            return mpmath.exp(-abs(t) / lam) / z if abs(t) <= A else mpmath.mpf(0)

        def f(t):
            return max(g(t) - mpmath.exp(eps) * g(t + d), 0)

        root = lam * eps / 2 - d / 2  # where the Laplace-part loss (2t + Delta)/lambda equals eps
        pts = sorted({-A - d, -A, A - d, A, mpmath.mpf(0), -d, root})
        return mpmath.quad(f, pts)


CASES = [
    (eps, lam, bound)
    for lam, bound in [(0.3, 0.4), (1.0, 0.6), (1.0, 2.5), (3.0, 10.0), (1.0, 40.0), (0.2, 5.0)]
    for eps in (0.0, 0.1, 0.5, 1.0, 3.0, 8.0)
]


@pytest.mark.parametrize("eps,lam,bound", CASES)
def test_profile_matches_quadrature(eps, lam, bound):
    ref = float(mp_profile(eps, lam, bound))
    got = float(jnp.exp(log_delta_jit(eps, lam, bound, 1.0)))
    assert_matches_reference(got, ref, rtol=1e-10, floor=1e-14)


def test_gdgk_parameters_meet_delta_exactly():
    eps = np.array([0.05, 0.3, 1.0, 3.0])
    lam, bound = truncated_laplace_gdgk(eps, 1e-6, 1.0)
    assert np.allclose(lam, 1.0 / eps)
    # A = lambda log(1 + (e^eps - 1) / (2 delta)), written out in mpmath
    for e, a in zip(eps, np.asarray(bound), strict=True):
        ref = (1 / mpmath.mpf(e)) * mpmath.log(1 + mpmath.expm1(e) / (2 * mpmath.mpf("1e-6")))
        assert abs(a / float(ref) - 1) < 1e-14
    delta = np.exp(np.asarray(log_delta_jit(eps, lam, bound, 1.0)))
    assert np.allclose(delta, 1e-6, rtol=1e-12)


@pytest.mark.parametrize("c", [1e-4, 0.01, 0.5, 3.0, 40.0, 700.0])
def test_variance_vs_mpmath(mp, c):
    cc = mp.mpf(c)
    ref = mp.quad(lambda t: t * t * mp.exp(-t), [0, cc]) / mp.quad(lambda t: mp.exp(-t), [0, cc])
    assert abs(float(truncated_laplace_unit_variance(c)) / float(ref) - 1) < 1e-13


def test_cdf_logpdf_quantile_vs_mpmath(mp):
    noise = TruncatedLaplace(2.0, 7.0)
    z = 2 * 2 * (1 - mp.exp(-mp.mpf(7) / 2))
    for x in (-7.5, -6.9, -1.0, 0.0, 0.3, 4.0, 6.999, 7.0, 9.0):
        xx = mp.mpf(x)
        ref_sf = (
            mp.quad(
                lambda t: mp.exp(-abs(t) / 2) / z,
                [max(xx, -7), 0, 7] if xx < 0 else [min(xx, 7), 7],
            )
            if xx < 7
            else mp.mpf(0)
        )
        got = float(noise.sf(x))
        assert abs(got - float(ref_sf)) <= 1e-13 * max(float(ref_sf), 1e-300) + (
            1e-300 if ref_sf == 0 else 0
        )
    assert float(noise.logpdf(8.0)) == -np.inf
    u = jnp.array([1e-12, 0.01, 0.3, 0.5, 0.8, 1 - 1e-9])
    x = noise.quantile(u)
    assert np.all(np.abs(np.asarray(x)) <= 7.0)
    # |G(x) - u| up to 1e-9 relative plus what one ulp of x moves the cdf (density x ulp):
    # near the bound the tail mass is finer than the float64 grid of x can resolve
    slack = np.exp(np.asarray(noise.logpdf(x))) * np.spacing(np.abs(np.asarray(x))) * 4
    assert np.all(np.abs(np.asarray(noise.cdf(x)) - np.asarray(u)) <= 1e-9 * np.asarray(u) + slack)


@pytest.mark.parametrize("lam,bound", [(1.0, 0.3), (3.333, 40.24), (0.5, 3.0)])
def test_sampler_ks_and_moments(lam, bound):
    noise = TruncatedLaplace(lam, bound)
    x = np.asarray(noise.sample(jax.random.key(3), (40_000,)))
    assert np.all(np.abs(x) <= bound)
    ks = scipy.stats.kstest(x, lambda t: np.asarray(noise.cdf(jnp.asarray(t))))
    assert ks.pvalue > 1e-3
    var = float(noise.variance)
    assert abs(x.mean()) < 5 * np.sqrt(var / x.size)
    assert abs(x.var() / var - 1) < 5 * np.sqrt(5.0 / x.size)  # kurtosis of Laplace is 6


@given(
    c=st.floats(0.05, 50.0), l1=st.floats(0.05, 20.0), l2=st.floats(0.05, 20.0), eps=st.floats(0, 5)
)
def test_profile_decreases_with_scale_at_fixed_shape(c, l1, l2, eps):
    lo, hi = min(l1, l2), max(l1, l2)
    d_small = float(log_delta_jit(eps, lo, c * lo, 1.0))
    d_big = float(log_delta_jit(eps, hi, c * hi, 1.0))
    assert d_big <= d_small + 1e-12 * abs(d_small)


def test_epsilon_for_delta():
    # lambda = 1, A = 5, Delta = 1: flat part P(T > 4) = (e - 1) / (2 (e^5 - 1)) = 5.8e-3
    eps = np.asarray(epsilon_truncated_laplace(1e-2, 1.0, 5.0, 1.0))
    assert 0 < eps < 1.0
    assert float(log_delta_jit(eps, 1.0, 5.0, 1.0)) <= np.log(1e-2)
    assert float(log_delta_jit(eps * (1 - 1e-9), 1.0, 5.0, 1.0)) > np.log(1e-2)
    # the flat part P(T > A - Delta) is the floor: below it no epsilon suffices
    floor = float(jnp.exp(log_delta_jit(50.0, 1.0, 5.0, 1.0)))
    assert np.isinf(float(epsilon_truncated_laplace(floor / 2, 1.0, 5.0, 1.0)))


def test_calibration_certified_and_matches_gdgk():
    eps = np.array([0.05, 0.3, 1.0, 3.0])
    cal = dpjax.calibrate("truncated-laplace", epsilon=eps, delta=1e-6, linf=1.0)
    assert np.all(cal.delta_at_params <= 1e-6)
    prof = dpjax.profile("truncated-laplace", cal.params, eps, linf=1.0)
    assert np.allclose(prof, cal.delta_at_params, rtol=1e-12)
    lam, bound = truncated_laplace_gdgk(eps, 1e-6, 1.0)
    v_gdgk = np.asarray(TruncatedLaplace(lam, bound).variance)
    # GDGK is optimal in the high-privacy regime: the family search agrees to ~1e-8
    assert np.allclose(cal.variance, v_gdgk, rtol=1e-8)
    # paper Fig. 3a: 22.21 at eps = 0.3
    assert round(float(cal.variance[1]), 2) == 22.21


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="bound"):
        dpjax.profile("truncated-laplace", {"scale": 1.0, "bound": -1.0}, 0.5)
    with pytest.raises(ValueError, match="scale"):
        dpjax.profile("truncated-laplace", {"scale": 0.0, "bound": 1.0}, 0.5)
    with pytest.raises(ValueError, match="delta"):
        dpjax.calibrate("truncated-laplace", epsilon=1.0, delta=1.5, linf=1.0)
    with pytest.raises(dpjax.errors.InfeasibleTargetError):
        dpjax.calibrate("truncated-laplace", epsilon=1.0, delta=0.0, linf=1.0)


def test_epsilon_zero_delta_1e_300_is_refused_as_out_of_range():
    """(0, 1e-300) needs a bound ~Delta / (2 delta) = 5e299 where the float64 profile
    overflows: it failed as a CertificationError (exit 3, as if dpjax were broken); it is a
    documented refusal now, and a target the profile can reach is still answered."""
    with pytest.raises(dpjax.InfeasibleTargetError, match="beyond the range"):
        dpjax.calibrate("truncated-laplace", epsilon=0.0, delta=1e-300, linf=1.0)
    cal = dpjax.calibrate("truncated-laplace", epsilon=0.0, delta=1e-30, linf=1.0)
    assert float(cal.delta_at_params) <= 1e-30


def test_one_release_is_the_closed_form_search_bitwise():
    """T = 1, K = 1: the exact 1-D search, untouched by the composed path (same arrays)."""
    from dpjax.calibration.truncated_laplace import truncated_laplace_least_variance

    eps = np.array([0.01, 0.3, 1.0, 4.0])
    cal = dpjax.calibrate("truncated-laplace", epsilon=eps, delta=1e-5, linf=2.0,
                          compositions=1)
    scale, bound, var, delta_at, ok = truncated_laplace_least_variance(eps, 1e-5, 2.0)
    assert np.all(ok)
    for got, want in ((cal.params["scale"], scale), (cal.params["bound"], bound),
                      (cal.variance, var), (cal.delta_at_params, delta_at)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert cal.notes == ()


def test_k_dims_times_t_uses_is_kt_uses_of_the_linf_pair():
    """2 dims x 1 use and 1 dim x 2 uses: the same 2 uses of the pair at linf (sensitivity
    scaled exactly: linf = 4 gives 4 times the unit parameters, a power of two), profiled
    and inverted through the same accountant, and under Poisson subsampling."""
    two_dims = dpjax.calibrate("truncated-laplace", epsilon=1.0, delta=1e-5, dim=2, linf=4.0)
    two_uses = dpjax.calibrate("truncated-laplace", epsilon=1.0, delta=1e-5, linf=1.0,
                               compositions=2)
    for name in ("scale", "bound"):
        assert float(two_dims.params[name]) == 4.0 * float(two_uses.params[name])
    assert float(two_dims.variance) == 16.0 * float(two_uses.variance)
    assert float(two_dims.mse) == 2.0 * float(two_dims.variance)
    assert float(two_dims.delta_at_params) == float(two_uses.delta_at_params) <= 1e-5
    assert "2 uses of the 1-D pair at shift linf (2 dims x 1 compositions)" in two_dims.notes[-1]
    assert str(two_uses.member) == "interior" and "mass at +infinity" in two_uses.notes[-1]
    # the façade's profile and account run the accountant of the certificate
    prof = dpjax.profile("truncated-laplace", two_dims.params, [1.0], dim=2, linf=4.0)
    assert float(prof[0]) == float(two_dims.delta_at_params)
    eps = dpjax.account("truncated-laplace", two_uses.params, compositions=2, delta=1e-5,
                        linf=1.0)
    assert 0.99 <= float(eps) <= 1.0
    # Poisson subsampling: the accountant of PoissonSampled leaves (add_remove), tighter
    sampled = dpjax.profile("truncated-laplace", two_uses.params, [1.0], linf=1.0,
                            compositions=2, sampling_rate=0.5)
    leaf = ev.PoissonSampled(0.5, ev.Noise("truncated-laplace", {
        "scale": float(two_uses.params["scale"]), "bound": float(two_uses.params["bound"])}))
    direct = PLDAccountant("add_remove", COMPOSED_BIN_WIDTH).compose(leaf, 2).get_delta(1.0)
    assert float(sampled[0]) == direct < float(two_uses.delta_at_params)


def test_a_k_dim_query_subsampled_once_per_use_is_accounted_jointly():
    """Poisson subsampling draws one coin per use for all ``K`` coordinates: the profile of 2
    dims at rate q is at least the 2-D mixture pair's hockey-stick (``(1 - q) T x T + q (T+1)
    x (T+1)`` against ``T x T``, both orders, summed on a fine 2-D grid).  Each coordinate
    on its own coin (what dpjax composed before: ``K T`` sampled 1-D pairs) is far below it,
    a privacy violation."""
    lam, bound, q = 1.0, 3.0, 0.2
    params = {"scale": lam, "bound": bound}
    eps = np.array([0.3, 0.8])
    got = dpjax.profile("truncated-laplace", params, eps, dim=2, linf=1.0, sampling_rate=q)
    t = np.linspace(-bound - 1.0, bound + 1.0, 1601)
    dt = t[1] - t[0]

    def density(x):
        inside = np.abs(x) <= bound
        return np.where(inside, np.exp(-np.abs(x) / lam), 0.0) / (2 * lam * -np.expm1(-bound / lam))

    base, moved = density(t), density(t - 1.0)
    absent = np.outer(base, base) * dt * dt
    mixed = (1 - q) * absent + q * np.outer(moved, moved) * dt * dt
    exact = np.array([max(np.maximum(mixed - np.exp(e) * absent, 0).sum(),
                          np.maximum(absent - np.exp(e) * mixed, 0).sum()) for e in eps])
    assert np.all(np.asarray(got) >= exact * (1 - 1e-3))
    assert np.all(np.asarray(got) <= exact * 1.2 + 1e-4)
    coins = PLDAccountant("add_remove", COMPOSED_BIN_WIDTH).compose(
        ev.PoissonSampled(q, ev.Noise("truncated-laplace", params)), 2)
    below = np.array([coins.get_delta(float(e)) for e in eps])
    assert np.all(below < 0.97 * exact)
