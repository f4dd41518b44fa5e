r"""The engine end to end: profile, epsilon and calibration of a noise after ``K`` uses.

A *use* is one release of ``f(D) + T`` with per-use sensitivity ``Delta``,
optionally on a Poisson subsample of rate ``q``; ``K`` uses are composed
(adaptively: each use's dominating pair is the same).  For every adjacency
(``remove`` and ``add`` when subsampled; one pair otherwise, the noises being
symmetric) the pessimistic PLD is built (:mod:`.discretise`,
:mod:`.subsample`), composed ``K``-fold by FFT (:mod:`.compose`), and queried
(:mod:`.query`); the worse adjacency is reported.  All of it is one jitted
kernel of the *scale* (traced) with static grid and FFT sizes, so calibration
is a root search on ``log scale`` inside ``jit`` (:mod:`.search`: coarse grid
first, then four evaluations at the requested resolution) and vmaps over
targets or noise shapes (STYLE.md items 4-5).

``noise_fn(scale, shape)`` builds the family (``shape`` a traced array, e.g.
``alpha / gamma`` of flipped Huber; ignored by one-parameter families).

**Memory is bounded by a cap, not by ``K``.**  Grid and FFT lengths never exceed
:func:`max_grid_points` (a share of the device's memory, or ``DPJAX_MAX_GRID_POINTS``).
:func:`profile` and :func:`epsilon` follow :func:`plan`: the requested bin width when it
fits, else a coarser one (still pessimistic) together with the Chernoff bound of the
``K``-fold moments, else the Chernoff bound alone (``K ~ 1e30``), with an
:class:`EngineNote`; calibration clamps its sizes to the cap (sound: what a short grid
or window cuts goes to ``+infinity`` or is bounded and added).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax._batching import padded_size
from dpjax.accounting.pld import query as _query
from dpjax.accounting.pld import search, tail_bounds
from dpjax.accounting.pld.compose import (  # noqa: F401  (cap names re-exported)
    BYTES_PER_POINT,
    LOG_WINDOW_TAIL,
    MAX_POINTS_ENV,
    MEMORY_SHARE,
    _floor_pow2,
    _index,
    fast_size,
    max_grid_points,
    moments_only,
    self_compose,
)
from dpjax.accounting.pld.discretise import discretise_pair, noise_pair
from dpjax.accounting.pld.subsample import subsampled_pair
from dpjax.calibrate._certify import log_target
from dpjax.numerics import float64_kernel


class Sizes(NamedTuple):
    """Static plan of the kernel.

    Attributes:
      grid: 1-D loss-grid points; fft: FFT length (0: no composition);
      tail: probability each 1-D pair may leave beyond its ``t`` range (the
        top part goes to ``+infinity``: pessimistic);
      moments_only: compose through the moments only (:func:`.compose.moments_only`:
        the Chernoff bound, no grid; used beyond the grid cap).
    """

    grid: int
    fft: int
    tail: float = 1e-40
    moments_only: bool = False


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
        lower, ok = _index(jnp.floor(pair.loss(pair.t_lo) / bin_width) - 1.0)
        pld = discretise_pair(pair, bin_width, lower, sizes.grid)
        # a loss range whose grid index is not an exact integer: grid and moments fail closed
        pld = dataclasses.replace(
            pld,
            inf_mass=jnp.where(ok, pld.inf_mass, 1.0),
            atom_inf=jnp.where(ok, pld.atom_inf, 1.0),
        )
        if sizes.moments_only:
            pld = moments_only(pld, compositions)
        elif sizes.fft:
            pld = self_compose(pld, compositions, sizes.fft)
        out.append(pld)
    return out


_STATIC = ("noise_fn", "bin_width", "sizes", "subsampled")


def _worse_adjacency(query, doc: str):
    """A jitted kernel ``(scale, shape, sensitivity, q, K, x) -> max over adjacencies of
    query(PLD_K, x)``: build, compose and query every adjacency's PLD, report the worse."""

    @functools.partial(jax.jit, static_argnames=_STATIC)
    @float64_kernel
    def kernel(
        scale,
        shape,
        sensitivity,
        sampling_rate,
        compositions,
        x,
        *,
        noise_fn,
        bin_width,
        sizes,
        subsampled,
    ):
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
        return functools.reduce(jnp.maximum, [query(p, x) for p in plds])

    kernel.__doc__ = doc
    return kernel


log_delta_kernel = _worse_adjacency(
    _query.log_delta_for_epsilon,
    "``log delta(epsilon)`` after ``compositions`` uses (worse adjacency); certified bound.",
)
epsilon_kernel = _worse_adjacency(
    _query.epsilon_for_delta,
    "Least certified ``epsilon`` at ``delta`` after ``compositions`` uses (worse adjacency).",
)


#: Points of the grid on which :func:`_sizing` discretises one use (any bin width).
_SIZING_POINTS = 4096


@functools.partial(jax.jit, static_argnames=("noise_fn", "subsampled", "tail"))
def _sizing(scale, shape, sensitivity, sampling_rate, *, noise_fn, subsampled, tail):
    """Per adjacency: the one-use loss range ``(L(t_lo), L(t_hi))`` and the ``log_mgf`` of
    its pessimistic PLD on :data:`_SIZING_POINTS` points spanning that range (a traced bin
    width: one compile per family, whatever bin width the caller will use)."""
    noise = noise_fn(scale, shape)
    out = []
    for p in _pairs(noise, sensitivity, sampling_rate, subsampled, tail):
        lo, hi = p.loss(p.t_lo), p.loss(p.t_hi)
        h = jnp.maximum((hi - lo) / (_SIZING_POINTS - 3), 1e-12)
        lower, _ = _index(jnp.floor(lo / h) - 1.0)
        out.append((lo, hi, discretise_pair(p, h, lower, _SIZING_POINTS).log_mgf))
    return out


def bucket(n: int) -> int:
    """Round a size up to ``{1, 1.25, 1.5, 1.75} * 2^k`` (few distinct compiles)."""
    n = max(int(n), 8)
    p = 1 << (n.bit_length() - 1)
    for f in (1.0, 1.25, 1.5, 1.75, 2.0):
        if n <= int(p * f):
            return int(p * f)
    return 2 * p


#: Largest grid index the planner uses: indices stay exact float64 integers with room
#: for the kernel's sums (:data:`.compose.MAX_INDEX` is where the kernel fails closed).
_PLAN_INDEX = 2.0**50


class Extents(NamedTuple):
    """Loss extents of every (row, adjacency) pair, in loss units (host arrays).

    Attributes:
      lo, hi: one-use loss range ``[L(t_lo), L(t_hi)]``.
      win_lo, win_hi: the Chernoff window of the ``K``-fold composition (tail 1e-30 each
        side), from the sizing grid's ``log_mgf`` (``nan`` for ``K = 1``).
      compositions: ``K`` (float).
    """

    lo: np.ndarray
    hi: np.ndarray
    win_lo: np.ndarray
    win_hi: np.ndarray
    compositions: float


@float64_kernel


def extents(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, tail=1e-40):
    """Host helper: :class:`Extents` for ``(scale, shape)`` (arrays allowed: every row)."""
    subsampled = sampling_rate is not None
    scale, shape = np.broadcast_arrays(np.asarray(scale, float), np.asarray(shape, float))
    q = jnp.asarray(1.0 if sampling_rate is None else sampling_rate, jnp.float64)
    sens = jnp.asarray(sensitivity, jnp.float64)
    plans = jax.vmap(
        lambda s, b: _sizing(s, b, sens, q, noise_fn=noise_fn, subsampled=subsampled, tail=tail)
    )(jnp.asarray(scale.ravel()), jnp.asarray(shape.ravel()))
    k = float(compositions)
    lo = np.concatenate([np.asarray(p[0], float).ravel() for p in plans])
    hi = np.concatenate([np.asarray(p[1], float).ravel() for p in plans])
    if k == 1.0:
        nan = np.full_like(lo, np.nan)
        return Extents(lo, hi, nan, nan, k)
    mgf = np.concatenate([np.asarray(p[2], float) for p in plans]) * k
    with np.errstate(invalid="ignore", over="ignore"):
        w_hi = np.asarray(tail_bounds.upper_edge(mgf, LOG_WINDOW_TAIL), float)
        w_lo = np.asarray(tail_bounds.lower_edge(mgf, LOG_WINDOW_TAIL), float)
    return Extents(lo, hi, w_lo, w_hi, k)


def _needs(ext: Extents, h: float) -> tuple[float, float, float]:
    """``(grid points, FFT points, largest |index|)`` the engine needs at bin width ``h``
    (floats; ``inf`` where an extent is not finite)."""
    with np.errstate(invalid="ignore", over="ignore"):
        grid = np.max(np.ceil(ext.hi / h) - np.floor(ext.lo / h) + 3.0)
        index = np.max(np.maximum(np.abs(ext.lo), np.abs(ext.hi)) / h + 2.0)
        if ext.compositions == 1.0:
            fft = 0.0
        else:
            fft = np.max(np.ceil((ext.win_hi - ext.win_lo) / h) + 3.0)
            reach = np.max(np.maximum(np.abs(ext.win_lo), np.abs(ext.win_hi)) / h)
            index = max(index * ext.compositions, reach + fft)
    fix = lambda v: float(v) if np.isfinite(v) else math.inf  # noqa: E731
    return fix(grid), fix(fft), fix(index)


def _sizes(grid: float, fft: float, tail: float, cap: int) -> Sizes:
    """Bucketed sizes, each clamped to ``cap`` (a clamped grid or window is still sound:
    mass above the grid goes to ``+infinity``, above the window is bounded and added)."""
    g = bucket(grid) if grid <= cap else _floor_pow2(cap)
    g = g if g <= cap else _floor_pow2(cap)
    if fft == 0.0:
        return Sizes(g, 0, tail)
    f = fast_size(fft) if fft <= cap else _floor_pow2(cap)
    return Sizes(g, f if f <= cap else _floor_pow2(cap), tail)


@float64_kernel
def sizes_for(
    noise_fn,
    scale,
    shape,
    sensitivity,
    sampling_rate,
    compositions,
    bin_width,
    tail: float = 1e-40,
) -> Sizes:
    """Host helper: static sizes valid for ``(scale, shape)`` -- arrays allowed: the sizes
    then cover every row (and, for scale families, any larger scale).

    The grid covers the one-use loss range; the FFT length covers the Chernoff window
    of the ``K``-fold MGF, taken from a fixed-size sizing grid (:func:`_sizing`; a bit
    coarser than ``bin_width``, so a bit wider: the length only decides how much tail
    is cut, and what is cut is bounded and sent to ``+infinity``).  Both are clamped to
    :func:`max_grid_points` (sound, possibly loose: :func:`plan` coarsens instead).
    """
    ext = extents(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, tail)
    grid, fft, _ = _needs(ext, bin_width)
    return _sizes(grid, fft, tail, max_grid_points())


#: Largest grid of the Chernoff-only evaluation of :func:`plan` (its ``log_mgf`` only).
MOMENTS_POINTS = 2**20


class Plan(NamedTuple):
    """How :func:`profile` / :func:`epsilon` evaluate (host; see :func:`plan`).

    Attributes:
      bin_width, sizes: the grid engine's bin width and sizes (``sizes = None``: the
        grid engine cannot run: indices beyond ``2^50`` or non-finite extents);
      moments: ``(bin_width, Sizes)`` of a Chernoff-only evaluation at a fine grid, or
        ``None``;
      note: why the plan differs from the requested bin width (``None`` if it does not).
    """

    bin_width: float
    sizes: Sizes | None
    moments: tuple[float, Sizes] | None
    note: str | None


def _fitting(ext: Extents, h: float, ok) -> float | None:
    """Least ``h 2^k`` (``k >= 0``) at which ``ok(grid, fft, index)`` holds; ``None`` if none."""
    for k in range(0, 2100):
        if math.frexp(h)[1] + k > 1000:  # h 2^k beyond ~1e301
            return None
        hk = math.ldexp(h, k)
        grid, fft, index = _needs(ext, hk)
        if ok(grid, fft, index):
            return hk
        if not (math.isfinite(grid) and math.isfinite(fft)):
            return None
    return None


@float64_kernel


def plan(
    noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width, tail=1e-40
) -> Plan:
    r"""Host helper: the grid the engine can afford for ``K = compositions`` uses.

    At the requested ``bin_width`` when the one-use grid and the ``K``-fold window fit
    in :func:`max_grid_points` points (and every index is an exact float64 integer);
    otherwise the bin width is doubled until they do (still pessimistic, coarser), and a
    Chernoff-only evaluation (:func:`.compose.moments_only`: ``K log M`` of the one-use
    PLD, on at most ``MOMENTS_POINTS`` points) is added: the caller reports the minimum of
    the two certified answers.  When no bin width fits (e.g. ``K ~ 1e30``: indices
    beyond ``2^50``), only the Chernoff bound answers.  Memory is bounded by the cap, not
    by ``K``.
    """
    cap = max_grid_points()
    ext = extents(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, tail)
    h = float(bin_width)

    h_eng = _fitting(ext, h, lambda g, f, i: g <= cap and f <= cap and i < _PLAN_INDEX)
    if h_eng == h:
        grid, fft, _ = _needs(ext, h)
        return Plan(h, _sizes(grid, fft, tail, cap), None, None)
    sizes = None
    if h_eng is not None:
        grid, fft, _ = _needs(ext, h_eng)
        sizes = _sizes(grid, fft, tail, cap)
    moments = None
    if ext.compositions > 1.0:
        one_use = np.max(np.maximum(np.abs(ext.lo), np.abs(ext.hi)))
        h_mom = _fitting(
            ext, h, lambda g, f, i: g <= min(cap, MOMENTS_POINTS) and one_use < _PLAN_INDEX * h
        )
        if h_mom is not None:
            grid, _, _ = _needs(ext, h_mom)
            moments = (h_mom, Sizes(_sizes(grid, 0.0, tail, cap).grid, 0, tail, True))
    why = (
        f"the PLD grid for {ext.compositions:g} compositions at bin width {h:g} exceeds "
        f"{cap} points ({MAX_POINTS_ENV}; default {MEMORY_SHARE:g} of the device memory at "
        f"{BYTES_PER_POINT} bytes a point)"
    )
    if sizes is not None:
        note = f"{why}: grid coarsened to bin width {h_eng:g}"
        if moments is not None:
            note += ", minimum with the Chernoff bound of the composed moments"
    elif moments is not None:
        note = f"{why} or exact indices: Chernoff bound of the composed moments only"
    else:
        note = f"{why}: no grid fits, no bound certified"
    return Plan(h_eng if h_eng is not None else h, sizes, moments, note)


class EngineNote(UserWarning):
    """The PLD engine answered on a coarser grid than asked, or by its Chernoff bound
    alone, to stay within :func:`max_grid_points` (the answer is still certified)."""


def _scalar_args(scale, shape, sensitivity, sampling_rate, compositions):
    return (
        jnp.asarray(scale, jnp.float64),
        jnp.asarray(shape, jnp.float64),
        jnp.asarray(sensitivity, jnp.float64),
        jnp.asarray(1.0 if sampling_rate is None else sampling_rate, jnp.float64),
        jnp.asarray(float(compositions), jnp.float64),  # float: K may exceed int64
    )


def _evaluate(kernel, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h):
    """Run ``kernel`` as :func:`plan` says: the minimum of the certified answers it plans
    (``log delta``, or ``epsilon``); a note (:class:`EngineNote`) when it coarsened."""
    p = plan(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, h)
    args = _scalar_args(scale, shape, sensitivity, sampling_rate, compositions)
    x = jnp.asarray(x, jnp.float64)
    runs = [(p.bin_width, p.sizes)] if p.sizes is not None else []
    if p.moments is not None:
        runs.append(p.moments)
    # nothing certifiable: log delta = 0 (delta = 1), epsilon = inf
    fallback = 0.0 if kernel is log_delta_kernel else np.inf
    out = np.full(np.shape(x), fallback)
    for bin_width, sizes in runs:
        got = kernel(
            *args,
            x,
            noise_fn=noise_fn,
            bin_width=bin_width,
            sizes=sizes,
            subsampled=sampling_rate is not None,
        )
        got = np.asarray(got, np.float64)
        out = np.minimum(out, np.where(np.isnan(got), fallback, got))
    if p.note is not None:
        warnings.warn(p.note, EngineNote, stacklevel=3)
    return out


@float64_kernel
def profile(
    noise_fn, scale, shape, sensitivity, epsilon, compositions=1, sampling_rate=None, bin_width=1e-4
):
    """``delta(epsilon)`` (array) of ``noise_fn(scale, shape)`` after ``compositions`` uses."""
    return np.exp(
        _evaluate(
            log_delta_kernel,
            noise_fn,
            scale,
            shape,
            sensitivity,
            epsilon,
            compositions,
            sampling_rate,
            bin_width,
        )
    )


@float64_kernel
def epsilon(
    noise_fn, scale, shape, sensitivity, delta, compositions=1, sampling_rate=None, bin_width=1e-4
):
    """Least certified ``epsilon`` (array) at ``delta`` after ``compositions`` uses."""
    return _evaluate(
        epsilon_kernel,
        noise_fn,
        scale,
        shape,
        sensitivity,
        delta,
        compositions,
        sampling_rate,
        bin_width,
    )


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
    ) -> search.Root:
        def one(shape, eps, level, a, b):
            f = _objective(shape, sensitivity, sampling_rate, compositions, eps, level, **static)
            return method(f, a, b, tol)

        return jax.vmap(one)(shape, epsilon, log_level, a, b)

    return kernel


#: :func:`.search.illinois` on ``log scale`` in ``[lo, hi]`` (``a = lo``, ``b = hi``).
search_kernel = _batched(lambda f, lo, hi, tol: search.illinois(f, jnp.log(hi), jnp.log(lo), tol))
#: :func:`.search.warm_bracket` from ``x0 = log scale`` with a slope (``a = x0``, ``b = slope``).
warm_kernel = _batched(search.warm_bracket)


#: Relative margin on delta of the engine's search level (see :func:`calibrate_scale`).
SEARCH_MARGIN = 1e-6
#: Bin-width factor of the coarse stage of :func:`calibrate_scale`.
COARSEN = 16
#: Tolerance (on ``log scale``) of the coarse stage of :func:`calibrate_scale`.
COARSE_TOLERANCE = 1e-5


def _shard(*arrays, use_devices: bool = True):
    """Flatten the batch and pad it (repeating the last row) to a power of two, so that
    batches of similar size share one compiled kernel; with several devices, also to a
    multiple of their number, sharded along a 1-D mesh (``jax.sharding``): the vectorised
    kernel then runs one slice of the calibration grid per device.  Results equal the
    single-device run (same program per row).  Returns the arrays and the true length."""
    flat = [np.asarray(a, np.float64).reshape(-1) for a in np.broadcast_arrays(*arrays)]
    devices = jax.devices() if use_devices else jax.devices()[:1]
    n = flat[0].size
    m = padded_size(n)
    if len(devices) < 2 or n < 2:
        return [jnp.asarray(np.pad(a, (0, m - n), mode="edge")) for a in flat], n
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    m = -(-m // len(devices)) * len(devices)
    mesh = Mesh(np.asarray(devices), ("grid",))
    sharding = NamedSharding(mesh, PartitionSpec("grid"))
    return [jax.device_put(np.pad(a, (0, m - n), mode="edge"), sharding) for a in flat], n


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
    batch, _ = _shard(shape[rows], eps[rows], level[rows], a[rows], b[rows], use_devices=shard)
    out = kernel(batch[0], *scalars, batch[1], batch[2], batch[3], batch[4], tol, **static)
    return search.Root(*(np.asarray(x)[:k] for x in out))


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

    Two resolutions, one answer: the root is located by :func:`.search.illinois` on a
    grid ``coarsen`` times coarser (``coarsen**2`` cheaper per evaluation, but
    close in scale), then settled at ``bin_width`` by :func:`.search.warm_bracket` --
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
                out = search.Root(*(np.array(x) for x in root))
            else:
                where = np.searchsorted(rows, todo)
                for name, value in root._asdict().items():
                    getattr(out, name)[where] = value
            too_small = root.status == search.FEASIBLE_BAD
            too_big = root.status == search.INFEASIBLE_GOOD
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
        warm = coarse.status == search.OK
    else:
        warm = np.zeros(eps.size, bool)
    final = search.Root(
        good=np.full(eps.size, np.nan),
        aux=np.full((eps.size, 2), np.nan),
        bad=np.full(eps.size, np.nan),
        slope=np.full(eps.size, np.nan),
        status=np.full(eps.size, search.NOT_CONVERGED, np.int32),
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
    rest = all_rows[final.status != search.OK]
    if rest.size:
        store(rest, bracketed_search(bin_width, rest, tolerance))
    status = final.status.reshape(out_shape)
    scale = final.aux[:, 1].reshape(out_shape)
    log_d = final.aux[:, 0].reshape(out_shape)
    ok = (status == search.OK) & (log_d <= level.reshape(out_shape))
    scale = np.where(np.isfinite(scale), scale, upper_b.reshape(out_shape))
    return ScaleCalibration(scale, np.exp(log_d), ok, status)


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


@float64_kernel
def chernoff_epsilon(log_mgf, delta):
    """Convenience: Chernoff-only epsilon of a composed ``log_mgf`` (see :mod:`.tail_bounds`)."""
    return tail_bounds.epsilon_chernoff(log_mgf, jnp.log(jnp.asarray(delta)))


class ShapeCalibration(NamedTuple):
    """Per target (arrays of the targets' shape): the least certified variance found."""

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
) -> ShapeCalibration:
    r"""Least-variance ``(shape, scale)`` meeting each ``(epsilon, delta)`` after ``K`` uses.

    Structure, not brute force (DESIGN.md): for every shape of a grid the least
    scale is found by the engine's certified root finder, the variance
    ``variance_fn(scale, shape)`` is minimised over the grid, and the grid is refined
    ``refine`` points between the best point's neighbours (the optimum may sit on a
    kink of the variance as a function of the shape, notes/flipped-huber-numerics).
    That survey runs on a grid ``coarsen`` times coarser (certified there too, only
    looser); the ``finalists - 1`` best shapes and the largest one are then calibrated
    at ``bin_width`` in a bracket around their survey scales, and the least certified
    variance of all is returned.  Every stage is one batched kernel over (targets x
    shapes), so a table of targets costs a few compilations,
    not a few per target.  ``upper_fn(shapes)`` (one row of shapes per target) gives
    scales expected to be feasible (widened 3x when they are not).
    """
    eps, dl = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    out_shape = eps.shape
    eps, dl = eps.ravel(), dl.ravel()
    targets = np.arange(eps.size)
    rows = []
    plan: dict = {}

    def run(bs, h, stages, up=None, low=None):
        """Calibrate the shapes ``bs`` (targets x m) at bin width ``h``; their variances."""
        bs = np.asarray(bs, float)
        e = np.broadcast_to(eps[:, None], bs.shape)
        d = np.broadcast_to(dl[:, None], bs.shape)
        up = np.asarray(upper_fn(bs), float) if up is None else up
        low = up / 4.0 if low is None else low
        res = calibrate_scale(
            noise_fn,
            bs,
            sensitivity,
            e,
            d,
            compositions,
            None,
            h,
            upper=up,
            lower=low,
            tolerance=tolerance,
            fallback_upper=3.0 * up,
            coarsen=stages,
            plan=plan,
            pow2_sizes=True,
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
                strict=True,
            )
        )
        return var

    survey_h = bin_width * max(coarsen, 1)
    grid = np.broadcast_to(np.asarray(shapes, float), (eps.size, len(shapes)))
    var = run(grid, survey_h, 1)
    if refine:
        i = np.argmin(var, axis=1)
        lo = grid[targets, np.maximum(i - 1, 0)]
        hi = grid[targets, np.minimum(i + 1, grid.shape[1] - 1)]
        run(lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, refine + 2)[1:-1], survey_h, 1)
    table = np.array(rows, float)
    if coarsen > 1 and finalists:
        # the finalists at bin_width, bracketed by their survey scales (certified on the
        # coarser grid, so nearly feasible here): one search, no coarse stage
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
        run(best[..., 0], bin_width, 1, up=scales * (1 + 1e-6), low=scales * (1 - 2e-2))
        table = np.array(rows, float)
    pick = np.empty((eps.size, 6))
    for k in targets:
        mine = table[table[:, 0] == k]
        pick[k] = mine[int(np.argmin(mine[:, 3]))]
    shape_, scale_, var_, dat_ = (pick[:, j].reshape(out_shape) for j in (1, 2, 3, 4))
    return ShapeCalibration(
        shape=shape_,
        scale=scale_,
        variance=var_,
        delta_at=dat_,
        certified=np.isfinite(var_),
        grid=table[np.lexsort((table[:, 5], table[:, 1], table[:, 0]))][:, [0, 1, 2, 3, 5]],
    )


def flipped_huber_noise(scale, shape):
    """``noise_fn`` of flipped Huber: ``FH(alpha = shape * scale, gamma = scale)``."""
    from dpjax.noise.flipped_huber import FlippedHuber

    return FlippedHuber(shape * scale, scale)
