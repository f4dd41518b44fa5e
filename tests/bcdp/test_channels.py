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
