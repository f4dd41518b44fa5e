r"""Tilted queries of an event ledger's leaf table (the small-delta side of ``PLDAccountant``).

A leaf table is ``[({direction: PLD}, count), ...]``
(:func:`~dpjax.accounting.events.plds.leaf_table`).  Below ``delta = 1e-7``
:class:`~dpjax.accounting.PLDAccountant` answers through these:

* :func:`tilted_answer`: the upper end, the tilted heterogeneous composition of
  :mod:`~dpjax.accounting.pld.tilted.compose` (one tilt for every leaf, one FFT product,
  untilted once), the worse direction;
* :func:`tilted_lower`: the lower end of ``bracket``, the tilted *optimistic* product of
  :func:`~dpjax.accounting.bracket.tilted.product_lower_kernel`, the larger direction;
* :func:`log_chernoff`: the Chernoff bound of the summed discretised moments
  (:func:`~dpjax.accounting.pld.tail_bounds.log_delta_chernoff`), which only sizes windows.

Callers enable x64 (:class:`~dpjax.accounting.PLDAccountant` does).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from dpjax.accounting.bracket.tilted import product_lower_kernel
from dpjax.accounting.events.plds import DIRECTIONS
from dpjax.accounting.pld.tail_bounds import log_delta_chernoff
from dpjax.accounting.pld.tilted.compose import product_size, tilted_product_answer
from dpjax.numerics import float64_kernel


def _parts(table, direction):
    """``(plds, counts)`` of the leaves that have ``direction``."""
    parts = [(plds[direction], count) for plds, count in table if direction in plds]
    return [p for p, _ in parts], [c for _, c in parts]


@float64_kernel
def log_chernoff(table, relation: str, epsilon: float) -> float:
    r"""The larger direction's Chernoff bound on ``log delta(epsilon)`` of the finite part.

    .. math:: \log\delta(\epsilon) \le \min_{\lambda > 0} \sum_j K_j \log M_j(\lambda)
              - \lambda\epsilon + \log c(\lambda)

    (Canonne, Kamath & Steinke 2020) on the leaves' discretised moments.

    Args:
      table: the leaf table.
      relation: the neighbouring relation.
      epsilon: ``epsilon >= 0``.

    Returns:
      The bound (``inf`` for ``nan``).
    """
    out = -math.inf
    for d in DIRECTIONS[relation]:
        moments = [k * np.asarray(p[d].log_mgf) for p, k in table if d in p]
        if moments:
            out = max(out, float(log_delta_chernoff(sum(moments), epsilon)))
    return out if not math.isnan(out) else math.inf


@float64_kernel
def tilted_answer(
    table, relation: str, x: float, by_delta: bool, log_level: float, either_kind: bool = False
) -> float:
    """The worse direction's answer of the tilted heterogeneous composition.

    ``epsilon`` at ``delta = x`` (``by_delta``) or ``log delta`` at ``epsilon = x``, the
    window resolving ``delta ~ e^{log_level}``
    (:func:`~dpjax.accounting.pld.tilted.compose.tilted_product_answer`).

    Args:
      table: the leaf table.
      relation: the neighbouring relation.
      x: the ``delta`` or the ``epsilon`` queried.
      by_delta: which one ``x`` is.
      log_level: ``log`` of the delta level the window resolves.
      either_kind: run the program both query kinds share (an epsilon and its
        certificate's re-check), as in ``tilted_product_answer``.

    Returns:
      The answer, or ``nan`` where the tilted path cannot run (the plain answer stands).
    """
    answers = []
    for d in DIRECTIONS[relation]:
        ps, counts = _parts(table, d)
        if ps:
            got = tilted_product_answer(ps, counts, [x], by_delta, log_level, either_kind)
            answers.append(float(got[0]))
    if not answers or any(math.isnan(a) for a in answers):
        return math.nan
    return max(answers)


@float64_kernel
def tilted_lower(table, relation: str, delta: float) -> float:
    """The larger direction's certified lower end of ``epsilon(delta)``, tilted.

    The tilted optimistic product
    (:func:`~dpjax.accounting.bracket.tilted.product_lower_kernel`): valid far below the
    plain grid's ~1e-10 floor.

    Args:
      table: the *optimistic* leaf table.
      relation: the neighbouring relation.
      delta: ``delta`` in ``(0, 1)``.

    Returns:
      The lower end, ``0`` where it cannot run.
    """
    out = 0.0
    for d in DIRECTIONS[relation]:
        ps, counts = _parts(table, d)
        if not ps:
            continue
        counts = [float(c) for c in counts]
        size = product_size(ps, counts, math.log(delta))
        if size is None:
            continue
        got = product_lower_kernel(tuple(ps), jnp.asarray(counts), jnp.asarray([delta]), size=size)
        got = float(np.asarray(got)[0])
        out = max(out, 0.0 if math.isnan(got) else got)
    return out
