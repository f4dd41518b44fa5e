"""mu0 of problem (P2) by the Appendix B bisection (Algorithm 1)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.calibration.gaussian import mu_gaussian
from dpjax.certificate import MARGIN
from dpjax.inid import appendix_b_bracket, bracket_root, mu0
from dpjax.numerics import Status

EPS = jnp.array([1e-6, 1e-3, 0.05, 0.5, 1.0, 3.0, 10.0, 40.0])
_mu_gaussian = jax.jit(mu_gaussian)  # the foundation's bisection, compiled once


@pytest.mark.parametrize("delta", [1e-300, 1e-12, 1e-6, 1e-2, 0.5, 0.9])
def test_agrees_with_foundation_gaussian_calibration(delta):
    res = mu0(EPS, jnp.full_like(EPS, delta))
    ref, status = _mu_gaussian(EPS, jnp.full_like(EPS, delta))
    assert np.all(np.asarray(res.status) == 0) and np.all(np.asarray(status) == 0)
    # both return the last certified point of the same float64 kernel (accurate to ~1e-13
    # relative in delta); they differ only by where its rounding noise crosses the level
    # (up to ~3e-13 at eps = 1e-6, where d log delta / d log mu ~ 1)
    np.testing.assert_allclose(res.mu0, ref, rtol=1e-12)
    if delta <= 0.5:  # delta' < 1: the Appendix B bracket is used
        assert np.all(np.asarray(res.used_bracket)[1:])


def _phi(mp, eps, mu):
    """varphi_eps(mu) of Lemma 11 in mpmath (independent of the float64 kernels)."""
    q = lambda x: mp.erfc(x / mp.sqrt(2)) / 2
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return q(eps / mu - mu / 2) - mp.exp(eps) * q(eps / mu + mu / 2)


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (0.05, 1e-10), (3.0, 1e-5), (10.0, 1e-30)])
def test_certified_and_tight_against_mpmath(mp, eps, delta):
    res = mu0(eps, delta)
    m = float(res.mu0)
    # the guarantee: varphi(mu0) <= delta; the certificate targets delta (1 - MARGIN)
    # with a float64 kernel accurate to ~1e-13 relative
    phi = _phi(mp, eps, m)
    assert phi <= mp.mpf(delta)
    assert phi <= mp.mpf(delta) * (1 - mp.mpf(MARGIN)) * (1 + mp.mpf(1e-12))
    # tight: 1e-9 relative more mu violates the target
    assert _phi(mp, eps, m * (1 + 1e-9)) > mp.mpf(delta) * (1 - mp.mpf(MARGIN))
    # the Appendix B bracket contains it
    assert float(res.lower) <= m <= float(res.upper)
    assert float(res.width) <= 4e-16 * m


def test_bracket_roots_solve_their_equation(mp):
    """R_eps(a) is the positive root of Q(eps/mu - mu/2) = a (Appendix B)."""
    eps = jnp.array([0.5, 2.0, 1e-4])
    a = jnp.array([1e-6, 0.3, 1e-9])
    roots = jax.jit(bracket_root)(eps, a)
    for e, level, r in zip(eps.tolist(), a.tolist(), np.asarray(roots).tolist(), strict=True):
        val = mp.erfc((mp.mpf(e) / r - mp.mpf(r) / 2) / mp.sqrt(2)) / 2
        assert float(val) == pytest.approx(level, rel=1e-10)
    lo, hi = jax.jit(appendix_b_bracket)(jnp.array([0.5, 0.5]), jnp.array([1e-6, 0.95]))
    assert 0 < float(lo[0]) < float(hi[0])
    # delta' = delta + e^eps Q(sqrt(2 eps)) >= 1: no upper root
    assert not np.isfinite(float(hi[1]))


def test_delta_zero_is_infeasible_and_eps_zero_works():
    from scipy.stats import norm

    res = mu0(jnp.array([0.5, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
              jnp.array([0.0, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6]))
    assert int(res.status[0]) == Status.INFEASIBLE and float(res.mu0[0]) == 0.0
    # eps = 0: Q(-mu/2) - Q(mu/2) = delta
    assert float(res.mu0[1]) == pytest.approx(2 * norm.isf((1 - 1e-6) / 2), rel=1e-9)
    assert not bool(res.used_bracket[1])  # R_0(delta) = 0: the log bracket is used


def test_vmap_and_compile_once():
    grid_e = jnp.linspace(0.1, 2.0, 8)
    grid_d = jnp.geomspace(1e-9, 1e-3, 8)
    v = jax.vmap(lambda e, d: mu0(e, d).mu0)(grid_e, grid_d)
    np.testing.assert_allclose(v, mu0(grid_e, grid_d).mu0, rtol=0)
    mu0(0.3, 1e-5)
    before = mu0._cache_size()
    for e, d in [(0.31, 2e-5), (1.7, 1e-9), (5.0, 0.1)]:
        mu0(e, d)
    assert mu0._cache_size() == before  # epsilon, delta are traced, not static
