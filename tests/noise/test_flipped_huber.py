"""Flipped Huber noise family vs direct mpmath integration, scipy KS tests and invariants."""

import functools

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
import scipy.stats
from _helpers import padded_jit

import dpjax
from dpjax.noise import FlippedHuber
from dpjax.noise.flipped_huber import (
    log_normaliser,
    standard_fisher_information,
    standard_isf_log,
    standard_log_mgf,
    standard_log_sf,
    standard_variance,
)
from dpjax.noise.flipped_huber.standard import (
    log_half_gauss_mass,
    log_half_laplace_mass,
    log_half_masses_host,
    standard_log_sf_host,
    standard_variance_host,
)

_vec = padded_jit


# jitted once per padded shape: op-by-op dispatch and per-shape compiles are slow on a busy CPU
_cdf = _vec(lambda a, g, x: FlippedHuber(a, g).cdf(x))
_pdf = _vec(lambda a, g, x: FlippedHuber(a, g).pdf(x))
_sf = _vec(lambda a, g, x: FlippedHuber(a, g).sf(x))
_quantile = _vec(lambda a, g, u: FlippedHuber(a, g).quantile(u))
_log_sf = _vec(standard_log_sf)
_isf_log = _vec(standard_isf_log)
_log_mgf = _vec(standard_log_mgf)


@functools.partial(jax.jit, static_argnums=(3, 4))
def _sample_jit(alpha, gamma, key, n, dtype):
    return FlippedHuber(alpha, gamma).sample(key, (n,), dtype)


def _sample(alpha, gamma, seed, n, dtype):
    return _sample_jit(alpha, gamma, jax.random.key(seed), n, dtype)


B_VALUES = [0.0, 1e-6, 1e-3, 0.05, 0.3, 1.0, 2.0, 5.0, 12.0, 30.0, 50.0]


def _rho(x, b):
    return b * abs(x) if abs(x) <= b else (x * x + b * b) / 2


def _upper_mass(y, b):
    """int_y^inf exp(-rho_b) in mpmath, breakpoints at the kinks and at the decay scale."""
    y, b = mpmath.mpf(y), mpmath.mpf(b)
    r0 = _rho(y, b)
    pts = [y] + sorted(k for k in {-b, mpmath.mpf(0), b} if k > y)
    scale = 1 / max(abs(y), b, mpmath.mpf(1))
    pts += [pts[-1] + scale * m for m in (1, 4, 16, 64)] + [mpmath.inf]
    return mpmath.e ** (-r0) * mpmath.quad(lambda x: mpmath.e ** (-(_rho(x, b) - r0)), pts)


def _moment(fn, b):
    b = mpmath.mpf(b)
    pts = [0, b, b + 1, b + 8, mpmath.inf] if b > 0 else [0, 1, 8, mpmath.inf]
    return 2 * mpmath.quad(lambda x: fn(x) * mpmath.e ** (-_rho(x, b)), pts)


@pytest.fixture(scope="module")
def mp_moments():
    out = {}
    with mpmath.workdps(30):
        for b in B_VALUES:
            bb = mpmath.mpf(b)
            z = _moment(lambda x: 1, b)
            var = _moment(lambda x: x * x, b) / z
            fi = _moment(lambda x, bb=bb: (bb if x <= bb else x) ** 2, b) / z
            out[b] = (float(mpmath.log(z)), float(var), float(fi))
    return out


def test_normaliser_variance_fisher_vs_mpmath(mp_moments):
    b = jnp.asarray(B_VALUES)
    log_z = np.asarray(log_normaliser(b))
    var = np.asarray(standard_variance(b))
    fi = np.asarray(standard_fisher_information(b))
    ref = np.array([mp_moments[v] for v in B_VALUES])
    np.testing.assert_allclose(log_z, ref[:, 0], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(var, ref[:, 1], rtol=1e-13)
    np.testing.assert_allclose(fi, ref[:, 2], rtol=1e-13)


def test_variance_matches_eq11_where_it_does_not_cancel():
    """Eq. (11) as printed, in 50-digit mpmath, against the stable form (whole range)."""
    with mpmath.workdps(50):
        for b in [1e-4, 0.01, 0.5, 3.0, 20.0, 50.0]:
            bb = mpmath.mpf(b)
            a = bb * bb / 2
            omega = 2 * (mpmath.sqrt(2 * mpmath.pi) * mpmath.ncdf(-bb) + 2 / bb * mpmath.sinh(a))
            eq11 = 1 - (2 / bb) ** 3 / omega * (a * mpmath.cosh(a) - mpmath.sinh(a))
            eq12 = 1 + 4 / (bb * omega) * (a * mpmath.e**a - mpmath.sinh(a))
            assert float(standard_variance(b)) == pytest.approx(float(eq11), rel=1e-13)
            assert float(standard_fisher_information(b)) == pytest.approx(float(eq12), rel=1e-13)


def test_scale_family_and_normalised_fisher_between_gauss_and_laplace():
    fh = FlippedHuber(alpha=jnp.asarray(B_VALUES) * 3.0, gamma=3.0)
    np.testing.assert_allclose(
        fh.variance, 9.0 * standard_variance(jnp.asarray(B_VALUES)), rtol=1e-15
    )
    nfi = np.asarray(FlippedHuber(jnp.asarray(B_VALUES), 1.0).normalised_fisher_information)
    assert np.all(nfi >= 1.0 - 1e-12) and np.all(nfi <= 2.0 + 1e-12)
    assert nfi[0] == pytest.approx(1.0, abs=1e-12)  # Gaussian
    assert nfi[-1] == pytest.approx(2.0, rel=1e-3)  # Laplace limit
    # variance <= gamma^2 and Fisher information >= 1/gamma^2 (App. B)
    assert np.all(np.asarray(fh.variance) <= 9.0 * (1 + 1e-15))
    assert np.all(np.asarray(fh.fisher_information) >= 1 / 9.0 * (1 - 1e-15))


def test_log_sf_and_isf_vs_mpmath_far_tails():
    pts = []
    for b in [0.0, 1e-3, 0.3, 2.0, 20.0, 50.0]:
        for y in [-60.0, -3 * b - 1, -b, -0.5 * b, -1e-3, 0.0, 1e-4, 0.3 * b, b * (1 - 1e-9)]:
            pts.append((b, y))
        for y in [b, b + 1e-3, 1.5 * b + 0.5, 3 * b + 2, 40.0, 200.0]:
            pts.append((b, y))
    with mpmath.workdps(30):
        ref = []
        for b, y in pts:
            z = 2 * _upper_mass(0, b)
            ref.append(float(mpmath.log(_upper_mass(y, b) / z)))
    ref = np.array(ref)
    b_arr, y_arr = (jnp.asarray(v) for v in zip(*pts, strict=False))
    got = np.asarray(_log_sf(y_arr, b_arr))
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-15)
    # inverse survival from the log-probability, including P ~ exp(-3e4)
    upper = ref <= np.log(0.5)
    back = np.asarray(_isf_log(jnp.asarray(ref[upper]), b_arr[upper]))
    np.testing.assert_allclose(back, np.asarray(y_arr)[upper], rtol=2e-10, atol=1e-9)


def test_cdf_quantile_roundtrip_and_symmetry():
    a, g = 1.5, 0.7
    u = jnp.asarray([1e-300, 1e-20, 1e-6, 0.01, 0.2, 0.5, 0.7, 0.99, 1 - 1e-12])
    x = _quantile(a, g, u)
    np.testing.assert_allclose(np.asarray(_cdf(a, g, x)), np.asarray(u), rtol=1e-9)
    t = jnp.linspace(-6, 6, 25)
    np.testing.assert_allclose(np.asarray(_cdf(a, g, t) + _cdf(a, g, -t)), 1.0, rtol=1e-15)
    np.testing.assert_allclose(
        np.asarray(_sf(a, g, t)), np.asarray(_cdf(a, g, -t)), rtol=1e-14
    )
    # density integrates to the cdf increments (Gauss-Legendre on kink-free panels)
    edges = np.array([-8.0, -1.5, 0.0, 1.5, 8.0])
    nodes, weights = np.polynomial.legendre.leggauss(60)
    lo, hi = edges[:-1, None], edges[1:, None]
    xs = 0.5 * (hi - lo) * (nodes + 1) + lo
    vals = np.asarray(_pdf(a, g, jnp.asarray(xs)))
    total = np.sum(0.5 * (hi - lo) * np.sum(weights * vals, axis=-1, keepdims=True))
    assert total == pytest.approx(float(_cdf(a, g, 8.0) - _cdf(a, g, -8.0)), rel=1e-13)


def test_mgf_vs_mpmath_and_sub_gaussian():
    with mpmath.workdps(30):
        for b in [0.0, 0.01, 0.5, 2.0, 10.0]:
            bb = mpmath.mpf(b)
            pts = [-mpmath.inf, -bb - 5, -bb, 0, bb, bb + 5, mpmath.inf]
            z = mpmath.quad(lambda x, bb=bb: mpmath.e ** (-_rho(x, bb)), pts)
            for s in [-3.0, -0.5, 0.2, 1.0, 4.0]:
                pts_s = sorted(set(pts + [mpmath.mpf(s)]))
                m = mpmath.quad(lambda x, bb=bb, s=s: mpmath.e ** (s * x - _rho(x, bb)), pts_s) / z
                assert float(_log_mgf(s, b)) == pytest.approx(float(mpmath.log(m)), abs=1e-12)
    # Lemma 2: FH(alpha, gamma^2) is sub-Gaussian with proxy gamma^2
    s = np.linspace(-30, 30, 81)[:, None]
    b = np.array([0.0, 0.1, 1.0, 3.0, 10.0, 50.0])[None, :]
    assert np.all(_log_mgf(s, b) <= 0.5 * s * s + 1e-12)
    fh = FlippedHuber(2.0, 3.0)
    assert float(fh.log_mgf(0.4)) == pytest.approx(float(_log_mgf(1.2, 2.0 / 3.0)), rel=1e-15)
    assert float(fh.mgf(0.0)) == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("alpha,gamma", [(0.0, 1.0), (2.0, 1.0), (31.9, 10.3), (100.0, 2.0)])
def test_sampler_ks_and_moments_float64(alpha, gamma):
    fh = FlippedHuber(alpha, gamma)
    n = 100_000
    x = np.asarray(_sample(alpha, gamma, 7, n, jnp.float64))
    assert x.dtype == np.float64 and np.all(np.isfinite(x))
    stat = scipy.stats.kstest(x, lambda v: np.asarray(_cdf(alpha, gamma, jnp.asarray(v)))).statistic
    assert stat * np.sqrt(n) < 1.63  # KS critical value at level 1%
    var = float(fh.variance)
    # sample variance within 5 standard errors (fourth moment of FH <= Gaussian's 3 sigma^4)
    assert abs(np.var(x) / var - 1) < 5 * np.sqrt(2.0 / n)
    assert abs(np.mean(x)) < 5 * np.sqrt(var / n)


def test_sampler_float32_and_tails():
    n = 100_000
    with jax.enable_x64(False):
        x = _sample(jnp.float32(2.0), jnp.float32(1.0), 1, n, jnp.float32)
        assert x.dtype == jnp.float32
        y = _sample(jnp.float32(2.0), jnp.float32(1.0), 3, 8, jnp.bfloat16)
        assert y.dtype == jnp.bfloat16
    x = np.asarray(x, np.float64)
    assert np.all(np.isfinite(x))
    FlippedHuber(2.0, 1.0)
    stat = scipy.stats.kstest(x, lambda v: np.asarray(_cdf(2.0, 1.0, jnp.asarray(v)))).statistic
    assert stat * np.sqrt(n) < 1.63
    # the Gaussian tail beyond the 1e-3 quantiles: binomial count within 5 sd
    q = float(_isf_log(np.log(1e-3), 2.0))
    count = np.sum(np.abs(x) > q)
    assert abs(count - 2e-3 * n) < 5 * np.sqrt(2e-3 * n)


def test_float64_sampler_reaches_far_tail_and_matches_float32_draws():
    FlippedHuber(0.5, 1.0)
    x = np.asarray(_sample(0.5, 1.0, 11, 2_000_000, jnp.float64))
    # P(|T| > 5) = 2 sf(5) ~ 5e-7: about 1 expected; the far tail must be reachable, finite
    assert np.max(np.abs(x)) > 4.0 and np.all(np.isfinite(x))
    # quantile of the smallest representable p: finite and accurate
    tail = float(_isf_log(-700.0, 0.5))
    assert float(_log_sf(tail, 0.5)) == pytest.approx(-700.0, rel=1e-12)


def test_jit_vmap_parity():
    alphas = jnp.asarray([0.0, 0.5, 3.0])
    xs = jnp.linspace(-4, 4, 9)

    def f(a, x):
        fh = FlippedHuber(a, 1.3)
        return fh.logpdf(x), fh.log_sf(x), fh.variance

    single = jax.jit(f)
    looped = [np.stack([np.asarray(single(a, xs)[i]) for a in alphas]) for i in range(3)]
    batched = jax.jit(jax.vmap(f, in_axes=(0, None)))(alphas, xs)
    for e, b in zip(looped, batched, strict=False):
        np.testing.assert_allclose(np.asarray(b), e, rtol=1e-14)
    eager = FlippedHuber(alphas[1], 1.3).log_sf(xs)
    np.testing.assert_allclose(np.asarray(eager), looped[1][1], rtol=1e-14)
    # NamedTuple pytree through jit
    fh = FlippedHuber(jnp.asarray(1.0), jnp.asarray(2.0))
    assert float(jax.jit(lambda n: n.variance)(fh)) == pytest.approx(float(fh.variance), rel=1e-15)


def test_privacy_loss_is_log_density_ratio():
    fh = FlippedHuber(1.2, 0.8)
    t = jnp.linspace(-5, 5, 41)
    for d in [0.3, 1.0, 4.0, -2.0]:
        direct = fh.logpdf(t) - fh.logpdf(t + d)
        np.testing.assert_allclose(
            np.asarray(fh.privacy_loss(t, d)), np.asarray(direct), atol=1e-12
        )


@pytest.mark.parametrize(
    "params,name",
    [
        ({"alpha": -1.0, "gamma": 1.0}, "alpha"),
        ({"alpha": 1.0, "gamma": 0.0}, "gamma"),
        ({"alpha": 1.0, "gamma": -2.0}, "gamma"),
        ({"alpha": float("nan"), "gamma": 1.0}, "alpha"),
        ({"alpha": 1.0, "gamma": float("inf")}, "gamma"),
        ({"alpha": 1.0}, "gamma"),
        ({"alpha": 1.0, "gamma": 1.0, "beta": 2.0}, "beta"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(params, name):
    with pytest.raises(ValueError, match=name):
        dpjax.noise.make("flipped-huber", **params)
    with pytest.raises(ValueError, match=name):
        dpjax.profile("flipped-huber", params, epsilon=1.0)


def test_make_builds_the_family():
    fh = dpjax.noise.make("flipped-huber", alpha=2.0, gamma=1.0)
    assert isinstance(fh, FlippedHuber)
    assert float(fh.variance) == pytest.approx(float(standard_variance(2.0)), rel=1e-15)


def test_standard_host_twins_match_the_jitted_kernels():
    b = np.append(0.0, np.geomspace(1e-3, 1e9, 60))
    np.testing.assert_allclose(standard_variance_host(b),
                               np.asarray(jax.jit(standard_variance)(jnp.asarray(b))), rtol=1e-12)
    log_a, log_b = log_half_masses_host(b)
    np.testing.assert_allclose(log_a, np.asarray(log_half_laplace_mass(jnp.asarray(b))),
                               rtol=1e-13)
    np.testing.assert_allclose(log_b, np.asarray(log_half_gauss_mass(jnp.asarray(b))),
                               rtol=1e-13)
    # the tail on both sides of the kink y = b, for Laplace-like to Gaussian-like shapes
    bs = np.array([0.0, 0.1, 1.0, 3.0])[:, None]
    y = np.array([0.0, 0.05, 0.5, 0.99, 1.0, 1.01, 2.5, 8.0, 30.0])[None, :]
    np.testing.assert_allclose(standard_log_sf_host(y, bs),
                               np.asarray(standard_log_sf(jnp.asarray(y), jnp.asarray(bs))),
                               rtol=1e-12, atol=1e-14)
