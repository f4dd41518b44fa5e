r"""The geometric tail of the spherical mechanism: its sums, and where to truncate the rows.

Past the last free shell ``N`` the density is ``p_i = p_N r^(i-N)`` (eq. (17)
of spherical-kl-optimal-mechanisms), so the mass and cost constraints
(eqs. 29-30) carry the geometric sums ``sum_{t>=1} r^t v_{N+t}`` and
``sum_{t>=1} r^t c_{N+t}``.  Their terms ``r^t (N+t)^(m-1)`` grow until
``N + t ~ (m-1) / (-ln r)`` before they decay: the sums are truncated
adaptively (a fixed truncation is wrong at large ``m``).  Host functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpjax.numerics import logsumexp_host
from dpjax.spherical.shells import log_diff_powers, log_shell_volume_at


def log_tail_sum(log_terms_fn: Callable, log_r: float, start: int, log_rel_tol: float = -80.0,
                 chunk: int = 4096, max_terms: int = 10**8) -> tuple[float, int]:
    r"""``log sum_{t >= 1} r^t a_{start + t}``, summed adaptively (``log a_i = log_terms_fn(i)``).

    Terms ``r^t (start+t)^(m-1)`` grow until ``start + t ~ (m-1)/(-ln r)`` and
    then decay geometrically: summation stops once past the peak a whole
    chunk lies below ``exp(log_rel_tol)`` times the running sum.

    Args:
      log_terms_fn: ``i -> log a_i`` for an integer array ``i``.
      log_r: ``log r < 0``.
      start: the index ``N`` the sum starts after.
      log_rel_tol: log of the relative size of a negligible chunk.
      chunk: terms per chunk.
      max_terms: give up after this many terms.

    Returns:
      ``(log sum, number of terms used)``.

    Raises:
      ValueError: the sum did not converge within ``max_terms``.
    """
    total = -np.inf
    t0 = 1
    while t0 < max_terms:
        t = np.arange(t0, t0 + chunk)
        lt = t * log_r + log_terms_fn(start + t)
        total = np.logaddexp(total, logsumexp_host(lt))
        if lt[-1] < lt[0] and lt.max() - total < log_rel_tol:
            return float(total), int(t0 + chunk - 1)
        t0 += chunk
    raise ValueError("geometric tail did not converge (r too close to 1?)")


def tail_rows(m: int, n: int, N: int, r: float, log_rel_tol: float = -32.0,
              band: int | None = None) -> int:
    r"""Rows ``M``: tail shells past ``M - n`` have mass ``< e^log_rel_tol`` of shell ``N``'s each.

    Mass of shell ``N + t`` relative to shell ``N``: ``r^t v_{N+t} / v_N``.  The
    objective is summed explicitly over rows ``< M`` (plus ``n`` for the band);
    what is left out is bounded by that mass times ``n |log r|``.

    Args:
      m: dimension.
      n: shells per unit radius.
      N: last free shell.
      r: tail ratio.
      log_rel_tol: log of the relative mass of the first shell left out.
      band: the band half-width kept (default ``n``, the whole band).
    """
    log_r = math.log(r)
    lv = lambda i: log_diff_powers(i, m)  # noqa: E731
    base = lv(np.array([N]))[0]
    _, terms = log_tail_sum(lambda i: lv(i) - base, log_r, N, log_rel_tol, chunk=256)
    # find the exact cut: first t past the peak with log term < tol
    t = np.arange(1, terms + 1)
    lt = t * log_r + lv(N + t) - base
    peak = int(np.argmax(lt))
    below = np.nonzero((np.arange(t.size) > peak) & (lt < log_rel_tol))[0]
    cut = int(t[below[0]]) if below.size else int(t[-1])
    # + band: the band partners (|j - i| <= band) of every row that carries mass must be present
    return N + 1 + cut + (n if band is None else int(band))


def tail_sums(m: int, n: int, N: int, r: float, log_cost_at: Callable) -> tuple[float, float]:
    r"""``log sum_{t>=1} r^t v_{N+t}`` and ``log sum_{t>=1} r^t c_{N+t}`` (eqs. 29-30, tail folded).

    Args:
      m: dimension.
      n: shells per unit radius.
      N: last free shell.
      r: tail ratio.
      log_cost_at: ``i -> log c_i`` at shell indices (e.g. ``Coefficients.log_c_fn``).
    """
    lr = math.log(r)
    log_tv, _ = log_tail_sum(lambda i: log_shell_volume_at(m, n, i), lr, N, -60.0)
    log_tc, _ = log_tail_sum(log_cost_at, lr, N, -60.0)
    return log_tv, log_tc


__all__ = ["log_tail_sum", "tail_rows", "tail_sums"]
