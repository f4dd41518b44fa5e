r"""Host (NumPy) twins of :mod:`dpjax.certificate`, for searches that run without XLA.

The same rules as :mod:`dpjax.certificate` (targets keep :data:`~dpjax.certificate.MARGIN`,
reported deltas are upper bounds, scales are nudged up until their profile meets the
target), for host kernels such as the closed-form Gaussian and Laplace calibrations of
:mod:`dpjax.calibration.gaussian_host` and :mod:`dpjax.calibration.laplace`: a first call
that needs no compiled program.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import numpy as np

from dpjax.certificate import LOG_TINY, MARGIN, TINY, scale_is_certified

__all__ = ["certify_scale_host", "log_target_host", "reported_delta_host"]


def log_target_host(delta) -> np.ndarray:
    r""":func:`dpjax.certificate.log_target` in NumPy, for host searches (no compiled program).

    .. math:: \log\big(\delta(1 - \text{MARGIN})\big) = \log\delta + \mathrm{log1p}(-\text{MARGIN})

    Args:
      delta: target ``delta`` in ``[0, 1)``.

    Returns:
      The log-level as a float64 array (``-inf`` for 0).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.certificate import log_target
      >>> bool(log_target_host(1e-6) == float(log_target(1e-6)))
      True
    """
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(delta, dtype=np.float64)) + math.log1p(-MARGIN)


def reported_delta_host(log_delta, error_bound) -> np.ndarray:
    r""":func:`dpjax.certificate.reported_delta` in NumPy, given a bound on ``log delta``'s error.

    .. math:: \hat\delta = \min\big(1,\ \mathrm{nextafter}(e^{\log\delta + e}, +\infty)\big)

    with ``e`` the bound (an upper bound on the exact value when ``|log delta - log
    delta_true| <= e``).  Fails closed as :func:`dpjax.certificate.reported_delta`: NaN
    gives 1, a finite value below the normal range gives ``TINY``, only ``-inf`` gives 0.

    Args:
      log_delta: ``log delta`` from a host kernel.
      error_bound: the bound ``e >= 0`` (broadcast; ``inf`` reports 1).

    Returns:
      The reported delta in ``[0, 1]`` as a float64 array.

    Example:
      >>> import math
      >>> float(reported_delta_host(-1000.0, 1e-10))
      2.2250738585072014e-308
      >>> bool(reported_delta_host(math.log(1e-6), 1e-12) > 1e-6)
      True
    """
    log_delta, error_bound = np.broadcast_arrays(
        np.asarray(log_delta, dtype=np.float64), np.asarray(error_bound, dtype=np.float64)
    )
    with np.errstate(all="ignore"):
        shifted = log_delta + np.where(np.isfinite(log_delta), error_bound, 0.0)
        normal = shifted > LOG_TINY
        up = np.nextafter(np.exp(np.where(normal, shifted, 0.0)), np.inf)
    out = np.where(normal, np.minimum(up, 1.0), np.where(log_delta == -np.inf, 0.0, TINY))
    return np.where(np.isnan(log_delta) | np.isnan(error_bound), 1.0, out)


def certify_scale_host(
    log_delta_at: Callable[[np.ndarray], np.ndarray], scale, level, max_nudges: int = 24
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r""":func:`dpjax.certificate.certify_scale` as a NumPy loop (no compiled program).

    .. math:: s_0 = s,\qquad s_k = \max\big(\mathrm{nextafter}(s),\ s\,(1 + 2^{k - 53})\big)

    The same nudges and the same test (:func:`dpjax.certificate.scale_is_certified`) as
    :func:`dpjax.certificate.certify_scale`.

    Args:
      log_delta_at: ``scale -> log delta`` (NumPy), a certified host profile.
      scale: the search's feasible end (NumPy array).
      level: the target level (:func:`log_target_host`).
      max_nudges: most nudges tried.

    Returns:
      ``(scale, log_delta, certified)`` as NumPy arrays.

    Example:
      >>> s, ld, ok = certify_scale_host(lambda s: -s, np.array([1.0]), np.array([-1.0]))
      >>> s.tolist(), ok.tolist()
      ([1.0], [True])
    """
    scale0 = np.asarray(scale, dtype=np.float64)
    with jax.enable_x64(True):
        s, ld = scale0, np.asarray(log_delta_at(scale0), dtype=np.float64)
        for k in range(max_nudges + 1):
            ok = scale_is_certified(s, ld, level)
            if k == max_nudges or np.all(ok):
                break
            trial = np.maximum(np.nextafter(scale0, np.inf), scale0 * (1.0 + 2.0 ** (k - 52.0)))
            s = np.where(ok, s, trial)
            ld = np.where(ok, ld, np.asarray(log_delta_at(s), dtype=np.float64))
    return s, ld, np.asarray(ok)
