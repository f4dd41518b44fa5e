"""Privacy-loss-distribution engine: discretise, compose (FFT, iterative), subsample, query."""

from dpjax.accounting.pld._pld import LAMBDAS, PLD
from dpjax.accounting.pld.atoms import delta_of_atoms, from_atoms
from dpjax.accounting.pld.compose import compose, self_compose, self_compose_size
from dpjax.accounting.pld.discretise import (
    MonotonePair,
    discretise_pair,
    from_gaussian,
    from_laplace,
    from_noise,
    from_pair,
    noise_pair,
)
from dpjax.accounting.pld.query import delta_for_epsilon, epsilon_for_delta, log_delta_for_epsilon

__all__ = [
    "LAMBDAS",
    "PLD",
    "MonotonePair",
    "compose",
    "delta_for_epsilon",
    "discretise_pair",
    "epsilon_for_delta",
    "delta_of_atoms",
    "from_atoms",
    "from_gaussian",
    "from_laplace",
    "from_noise",
    "from_pair",
    "log_delta_for_epsilon",
    "noise_pair",
    "self_compose",
    "self_compose_size",
]
