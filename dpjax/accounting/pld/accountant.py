r"""The engine end to end: profile, epsilon and calibration of a noise after ``K`` uses.

A *use* is one release of ``f(D) + T`` with per-use sensitivity ``Delta``,
optionally on a Poisson subsample of rate ``q``; ``K`` uses are composed
(adaptively: each use's dominating pair is the same).  For every adjacency
(``remove`` and ``add`` when subsampled; one pair otherwise, the noises being
symmetric) the pessimistic PLD is built (:mod:`.discretise`,
:mod:`.subsample`), composed ``K``-fold by FFT (:mod:`.compose`), and queried
(:mod:`.query`); the worse adjacency is reported.  All of it is one jitted
kernel of the *scale* (traced) with static grid and FFT sizes, so calibration
is a fixed-iteration bisection on ``log scale`` inside ``jit`` and vmaps over
targets or noise shapes (STYLE.md items 4-5).

``noise_fn(scale, shape)`` builds the family (``shape`` a traced array, e.g.
``alpha / gamma`` of flipped Huber; ignored by one-parameter families).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.pld import query as _query
from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld.compose import fast_size, self_compose, window_size
from dpjax.accounting.pld.discretise import discretise_pair, noise_pair
from dpjax.accounting.pld.subsample import subsampled_pair
from dpjax.calibrate._certify import log_target


class Sizes(NamedTuple):
    """Static plan of the kernel.

    Attributes:
      grid: 1-D loss-grid points; fft: FFT length (0: no composition);
      tail: probability each 1-D pair may leave beyond its ``t`` range (the
        top part goes to ``+infinity``: pessimistic); mgf_stride: evaluate the
        MGF on every ``mgf_stride``-th ``lambda`` only (window placement
        needs few; the tiny-delta Chernoff bound wants all).
    """

    grid: int
    fft: int
    tail: float = 1e-40
    mgf_stride: int = 1


def _pairs(noise, sensitivity, sampling_rate, subsampled: bool, tail: float = 1e-40):
    base = noise_pair(noise, sensitivity, tail)
    if not subsampled:
        return [base]
    return [subsampled_pair(base, sampling_rate, adj) for adj in ("remove", "add")]


def _plds(
    noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width, sizes, subsampled
):
    noise = noise_fn(scale, shape)
    out = []
    for pair in _pairs(noise, sensitivity, sampling_rate, subsampled, sizes.tail):
        lower = jnp.floor(pair.loss(pair.t_lo) / bin_width).astype(jnp.int64) - 1
        pld = discretise_pair(pair, bin_width, lower, sizes.grid, mgf_stride=sizes.mgf_stride)
        if sizes.fft:
            pld = self_compose(pld, compositions, sizes.fft)
        out.append(pld)
    return out


@functools.partial(jax.jit, static_argnames=("noise_fn", "bin_width", "sizes", "subsampled"))
def log_delta_kernel(
    scale,
    shape,
    sensitivity,
    sampling_rate,
    compositions,
    epsilon,
    *,
    noise_fn,
    bin_width,
    sizes,
    subsampled,
):
    """``log delta(epsilon)`` after ``compositions`` uses (worse adjacency); certified bound."""
    plds = _plds(
        noise_fn,
        scale,
        shape,
        sensitivity,
        sampling_rate,
        compositions,
        bin_width,
        sizes,
        subsampled,
    )
    return functools.reduce(jnp.maximum, [_query.log_delta_for_epsilon(p, epsilon) for p in plds])


@functools.partial(jax.jit, static_argnames=("noise_fn", "bin_width", "sizes", "subsampled"))
def epsilon_kernel(
    scale,
    shape,
    sensitivity,
    sampling_rate,
    compositions,
    delta,
    *,
    noise_fn,
    bin_width,
    sizes,
    subsampled,
):
    """Least certified ``epsilon`` at ``delta`` after ``compositions`` uses (worse adjacency)."""
    plds = _plds(
        noise_fn,
        scale,
        shape,
        sensitivity,
        sampling_rate,
        compositions,
        bin_width,
        sizes,
        subsampled,
    )
    return functools.reduce(jnp.maximum, [_query.epsilon_for_delta(p, delta) for p in plds])


@functools.partial(jax.jit, static_argnames=("noise_fn", "bin_width", "sizes", "subsampled"))
def _one_use(scale, shape, sensitivity, sampling_rate, *, noise_fn, bin_width, sizes, subsampled):
    """``log_mgf`` of the one-use PLDs (for sizing)."""
    plds = _plds(
        noise_fn, scale, shape, sensitivity, sampling_rate, 1, bin_width, sizes, subsampled
    )
    return [p.log_mgf for p in plds]


@functools.partial(jax.jit, static_argnames=("noise_fn", "subsampled", "tail"))
def _loss_ranges(scale, shape, sensitivity, sampling_rate, *, noise_fn, subsampled, tail):
    noise = noise_fn(scale, shape)
    return [
        (p.loss(p.t_lo), p.loss(p.t_hi))
        for p in _pairs(noise, sensitivity, sampling_rate, subsampled, tail)
    ]


def bucket(n: int) -> int:
    """Round a size up to ``{1, 1.25, 1.5, 1.75} * 2^k`` (few distinct compiles)."""
    n = max(int(n), 8)
    p = 1 << (n.bit_length() - 1)
    for f in (1.0, 1.25, 1.5, 1.75, 2.0):
        if n <= int(p * f):
            return int(p * f)
    return 2 * p


def sizes_for(
    noise_fn,
    scale,
    shape,
    sensitivity,
    sampling_rate,
    compositions,
    bin_width,
    tail: float = 1e-40,
    mgf_stride: int = 1,
) -> Sizes:
    """Host helper: static sizes valid for ``scale`` (and, for scale families, any larger scale)."""
    subsampled = sampling_rate is not None
    q = jnp.asarray(1.0 if sampling_rate is None else sampling_rate, jnp.float64)
    args = (
        jnp.asarray(scale, jnp.float64),
        jnp.asarray(shape, jnp.float64),
        jnp.asarray(sensitivity, jnp.float64),
        q,
    )
    ranges = _loss_ranges(*args, noise_fn=noise_fn, subsampled=subsampled, tail=tail)
    grid = 0
    for lo, hi in ranges:
        grid = max(grid, math.ceil(float(hi) / bin_width) - math.floor(float(lo) / bin_width) + 3)
    grid = bucket(grid)
    if compositions == 1:
        return Sizes(grid, 0, tail, mgf_stride)
    mgfs = _one_use(
        *args,
        noise_fn=noise_fn,
        bin_width=bin_width,
        sizes=Sizes(grid, 0, tail, 1),
        subsampled=subsampled,
    )
    fft = max(window_size(compositions * np.asarray(m), bin_width) for m in mgfs)
    return Sizes(grid, fast_size(fft), tail, mgf_stride)


def _scalar_args(scale, shape, sensitivity, sampling_rate, compositions):
    return (
        jnp.asarray(scale, jnp.float64),
        jnp.asarray(shape, jnp.float64),
        jnp.asarray(sensitivity, jnp.float64),
        jnp.asarray(1.0 if sampling_rate is None else sampling_rate, jnp.float64),
        jnp.asarray(compositions, jnp.float64),
    )


def profile(
    noise_fn, scale, shape, sensitivity, epsilon, compositions=1, sampling_rate=None, bin_width=1e-4
):
    """``delta(epsilon)`` (array) of ``noise_fn(scale, shape)`` after ``compositions`` uses."""
    sizes = sizes_for(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width)
    args = _scalar_args(scale, shape, sensitivity, sampling_rate, compositions)
    return np.exp(
        np.asarray(
            log_delta_kernel(
                *args,
                jnp.asarray(epsilon, jnp.float64),
                noise_fn=noise_fn,
                bin_width=bin_width,
                sizes=sizes,
                subsampled=sampling_rate is not None,
            )
        )
    )


def epsilon(
    noise_fn, scale, shape, sensitivity, delta, compositions=1, sampling_rate=None, bin_width=1e-4
):
    """Least certified ``epsilon`` (array) at ``delta`` after ``compositions`` uses."""
    sizes = sizes_for(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width)
    args = _scalar_args(scale, shape, sensitivity, sampling_rate, compositions)
    return np.asarray(
        epsilon_kernel(
            *args,
            jnp.asarray(delta, jnp.float64),
            noise_fn=noise_fn,
            bin_width=bin_width,
            sizes=sizes,
            subsampled=sampling_rate is not None,
        )
    )


@functools.partial(
    jax.jit, static_argnames=("noise_fn", "bin_width", "sizes", "subsampled", "num_iterations")
)
def calibrate_kernel(
    shape,
    sensitivity,
    sampling_rate,
    compositions,
    epsilon,
    log_level,
    lo,
    hi,
    *,
    noise_fn,
    bin_width,
    sizes,
    subsampled,
    num_iterations=12,
):
    """Bisection on ``log scale`` in ``[lo, hi]`` for ``log delta(epsilon) <= log_level``.

    Vectorised over any batch shape of ``(shape, epsilon, log_level, lo, hi)``
    (``jnp.vectorize``).  Returns ``(scale, log_delta_at_scale, status)``;
    the feasible end is returned (always private under the engine's
    pessimistic profile).
    """

    def one(shape, eps, level, lo, hi):
        def log_delta(log_s):
            return log_delta_kernel(
                jnp.exp(log_s),
                shape,
                sensitivity,
                sampling_rate,
                compositions,
                eps,
                noise_fn=noise_fn,
                bin_width=bin_width,
                sizes=sizes,
                subsampled=subsampled,
            )

        # F = log(-level) - log(-log delta) is nearly linear in log scale for
        # Gaussian-like profiles (log delta ~ -c / scale^2): secant steps converge fast.
        # F <= 0  <=>  log delta <= level.
        def big_f(x):
            return jnp.log(-level) - jnp.log(-jnp.minimum(log_delta(x), 0.0))

        good, f_good, status = _illinois(big_f, jnp.log(hi), jnp.log(lo), num_iterations)
        # invert F back to log delta at the returned end
        return jnp.exp(good), -jnp.exp(jnp.log(-level) - f_good), status

    return jnp.vectorize(one)(shape, epsilon, log_level, lo, hi)


def _illinois(f, good, bad, num_iterations):
    r"""Bracketing root finder (Illinois regula falsi) with a fixed number of steps.

    ``f(good) <= 0 < f(bad)`` must hold (else ``status`` 1: infeasible at
    ``good``, 2: feasible at ``bad``, codes of :func:`bisect_monotone`).
    Each step evaluates ``f`` once at the secant point of the bracket (the
    midpoint if that is not strictly inside or not finite; every third step
    bisects to guarantee shrinking) and keeps the sign change; the ``good``
    end (``f <= 0``: private) is returned with the true ``f(good)``.
    Converges superlinearly on smooth ``f``, so ~10 steps do the work of ~30
    halvings; vmap-fair (fixed trip count).  ``f`` has ONE call site (the two
    end evaluations are the first two loop steps), so the program that
    contains it is compiled once.
    """
    nan = jnp.full_like(good, jnp.nan)

    def body(i, c):
        g, fg, tg, b, fb, last, f0, f1 = c
        sec = (g * fb - b * fg) / (fb - fg)
        lo, hi = jnp.minimum(g, b), jnp.maximum(g, b)
        ok = jnp.isfinite(sec) & (sec > lo) & (sec < hi) & jnp.isfinite(fg) & jnp.isfinite(fb)
        x = jnp.where(ok & (i % 3 != 1), sec, 0.5 * (g + b))
        x = jnp.where(i == 0, g, jnp.where(i == 1, b, x))
        fx = f(x)
        f0 = jnp.where(i == 0, fx, f0)
        f1 = jnp.where(i == 1, fx, f1)
        start = i < 2
        good_side = fx <= 0
        # Illinois: halve the stale end's value when the same end survives twice
        ng = jnp.where(start | ~good_side, g, x)
        ntg = jnp.where(i == 0, fx, jnp.where(start | ~good_side, tg, fx))
        nfg = jnp.where(i == 0, fx, jnp.where(start, fg, jnp.where(good_side, fx, fg)))
        nb = jnp.where(start | good_side, b, x)
        nfb = jnp.where(i == 1, fx, jnp.where(start, fb, jnp.where(good_side, fb, fx)))
        nfb = jnp.where(~start & good_side & (last == 1), 0.5 * nfb, nfb)
        nfg = jnp.where(~start & ~good_side & (last == -1), 0.5 * nfg, nfg)
        nlast = jnp.where(start, 0, jnp.where(good_side, 1, -1)).astype(jnp.int32)
        return ng, nfg, ntg, nb, nfb, nlast, f0, f1

    carry = (good, nan, nan, bad, nan, jnp.zeros((), jnp.int32), nan, nan)
    g, _, tg, _, _, _, f0, f1 = jax.lax.fori_loop(0, num_iterations + 2, body, carry)
    status = jnp.where(f0 > 0, 1, jnp.where(f1 <= 0, 2, 0)).astype(jnp.int32)
    g = jnp.where(status == 0, g, good)
    return g, jnp.where(status == 0, tg, f0), status


#: Relative margin on delta of the engine's search level (see :func:`calibrate_scale`).
SEARCH_MARGIN = 1e-6


def _shard(*arrays, use_devices: bool = True):
    """Flatten the batch; with several devices, pad it to a multiple of their number and shard
    it along a 1-D mesh (``jax.sharding``): the vectorised kernel then runs one slice of the
    calibration grid per device.  Results equal the single-device run (same program per row)."""
    flat = [np.asarray(a, np.float64).reshape(-1) for a in np.broadcast_arrays(*arrays)]
    devices = jax.devices() if use_devices else jax.devices()[:1]
    n = flat[0].size
    if len(devices) < 2 or n < 2:
        return [jnp.asarray(a) for a in flat]
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    m = -(-n // len(devices)) * len(devices)
    mesh = Mesh(np.asarray(devices), ("grid",))
    sharding = NamedSharding(mesh, PartitionSpec("grid"))
    return [jax.device_put(np.pad(a, (0, m - n), mode="edge"), sharding) for a in flat]


class ScaleCalibration(NamedTuple):
    scale: np.ndarray
    delta_at: np.ndarray
    certified: np.ndarray
    status: np.ndarray


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
    num_iterations=12,
    fallback_upper=None,
    shard: bool = True,
) -> ScaleCalibration:
    r"""Least scale of ``noise_fn(scale, shape)`` meeting ``(epsilon, delta)`` after ``K`` uses.

    Host driver: ``upper`` must be a scale meeting the target (e.g. the
    non-subsampled closed form); ``lower`` a scale that does not (default
    ``upper / 8``, lowered until the engine confirms it fails, at most 6
    times); when the engine finds ``upper`` infeasible, ``fallback_upper`` (if
    given) is tried.  The bisection runs in one jitted kernel; the result is
    re-verified by an independent evaluation of the engine at the returned
    scale (:func:`profile`), against ``delta (1 - MARGIN)``.
    """
    eps = np.asarray(epsilon, np.float64)
    dl = np.asarray(delta, np.float64)
    eps, dl, shape_b, upper_b = np.broadcast_arrays(
        eps, dl, np.asarray(shape, np.float64), np.asarray(upper, np.float64)
    )
    level = np.asarray(log_target(dl))
    # the search aims REL_SEARCH_MARGIN below the certified level: an independent
    # re-evaluation differs by FFT round-off (~1e-8 relative), which must not undo it
    search_level = level + np.log1p(-SEARCH_MARGIN)
    lo = np.asarray(upper_b / 8.0 if lower is None else np.broadcast_to(lower, eps.shape), float)
    hi = np.asarray(upper_b, float)
    subsampled = sampling_rate is not None
    args = _scalar_args(1.0, 0.0, sensitivity, sampling_rate, compositions)[2:]
    # targets above ~1e-9 need neither the far 1-D tails nor the full lambda grid
    d_min = float(np.min(dl))
    if d_min >= 1e-9:
        tail, stride = max(1e-40, min(1e-14, d_min * 1e-8 / compositions)), 4
    else:
        tail, stride = 1e-40, 1
    for _ in range(7):
        sizes = sizes_for(
            noise_fn,
            float(np.min(lo)),
            float(np.max(shape_b)) if shape_b.size else 0.0,
            sensitivity,
            sampling_rate,
            compositions,
            bin_width,
            tail,
            stride,
        )
        batch = _shard(shape_b, eps, search_level, lo, hi, use_devices=shard)
        scale, log_d, status = calibrate_kernel(
            batch[0],
            *args,
            *batch[1:],
            noise_fn=noise_fn,
            bin_width=bin_width,
            sizes=sizes,
            subsampled=subsampled,
            num_iterations=num_iterations,
        )
        n = eps.size
        scale, log_d, status = (
            np.asarray(x).reshape(-1)[:n].reshape(eps.shape) for x in (scale, log_d, status)
        )
        too_small = status == 2  # predicate holds at the lower end: go lower
        too_big = (
            (status == 1)
            & (fallback_upper is not None)
            & (
                hi
                < np.broadcast_to(
                    np.asarray(fallback_upper if fallback_upper is not None else np.inf, float),
                    hi.shape,
                )
            )
        )
        if not np.any(too_small | too_big):
            break
        lo = np.where(too_small, lo / 4.0, lo)
        if fallback_upper is not None:
            hi = np.where(too_big, np.broadcast_to(fallback_upper, hi.shape), hi)
    scale = np.asarray(scale)
    # independent re-check at the returned scales (a separate evaluation of the engine)
    check = functools.partial(
        log_delta_kernel, noise_fn=noise_fn, bin_width=bin_width, sizes=sizes, subsampled=subsampled
    )
    if scale.ndim == 0:
        log_check = np.asarray(
            check(jnp.asarray(scale), jnp.asarray(shape_b), *args, jnp.asarray(eps))
        )
    else:
        log_check = np.asarray(
            jnp.vectorize(check)(jnp.asarray(scale), jnp.asarray(shape_b), *args, jnp.asarray(eps))
        )
    ok = (status == 0) & (log_check <= level)
    return ScaleCalibration(scale, np.exp(np.maximum(np.asarray(log_d), log_check)), ok, status)


def gaussian_noise(scale, shape):
    """``noise_fn`` of the Gaussian family (``shape`` unused)."""
    from dpjax.noise.gaussian import Gaussian

    del shape
    return Gaussian(scale)


def laplace_noise(scale, shape):
    """``noise_fn`` of the Laplace family (``shape`` unused)."""
    from dpjax.noise.laplace import Laplace

    del shape
    return Laplace(scale)


def chernoff_epsilon(log_mgf, delta):
    """Convenience: Chernoff-only epsilon of a composed ``log_mgf`` (see :mod:`.tail_bounds`)."""
    return tail_bounds.epsilon_chernoff(log_mgf, jnp.log(jnp.asarray(delta)))


class ShapeCalibration(NamedTuple):
    shape: float
    scale: float
    variance: float
    delta_at: float
    certified: bool
    grid: np.ndarray  # (shape, scale, variance) rows of the search


def calibrate_shape_scale(
    noise_fn: Callable,
    variance_fn: Callable,
    shapes,
    sensitivity: float,
    epsilon: float,
    delta: float,
    compositions: int,
    upper_fn: Callable,
    bin_width: float = 1e-4,
    num_iterations: int = 40,
    refine: int = 9,
) -> ShapeCalibration:
    r"""Least-variance ``(shape, scale)`` meeting ``(epsilon, delta)`` after ``K`` uses.

    Structure, not brute force (DESIGN.md): for every shape of a grid the least
    scale is found by the engine's certified root finder (all shapes in one
    vectorised kernel), the variance ``variance_fn(scale, shape)`` is minimised
    over the grid, and the grid is refined ``refine`` points between the best
    point's neighbours (the optimum may sit on a kink of the variance as a
    function of the shape, notes/flipped-huber-numerics).  ``upper_fn(shape)``
    gives a scale expected to be feasible (widened 3x when it is not).
    """
    rows = []

    def run(bs):
        bs = np.asarray(bs, float)
        up = np.asarray(upper_fn(bs), float)
        res = calibrate_scale(
            noise_fn,
            bs,
            sensitivity,
            epsilon,
            delta,
            compositions,
            None,
            bin_width,
            upper=up,
            lower=up / 4.0,
            num_iterations=num_iterations,
            fallback_upper=3.0 * up,
        )
        var = np.asarray(variance_fn(res.scale, bs), float)
        var = np.where(res.certified, var, np.inf)
        for row in zip(bs, res.scale, var, res.delta_at, strict=True):
            rows.append(row)
        return bs, res, var

    bs, res, var = run(shapes)
    i = int(np.argmin(var))
    if refine and np.isfinite(var[i]):
        lo = bs[max(i - 1, 0)]
        hi = bs[min(i + 1, len(bs) - 1)]
        run(np.linspace(lo, hi, refine + 2)[1:-1])
    table = np.array(rows, float)
    j = int(np.argmin(table[:, 2]))
    best = table[j]
    return ShapeCalibration(
        shape=float(best[0]),
        scale=float(best[1]),
        variance=float(best[2]),
        delta_at=float(best[3]),
        certified=bool(np.isfinite(best[2])),
        grid=table[np.argsort(table[:, 0])][:, :3],
    )


def flipped_huber_noise(scale, shape):
    """``noise_fn`` of flipped Huber: ``FH(alpha = shape * scale, gamma = scale)``."""
    from dpjax.noise.flipped_huber import FlippedHuber

    return FlippedHuber(shape * scale, scale)
