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

with ``k = vartheta / rho``.  Numerically, with ``m = Delta / rho``,
``n = rho epsilon / varpi`` and ``L(h) = log Q(k + h) - log Q(k)``
(:func:`dpjax.noise.osgt.osgt_log_tail_ratio`), the first branch is
``(1/2) [(1 - e^{x_1}) + (1 - e^{x_2})]`` with ``x_1 = L(m/2 - n) <= 0`` and
``x_2 = epsilon + L(m/2 + n)``: a sum of two non-negative terms whenever
``x_2 <= 0`` (no cancellation, even in the Laplace-like regime of large ``k``
where ``Q(k)`` underflows); the second branch is the Gaussian hockey stick
(:func:`dpjax.accounting.gaussian.log_delta_gaussian_mu`) divided by ``2 Q(k)``.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.gaussian import log_delta_gaussian_mu
from dpjax.noise.osgt import osgt_log_tail_ratio
from dpjax.numerics import float64_kernel, log1mexp, log_Q, log_Q_inv, logaddexp, logsubexp

_LOG2 = 0.6931471805599453


@float64_kernel
def log_delta_osgt_unit(epsilon: ArrayLike, k: ArrayLike, m: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` for shape ``k = vartheta / rho`` and ``m = Delta / rho``.

    The scale-free form of :func:`log_delta_osgt`; increasing in ``m`` for
    fixed ``k`` (proof of Lemma 11), decreasing in ``epsilon``.
    """
    epsilon, k, m = jnp.asarray(epsilon), jnp.asarray(k), jnp.asarray(m)
    eps_th = 0.5 * m * (m + 2.0 * k)
    lower = epsilon <= eps_th
    # lower branch (|nu| <= Delta/2)
    e_lo = jnp.where(lower, epsilon, 0.0)
    n = e_lo / (m + 2.0 * k)
    x1 = osgt_log_tail_ratio(k, jnp.maximum(0.5 * m - n, 0.0))
    x2 = e_lo + osgt_log_tail_ratio(k, 0.5 * m + n)
    a1 = log1mexp(jnp.minimum(x1, 0.0))
    neg2 = x2 <= 0
    a2_neg = log1mexp(jnp.where(neg2, x2, -1.0))
    a2_pos = jnp.log(jnp.expm1(jnp.where(neg2, 1.0, x2)))
    sum_form = logaddexp(a1, a2_neg)
    diff_form = logsubexp(a1, jnp.minimum(a2_pos, a1))
    low = jnp.where(neg2, sum_form, jnp.where(a2_pos < a1, diff_form, -jnp.inf)) - _LOG2
    # upper branch: Gaussian hockey stick / (2 Q(k))
    e_up = jnp.where(lower, eps_th + 1.0, epsilon)
    up = log_delta_gaussian_mu(e_up, m) - _LOG2 - log_Q(k)
    return jnp.where(lower, low, up)


@float64_kernel
def log_delta_osgt(
    epsilon: ArrayLike, vartheta: ArrayLike, rho: ArrayLike, sensitivity: ArrayLike
) -> Array:
    r"""``log delta(epsilon)`` of the 1-D OSGT mechanism (exact; see module docstring).

    Args:
      epsilon: ``epsilon >= 0``.
      vartheta: offset ``vartheta >= 0``.
      rho: scale ``rho > 0``.
      sensitivity: ``Delta > 0``.
    """
    rho = jnp.asarray(rho)
    return log_delta_osgt_unit(epsilon, jnp.asarray(vartheta) / rho, jnp.asarray(sensitivity) / rho)


@float64_kernel
def delta_osgt(
    epsilon: ArrayLike, vartheta: ArrayLike, rho: ArrayLike, sensitivity: ArrayLike
) -> Array:
    """``delta(epsilon)`` of the 1-D OSGT mechanism (exact)."""
    return jnp.exp(log_delta_osgt(epsilon, vartheta, rho, sensitivity))


@partial(jax.jit, static_argnames=("num_iterations",))
@float64_kernel
def epsilon_osgt(
    delta: ArrayLike,
    vartheta: ArrayLike,
    rho: ArrayLike,
    sensitivity: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""Least ``epsilon`` with ``delta(epsilon) <= delta`` (the feasible end of a bisection).

    Bracket ``[0, eps_hi]`` with ``eps_hi = max(varpi Delta / (2 rho^2),
    m (Q^{-1}(2 Q(k) delta) + m/2))``: beyond the kink the profile is at
    most ``Q(eps/m - m/2) / (2 Q(k))``, so ``eps_hi`` is feasible and the
    fixed-iteration bisection keeps a feasible end (``~eps_hi 2^-100`` when
    even ``epsilon = 0`` is feasible).  ``delta = 0`` gives ``inf``.
    """
    delta = jnp.asarray(delta)
    rho = jnp.asarray(rho)
    k = jnp.asarray(vartheta) / rho
    m = jnp.asarray(sensitivity) / rho
    delta, k, m = jnp.broadcast_arrays(delta, k, m)
    log_d = jnp.log(jnp.where(delta > 0, delta, 1.0))
    arg = jnp.minimum(_LOG2 + log_Q(k) + log_d, -_LOG2)
    hi = jnp.maximum(0.5 * m * (m + 2.0 * k), m * (log_Q_inv(arg) + 0.5 * m))
    hi = jnp.maximum(hi, 0.0) * (1.0 + 1e-12) + 1e-300

    def body(_, carry):
        good, bad = carry
        mid = 0.5 * (good + bad)
        ok = log_delta_osgt_unit(mid, k, m) <= log_d
        return jnp.where(ok, mid, good), jnp.where(ok, bad, mid)

    good, _ = jax.lax.fori_loop(0, num_iterations, body, (hi, jnp.zeros_like(hi)))
    return jnp.where(delta > 0, good, jnp.inf)
