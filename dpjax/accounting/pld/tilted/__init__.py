r"""The exponentially tilted FFT composition: certified answers far below the FFT floor.

:mod:`.fold` tilts one PLD (``p_lambda(l) = p(l) e^{lambda l - c}``), composes it ``K``
times by FFT and untilts pointwise (``K``-fold self-composition; the tilts and the query
of a tilted window); :mod:`.compose` composes *different* PLDs under one tilt (a ledger's
heterogeneous composition).  The lower ends that use these compositions are in
:mod:`dpjax.accounting.bracket.tilted`.
"""

from dpjax.accounting.pld.tilted import compose, fold
from dpjax.accounting.pld.tilted.compose import *  # noqa: F403 (its ``__all__``)
from dpjax.accounting.pld.tilted.fold import *  # noqa: F403 (its ``__all__``)

__all__ = [*fold.__all__, *compose.__all__]
