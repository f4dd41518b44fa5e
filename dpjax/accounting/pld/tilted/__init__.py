r"""The exponentially tilted FFT composition: certified answers far below the FFT floor.

:mod:`.fold` tilts one PLD (``p_lambda(l) = p(l) e^{lambda l - c}``), composes it ``K``
times by FFT and untilts pointwise (``K``-fold self-composition; the tilts and the query
of a tilted window); :mod:`.compose` composes *different* PLDs under one tilt (a ledger's
heterogeneous composition).  The lower ends that use these compositions are in
:mod:`dpjax.accounting.bracket.tilted`.
"""

from dpjax.accounting.pld.tilted.compose import (
    product_size,
    tilted_product,
    tilted_product_answer,
    tilted_product_kernel,
)
from dpjax.accounting.pld.tilted.fold import (
    CUT_GAIN,
    CUT_SHARE,
    Tilted,
    cut_top,
    least_over_tilts,
    placed_pair,
    query,
    saddle_lambdas,
    tilted_epsilon_for_delta,
    tilted_kernel,
    tilted_log_delta_for_epsilon,
    tilted_self_compose,
)

__all__ = [
    "CUT_GAIN",
    "CUT_SHARE",
    "Tilted",
    "cut_top",
    "placed_pair",
    "tilted_epsilon_for_delta",
    "least_over_tilts",
    "tilted_log_delta_for_epsilon",
    "product_size",
    "query",
    "saddle_lambdas",
    "tilted_kernel",
    "tilted_product",
    "tilted_product_answer",
    "tilted_product_kernel",
    "tilted_self_compose",
]
