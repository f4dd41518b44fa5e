r"""A bracket as narrow as asked: the loss grid refined until ``upper - lower <= epsilon_error``.

Both ends of a bracket are certified at every grid, so the best of several grids is too:

.. math:: \epsilon_{\text{lower}} = \max_k \epsilon^{(k)}_{\text{lower}},\qquad
          \epsilon_{\text{upper}} = \min_k \epsilon^{(k)}_{\text{upper}},\qquad
          k = 0, 1, \dots, \text{MAX\_REFINEMENTS},

where grid ``k`` has bin width ``h 2^{-k}`` (:func:`dpjax.accounting.pld.plan.refined`),
stopping at the first ``k`` whose bracket is at most ``epsilon_error`` wide (as
prv-accountant's ``eps_error``).  Used by :meth:`dpjax.accounting.PLDAccountant.bracket` and
:func:`dpjax.account`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpjax._warnings import warn_user
from dpjax.accounting.pld.plan import EngineNote, refined

#: Most halvings of the bin width :func:`refine_bracket` tries.
MAX_REFINEMENTS = 4


def validate_epsilon_error(value) -> float:
    """``value`` as a positive finite float, or a ``TypeError`` / ``ValueError`` naming it.

    >>> validate_epsilon_error(0.01)
    0.01
    """
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float, np.floating)):
        raise TypeError(f"epsilon_error must be a positive number, got {value!r}")
    err = float(value)
    if not (np.isfinite(err) and err > 0.0):
        raise ValueError(f"epsilon_error must be a positive finite number, got {value!r}")
    return err


def refine_bracket(
    compute: Callable[[], tuple], epsilon_error: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""``compute()`` on grids refined by ``2^-k``, ``k = 0 .. MAX_REFINEMENTS``, until every
    bracket is at most ``epsilon_error`` wide; each end the best found (module docstring).

    Where the last grid still leaves a wider bracket, the best one found is returned (both
    ends certified) with an :class:`~dpjax.accounting.pld.plan.EngineNote` warning, at the
    user's line.

    Args:
      compute: ``() -> (lower, upper)`` (arrays of one shape), called inside
        :func:`~dpjax.accounting.pld.plan.refined` ``(2^-k)``; it may refine further itself
        (e.g. a ledger rebuilt at a finer ``bin_width``).
      epsilon_error: the width asked for (positive).

    Returns:
      ``(lower, upper)`` float64 arrays, ``lower <= upper``.

    Example:
      >>> from dpjax.accounting.pld.plan import refinement
      >>> lo, up = refine_bracket(lambda: (1.0 - refinement(), 1.0 + refinement()), 0.5)
      >>> float(lo), float(up)
      (0.75, 1.25)
    """
    best = None
    for k in range(MAX_REFINEMENTS + 1):
        with refined(2.0**-k):
            got = compute()
        lo, up = (np.asarray(v, np.float64) for v in got)
        if best is not None:
            lo, up = np.maximum(lo, best[0]), np.minimum(up, best[1])
        best = (lo, up)
        if np.all(up - lo <= epsilon_error):
            break
    else:
        warn_user(
            f"the bracket is {float(np.max(best[1] - best[0])):.3g} wide, more than "
            f"epsilon_error = {epsilon_error:g}, at {MAX_REFINEMENTS} halvings of the bin width "
            "(both ends still certified)", EngineNote)
    return np.minimum(best[0], best[1]), best[1]


__all__ = ["MAX_REFINEMENTS", "refine_bracket", "validate_epsilon_error"]
