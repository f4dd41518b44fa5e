"""What a deep grid may lose to float64 underflow goes to ``+infinity``
(:mod:`dpjax.accounting.pld.underflow`), on the ledger's leaves and in the engine alike.

Reference: the charge's own formula, ``3 e^h u_min n (1 + 1e-9)``; the test first shows that a
pair cut at ``1e-300`` does have flushed (zero) entries whose exact mass is positive.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld import engine
from dpjax.accounting.pld import plan as pld_plan
from dpjax.accounting.pld.discretise import TAIL, discretise_noise, noise_grid
from dpjax.accounting.pld.underflow import TINY, charge_underflow
from dpjax.noise import Gaussian

H = 1e-2


def _deep_pld(tail, pessimistic=True):
    noise = Gaussian(0.3)
    lower, size = noise_grid(noise, 1.0, H, tail)
    return discretise_noise(noise, 1.0, H, lower, size, pessimistic, tail)


def _charge(pld):
    return 3.0 * math.exp(H) * TINY * pld.size * (1.0 + 1e-9)


def test_deep_grid_flushes_and_is_charged():
    pld = _deep_pld(1e-300)
    pmf = np.asarray(pld.pmf)
    # the loss pmf is positive everywhere on the grid in exact arithmetic: zeros are flushes
    assert np.sum(pmf == 0.0) > 0
    charged = charge_underflow(pld, 1e-300)
    added = float(charged.inf_mass) - float(pld.inf_mass)
    assert added >= 0.999 * _charge(pld)
    assert float(charged.atom_inf) >= float(pld.atom_inf) + 0.999 * _charge(pld)
    assert float(charged.truncated_mass) >= float(pld.truncated_mass) + 0.999 * _charge(pld)


def test_no_charge_at_today_tail_or_when_optimistic():
    shallow = _deep_pld(TAIL)
    assert charge_underflow(shallow, TAIL) is shallow
    lower_end = _deep_pld(1e-300, pessimistic=False)
    assert charge_underflow(lower_end, 1e-300) is lower_end


def test_traced_tail_charges_only_deep_levels():
    pld = _deep_pld(1e-300)
    inf_mass = jax.jit(lambda t: charge_underflow(pld, t).inf_mass)
    assert float(inf_mass(jnp.float64(TAIL))) == float(pld.inf_mass)
    assert float(inf_mass(jnp.float64(1e-300))) >= float(pld.inf_mass) + 0.999 * _charge(pld)


def _gaussian(scale, shape):
    del shape
    return Gaussian(scale)


def test_engine_pairs_are_charged_at_deep_levels():
    """The tilted engine builds its pairs through ``engine.stacked_plds`` with the level
    traced."""
    sizes = pld_plan.Sizes(4096, 0, 0.0)
    args = engine.scalar_args(0.3, 0.0, 1.0, None, 1)

    def inf_mass(tail):
        plds = engine.stacked_plds(_gaussian, *args, H, sizes, False, tail=tail)
        return plds.inf_mass[0]

    shallow, deep = (float(jax.jit(inf_mass)(jnp.float64(t))) for t in (TAIL, 1e-300))
    assert deep >= shallow + 0.999 * 3.0 * math.exp(H) * TINY * 4096
