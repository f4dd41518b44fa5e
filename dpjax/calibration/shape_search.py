r"""The least-variance (shape, scale) of a two-parameter family meeting a target, via the engine.

Structure, not brute force: for every shape of a grid the least scale is found by
:func:`dpjax.calibration.scale_search.calibrate_scale`, the variance is minimised over
the grid and the grid refined around the best point (the optimum may sit on a kink of
the variance as a function of the shape, where two privacy constraints bind together);
finalists are settled at the requested resolution.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from dpjax.accounting.pld import engine
from dpjax.calibration.scale_search import COARSEN, calibrate_scale
from dpjax.calibration.scale_tilted import certified_step
from dpjax.certificate import log_target
from dpjax.numerics import float64_kernel


class ShapeCalibration(NamedTuple):
    """Per target (arrays of the targets' shape): the least certified variance found.

    Attributes:
      shape, scale: the parameters.
      variance: ``variance_fn(scale, shape)`` (``inf`` where nothing was certified).
      delta_at: the engine's certified ``delta(epsilon)`` at the parameters.
      certified: ``variance`` is finite.
      grid: rows ``(target index, shape, scale, variance, bin width)`` of the search.
    """

    shape: np.ndarray
    scale: np.ndarray
    variance: np.ndarray
    delta_at: np.ndarray
    certified: np.ndarray
    grid: np.ndarray  # rows (target index, shape, scale, variance, bin width) of the search


@float64_kernel
def calibrate_shape_scale(
    noise_fn: Callable,
    variance_fn: Callable,
    shapes,
    sensitivity: float,
    epsilon,
    delta,
    compositions: int,
    upper_fn: Callable,
    bin_width: float = 1e-4,
    tolerance: float = 1e-7,
    refine: int = 9,
    finalists: int = 5,
    coarsen: int = COARSEN,
    sampling_rate: float | None = None,
    lower_ratio: float = 4.0,
    beat=None,
) -> ShapeCalibration:
    r"""Least-variance ``(shape, scale)`` meeting each ``(epsilon, delta)`` after ``K`` uses.

    A monotone search on the scale and a search only over the shape:

    .. math:: \min_b\ \mathrm{Var}(s^*(b), b), \qquad
              s^*(b) = \min\{s : \delta_K(\epsilon; s, b) \le \delta (1 - \mathrm{MARGIN})\},

    ``delta_K`` the certified profile of the PLD engine (Sec. V-B / Algorithm 2 of
    flipped-huber-mechanism for flipped Huber).  For every shape of a grid the least scale
    is found by the engine's certified root finder, the variance
    ``variance_fn(scale, shape)`` is minimised over the grid, and the grid is refined
    ``refine`` points between the best point's neighbours (the optimum may sit on a kink
    of the variance as a function of the shape).  That survey runs on a grid ``coarsen``
    times coarser (certified there too, only looser); the ``finalists - 1`` best shapes and
    the largest one are then calibrated at ``bin_width`` in a bracket around their survey
    scales, and the least certified variance of all is returned.  Below ``TILT_BELOW`` the
    tilted refinement of :func:`~dpjax.calibration.scale_search.calibrate_scale` runs on
    the finalists only (the survey ranks shapes on its plain roots; with ``coarsen = 1``
    the finalists are settled for it, in a bracket around their survey roots at the same
    bin width; with no finalists it runs on every shape surveyed), their roots kept on
    their own certified tilted evaluations; the winner is then re-evaluated by
    :func:`dpjax.accounting.pld.engine.profile` (the accounting :func:`dpjax.account` runs)
    and kept only where that certifies it, else the next best row (fail closed).  Every
    stage is one batched kernel over (targets x shapes), so a table of targets costs a
    few compilations, not a few per target.

    Args:
      noise_fn: ``noise_fn(scale, shape)`` -> a noise family.
      variance_fn: ``variance_fn(scale, shape)`` -> the variance (host arrays).
      shapes: the shape grid.
      sensitivity: the sensitivity ``Delta``.
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array).
      compositions: number of uses ``K``.
      upper_fn: ``upper_fn(shapes)`` (one row of shapes per target) -> scales expected to
        be feasible (widened 3x when they are not).
      lower_ratio: each shape's survey bracket is ``[upper / lower_ratio, upper]`` (widened
        4x down where the root is below it).  The grids are sized for the bracket's low end,
        so a tighter ratio means shorter grids and FFTs, and a miss one more search on
        re-planned (larger) grids.
      beat: per target (broadcast), the variance of a member the caller certifies by other
        means (e.g. the Gaussian member in closed form), or ``None``: a row whose variance is
        not below it cannot win, so it is not re-checked and not returned (the target comes
        back uncertified, ``inf`` variance, where no row beats it).
      bin_width: bin width the result is certified on.
      tolerance: relative tolerance on the scale.
      refine: number of points of the refined grid.
      finalists: number of shapes settled at ``bin_width``.
      coarsen: bin-width factor of the survey.
      sampling_rate: Poisson subsampling rate ``q`` of every use, or ``None`` (the engine's
        add-or-remove pair, worse direction reported).

    Returns:
      A :class:`ShapeCalibration`.
    """
    eps, dl = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    out_shape = eps.shape
    eps, dl = eps.ravel(), dl.ravel()
    targets = np.arange(eps.size)
    rows = []
    plan: dict = {}

    # finalists are settled after a coarser survey, and after a survey at bin_width too where
    # a target is below TILT_BELOW: the tilted stage (a full tilted search per row, on grids
    # sized for its bracket) then runs on the finalists, not on every shape surveyed
    tilted = compositions > 1 and bool(np.any(dl < engine.TILT_BELOW))
    settle = finalists > 0 and (coarsen > 1 or tilted)

    def run(bs, h, stages, up=None, low=None, tilt=True):
        """Calibrate the shapes ``bs`` (targets x m) at bin width ``h``; their variances.

        Tilted roots (``delta < TILT_BELOW``) are kept on their own certified tilted
        evaluations and flagged: the winner is re-checked by the engine's profile
        (:func:`_certified_best`: one full profile, not one per shape)."""
        bs = np.asarray(bs, float)
        e = np.broadcast_to(eps[:, None], bs.shape)
        d = np.broadcast_to(dl[:, None], bs.shape)
        up = np.asarray(upper_fn(bs), float) if up is None else up
        low = up / lower_ratio if low is None else low
        res = calibrate_scale(
            noise_fn,
            bs,
            sensitivity,
            e,
            d,
            compositions,
            sampling_rate,
            h,
            upper=up,
            lower=low,
            tolerance=tolerance,
            fallback_upper=3.0 * up,
            coarsen=stages,
            plan=plan,
            pow2_sizes=True,
            tilt=tilt,
            recheck=False,
        )
        var = np.asarray(variance_fn(res.scale, bs), float)
        var = np.where(res.certified, var, np.inf)
        t = np.broadcast_to(targets[:, None], bs.shape)
        rows.extend(
            zip(
                t.ravel(),
                bs.ravel(),
                res.scale.ravel(),
                var.ravel(),
                res.delta_at.ravel(),
                np.full(bs.size, h),
                # tilted roots not re-checked by the search: re-checked if they win
                (np.broadcast_to(d, bs.shape).ravel() < engine.TILT_BELOW)
                & (tilt and compositions > 1),
                strict=True,
            )
        )
        return var

    survey_h = bin_width * max(coarsen, 1)
    grid = np.broadcast_to(np.asarray(shapes, float), (eps.size, len(shapes)))
    # the survey only ranks shapes when finalists are settled after it: no tilted stage
    # there (its plain roots are certified, only looser below TILT_BELOW), the finalists
    # get it.  Without finalists the survey's tilted roots are kept on their own certified
    # evaluations, and only the winner is re-checked by the engine's profile below (one
    # re-check, not one per shape: each is a full profile on the row's own grid)
    var = run(grid, survey_h, 1, tilt=not settle)
    if refine:
        i = np.argmin(var, axis=1)
        lo = grid[targets, np.maximum(i - 1, 0)]
        hi = grid[targets, np.minimum(i + 1, grid.shape[1] - 1)]
        run(
            lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, refine + 2)[1:-1], survey_h, 1,
            tilt=not settle,
        )
    table = np.array(rows, float)
    if settle:
        # the finalists at bin_width, bracketed by their survey scales (certified on the
        # survey's grid, coarser or the same, so nearly feasible here): one search, no
        # coarse stage, then the tilted one below TILT_BELOW
        best = np.empty((eps.size, finalists, 2))
        for k in targets:
            mine = table[(table[:, 0] == k) & np.isfinite(table[:, 3])]
            if not len(mine):
                mine = table[table[:, 0] == k]
            order = np.argsort(mine[:, 3], kind="stable")
            picks = mine[order[: finalists - 1]]
            # and the largest shape: the coarse grid's rounding (~K h / eps relative) is
            # largest for losses concentrated on atoms (Laplace-like ends of a family), so
            # the survey can rank that end too low
            end = mine[mine[:, 1] == np.max(mine[:, 1])][:1]
            best[k] = np.resize(np.concatenate([picks, end])[:, 1:3], (finalists, 2))
        scales = best[..., 1]
        # their tilted roots kept on their own certified evaluations: only the winner is
        # re-checked by the engine's profile below (one re-check, not one per finalist)
        run(best[..., 0], bin_width, 1, up=scales * (1 + 1e-6), low=scales * (1 - 2e-2))
        table = np.array(rows, float)
    pick = np.empty((eps.size, 7))
    beat = np.broadcast_to(np.inf if beat is None else np.asarray(beat, float), out_shape).ravel()
    for k in targets:
        pick[k] = _certified_best(
            table[table[:, 0] == k], noise_fn, sensitivity, eps[k], dl[k], compositions,
            sampling_rate, beat[k],
        )
    shape_, scale_, var_, dat_ = (pick[:, j].reshape(out_shape) for j in (1, 2, 3, 4))
    return ShapeCalibration(
        shape=shape_,
        scale=scale_,
        variance=var_,
        delta_at=dat_,
        certified=np.isfinite(var_),
        grid=table[np.lexsort((table[:, 5], table[:, 1], table[:, 0]))][:, [0, 1, 2, 3, 5]],
    )


def _certified_best(mine, noise_fn, sensitivity, eps, delta, compositions, sampling_rate=None,
                    beat=np.inf):
    """The least-variance row ``(target, shape, scale, variance, delta_at, h, unchecked)`` of
    ``mine`` whose search evaluation certifies it (``unchecked = 0``) or, for a tilted root
    the search did not re-check (``unchecked = 1``), that the profile certifies at its bin
    width (:func:`dpjax.accounting.pld.engine.target_profile`, below ``TILT_BELOW`` the
    tilted composition alone)
    (``delta(eps) <= delta (1 - MARGIN)``, ``delta_at`` set to that re-evaluation), at its
    scale or one :data:`~dpjax.calibration.scale_tilted.RETRY_STEPS` above (the variance
    scaled with it, ``variance ∝ scale^2``); rows it does not certify are dropped (fail
    closed: ``inf`` variance when none is left), and so are rows whose variance is not below
    ``beat`` (a member the caller certifies otherwise: they cannot win, and a re-check is a
    full profile)."""
    level = float(np.asarray(log_target(delta)))
    for row in mine[np.argsort(mine[:, 3], kind="stable")]:
        if not np.isfinite(row[3]) or row[3] >= beat:
            break
        if not row[6]:
            return row
        got = certified_step(noise_fn, row[2], row[1], sensitivity, eps, delta, compositions,
                             sampling_rate, row[5], level)
        if got is not None:
            step, scale, log_d = got
            var = row[3] * (1.0 + step) ** 2
            return np.array([row[0], row[1], scale, var, np.exp(log_d), row[5], 0.0])
    out = mine[int(np.argmin(mine[:, 3]))].copy()
    out[3] = np.inf
    return out
