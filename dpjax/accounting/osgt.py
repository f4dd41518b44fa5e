r"""Exact 1-D privacy profile of the OSGT mechanism (App. F(c) of flipped-huber-mechanism).

Noise ``O(vartheta, rho^2)`` (:mod:`dpjax.noise.osgt`), sensitivity ``Delta``,
``varpi = Delta + 2 vartheta``.  OSGT is symmetric and log-concave, so
Lemma 11 (eq. (28)) gives the exact profile; its centred privacy loss is
``t varpi / rho^2`` for ``|t| < Delta / 2`` and ``Delta (|t| + vartheta) sgn(t) / rho^2``
beyond, so (App. F(c); re-derived here):

.. math::
   \delta(\epsilon) = \begin{cases}
     1 - \frac{1}{2Q(k)}\Big[Q\big(\tfrac{\varpi}{2\rho} - \tfrac{\rho\epsilon}{\varpi}\big)
        + e^{\epsilon} Q\big(\tfrac{\varpi}{2\rho} + \tfrac{\rho\epsilon}{\varpi}\big)\Big],
        & \epsilon \le \frac{\varpi\Delta}{2\rho^2} \\
     \frac{1}{2Q(k)}\Big[Q\big(\tfrac{\rho\epsilon}{\Delta} - \tfrac{\Delta}{2\rho}\big)
        - e^{\epsilon} Q\big(\tfrac{\rho\epsilon}{\Delta} + \tfrac{\Delta}{2\rho}\big)\Big],
        & \epsilon > \frac{\varpi\Delta}{2\rho^2} \end{cases}

with ``k = vartheta / rho``.  Numerically everything is written through
``m = Delta / rho``, the Mills-ratio steps ``S(x, s) = log R(x + s) - log R(x)``
(:func:`dpjax.numerics.log_mills_step`) and the signed distance from the kink

.. math:: h = \frac{\rho\epsilon}{\Delta} - \frac{\Delta}{2\rho} - \frac{\vartheta}{\rho}
          = \frac{\epsilon}{m} - \frac m2 - k

(``h <= 0`` on the first line), formed from the float inputs with compensated
arithmetic (:func:`dpjax.numerics.quotient`): at ``k = 10^4`` one ulp of ``h``'s
terms is ``~2e-12`` and moves ``log delta`` by ``~k`` times that, so rounding ``k``
or ``eps / m`` first would cost ~1e-8 relative (the calibration explores ``k``
up to 1e4).

* ``h <= 0``: with ``u = h / (m + 2k) in [-1/2, 0]``, ``s_1 = -m u``, ``s_2 = m (1 + u)``,
  ``x_1 = -s_1 (k + s_1 / 2) + S(k, s_1)`` and ``x_2 = -s_1 (k + s_1 / 2) + S(k, s_2)``
  (both ``<= 0``; ``x_1 = log Q(k + s_1) - log Q(k)`` and ``x_2 = epsilon + log Q(k + s_2)
  - log Q(k)``), ``delta = [(1 - e^{x_1}) + (1 - e^{x_2})] / 2``: a sum of two
  non-negative terms, no cancellation even where ``Q(k)`` underflows.
* ``h > 0``: ``delta = e^{L} (1 - e^{t}) / 2`` with
  ``L = log Q(k + h) - log Q(k) = -h (k + h/2) + S(k, h)`` and
  ``t = S(k + h, m)`` (the Gaussian hockey stick at ``a = k + h``, as in
  :mod:`dpjax.accounting.gaussian`, divided by ``2 Q(k)`` without forming either).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.certificate import (
    MARGIN,
    TINY,
    fail_closed,
    kernel_error,
    log_target,
    reported_delta,
)
from dpjax.numerics import (
    float64_kernel,
    least_feasible,
    log1mexp,
    log_mills_step,
    log_Q,
    log_Q_inv,
    logaddexp,
    quotient,
    sum3,
    two_product,
)
from dpjax.numerics.constants import LOG_2

#: Documented error constant of :func:`log_delta_osgt` / :func:`log_delta_osgt_unit`
#: (``|log delta_computed - log delta_true| <= ERROR (1 + |log delta|)``): largest measured
#: ratio 2e-15 against 150-digit mpmath for k in [0, 1e4], Delta / rho in [1e-6, 1e3] and
#: epsilon on both sides of the kink (tests/accounting/test_fail_closed.py).
ERROR = kernel_error(2e-14)



def _log_delta(k: Array, m: Array, h: Array) -> Array:
    """The profile from ``k``, ``m`` and the kink distance ``h`` (module docstring)."""
    upper = h > 0
    u = jnp.minimum(h, 0.0) / (m + 2.0 * k)
    s1 = -m * u
    s2 = m + m * u
    hp = jnp.where(upper, h, 0.0)
    # two Mills-ratio steps serve both branches
    step_a = log_mills_step(k, jnp.where(upper, hp, s1))
    step_b = log_mills_step(jnp.where(upper, k + hp, k), jnp.where(upper, m, s2))
    base = -s1 * (k + 0.5 * s1)
    x1 = jnp.minimum(base + step_a, 0.0)
    x2 = jnp.minimum(base + step_b, 0.0)
    low = logaddexp(log1mexp(x1), log1mexp(x2)) - LOG_2
    tail = -hp * (k + 0.5 * hp) + step_a
    up = tail + log1mexp(jnp.minimum(step_b, -TINY)) - LOG_2
    return fail_closed(jnp.where(upper, up, low), k, m, h)


@float64_kernel
def log_delta_osgt_unit(epsilon: ArrayLike, k: ArrayLike, m: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` for shape ``k = vartheta / rho`` and ``m = Delta / rho``.

    The scale-free form of :func:`log_delta_osgt` (App. F(c) of flipped-huber-mechanism,
    through the kink distance ``h = epsilon / m - m / 2 - k``; module docstring), with
    error :data:`ERROR` for the given floats ``k``, ``m``; increasing in ``m`` for fixed
    ``k`` (proof of Lemma 11), decreasing in ``epsilon``.

    Args:
      epsilon: ``epsilon >= 0``.
      k: shape ``vartheta / rho >= 0``.
      m: ``Delta / rho > 0``.  All three broadcast.

    Returns:
      ``log delta(epsilon)``, broadcast over the inputs.
    """
    epsilon, k, m = jnp.broadcast_arrays(jnp.asarray(epsilon), jnp.asarray(k), jnp.asarray(m))
    q, r = quotient(epsilon, m)
    return _log_delta(k, m, sum3(q, -0.5 * m, -k, r))


@float64_kernel
def log_delta_osgt(
    epsilon: ArrayLike, vartheta: ArrayLike, rho: ArrayLike, sensitivity: ArrayLike
) -> Array:
    r"""``log delta(epsilon)`` of the 1-D OSGT mechanism (exact; App. F(c) of
    flipped-huber-mechanism, the two-case formula of the module docstring).

    Args:
      epsilon: ``epsilon >= 0``.
      vartheta: offset ``vartheta >= 0``.
      rho: scale ``rho > 0``.
      sensitivity: ``Delta > 0``.
    """
    epsilon, vartheta, rho, sens = jnp.broadcast_arrays(
        *(jnp.asarray(x) for x in (epsilon, vartheta, rho, sensitivity))
    )
    # h = eps rho / Delta - Delta / (2 rho) - vartheta / rho, each term as hi + lo
    p, e = two_product(epsilon, rho)
    q1, r1 = quotient(p, sens)
    m, r2 = quotient(sens, rho)
    k, r3 = quotient(vartheta, rho)
    h = sum3(q1, -0.5 * m, -k, (r1 + e / sens) - r3 - 0.5 * r2)
    return _log_delta(k, m, h)


@float64_kernel
def delta_osgt(
    epsilon: ArrayLike, vartheta: ArrayLike, rho: ArrayLike, sensitivity: ArrayLike
) -> Array:
    r"""``delta(epsilon)`` of the 1-D OSGT mechanism, reported as a certified upper bound.

    ``exp(log delta + err)`` rounded up (:func:`dpjax.certificate.reported_delta` with
    :data:`ERROR`) of :func:`log_delta_osgt` (App. F(c) of flipped-huber-mechanism).

    Args:
      epsilon: ``epsilon >= 0``.
      vartheta: offset ``vartheta >= 0``.
      rho: scale ``rho > 0``.
      sensitivity: ``Delta > 0``.

    Returns:
      The reported ``delta(epsilon)``, broadcast over the inputs.
    """
    return reported_delta(log_delta_osgt(epsilon, vartheta, rho, sensitivity), ERROR)


@partial(jax.jit, static_argnames=("num_iterations",))
@float64_kernel
def epsilon_osgt(
    delta: ArrayLike,
    vartheta: ArrayLike,
    rho: ArrayLike,
    sensitivity: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""Least ``epsilon`` with ``delta(epsilon) <= delta (1 - MARGIN)`` (the feasible end of a
    bisection, :func:`dpjax.numerics.least_feasible`).

    Bracket ``[0, eps_hi]`` with

    .. math:: \epsilon_{hi} = \max\Big(\frac{\varpi\Delta}{2\rho^2},\
              m \big(Q^{-1}(2 Q(k)\, \delta (1 - 2\,\mathrm{MARGIN})) + m/2\big)\Big):

    beyond the kink the profile (App. F(c) of flipped-huber-mechanism) is at most
    ``Q(eps/m - m/2) / (2 Q(k))``, so ``eps_hi`` is feasible and the fixed-iteration
    bisection keeps a feasible end; ``0`` when even ``epsilon = 0`` is feasible.
    ``delta = 0``, or an upper end that fails to certify, gives ``inf``.

    Args:
      delta: target ``delta``.
      vartheta: offset ``vartheta >= 0``.
      rho: scale ``rho > 0``.
      sensitivity: ``Delta > 0``.  All four broadcast.
      num_iterations: static number of halvings.

    Returns:
      The least certified ``epsilon``, broadcast over the inputs.
    """
    delta, vartheta, rho, sens = jnp.broadcast_arrays(
        *(jnp.asarray(x) for x in (delta, vartheta, rho, sensitivity))
    )
    k, m = vartheta / rho, sens / rho
    level = log_target(jnp.where(delta > 0, delta, 1.0))
    arg = jnp.minimum(LOG_2 + log_Q(k) + level + jnp.log1p(-MARGIN), -LOG_2)
    hi = jnp.maximum(0.5 * m * (m + 2.0 * k), m * (log_Q_inv(arg) + 0.5 * m))
    hi = jnp.maximum(hi, 0.0) * (1.0 + 1e-12) + 1e-300

    def ok(e):
        return log_delta_osgt(e, vartheta, rho, sens) <= level

    # 0 where even epsilon = 0 is feasible, inf where the upper end fails
    return jnp.where(delta > 0, least_feasible(ok, hi, num_iterations), jnp.inf)
