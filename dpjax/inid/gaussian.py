r"""The certified least-error i.n.i.d. Gaussian design (Theorem 4 of
inid-noise-laplace-beats-gaussian).

Noise ``N(0, sigma_i^2)`` on coordinate ``i`` of a query with sensitivity profile
``lambda``.  The exact profile of the i.n.i.d. Gaussian mechanism is the Gaussian profile
with

.. math:: \mu = \sqrt{\textstyle\sum_i \lambda_i^2 / \sigma_i^2}

(Lemma 3; exact for decoupled coordinates, Remark 3), so the design is private iff
``mu <= mu0`` of (P2) (:func:`dpjax.inid.mu0`).  The least weighted ``l_p^p`` error under
that constraint is eq. (9) (Theorem 4 for ``p = 2``), or the convex programme (P3)
solved by a :mod:`solvers` backend.  The certificate re-evaluates
:func:`dpjax.accounting.gaussian.log_delta_gaussian_mu` at the returned scales after
rounding; it must be ``<= delta (1 - MARGIN)``.

Error weights (Remark 4): the paper's weighted MSE ``sum alpha_i^2 E T_i^2`` is ``w =
alpha^2``; its optimum is Theorem 4 applied to the profile ``alpha * lambda`` *in the
coordinates of ``alpha * f``*, i.e. ``sigma_i = sigma_i(alpha * lambda) / alpha_i`` -- not
literally "the same scales" (those would not even be private in general).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from dpjax import _validate
from dpjax.accounting.gaussian import ERROR as GAUSSIAN_ERROR
from dpjax.accounting.gaussian import log_delta_gaussian_mu
from dpjax.calibration.gaussian import calibrate_sigma
from dpjax.calibration.host_shape import least_certified_scale
from dpjax.certificate import log_target, scale_is_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.inid import _design as d
from dpjax.inid import _kernels as k
from dpjax.inid.mu0 import mu0 as _mu0
from dpjax.inid.profiles import validate_profile, validate_weights
from dpjax.inid.result import InidDesign

#: Eq. (9), compiled once per padded profile length.
_gaussian_scales_kernel = jax.jit(k.gaussian_scales)


def _mu_of(lam: np.ndarray, sigma: np.ndarray) -> float:
    r"""Host ``sqrt(sum lambda_i^2 / sigma_i^2)`` over ``lambda_i > 0`` (Lemma 3), rounded up.

    The ratios are split into mantissas and binary exponents (``frexp``, exact) and summed
    relative to the largest, ``mu = 2^e sqrt(sum_i (f_i 2^{e_i - e})^2)``, so ratios far
    below the float range (``lambda / sigma ~ 1e-300`` at ``delta = 1e-300``: their squares
    underflowed to 0 and ``mu = 0`` failed the certificate) keep their relative accuracy (a
    few roundings, within ``_SUM_ROUNDING``).  A ``mu`` below the least normal float64 is
    reported as that float (an upper bound); one above the range as ``inf`` (fail closed).
    """
    pos = lam > 0
    lam, sigma = lam[pos], np.broadcast_to(sigma, pos.shape)[pos]
    if np.any(np.isnan(sigma) | (sigma <= 0)):
        return math.inf  # a coordinate without noise: no finite mu (fail closed)
    lam, sigma = lam[np.isfinite(sigma)], sigma[np.isfinite(sigma)]  # sigma = inf adds 0
    f_lam, e_lam = np.frexp(lam)
    f_sig, e_sig = np.frexp(sigma)
    mant, expo = f_lam / f_sig, e_lam.astype(np.int64) - e_sig.astype(np.int64)
    top = int(np.max(expo)) if expo.size else 0
    terms = np.ldexp(mant, (expo - top).astype(np.int32)) ** 2
    with np.errstate(over="ignore", under="ignore"):
        mu = np.ldexp(math.sqrt(d.fsum_or_inf(terms)) * (1.0 + d.SUM_ROUNDING), top)
    tiny = float(np.finfo(np.float64).tiny)
    return float(mu) if mu >= tiny else (tiny if expo.size else 0.0)


def _log_delta(epsilon, delta, mu):
    """The exact Gaussian profile at ``mu`` (Lemma 3; ``delta`` unused)."""
    return log_delta_gaussian_mu(epsilon, mu)


def _largest_mu(eps: float, dlt: float) -> float:
    r"""``mu0`` of (P2): the largest ``mu`` with ``varphi_eps(mu) <= delta (1 - MARGIN)``.

    Host-driven, with two small compiled programs: the Gaussian calibration's host Newton
    search gives a certified ``sigma`` for ``Delta = 1``
    (:func:`dpjax.calibration.gaussian.calibrate_sigma`, to ``1e-12``), then the least
    certified ``s = 1 / mu`` is bisected to adjacent floats with the exact profile
    (:func:`dpjax.accounting.gaussian.log_delta_gaussian_mu`, eq. (16) of
    inid-noise-laplace-beats-gaussian) evaluated at ``mu = 1 / s`` itself
    (:func:`dpjax.calibration.host_shape.least_certified_scale`; the program the
    certificate evaluates too).  The same ``mu`` as
    :func:`dpjax.inid.mu0` (Algorithm 1 of Appendix B, a traced bisection whose compile
    takes seconds) to a few ulps.  Targets the host search cannot settle go to
    :func:`dpjax.inid.mu0`.

    Raises:
      InfeasibleTargetError: no Gaussian noise meets the target.
    """
    level = np.asarray(log_target(dlt), np.float64)
    sigma, _, ok = calibrate_sigma(eps, dlt, 1.0)
    if bool(ok):
        s, log_d, ok = least_certified_scale(
            lambda s: np.asarray(d.compiled(_log_delta)(eps, dlt, 1.0 / s), np.float64),
            np.atleast_1d(np.asarray(sigma, np.float64)), level,
        )
        if bool(ok[0] & scale_is_certified(s, log_d, level)[0]):
            return float(1.0 / s[0])
    res = _mu0(eps, dlt)  # the traced Algorithm 1 with its own fallbacks
    if int(res.status) != 0:
        raise InfeasibleTargetError(f"no Gaussian noise meets epsilon={eps!r}, delta={dlt!r}")
    return float(res.mu0)


def gaussian_design(
    profile,
    epsilon: float,
    delta: float,
    *,
    error_power: float = 2.0,
    weights=None,
    solver: str = "closed-form",
) -> InidDesign:
    r"""Least-error i.n.i.d. Gaussian noise for ``profile`` at ``(epsilon, delta)``; certified.

    The least weighted error ``sum_i w_i E|T_i|^p`` subject to Lemma 3's condition (P3 of
    inid-noise-laplace-beats-gaussian; eq. (9) for ``p = 2`` is Theorem 4):

    .. math:: \min_\sigma\ \sum_i w_i\, \sigma_i^p \quad \text{s.t.} \quad
              \sum_i \frac{\lambda_i^2}{\sigma_i^2} \le \mu_0^2 ,

    with ``mu0`` of (P2) (the value of :func:`dpjax.inid.mu0`, found on the host with one
    small compiled kernel).  A programme solution is scaled up
    onto the constraint before certifying.

    Args:
      profile: the sensitivity profile ``lambda`` (``lambda_i >= 0``, not all 0).
      epsilon: target ``epsilon >= 0``.
      delta: target ``delta`` in ``(0, 1)`` (``0`` raises: no Gaussian noise is pure DP).
      error_power: ``p > 0`` of the error ``sum_i w_i E|T_i|^p``.
      weights: error weights ``w_i > 0`` (default 1).
      solver: ``"closed-form"`` (eq. (9)), ``"jax"`` or ``"cvxpy"`` (programme (P3)).

    Returns:
      A certified :class:`InidDesign` with the i.i.d. and SPR baselines (Table I).

    Example:
      >>> d = gaussian_design([3.0, 4.0], epsilon=0.5, delta=1e-6)
      >>> round(d.reduction_db, 4)  # 10 log10(K ||lambda||_2^2 / ||lambda||_1^2)
      0.0877
    """
    target = d.check_inputs(profile, epsilon, delta, error_power, weights, solver)
    lam, eps, dlt, p, w = target[:5]
    if dlt == 0:
        raise InfeasibleTargetError(
            "the Gaussian mechanism needs delta > 0 (use laplace for delta = 0)"
        )
    with jax.enable_x64(True), np.errstate(over="ignore"):  # error sums: inf, not a warning
        mu = _largest_mu(eps, dlt)
        sigma, stats = d.solve_scales(
            target, lambda: d.run_padded(_gaussian_scales_kernel, lam, mu, p, w), 2.0, mu * mu,
            _mu_of, mu,
        )
        # Lemma 3: the design is the Gaussian mechanism with mu_eff = sqrt(sum lam^2/sigma^2);
        # mu_eff(sigma * m) = mu_eff(sigma) / m, so certification is a scalar problem.
        sigma, delta_at = d.certify("inid gaussian", target, sigma, _mu_of, _log_delta,
                                   GAUSSIAN_ERROR)
        moment = float(k.gaussian_abs_moment(p))
        pos = lam > 0
        alloc = np.where(pos, 0.5 * (lam / np.where(pos, sigma, 1.0)) ** 2, 0.0)
        return d.assemble(
            "gaussian", target, sigma, moment,
            iid_scale=float(np.sqrt(np.sum(lam * lam))) / mu,
            spr_scales=math.sqrt(lam.size) * lam / mu,
            mse=float(np.sum(sigma * sigma)),
            privacy_parameter=_mu_of(lam, sigma),
            allocation=alloc,
            delta_at_params=delta_at,
            condition="exact for decoupled coordinates (Lemma 3, Remark 3); sufficient otherwise",
            solver_stats=stats,
            notes=(
                f"mu0 = {mu!r} (P2; the largest certified mu, to adjacent floats)",
                "i.i.d./SPR baselines use Delta_2 = ||lambda||_2 (Remark 1: an upper bound)",
            ),
        )


def gaussian_scales_for_rho(
    profile, rho: float, error_power: float = 2.0, weights=None
) -> np.ndarray:
    r"""Least-error i.n.i.d. Gaussian scales spending zCDP ``rho``.

    The resource view of Sec. IV-B of inid-noise-laplace-beats-gaussian: eq. (9) with
    ``mu = sqrt(2 rho)``, i.e. the constraint

    .. math:: \sum_i \frac{\lambda_i^2}{2 \sigma_i^2} \le \rho ;

    the returned scales satisfy it (checked after rounding).

    Args:
      profile: the sensitivity profile ``lambda``.
      rho: the zCDP budget ``rho > 0``.
      error_power: ``p > 0`` of the error ``sum_i w_i E|T_i|^p``.
      weights: error weights ``w_i > 0`` (default 1).

    Returns:
      The scales ``sigma_i`` (NumPy, 0 where ``lambda_i = 0``).
    """
    lam = validate_profile(profile)
    w = validate_weights(weights, lam.size)
    rho = float(_validate.positive(rho, "rho"))
    p = float(_validate.positive(error_power, "error_power"))
    with jax.enable_x64(True):
        mu = math.sqrt(2.0 * rho)
        sigma = d.run_padded(_gaussian_scales_kernel, lam, mu, p, w)
        over = _mu_of(lam, sigma) / mu
    return sigma * max(1.0, over) * (1.0 + 2.0**-48)
