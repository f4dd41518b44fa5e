"""LDP channels: unbiasedness (Monte Carlo), exact density ratio, variance closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special as sps

from dpjax.bcdp import channels as ch
from dpjax.bcdp import mean as mm

N = 20_000


@pytest.fixture(scope="module", params=["duchi", "privunit"])
def draws(request):
    chan = ch.get_channel(request.param)
    m, eps, r = 4, 1.2, 2.0
    v = jnp.array([1.2, -0.4, 0.0, 0.9])
    z = chan.sample(jax.random.key(7), jnp.tile(v, (N, 1)), eps, r)
    return chan, chan.parameters(eps, m, r), v, np.asarray(z)


def test_unbiased(draws):
    _, prm, v, z = draws
    # each coordinate's standard error is at most |Z| / sqrt(N); 5 standard errors
    se = float(prm.norm) / np.sqrt(N)
    assert np.all(np.abs(z.mean(0) - np.asarray(v)) < 5 * se)


def test_norm_and_total_variance(draws):
    _, prm, v, z = draws
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), float(prm.norm), rtol=1e-12)
    total = float(prm.norm) ** 2 - float(jnp.sum(v * v))  # E|Z - v|^2 exactly
    emp = np.mean(np.sum((z - np.asarray(v)) ** 2, axis=1))
    assert emp == pytest.approx(total, rel=0.02)


def test_coordinate_second_moment_bound(draws):
    chan, prm, _, z = draws
    bound = float(mm.coordinate_second_moment(prm, chan.name == "duchi"))
    se = (z**2).std(0) / np.sqrt(N)
    assert np.all((z**2).mean(0) <= bound + 5 * se)


def test_exact_density_ratio(draws):
    _, prm, v, z = draws
    assert float(ch.exact_ldp_epsilon(prm)) <= 1.2
    assert float(ch.exact_ldp_epsilon(prm)) == pytest.approx(1.2, abs=1e-9)
    inputs = jnp.array([[2.0, 0, 0, 0], [-2.0, 0, 0, 0], [0.3, 0.2, -0.1, 0.0], [0.0] * 4])
    logf = np.stack([np.asarray(ch.log_density(jnp.asarray(z[:2000]), u, prm)) for u in inputs])
    spread = logf.max(0) - logf.min(0)
    assert spread.max() <= 1.2 + 1e-12
    assert spread.max() == pytest.approx(1.2, abs=1e-9)  # opposite inputs on the sphere


def test_duchi_constant_is_unbiased_closed_form():
    # B = r coth(a/2) / E|U_1|, E|U_1| = Gamma(m/2) / (sqrt(pi) Gamma((m+1)/2))
    m, a, r = 7, 0.8, 1.5
    e_abs = np.exp(sps.gammaln(m / 2) - sps.gammaln((m + 1) / 2)) / np.sqrt(np.pi)
    expected = r / np.tanh(a / 2) / e_abs
    assert float(ch.duchi_parameters(a, m, r).norm) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("name", ["duchi", "privunit"])
def test_constants_finite_at_large_dimension(name):
    prm = ch.get_channel(name).parameters(1.0, 100_000, np.sqrt(100_000))
    assert np.isfinite(float(prm.norm)) and float(prm.norm) > 0
    assert float(ch.exact_ldp_epsilon(prm)) <= 1.0


def test_privunit_large_dimension_sample_unbiased():
    m = 5_000
    prm = ch.privunit_parameters(2.0, m, 1.0)
    v = jnp.zeros((200, m)).at[:, 0].set(1.0)
    z = ch.sample(jax.random.key(3), v, prm)
    # the first coordinate's standard error is at most |Z| sqrt(E t^2) / sqrt(200)
    se = float(prm.norm) * np.sqrt(float(mm._privunit_t2(prm))) / np.sqrt(200)
    assert abs(float(z[:, 0].mean()) - 1.0) < 5 * se


def test_rejects_outside_ball():
    with pytest.raises(ValueError, match="ball"):
        ch.DUCHI.sample(jax.random.key(0), jnp.ones((2, 2)), 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        ch.duchi_parameters(0.0, 2, 1.0)


@pytest.mark.parametrize("m", [2, 3, 10, 10_000])
@pytest.mark.parametrize("eps", [0.3, 8.0])
def test_privunit_angle_is_the_inverse_cdf(m, eps):
    # the sampled angle beta to the region's pole solves F_m(beta) = y F_m(b), F_m the
    # distribution function of the angle under the uniform law (scipy's betainc, an
    # independent evaluation), to rounding: |error| <= 1e-13 F + 64 eps f_m(beta) beta
    from dpjax.bcdp import _cap

    prm = ch.privunit_parameters(eps, m, 1.0)
    h = (m - 1) / 2
    y = np.concatenate([np.random.default_rng(m).random(3000), _cap.GRID[1:-2],
                        [2.0**-52, 1 - 2.0**-52]])
    tables = jnp.asarray(prm.table).reshape(1, 2, 2, -1)
    for region, mass in ((0, float(prm.cap_mass)), (1, 1 - float(prm.cap_mass))):
        beta = np.asarray(_cap.sample_angle(
            jnp.asarray(y), jnp.full(y.size, float(m)), jnp.full(y.size, mass), tables,
            jnp.zeros(y.size, jnp.int32), jnp.full(y.size, region, jnp.int32)))
        assert np.all(np.diff(beta[np.argsort(y)]) >= 0)  # monotone in y
        cdf = sps.betainc(h, h, np.sin(beta / 2) ** 2)
        log_f = (m - 2) * np.log(np.sin(beta)) - sps.betaln(0.5, h) if m > 2 else -np.log(np.pi)
        tol = 1e-13 * y * mass + 64 * np.finfo(float).eps * np.exp(log_f) * beta
        assert np.all(np.abs(cdf - y * mass) <= tol)
    # the region ends: the cap is {beta <= arccos gamma}, its complement the rest
    b = np.arccos(float(prm.gamma))
    assert float(jnp.max(tables[0, 0, 0])) == pytest.approx(b, rel=1e-15)
    assert float(jnp.max(tables[0, 1, 0])) == pytest.approx(np.pi - b, rel=1e-15)


def test_privunit_inner_product_law_monte_carlo():
    # <Z/|Z|, u> for u on the sphere: on the cap with probability p, and there its law is the
    # uniform sphere's restricted to [gamma, 1] (Kolmogorov-Smirnov against betainc)
    from scipy import stats

    m, eps = 6, 1.5
    prm = ch.privunit_parameters(eps, m, 1.0)
    u = jnp.zeros((N, m)).at[:, 2].set(1.0)
    z = np.asarray(ch.sample(jax.random.key(11), u, prm)) / float(prm.norm)
    t = z[:, 2]
    p, gamma, cap = float(prm.keep_prob), float(prm.gamma), float(prm.cap_mass)
    on_cap = t >= gamma
    assert abs(on_cap.mean() - p) < 5 * np.sqrt(p * (1 - p) / N)
    h = (m - 1) / 2

    def cap_cdf(x):
        return 1 - sps.betainc(h, h, (1 - x) / 2) / cap

    def rest_cdf(x):
        return sps.betainc(h, h, (1 + x) / 2) / (1 - cap)

    assert stats.kstest(t[on_cap], cap_cdf).pvalue > 1e-3
    assert stats.kstest(t[~on_cap], rest_cdf).pvalue > 1e-3


@pytest.mark.parametrize("eps, m", [(0.05, 10), (1.0, 2), (2.0, 7), (8.0, 300), (3.0, 20_000)])
def test_privunit_split_is_the_best_candidate(eps, m):
    # a scalar scan of the candidate splits, written out: the hemisphere, then each grid
    # fraction f with a_1 = f a, P its realised cap mass, a_0 = a - log((1-P)/P) - slack;
    # the unbiasing gain E<V, u> = K (p/P - (1-p)/(1-P)) is largest at the chosen one
    prm = ch.privunit_parameters(eps, m, 1.0, table=False)
    h = (m - 1) / 2

    def gain(a0, gamma):
        cap = sps.betainc(h, h, (1 - gamma) / 2)
        p = sps.expit(a0)
        k = np.exp(h * np.log1p(-gamma**2) - np.log(m - 1) - (m - 2) * np.log(2.0)
                   - sps.betaln(h, h))
        return k * (p / cap - (1 - p) / (1 - cap)), cap

    best, _ = gain(eps * (1 - 1e-12), 0.0)
    for f in ch._SPLIT_GRID:
        gamma = 2 * sps.betaincinv(h, h, 1 - sps.expit(-f * eps)) - 1
        cap = sps.betainc(h, h, (1 - gamma) / 2)
        a0 = eps - np.log((1 - cap) / cap) - (1e-12 * eps + 1e-15)
        if a0 > 0:
            best = max(best, gain(a0, gamma)[0])
    assert 1.0 / float(prm.norm) == pytest.approx(best, rel=1e-12)
    assert float(ch.exact_ldp_epsilon(prm)) <= eps
