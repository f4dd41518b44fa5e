r"""Planning the engine's grid: static sizes for a family after ``K`` uses, within a memory cap.

The PLD kernels (:mod:`.engine`) take their loss-grid and FFT lengths as static
arguments (one compile per size).  :func:`sizes_for` derives them from one use's loss
range and the Chernoff window of the ``K``-fold moments, both read off ``P`` on a fixed
grid of ``t`` by one compiled program (:func:`_sizing`: one per family, whatever the bin
width and ``K``);
:func:`plan` decides what the engine can afford.  **Memory is bounded by a cap, not by
``K``**: grid and FFT lengths never exceed
:func:`~dpjax.accounting.pld.compose.max_grid_points` (a share of the device's memory,
or ``DPJAX_MAX_GRID_POINTS``); the plan is the requested bin width when it fits, else a
coarser one (still pessimistic) together with the Chernoff bound of the ``K``-fold
moments, else the Chernoff bound alone (``K ~ 1e30``), with an :class:`EngineNote`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import logsumexp

from dpjax._batching import FINE_LADDER_ABOVE, device_array, ladder, map_leading, padded_size
from dpjax._batching import rungs as _rungs
from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld._pld import LAMBDAS
from dpjax.accounting.pld.compose import (  # noqa: F401  (cap names re-exported)
    BYTES_PER_POINT,
    LOG_WINDOW_TAIL,
    MAX_POINTS_ENV,
    MEMORY_SHARE,
    floor_pow2,
    max_grid_points,
    moments_only,
)
from dpjax.accounting.pld.discretise import intervals
from dpjax.accounting.pld.subsample import map_adjacencies
from dpjax.numerics import float64_kernel
from dpjax.numerics.export_cache import call_cached


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


#: Points of the ``t`` grid on which :func:`_sizing` reads one use's moments (any bin width).
_SIZING_POINTS = 4096


@functools.partial(jax.jit, static_argnames=("noise_fn", "subsampled"))
def _sizing(
    scale, shape, sensitivity, sampling_rate, compositions, tail, window_log_tail, *, noise_fn,
    subsampled,
):
    """Per adjacency and row (1-D ``scale``, ``shape``): the one-use loss range
    ``(L(t_lo), L(t_hi))``, the Chernoff window ``(x_lo, x_hi)`` of the ``K``-fold sum and
    the one-use loss spread, all from ``P`` on :data:`_SIZING_POINTS` points of ``[t_lo,
    t_hi]`` (the window from :func:`_log_mgf_on_t_grid`, the spread :func:`loss_spread`;
    a traced ``K``, tail cut and window tail: one compiled program per family and row
    count, whatever ``K`` and tail level the caller uses)."""

    def ranges(p):
        lo, hi = p.loss(p.t_lo), p.loss(p.t_hi)
        t = jnp.linspace(p.t_lo, p.t_hi, _SIZING_POINTS)
        # the pair's joint tails (one special-function call where it has one): a smaller
        # sizing program than separate log_sf_p and log_cdf_p calls (Q's two are unused)
        log_sf, log_cdf = p.all_tails(t)[:2]
        mid = p.loss(0.5 * (t[:-1] + t[1:]))
        mass, _, _ = intervals(log_sf, log_cdf)
        mgf = _log_mgf_on_t_grid(mid, mass, log_cdf[0], lo) * compositions
        w_lo = tail_bounds.lower_edge(mgf, LOG_WINDOW_TAIL)
        w_hi = tail_bounds.upper_edge(mgf, window_log_tail)
        return lo, hi, w_lo, w_hi, _spread(log_sf, log_cdf, mid)

    def one(scale, shape):
        # one traced program for both adjacencies, stacked on a leading axis
        stacked = map_adjacencies(
            ranges, noise_fn(scale, shape), sensitivity, sampling_rate, subsampled, tail
        )
        return [tuple(v[i] for v in stacked) for i in range(2 if subsampled else 1)]

    return map_leading(one, scale, shape)


def _log_mgf_on_t_grid(mid_loss, mass, log_below, bottom) -> Array:
    r"""``log E_P[e^{lambda L}; L < inf]`` on :data:`.LAMBDAS` by the midpoint rule in ``t``.

    .. math:: \log M(\lambda) = \log\Big(P(T \le t_{lo})\, e^{\lambda L(t_{lo})}
              + \sum_i P(t_i < T \le t_{i+1})\, e^{\lambda L((t_i + t_{i+1}) / 2)}\Big)

    (the moment generating function of one use's privacy loss whose ``K``-th power places
    the Chernoff window; Sommer, Meiser & Mohammadi 2019).  Each bin's mass sits at the
    loss of its midpoint, as in :func:`loss_spread`: no shift of the mean, which ``K``
    uses would add up (a loss rounded to a bin's end shifts each use
    by up to half a bin, and the ``K``-fold window by ``K`` times that); mass above
    ``t_hi`` or at an infinite loss is left out (the pessimistic PLD sends it to
    ``+infinity``), mass below ``t_lo`` sits at ``L(t_lo)`` (the PLD lumps it onto its
    bottom point).  Only a placement (the window of :func:`extents`): any moments size a
    grid soundly, and what the composition's window leaves out is bounded by the composed
    PLD's own moments and added (:func:`.compose.read_window`).

    Args:
      mid_loss: ``L`` at the midpoints of the ``t`` grid's bins.
      mass: ``P`` of each bin (:func:`~dpjax.accounting.pld.discretise.intervals`).
      log_below: ``log P(T <= t_lo)``.
      bottom: ``L(t_lo)`` (finite).

    Returns:
      ``(len(LAMBDAS),)`` log moments.
    """
    lam = jnp.asarray(LAMBDAS)[:, None]
    keep = (mass > 0.0) & jnp.isfinite(mid_loss)
    log_mass = jnp.where(keep, jnp.log(jnp.where(keep, mass, 1.0)), -jnp.inf)
    terms = log_mass[None, :] + lam * jnp.where(keep, mid_loss, 0.0)[None, :]
    return jnp.logaddexp(logsumexp(terms, axis=1), log_below + lam[:, 0] * bottom)


def loss_spread(pair) -> Array:
    r"""Standard deviation of one use's privacy loss ``L(T)``, ``T ~ P``, by quadrature in ``t``.

    .. math:: s_1^2 = \sum_i P(t_i < T \le t_{i+1})\,\big(L(\tfrac{t_i + t_{i+1}}{2})
              - \bar L\big)^2 \Big/ \sum_i P(t_i < T \le t_{i+1})

    on :data:`_SIZING_POINTS` equal steps of ``[t_lo, t_hi]`` (bin masses as differences of
    the CDF below the median and of the survival function above it; bins whose midpoint
    loss is infinite are left out).  The loss is smooth in ``t`` whatever its spread in loss
    units, so this resolves a Poisson-subsampled use at rate ``q ~ 1e-6`` (a spread of order
    ``q``) where a loss grid spanning the same range cannot.  It only sizes the grid
    (:func:`step_width`): any bin width is pessimistic, this one decides how tight.

    Args:
      pair: a :class:`~dpjax.accounting.pld.discretise.MonotonePair`.

    Returns:
      ``s_1`` (``nan`` where no bin has finite loss and mass).
    """
    t = jnp.linspace(pair.t_lo, pair.t_hi, _SIZING_POINTS)
    return _spread(*pair.all_tails(t)[:2], pair.loss(0.5 * (t[:-1] + t[1:])))


def _spread(log_sf, log_cdf, mid_loss) -> Array:
    """:func:`loss_spread` from ``P``'s ``log sf`` and ``log cdf`` at the ``t`` grid's points
    and the loss at its bins' midpoints."""
    upper = log_sf[:-1] < math.log(0.5)
    above = jnp.exp(log_sf[:-1]) - jnp.exp(log_sf[1:])
    mass = jnp.where(upper, above, jnp.exp(log_cdf[1:]) - jnp.exp(log_cdf[:-1]))
    mass = jnp.where(jnp.isfinite(mid_loss) & (mass > 0.0), mass, 0.0)
    loss = jnp.where(mass > 0.0, mid_loss, 0.0)
    total = jnp.sum(mass)
    mean = jnp.sum(mass * loss) / total
    return jnp.sqrt(jnp.sum(mass * jnp.square(loss - mean)) / total)


#: Largest grid index the planner uses: indices stay exact float64 integers with room
#: for the kernel's sums (:data:`.compose.MAX_INDEX` is where the kernel fails closed).
_PLAN_INDEX = 2.0**50


class Extents(NamedTuple):
    """Loss extents of every (row, adjacency) pair, in loss units (host arrays).

    Attributes:
      lo, hi: one-use loss range ``[L(t_lo), L(t_hi)]``.
      win_lo, win_hi: the Chernoff window of the ``K``-fold composition (tail 1e-30 each
        side), from one use's moments on the sizing ``t`` grid (``nan`` for ``K = 1``).
      compositions: ``K`` (float).
      spread: one use's loss standard deviation under ``P`` (:func:`loss_spread`).
    """

    lo: np.ndarray
    hi: np.ndarray
    win_lo: np.ndarray
    win_hi: np.ndarray
    compositions: float
    spread: np.ndarray | None = None


@float64_kernel
def extents(
    noise_fn, scale, shape, sensitivity, sampling_rate, compositions, tail=1e-40,
    window_log_tail=LOG_WINDOW_TAIL,
):
    r"""Host helper: :class:`Extents` for ``(scale, shape)`` (arrays allowed: every row).

    .. math:: [L(t_{lo}), L(t_{hi})],\qquad [x_{lo}, x_{hi}]:\ P(S_K \notin [x_{lo}, x_{hi}])
              \le 2 \cdot 10^{-30},\ \log M_{S_K} = K \log M_L

    (the one-use loss range and the Chernoff window of the ``K``-fold sum, from one use's
    moments on a grid of ``t`` by the midpoint rule, :func:`_log_mgf_on_t_grid`; Sommer,
    Meiser & Mohammadi 2019).

    Args:
      noise_fn: ``(scale, shape) -> noise`` of the family (hashable: a jit static).
      scale: noise scale(s).
      shape: noise shape parameter(s) (broadcast against ``scale``).
      sensitivity: the shift ``Delta > 0``.
      sampling_rate: ``q`` in ``(0, 1]``, or ``None`` (no subsampling).
      compositions: ``K >= 1``.
      tail: probability each one-use pair may leave beyond its ``t`` range.
      window_log_tail: log of the mass the window may leave above its top (the bottom
        leaves ``1e-30``).

    Returns:
      The :class:`Extents` of every (row, adjacency) pair.
    """
    subsampled = sampling_rate is not None
    scale, shape = np.broadcast_arrays(np.asarray(scale, float), np.asarray(shape, float))
    q = device_array(1.0 if sampling_rate is None else sampling_rate, np.float64)
    sens = device_array(sensitivity, np.float64)
    k = float(compositions)
    # rows padded to a power of two (cycled): one compiled program per bucket of row counts
    n = scale.size
    pad = lambda x: np.resize(x.ravel(), padded_size(n))  # noqa: E731
    plans = call_cached(  # a warm process loads its compiled program (export cache)
        _sizing, device_array(pad(scale)), device_array(pad(shape)), sens, q,
        *(device_array(v, np.float64) for v in (k, tail, window_log_tail)),
        static_argnames=("noise_fn", "subsampled"), noise_fn=noise_fn, subsampled=subsampled,
    )
    lo, hi, w_lo, w_hi, spread = (
        np.concatenate([np.asarray(p[j], float)[:n] for p in plans]) for j in range(5)
    )
    if k == 1.0:
        nan = np.full_like(lo, np.nan)
        return Extents(lo, hi, nan, nan, k, spread)
    return Extents(lo, hi, w_lo, w_hi, k, spread)


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


def _ladder_cap(n: float, cap: int) -> int:
    """:func:`~dpjax._batching.ladder` of ``n`` if within ``cap``, else the largest ladder
    size ``<= cap`` (a clamped grid or window is still sound: mass above the grid goes to
    ``+infinity``, above the window is bounded and added)."""
    if n <= cap and ladder(n) <= cap:
        return ladder(n)
    p = 2 * floor_pow2(cap)  # the octave (p/2, p] holds cap
    return max(m for m in [p // 2, *_rungs(p)] if m <= cap)


def _sizes(grid: float, fft: float, tail: float, cap: int) -> Sizes:
    """Sizes on the :func:`~dpjax._batching.ladder`, each clamped to ``cap``
    (:func:`_ladder_cap`)."""
    g = _ladder_cap(grid, cap)
    if fft == 0.0:
        return Sizes(g, 0, tail)
    return Sizes(g, _ladder_cap(fft, cap), tail)


@float64_kernel
def sizes_for(
    noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width,
    tail: float = 1e-40,
) -> Sizes:
    r"""Host helper: static sizes valid for ``(scale, shape)`` (arrays allowed: every row).

    .. math:: \text{grid} \ge \frac{L(t_{hi}) - L(t_{lo})}{h} + 3,\qquad
              \text{fft} \ge \frac{x_{hi} - x_{lo}}{h} + 3

    (the one-use loss range and the Chernoff window of the ``K``-fold MGF, :func:`extents`),
    each on the :func:`~dpjax._batching.ladder` and clamped to :func:`max_grid_points`
    (sound, possibly loose: :func:`plan` coarsens instead).  The window is taken from one
    use's moments on a fixed grid of ``t`` (the midpoint rule): the length only decides
    how much tail is cut, and what is cut is bounded and sent to ``+infinity``.
    With arrays the sizes cover every row (and, for scale families, any larger scale).

    Args:
      noise_fn, scale, shape, sensitivity, sampling_rate, compositions, tail: as in
        :func:`extents`.
      bin_width: the grid spacing ``h`` the kernel will use.

    Returns:
      The static :class:`Sizes`.
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


#: Bin width per unit of the per-use loss spread (:func:`step_width`).
STEP_FRACTION = 0.09
#: Width of the ``K``-fold Chernoff window (``1e-30`` each side) per composed standard
#: deviation, for a sum near normal: ``2 sqrt(2 log 1e30) = 23.5``, rounded up.
_WINDOW_SDS = 24.0


def step_width(ext: Extents) -> float:
    r"""Host helper: the widest bin the per-use loss spread allows (``inf`` for ``K = 1``).

    .. math:: h_{\text{step}} = 0.09\, s_1,\qquad
              s_1 = \min\Big(\frac{x_{hi} - x_{lo}}{24 \sqrt K},\ \text{sd}_P(L)\Big)

    ``s_1`` is the per-use loss spread: the smaller of the one read off the ``K``-fold
    Chernoff window (the window of a near-normal sum spans ``2 sqrt(2 log 1e30) ~ 23.5``
    standard deviations, more for a skewed one) and the standard deviation of one use's
    loss (:func:`loss_spread`).  The window overstates a heavy-tailed use's spread many
    times (a Poisson-subsampled Gaussian at ``sigma = 0.8``, ``q = 1e-6``, ``K = 1e7``:
    ``5.3e-5`` against ``1.94e-6``).  Connect-the-dots splits each use's loss onto the
    two grid points around it, adding at most ``h^2 / 4`` of variance a use; at ``h <= 0.09
    s_1`` that is below ``0.2%`` of the per-use variance, so the composed epsilon moves by
    about ``10^{-3}`` of the composed spread, whatever ``K``.  A Poisson-subsampled use at
    rate ``q`` has a spread of order ``q``: the grid follows it.

    Args:
      ext: the :class:`Extents` (every row and adjacency; the narrowest window decides).

    Returns:
      ``h_step`` (``inf`` where no window is known).
    """
    if ext.compositions <= 1.0:
        return math.inf
    with np.errstate(invalid="ignore"):
        width = np.asarray(ext.win_hi - ext.win_lo, np.float64)
    spreads = width / (_WINDOW_SDS * math.sqrt(ext.compositions))
    if ext.spread is not None:
        spreads = np.fmin(spreads, np.asarray(ext.spread, np.float64))
    spreads = spreads[np.isfinite(spreads) & (spreads > 0)]
    if spreads.size == 0:
        return math.inf
    return STEP_FRACTION * float(np.min(spreads))


#: Above this many grid or FFT points the planner cuts each use's pair at the tail ``K``
#: uses may lose (:func:`long_grid_tail`, :func:`tilted_sizes`) where that shortens the grid.
LONG_GRID = FINE_LADDER_ABOVE
#: Most grid or FFT points the per-use spread may refine the grid to (:func:`plan`): beyond,
#: the finest bin width ``h 2^k`` within it (a composition of ``2^23`` points takes seconds).
FINE_GRID_LIMIT = 2**23
#: Share of :data:`.engine.TILT_BELOW` (``1e-7``) that the tails cut off ``K`` uses may add to
#: every ``delta`` when a finer grid needs them (:func:`long_grid_tail`).
TAIL_BUDGET = 1e-10


def long_grid_tail(compositions: float) -> float:
    r"""The per-use tail a fine grid for ``K`` uses may cut (a whole decade; ``K >= 1``).

    .. math:: \tau_K = 10^{\lfloor \log_{10} (10^{-10} / K) \rfloor}

    What each use leaves beyond its ``t`` range goes to ``+infinity`` (pessimistic), so ``K``
    uses add at most ``K tau_K <= 10^{-10}`` to every ``delta``: a thousandth of the
    ``delta = 10^{-7}`` below which the tilted composition answers instead (with tails of
    its own).  A heavy-tailed use (Poisson-subsampled Gaussian at ``q = 1e-6``) has its loss
    range fall from ``3.6`` at the default ``1e-40`` to ``0.085`` at ``tau = 1e-17``: the grid
    its spread asks for then fits.

    Args:
      compositions: ``K``.

    Returns:
      ``tau_K`` (at least the default ``1e-40``).
    """
    level = math.floor(math.log10(TAIL_BUDGET / max(float(compositions), 1.0)))
    return max(10.0**level, 1e-40)


#: Factor on every requested bin width (:func:`refined`; ``1`` outside it).
_REFINE = contextvars.ContextVar("dpjax_pld_refine", default=1.0)


@contextlib.contextmanager
def refined(factor: float):
    """Within the block, :func:`plan` starts from ``factor`` times the requested bin width
    (a power of two below one: a finer grid everywhere the engine plans one; how
    ``dpjax.account(..., epsilon_error=...)`` narrows a bracket).

    Args:
      factor: a number in ``(0, 1]``.

    Raises:
      ValueError: ``factor`` outside ``(0, 1]``.
    """
    f = float(factor)
    if not 0.0 < f <= 1.0:
        raise ValueError(f"factor must be in (0, 1], got {factor!r}")
    token = _REFINE.set(f * _REFINE.get())
    try:
        yield
    finally:
        _REFINE.reset(token)


def refinement() -> float:
    """The factor :func:`refined` puts on requested bin widths now (``1`` outside it)."""
    return _REFINE.get()


@float64_kernel
def plan(
    noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width, tail=1e-40
) -> Plan:
    r"""Host helper: the grid the engine can afford for ``K = compositions`` uses.

    .. math:: h_{\text{engine}} = \min\{h\,2^k :\ \text{grid}(h 2^k),\ \text{fft}(h 2^k)
              \le \text{cap},\ |\text{index}| < 2^{50}\}

    At the requested ``bin_width`` when the one-use grid and the ``K``-fold window fit in
    :func:`max_grid_points` points (and every index is an exact float64 integer);
    otherwise the bin width is doubled until they do (still pessimistic, coarser), and a
    Chernoff-only evaluation (:func:`.compose.moments_only`: ``K log M`` of the one-use
    PLD, on at most ``MOMENTS_POINTS`` points) is added: the caller reports the minimum of
    the two certified answers.  When no bin width fits (e.g. ``K ~ 1e30``), only the
    Chernoff bound answers.  Memory is bounded by the cap, not by ``K``.

    The requested width is first scaled by :func:`refined`'s factor and, where the per-use
    loss spread asks for less, lowered to ``h 2^{-k} <=`` :func:`step_width` (or the finest
    ``h 2^{-j}``, ``j <= k``, within :data:`FINE_GRID_LIMIT` points); where that grid is
    long (over :data:`LONG_GRID` points), each use's pair is cut at :func:`long_grid_tail`
    instead of ``tail`` when that shortens it (the returned sizes carry the tail).

    Args:
      noise_fn, scale, shape, sensitivity, sampling_rate, compositions, tail: as in
        :func:`extents`.
      bin_width: the requested grid spacing ``h``.

    Returns:
      The :class:`Plan`; its ``note`` says why it differs from the request (``None`` when
      it does not).
    """
    cap = max_grid_points()
    ext = extents(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, tail)
    bin_width = h = float(bin_width) * _REFINE.get()
    h_step = step_width(ext)
    if h_step < h:  # the per-use loss spread asks for a finer grid: h 2^-k below h_step
        h = math.ldexp(h, -math.ceil(math.log2(h / h_step)))
        longest = lambda e: max(_needs(e, h)[:2])  # noqa: E731
        if longest(ext) > LONG_GRID and long_grid_tail(compositions) > tail:
            # a long grid: a tail that K uses may cut shortens a heavy-tailed use's range
            deep = long_grid_tail(compositions)
            ext_deep = extents(
                noise_fn, scale, shape, sensitivity, sampling_rate, compositions, deep
            )
            if longest(ext_deep) < longest(ext):
                ext, tail = ext_deep, deep
        # the finest h 2^k within FINE_GRID_LIMIT points (the spread asks; running costs)
        limit = min(cap, FINE_GRID_LIMIT)
        h_fit = _fitting(ext, h, lambda g, f, i: g <= limit and f <= limit and i < _PLAN_INDEX)
        # none below the requested width: the requested width (coarsened as before)
        h = h_fit if h_fit is not None and h_fit < bin_width else bin_width

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


def tilt_level(log_delta: float) -> int:
    r"""``log10`` of the tail ``tau`` the tilted composition resolves ``delta`` with.

    .. math:: \text{level} = -\max\Big(40,\ \min\big(300,\
              10 \big\lceil (14.5 - \log_{10}\delta) / 10 \big\rceil\big)\Big)

    Whole decades of ten (few compiles); the steps fall at ``delta = 3.16 \cdot 10^{-j}``,
    off the round targets users ask for, so a ``delta`` and the ``delta(epsilon)`` just below
    it (a certificate's re-check) share one level.

    Args:
      log_delta: natural ``log`` of ``delta``.

    Returns:
      The level, an integer in ``[-300, -40]``.
    """
    e = 10 * math.ceil((14.5 - log_delta / math.log(10.0)) / 10.0)
    return -max(40, min(300, e))


#: ``log`` of the share of ``delta`` that the tails cut off ``K`` uses may add to a tilted
#: answer when its grid is long (:func:`tilted_sizes`).
_LOG_TILT_TAIL_SHARE = math.log(1e-3)


@float64_kernel
def tilted_sizes(
    noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width, log_delta
) -> Sizes | None:
    r"""Host helper: static sizes of the tilted composition (:mod:`.tilted`) down to ``delta``.

    .. math:: \tau = 10^{\text{tilt\_level}(\delta)} \le \min(10^{-40},\ 10^{-14}\delta),\qquad
              \text{fft} \ge \frac{x_{hi}(\tau) - x_{lo}(10^{-30})}{h} + 3

    the one-use pairs cut at ``tau`` (so their mass at ``+infinity``, ``K tau``, is far below
    ``delta`` for ``K`` up to ``10^6``; where that grid or window is longer than
    :data:`LONG_GRID` points, at the larger ``tau = 10^{\lfloor \log_{10}(10^{-3}
    \delta / K) \rfloor}`` if it is shorter there, so ``K tau <= 10^{-3} \delta``; below
    ``TAIL`` each pair is also charged what its grid may lose to float64 underflow,
    :mod:`.underflow`) and the window's top at the Chernoff edge leaving ``tau`` (what it
    cuts goes to ``+infinity``).  ``None`` when ``K = 1`` (nothing to compose) or the sizes
    exceed :func:`max_grid_points` or exact indices (the plain engine still answers).

    Args:
      noise_fn, scale, shape, sensitivity, sampling_rate, compositions: as in
        :func:`extents`.
      bin_width: the grid spacing ``h``.
      log_delta: ``log`` of the least ``delta`` the tilted answers should resolve.

    Returns:
      The :class:`Sizes`, or ``None``.
    """
    k = float(compositions)
    if not k > 1.0 or not math.isfinite(log_delta):
        return None
    cap = max_grid_points()

    def sized(log_tau):
        ext = extents(
            noise_fn, scale, shape, sensitivity, sampling_rate, k, math.exp(log_tau),
            window_log_tail=log_tau,
        )
        return _needs(ext, float(bin_width))

    log_tau = tilt_level(log_delta) * math.log(10.0)
    grid, fft, index = sized(log_tau)
    # a long grid: the per-use tail K uses may cut, a thousandth of delta (whole decades)
    log_deep = math.log(10.0) * math.floor((log_delta + _LOG_TILT_TAIL_SHARE - math.log(k))
                                           / math.log(10.0))
    if max(grid, fft) > LONG_GRID and log_deep > log_tau:
        deep = sized(log_deep)
        if max(deep[:2]) < max(grid, fft):
            log_tau, (grid, fft, index) = log_deep, deep
    if not (grid <= cap and fft <= cap and index < _PLAN_INDEX):
        return None
    return _sizes(grid, fft, math.exp(log_tau), cap)


def traced_tail(jitted):
    """``kernel(*args, sizes=s, **static) = jitted(*args, s.tail, sizes=s', **static)``,
    ``s'`` being ``s`` with ``tail = 0``: the tail level travels as a traced float64 scalar,
    so every level with the same grid and FFT lengths shares one compiled program.

    Args:
      jitted: a jitted kernel taking the tail cut as its last positional argument.

    Returns:
      The kernel, with the signature of one taking the tail inside the static ``sizes``.
    """

    def kernel(*args, sizes, **static):
        tail = device_array(sizes.tail, np.float64)
        return jitted(*args, tail, sizes=sizes._replace(tail=0.0), **static)

    return kernel


class EngineNote(UserWarning):
    """The PLD engine answered on a coarser grid than asked, or by its Chernoff bound
    alone, to stay within :func:`max_grid_points` (the answer is still certified)."""
