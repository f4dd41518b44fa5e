r"""FFT composition of PLDs: self-composition with a traced ``K`` and heterogeneous composition.

The composed loss is the sum of independent losses, so its pmf is the
convolution of the pmfs; it is computed as a *cyclic* convolution of static
length ``N`` (``rfft``, product or ``K``-th power, ``irfft``) and read off the
window ``[x_lo, x_lo + N h)`` whose start ``x_lo`` comes from a Chernoff bound
on the lower tail (:mod:`.tail_bounds`; cf. dp_accounting
``pld/common.py::compute_self_convolve_bounds``).  Soundness (the result declares
its direction and its error):

* mass above the window is *bounded* by Chernoff at the window top and
  **added to** ``inf_mass``;
* cyclic aliasing only adds non-negative mass at window positions (the cut
  mass is counted twice, mass below the window lands higher): ``delta`` can
  only go up, so the result stays pessimistic;
* floating-point error of the FFT pipeline is bounded in l2 (Higham 2002,
  Thm 24.2: ``||fl(FFT x) - FFT x||_2 <= c log2(N) u ||FFT x||_2``; the
  componentwise ``|e_k| <= c log2(N) u ||x||_1``; the ``K``-th power turns
  ``e_k`` into at most ``K |e_k| (|X_k| + |e_k|)^{K-1}``) and carried in
  ``roundoff``; :mod:`.query` adds
  ``roundoff * sqrt(#grid points above eps)`` to ``delta`` (Cauchy-Schwarz).

``N`` is static (one compile per size); ``K``, the window start and all
masses are traced, so a calibration can bisect inside one ``jit``.
"""

from __future__ import annotations

import functools
import math
import os
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from dpjax._batching import ladder
from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld._pld import PLD
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U
from dpjax.numerics.export_cache import call_cached

#: log of the tail mass each window edge may leave out (above: added to inf_mass).
LOG_WINDOW_TAIL = math.log(1e-30)


def fast_size(n: int) -> int:
    """Least ``m >= n`` of the form ``2^a 3^b 5^c`` (fast FFT length).

    Args:
      n: required length (values below 2 are raised to 2).

    Returns:
      ``m``, a host integer.

    Example:
      >>> fast_size(1000), fast_size(1025)
      (1000, 1080)
    """
    n = max(int(n), 2)
    best = 1 << (n - 1).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def fft_error_constant(size: int) -> float:
    """``c1 = 8 u (log2 N + 1)``: relative l2 error of one float64 FFT of length ``N``."""
    return 8.0 * _U * (math.log2(max(size, 2)) + 1.0)


#: Environment variable overriding :func:`max_grid_points` (a positive integer).
MAX_POINTS_ENV = "DPJAX_MAX_GRID_POINTS"
#: Peak bytes of the kernel per grid / FFT point (measured: ~100 B at 2.7e7 FFT points,
#: two adjacencies, CPU; doubled for headroom).
BYTES_PER_POINT = 200
#: Share of the device's memory the engine's kernel may take.
MEMORY_SHARE = 0.25


def _device_memory() -> int:
    """Bytes of memory of the default device: its allocator limit when it reports one
    (GPU, TPU), else the machine's physical memory (``os.sysconf``), else 8 GiB."""
    try:
        stats = jax.local_devices()[0].memory_stats() or {}
        if stats.get("bytes_limit"):
            return int(stats["bytes_limit"])
    except Exception:  # noqa: BLE001 - a backend without memory stats
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def max_grid_points() -> int:
    r"""The engine's cap on loss-grid and FFT points.

    .. math:: \text{cap} = \min\!\big(\max(\text{MEMORY\_SHARE} \cdot \text{memory}
              / \text{BYTES\_PER\_POINT},\ 2^{16}),\ 2^{31} - 1\big)

    or the positive integer in the environment variable ``DPJAX_MAX_GRID_POINTS``.  Memory
    is bounded by this cap, not by the number of compositions: a grid that would exceed it
    is coarsened, or replaced by the Chernoff bound (:func:`.plan.plan`).  Host
    configuration, not a privacy kernel.

    Returns:
      The cap, a host integer.

    Raises:
      ValueError: ``DPJAX_MAX_GRID_POINTS`` is set but not an integer ``>= 16``.
    """
    env = os.environ.get(MAX_POINTS_ENV, "").strip()
    if env:
        try:
            cap = int(float(env))
        except ValueError:
            cap = 0
        if cap < 16:
            raise ValueError(f"{MAX_POINTS_ENV} must be an integer >= 16, got {env!r}")
        return cap
    return int(min(max(_device_memory() * MEMORY_SHARE / BYTES_PER_POINT, 2**16), 2**31 - 1))


def floor_pow2(n: float) -> int:
    return 1 << max(int(n), 1).bit_length() - 1


def ceil_pow2(n: int) -> int:
    """The least power of two ``>= n`` (at least 2): FFT lengths in few buckets, few compiles."""
    return 1 << max(int(n) - 1, 1).bit_length()


#: The least length of a grid or FFT that the host-side PLD builders make
#: (:func:`floored_size`): the ledger's PLDs (:mod:`dpjax.accounting.events.plds`),
#: :func:`.discretise.from_noise` and the shift mixtures of :mod:`.mixture`.
MIN_GRID_POINTS = 2**14


def floored_size(n: float, rounded=ladder) -> int:
    r"""The length of a grid or FFT that needs ``n`` points: ``rounded(max(n, N_0))``,
    ``N_0 = min(``:data:`MIN_GRID_POINTS`, :func:`max_grid_points` ``)``, ``rounded`` the
    size ladder (:func:`dpjax._batching.ladder`, for grids) or the next power of two
    (:func:`ceil_pow2`, for FFT lengths).

    A small PLD is discretised and composed at ``N_0`` points at least, so that small
    events of a ledger, the steps of a search over an event's scale
    (:mod:`dpjax.calibration.event_scale`) and PLDs built one by one share compiled
    programs; at that length running a program costs far less than compiling another.  The
    extra points are exact padding: the grid reaches further (carrying the exact, vanishing,
    masses there) and the FFT window cuts less tail.  The floor never exceeds the engine's
    cap (a user's ``DPJAX_MAX_GRID_POINTS`` below it lowers it).

    Args:
      n: the points needed.
      rounded: the rounding of ``max(n, N_0)`` to a compiled length.

    Returns:
      A host integer ``>= n``.

    Example:
      >>> floored_size(100), floored_size(20_000), floored_size(20_000, ceil_pow2)
      (16384, 24576, 32768)
    """
    return rounded(max(n, min(MIN_GRID_POINTS, max_grid_points())))


@float64_kernel
def window_size(log_mgf, bin_width: float, log_tail: float = LOG_WINDOW_TAIL) -> int:
    r"""Host helper: a fast FFT length covering the Chernoff window of a composed ``log_mgf``.

    .. math:: N = \text{fast\_size}\big(\lceil (x_{hi} - x_{lo}) / h \rceil + 3\big),\qquad
              P(L > x_{hi}),\ P(L < x_{lo}) \le e^{\text{log\_tail}}

    (Chernoff edges of :mod:`.tail_bounds`; Koskela, Jälkö & Honkela 2020 size their FFT
    window the same way), at most :func:`max_grid_points`: a shorter window is still sound
    (what it cuts is bounded and added to ``inf_mass``, what lies below it lands higher).

    Args:
      log_mgf: ``log E[e^{lambda L}]`` of the composition on :data:`.LAMBDAS` (concrete).
      bin_width: grid spacing ``h``.
      log_tail: log of the mass each edge may leave out.

    Returns:
      The FFT length, a host integer.
    """
    # NumPy (the same doubles: subtraction, division and a minimum), no program per process
    hi = float(tail_bounds.on_host(tail_bounds.upper_edge, log_mgf, log_tail))
    lo = float(tail_bounds.on_host(tail_bounds.lower_edge, log_mgf, log_tail))
    cap = max_grid_points()
    need = (hi - lo) / bin_width + 3.0
    if not need <= cap:  # also nan / inf
        return floor_pow2(cap)
    size = fast_size(math.ceil(need))
    return size if size <= cap else floor_pow2(cap)


@float64_kernel
def self_compose_size(pld: PLD, num_compositions: int) -> int:
    r"""Host helper: FFT length for the ``K``-fold self-composition of ``pld`` (concrete ``K``).

    .. math:: N = \text{window\_size}(K \log M_{\text{pld}}, h)

    (the moments of a ``K``-fold composition are the ``K``-th power of one; Sommer, Meiser &
    Mohammadi 2019).

    Args:
      pld: the PLD to compose (concrete).
      num_compositions: ``K >= 1``.

    Returns:
      The FFT length, a host integer.
    """
    return window_size(num_compositions * np.asarray(pld.log_mgf), float(pld.bin_width))


def wrap_cyclic(pmf, size):
    """Wrap ``pmf`` onto ``size`` points (sum of entries congruent mod ``size``)."""
    n = pmf.shape[-1]
    if n <= size:
        return jnp.pad(pmf, (0, size - n))
    reps = -(-n // size)
    return jnp.pad(pmf, (0, reps * size - n)).reshape(reps, size).sum(axis=0)


#: Largest grid index magnitude the engine uses: loss indices, window starts and ``K lower``
#: are exact integers in float64 below ``2^52``; beyond, the grid part fails closed.
MAX_INDEX = 2.0**52


def grid_index(x):
    """``(int64 index, valid)`` of a float64 index ``x`` (``valid``: finite, ``|x| < 2^52``;
    an invalid one is returned as 0)."""
    valid = jnp.isfinite(x) & (jnp.abs(x) < MAX_INDEX)
    return jnp.where(valid, x, 0.0).astype(jnp.int64), valid


def read_window(
    y, comp_lower, log_mgf, bin_width, size, inf_atoms, roundoff, truncated, pessimistic
):
    """Read the window off the cyclic result ``y`` and assemble the composed PLD.

    ``comp_lower`` is the float64 loss index of ``y[0]``.  Fails closed: when an index is
    not an exact float64 integer (``|index| >= 2^52``, e.g. ``K ~ 1e30``) or the window
    edge is not finite, the grid carries no information and ``inf_mass = 1`` (the
    Chernoff bound of ``log_mgf`` still answers, :mod:`.query`).
    """
    h = bin_width
    x_lo = tail_bounds.lower_edge(log_mgf, LOG_WINDOW_TAIL)
    lower_f = jnp.asarray(comp_lower, jnp.float64)
    start_f = jnp.maximum(jnp.floor(x_lo / h) - 1.0, lower_f)
    start_f = jnp.where(jnp.isnan(start_f), lower_f, start_f)  # no lower edge: from comp_lower
    start, ok_start = grid_index(start_f)
    base, ok_base = grid_index(lower_f)
    ok = ok_start & ok_base & grid_index(start_f + size)[1]
    shift = jnp.mod(start - base, size)
    out = jnp.roll(y, -shift)
    top = (start_f + size) * h
    cut = jnp.exp(tail_bounds.log_upper_tail(log_mgf, top))
    cut = jnp.where(jnp.isnan(cut), 1.0, jnp.minimum(cut, 1.0))
    inf_mass = inf_atoms + cut if pessimistic else inf_atoms
    inf_mass = jnp.where(ok, inf_mass, 1.0)
    return PLD(
        bin_width=h,
        lower=start,
        pmf=out,
        inf_mass=jnp.minimum(inf_mass, 1.0),
        truncated_mass=truncated + cut,
        roundoff=roundoff,
        log_mgf=log_mgf,
        atom_inf=inf_atoms,
        pessimistic=pessimistic,
    )


#: ``2 pi`` to 60 digits (OEIS A019692).
_TWO_PI_DIGITS = "6.28318530717958647692528676655900576839433879875021164194988918"


def _two_pi_parts() -> tuple[float, float, float]:
    """``2 pi = C1 + C2 + C3`` (Cody & Waite 1980): ``C1``, ``C2`` of 20 significant bits
    each (``n C1``, ``n C2`` exact for ``|n| < 2^33``), ``C3`` the float64 rest (host)."""
    two_pi = Fraction(_TWO_PI_DIGITS)  # exact rational, 60 digits of 2 pi
    c1 = Fraction(math.floor(two_pi * 2**17), 2**17)
    c2 = Fraction(math.floor((two_pi - c1) * 2**37), 2**37)
    return float(c1), float(c2), float(two_pi - c1 - c2)


#: :func:`_two_pi_parts`.
_TWO_PI = _two_pi_parts()
#: Reduced phases need ``|n| < 2^33`` turns (``K |arg z| < 5.4e10``); larger ones are not.
_MAX_TURNS = 2.0**33


@float64_kernel
def power_rounding(k):
    """Rounding of one ``K``-th power ``e^{K log z}`` of :func:`power_spectrum`, in units of
    ``u`` relative to ``|Y|``: ``4 K`` (the complex log's error, multiplied by ``K``, and the
    products ``K log z``), ``16`` (``exp``, ``cos``/``sin``, the phase's reduction)."""
    return 4.0 * k + 16.0


@float64_kernel
def reduced_phase(v):
    r"""``v - 2 pi n``, ``n = round(v / 2 pi)``, in ``[-pi, pi]`` up to a few ``u``: a phase
    ``cos``/``sin`` evaluate fast (``K arg z`` reaches ``pi K``, e.g. ``3e9``).

    .. math:: r = ((v - n C_1) - n C_2) - n C_3

    (Cody & Waite 1980: the first two products and subtractions are exact, the third
    rounds once); ``v`` itself where ``|n| >= 2^33``.

    Args:
      v: float64 phases (any shape).

    Returns:
      The reduced phases, shape of ``v``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import math, jax.numpy as jnp
      >>> # exact: 1e9 - 159154943 * 2 pi = 0.57739542350138517 (50 digits)
      >>> round(float(reduced_phase(jnp.float64(1e9))), 15)
      0.577395423501385
      >>> round(math.remainder(1e9, 2 * math.pi), 12)  # by float64 2 pi: 3.9e-8 off
      0.577395462483
    """
    c1, c2, c3 = _TWO_PI
    n = jnp.round(v * (1.0 / (2.0 * math.pi)))
    r = ((v - n * c1) - n * c2) - n * c3
    return jnp.where(jnp.abs(n) < _MAX_TURNS, r, v)


@float64_kernel
def power_spectrum(x, k, c1):
    r"""``(Y, e)``: the spectrum ``Y = FFT(x)^K`` and the l2 bound ``e`` on its error from the
    forward FFT's (module docstring: ``K |e_k| r_k^{K-1}``, ``r_k = min(|X_k| + c1, 1)``, two-sided
    l2 over the spectrum), before the inverse FFT's ``1 / sqrt(N)``; ``||x||_1 <= 1``.

    .. math:: Y_k = e^{K \log|X_k|}\,e^{i\,\text{reduced\_phase}(K \arg X_k)},\qquad
              e = K c_1 \Big(2 \sum_k r_k^{2(K-1)}\Big)^{1/2}

    (its own rounding: :func:`power_rounding`).

    Args:
      x: ``(N,)`` non-negative masses; k: ``K`` (float64, may be traced); c1: the forward
        FFT's componentwise error constant (:func:`fft_error_constant`).

    Returns:
      ``(Y, e)``.
    """
    big_x = jnp.fft.rfft(x)
    # K-th power as exp(K log z): one traced exponent for every K; the phase K arg z reduced
    # first (cos and sin of a phase near 3e9 take several times longer)
    zero = big_x == 0
    logz = jnp.log(jnp.where(zero, jnp.ones_like(big_x), big_x))
    size = jnp.exp(k * logz.real)
    phase = reduced_phase(k * logz.imag)
    big_y = jnp.where(
        zero, jnp.zeros_like(big_x), jax.lax.complex(size * jnp.cos(phase), size * jnp.sin(phase))
    )
    r = jnp.minimum(jnp.abs(big_x) + c1, 1.0)
    pw = jnp.exp(2.0 * (k - 1.0) * jnp.log(jnp.where(r > 0, r, 1.0)))
    return big_y, k * c1 * jnp.sqrt(2.0 * jnp.sum(jnp.where(r > 0, pw, 0.0)))


@float64_kernel
def fft_power(x, k, size: int, pessimistic: bool):
    r"""``(y, err)``: ``y = IFFT(FFT(x)^K)`` (cyclic ``K``-fold self-convolution) and the l2
    bound ``err`` on its float64 error (module docstring; needs ``||x||_1 <= 1``).

    Args:
      x: ``(size,)`` non-negative masses; k: ``K`` (float64, may be traced); size: FFT
        length (static); pessimistic: clip negative round-off of ``y`` at 0.

    Returns:
      ``(y, err)``.
    """
    c1 = fft_error_constant(size)
    big_y, spectral = power_spectrum(x, k, c1)
    y = jnp.fft.irfft(big_y, size)
    if pessimistic:
        y = jnp.maximum(y, 0.0)
    # the forward FFT's error through the K-th power, then the pipeline's own rounding
    err = (
        spectral / jnp.sqrt(float(size))
        + (power_rounding(k) * _U + c1) * jnp.linalg.norm(y)
        + _U
    )
    return y, err


@functools.partial(jax.jit, static_argnames=("size",))
@float64_kernel
def self_compose(pld: PLD, num_compositions, size: int) -> PLD:
    r"""``K``-fold self-composition of ``pld`` by FFT (``K`` traced, FFT length ``size`` static).

    .. math:: p_K = \mathrm{IFFT}\big(\mathrm{FFT}(p)^K\big),\qquad
              \text{inf\_mass}_K = 1 - (1 - \text{inf\_mass})^K

    on a cyclic grid of ``size`` points (Koskela, Jälkö & Honkela 2020, Sec. 4), the window
    placed by Chernoff, the cut upper tail bounded and added to ``inf_mass`` (module
    docstring).  Use :func:`self_compose_size` for a ``size`` that makes the cut negligible.
    Jitted (``size`` static): a host caller compiles one program per input length and
    ``size``, whatever ``K``; inside a traced kernel it is inlined.

    Args:
      pld: the PLD of one use.
      num_compositions: ``K >= 1``, may be traced.
      size: FFT length (static).

    Returns:
      The composed :class:`.PLD` (pessimistic when ``pld`` is), with its round-off bound.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import delta_for_epsilon, from_gaussian
      >>> one = from_gaussian(sigma=10.0, sensitivity=1.0, bin_width=1e-3)
      >>> ten = self_compose(one, 10, self_compose_size(one, 10))
      >>> # closed form: one Gaussian with sigma = 10 / sqrt(10), delta(1) = 1.09810e-4
      >>> float(delta_for_epsilon(ten, 1.0))  # doctest: +ELLIPSIS
      0.000109...
    """
    k = jnp.asarray(num_compositions, jnp.float64)
    y, err = fft_power(wrap_cyclic(pld.pmf, size), k, size, pld.pessimistic)
    roundoff = k * pld.roundoff + err
    comp_lower = k * pld.lower.astype(jnp.float64)  # float64: K may exceed int64
    inf_atoms = -jnp.expm1(k * jnp.log1p(-jnp.minimum(pld.atom_inf, 1.0)))
    return read_window(
        y,
        comp_lower,
        k * pld.log_mgf,
        pld.bin_width,
        size,
        inf_atoms,
        roundoff,
        k * pld.truncated_mass,
        pld.pessimistic,
    )


@float64_kernel
def moments_only(pld: PLD, num_compositions) -> PLD:
    r"""The ``K``-fold composition of ``pld`` kept only through its moments (no grid).

    .. math:: \log M_K(\lambda) = K \log M(\lambda),\qquad
              \text{atom\_inf}_K = 1 - (1 - \text{atom\_inf})^K

    are exact for any ``K`` (``K`` traced, any size: no FFT, no index); the grid part is
    empty with ``inf_mass = 1``, so :mod:`.query` answers from the Chernoff bound alone
    (Sommer, Meiser & Mohammadi 2019).  Used where the grid ``K`` needs exceeds the engine's
    memory cap or exact indices.

    Args:
      pld: the PLD of one use.
      num_compositions: ``K >= 1``, may be traced.

    Returns:
      A :class:`.PLD` with an empty grid and the composed moments.
    """
    k = jnp.asarray(num_compositions, jnp.float64)
    one = jnp.ones((), jnp.float64)
    return PLD(
        bin_width=pld.bin_width,
        lower=jnp.zeros((), jnp.int64),
        pmf=jnp.zeros((1,), jnp.float64),
        inf_mass=one,
        truncated_mass=one,
        roundoff=jnp.zeros((), jnp.float64),
        log_mgf=k * pld.log_mgf,
        atom_inf=-jnp.expm1(k * jnp.log1p(-jnp.minimum(pld.atom_inf, 1.0))),
        pessimistic=pld.pessimistic,
    )


@float64_kernel
def compose(plds, size: int | None = None) -> PLD:
    r"""Heterogeneous composition ``PLD_1 * PLD_2 * ... * PLD_m`` by one FFT product.

    .. math:: p = \mathrm{IFFT}\Big(\prod_j \mathrm{FFT}(p_j)\Big),\qquad
              \log M = \sum_j \log M_j

    (the composed loss is the sum of independent losses; Koskela, Jälkö & Honkela 2020).

    Args:
      plds: the PLDs, all on one bin width (checked on the host when concrete).
      size: FFT length (static); ``None``: a window certified by Chernoff on the summed
        ``log_mgf`` (needs concrete inputs).  Give it to compose inside ``jit``.

    Returns:
      The composed :class:`.PLD`.

    Raises:
      ValueError: no PLD, or PLDs on different bin widths.
    """
    plds = list(plds)
    if not plds:
        raise ValueError("compose needs at least one PLD")
    h = plds[0].bin_width
    try:
        widths = [float(p.bin_width) for p in plds]
        if max(widths) - min(widths) > 1e-15 * max(widths):
            raise ValueError(f"all PLDs must share one bin width, got {sorted(set(widths))}")
    except jax.errors.ConcretizationTypeError:
        pass
    if size is None:  # the summed moments on the host (the same doubles as in the program)
        log_mgf = sum(np.asarray(p.log_mgf, np.float64) for p in plds)
        size = window_size(log_mgf, float(h))
    # a warm process loads its compiled program (export cache); traced PLDs: nested jit
    return call_cached(_product, tuple(plds), static_argnames=("size",), size=size)


@functools.partial(jax.jit, static_argnames=("size",))
def _product(plds: tuple, size: int) -> PLD:
    """:func:`compose`'s FFT product on ``size`` points, one compiled program per number of
    PLDs, their lengths and ``size`` (called through the export cache, so a warm process
    loads it compiled; run eagerly it was some forty small programs, each traced in every
    process)."""
    h = plds[0].bin_width
    log_mgf = sum(p.log_mgf for p in plds)
    c1 = fft_error_constant(size)
    prod = None
    err = 0.0
    for p in plds:
        x = wrap_cyclic(p.pmf, size)
        fx = jnp.fft.rfft(x)
        prod = fx if prod is None else prod * fx
        err = err + p.roundoff + c1 * jnp.linalg.norm(x)
    y = jnp.fft.irfft(prod, size)
    pessimistic = all(p.pessimistic for p in plds)
    if pessimistic:
        y = jnp.maximum(y, 0.0)
    m = len(plds)
    roundoff = err + ((2.0 * m + 2.0) * _U + c1) * jnp.linalg.norm(y) + _U
    comp_lower = sum(p.lower.astype(jnp.float64) for p in plds)
    # every part's mass at +infinity, its window's cut top included (a part's cut mass wraps
    # down inside its own pmf, so only its bound in inf_mass keeps the product pessimistic)
    log_keep = sum(jnp.log1p(-jnp.minimum(p.inf_mass, 1.0)) for p in plds)
    inf_atoms = -jnp.expm1(log_keep)
    truncated = sum(p.truncated_mass for p in plds)
    return read_window(y, comp_lower, log_mgf, h, size, inf_atoms, roundoff, truncated, pessimistic)
