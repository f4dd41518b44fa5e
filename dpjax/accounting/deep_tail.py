r"""Leaf grids deep enough for a composed ``delta`` far below ``1e-40`` (down to ``1e-300``).

:class:`~dpjax.accounting.PLDAccountant` answers ``delta < 1e-7`` through the tilted
composition (:mod:`.pld.tilted.compose`); its leaves' pairs are cut where each leaves
:func:`deep_tail` of mass outside (sent to ``+infinity`` by the pessimistic discretisation,
Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the dots: tighter discrete
approximations of privacy loss distributions", arXiv:2207.04380), and
:func:`.pld.underflow.charge_underflow` charges what such a deep grid may lose to float64
underflow.
"""

from __future__ import annotations

import math

from dpjax.accounting.pld.plan import tilt_level
from dpjax.numerics import float64_kernel


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


__all__ = ["deep_tail"]
