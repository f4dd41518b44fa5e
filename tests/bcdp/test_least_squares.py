"""Algorithm 3 and its trust-region OPT (bayesian-coordinate-dp)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.bcdp import budget, mean
from dpjax.bcdp import least_squares as ls


@pytest.mark.parametrize("seed", range(6))
def test_trust_region_kkt(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(4, 4))
    a = (a + a.T) / 2 + (3.0 if seed % 2 else 0.0) * np.eye(4)
    b = rng.normal(size=4) * (0.2 if seed == 4 else 1.0)
    r = 0.8
    th = np.asarray(ls.minimize_quadratic_on_ball(jnp.asarray(a), jnp.asarray(b), r))
    assert np.linalg.norm(th) <= r * (1 + 1e-12)
    g = a @ th - b
    # KKT of the trust-region subproblem: g = -mu theta, mu >= 0, a + mu I PSD
    mu = 0.0 if np.linalg.norm(th) < r * (1 - 1e-9) else -g @ th / r**2
    assert mu >= -1e-9
    np.testing.assert_allclose(g + mu * th, 0, atol=1e-8)
    assert np.linalg.eigvalsh(a + mu * np.eye(4))[0] >= -1e-8


def test_trust_region_hard_case():
    a = np.diag([-1.0, 2.0])
    b = np.array([0.0, 1.0])  # no component on the least eigenvector
    th = np.asarray(ls.minimize_quadratic_on_ball(jnp.asarray(a), jnp.asarray(b), 1.0))
    assert np.linalg.norm(th) == pytest.approx(1.0)
    assert th[1] == pytest.approx(1.0 / 3.0)  # (2 + mu) th_1 = 1 with mu = 1


def test_private_least_squares_unbiased_objective():
    # hat f is unbiased: averaging A and b over repeats recovers the data's
    rng = np.random.default_rng(0)
    n = 4000
    z = rng.uniform(-1, 1, size=(n, 2))
    lab = np.clip(z @ np.array([0.4, -0.2]), -1, 1)
    b = budget.theorem2_budget([2.0, 4.0, 4.0], 4.0, 0.1)
    fit = ls.private_least_squares(jax.random.key(0), jnp.asarray(z), jnp.asarray(lab), b.c, 1.0)
    a_true = z.T @ z / n
    b_true = z.T @ lab / n
    # E[(hat x_i hat x'_j)^2] <= (v_i + 1)(v_j + 1) with v the per-user variance bound of
    # M_mean(x, c/2): 5 standard errors
    v = mean.variance_bound(b.c / 2, 1) + 1.0
    se = np.sqrt(np.outer(v, v) / n)
    assert np.all(np.abs(np.asarray(fit.quadratic) - a_true) < 5 * se[:2, :2])
    assert np.all(np.abs(np.asarray(fit.linear) - b_true) < 5 * se[:2, 2])
    assert np.linalg.norm(fit.theta) <= 1 + 1e-12


def test_theorem3_bound_decreases_with_n():
    c = [0.5, 2.0, 2.0]
    assert ls.theorem3_bound(c, 10**8, 1.0) < ls.theorem3_bound(c, 10**6, 1.0)
    assert ls.theorem3_bound(c, 1, 1.0) == pytest.approx(2 * 3)  # the wedge d cap


def test_rejects_shapes():
    with pytest.raises(ValueError, match="features"):
        ls.private_least_squares(jax.random.key(0), jnp.zeros((3, 2)), jnp.zeros(4), [1, 1, 1], 1)
