"""The shift-mixture loss inverse: the bisection's answer in a fraction of its evaluations."""

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld import mixture
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.privacy_loss import INVERSE_ITERATIONS, monotone_inverse


def test_mixture_inverse_is_the_bisection_in_fewer_evaluations():
    """dp_accounting's mixture (sigma 1, c = 0, 1, 2; p = 0.2, 0.6, 0.2), both directions,
    on a grid of step 1e-4 (as the accountant's): the same sup{t : L(t) <= eps} within the
    loss's rounding band, and ~5x fewer loss evaluations (the test of issue 34's 120 s)."""
    noise = Gaussian(jnp.float64(1.0))
    c, w = jnp.array([0.0, 1.0, 2.0, 2.0]), jnp.log(jnp.array([0.2, 0.6, 0.2, 0.0]))
    z, v = jnp.zeros(4), jnp.log(jnp.array([1.0, 0.0, 0.0, 0.0]))
    eps = jnp.arange(-3.0, 6.0, 1e-4)
    for args in ((c, w, z, v), (-z, v, -c, w)):
        pair = mixture.shift_mixture_pair(noise, *args)
        count = []

        def loss(t, pair=pair, count=count):
            jax.debug.callback(lambda x: count.append(np.size(x)), t)
            return pair.loss(t)

        got = jax.jit(lambda e, loss=loss, pair=pair: mixture.mixture_loss_inverse(
            loss, e, pair.t_lo, pair.t_hi))(eps)
        jax.block_until_ready(got)
        evaluations = sum(count) / eps.size
        ref = monotone_inverse(pair.loss, eps, pair.t_lo, pair.t_hi)
        assert evaluations < INVERSE_ITERATIONS / 3  # ~20 (the bisection: 112)
        # the same crossing: where the answers differ, both are within rounding of it
        f, df = jax.jvp(pair.loss, (got,), (jnp.ones_like(got),))
        band = 1e-12 * (1.0 + (jnp.abs(eps) + 1.0) / jnp.maximum(df, 1e-300))
        assert bool(jnp.all(jnp.abs(got - ref) <= band))
        inside = eps >= pair.loss(pair.t_lo)  # below the range: t_lo, as the bisection
        ok = pair.loss(got) <= eps + 1e-13 * (1.0 + jnp.abs(eps))
        assert bool(jnp.all(ok | ~inside)) and bool(jnp.all(jnp.where(inside, True, got == ref)))
