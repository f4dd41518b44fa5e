"""Privacy profiles and conversions (exact 1-D profiles, zCDP), events and their accountant."""

from dpjax.accounting import events
from dpjax.accounting.accountant import PLDAccountant, UnsupportedEventError
from dpjax.accounting.from_dp_accounting import from_dp_accounting
from dpjax.accounting.gaussian import (
    delta_gaussian,
    epsilon_gaussian,
    log_delta_gaussian,
    log_delta_gaussian_mu,
    rho_gaussian,
)
from dpjax.accounting.laplace import (
    delta_laplace,
    epsilon_laplace,
    log_delta_laplace,
    scale_laplace,
)
from dpjax.accounting.zcdp import (
    delta_from_zcdp,
    epsilon_from_zcdp,
    epsilon_from_zcdp_bun_steinke,
    log_delta_from_zcdp,
)

__all__ = [
    "PLDAccountant",
    "UnsupportedEventError",
    "events",
    "from_dp_accounting",
    "delta_from_zcdp",
    "delta_gaussian",
    "delta_laplace",
    "epsilon_from_zcdp",
    "epsilon_from_zcdp_bun_steinke",
    "epsilon_gaussian",
    "epsilon_laplace",
    "log_delta_from_zcdp",
    "log_delta_gaussian",
    "log_delta_gaussian_mu",
    "log_delta_laplace",
    "rho_gaussian",
    "scale_laplace",
]
