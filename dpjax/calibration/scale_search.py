r"""The least scale of a noise family meeting a target after ``K`` uses, through the PLD engine.

Calibration is a root search on ``x = log scale`` of a decreasing function whose
evaluation is a whole PLD composition (:mod:`dpjax.accounting.pld.engine`): one jitted,
vmapped kernel over targets (or noise shapes) with the searches of
:mod:`dpjax.numerics.roots` inside ``jit``.  :func:`calibrate_scale` runs it in named
steps, on host arrays of rows (one row per target):

1. **plan the sizes** (:func:`_sizes`): static grid and FFT sizes for the lowest scale of
   the bracket, shared between stages and calls through a ``plan`` dict; every later
   evaluation at a larger scale reuses them (one compiled program per search);
2. **search** (:func:`_bracketed_search`): Illinois on ``[lower, upper]`` at the requested
   bin width; a row whose bracket misses the root is widened (``lower / 4``, or the
   fallback upper end) and searched again, at most :data:`MAX_WIDENINGS` times;
3. **tilted refinement** (:func:`dpjax.calibration.scale_tilted.refine`), only for targets
   ``delta < TILT_BELOW = 1e-7``: a second root below the first on the *tilted*
   composition's ``log delta``, kept where the engine's profile certifies it.

Compilation, not evaluation, dominates a first call (a composition costs milliseconds,
compiling it seconds), so the default is that single stage: one compiled program.  With
``coarsen > 1`` (many rows, a warm compilation cache) step 2 is preceded by a **coarse
search** at a ``coarsen`` times wider bin (to ``COARSE_TOLERANCE``) and a **warm settle**
(:func:`_warm_settle`: four evaluations at the requested bin width from the coarse root
and slope, :func:`dpjax.numerics.warm_bracket`); step 2 then only searches the rows the
settle left unresolved.  That costs two or three compiled programs, and fewer
evaluations on the fine grid.

The certificate is the engine's own evaluation at the returned scale
(:mod:`dpjax.certificate`).  The jitted, vmapped search kernels live in
:mod:`dpjax.calibration.scale_kernels`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dpjax import _batching
from dpjax._batching import call_padded, padded_size
from dpjax.accounting.pld.engine import STATIC_ARGNAMES, scalar_args
from dpjax.accounting.pld.plan import Sizes, sizes_for
from dpjax.calibration import scale_tilted
from dpjax.calibration.scale_kernels import search_kernel, warm_kernel
from dpjax.certificate import log_target
from dpjax.numerics import Root, Status, float64_kernel
from dpjax.numerics.export_cache import call_cached

#: Relative margin on delta of the engine's search level (see :func:`calibrate_scale`).
SEARCH_MARGIN = 1e-6


#: Bin-width factor of the coarse stage of :func:`calibrate_scale` when one is asked for
#: (``coarsen=COARSEN``; the default is a single stage: one compiled program).
COARSEN = 16


#: Tolerance (on ``log scale``) of the coarse stage of :func:`calibrate_scale`.
COARSE_TOLERANCE = 1e-5


#: Least number of rows :func:`_sizes` plans with (cycled): one sizing program for the
#: stages of a search (a survey of 16 shapes, 8 finalists) instead of one per row count.
SIZING_ROWS = 16


#: How many times a row whose bracket misses the root is widened and searched again.
MAX_WIDENINGS = 6


#: Grid and FFT points of one evaluation (over the padded rows) above which a widened
#: search runs on its own rows' power of two rather than padded to the first search's batch:
#: there an evaluation costs more than compiling a kernel for fewer rows (2 rows of 16 at
#: an FFT of 2^20 points: 18 CPU s padded, a few unpadded).
RETRY_UNPADDED_POINTS = 2**22


class ScaleCalibration(NamedTuple):
    """Result of :func:`calibrate_scale` (NumPy arrays shaped like the broadcast targets).

    Attributes:
      scale: the least certified scale found (``upper`` where none was found).
      delta_at: the engine's ``delta(epsilon)`` at ``scale`` (the certificate).
      certified: ``status == OPTIMAL`` and ``delta_at <= delta (1 - MARGIN)``.
      status: per-target :class:`dpjax.numerics.Status` of the last search stage.
    """

    scale: np.ndarray
    delta_at: np.ndarray
    certified: np.ndarray
    status: np.ndarray


@dataclass(frozen=True)
class _Rows:
    """The flat, broadcast targets of one :func:`calibrate_scale` call, and its settings."""

    noise_fn: Callable
    shape: np.ndarray
    eps: np.ndarray
    level: np.ndarray  # the certified level log(delta (1 - MARGIN))
    search_level: np.ndarray  # SEARCH_MARGIN below it
    upper: np.ndarray
    fallback_upper: np.ndarray | None
    sensitivity: object
    sampling_rate: object
    compositions: object
    scalars: tuple
    tail: float
    shard: bool
    plan: dict
    pow2_sizes: bool

    @property
    def size(self) -> int:
        """The number of rows."""
        return self.eps.size


def _sizes(rows: _Rows, index: np.ndarray, scales: np.ndarray, h: float) -> Sizes:
    """Step 1: static grid / FFT sizes at bin width ``h`` valid for ``scales`` of the rows
    ``index``.  Sizes planned for smaller scales cover these (wider loss ranges): reuse
    them, one compiled kernel instead of one per stage (sizes decide tightness, not
    soundness); ``pow2_sizes`` rounds new sizes up to powers of two."""
    key = ("plain", h, rows.tail)  # same layout as the tilted stage's keys (sortable together)
    scale = float(np.min(scales))
    if key in rows.plan and rows.plan[key][0] <= scale:
        return rows.plan[key][1]
    # the rows cycled to at least SIZING_ROWS: the sizing program (compiled per row count)
    # is shared by every stage (duplicates do not change the maximum over rows)
    m = padded_size(len(index), SIZING_ROWS)
    new = sizes_for(
        rows.noise_fn,
        np.resize(np.asarray(scales, float).ravel(), m),
        np.resize(rows.shape[index], m),
        rows.sensitivity,
        rows.sampling_rate,
        rows.compositions,
        h,
        rows.tail,
    )
    if rows.pow2_sizes:  # a coarser ladder of sizes: more calls share one compiled kernel
        new = Sizes(padded_size(new.grid), new.fft and padded_size(new.fft), rows.tail)
    rows.plan[key] = (scale, new)
    return new


def _run(kernel, rows: _Rows, index, a, b, h, tol, sizes: Sizes, pad_to: int = 0) -> Root:
    """One batched search: ``kernel`` on the rows ``index`` (host arrays ``a``, ``b`` indexed
    by row), padded to at least ``pad_to`` rows to reuse a kernel compiled for a larger
    batch, sharded over devices (:func:`dpjax._batching.shard`); a NumPy :class:`Root`."""
    k = len(index)
    index = np.concatenate([index, np.repeat(index[-1:], max(pad_to - k, 0))])
    batch, _ = _batching.shard(
        rows.shape[index], rows.eps[index], rows.search_level[index], a[index], b[index],
        use_devices=rows.shard,
    )
    out = call_cached(  # export cache: a warm process loads the compiled search
        kernel, batch[0], *rows.scalars, batch[1], batch[2], batch[3], batch[4], tol,
        static_argnames=STATIC_ARGNAMES,
        noise_fn=rows.noise_fn,
        bin_width=h,
        sizes=sizes,
        subsampled=rows.sampling_rate is not None,
    )
    return Root(*(np.asarray(x)[:k] for x in out))


def _store(into: Root, where: np.ndarray, root: Root) -> None:
    """Write the fields of ``root`` into the rows ``where`` of ``into`` (in place)."""
    for name, value in root._asdict().items():
        getattr(into, name)[where] = value


def _widen(rows: _Rows, index, root: Root, lo, hi):
    """Which rows of ``index`` missed the root, and their widened brackets.

    ``BRACKET_TOO_SMALL`` (feasible at ``lo``): ``lo / 4``.  ``INFEASIBLE`` (infeasible at
    ``hi``): the fallback upper end, if there is one and it is larger.
    """
    too_small = root.status == Status.BRACKET_TOO_SMALL
    too_big = root.status == Status.INFEASIBLE
    if rows.fallback_upper is None:
        too_big &= False
    else:
        too_big &= hi[index] < rows.fallback_upper[index]
        hi[index] = np.where(too_big, rows.fallback_upper[index], hi[index])
    lo[index] = np.where(too_small, lo[index] / 4.0, lo[index])
    return too_small | too_big


def _bracketed_search(rows: _Rows, index, lo, hi, h, tol, kernel=search_kernel, sizes=_sizes):
    """Steps 2 and 4: Illinois at bin width ``h`` on ``[lo, hi]`` to ``tol`` for the rows
    ``index``; rows whose bracket misses the root are widened (:func:`_widen`) and searched
    again, at most :data:`MAX_WIDENINGS` times, padded to the first search's batch (its
    compiled kernel) unless an evaluation of that batch exceeds
    :data:`RETRY_UNPADDED_POINTS` grid and FFT points.

    ``kernel`` and ``sizes(rows, index, scales, h)`` default to the plain engine's
    (:func:`_tilted_stage` passes the tilted ones).

    Returns ``(root, lo, hi)``: the roots of the rows ``index`` and the brackets after
    widening (copies; later stages start from them).
    """
    lo, hi = lo.copy(), hi.copy()
    out = None
    todo = index
    for _ in range(1 + MAX_WIDENINGS):
        planned = sizes(rows, todo, lo[todo], h)
        pad = padded_size(len(index))
        if (planned.grid + planned.fft) * pad > RETRY_UNPADDED_POINTS:
            pad = padded_size(len(todo))  # execution-bound: a kernel for fewer rows
        root = _run(kernel, rows, todo, lo, hi, h, tol, planned, pad)
        if out is None:
            out = Root(*(np.array(x) for x in root))
        else:
            _store(out, np.searchsorted(index, todo), root)
        missed = _widen(rows, todo, root, lo, hi)
        if not np.any(missed):
            break
        todo = todo[missed]
    return out, lo, hi


def _unresolved(n: int) -> Root:
    """``n`` rows not yet searched (``Status.MAX_ITERATIONS``, ``nan`` ends)."""
    return Root(
        good=np.full(n, np.nan),
        aux=np.full((n, 2), np.nan),
        bad=np.full(n, np.nan),
        slope=np.full(n, np.nan),
        status=np.full(n, Status.MAX_ITERATIONS, np.int32),
        evaluations=np.zeros(n),
    )


def _warm_settle(rows: _Rows, coarse: Root, lo, hi, h, tol):
    """Step 3: four evaluations at bin width ``h`` for the rows the coarse search resolved,
    from its root and slope (:func:`dpjax.numerics.warm_bracket`).

    Returns ``(final, lo, hi)``: the roots of every row (unresolved where not settled)
    and the brackets narrowed to the best ends found (copies), for the fallback search.
    """
    final = _unresolved(rows.size)
    warm = np.arange(rows.size)[coarse.status == Status.OPTIMAL]
    if not warm.size:
        return final, lo, hi
    lo, hi = lo.copy(), hi.copy()
    floor = np.exp(coarse.good[warm]) * (1.0 - 1e-2)
    sizes = _sizes(rows, warm, floor, h)
    root = _run(warm_kernel, rows, warm, coarse.good, coarse.slope, h, tol, sizes)
    _store(final, warm, root)
    # failed warm brackets: the fallback search starts from the best ends found
    known_g, known_b = np.isfinite(root.good), np.isfinite(root.bad)
    hi[warm] = np.where(known_g, np.exp(root.good), hi[warm])
    lo[warm] = np.where(known_b, np.exp(root.bad), lo[warm])
    return final, lo, hi


@float64_kernel
def calibrate_scale(
    noise_fn: Callable,
    shape,
    sensitivity,
    epsilon,
    delta,
    compositions=1,
    sampling_rate=None,
    bin_width=1e-4,
    upper=None,
    lower=None,
    tolerance=1e-7,
    fallback_upper=None,
    shard: bool = True,
    coarsen: int = 1,
    plan: dict | None = None,
    pow2_sizes: bool = False,
    tilt: bool = True,
    recheck: bool = True,
) -> ScaleCalibration:
    r"""Least scale of ``noise_fn(scale, shape)`` meeting ``(epsilon, delta)`` after ``K`` uses.

    Privacy improves monotonically with the scale of a scale family, so the least scale
    is the root of

    .. math:: F(x) = \log(-\ell) - \log(-\log \delta_K(\epsilon; e^x)), \qquad
              \ell = \log\big(\delta (1 - \mathrm{MARGIN})\big) + \log(1 - 10^{-6}),

    with ``delta_K`` the certified profile of the pessimistic PLD engine after ``K``
    (possibly Poisson-subsampled) compositions (the K-fold composition of Sec. V-B /
    Algorithm 2 of flipped-huber-mechanism, by FFT); ``F <= 0`` is private.  The search
    aims :data:`SEARCH_MARGIN` below the certified level, so that rounding in the
    composition cannot put the returned scale on the wrong side of it.

    By default one Illinois search at ``bin_width`` on grids sized for the bracket's low
    end (one compiled program); with ``coarsen > 1`` the root is first located on a grid
    ``coarsen`` times coarser (``coarsen**2`` cheaper per evaluation, close in scale),
    then settled at ``bin_width`` (module docstring).  Either way the returned scale
    comes with the evaluation at it: the certificate ``delta_at``, checked against
    ``delta (1 - MARGIN)``.  All stages run batched (``vmap``), sharded over devices
    when several.  Targets ``delta < TILT_BELOW`` (below the plain FFT's round-off floor)
    are searched again on the tilted composition
    (:func:`dpjax.calibration.scale_tilted.refine`), whose root is kept where
    :func:`dpjax.accounting.pld.engine.profile` certifies it (else the plain root stands).

    Args:
      noise_fn: ``noise_fn(scale, shape)`` -> a noise family (e.g.
        :meth:`dpjax.noise.Gaussian.from_scale`).
      shape: the family's shape parameter (array, broadcast with the targets).
      sensitivity: the sensitivity ``Delta``.
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array).
      compositions: number of uses ``K``.
      sampling_rate: Poisson sampling rate ``q``, or ``None``.
      bin_width: bin width of the PLD grid the result is certified on.
      upper: a scale meeting the target (e.g. the non-subsampled closed form).
      lower: a scale that does not (default ``upper / 8``; lowered 4x until the engine
        confirms it fails, at most :data:`MAX_WIDENINGS` times).
      tolerance: relative tolerance on the scale (absolute on ``log scale``).
      fallback_upper: tried when the engine finds ``upper`` infeasible.
      shard: shard the batch over the devices when several.
      coarsen: bin-width factor of an optional coarse stage (1, the default: a single
        stage at ``bin_width``, one compiled program; e.g. :data:`COARSEN`: fewer fine
        evaluations, two or three compiled programs).
      plan: a dict, filled here, sharing grid and FFT sizes between stages and calls
        (pass the same dict to related calls: fewer compilations); keyed by
        ``(stage, bin width, tail or level)`` tuples, one layout for every stage, so that
        the float64 guard (which flattens it as a pytree, sorting its keys) accepts it.
      pow2_sizes: round the sizes up to powers of two (more sharing across calls, up to
        2x more work each).
      tilt: run the tilted refinement for targets below ``TILT_BELOW`` (``False``: the plain
        root only, certified too, only looser there; a survey whose finalists are settled
        later saves the tilted stage's compilations).
      recheck: re-check each tilted root by :func:`dpjax.accounting.pld.engine.profile`
        (``False``: kept on its own certified tilted evaluation; the caller then re-checks
        the scale it returns, as :func:`dpjax.calibration.shape_search.calibrate_shape_scale`
        does for its winner).

    Returns:
      A :class:`ScaleCalibration`: the returned scale is within ``tolerance`` (relative)
      of the least scale the engine certifies at ``bin_width``.
    """
    rows, lo, hi, out_shape = _setup(
        noise_fn, shape, sensitivity, epsilon, delta, compositions, sampling_rate, upper,
        lower, fallback_upper, shard, plan, pow2_sizes,
    )
    if coarsen > 1:
        # the warm start needs the coarse root only to ~1e-5 (the warm bracket's secant
        # step absorbs it): fewer coarse evaluations
        coarse_tol = max(tolerance, COARSE_TOLERANCE)
        every = np.arange(rows.size)
        coarse, lo, hi = _bracketed_search(rows, every, lo, hi, bin_width * coarsen, coarse_tol)
        final, lo, hi = _warm_settle(rows, coarse, lo, hi, bin_width, tolerance)
    else:
        final = _unresolved(rows.size)
    rest = np.flatnonzero(final.status != Status.OPTIMAL)
    if rest.size:
        root, lo, hi = _bracketed_search(rows, rest, lo, hi, bin_width, tolerance)
        _store(final, rest, root)
    # targets below the plain FFT's floor: a root on the tilted composition, certified
    if tilt:
        scale_tilted.refine(
            rows, final, lo, hi, bin_width, tolerance, _bracketed_search, recheck=recheck
        )
    status = final.status.reshape(out_shape)
    scale = final.aux[:, 1].reshape(out_shape)
    log_d = final.aux[:, 0].reshape(out_shape)
    ok = (status == Status.OPTIMAL) & (log_d <= rows.level.reshape(out_shape))
    scale = np.where(np.isfinite(scale), scale, rows.upper.reshape(out_shape))
    return ScaleCalibration(scale, np.exp(log_d), ok, status)


def _setup(
    noise_fn, shape, sensitivity, epsilon, delta, compositions, sampling_rate, upper, lower,
    fallback_upper, shard, plan, pow2_sizes,
):
    """Broadcast and flatten the targets: ``(rows, lo, hi, out_shape)`` with the initial
    bracket ``[lo, hi] = [lower (or upper / 8), upper]``."""
    eps, dl, shape_b, upper_b = np.broadcast_arrays(
        np.asarray(epsilon, np.float64),
        np.asarray(delta, np.float64),
        np.asarray(shape, np.float64),
        np.asarray(upper, np.float64),
    )
    out_shape = eps.shape
    eps, dl, shape_b, upper_b = (np.ravel(x) for x in (eps, dl, shape_b, upper_b))
    level = np.asarray(call_padded(log_target, dl), float).reshape(-1)  # one program, any rows
    lo = np.asarray(upper_b / 8.0 if lower is None else np.broadcast_to(lower, out_shape), float)
    fb_up = None if fallback_upper is None else np.broadcast_to(fallback_upper, out_shape).ravel()
    # targets above ~1e-9 do not need the far 1-D tails; rounded down to a power of ten
    # (a static of the compiled kernel: nearby targets share it; smaller is tighter, and
    # any tail is sound: what leaves the range goes to +infinity)
    d_min = float(np.min(dl))
    tail = max(1e-40, min(1e-14, d_min * 1e-8 / compositions)) if d_min >= 1e-9 else 1e-40
    tail = 10.0 ** math.floor(math.log10(tail))
    rows = _Rows(
        noise_fn=noise_fn,
        shape=shape_b,
        eps=eps,
        level=level,
        search_level=level + np.log1p(-SEARCH_MARGIN),
        upper=upper_b,
        fallback_upper=fb_up,
        sensitivity=sensitivity,
        sampling_rate=sampling_rate,
        compositions=compositions,
        scalars=scalar_args(1.0, 0.0, sensitivity, sampling_rate, compositions)[2:],
        tail=tail,
        shard=shard,
        plan={} if plan is None else plan,
        pow2_sizes=pow2_sizes,
    )
    return rows, lo.reshape(-1).copy(), upper_b.astype(float).copy(), out_shape
