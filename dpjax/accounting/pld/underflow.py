r"""The mass a deep grid may lose to float64 underflow, charged to ``+infinity``.

A pair cut below :data:`.discretise.TAIL` (the tilted composition's deep levels, down to a
tail of ``1e-300``) reaches bins whose masses, or the ``P`` and ``Q`` bin masses they are
formed from (``p_i = qs_i - ws_i + e^h ws_{i-1}`` with ``ws <= qs <= P(bin)``,
:func:`.discretise.discretise_pair`), fall below the least normal float64 ``u_min``, which
XLA's CPU backend flushes to zero.  Each entry then loses less than ``3 e^h u_min``, so a
pessimistic PLD of ``n`` points stays pessimistic with

.. math:: m_\infty \mathrel{+}= 3\, e^{h}\, u_{\min}\, n\, (1 + 10^{-9})

(the last factor for the addition's rounding).  Composed over ``K`` uses that is ``~K n 3
e^h u_min``, about ``1e-296`` at ``K = 10^4``, ``n = 2^20``: it matters only for ``delta``
below ``~1e-290``, where an uncharged loss could leave an answer below the truth.  A grid cut
at ``TAIL`` never comes near ``u_min`` and is not charged; an optimistic PLD is not either
(lost mass only lowers it, which is what a lower bound may do).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.discretise import TAIL
from dpjax.numerics import float64_kernel

#: The least normal float64: XLA's CPU backend flushes smaller results to zero.
TINY = float(np.finfo(np.float64).tiny)


@float64_kernel
def charge_underflow(pld: PLD, tail) -> PLD:
    """``pld`` with the mass its grid may have lost to underflow sent to ``+infinity``.

    Args:
      pld: one use's discretised PLD (not composed).
      tail: the tail its pair was cut at: a float or a traced float64 scalar (no charge
        where ``tail >= TAIL``).

    Returns:
      The PLD, ``inf_mass``, ``atom_inf`` and ``truncated_mass`` raised by the module's
      charge (unchanged if optimistic or not deep).
    """
    if not pld.pessimistic or (_concrete(tail) and float(tail) >= TAIL):
        return pld
    lost = 3.0 * jnp.exp(pld.bin_width) * TINY * pld.size * (1.0 + 1e-9)
    lost = jnp.where(jnp.asarray(tail) < TAIL, lost, 0.0)
    return dataclasses.replace(
        pld,
        inf_mass=jnp.minimum(pld.inf_mass + lost, 1.0),
        atom_inf=jnp.minimum(pld.atom_inf + lost, 1.0),
        truncated_mass=pld.truncated_mass + lost,
    )


def _concrete(x) -> bool:
    """Whether ``x`` is a concrete number (not a tracer)."""
    return not isinstance(x, jax.core.Tracer)


__all__ = ["TINY", "charge_underflow"]
