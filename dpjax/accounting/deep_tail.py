r"""Leaf grids deep enough for a composed ``delta`` far below ``1e-40`` (down to ``1e-300``).

:class:`~dpjax.accounting.PLDAccountant` answers ``delta < 1e-7`` through the tilted
composition (:mod:`.pld.tilted_compose`); its leaves' pairs are cut where each leaves
:func:`deep_tail` of mass outside (sent to ``+infinity`` by the pessimistic discretisation,
Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the dots: tighter discrete
approximations of privacy loss distributions", arXiv:2207.04380), and :func:`_flushed`
charges what such a deep grid may lose to float64 underflow.
"""

from __future__ import annotations

import dataclasses
import math

import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.discretise import TAIL
from dpjax.accounting.pld.plan import tilt_level
from dpjax.numerics import float64_kernel

#: The least normal float64: XLA's CPU backend flushes smaller results to zero.
_TINY = float(np.finfo(np.float64).tiny)


@float64_kernel
def deep_tail(log_level: float, uses: float) -> float:
    r"""Host helper: the cut tail of the leaf pairs when a composition of ``K`` uses must
    resolve ``delta ~ e^{log_level}``.

    .. math:: \tau = 10^{\text{tilt\_level}(\log\delta - \log K)}
              \le \min\big(10^{-40},\ 10^{-14}\,\delta / K\big)

    (whole decades, :func:`.pld.plan.tilt_level`, floored at ``10^{-300}``).  A pessimistic
    leaf sends at most ``delta(l_top) <= P(T > t_hi) <= tau`` to ``+infinity``, and the
    composition's atom at ``+infinity`` is ``1 - prod (1 - m_i)^{K_i} <= K tau``: at most
    ``1e-14`` of ``delta`` (down to the floor, where ``K tau`` may exceed a ``delta`` below
    ``1e-286``; the answer stays certified, only less tight).

    Args:
      log_level: natural ``log`` of the least ``delta`` to resolve.
      uses: ``K``, the number of leaf uses composed.

    Returns:
      ``tau`` (:data:`.pld.discretise.TAIL` where that is deep enough: today's grids).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> deep_tail(math.log(1e-5), 1000), deep_tail(math.log(1e-100), 1000)
      (1e-40, 1e-120)
    """
    level = tilt_level(float(log_level) - math.log(max(float(uses), 1.0)))
    return float(f"1e{level}")


def _flushed(pld: PLD, tail: float) -> PLD:
    r"""A leaf cut below :data:`.pld.discretise.TAIL`, its possibly flushed mass sent to
    ``+infinity``.

    A deep grid reaches bins whose masses (or the ``P``, ``Q`` bin masses they are formed
    from: ``p_i = qs_i - ws_i + e^h ws_{i-1}``, ``ws <= qs <= P(bin)``) fall below the least
    normal float64 ``u_min``, which the CPU backend flushes to zero: each entry loses less
    than ``3 e^h u_min``, so a pessimistic leaf stays pessimistic with ``n 3 e^h u_min``
    (times ``1 + 1e-9`` for the addition's rounding) added to ``inf_mass``.  Today's grids
    (``tail = TAIL``) never come near ``u_min`` and are returned unchanged, as is an
    optimistic leaf (lost mass only lowers it)."""
    if tail >= TAIL or not pld.pessimistic:
        return pld
    lost = jnp.asarray(3.0 * math.exp(float(pld.bin_width)) * _TINY * pld.size * (1.0 + 1e-9))
    return dataclasses.replace(
        pld,
        inf_mass=jnp.minimum(pld.inf_mass + lost, 1.0),
        atom_inf=jnp.minimum(pld.atom_inf + lost, 1.0),
        truncated_mass=pld.truncated_mass + lost,
    )


__all__ = ["deep_tail"]
