r"""Flipped Huber in K dimensions: the sufficient condition of Theorem 8 and zCDP (Theorem 9).

flipped-huber-mechanism, Sec. IV-B and VI-A.  With ``b = alpha / gamma``:

* :func:`log_delta_flipped_huber_sufficient` -- the K-dim sufficient condition of
  Theorem 8 (with ``theta`` of Lemma 6 and the restriction of Lemma 5 / eq. (21));
* :func:`log_delta_flipped_huber_bound` -- the minimum of Theorem 8 and the zCDP bound;
* :func:`zcdp_flipped_huber` -- Theorem 9 and its K-dim form (Sec. VI-A).

Note on Lemma 5: the paper bounds ``P(T.d > a)`` by ``Q(a / (gamma |d|_2))``
citing sub-Gaussianity, which alone only gives ``exp(-a^2 / (2 gamma^2 |d|^2))``.
The Gaussian bound does hold, by peakedness: ``exp(-rho_b(x) + x^2/2)`` is
symmetric and non-increasing in ``|x|``, so ``FH(b, 1)`` is more peaked than
``N(0, 1)``, and peakedness of symmetric log-concave laws is preserved by
linear combinations (Proschan 1965).  Lemma 6 (``FH <=_st N(theta, gamma^2)``)
is checked numerically in the tests.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.zcdp import epsilon_from_zcdp, log_delta_from_zcdp
from dpjax.certificate import fail_closed, kernel_error, log_target
from dpjax.noise.flipped_huber import (
    theta_over_gamma,
)
from dpjax.numerics import (
    Status,
    bisect_monotone,
    float64_kernel,
    log_hockey_stick,
)

_HALF_LOG_2PI = 0.9189385332046727
_LOG_2 = 0.6931471805599453
#: Documented error constant of the K-dim bounds :func:`log_delta_flipped_huber_sufficient` /
#: :func:`log_delta_flipped_huber_bound` (of the bound's value, same form; measured against
#: the bound's formula in mpmath, tests/test_fail_closed_kernels.py).
BOUND_ERROR = kernel_error(2e-14)


# ---------------------------------------------------------------------------
# K dimensions: sufficient condition (Theorem 8)
# ---------------------------------------------------------------------------


@float64_kernel
def r_delta(alpha: ArrayLike, linf: ArrayLike) -> Array:
    r"""``R_Delta(alpha) = alpha^2 - ([alpha - Delta]_+)^2`` (Lemma 5), without cancellation."""
    alpha, linf = jnp.asarray(alpha), jnp.asarray(linf)
    return jnp.where(alpha < linf, alpha * alpha, (2.0 * alpha - linf) * linf)


@float64_kernel
def r_delta_inverse(nu: ArrayLike, linf: ArrayLike) -> Array:
    r"""``R_Delta^{-1}(nu)`` of eq. (21).

    ``sqrt(nu)`` below ``Delta^2``, ``(nu + Delta^2)/(2 Delta)`` above.
    """
    nu, linf = jnp.asarray(nu), jnp.asarray(linf)
    return jnp.where(
        nu < linf * linf, jnp.sqrt(jnp.maximum(nu, 0.0)), (nu + linf * linf) / (2.0 * linf)
    )


@float64_kernel
def alpha_max_sufficient(
    epsilon: ArrayLike, gamma: ArrayLike, dim: ArrayLike, l2: ArrayLike, linf: ArrayLike
) -> Array:
    r"""Largest ``alpha`` allowed by Lemma 5, ``R_Delta^{-1}((2 gamma^2 eps - Delta_2^2)/K)``.

    ``nan`` where no ``alpha`` is allowed.
    """
    gamma, l2 = jnp.asarray(gamma), jnp.asarray(l2)
    nu = (2.0 * gamma * gamma * jnp.asarray(epsilon) - l2 * l2) / jnp.asarray(dim)
    return jnp.where(nu >= 0, r_delta_inverse(nu, linf), jnp.nan)


@float64_kernel
def log_delta_flipped_huber_sufficient(
    epsilon: ArrayLike,
    alpha: ArrayLike,
    gamma: ArrayLike,
    dim: ArrayLike,
    l1: ArrayLike,
    l2: ArrayLike,
    linf: ArrayLike,
) -> Array:
    r"""``log`` of the Theorem 8 bound on the K-dim profile (``0`` where it gives nothing).

    If ``K R_Delta(alpha) <= 2 gamma^2 eps - Delta_2^2`` (Lemma 5 / eq. (21)),

    .. math:: \delta(\epsilon) \le Q(a_1) - e^{\epsilon} Q(a_2),\quad
       a_{1,2} = \frac{\gamma\epsilon}{\Delta_2} \mp \frac{\Delta_2}{2\gamma}
       \mp \frac{K R_\Delta(\alpha)}{2\gamma\Delta_2}
       + [\,0 \text{ or } \tfrac{\theta\Delta_1}{\gamma\Delta_2}],

    ``theta = gamma Q^{-1}(sqrt(pi/2)/omega)`` (Lemma 6).  ``Delta = linf`` is
    the per-coordinate sensitivity, ``Delta_1 = l1``, ``Delta_2 = l2``,
    ``K = dim``.  A valid upper bound on the exact profile (sufficient
    condition); evaluated with :func:`dpjax.numerics.log_hockey_stick`.
    """
    alpha, gamma, l1, l2 = jnp.asarray(alpha), jnp.asarray(gamma), jnp.asarray(l1), jnp.asarray(l2)
    theta_term = theta_over_gamma(alpha / gamma) * l1 / l2
    return _log_delta_sufficient_theta(epsilon, alpha, gamma, dim, l2, linf, theta_term)


def _log_delta_sufficient_theta(epsilon, alpha, gamma, dim, l2, linf, theta_term):
    """Theorem 8 with ``theta Delta_1 / (gamma Delta_2)`` precomputed (it depends on ``b`` only)."""
    eps, alpha, gamma = jnp.asarray(epsilon), jnp.asarray(alpha), jnp.asarray(gamma)
    k, l2 = jnp.asarray(dim), jnp.asarray(l2)
    kr = k * r_delta(alpha, linf)
    ok = kr <= 2.0 * gamma * gamma * eps - l2 * l2
    base = gamma * eps / l2
    shift = l2 / (2.0 * gamma) + kr / (2.0 * gamma * l2)
    a1 = base - shift
    a2 = base + shift + theta_term
    return fail_closed(jnp.where(ok, log_hockey_stick(a1, a2, eps), 0.0), a1, a2, eps)


@float64_kernel
def log_delta_flipped_huber_bound(
    epsilon: ArrayLike,
    alpha: ArrayLike,
    gamma: ArrayLike,
    dim: ArrayLike,
    l1: ArrayLike,
    l2: ArrayLike,
    linf: ArrayLike,
) -> Array:
    r"""Best certified K-dim bound dpjax has without the PLD engine: the minimum of Theorem 8 and
    the zCDP bound of Sec. VI-A (both valid upper bounds on the exact profile)."""
    xi, eta = zcdp_flipped_huber(alpha, gamma, linf, l2=l2, dim=dim)
    eps = jnp.asarray(epsilon)
    above = eps > xi
    log_z = log_delta_from_zcdp(eta, jnp.where(above, eps - xi, 0.0))
    log_z = jnp.where(above, log_z, 0.0)
    return jnp.minimum(
        log_delta_flipped_huber_sufficient(eps, alpha, gamma, dim, l1, l2, linf), log_z
    )


@float64_kernel
def epsilon_flipped_huber_bound(
    delta: ArrayLike,
    alpha: ArrayLike,
    gamma: ArrayLike,
    dim: ArrayLike,
    l1: ArrayLike,
    l2: ArrayLike,
    linf: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""Least ``epsilon`` with :func:`log_delta_flipped_huber_bound` ``<= delta`` (certified end).

    The bound decreases in ``epsilon``; the zCDP epsilon ``xi + eps_zCDP(eta, delta)``
    (at which the zCDP part of the bound is ``<= delta``) brackets it from above.
    """
    delta, alpha, gamma = jnp.broadcast_arrays(
        jnp.asarray(delta), jnp.asarray(alpha), jnp.asarray(gamma)
    )
    xi, eta = zcdp_flipped_huber(alpha, gamma, linf, l2=l2, dim=dim)
    hi = epsilon_from_zcdp_shifted(xi, eta, delta) * (1.0 + 1e-9) + 1e-12
    log_t = log_target(delta)

    def ok(e):
        return log_delta_flipped_huber_bound(e, alpha, gamma, dim, l1, l2, linf) <= log_t

    res = bisect_monotone(ok, good=hi, bad=jnp.zeros_like(hi), num_iterations=num_iterations)
    eps = jnp.where(res.status == Status.INFEASIBLE, jnp.inf, res.good)
    return jnp.where(delta > 0, eps, jnp.inf)


# ---------------------------------------------------------------------------
# zCDP (Theorem 9, Sec. VI-A)
# ---------------------------------------------------------------------------


@float64_kernel
def zcdp_flipped_huber(
    alpha: ArrayLike,
    gamma: ArrayLike,
    linf: ArrayLike,
    l2: ArrayLike | None = None,
    dim: ArrayLike = 1,
) -> tuple[Array, Array]:
    r"""``(xi, eta)``-zCDP of the flipped Huber mechanism.

    Theorem 9 (1-D): ``xi = R_Delta(alpha) / (2 gamma^2)``, ``eta = Delta^2 / (2 gamma^2)``.
    K dims (Sec. VI-A): ``xi = K R_Delta(alpha) / (2 gamma^2)``,
    ``eta = Delta_2^2 / (2 gamma^2)`` (``Delta = linf``, ``Delta_2 = l2``,
    default ``l2 = linf`` for ``dim = 1``).  ``(xi, eta)``-zCDP composes by
    adding both parameters.
    """
    gamma2 = jnp.square(jnp.asarray(gamma))
    l2 = jnp.asarray(linf if l2 is None else l2)
    xi = jnp.asarray(dim) * r_delta(alpha, linf) / (2.0 * gamma2)
    eta = l2 * l2 / (2.0 * gamma2)
    return xi, eta


@float64_kernel
def epsilon_from_zcdp_shifted(xi: ArrayLike, eta: ArrayLike, delta: ArrayLike) -> Array:
    r"""``epsilon`` of ``(xi, eta)``-zCDP at ``delta``: ``xi + eps_zCDP(eta, delta)``.

    ``D_lambda <= xi + lambda eta`` is the Renyi curve of ``eta``-zCDP shifted
    by ``xi``, so every Renyi-to-DP conversion shifts by ``xi``
    (Canonne-Kamath-Steinke 2020 via :func:`dpjax.accounting.epsilon_from_zcdp`).
    """
    return jnp.asarray(xi) + epsilon_from_zcdp(eta, delta)



__all__ = [
    "alpha_max_sufficient",
    "epsilon_flipped_huber_bound",
    "epsilon_from_zcdp_shifted",
    "log_delta_flipped_huber_bound",
    "log_delta_flipped_huber_sufficient",
    "r_delta",
    "r_delta_inverse",
    "zcdp_flipped_huber",
]
