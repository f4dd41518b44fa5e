"""DP-SGD inside JAX training loops: one certified plan behind transform, sampler, accountant.

:func:`make_plan` calibrates once (:mod:`dpjax.train.plan`); the plan hands out the optax
transformation (:mod:`dpjax.train.transform`), the Poisson sampler
(:mod:`dpjax.train.sampler`) and the accountant (:mod:`dpjax.train.accountant`).
"""

from dpjax.train.accountant import Accountant, EpsilonBracket
from dpjax.train.groups import Groups, flat_per_layer, make_groups
from dpjax.train.plan import PrivacyPlan, make_plan
from dpjax.train.sampler import Batch, FixedBatchSampler, PoissonSampler, make_sampler
from dpjax.train.transform import DPAggregateState, clipped_sum, dp_optimizer, dp_transform

__all__ = [
    "Accountant",
    "Batch",
    "DPAggregateState",
    "EpsilonBracket",
    "FixedBatchSampler",
    "Groups",
    "PoissonSampler",
    "PrivacyPlan",
    "clipped_sum",
    "dp_optimizer",
    "dp_transform",
    "flat_per_layer",
    "make_groups",
    "make_plan",
    "make_sampler",
]
