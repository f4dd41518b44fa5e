r"""Rényi-DP moments of the continuous mechanisms and their conversions to ``(epsilon, delta)``.

Certified upper bounds on the exact moments ``log A_alpha = (alpha - 1) D_alpha`` (NumPy,
host): :mod:`.subsampled_gaussian` (the Poisson-subsampled Gaussian, integer and
fractional orders, and the conversion :func:`rdp_epsilon` / :func:`rdp_log_delta` of
Canonne, Kamath & Steinke 2020), :mod:`.laplace` (the (subsampled) Laplace mechanism),
:mod:`.families` (one use of every 1-D noise family); :mod:`.ledger` adds them over an
event ledger (the RDP side of :class:`dpjax.accounting.PLDAccountant`); :mod:`.zcdp`
converts ``rho``-zCDP to ``(epsilon, delta)``.
"""

from dpjax.accounting.rdp.families import family_log_moments
from dpjax.accounting.rdp.laplace import (
    laplace_log_moments,
    laplace_log_moments_lower,
    laplace_rdp_epsilon,
    laplace_rdp_log_delta,
    laplace_rdp_scale,
    least_with_laplace_rdp_delta,
    least_with_laplace_rdp_epsilon,
)
from dpjax.accounting.rdp.ledger import (
    family_rdp_delta,
    family_rdp_epsilon,
    ledger_rdp_delta,
    ledger_rdp_delta_exceeds,
    ledger_rdp_epsilon,
    ledger_rdp_epsilon_exceeds,
)
from dpjax.accounting.rdp.subsampled_gaussian import (
    FRACTIONAL_ORDERS,
    RDP_ORDERS,
    gaussian_fractional_log_moments,
    gaussian_log_moments,
    gaussian_moment_bounds,
    gaussian_rdp_epsilon,
    gaussian_rdp_log_delta,
    gaussian_rdp_sigma,
    rdp_epsilon,
    rdp_log_delta,
)
from dpjax.accounting.rdp.zcdp import (
    delta_from_zcdp,
    epsilon_from_zcdp,
    epsilon_from_zcdp_bun_steinke,
    log_delta_from_zcdp,
)

__all__ = [
    "FRACTIONAL_ORDERS",
    "RDP_ORDERS",
    "delta_from_zcdp",
    "epsilon_from_zcdp",
    "epsilon_from_zcdp_bun_steinke",
    "family_log_moments",
    "family_rdp_delta",
    "family_rdp_epsilon",
    "gaussian_fractional_log_moments",
    "gaussian_log_moments",
    "gaussian_moment_bounds",
    "gaussian_rdp_epsilon",
    "gaussian_rdp_log_delta",
    "gaussian_rdp_sigma",
    "laplace_log_moments",
    "laplace_log_moments_lower",
    "laplace_rdp_epsilon",
    "laplace_rdp_log_delta",
    "laplace_rdp_scale",
    "least_with_laplace_rdp_delta",
    "least_with_laplace_rdp_epsilon",
    "ledger_rdp_delta",
    "ledger_rdp_delta_exceeds",
    "ledger_rdp_epsilon",
    "ledger_rdp_epsilon_exceeds",
    "log_delta_from_zcdp",
    "rdp_epsilon",
    "rdp_log_delta",
]
