r"""Least Gaussian noise meeting (epsilon, delta), certified: a root find on ``mu = Delta/sigma``.

The exact profile (:mod:`dpjax.accounting.gaussian`) increases with ``mu``
and has the closed-form derivative ``d delta / d mu = phi(epsilon/mu - mu/2)``
(the two Gaussian terms' derivatives combine because ``b^2 - a^2 = 2 epsilon``).
The largest feasible ``mu`` (least ``sigma``) is found by a safeguarded
Newton iteration on ``log delta`` in ``log mu``, started from the feasible
lower bound ``mu_lo = sqrt(z^2 + 2 epsilon) - z``, ``z = Q^{-1}(delta)``
(there ``delta(mu) <= Q(epsilon/mu - mu/2) = delta``), or the exact
``epsilon = 0`` solution ``2 sqrt(2) erfinv(delta)`` if larger.  Every evaluated point
tightens a bracket (feasible ``lo``, infeasible ``hi``) and only ``lo`` is
returned; points where the Newton path does not verify convergence fall back
to a fixed 100-step bisection over ``log mu`` in ``[-690, 690]``
(:func:`dpjax.numerics.bisect_monotone`).  Vectorised
over targets; valid for ``delta`` down to 1e-300 (autodp and diffprivlib
under-noise below ~1e-12).

The first call should not wait for XLA: :func:`calibrate_sigma` first searches and
certifies on the host (:func:`calibrate_sigma_host`: Newton in NumPy over the SciPy closed
form :func:`dpjax.accounting.gaussian.log_delta_gaussian_host` and its per-point error
bound) and takes the compiled path only where that bound is too loose to certify (small
``epsilon`` for its ``delta``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erfinv
from jax.typing import ArrayLike

from dpjax._batching import SMALL_BATCH, pad, padded_elementwise, padded_size
from dpjax.accounting.gaussian import (
    ERROR,
    log_delta_gaussian,
    log_delta_gaussian_host,
    log_delta_gaussian_mu,
)
from dpjax.certificate import (
    MARGIN,
    TINY,
    certify_scale,
    log_target,
    log_target_host,
    reported_delta,
    reported_delta_host,
    scale_is_certified,
)
from dpjax.numerics import Q_inv, Status, bisect_monotone, float64_kernel, newton_host
from dpjax.numerics.constants import HALF_LOG_2PI
from dpjax.numerics.lazy_scipy import special

#: The bracket of the bisection fallback, on ``log mu``: ``mu in [e^-690, e^690]``.
LOG_MU_MIN, LOG_MU_MAX = -690.0, 690.0



def _mu_bisection(epsilon, delta, num_iterations=100):
    """Fallback: bisection on ``log mu`` over ``[LOG_MU_MIN, LOG_MU_MAX]``; ``(log mu, status)``."""
    log_level = log_target(delta)

    def feasible(log_mu):
        return (log_delta_gaussian_mu(epsilon, jnp.exp(log_mu)) <= log_level) & (delta > 0)

    res = bisect_monotone(
        feasible,
        good=jnp.full_like(log_level, LOG_MU_MIN),
        bad=jnp.full_like(log_level, LOG_MU_MAX),
        num_iterations=num_iterations,
    )
    return res.good, res.status


def _mu_newton(epsilon, delta, num_iterations=8):
    """Safeguarded Newton on ``log delta`` in ``log mu`` (module docstring); ``(log mu, status)``
    with ``Status.MAX_ITERATIONS`` where convergence is not verified."""
    level = log_target(delta)
    z = Q_inv(delta * (1.0 - MARGIN))
    # two feasible lower bounds: the Q-tail bound above, and the epsilon = 0 solution
    # delta(mu, 0) = erf(mu / (2 sqrt 2)) (the profile decreases in epsilon)
    mu_lo = jnp.maximum(
        jnp.sqrt(z * z + 2.0 * epsilon) - z, 2.0 * jnp.sqrt(2.0) * erfinv(delta * (1.0 - MARGIN))
    )
    x0 = jnp.log(jnp.clip(mu_lo, 1e-300, 1e300))

    def gap_and_slope(x):
        mu = jnp.exp(x)
        a = epsilon / mu - 0.5 * mu
        log_d = log_delta_gaussian_mu(epsilon, mu)
        # d log delta / d log mu = mu phi(a) / delta
        slope = jnp.exp(x - 0.5 * a * a - HALF_LOG_2PI - log_d)
        return log_d - level, slope

    # the bracket starts open: the first iteration evaluates x0 itself (one traced copy
    # of the profile in the loop; no separate check of the start)
    lo = jnp.full_like(x0, LOG_MU_MIN)
    hi = jnp.full_like(x0, LOG_MU_MAX)

    def body(_, carry):
        x, lo, hi = carry
        gap, slope = gap_and_slope(x)
        ok = gap <= 0
        lo = jnp.where(ok, jnp.maximum(lo, x), lo)
        hi = jnp.where(ok, hi, jnp.minimum(hi, x))
        step = x - gap / slope
        # from an infeasible point always move down by at least 1e-14 (relative, in mu):
        # near the root the gap is decided by float64 noise, and ulp-sized steps stall
        step = jnp.where(ok, step, jnp.minimum(step, x - 1e-14))
        inside = (step >= lo) & (step <= hi) & jnp.isfinite(step)
        fallback = jnp.minimum(0.5 * (lo + hi), lo + 1.0)
        return jnp.where(inside, step, fallback), lo, hi

    x, lo, hi = jax.lax.fori_loop(0, num_iterations, body, (x0, lo, hi))
    # back off by 1e-14 (relative, in mu): XLA may round the same expression a
    # few ulps differently in another fusion, and lo sits on the boundary
    lo = lo - 1e-14
    # both checks in one evaluation (a leading axis of two points: one traced profile)
    gap_lo, gap_up = gap_and_slope(jnp.stack([lo, lo + 1e-12]))[0]
    converged = (gap_lo <= 0) & ((hi - lo <= 1e-12) | (gap_up > 0)) & (delta > 0)
    return lo, jnp.where(converged, Status.OPTIMAL, Status.MAX_ITERATIONS).astype(jnp.int32)


@float64_kernel
@jax.jit  # one program per shape: eagerly, its cond's closures recompiled at every call
def mu_gaussian(epsilon: ArrayLike, delta: ArrayLike):
    r"""Largest ``mu`` (GDP parameter) with ``delta_mu(epsilon) <= delta (1 - MARGIN)``.

    The exact profile of the Gaussian mechanism with ``mu = Delta_2 / sigma`` (Balle &
    Wang 2018; eq. (16) of inid-noise-laplace-beats-gaussian, increasing in ``mu`` by
    Lemma 11):

    .. math:: \varphi_\epsilon(\mu) = Q\Big(\frac{\epsilon}{\mu} - \frac{\mu}{2}\Big)
              - e^{\epsilon} Q\Big(\frac{\epsilon}{\mu} + \frac{\mu}{2}\Big) \le \delta ,

    i.e. ``mu0`` of problem (P2) of inid-noise-laplace-beats-gaussian, found by the
    safeguarded Newton iteration of the module docstring with a bisection fallback.

    Args:
      epsilon: target ``epsilon >= 0`` (array).
      delta: target ``delta`` (array, broadcast with ``epsilon``); ``delta = 0`` is
        infeasible.

    Returns:
      ``(mu, status)``: ``status`` is ``Status.OPTIMAL`` when the answer is feasible
      and verified tight (``mu (1 + 1e-12)`` is infeasible), else the
      :class:`dpjax.numerics.Status` of the bisection fallback
      (:func:`dpjax.numerics.bisect_monotone`).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> mu, status = mu_gaussian(0.5, 1e-6)
      >>> round(float(mu), 8), int(status)
      (0.12410615, 0)
    """
    epsilon, delta = jnp.broadcast_arrays(jnp.asarray(epsilon), jnp.asarray(delta))
    log_mu, status = _mu_newton(epsilon, delta)

    def with_fallback(args):
        log_mu, status = args
        log_mu_b, status_b = _mu_bisection(epsilon, delta)
        use = status != Status.OPTIMAL
        return jnp.where(use, log_mu_b, log_mu), jnp.where(use, status_b, status)

    log_mu, status = jax.lax.cond(
        jnp.all(status == Status.OPTIMAL), lambda args: args, with_fallback, (log_mu, status)
    )
    return jnp.exp(log_mu), status


@float64_kernel
@padded_elementwise(minimum=SMALL_BATCH)  # one compiled program per power-of-two batch size
@jax.jit
def sigma_gaussian(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike):
    r"""Least ``sigma`` with the exact Gaussian profile ``<= delta`` at ``epsilon``; certified.

    ``sigma = Delta_2 / mu0`` with ``mu0`` of (P2) (:func:`mu_gaussian`; eq. (16) and
    Lemma 11 of inid-noise-laplace-beats-gaussian), re-checked with
    :func:`dpjax.accounting.gaussian.log_delta_gaussian` at the float ``sigma`` itself
    and nudged up if rounding made it fail (:func:`dpjax.certificate.certify_scale`).

    Args:
      epsilon: target ``epsilon >= 0``.
      delta: target ``delta`` in ``(0, 1)``.
      sensitivity: l2 sensitivity ``Delta_2 > 0``.  All three broadcast; the batch is
        flattened and padded to a power of two (at least 16,
        :func:`dpjax._batching.padded_elementwise`): one compiled program per size bucket.

    Returns:
      ``(sigma, delta_at_sigma, certified, status)``: ``delta_at_sigma`` is the reported
      upper bound (:func:`dpjax.certificate.reported_delta`), ``status`` that of
      :func:`mu_gaussian`.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> sigma, delta_at, ok, status = sigma_gaussian(1.0, 1e-5, 1.0)
      >>> round(float(sigma), 6), bool(ok), bool(delta_at <= 1e-5)
      (3.730632, True, True)
    """
    mu, status = mu_gaussian(epsilon, delta)
    sigma, log_d, ok = certify_scale(
        lambda s: log_delta_gaussian(epsilon, s, sensitivity), sensitivity / mu, log_target(delta)
    )
    return sigma, reported_delta(log_d, ERROR), ok & (status == Status.OPTIMAL), status


@jax.jit
@float64_kernel
def _gap_and_slope(epsilon, delta, sensitivity, log_sigma):
    """``(log delta(sigma) - log target, d log delta / d log sigma, reported delta(sigma))``.

    The certified profile :func:`dpjax.accounting.gaussian.log_delta_gaussian` at
    ``sigma = e^x`` itself, and its slope ``-mu phi(a) / delta`` (``mu = Delta / sigma``,
    ``a = epsilon / mu - mu / 2``; module docstring).
    """
    sigma = jnp.exp(log_sigma)
    log_d = log_delta_gaussian(epsilon, sigma, sensitivity)
    log_mu = jnp.log(sensitivity) - log_sigma
    mu = jnp.exp(log_mu)
    a = epsilon / mu - 0.5 * mu
    slope = -jnp.exp(log_mu - 0.5 * a * a - HALF_LOG_2PI - log_d)
    return log_d - log_target(delta), slope, reported_delta(log_d, ERROR)


@float64_kernel
def calibrate_sigma_host(eps, dlt, sens, x0, good, bad):
    """Host search of :func:`calibrate_sigma`: ``(sigma, delta_at, certified)`` for flat
    arrays, no compiled program.

    Newton on ``log sigma`` (:func:`dpjax.numerics.newton_host`) from ``x0`` in the bracket
    ``(bad, good)`` over :func:`dpjax.accounting.gaussian.log_delta_gaussian_host`;
    certified where the profile at the returned ``sigma``
    meets :func:`dpjax.certificate.log_target_host`
    (:func:`dpjax.certificate.scale_is_certified`) and its error bound is within
    ``MARGIN / 4`` (the rule :func:`dpjax.certificate.kernel_error` imposes on every
    kernel), the reported delta padded by the larger of that bound and the JAX kernel's
    (:func:`dpjax.certificate.reported_delta_host`).
    """
    level = log_target_host(dlt)

    def evaluate(x):
        log_d, _ = log_delta_gaussian_host(eps, np.exp(x), sens)
        with np.errstate(all="ignore"):
            log_mu = np.log(sens) - x
            mu = np.exp(log_mu)
            a = eps / mu - 0.5 * mu
            slope = -np.exp(log_mu - 0.5 * a * a - HALF_LOG_2PI - log_d)
        return log_d - level, slope

    found = newton_host(evaluate, x0, good=good, bad=bad)
    x = found.good
    converged = found.status == Status.OPTIMAL
    sigma = np.exp(x)
    log_d, err = log_delta_gaussian_host(eps, sigma, sens)
    certified = (converged & scale_is_certified(sigma, log_d, level) & (err <= MARGIN / 4)
                 & (dlt > 0))
    with np.errstate(all="ignore"):
        bound = np.maximum(err, ERROR * (1.0 + np.abs(log_d)))
    return sigma, reported_delta_host(log_d, bound), certified


def calibrate_sigma(epsilon, delta, sensitivity) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Host path of :func:`sigma_gaussian`: a NumPy/SciPy search, no compile where it certifies.

    The same answer as :func:`sigma_gaussian` (the least ``sigma`` whose exact profile,
    eq. (16) of inid-noise-laplace-beats-gaussian,

    .. math:: Q\Big(\frac{\epsilon\sigma}{\Delta} - \frac{\Delta}{2\sigma}\Big)
              - e^{\epsilon} Q\Big(\frac{\epsilon\sigma}{\Delta} + \frac{\Delta}{2\sigma}\Big)
              \le \delta (1 - \text{MARGIN}) ,

    to ``1e-12`` relative), by :func:`dpjax.numerics.newton_host` on ``log sigma`` started
    from the feasible bound of the module docstring.  First on the host: the closed form
    in SciPy (:func:`dpjax.accounting.gaussian.log_delta_gaussian_host`), certified
    at the returned ``sigma`` where its error bound is within ``MARGIN / 4``.  Entries it
    cannot certify take the JAX path: the same Newton loop over the compiled certified
    profile (one small kernel, padded to a bucket of 16), and :func:`sigma_gaussian` (the
    traced search with its bisection fallback) where that bracket did not close.  Either
    way the returned ``sigma`` is a point where a certified profile was evaluated and met
    the target.

    Args:
      epsilon: target ``epsilon >= 0`` (array-like).
      delta: target ``delta`` in ``(0, 1)``.
      sensitivity: l2 sensitivity ``Delta_2 > 0``.  All three broadcast.

    Returns:
      ``(sigma, delta_at_sigma, certified)`` as NumPy arrays of the broadcast shape;
      ``delta_at_sigma`` is the reported upper bound
      (:func:`dpjax.certificate.reported_delta`).

    Example:
      >>> sigma, delta_at, ok = calibrate_sigma(1.0, 1e-5, 1.0)
      >>> round(float(sigma), 6), bool(ok), bool(delta_at <= 1e-5)
      (3.730632, True, True)
    """
    eps, dlt, sens = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (epsilon, delta, sensitivity))
    )
    shape = eps.shape
    eps, dlt, sens = (v.ravel() for v in (eps, dlt, sens))
    # feasible start: sigma_0 = Delta / mu_lo (module docstring), on the host
    target = dlt * (1.0 - MARGIN)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = -special.ndtri(target)
        mu_lo = np.maximum(np.sqrt(z * z + 2.0 * eps) - z,
                           2.0 * np.sqrt(2.0) * special.erfinv(target))
        log_sens = np.log(sens)
        x0 = log_sens - np.log(np.clip(mu_lo, 1e-300, 1e300))
    x0 = np.where(np.isfinite(x0), x0, log_sens - LOG_MU_MIN)
    good, bad = log_sens - LOG_MU_MIN, log_sens - LOG_MU_MAX
    with jax.enable_x64(True):
        sigma, delta_at, certified = calibrate_sigma_host(eps, dlt, sens, x0, good, bad)
    if not np.all(certified):
        idx = np.flatnonzero(~certified)
        s_j, d_j, ok_j = _calibrate_sigma_jax(
            *(v[idx] for v in (eps, dlt, sens, x0, good, bad)))
        sigma[idx], delta_at[idx], certified[idx] = s_j, d_j, ok_j
    return sigma.reshape(shape), delta_at.reshape(shape), certified.reshape(shape)


def _calibrate_sigma_jax(eps, dlt, sens, x0, good, bad):
    """JAX path of :func:`calibrate_sigma` (the compiled certified profile
    :func:`_gap_and_slope` evaluated at each Newton point; :func:`sigma_gaussian` where the
    bracket did not close): ``(sigma, delta_at, certified)`` for flat arrays."""
    n = eps.size
    size = padded_size(n, SMALL_BATCH)
    eps, dlt, sens, x0, good, bad = (pad(v, size) for v in (eps, dlt, sens, x0, good, bad))
    with jax.enable_x64(True):
        args = tuple(jnp.asarray(v) for v in (eps, dlt, sens))

        def evaluate(x):
            gap, slope, _ = _gap_and_slope(*args, jnp.asarray(x))
            return gap, slope

        found = newton_host(evaluate, x0, good=good, bad=bad)
        good = found.good
        converged = found.status == Status.OPTIMAL
        gap, _, delta_at = (np.asarray(v) for v in _gap_and_slope(*args, jnp.asarray(good)))
        sigma = np.exp(good)
        certified = converged & (gap <= 0) & np.isfinite(sigma) & (sigma >= TINY) & (dlt > 0)
        if not np.all(certified[:n]):
            s_b, d_b, ok_b, _ = (np.asarray(v) for v in sigma_gaussian(*args))
            sigma = np.where(certified, sigma, s_b)
            delta_at = np.where(certified, delta_at, d_b)
            certified = certified | ok_b
    return sigma[:n], delta_at[:n], certified[:n]
