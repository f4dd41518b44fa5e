r"""The least scale of a noise family meeting a target after ``K`` uses, through the PLD engine.

Calibration is a root search on ``x = log scale`` of a decreasing function whose
evaluation is a whole PLD composition (:mod:`dpjax.accounting.pld.engine`): one jitted,
vmapped kernel over targets (or noise shapes) with the searches of
:mod:`dpjax.numerics.roots` inside ``jit`` -- a coarse grid first, then four evaluations
at the requested resolution (:func:`calibrate_scale`).  The certificate is the engine's
own evaluation at the returned scale (:mod:`dpjax.certificate`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax import _batching
from dpjax._batching import padded_size
from dpjax.accounting.pld.engine import _STATIC, _scalar_args, log_delta_kernel
from dpjax.accounting.pld.plan import Sizes, sizes_for
from dpjax.certificate import log_target
from dpjax.numerics import Status, float64_kernel, roots


def _objective(shape, sensitivity, sampling_rate, compositions, eps, level, **static):
    """``x = log scale -> (F, [log delta, scale])`` with ``F = log(-level) - log(-log delta)``.

    ``F <= 0`` iff ``log delta <= level``; for Gaussian-like profiles
    (``log delta ~ -c / scale^2``) ``F`` is nearly linear in ``x``, which is what the
    secant steps of :mod:`.search` exploit.  The auxiliary value carries the scale as
    evaluated, so the returned scale is bit for bit the one certified.
    """

    def f(x):
        scale = jnp.exp(x)
        log_d = log_delta_kernel(
            scale, shape, sensitivity, sampling_rate, compositions, eps, **static
        )
        big_f = jnp.log(-level) - jnp.log(-jnp.minimum(log_d, 0.0))
        return big_f, jnp.stack([log_d, scale])

    return f


def _batched(method):
    """A jitted kernel running ``method(f, a, b, tol) -> Root`` on the calibration objective
    of every row, vmapped over 1-D ``(shape, epsilon, log_level, a, b)``."""

    @functools.partial(jax.jit, static_argnames=_STATIC)
    @float64_kernel
    def kernel(
        shape, sensitivity, sampling_rate, compositions, epsilon, log_level, a, b, tol, **static
    ) -> roots.Root:
        def one(shape, eps, level, a, b):
            f = _objective(shape, sensitivity, sampling_rate, compositions, eps, level, **static)
            return method(f, a, b, tol)

        return jax.vmap(one)(shape, epsilon, log_level, a, b)

    return kernel


#: :func:`.roots.illinois` on ``log scale`` in ``[lo, hi]`` (``a = lo``, ``b = hi``).
search_kernel = _batched(lambda f, lo, hi, tol: roots.illinois(f, jnp.log(hi), jnp.log(lo), tol))


#: :func:`.roots.warm_bracket` from ``x0 = log scale`` with a slope (``a = x0``, ``b = slope``).
warm_kernel = _batched(roots.warm_bracket)


#: Relative margin on delta of the engine's search level (see :func:`calibrate_scale`).
SEARCH_MARGIN = 1e-6


#: Bin-width factor of the coarse stage of :func:`calibrate_scale`.
COARSEN = 16


#: Tolerance (on ``log scale``) of the coarse stage of :func:`calibrate_scale`.
COARSE_TOLERANCE = 1e-5


class ScaleCalibration(NamedTuple):
    scale: np.ndarray
    delta_at: np.ndarray
    certified: np.ndarray
    status: np.ndarray


def _run(kernel, rows, shape, scalars, eps, level, a, b, tol, shard, pad_to=0, **static):
    """Run a vmapped search kernel on the selected ``rows`` (host arrays, flat; padded to at
    least ``pad_to`` rows, to reuse a kernel compiled for a larger batch); numpy Root."""
    k = len(rows)
    rows = np.concatenate([rows, np.repeat(rows[-1:], max(pad_to - k, 0))])
    batch, _ = _batching.shard(shape[rows], eps[rows], level[rows], a[rows], b[rows], use_devices=shard)
    out = kernel(batch[0], *scalars, batch[1], batch[2], batch[3], batch[4], tol, **static)
    return roots.Root(*(np.asarray(x)[:k] for x in out))


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
    coarsen: int = COARSEN,
    plan: dict | None = None,
    pow2_sizes: bool = False,
) -> ScaleCalibration:
    r"""Least scale of ``noise_fn(scale, shape)`` meeting ``(epsilon, delta)`` after ``K`` uses.

    ``upper`` must be a scale meeting the target (e.g. the non-subsampled closed
    form); ``lower`` one that does not (default ``upper / 8``, lowered 4x until the
    engine confirms it fails, at most 6 times); when the engine finds ``upper``
    infeasible, ``fallback_upper`` (if given) is tried.  The returned scale is within
    ``tolerance`` (relative) of the least scale the engine certifies at ``bin_width``.

    Two resolutions, one answer: the root is located by :func:`.roots.illinois` on a
    grid ``coarsen`` times coarser (``coarsen**2`` cheaper per evaluation, but
    close in scale), then settled at ``bin_width`` by :func:`.roots.warm_bracket` --
    four evaluations, one of which is at the returned scale (a full evaluation of the
    engine: the certificate ``delta_at``, checked against ``delta (1 - MARGIN)``).
    Rows whose warm bracket fails are searched again at ``bin_width`` from the best
    ends found.  All stages run batched (``vmap``), sharded over devices when several.
    ``plan`` (a dict, filled here) shares grid and FFT sizes between stages and calls
    (pass the same dict to related calls: fewer compilations); ``pow2_sizes`` rounds
    them up to powers of two (more sharing across calls, up to 2x more work each).
    """
    eps = np.asarray(epsilon, np.float64)
    dl = np.asarray(delta, np.float64)
    eps, dl, shape_b, upper_b = np.broadcast_arrays(
        eps, dl, np.asarray(shape, np.float64), np.asarray(upper, np.float64)
    )
    out_shape = eps.shape
    eps, dl, shape_b, upper_b = (np.ravel(x) for x in (eps, dl, shape_b, upper_b))
    level = np.asarray(log_target(dl), float).reshape(-1)
    # the search aims SEARCH_MARGIN below the certified level, so that rounding in the
    # composition cannot put the returned scale on the wrong side of it
    search_level = level + np.log1p(-SEARCH_MARGIN)
    lo = np.asarray(upper_b / 8.0 if lower is None else np.broadcast_to(lower, out_shape), float)
    lo, hi = lo.reshape(-1).copy(), upper_b.astype(float).copy()
    fb_up = None if fallback_upper is None else np.broadcast_to(fallback_upper, out_shape).ravel()
    subsampled = sampling_rate is not None
    scalars = _scalar_args(1.0, 0.0, sensitivity, sampling_rate, compositions)[2:]
    # targets above ~1e-9 do not need the far 1-D tails
    d_min = float(np.min(dl))
    tail = max(1e-40, min(1e-14, d_min * 1e-8 / compositions)) if d_min >= 1e-9 else 1e-40
    all_rows = np.arange(eps.size)

    plan = {} if plan is None else plan

    def sizes(rows, scales, h):
        # sizes planned for smaller scales cover these (wider loss ranges): reuse them, one
        # compiled kernel instead of one per stage (sizes decide tightness, not soundness)
        key = (h, tail)
        scale = float(np.min(scales))
        if key in plan and plan[key][0] <= scale:
            return plan[key][1]
        new = sizes_for(
            noise_fn,
            scales,
            shape_b[rows],
            sensitivity,
            sampling_rate,
            compositions,
            h,
            tail,
        )
        if pow2_sizes:  # a coarser ladder of sizes: more calls share one compiled kernel
            new = Sizes(padded_size(new.grid), new.fft and padded_size(new.fft), tail)
        plan[key] = (scale, new)
        return new

    def bracketed_search(h, rows, tol):
        """Illinois at bin width ``h`` on ``[lo, hi]`` to ``tol``; rows whose bracket misses
        the root are widened (``lo / 4``, or ``fallback_upper``) and searched again."""
        out = None
        todo = rows
        for _ in range(7):
            static = dict(
                noise_fn=noise_fn,
                bin_width=h,
                sizes=sizes(todo, lo[todo], h),
                subsampled=subsampled,
            )
            root = _run(
                search_kernel,
                todo,
                shape_b,
                scalars,
                eps,
                search_level,
                lo,
                hi,
                tol,
                shard,
                pad_to=padded_size(len(rows)),
                **static,
            )
            if out is None:
                out = roots.Root(*(np.array(x) for x in root))
            else:
                where = np.searchsorted(rows, todo)
                for name, value in root._asdict().items():
                    getattr(out, name)[where] = value
            too_small = root.status == Status.BRACKET_TOO_SMALL
            too_big = root.status == Status.INFEASIBLE
            if fb_up is not None:
                too_big &= hi[todo] < fb_up[todo]
            else:
                too_big &= False
            if not np.any(too_small | too_big):
                break
            lo[todo] = np.where(too_small, lo[todo] / 4.0, lo[todo])
            if fb_up is not None:
                hi[todo] = np.where(too_big, fb_up[todo], hi[todo])
            todo = todo[too_small | too_big]
        return out

    h_coarse = bin_width * coarsen
    if coarsen > 1:
        # the warm start needs the coarse root only to ~1e-5 (the warm bracket's secant
        # step absorbs it): fewer coarse evaluations
        coarse = bracketed_search(h_coarse, all_rows, max(tolerance, COARSE_TOLERANCE))
        warm = coarse.status == Status.OPTIMAL
    else:
        warm = np.zeros(eps.size, bool)
    final = roots.Root(
        good=np.full(eps.size, np.nan),
        aux=np.full((eps.size, 2), np.nan),
        bad=np.full(eps.size, np.nan),
        slope=np.full(eps.size, np.nan),
        status=np.full(eps.size, Status.MAX_ITERATIONS, np.int32),
        evaluations=np.zeros(eps.size),
    )

    def store(rows, root):
        for name, value in root._asdict().items():
            getattr(final, name)[rows] = value

    if np.any(warm):
        rows = all_rows[warm]
        floor = np.exp(coarse.good[warm]) * (1.0 - 1e-2)
        static = dict(
            noise_fn=noise_fn,
            bin_width=bin_width,
            sizes=sizes(rows, floor, bin_width),
            subsampled=subsampled,
        )
        root = _run(
            warm_kernel,
            rows,
            shape_b,
            scalars,
            eps,
            search_level,
            coarse.good,
            coarse.slope,
            tolerance,
            shard,
            **static,
        )
        store(rows, root)
        # failed warm brackets: search at bin_width from the best ends found
        known_g, known_b = np.isfinite(root.good), np.isfinite(root.bad)
        hi[rows] = np.where(known_g, np.exp(root.good), hi[rows])
        lo[rows] = np.where(known_b, np.exp(root.bad), lo[rows])
    rest = all_rows[final.status != Status.OPTIMAL]
    if rest.size:
        store(rest, bracketed_search(bin_width, rest, tolerance))
    status = final.status.reshape(out_shape)
    scale = final.aux[:, 1].reshape(out_shape)
    log_d = final.aux[:, 0].reshape(out_shape)
    ok = (status == Status.OPTIMAL) & (log_d <= level.reshape(out_shape))
    scale = np.where(np.isfinite(scale), scale, upper_b.reshape(out_shape))
    return ScaleCalibration(scale, np.exp(log_d), ok, status)
