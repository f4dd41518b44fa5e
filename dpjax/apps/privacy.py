r"""Per-coordinate noise of DP coordinate descent under zCDP (flipped-huber-mechanism, Sec. VI-A).

DP-CD releases ``K`` coordinate updates per pass for ``L`` passes; update ``i`` has
sensitivity ``lambda_i``.  Its noise is ``lambda_i`` times one *unit* noise
``FH(a, g^2)`` (``a = 0``: the Gaussian ``N(0, g^2)``).  By Theorem 9 of
flipped-huber-mechanism one release is ``(R_1(a) / (2 g^2), 1 / (2 g^2))``-zCDP with

.. math:: \mathcal R_1(a) = a^2 - ([a - 1]_+)^2,

(scale invariance: ``R_lambda(lambda a) = lambda^2 R_1(a)``), and zCDP composes additively
(Bun & Steinke 2016, Lemma 2.3), so the whole run is ``(xi, eta)``-zCDP with

.. math:: \xi = KL\,\frac{\mathcal R_1(a)}{2g^2},\qquad \eta = \frac{KL}{2g^2},\qquad
          \epsilon = \xi + \epsilon_{\rm zCDP}(\eta, \delta)

(the ``(xi, eta)`` form of a Renyi bound ``D_alpha <= xi + alpha eta`` gives the same
conversion as ``eta``-zCDP shifted by ``xi``; the conversion is Canonne, Kamath & Steinke's
Cor. 13, :func:`dpjax.accounting.rdp.zcdp.epsilon_from_zcdp`, never larger than the paper's
Lemma 3.5).  For each shape ``b = a / g`` of a grid the least ``g`` meeting ``epsilon`` is
found by bisection and the shape of least variance ``g^2 Var FH(b, 1)`` kept (the paper's
grid search); ``b = 0`` is in every grid, so flipped Huber is never worse than Gaussian.
The final ``(epsilon, delta)`` is re-evaluated from the chosen parameters and certified.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.rdp.zcdp import delta_from_zcdp, epsilon_from_zcdp
from dpjax.certificate import CertificationError, certify_epsilon
from dpjax.inid import gaussian_scales_for_rho
from dpjax.noise.flipped_huber import standard_variance
from dpjax.numerics import bisect_monotone

MECHANISMS = ("gaussian", "flipped_huber")
_SHAPES = np.concatenate([[0.0], np.geomspace(0.05, 20.0, 63)])


class UnitNoise(NamedTuple):
    """Unit noise ``FH(alpha, gamma^2)`` of a DP-CD run (multiply by each update's sensitivity).

    Attributes:
      mechanism: ``"gaussian"`` (``alpha = 0``) or ``"flipped_huber"``.
      alpha: unit transition point ``a``.
      gamma: unit scale ``g``.
      xi, eta: the ``(xi, eta)``-zCDP of the whole run (Theorem 9, composed).
      epsilon: certified epsilon of the whole run at ``delta`` (``<=`` the target).
      delta: the target delta.
      variance: the unit variance ``g^2 Var FH(a/g, 1)``.
    """

    mechanism: str
    alpha: float
    gamma: float
    xi: float
    eta: float
    epsilon: float
    delta: float
    variance: float


def r_one(a):
    r"""``R_1(a) = a^2 - ([a - 1]_+)^2`` (Theorem 9 of flipped-huber-mechanism, Delta = 1)."""
    return a * a - jnp.maximum(a - 1.0, 0.0) ** 2


def run_zcdp(alpha, gamma, releases):
    r"""``(xi, eta)`` of ``releases`` unit flipped Huber releases (Theorem 9, composed).

    .. math:: \xi = n\,\mathcal R_1(a) / (2g^2),\qquad \eta = n / (2g^2)

    Args:
      alpha, gamma: unit noise parameters.
      releases: number of releases ``n = K L``.

    Returns:
      ``(xi, eta)``.
    """
    return releases * r_one(alpha) / (2.0 * gamma**2), releases / (2.0 * gamma**2)


def _epsilon(alpha, gamma, releases, delta):
    xi, eta = run_zcdp(alpha, gamma, releases)
    return xi + epsilon_from_zcdp(eta, delta)


@jax.jit
def _search(shapes, releases, epsilon, delta):
    def least_gamma(b):
        res = bisect_monotone(
            lambda lg: _epsilon(b * jnp.exp(lg), jnp.exp(lg), releases, delta) <= epsilon,
            jnp.log(1e8),
            jnp.log(1e-8),
            num_iterations=80,
        )
        return jnp.exp(res.good), res.status

    gammas, status = jax.vmap(least_gamma)(shapes)
    variance = gammas**2 * standard_variance(shapes)
    variance = jnp.where(status == 0, variance, jnp.inf)
    return gammas, variance


def calibrate_dpcd_noise(
    epsilon: float, delta: float, num_coordinates: int, passes: int, mechanism: str = "gaussian"
) -> UnitNoise:
    r"""Least-variance unit noise for ``K L`` DP-CD releases at ``(epsilon, delta)``, certified.

    See the module docstring (flipped-huber-mechanism, Sec. VI-A and Theorem 9).

    Args:
      epsilon, delta: the privacy target of the whole run (``epsilon > 0``, ``0 < delta < 1``).
      num_coordinates: ``K``.
      passes: ``L``.
      mechanism: ``"gaussian"`` or ``"flipped_huber"``.

    Returns:
      A :class:`UnitNoise` whose ``epsilon`` is certified and ``<=`` the target.

    Raises:
      ValueError: bad arguments.
      CertificationError: no parameters certify (never expected).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> g = calibrate_dpcd_noise(1.0, 1e-5, 10, 5, "gaussian")
      >>> f = calibrate_dpcd_noise(1.0, 1e-5, 10, 5, "flipped_huber")
      >>> bool(f.variance <= g.variance), bool(g.epsilon <= 1.0)
      (True, True)
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    for name, v in (("num_coordinates", num_coordinates), ("passes", passes)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v}")
    releases = float(num_coordinates * passes)
    shapes = _SHAPES if mechanism == "flipped_huber" else _SHAPES[:1]
    # search a hair below the target so that the certificate's re-evaluation needs no nudge
    target = float(epsilon) * (1.0 - 2.0**-26)
    gammas, variance = (
        np.asarray(v) for v in _search(jnp.asarray(shapes), releases, target, float(delta))
    )
    k = int(np.argmin(variance))
    if not np.isfinite(variance[k]):
        raise CertificationError(f"dpcd {mechanism}: no noise certifies epsilon={epsilon}")
    gamma = float(gammas[k])
    alpha = float(shapes[k] * gamma)
    xi, eta = (float(v) for v in run_zcdp(alpha, gamma, releases))
    eps = float(_epsilon(alpha, gamma, releases, delta))
    eps = float(certify_epsilon(
        f"dpcd {mechanism}", lambda e: delta_from_zcdp(eta, jnp.asarray(e) - xi), eps, delta))
    if eps > epsilon:
        raise CertificationError(f"dpcd {mechanism}: certified epsilon {eps} > target {epsilon}")
    return UnitNoise(mechanism, alpha, gamma, xi, eta, eps, float(delta), float(variance[k]))


class InidNoise(NamedTuple):
    """Per-coordinate i.n.i.d. Gaussian noise of an improved DP-CD run.

    Attributes:
      scales: ``(K,)`` standard deviations ``sigma_i`` of each pass's update noise (in the
        space of the profile they were designed for).
      rho: the zCDP of the whole run, ``L sum_i lambda_i^2 / (2 sigma_i^2)``.
      epsilon: certified epsilon of the run at ``delta`` (``<=`` the target).
      delta: the target delta.
      mse: ``sum_i sigma_i^2`` (one pass).
      mse_proportional: the same for the DP-CD (SPR, ``sigma_i propto lambda_i``) noise at
        the same ``rho``, ``K ||lambda||_2^2 L / (2 rho)``.
    """

    scales: np.ndarray
    rho: float
    epsilon: float
    delta: float
    mse: float
    mse_proportional: float


def calibrate_dpcd_inid(epsilon: float, delta: float, profile, passes: int) -> InidNoise:
    r"""Least-MSE i.n.i.d. Gaussian noise for ``L`` passes of DP-CD at ``(epsilon, delta)``.

    The improved DP-CD of inid-noise-laplace-beats-gaussian (Sec. VI-A, App. C,
    Algorithm 2): the run's zCDP ``rho`` is the largest with
    ``epsilon_zCDP(rho, delta) <= epsilon`` (the Gaussian case of
    :func:`calibrate_dpcd_noise`), split equally over the passes, and each pass's share is
    divided across coordinates by Theorem 4 (:func:`dpjax.inid.gaussian_scales_for_rho`):

    .. math:: \sigma_i^2 = \frac{\lambda_i \|\lambda\|_1 L}{2\rho},\qquad
              \rho_{\rm run} = L \sum_i \frac{\lambda_i^2}{2\sigma_i^2} \le \rho ,

    against DP-CD's ``sigma_i = lambda_i sqrt(K L / (2 rho))``: MSE ``||lambda||_1^2`` vs
    ``K ||lambda||_2^2`` (Cauchy-Schwarz).  The epsilon is re-evaluated from the returned
    scales (``rho_run``) and certified.

    Args:
      epsilon, delta: the privacy target of the optimisation (``epsilon > 0``,
        ``0 < delta < 1``).
      profile: ``(K,)`` per-pass sensitivities ``lambda_i > 0`` of the updates.
      passes: ``L``.

    Returns:
      A certified :class:`InidNoise`.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> nz = calibrate_dpcd_inid(1.0, 1e-5, [1.0, 0.1, 0.01], 5)
      >>> bool(nz.epsilon <= 1.0), bool(nz.mse < nz.mse_proportional)
      (True, True)
    """
    lam = np.asarray(profile, dtype=np.float64)
    if lam.ndim != 1 or lam.size < 1 or not np.all(np.isfinite(lam) & (lam > 0)):
        raise ValueError(f"profile must be a non-empty 1-D array of finite values > 0, got {lam}")
    rho = calibrate_dpcd_noise(epsilon, delta, lam.size, passes, "gaussian").eta
    sigma = np.asarray(gaussian_scales_for_rho(lam, rho / passes), dtype=np.float64)
    run_rho = float(passes * np.sum(lam**2 / (2.0 * sigma**2))) * (1.0 + 2.0**-40)
    eps = float(epsilon_from_zcdp(run_rho, delta))
    eps = float(certify_epsilon("dpcd inid", lambda e: delta_from_zcdp(run_rho, e), eps, delta))
    if not eps <= epsilon:
        raise CertificationError(f"dpcd inid: certified epsilon {eps} > target {epsilon}")
    mse_prop = float(lam.size * np.sum(lam**2) * passes / (2.0 * rho))
    return InidNoise(sigma, run_rho, eps, float(delta), float(np.sum(sigma**2)), mse_prop)
