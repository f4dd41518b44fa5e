r"""The Gaussian calibration on the host: the closed form in SciPy with a per-point error bound.

The first call of :func:`dpjax.calibrate` for ``"gaussian"`` should not wait for XLA: the
one-use profile is a closed form (Balle & Wang 2018, "Improving the Gaussian Mechanism for
Differential Privacy: Analytical Calibration and Optimal Denoising", ICML 2018,
arXiv:1805.06530), so :func:`dpjax.calibration.gaussian.calibrate_sigma` first searches
and certifies here, in NumPy/SciPy, and takes the compiled path only where the bound
below is too loose to certify (small ``epsilon`` for its ``delta``).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from dpjax.accounting.gaussian import ERROR
from dpjax.certificate import MARGIN, log_target_host, reported_delta_host, scale_is_certified
from dpjax.numerics import Status, float64_kernel, newton_host
from dpjax.numerics.constants import HALF_LOG_2PI
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

#: Documented error of ``scipy.special.log_ndtr`` as the host kernel uses it:
#: ``|log Q_hat(x) - log Q(x)| <= HOST_LOG_Q_ERROR (1 + |log Q(x)|)``.  Largest measured
#: ratio 4.4e-16 (about 4 ulps) against 40-digit mpmath over x in [-40, 40] (SciPy 1.17);
#: the constant keeps a factor ~10 (tests/calibration/test_gaussian_host.py checks 4x).
HOST_LOG_Q_ERROR = 4e-15
#: Documented error of ``log(scipy.special.erfcx(x))``: ``<= HOST_LOG_ERFCX_ERROR (1 +
#: max(log erfcx(x), 0))`` (absolute for ``x >= 0``, where ``erfcx <= 1``).  Largest measured
#: ratio 8.8e-16 (8 ulps) against 40-digit mpmath over x in [-25, 1000] (SciPy 1.17); the
#: constant keeps a factor ~2.8 (tests/calibration/test_gaussian_host.py checks 2x).
HOST_LOG_ERFCX_ERROR = 2.5e-15
_SQRT_HALF = 0.7071067811865476


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
    epsilon``: the Gaussian factors cancel in closed form).  No compiled program: the host path of
    :func:`calibrate_sigma`.  The error bound propagates, by first-order bounds,
    :data:`HOST_LOG_Q_ERROR` on ``log Q(a)`` and :data:`HOST_LOG_ERFCX_ERROR` on each
    ``log erfcx``, the rounding of ``a`` and ``b`` (``<= 4u (|eps sigma / Delta| + |Delta /
    (2 sigma)|)``, times ``|d log Q / dx| <= max(x, 0) + 1`` and the bound on
    ``|d log erfcx / dx|`` of :func:`_erfcx_log_slope`),
    and the cancellation in ``1 - e^t`` (factor ``1 / expm1(-(t + err_t))``; infinite
    where ``t + err_t >= 0``).  The bound is not uniform like the JAX kernel's
    (:data:`dpjax.accounting.gaussian.ERROR`): callers certify only where it is small.

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
def calibrate_sigma_host(eps, dlt, sens, x0, good, bad):
    """Host search of :func:`dpjax.calibration.gaussian.calibrate_sigma`: ``(sigma, delta_at,
    certified)`` for flat arrays, no compiled program.

    Newton on ``log sigma`` (:func:`dpjax.numerics.newton_host`) from ``x0`` in the bracket
    ``(bad, good)`` over
    :func:`log_delta_gaussian_host`; certified where the profile at the returned ``sigma``
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
