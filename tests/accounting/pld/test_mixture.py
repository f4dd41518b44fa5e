"""The shift-mixture loss inverse: the bisection's answer in a fraction of its evaluations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _helpers import tiered

from dpjax.accounting.pld import mixture
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.privacy_loss import INVERSE_ITERATIONS, monotone_inverse


@pytest.mark.parametrize("step", tiered(1e-3, 1e-4))
def test_mixture_inverse_is_the_bisection_in_fewer_evaluations(step):
    """dp_accounting's mixture (sigma 1, c = 0, 1, 2; p = 0.2, 0.6, 0.2), both directions,
    on a grid of ``step`` (1e-4 as the accountant's, in the slow tier): the same
    sup{t : L(t) <= eps} within the loss's rounding band, and ~5x fewer loss evaluations
    (the test of issue 34's 120 s)."""
    noise = Gaussian(jnp.float64(1.0))
    c, w = jnp.array([0.0, 1.0, 2.0, 2.0]), jnp.log(jnp.array([0.2, 0.6, 0.2, 0.0]))
    z, v = jnp.zeros(4), jnp.log(jnp.array([1.0, 0.0, 0.0, 0.0]))
    eps = jnp.arange(-3.0, 6.0, step)
    count = []

    @jax.jit  # one program for both directions (op-by-op, each primitive compiles alone)
    def check(args, eps):
        pair = mixture.shift_mixture_pair(noise, *args)

        def loss(t):
            jax.debug.callback(lambda x: count.append(np.size(x)), t)
            return pair.loss(t)

        got = mixture.mixture_loss_inverse(loss, eps, pair.t_lo, pair.t_hi)
        ref = monotone_inverse(pair.loss, eps, pair.t_lo, pair.t_hi)
        # the same crossing: where the answers differ, both are within rounding of it
        f, df = jax.jvp(pair.loss, (got,), (jnp.ones_like(got),))
        band = 1e-12 * (1.0 + (jnp.abs(eps) + 1.0) / jnp.maximum(df, 1e-300))
        inside = eps >= pair.loss(pair.t_lo)  # below the range: t_lo, as the bisection
        ok = pair.loss(got) <= eps + 1e-13 * (1.0 + jnp.abs(eps))
        return (jnp.all(jnp.abs(got - ref) <= band), jnp.all(ok | ~inside),
                jnp.all(jnp.where(inside, True, got == ref)))

    for args in ((c, w, z, v), (-z, v, -c, w)):
        count.clear()
        close, below, clipped = jax.block_until_ready(check(args, eps))
        evaluations = sum(count) / eps.size
        assert evaluations < INVERSE_ITERATIONS / 3  # ~20 (the bisection: 112)
        assert bool(close)
        assert bool(below) and bool(clipped)
