"""How private are given parameters: exact 1-D profiles of each noise family, and by concept

- :mod:`.pld`: privacy-loss distributions (discretise, compose, subsample, query; the
  tilted composition in :mod:`.pld.tilted`);
- :mod:`.rdp`: Rényi-DP moments of the continuous mechanisms, RDP and zCDP conversions;
- :mod:`.events`: the event vocabulary (dp_accounting's names), its JSON form, and the
  conversions the ledger (:class:`PLDAccountant`, :mod:`.accountant`) runs on it;
- :mod:`.bracket`: the certified lower end of ``epsilon(delta)`` (the upper end is the PLD's).
"""

from dpjax.accounting import events
from dpjax.accounting.accountant import PLDAccountant, UnsupportedEventError
from dpjax.accounting.events.from_dp_accounting import from_dp_accounting
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
from dpjax.accounting.rdp.zcdp import (
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
