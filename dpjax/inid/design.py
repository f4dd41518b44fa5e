r"""Certified i.n.i.d. Gaussian and Laplace designs for a sensitivity profile: the façade.

:func:`design` dispatches to :func:`dpjax.inid.gaussian.gaussian_design` (Theorem 4 of
inid-noise-laplace-beats-gaussian) and :func:`dpjax.inid.laplace.laplace_design`
(Theorem 5, Corollary 6); each validates its input, runs the kernels of
:mod:`dpjax.inid._kernels` in a scoped float64 context, **certifies** the returned
scales and reports the error beside the i.i.d. and SPR baselines (Table I).
:func:`resource_shares` is the privacy-resource view of the same optimum (Sec. IV-B).

The i.i.d. and SPR baselines use ``Delta_p = ||lambda||_p`` (Remark 1: an upper bound
on the true ``Delta_p``; exact for decoupled coordinates).
"""

from __future__ import annotations

import numpy as np

from dpjax import _validate
from dpjax.inid.gaussian import gaussian_design
from dpjax.inid.laplace import laplace_design
from dpjax.inid.profiles import validate_profile, validate_weights
from dpjax.inid.result import InidDesign


def design(mechanism: str, profile, epsilon, delta=0.0, **kw) -> InidDesign:
    r"""The certified least-error i.n.i.d. ``mechanism`` design for ``profile``.

    Dispatches to :func:`dpjax.inid.gaussian.gaussian_design` (eq. (9), Theorem 4 of
    inid-noise-laplace-beats-gaussian: ``min sum w_i sigma_i^p`` s.t. ``sum lambda_i^2 /
    sigma_i^2 <= mu0^2``) or :func:`dpjax.inid.laplace.laplace_design` (eq. (12),
    Theorem 5, Corollary 6: ``min sum w_i b_i^p`` s.t. ``sum lambda_i / b_i <= epsilon -
    log(1 - delta)``).

    Args:
      mechanism: ``"gaussian"`` or ``"laplace"``.
      profile: the sensitivity profile ``lambda``.
      epsilon: target ``epsilon``.
      delta: target ``delta``.
      **kw: ``error_power``, ``weights``, ``solver`` (see the design functions).

    Returns:
      A certified :class:`dpjax.inid.InidDesign`.
    """
    if mechanism == "gaussian":
        return gaussian_design(profile, epsilon, delta, **kw)
    if mechanism == "laplace":
        return laplace_design(profile, epsilon, delta, **kw)
    raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got {mechanism!r}")


def resource_shares(profile, mechanism: str, error_power: float = 2.0, weights=None) -> np.ndarray:
    r"""Optimal split of the privacy resource across coordinates (Sec. IV-B); sums to 1.

    Gaussian (zCDP ``eta = mu0^2 / 2``; eq. (9) of inid-noise-laplace-beats-gaussian):

    .. math:: \frac{\eta_i}{\eta} = \frac{\lambda_i^{2p/(p+2)} w_i^{2/(p+2)}}{S}
              \qquad (\lambda_i / \|\lambda\|_1 \text{ for the MSE});

    Laplace (``epsilon``; eq. (12)):

    .. math:: \frac{\epsilon_i}{\epsilon} = \frac{\lambda_i^{p/(p+1)} w_i^{1/(p+1)}}{S}
              \qquad (\lambda_i^{2/3} / \textstyle\sum_j \lambda_j^{2/3} \text{ for the MSE}),

    ``S`` normalising.  SPR splits equally (``1/K``).  A caller composing ``T`` releases
    can give release ``t`` a resource ``eta^(t)`` (zCDP adds up) and scale it with
    :func:`dpjax.inid.gaussian.gaussian_scales_for_rho`.

    Args:
      profile: the sensitivity profile ``lambda``.
      mechanism: ``"gaussian"`` or ``"laplace"``.
      error_power: ``p > 0`` of the error ``sum_i w_i E|T_i|^p``.
      weights: error weights ``w_i > 0`` (default 1).

    Returns:
      The shares (NumPy, summing to 1).

    Example:
      >>> resource_shares([1.0, 3.0], "gaussian").tolist()
      [0.25, 0.75]
    """
    lam = validate_profile(profile)
    w = validate_weights(weights, lam.size)
    p = float(_validate.positive(error_power, "error_power"))
    if mechanism == "gaussian":
        t = lam ** (2 * p / (p + 2)) * w ** (2 / (p + 2))
    elif mechanism == "laplace":
        t = lam ** (p / (p + 1)) * w ** (1 / (p + 1))
    else:
        raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got {mechanism!r}")
    return t / np.sum(t)
