"""Inverse CDF of the symmetric Beta law, in JAX (PrivUnit2's cap sampler)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array
from jax.scipy.special import betainc, betaln, ndtri

#: iteration cap of the safeguarded Newton search (it stops earlier once converged)
_MAX_ITERATIONS = 40


def beta_quantile(a: Array, y: Array, lo: Array, hi: Array) -> Array:
    r"""``x`` in ``[lo, hi]`` with ``I_x(a, a) = y`` (regularised incomplete beta), elementwise.

    Safeguarded Newton on ``log I_x(a, a) - log y`` in ``log x`` (a bisection step
    whenever Newton leaves the bracket), under ``lax.while_loop`` until every
    element's bracket is below ``4 ulp`` or ``|log I_x - log y| <= 1e-12``;
    jit/vmap-safe.  The target must lie in ``[I_lo, I_hi]``.

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
        i, _, lo_, hi_, err = state
        busy = (hi_ - lo_ > 4 * eps * jnp.maximum(hi_, 1e-300)) & (err > 1e-12)
        return (i < _MAX_ITERATIONS) & jnp.any(busy)

    def body(state):
        i, x, lo_, hi_, _ = state
        cdf = betainc(a, a, x)
        lo_ = jnp.where(cdf < y, x, lo_)
        hi_ = jnp.where(cdf >= y, x, hi_)
        # Newton on log I_x - log y in log x (near-linear in the lower tail)
        xs = jnp.clip(x, 1e-300, 1 - eps / 2)
        log_dens = (a - 1) * (jnp.log(xs) + jnp.log1p(-xs)) - log_norm
        f = jnp.log(jnp.maximum(cdf, 1e-300)) - jnp.log(jnp.maximum(y, 1e-300))
        slope = jnp.exp(jnp.log(xs) + log_dens - jnp.log(jnp.maximum(cdf, 1e-300)))
        newton = xs * jnp.exp(-f / jnp.where(slope > 0, slope, 1.0))
        ok = (slope > 0) & jnp.isfinite(newton) & (newton >= lo_) & (newton <= hi_)
        nxt = jnp.where(ok, newton, 0.5 * (lo_ + hi_))
        return i + 1, nxt, lo_, hi_, jnp.where(ok, jnp.abs(f), jnp.inf)

    # start: the normal approximation of Beta(a, a), or the lower-tail power law
    # I_x ~ x^a / (a B(a, a)) for small a; clipped into the bracket
    normal = 0.5 + ndtri(jnp.clip(y, 1e-300, 1 - eps)) / (2 * jnp.sqrt(2 * a + 1))
    power = jnp.exp((jnp.log(jnp.maximum(y, 1e-300)) + jnp.log(a) + log_norm) / a)
    x0 = jnp.where(a > 1.5, normal, power)
    x0 = jnp.where((x0 > lo) & (x0 < hi), x0, 0.5 * (lo + hi))
    state = (0, x0, lo, hi, jnp.full_like(x0, jnp.inf))
    _, x, _, _, _ = jax.lax.while_loop(cond, body, state)
    return x
