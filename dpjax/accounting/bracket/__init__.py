r"""The two-sided bracket of ``epsilon(delta)``: its certified **lower** end.

The upper end is the pessimistic engine's (:func:`dpjax.accounting.pld.engine.epsilon`,
:meth:`dpjax.accounting.PLDAccountant.get_epsilon`); the lower end comes from the
*optimistic* PLD (losses rounded down, so its hockey stick lies below the true one), every
numerical error subtracted:

.. math:: \epsilon_{\text{lower}}(\delta) = \max\{l_k :\ \underline\delta_k > \delta\}
          \ (\text{or } 0) \le \epsilon_{\text{true}}(\delta) \le \epsilon_{\text{upper}}(\delta).

:func:`epsilon_lower` is the one entry point of a noise family after ``K`` uses
(:mod:`.optimistic`: the plain FFT grid, and below
:data:`dpjax.accounting.pld.engine.TILT_BELOW` the larger of it and
:func:`tilted_epsilon_lower`, the tilted composition's lower end of :mod:`.tilted`).
:func:`epsilon_lower_of_pld` and :func:`epsilon_lower_of_tilted` answer from a composition
the caller holds (a plain optimistic PLD, a tilted one).  :func:`refine_bracket` narrows
a bracket to a requested width (``epsilon_error``) on finer grids (:mod:`.refine`).
:class:`EpsilonBracket` (:mod:`.result`) is the one type every two-sided answer returns.
"""

from dpjax.accounting.bracket.optimistic import epsilon_lower, epsilon_lower_of_pld
from dpjax.accounting.bracket.refine import MAX_REFINEMENTS, refine_bracket, validate_epsilon_error
from dpjax.accounting.bracket.result import EpsilonBracket
from dpjax.accounting.bracket.tilted import (
    epsilon_lower_of_tilted,
    log_delta_lower,
    lower_tilts,
    product_lower_kernel,
    tilted_epsilon_lower,
    tilted_lower_kernel,
)

__all__ = [
    "EpsilonBracket",
    "MAX_REFINEMENTS",
    "epsilon_lower",
    "epsilon_lower_of_pld",
    "epsilon_lower_of_tilted",
    "log_delta_lower",
    "lower_tilts",
    "product_lower_kernel",
    "refine_bracket",
    "tilted_epsilon_lower",
    "tilted_lower_kernel",
    "validate_epsilon_error",
]
