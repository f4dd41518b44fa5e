"""Bayesian coordinate differential privacy (bayesian-coordinate-dp).

* :mod:`dpjax.bcdp.channels` -- unbiased LDP channels for the l2 ball (Duchi et al.'s
  Mechanism 2 and PrivUnit2), vectorised over users, log-space constants.
* :mod:`dpjax.bcdp.budget` -- Theorem 2's budget vector, Proposition 4 (CDP to
  BCDP), Proposition 6's linear programme, Corollary 1.
* :mod:`dpjax.bcdp.mean` -- the mean mechanism ``M_mean`` (Mechanism 1), the
  server's estimate, exact variance bounds and eq. (17).
* :mod:`dpjax.bcdp.least_squares` -- Algorithm 3 and Theorem 3.
* :mod:`dpjax.bcdp.finite` -- exact LDP / CDP / BCDP levels of finite mechanisms
  (Definitions 1-4, Theorem 1; Examples 1 and 2).
"""

from dpjax.bcdp.budget import (
    BudgetVector,
    CDPBudget,
    cdp_to_bcdp,
    corollary1_bound,
    mean_guarantees,
    proposition6_budget,
    theorem2_budget,
)
from dpjax.bcdp.channels import DUCHI, PRIVUNIT, Channel, ChannelParameters, get_channel
from dpjax.bcdp.least_squares import LeastSquaresFit, private_least_squares, theorem3_bound
from dpjax.bcdp.mean import (
    MeanEstimate,
    mean_mechanism,
    mse_rate,
    server_estimate,
    variance_bound,
)

__all__ = [
    "DUCHI",
    "PRIVUNIT",
    "BudgetVector",
    "CDPBudget",
    "Channel",
    "ChannelParameters",
    "LeastSquaresFit",
    "MeanEstimate",
    "cdp_to_bcdp",
    "corollary1_bound",
    "get_channel",
    "mean_guarantees",
    "mean_mechanism",
    "mse_rate",
    "private_least_squares",
    "proposition6_budget",
    "server_estimate",
    "theorem2_budget",
    "theorem3_bound",
    "variance_bound",
]
