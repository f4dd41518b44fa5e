"""Inverse CDF of the symmetric Beta law, in JAX (PrivUnit2's cap sampler)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array
from jax.scipy.special import betainc, betaln

#: iteration cap of the safeguarded Newton search (it stops earlier once converged)
_MAX_ITERATIONS = 80


def beta_quantile(a: Array, y: Array, lo: Array, hi: Array) -> Array:
    r"""``x`` in ``[lo, hi]`` with ``I_x(a, a) = y`` (regularised incomplete beta), elementwise.

    Safeguarded Newton on ``I_x(a, a) - y`` (a bisection step whenever Newton leaves
    the bracket), run under ``lax.while_loop`` until every element's bracket or step
    is below ``4 ulp``; jit/vmap-safe.  The target must lie in ``[I_lo, I_hi]``.

    Args:
      a: shape parameter ``> 0`` of ``Beta(a, a)``.
      y: target probabilities.
      lo: lower end of the bracket.
      hi: upper end of the bracket.

    Returns:
      The quantiles, shape of the broadcast inputs.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(beta_quantile(2.0, 0.5, 0.0, 1.0)), 12)
      0.5
    """
    arrays = (jnp.asarray(v, dtype=jnp.float64) for v in (a, y, lo, hi))
    a, y, lo, hi = jnp.broadcast_arrays(*arrays)
    log_norm = betaln(a, a)
    eps = jnp.finfo(jnp.float64).eps

    def cond(state):
        i, _, lo_, hi_, step = state
        busy = (hi_ - lo_ > 4 * eps * jnp.maximum(hi_, 1e-300)) & (step > 4 * eps * hi_)
        return (i < _MAX_ITERATIONS) & jnp.any(busy)

    def body(state):
        i, x, lo_, hi_, _ = state
        f = betainc(a, a, x) - y
        lo_ = jnp.where(f < 0, x, lo_)
        hi_ = jnp.where(f >= 0, x, hi_)
        xs = jnp.clip(x, 1e-300, 1 - eps / 2)
        dens = jnp.exp((a - 1) * (jnp.log(xs) + jnp.log1p(-xs)) - log_norm)
        newton = x - f / jnp.where(dens > 0, dens, 1.0)
        ok = (dens > 0) & (newton >= lo_) & (newton <= hi_)
        nxt = jnp.where(ok, newton, 0.5 * (lo_ + hi_))
        return i + 1, nxt, lo_, hi_, jnp.abs(nxt - x)

    x0 = 0.5 * (lo + hi)
    state = (0, x0, lo, hi, jnp.full_like(x0, jnp.inf))
    _, x, _, _, _ = jax.lax.while_loop(cond, body, state)
    return x
