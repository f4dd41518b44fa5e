"""Flipped Huber noise ``FH(alpha, gamma^2)`` (flipped-huber-mechanism, Sec. III).

:mod:`.standard`: kernels of the standard shape ``FH(b, 1)`` (normaliser, survival,
quantile, variance, Fisher information, moment generating function; eqs. (7)-(12),
(22), (23)); :mod:`.privacy_loss`: the privacy loss at a shift and its closed-form
inverse (eqs. (15), (25)); :mod:`.family`: the :class:`FlippedHuber` pytree.
"""

from dpjax.noise.flipped_huber.family import FlippedHuber
from dpjax.noise.flipped_huber.privacy_loss import (
    centred_privacy_loss,
    centred_privacy_loss_inverse,
)
from dpjax.noise.flipped_huber.standard import (
    flipped_huber_loss,
    log_half_gauss_mass,
    log_half_laplace_mass,
    log_normaliser,
    log_omega,
    standard_fisher_information,
    standard_isf_log,
    standard_log_mgf,
    standard_log_sf,
    standard_loss,
    standard_variance,
    theta_over_gamma,
)

__all__ = [
    "FlippedHuber",
    "centred_privacy_loss",
    "centred_privacy_loss_inverse",
    "flipped_huber_loss",
    "log_half_gauss_mass",
    "log_half_laplace_mass",
    "log_normaliser",
    "log_omega",
    "standard_fisher_information",
    "standard_isf_log",
    "standard_log_mgf",
    "standard_log_sf",
    "standard_loss",
    "standard_variance",
    "theta_over_gamma",
]
