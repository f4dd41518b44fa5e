r"""Exact privacy profile of the Gaussian mechanism (Balle & Wang 2018).

For noise ``N(0, sigma^2)`` and l2-sensitivity ``Delta_2``, with
``mu = Delta_2 / sigma`` (eq. (29) of flipped-huber-mechanism; Lemma 1 of
inid-noise-laplace-beats-gaussian; Balle & Wang 2018, Thm. 8):

.. math:: \delta(\epsilon) = Q\!\left(\frac{\epsilon}{\mu} - \frac{\mu}{2}\right)
          - e^{\epsilon}\, Q\!\left(\frac{\epsilon}{\mu} + \frac{\mu}{2}\right).

It is exact (necessary and sufficient) in any dimension, and k-fold
composition of Gaussians is a Gaussian with ``mu_total = sqrt(sum mu_i^2)``.
All kernels are float64, jit/vmap/grad-safe and evaluate in log space.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import erf
from jax.typing import ArrayLike

from dpjax.certificate import MARGIN, TINY, fail_closed, kernel_error, log_target, reported_delta
from dpjax.numerics import (
    Q_inv,
    float64_kernel,
    least_feasible,
    log1mexp,
    log_mills,
    log_mills_step,
    log_Q,
    quotient,
    two_product,
)
from dpjax.numerics.constants import HALF_LOG_2PI
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U
from dpjax.numerics.lazy_scipy import special

#: Documented error constant of :func:`log_delta_gaussian` / :func:`log_delta_gaussian_mu`:
#: ``|log delta_computed - log delta_true| <= ERROR (1 + |log delta|)`` for every float64
#: input with ``delta_true >= 2.2e-308`` (:mod:`dpjax.certificate`).  Largest
#: measured ratio 3.6e-15 against 80-digit mpmath over Delta / sigma in [1e-9, 1e9],
#: epsilon in [0, 1e20] and around ``mu^2 / 2`` (tests/accounting/test_fail_closed.py).
ERROR = kernel_error(2e-14)

_SQRT_HALF = 0.7071067811865476
#: ``a`` is clamped here (``a^2`` would overflow): delta decreases in ``a``, so the value at
#: the clamp is an upper bound.
_A_MAX = 1e150


@float64_kernel
def a_of_mu(epsilon: Array, mu: Array) -> Array:
    r"""``a = epsilon / mu - mu / 2`` with the quotient carried to ~2^-104 (:func:`quotient`).

    .. math:: a = \frac{\epsilon}{\mu} - \frac{\mu}{2}

    the first argument of the Gaussian profile (eq. (29) of flipped-huber-mechanism, with
    ``mu = Delta_2 / sigma``).

    Args:
      epsilon: ``epsilon >= 0``.
      mu: ``mu = Delta_2 / sigma > 0`` (broadcast against ``epsilon``).

    Returns:
      ``a``, accurate to a few ulps of itself (plain rounding where the compensated form
      overflows).
    """
    q, r = quotient(epsilon, mu)
    a = (q - 0.5 * mu) + r
    return jnp.where(jnp.isfinite(a), a, epsilon / mu - 0.5 * mu)


@float64_kernel
def a_of_sigma(epsilon: Array, sigma: Array, sensitivity: Array) -> Array:
    r"""``a = epsilon sigma / Delta - Delta / (2 sigma)`` from the float inputs, compensated.

    .. math:: a = \frac{\epsilon\sigma}{\Delta_2} - \frac{\Delta_2}{2\sigma}

    (the first argument of eq. (29) of flipped-huber-mechanism).  Each term is carried as
    ``hi + lo`` (:func:`two_product`, :func:`quotient`), so ``a`` is accurate to a few ulps
    *of a* even when the two terms are ~``mu / 2 = 10^9`` and cancel (rounding
    ``mu = Delta / sigma`` first would cost ``~1e-16 mu`` absolute in ``a``).

    Args:
      epsilon: ``epsilon >= 0``.
      sigma: noise standard deviation ``sigma > 0``.
      sensitivity: l2-sensitivity ``Delta_2 > 0``.

    Returns:
      ``a``, broadcast shape of the inputs.
    """
    p, e = two_product(epsilon, sigma)
    q1, r1 = quotient(p, sensitivity)
    mu, r2 = quotient(sensitivity, sigma)
    a = (q1 - 0.5 * mu) + ((r1 + e / sensitivity) - 0.5 * r2)
    return jnp.where(jnp.isfinite(a), a, epsilon / mu - 0.5 * mu)


@float64_kernel
def tail_step_args(a: Array, mu: Array) -> tuple[Array, Array]:
    r"""The arguments ``(a, h)`` of the Mills-ratio step of :func:`log_delta_from_a` (``a >= 0``).

    .. math:: (a, h) = (\min(a, 10^{150}), \mu) \text{ for } a \ge 0,
              \quad (1, 0) \text{ otherwise}

    so that ``log R(a + h) - log R(a)`` (:func:`dpjax.numerics.log_mills_step`) is the
    ``t`` of the hockey stick at ``b = a + mu`` (eq. (29) of flipped-huber-mechanism).
    For callers that share one step between kernels.

    Args:
      a: ``a = eps / mu - mu / 2`` (see :func:`a_of_mu`).
      mu: ``mu = Delta_2 / sigma``.

    Returns:
      ``(a, h)``: safe values where ``a < 0``.
    """
    pos = a >= 0
    return jnp.where(pos, jnp.minimum(a, _A_MAX), 1.0), jnp.where(pos, mu, 0.0)


@float64_kernel
def log_delta_from_a(epsilon: Array, a: Array, mu: Array, step: Array | None = None) -> Array:
    r"""``log(Q(a) - e^eps Q(a + mu))`` given ``a = eps/mu - mu/2`` accurately.

    .. math:: \log\delta = \log\big(Q(a) - e^{\epsilon} Q(b)\big),\qquad b = a + \mu,
              \quad b^2 - a^2 = 2\epsilon

    (eq. (29) of flipped-huber-mechanism; Balle & Wang 2018, Thm 8), in two branches:

    * ``a >= 0``: ``log Q(a) + log(1 - e^t)``, ``t = log R(b) - log R(a)``
      (:func:`dpjax.numerics.log_mills_step`; the ``x^2 / 2`` parts cancel in closed form).
      ``t`` is capped at ``-TINY`` (a true ``t`` that underflows is still negative) and ``a``
      at ``1e150``: both only raise delta.
    * ``a < 0 <= b``: ``P(a < Z < b) - expm1(eps) Q(b)`` with
      ``log(expm1(eps) Q(b)) = log(1 - e^{-eps}) - a^2/2 - log sqrt(2 pi) + log R(b)``
      (``eps - b^2/2 = -a^2/2``: no difference of huge numbers at large ``eps``); the
      first term is a sum of positives.  Should rounding make the difference ``<= 0``,
      its upper bound ``P(a < Z < b)`` is used.

    Args:
      epsilon: ``epsilon >= 0``.
      a: ``eps / mu - mu / 2``, formed accurately (:func:`a_of_mu`, :func:`a_of_sigma`).
      mu: ``mu = Delta_2 / sigma > 0``.
      step: optional ``t`` precomputed at :func:`tail_step_args` (``None``: computed here).

    Returns:
      ``log delta(epsilon)``; a NaN input gives ``log delta = 0`` (fail closed).
    """
    pos = a >= 0
    a_pos, h = tail_step_args(a, mu)
    if step is None:
        step = log_mills_step(a_pos, h)
    tail = log_Q(a_pos) + log1mexp(jnp.minimum(step, -TINY))
    a_neg = jnp.where(pos, -1.0, a)
    b = jnp.where(pos, 1.0, a_neg + mu)
    mass = 0.5 * (erf(b * _SQRT_HALF) + erf(-a_neg * _SQRT_HALF))
    eps_pos = epsilon > 0
    log_em1 = jnp.where(eps_pos, log1mexp(-jnp.where(eps_pos, epsilon, 1.0)), -jnp.inf)
    second = jnp.exp(log_em1 - 0.5 * a_neg * a_neg - HALF_LOG_2PI + log_mills(b))
    diff = mass - second
    straddle = jnp.log(jnp.where(diff > 0, diff, mass))
    return fail_closed(jnp.where(pos, tail, straddle), epsilon, a, mu)


@float64_kernel
def log_delta_gaussian(epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` of the Gaussian mechanism.

    .. math:: \delta(\epsilon) = Q\!\left(\frac{\epsilon\sigma}{\Delta_2}
              - \frac{\Delta_2}{2\sigma}\right) - e^{\epsilon}\,
              Q\!\left(\frac{\epsilon\sigma}{\Delta_2} + \frac{\Delta_2}{2\sigma}\right)

    (eq. (29) of flipped-huber-mechanism; Lemma 1 of inid-noise-laplace-beats-gaussian;
    Balle & Wang 2018, Thm 8).  Exact for the given floats to within :data:`ERROR`:
    ``a = eps/mu - mu/2`` is formed from ``(epsilon, sigma, Delta)`` with compensated
    arithmetic, so the profile stays accurate at the family's limits (``mu = 1e9``,
    ``epsilon = 1e26``; there a rounded ``mu`` alone would move ``log delta`` by
    ``~1e-16 mu a``).

    Args:
      epsilon: ``epsilon >= 0``.
      sigma: noise standard deviation ``sigma > 0``.
      sensitivity: l2-sensitivity ``Delta_2 > 0``.

    Returns:
      ``log delta(epsilon)``, broadcast shape of the inputs.

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> round(math.exp(float(log_delta_gaussian(1.0, 1.0, 1.0))), 6)
      0.126937
    """
    epsilon, sigma, sensitivity = jnp.broadcast_arrays(
        jnp.asarray(epsilon), jnp.asarray(sigma), jnp.asarray(sensitivity)
    )
    a = a_of_sigma(epsilon, sigma, sensitivity)
    return log_delta_from_a(epsilon, a, sensitivity / sigma)


#: Documented error of ``scipy.special.log_ndtr`` as the host kernel uses it:
#: ``|log Q_hat(x) - log Q(x)| <= HOST_LOG_Q_ERROR (1 + |log Q(x)|)``.  Largest measured
#: ratio 4.4e-16 (about 4 ulps) against 40-digit mpmath over x in [-40, 40] (SciPy 1.17);
#: the constant keeps a factor ~10 (tests/accounting/test_gaussian.py checks 4x).
HOST_LOG_Q_ERROR = 4e-15
#: Documented error of ``log(scipy.special.erfcx(x))``: ``<= HOST_LOG_ERFCX_ERROR (1 +
#: max(log erfcx(x), 0))`` (absolute for ``x >= 0``, where ``erfcx <= 1``).  Largest measured
#: ratio 8.8e-16 (8 ulps) against 40-digit mpmath over x in [-25, 1000] (SciPy 1.17); the
#: constant keeps a factor ~2.8 (tests/accounting/test_gaussian.py checks 2x).
HOST_LOG_ERFCX_ERROR = 2.5e-15


def _erfcx_log_slope(x):
    """Bound on ``|d log erfcx(x) / dx| = |2x - 2 / (sqrt(pi) erfcx(x))|``: ``2 / (x + sqrt(x^2 +
    2))`` for ``x >= 0`` (from ``erfcx(x) > 2 / (sqrt(pi) (x + sqrt(x^2 + 2)))``), ``2|x| + 2``
    for ``x < 0`` (``erfcx >= 1`` there)."""
    return np.where(x >= 0, 2.0 / (np.abs(x) + np.sqrt(x * x + 2.0)), 2.0 * np.abs(x) + 2.0)


@float64_kernel
def log_delta_gaussian_host(epsilon, sigma, sensitivity) -> tuple[np.ndarray, np.ndarray]:
    r"""The exact Gaussian profile in NumPy/SciPy, with a per-point bound on its float error.

    .. math:: \log\delta = \log Q(a) + \log\big(1 - e^{t}\big),\qquad
              t = \epsilon + \log Q(b) - \log Q(a) = \log\frac{\mathrm{erfcx}(b/\sqrt2)}
              {\mathrm{erfcx}(a/\sqrt2)},\qquad
              a, b = \frac{\epsilon\sigma}{\Delta} \mp \frac{\Delta}{2\sigma}

    (eq. (16) of inid-noise-laplace-beats-gaussian; Balle & Wang 2018, Thm 8), with
    ``log Q(x) = scipy.special.log_ndtr(-x)`` and the scaled ``erfcx`` (``b^2 - a^2 = 2
    epsilon``: the Gaussian factors cancel in closed form).  No compiled program: the host
    path of :func:`dpjax.calibration.gaussian.calibrate_sigma`.  The error bound propagates,
    by first-order bounds,
    :data:`HOST_LOG_Q_ERROR` on ``log Q(a)`` and :data:`HOST_LOG_ERFCX_ERROR` on each
    ``log erfcx``, the rounding of ``a`` and ``b`` (``<= 4u (|eps sigma / Delta| + |Delta /
    (2 sigma)|)``, times ``|d log Q / dx| <= max(x, 0) + 1`` and the bound on
    ``|d log erfcx / dx|`` of :func:`_erfcx_log_slope`),
    and the cancellation in ``1 - e^t`` (factor ``1 / expm1(-(t + err_t))``; infinite
    where ``t + err_t >= 0``).  The bound is not uniform like the JAX kernel's
    (:data:`ERROR`): callers certify only where it is small.

    Args:
      epsilon: ``epsilon >= 0``.
      sigma: noise standard deviation ``> 0``.
      sensitivity: l2 sensitivity ``Delta_2 > 0``.  All three broadcast.

    Returns:
      ``(log_delta, error)``: ``|log_delta - log delta_true| <= error``; ``error = inf``
      where the bound does not hold (NaN, overflow, ``t >= 0``), with ``log_delta = 0``
      (``delta = 1``) where it is NaN: fails closed.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> log_d, err = log_delta_gaussian_host(1.0, 3.730632, 1.0)
      >>> round(float(np.exp(log_d)) * 1e5, 4), bool(err < 1e-11)
      (1.0, True)
    """
    eps, s, d = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (epsilon, sigma, sensitivity))
    )
    with np.errstate(all="ignore"):
        p = eps * s / d
        h = d / (2.0 * s)
        a, b = p - h, p + h
        err_x = 4.0 * _U * (np.abs(p) + np.abs(h))
        log_qa = special.log_ndtr(-a)
        err_a = HOST_LOG_Q_ERROR * (1.0 + np.abs(log_qa)) + (np.maximum(a, 0.0) + 1.0) * err_x
        # t = log R(b) - log R(a) (the x^2/2 parts cancel: b^2 - a^2 = 2 eps), with the Mills
        # ratio R(x) = sqrt(pi / 2) erfcx(x / sqrt 2): no cancellation of large logs
        xa, xb = a * _SQRT_HALF, b * _SQRT_HALF
        lea, leb = np.log(special.erfcx(xa)), np.log(special.erfcx(xb))
        t = leb - lea
        err_t = (
            HOST_LOG_ERFCX_ERROR * (2.0 + np.maximum(lea, 0.0) + np.maximum(leb, 0.0))
            + _erfcx_log_slope(xa) * (err_x + _U * np.abs(xa))
            + _erfcx_log_slope(xb) * (err_x + _U * np.abs(xb))
            + _U * np.abs(t)
        )
        log_gap = np.log(-np.expm1(t))
        t_up = t + err_t
        err_gap = np.where(t_up < 0, err_t / -np.expm1(t_up), np.inf) + 2.0 * _U * np.abs(log_gap)
        log_d = log_qa + log_gap
        error = err_a + err_gap + 2.0 * _U * (np.abs(log_qa) + np.abs(log_gap))
    bad = ~np.isfinite(log_d) | ~np.isfinite(error)
    return np.where(np.isnan(log_d), 0.0, np.minimum(log_d, 0.0)), np.where(bad, np.inf, error)


@float64_kernel
def log_delta_gaussian_mu(epsilon: ArrayLike, mu: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` as a function of ``mu = Delta_2 / sigma`` (mu-GDP).

    .. math:: \delta(\epsilon) = Q\!\left(\frac{\epsilon}{\mu} - \frac{\mu}{2}\right)
              - e^{\epsilon}\, Q\!\left(\frac{\epsilon}{\mu} + \frac{\mu}{2}\right)

    (eq. (16) and Lemma 1 of inid-noise-laplace-beats-gaussian; Dong, Roth & Su 2022,
    Cor. 2.13).  Error :data:`ERROR` for the given float ``mu``.

    Args:
      epsilon: ``epsilon >= 0``.
      mu: ``mu = Delta_2 / sigma > 0``; for T compositions ``sqrt(T) mu``.

    Returns:
      ``log delta(epsilon)``, broadcast shape of the inputs.
    """
    epsilon, mu = jnp.broadcast_arrays(jnp.asarray(epsilon), jnp.asarray(mu))
    return log_delta_from_a(epsilon, a_of_mu(epsilon, mu), mu)


@float64_kernel
def delta_gaussian(epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""``delta(epsilon)`` of the Gaussian mechanism, reported as a certified upper bound.

    .. math:: \delta(\epsilon) = Q\!\left(\frac{\epsilon\sigma}{\Delta_2}
              - \frac{\Delta_2}{2\sigma}\right) - e^{\epsilon}\,
              Q\!\left(\frac{\epsilon\sigma}{\Delta_2} + \frac{\Delta_2}{2\sigma}\right)

    (eq. (29) of flipped-huber-mechanism) through
    :func:`dpjax.certificate.reported_delta` with :data:`ERROR`.

    Args:
      epsilon: ``epsilon >= 0``.
      sigma: noise standard deviation ``sigma > 0``.
      sensitivity: l2-sensitivity ``Delta_2 > 0``.

    Returns:
      An upper bound on ``delta(epsilon)``, never below the exact profile.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> float(delta_gaussian(1.0, 1.0, 1.0))  # doctest: +ELLIPSIS
      0.12693...
    """
    return reported_delta(log_delta_gaussian(epsilon, sigma, sensitivity), ERROR)


@float64_kernel
def epsilon_gaussian(
    delta: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike, num_iterations: int = 100
) -> Array:
    r"""Least ``epsilon`` with ``delta(epsilon) <= delta (1 - MARGIN)`` (certified upper end).

    .. math:: \epsilon(\delta) = \min\{\epsilon \ge 0 : \delta_{\sigma,\Delta_2}(\epsilon)
              \le \delta(1 - \text{MARGIN})\},\qquad
              \epsilon \le \mu Q^{-1}(\delta(1 - 2\,\text{MARGIN})) + \mu^2/2

    (the inverse of eq. (29) of flipped-huber-mechanism).  ``delta(eps)`` decreases in
    ``eps``; bisection on the bracket above (at its upper end
    ``delta(eps) <= Q(eps/mu - mu/2) = delta (1 - 2 MARGIN)``) returns the end where the
    profile is ``<= delta (1 - MARGIN)`` (:mod:`dpjax.certificate`), evaluated with
    :func:`log_delta_gaussian` at the given ``(sigma, Delta)``.

    Args:
      delta: target ``delta`` in ``[0, 1)``.
      sigma: noise standard deviation ``sigma > 0``.
      sensitivity: l2-sensitivity ``Delta_2 > 0``.
      num_iterations: bisection steps (static).

    Returns:
      The certified epsilon; ``inf`` for ``delta = 0`` or a bracket whose upper end fails
      to certify (no finite certificate).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(epsilon_gaussian(1e-5, 1.0, 1.0)), 4)
      4.3772
    """
    delta, sigma, sensitivity = jnp.broadcast_arrays(
        jnp.asarray(delta), jnp.asarray(sigma), jnp.asarray(sensitivity)
    )
    mu = sensitivity / sigma
    level = log_target(delta)
    z = Q_inv(jnp.minimum(delta * (1.0 - 2.0 * MARGIN), 0.5))
    hi = jnp.maximum(mu * z + 0.5 * mu * mu, 0.0) * (1 + 1e-12) + 1e-300

    def ok(e):
        return log_delta_gaussian(e, sigma, sensitivity) <= level

    return jnp.where(delta > 0, least_feasible(ok, hi, num_iterations), jnp.inf)


@float64_kernel
def rho_gaussian(sigma: ArrayLike, sensitivity: ArrayLike) -> Array:
    r"""zCDP of the Gaussian mechanism: ``rho = Delta_2^2 / (2 sigma^2)``.

    .. math:: \rho = \frac{\Delta_2^2}{2\sigma^2}

    (Bun & Steinke 2016, Prop. 1.6; Definition 3 of flipped-huber-mechanism with
    ``xi = 0``, ``eta = rho``).

    Args:
      sigma: noise standard deviation ``sigma > 0``.
      sensitivity: l2-sensitivity ``Delta_2 > 0``.

    Returns:
      ``rho``, broadcast shape of the inputs.
    """
    return jnp.square(jnp.asarray(sensitivity) / jnp.asarray(sigma)) / 2.0
