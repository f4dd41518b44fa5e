r"""Flipped Huber in K dimensions: the sufficient condition of Theorem 8 and zCDP (Theorem 9).

flipped-huber-mechanism, Sec. IV-B and VI-A.  With ``b = alpha / gamma``:

* :func:`log_delta_flipped_huber_sufficient` -- the K-dim sufficient condition of
  Theorem 8 (with ``theta`` of Lemma 6 and the restriction of Lemma 5 / eq. (21));
* :func:`log_delta_flipped_huber_bound` -- the minimum of Theorem 8 and the zCDP bound;
* :func:`zcdp_flipped_huber` -- Theorem 9 and its K-dim form (Sec. VI-A);
* :func:`delta_flipped_huber_exact` / :func:`epsilon_flipped_huber_exact` -- the exact K-dim
  profile by the PLD engine at any ``K`` (``K`` a traced power: the cost does not grow with K).

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
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.pld import engine
from dpjax.accounting.rdp.ledger import family_rdp_delta, family_rdp_epsilon
from dpjax.accounting.rdp.zcdp import epsilon_from_zcdp, log_delta_from_zcdp
from dpjax.certificate import fail_closed, kernel_error, log_target
from dpjax.noise.flipped_huber import FlippedHuber, theta_over_gamma
from dpjax.numerics import Status, bisect_monotone, float64_kernel, log_hockey_stick

#: Documented error constant of the K-dim bounds :func:`log_delta_flipped_huber_sufficient` /
#: :func:`log_delta_flipped_huber_bound` (of the bound's value, same form; measured against
#: the bound's formula in mpmath, tests/accounting/test_fail_closed.py).
BOUND_ERROR = kernel_error(2e-14)


# ---------------------------------------------------------------------------
# K dimensions: sufficient condition (Theorem 8)
# ---------------------------------------------------------------------------


@float64_kernel
def r_delta(alpha: ArrayLike, linf: ArrayLike) -> Array:
    r"""``R_Delta(alpha) = alpha^2 - ([alpha - Delta]_+)^2`` (Lemma 5), without cancellation.

    .. math:: \mathcal R_\Delta(\alpha) = \alpha^2 - ([\alpha - \Delta]_+)^2
              = \begin{cases} \alpha^2 & \alpha < \Delta \\
                (2\alpha - \Delta)\Delta & \alpha \ge \Delta \end{cases}

    (Lemma 5 and eq. (18) of flipped-huber-mechanism: the offset of the affine upper bound
    on the privacy loss).

    Args:
      alpha: flipped Huber ``alpha >= 0``.
      linf: per-coordinate sensitivity ``Delta > 0``.

    Returns:
      ``R_Delta(alpha)``, broadcast shape of the inputs.
    """
    alpha, linf = jnp.asarray(alpha), jnp.asarray(linf)
    return jnp.where(alpha < linf, alpha * alpha, (2.0 * alpha - linf) * linf)


@float64_kernel
def r_delta_inverse(nu: ArrayLike, linf: ArrayLike) -> Array:
    r"""``R_Delta^{-1}(nu)`` of eq. (21) of flipped-huber-mechanism.

    .. math:: \mathcal R_\Delta^{-1}(\nu) = \begin{cases} \sqrt{\nu} & 0 \le \nu < \Delta^2 \\
              \frac{\nu + \Delta^2}{2\Delta} & \nu \ge \Delta^2 \end{cases}

    Args:
      nu: ``nu`` (negative values are treated as 0).
      linf: per-coordinate sensitivity ``Delta > 0``.

    Returns:
      ``R_Delta^{-1}(nu)``, broadcast shape of the inputs.
    """
    nu, linf = jnp.asarray(nu), jnp.asarray(linf)
    return jnp.where(
        nu < linf * linf, jnp.sqrt(jnp.maximum(nu, 0.0)), (nu + linf * linf) / (2.0 * linf)
    )


@float64_kernel
def alpha_max_sufficient(
    epsilon: ArrayLike, gamma: ArrayLike, dim: ArrayLike, l2: ArrayLike, linf: ArrayLike
) -> Array:
    r"""Largest ``alpha`` allowed by Lemma 5 of flipped-huber-mechanism.

    .. math:: \alpha_{\max} = \mathcal R_\Delta^{-1}\!\left(
              \frac{2\gamma^2\epsilon - \Delta_2^2}{K}\right)

    (the restriction ``K R_Delta(alpha) <= 2 gamma^2 eps - Delta_2^2`` of Lemma 5 /
    Theorem 8, inverted with eq. (21)).

    Args:
      epsilon: ``epsilon >= 0``.
      gamma: flipped Huber ``gamma > 0``.
      dim: number of coordinates ``K >= 1``.
      l2: l2-sensitivity ``Delta_2 > 0``.
      linf: per-coordinate sensitivity ``Delta > 0``.

    Returns:
      ``alpha_max``; ``nan`` where no ``alpha`` is allowed (``2 gamma^2 eps < Delta_2^2``).
    """
    gamma, l2 = jnp.asarray(gamma), jnp.asarray(l2)
    nu = (2.0 * gamma * gamma * jnp.asarray(epsilon) - l2 * l2) / jnp.asarray(dim)
    return jnp.where(nu >= 0, r_delta_inverse(nu, linf), jnp.nan)


@float64_kernel
def log_delta_flipped_huber_sufficient(
    epsilon: ArrayLike, alpha: ArrayLike, gamma: ArrayLike, dim: ArrayLike,
    l1: ArrayLike, l2: ArrayLike, linf: ArrayLike,
) -> Array:
    r"""``log`` of the Theorem 8 bound on the K-dim profile (``0`` where it gives nothing).

    If ``K R_Delta(alpha) <= 2 gamma^2 eps - Delta_2^2`` (Lemma 5 / eq. (21)),

    .. math:: \delta(\epsilon) \le Q(a_1) - e^{\epsilon} Q(a_2),\quad
       a_{1,2} = \frac{\gamma\epsilon}{\Delta_2} \mp \frac{\Delta_2}{2\gamma}
       \mp \frac{K R_\Delta(\alpha)}{2\gamma\Delta_2}
       + [\,0 \text{ or } \tfrac{\theta\Delta_1}{\gamma\Delta_2}],

    ``theta = gamma Q^{-1}(sqrt(pi/2)/omega)`` (Lemma 6, eq. (22)); Theorem 8 of
    flipped-huber-mechanism.  A valid upper bound on the exact profile (sufficient
    condition); evaluated with :func:`dpjax.numerics.log_hockey_stick`.

    Args:
      epsilon: ``epsilon >= 0``.
      alpha: flipped Huber ``alpha >= 0``.
      gamma: flipped Huber ``gamma > 0``.
      dim: number of coordinates ``K >= 1``.
      l1: l1-sensitivity ``Delta_1``.
      l2: l2-sensitivity ``Delta_2``.
      linf: per-coordinate sensitivity ``Delta``.

    Returns:
      ``log`` of the bound; ``0`` (``delta <= 1``, no information) where the restriction
      fails.
    """
    alpha, gamma, l1, l2 = jnp.asarray(alpha), jnp.asarray(gamma), jnp.asarray(l1), jnp.asarray(l2)
    theta_term = theta_over_gamma(alpha / gamma) * l1 / l2
    return log_delta_sufficient_theta(epsilon, alpha, gamma, dim, l2, linf, theta_term)


def log_delta_sufficient_theta(epsilon, alpha, gamma, dim, l2, linf, theta_term):
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
    epsilon: ArrayLike, alpha: ArrayLike, gamma: ArrayLike, dim: ArrayLike,
    l1: ArrayLike, l2: ArrayLike, linf: ArrayLike,
) -> Array:
    r"""Best certified K-dim bound without the PLD engine: min of Theorem 8 and the zCDP bound.

    .. math:: \delta(\epsilon) \le \min\big(\delta_{\text{Thm 8}}(\epsilon),\
              \delta_{\text{zCDP}}(\eta, \epsilon - \xi)\big),\qquad
              \xi = \frac{K R_\Delta(\alpha)}{2\gamma^2},\ \eta = \frac{\Delta_2^2}{2\gamma^2}

    (Theorem 8 and Sec. VI-A of flipped-huber-mechanism, the zCDP part converted by
    Canonne, Kamath & Steinke 2020, Cor. 13); both are valid upper bounds on the exact
    profile.

    Args:
      epsilon: ``epsilon >= 0``.
      alpha, gamma, dim, l1, l2, linf: the noise and the query, as in
        :func:`log_delta_flipped_huber_sufficient`.

    Returns:
      ``log`` of the bound, broadcast shape of the inputs.
    """
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
    delta: ArrayLike, alpha: ArrayLike, gamma: ArrayLike, dim: ArrayLike,
    l1: ArrayLike, l2: ArrayLike, linf: ArrayLike, num_iterations: int = 100,
) -> Array:
    r"""Least ``epsilon`` with :func:`log_delta_flipped_huber_bound` ``<= delta`` (certified end).

    .. math:: \epsilon(\delta) = \min\{\epsilon : \delta_{\text{bound}}(\epsilon)
              \le \delta (1 - \text{MARGIN})\} \le \xi + \epsilon_{\text{zCDP}}(\eta, \delta)

    The bound decreases in ``epsilon``; the zCDP epsilon ``xi + eps_zCDP(eta, delta)`` (at
    which the zCDP part of the bound is ``<= delta``; Sec. VI-A of flipped-huber-mechanism)
    brackets it from above, and bisection returns the certified end.

    Args:
      delta: target ``delta`` in ``[0, 1)``.
      alpha, gamma, dim, l1, l2, linf: the noise and the query, as in
        :func:`log_delta_flipped_huber_sufficient`.
      num_iterations: bisection steps (static).

    Returns:
      The certified epsilon; ``inf`` for ``delta = 0`` or when the bracket fails.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> eps = epsilon_flipped_huber_bound(1e-8, 2.0, 10.0, 20, 20.0, 20**0.5, 1.0)
      >>> round(float(eps), 4)  # K = 20, Delta = 1, Delta_2 = sqrt(K), Delta_1 = K
      2.8384
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
# K dimensions, exact: the engine's K-fold composition (Sec. V-B)
# ---------------------------------------------------------------------------


def _exact(x, alpha, gamma, dim, linf, bin_width, *, at_delta: bool):
    """The engine's ``K``-fold value (``epsilon`` at delta ``x`` if ``at_delta``, else the
    profile at epsilon ``x``), the minimum with the RDP bound of ``K`` uses."""
    alpha, gamma, linf = float(alpha), float(gamma), float(linf)
    if not (gamma > 0 and alpha >= 0 and linf > 0 and int(dim) >= 1):
        raise ValueError(f"need alpha >= 0, gamma > 0, linf > 0, dim >= 1, got "
                         f"({alpha}, {gamma}, {linf}, {dim})")
    k = int(dim)
    run, rdp = (engine.epsilon, family_rdp_epsilon) if at_delta else (engine.profile,
                                                                        family_rdp_delta)
    out = run(FlippedHuber.from_scale, gamma, alpha / gamma, linf, x, compositions=k,
              bin_width=bin_width)
    return np.minimum(out, rdp(FlippedHuber(alpha, gamma), k, x, linf))


@float64_kernel
def delta_flipped_huber_exact(epsilon, alpha: float, gamma: float, dim: int, linf: float,
                              bin_width: float = 1e-4):
    r"""Certified exact K-dim profile of ``K`` i.i.d. ``FH(alpha, gamma^2)`` coordinates.

    .. math:: \delta_K(\epsilon) = \mathbb E_P\big[(1 - e^{\epsilon - L_K})_+\big],
              \qquad L_K = \sum_{k=1}^{K} L_k,\ L_k \text{ i.i.d. the 1-D loss at shift }
              \Delta

    The corner ``d = Delta (1, ..., 1)`` is the worst shift, so the exact profile is the
    ``K``-fold composition of the 1-D pair (Sec. V-B / Algorithm 2 of
    flipped-huber-mechanism), by the pessimistic PLD engine
    (:func:`dpjax.accounting.pld.engine.profile`, ``K`` a traced power: one FFT window), or the
    RDP bound of ``K`` uses (:func:`~.rdp.ledger.family_rdp_delta`) where smaller.

    Args:
      epsilon: ``epsilon >= 0`` (array).
      alpha: flipped Huber ``alpha >= 0`` (``0``: the Gaussian ``N(0, gamma^2)``).
      gamma: flipped Huber ``gamma > 0``.
      dim: number of coordinates ``K >= 1``.
      linf: per-coordinate sensitivity ``Delta > 0``.
      bin_width: the engine's loss-grid spacing.

    Returns:
      Certified ``delta(epsilon)`` (NumPy array of ``epsilon``'s shape).

    Raises:
      ValueError: bad parameters.
    """
    return _exact(epsilon, alpha, gamma, dim, linf, bin_width, at_delta=False)


@float64_kernel
def epsilon_flipped_huber_exact(delta, alpha: float, gamma: float, dim: int, linf: float,
                                bin_width: float = 1e-4):
    r"""Least certified ``epsilon`` at ``delta`` of ``K``-dim flipped Huber, exactly.

    .. math:: \epsilon_K(\delta) = \min\{\epsilon \ge 0 : \delta_K(\epsilon) \le
              \delta (1 - \text{MARGIN})\}

    for the profile of :func:`delta_flipped_huber_exact` (Sec. V-B of flipped-huber-mechanism;
    :func:`dpjax.accounting.pld.engine.epsilon`; the RDP bound of ``K`` uses where smaller,
    :func:`~.rdp.ledger.family_rdp_epsilon`).  At ``alpha = 0``: the Gaussian with
    ``Delta_2 = sqrt(K) Delta``; below :func:`epsilon_flipped_huber_bound` (Theorem 8).

    Args:
      delta: target ``delta`` in ``(0, 1)`` (array).
      alpha, gamma, dim, linf, bin_width: as in :func:`delta_flipped_huber_exact`.

    Returns:
      Certified ``epsilon`` (NumPy array of ``delta``'s shape; ``inf`` where none).

    Raises:
      ValueError: bad parameters.
    """
    return _exact(delta, alpha, gamma, dim, linf, bin_width, at_delta=True)


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
    r"""``(xi, eta)``-zCDP of flipped Huber noise (Thm 9, Sec. VI-A of flipped-huber-mechanism).

    .. math:: \xi = \frac{K\,\mathcal R_\Delta(\alpha)}{2\gamma^2},\qquad
              \eta = \frac{\Delta_2^2}{2\gamma^2}

    Theorem 9 is the 1-D case (``K = 1``, ``Delta_2 = Delta``); the K-dim form treats the
    query as K composed 1-D queries.  ``(xi, eta)``-zCDP composes by adding both
    parameters (Bun & Steinke 2016, Lemma 2.3).

    Args:
      alpha: flipped Huber ``alpha >= 0``.
      gamma: flipped Huber ``gamma > 0``.
      linf: per-coordinate sensitivity ``Delta > 0``.
      l2: l2-sensitivity ``Delta_2`` (default ``linf``, right for ``dim = 1``).
      dim: number of coordinates ``K >= 1``.

    Returns:
      ``(xi, eta)``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> xi, eta = zcdp_flipped_huber(0.5, 1.0, 1.0)
      >>> float(xi), float(eta)  # R_1(0.5) / 2 = 0.125, 1 / 2
      (0.125, 0.5)
    """
    gamma2 = jnp.square(jnp.asarray(gamma))
    l2 = jnp.asarray(linf if l2 is None else l2)
    xi = jnp.asarray(dim) * r_delta(alpha, linf) / (2.0 * gamma2)
    eta = l2 * l2 / (2.0 * gamma2)
    return xi, eta


@float64_kernel
def epsilon_from_zcdp_shifted(xi: ArrayLike, eta: ArrayLike, delta: ArrayLike) -> Array:
    r"""``epsilon`` of ``(xi, eta)``-zCDP at ``delta``: ``xi + eps_zCDP(eta, delta)``.

    .. math:: \epsilon = \xi + \min_\alpha\ \alpha\eta + \frac{\alpha \log(1 - 1/\alpha)
              - \log(\alpha - 1) - \log\delta}{\alpha - 1}

    ``D_lambda <= xi + lambda eta`` (Definition 3 of flipped-huber-mechanism) is the Renyi
    curve of ``eta``-zCDP shifted by ``xi``, so every Renyi-to-DP conversion shifts by
    ``xi`` (Canonne, Kamath & Steinke 2020, Cor. 13, via
    :func:`dpjax.accounting.rdp.zcdp.epsilon_from_zcdp`).

    Args:
      xi: zCDP offset ``xi >= 0``.
      eta: zCDP slope ``eta >= 0``.
      delta: ``delta`` in ``(0, 1)``.

    Returns:
      ``epsilon``, broadcast shape of the inputs.
    """
    return jnp.asarray(xi) + epsilon_from_zcdp(eta, delta)



__all__ = [
    "alpha_max_sufficient",
    "delta_flipped_huber_exact",
    "epsilon_flipped_huber_exact",
    "epsilon_flipped_huber_bound",
    "epsilon_from_zcdp_shifted",
    "log_delta_flipped_huber_bound",
    "log_delta_flipped_huber_sufficient",
    "r_delta",
    "r_delta_inverse",
    "zcdp_flipped_huber",
]
