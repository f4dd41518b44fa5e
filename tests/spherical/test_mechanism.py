"""Designed spherical mechanism: exact sampler (Monte Carlo), atoms, certified PLD accounting."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.accounting import pld as pld_engine
from dpjax.spherical import coefficients as co
from dpjax.spherical import design as de
from dpjax.spherical.mechanism import SphericalMechanism

M_DIM, N_SHELLS, N_FREE, R, BUDGET = 10, 12, 36, 0.75, 2.5


@pytest.fixture(scope="module")
def mech():
    rows = co.tail_rows(M_DIM, N_SHELLS, N_FREE, R)
    coeffs = co.coefficients(M_DIM, N_SHELLS, rows)
    prob, sol = de.design(coeffs, N_FREE, R, BUDGET)
    return SphericalMechanism.from_solution(prob, sol, coeffs, BUDGET)


def test_atoms_reproduce_kl_and_mass(mech):
    loss, pm, qm, p_out, q_out = mech.atoms()
    assert float(np.sum(loss * pm)) == pytest.approx(mech.kl, rel=1e-12)
    assert p_out < 1e-12 and q_out < 1e-12
    # symmetric pair: the Q-law of the loss is the P-law of its negative
    assert float(np.sum(-loss * qm)) == pytest.approx(mech.kl, rel=1e-9)
    assert mech.expected_cost() == pytest.approx(BUDGET, rel=1e-10)


def test_sampler_monte_carlo(mech):
    size = 100_000
    z = np.asarray(mech.sample(jax.random.PRNGKey(1), (size,)))
    assert z.shape == (size, M_DIM)
    r2 = np.sum(z**2, axis=-1)
    assert abs(r2.mean() - BUDGET) < 5 * r2.std() / math.sqrt(size)
    lm = mech.shell_log_masses()
    p = np.exp(lm)
    shells = np.floor(np.sqrt(r2) * N_SHELLS).astype(int)
    emp = np.bincount(shells, minlength=p.size)[: p.size]
    keep = p * size > 20
    chi2 = float(np.sum((emp[keep] - size * p[keep]) ** 2 / (size * p[keep])))
    dof = int(keep.sum()) - 1
    assert chi2 < dof + 6 * math.sqrt(2 * dof)
    # privacy loss at the sample (density ratio at shift e1): its mean is the KL
    shifted = z.copy()
    shifted[:, 0] -= 1.0
    loss = mech.log_density(z) - mech.log_density(shifted)
    assert abs(loss.mean() - mech.kl) < 5 * loss.std() / math.sqrt(size)
    # directions uniform: mean of the unit vector ~ 0
    u = z / np.sqrt(r2)[:, None]
    assert np.all(np.abs(u.mean(axis=0)) < 5 / math.sqrt(size * M_DIM) * math.sqrt(M_DIM))


def test_pld_certified_against_exact_atoms(mech):
    """One use: ``delta`` is the cells' hockey-stick plus a rounding pad (at most 1e-9
    relative above an independent exact sum); the PLD of the cells (what composition and
    subsampling use) lies between that and 1 % above it."""
    loss, pm, qm, p_out, _ = mech.atoms()
    for eps in (0.5, 2.0, 5.0):
        terms = [max(float(p) - math.exp(eps) * float(q), 0.0) for p, q in zip(pm, qm, strict=True)]
        exact = math.fsum(terms) + p_out
        got = mech.delta(eps)
        assert exact <= got <= exact * (1 + 1e-9) + 1e-15
        grid = float(pld_engine.delta_for_epsilon(mech.pld(), eps))
        assert grid >= exact * (1 - 1e-9)
        assert grid <= exact * 1.01 + 1e-12
    eps = mech.epsilon(1e-6)
    exact_at = float(np.sum(np.maximum(pm - math.exp(eps) * qm, 0.0)) + p_out)
    assert exact_at <= 1e-6


def test_subsampled_composition_monotone(mech):
    e = mech.epsilons(1e-8, [1, 8], sampling_rate=0.01)
    assert 0 < e[0] < e[1] < mech.epsilon(1e-8)


def test_rate_one_is_plain_composition(mech):
    """``q = 1`` keeps every record (allowed by the validation): the plain PLD, not a
    ``log(1 - q)`` domain error; its profile is the unsubsampled one's."""
    plain = float(pld_engine.delta_for_epsilon(mech.pld(), 1.0))
    assert float(pld_engine.delta_for_epsilon(mech.pld(1.0), 1.0)) == plain
    assert mech.delta(1.0, 2, 1.0) == mech.delta(1.0, 2)


def test_uses_are_validated_before_any_accounting():
    # a toy mechanism (no solve): every refusal happens before the cells are read
    toy = SphericalMechanism(2, 1, 2, 0.5, np.zeros(3), np.zeros((4, 3)), np.zeros(4), 1.0, 0.1)
    with pytest.raises(ValueError, match="compositions must be an integer >= 1, got 0"):
        toy.epsilon(1e-6, 0)
    with pytest.raises(ValueError, match="compositions"):
        toy.delta(1.0, 0)
    for bad in (0.0, 1.0, 2.0, math.nan):
        with pytest.raises(ValueError, match=r"delta must be a single number in \(0, 1\)"):
            toy.epsilon(bad)
    with pytest.raises(ValueError, match="sampling_rate"):
        toy.epsilon(1e-6, 2, 1.5)
    with pytest.raises(ValueError, match=r"delta must be a single number in \(0, 1\)"):
        de.epsilon_criterion(2.0, 1)


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.uint8, jnp.bool_, jnp.complex64])
def test_sampler_refuses_non_float_dtypes(mech, dtype):
    """z.astype(int32) returned rounded noise (f(D) + int(Z) reveals f(D) mod 1); every
    dpjax sampler refuses dtypes that are not real floating types."""
    with pytest.raises(TypeError, match="dtype must be a real floating type"):
        mech.sample(jax.random.PRNGKey(0), (4,), dtype=dtype)
    assert mech.sample(jax.random.PRNGKey(0), (4,), dtype=jnp.float32).dtype == jnp.float32
