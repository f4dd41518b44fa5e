r"""The scale search below the plain FFT's round-off floor: a root on the tilted composition.

At a target ``delta`` below :data:`dpjax.accounting.pld.engine.TILT_BELOW` the plain
composition's answer is limited by its float64 round-off (about ``1e-16`` of the composed
pmf's peak) and, below that, by a Chernoff bound; the scale it certifies is then the
tail bound's, not the exact one.  :func:`refine` runs a second root search on
``x = log scale`` whose objective is the *tilted* composition's certified ``log delta``
(:mod:`dpjax.accounting.pld.tilted`, the tilts an ``epsilon`` query of
:func:`dpjax.accounting.pld.engine.profile` picks; jitted, vmapped over the rows, ``K``
traced), bracketed by the plain root (or the caller's upper end) above:

.. math:: F(x) = \log(-\ell) - \log\big(-\log \delta^{\text{tilt}}_K(\epsilon; e^x)\big),
          \qquad \delta^{\text{tilt}}_K(\epsilon) \le m + e^{Kc - \lambda l_k}(1 + \rho)
          \big[(1 - e^{-t}) S_k + e^{-t} D_k + r \|b^{j-k}\|_2\big]

(the certified tilted hockey stick; exponential tilting as in Sommer, Meiser & Mohammadi
2019, "Privacy loss classes: the central limit theorem in differential privacy", PoPETs
2019).  **Certified and fail-closed**: each root is re-evaluated by
:func:`dpjax.accounting.pld.engine.profile` (the accounting :func:`dpjax.account` runs)
and kept only where that certifies it (``delta(epsilon) <= delta (1 - MARGIN)``; two
slightly larger scales are tried next); otherwise the plain stage's answer stands.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.accounting.pld import engine
from dpjax.accounting.pld.plan import tilt_level, tilted_sizes
from dpjax.calibration.scale_kernels import tilted_search_kernel
from dpjax.certificate import MARGIN
from dpjax.numerics import Status, float64_kernel

#: Relative steps above a tilted root tried (after the root itself) when the profile does
#: not certify it (its grid sizes follow the exact scale, the search's the bracket's end).
RETRY_STEPS = (1e-6, 1e-4)


class _NoSizes(Exception):
    """The tilted composition does not fit the grid cap at this scale."""


def _tilted_sizes(level: int):
    """``sizes(rows, index, scales, h)`` of the tilted composition resolving ``10^level``,
    shared through ``rows.plan`` with later stages and calls (as the plain sizes are)."""

    def sizes(rows, index, scales, h):
        key = ("tilted", h, level)
        scale = float(np.min(scales))
        if key in rows.plan and rows.plan[key][0] <= scale:
            return rows.plan[key][1]
        new = tilted_sizes(
            rows.noise_fn, scales, rows.shape[index], rows.sensitivity, rows.sampling_rate,
            rows.compositions, h, level * math.log(10.0),
        )
        if new is None:
            raise _NoSizes
        rows.plan[key] = (scale, new)
        return new

    return sizes


@float64_kernel
def certified_step(
    noise_fn, scale, shape, sensitivity, epsilon, delta, compositions, sampling_rate, h,
    level,
):
    r"""``(step, scale (1 + step), log delta)`` at the least ``step`` of ``0`` and
    :data:`RETRY_STEPS` at which the profile certifies ``scale``, or ``None``.

    .. math:: s' = \min\{s (1 + t) : t \in \{0\} \cup \text{RETRY\_STEPS},\
              \log\hat\delta_{s (1 + t)}(\epsilon) \le \text{level}\}

    The profile is :func:`dpjax.accounting.pld.engine.target_profile` (below ``TILT_BELOW``
    the tilted composition alone, resolving the target ``delta``; the plain grid, floored by
    its round-off there, is not composed); :func:`dpjax.accounting.pld.engine.profile` at
    the returned scale then reads it.  A tilted root's grid sizes follow the bracket's end
    in the search and the exact scale here, so the root itself may miss by a hair.

    Args:
      noise_fn, scale, shape, sensitivity: the family, the root's scale, its shape and the
        per-use sensitivity.
      epsilon, delta: the target (``delta``: the tilted composition's level).
      compositions, sampling_rate, h: ``K``, ``q`` (or ``None``) and the bin width.
      level: the certified ``log delta`` to meet (``log(delta (1 - MARGIN))``).

    Returns:
      ``(step, scale, log delta)``, or ``None`` where no step certifies.
    """
    for step in (0.0, *RETRY_STEPS):
        s = scale * (1.0 + step)
        log_d = float(np.asarray(engine.target_profile(
            noise_fn, s, shape, sensitivity, epsilon, delta, compositions, sampling_rate, h,
        )).reshape(-1)[0])
        if log_d <= level:
            return step, s, log_d
    return None


def _certify(rows, i: int, scale: float, h: float):
    """``(scale, log delta)`` at row ``i``'s target by :func:`certified_step`, or ``None``."""
    delta = math.exp(rows.level[i] - math.log1p(-MARGIN))  # the target (the level's delta)
    got = certified_step(
        rows.noise_fn, scale, rows.shape[i], rows.sensitivity, rows.eps[i], delta,
        rows.compositions, rows.sampling_rate, h, rows.level[i],
    )
    return None if got is None else got[1:]


@float64_kernel
def refine(rows, final, lo, hi, h: float, tol: float, search, recheck: bool = True) -> None:
    r"""Improve ``final`` (in place) by the tilted root where the target ``delta`` is below
    :data:`~dpjax.accounting.pld.engine.TILT_BELOW`.

    Rows are grouped by :func:`dpjax.accounting.pld.plan.tilt_level` of their target (one
    static size, one compiled search per group); each group is searched on ``[lo, top]``,
    ``top`` the plain root where certified (else ``hi``), widened as the plain search is
    (``search``: :func:`dpjax.calibration.scale_search._bracketed_search`).  A root is kept
    where it is below the plain answer and :func:`_certify` accepts it.

    Args:
      rows: the search's ``_Rows``.
      final: its :class:`dpjax.numerics.Root` after the plain stage (updated in place).
      lo, hi: the brackets after the plain stage.
      h: bin width.
      tol: tolerance on ``log scale``.
      search: the bracketed search ``(rows, index, lo, hi, h, tol, kernel, sizes)``.
      recheck: re-check each root by :func:`_certify` (``False``: a root is kept on its own
        certified tilted evaluation, and the caller re-checks what it returns; each
        :func:`_certify` compiles for its row's own sizes).
    """
    if not float(rows.compositions) > 1.0:
        return
    # delta = 0 (log level -inf: pure DP) has no tail for a tilt to resolve: the plain answer
    idx = np.flatnonzero(np.isfinite(rows.level) & (rows.level < math.log(engine.TILT_BELOW)))
    if not idx.size:
        return
    plain_ok = (final.status == Status.OPTIMAL) & (final.aux[:, 0] <= rows.level)
    top = np.where(plain_ok, final.aux[:, 1], hi)
    low = np.minimum(lo, top / 1.25)
    levels = np.array([tilt_level(v) for v in rows.level[idx]])
    for level in np.unique(levels):
        grp = idx[levels == level]
        try:
            root, _, _ = search(
                rows, grp, low, top, h, tol, tilted_search_kernel, _tilted_sizes(int(level))
            )
        except _NoSizes:
            continue
        for j, i in enumerate(grp):
            scale = root.aux[j, 1]
            if root.status[j] != Status.OPTIMAL or not np.isfinite(scale):
                continue
            if plain_ok[i] and not scale < final.aux[i, 1]:
                continue
            if recheck:
                got = _certify(rows, i, float(scale), h)
            else:
                log_d = float(root.aux[j, 0])
                got = (float(scale), log_d) if log_d <= rows.level[i] else None
            if got is None or (plain_ok[i] and not got[0] < final.aux[i, 1]):
                continue
            final.aux[i] = [got[1], got[0]]
            final.good[i] = math.log(got[0])
            final.status[i] = Status.OPTIMAL
