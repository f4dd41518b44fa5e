r"""The engine end to end: privacy profile and epsilon of a noise after ``K`` uses.

A *use* is one release of ``f(D) + T`` with per-use sensitivity ``Delta``,
optionally on a Poisson subsample of rate ``q``; ``K`` uses are composed
(adaptively: each use's dominating pair is the same).  For every adjacency
(``remove`` and ``add`` when subsampled; one pair otherwise, the noises being
symmetric) the pessimistic PLD is built (:mod:`.discretise`,
:mod:`.subsample`), composed ``K``-fold by FFT (:mod:`.compose`), and queried
(:mod:`.query`); the worse adjacency is reported.  All of it is one jitted
kernel of the *scale* (traced) with static grid and FFT sizes, so a calibration
(:mod:`dpjax.calibration.scale_search`) is a root search on ``log scale`` inside ``jit``
that vmaps over targets or noise shapes.  :func:`profile` and :func:`epsilon` share their
compiled programs (both queries of one composition), so certifying an epsilon by the
profile at it compiles nothing more; they run as two programs, the composition (one per
family and sizes) and the queries (one per FFT length and number of adjacencies, whatever
the family: most of the compiling).

``noise_fn(scale, shape)`` builds the family (``shape`` a traced array, e.g.
``alpha / gamma`` of flipped Huber; ignored by one-parameter families): the family's
own ``from_scale`` classmethod (e.g. ``Gaussian.from_scale``,
``FlippedHuber.from_scale``; :class:`dpjax.noise.ScaleFamily`), so the engine lists no
family and any family of :mod:`dpjax.noise` plugs in.

**Memory is bounded by a cap, not by ``K``.**  Grid and FFT lengths never exceed
:func:`max_grid_points` (a share of the device's memory, or ``DPJAX_MAX_GRID_POINTS``).
:func:`profile` and :func:`epsilon` follow :func:`plan`: the requested bin width when it
fits, else a coarser one (still pessimistic) together with the Chernoff bound of the
``K``-fold moments, else the Chernoff bound alone (``K ~ 1e30``), with an
:class:`EngineNote`; calibration clamps its sizes to the cap (sound: what a short grid
or window cuts goes to ``+infinity`` or is bounded and added).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from dpjax._batching import SMALL_BATCH, device_array, pad, padded_size
from dpjax._warnings import warn_user
from dpjax.accounting.pld import query as _query
from dpjax.accounting.pld import tail_bounds
from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.compose import grid_index, max_grid_points, moments_only, self_compose
from dpjax.accounting.pld.discretise import discretise_pair
from dpjax.accounting.pld.plan import EngineNote, plan, refinement, tilt_level, tilted_sizes
from dpjax.accounting.pld.subsample import map_adjacencies
from dpjax.accounting.pld.tilted.fold import CUT_SHARE, tilted_kernel
from dpjax.accounting.pld.underflow import charge_underflow
from dpjax.certificate import MARGIN
from dpjax.numerics import float64_kernel
from dpjax.numerics.export_cache import call_cached

#: Below this ``delta`` (answered by the plain engine; for an epsilon query, the level its
#: certificate's re-check will ask, :func:`_target_tilts`) the tilted composition
#: (:mod:`.tilted`) answers: the plain FFT's round-off floor starts around ``1e-10 .. 1e-8``
#: (it grows with ``K``); above, the plain engine alone is as accurate and needs no second
#: composition.
TILT_BELOW = 1e-7
#: A profile (a ``log delta`` query without levels) runs the tilted composition where its
#: plain answer is below this, twice :data:`TILT_BELOW`: at an epsilon the tilted
#: composition answered (a target at most ``TILT_BELOW``, :func:`_target_tilts`) the plain
#: grid's answer lies above the target (5e-4 relative above ``1e-7`` at 10^3 Gaussian uses
#: subsampled at 0.01), and a profile that stayed on the plain grid there would contradict
#: the epsilon it certifies (the façade's re-check failed for a target just below 1e-7
#: asked beside another).  A plain grid floored by round-off tilts whatever its answer
#: (:func:`_roundoff_decides`).
PROFILE_TILT_BELOW = 2.0 * TILT_BELOW
#: Where the plain grid's certified round-off term is at least this share of an answer, the
#: tilted composition is run too (whatever ``delta``): with very many compositions (``K ~
#: 10^7``) the plain FFT's error bound, which grows with ``K``, reaches ``delta ~ 1e-6``.
ROUNDOFF_SHARE = 0.01
#: Relative steps up from a tilted epsilon whose certificate's re-check fails, tried in turn
#: before the plain grid's epsilon is kept (:func:`_certified_tilted`).  An epsilon query
#: and the profile place their tilts differently, so the profile at the tilted epsilon can
#: lie a little above the target: 1.001e-12 at 1000 Gaussian uses (sigma 2, q 0.01, delta
#: 1e-12), whose plain epsilon, floored by round-off, is 5% above the tilted one.
RECHECK_STEPS = (1e-4, 1e-3, 1e-2)


def stacked_plds(
    noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width, sizes, subsampled,
    pessimistic=True, tail=None, then=None,
):
    """Every adjacency's PLD after ``K`` uses (pessimistic, or optimistic for lower bounds),
    or ``then(PLD)`` of each, stacked on a leading adjacency axis: one traced program for
    both adjacencies (:func:`.subsample.map_adjacencies`).  The pairs are cut at ``tail``
    (traced) if given, else at the static ``sizes.tail``."""
    tail = sizes.tail if tail is None else tail

    def one(pair):
        lower, ok = grid_index(jnp.floor(pair.loss(pair.t_lo) / bin_width) - 1.0)
        pld = discretise_pair(pair, bin_width, lower, sizes.grid, pessimistic)
        pld = charge_underflow(pld, tail)  # deep (tilted) levels: what underflow may lose
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
        return pld if then is None else then(pld)

    noise = noise_fn(scale, shape)
    return map_adjacencies(one, noise, sensitivity, sampling_rate, subsampled, tail)


STATIC_ARGNAMES = ("noise_fn", "sizes", "subsampled")


def _worse_adjacency(query, doc: str):
    """A jitted kernel ``(scale, shape, sensitivity, q, K, x) -> max over adjacencies of
    query(PLD_K, x)``: build, compose and query every adjacency's PLD, report the worse
    (``query`` may return a tuple: the worse of each entry)."""

    @functools.partial(jax.jit, static_argnames=STATIC_ARGNAMES)
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
        answers = stacked_plds(
            noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width, sizes,
            subsampled, then=lambda pld: query(pld, x),
        )
        return jax.tree.map(lambda v: jnp.max(v, axis=0), answers)

    kernel.__doc__ = doc
    return kernel


_KERNEL_ARGS = """

Args:
  scale: noise scale (traced).
  shape: noise shape parameter (traced; ignored by one-parameter families).
  sensitivity: per-use shift ``Delta > 0``.
  sampling_rate: Poisson rate ``q`` (``1.0`` when not subsampled).
  compositions: ``K`` as a float64 (traced: ``K`` may exceed int64).
  x: array of {x}.
  noise_fn: ``(scale, shape) -> noise`` of the family (static, hashable).
  bin_width: grid spacing ``h`` (traced: every width on the same static grid and FFT
    lengths shares one compiled program).
  sizes: the static :class:`~dpjax.accounting.pld.plan.Sizes` (:func:`.plan.sizes_for`).
  subsampled: whether the uses are Poisson-subsampled (static).

Returns:
  {ret}, shape of ``x``.
"""

log_delta_kernel = _worse_adjacency(
    _query.log_delta_for_epsilon,
    r"""``log delta(epsilon)`` after ``K`` uses: the worse adjacency, certified (jitted).

.. math:: \log\delta(\epsilon) = \max_{\text{adjacency}} \log\delta_{\text{PLD}_K}(\epsilon)

(:func:`.query.log_delta_for_epsilon` of each adjacency's ``K``-fold PLD; Zhu, Dong &
Wang 2022 for the adjacencies)."""
    + _KERNEL_ARGS.format(x="``epsilon``", ret="``log`` of a certified upper bound on delta"),
)


epsilon_kernel = _worse_adjacency(
    _query.epsilon_for_delta,
    r"""Least certified ``epsilon`` at ``delta`` after ``K`` uses: the worse adjacency (jitted).

.. math:: \epsilon(\delta) = \max_{\text{adjacency}} \epsilon_{\text{PLD}_K}(\delta)

(:func:`.query.epsilon_for_delta` of each adjacency's ``K``-fold PLD)."""
    + _KERNEL_ARGS.format(x="targets ``delta``", ret="certified ``epsilon``"),
)


#: The array fields of a :class:`.PLD` (its pytree leaves, in order), how
#: :func:`_composed_kernel` hands the composed PLDs to :func:`_queries_kernel`.
_PLD_FIELDS = tuple(
    f.name for f in dataclasses.fields(PLD) if not f.metadata.get("static")
)


def _pld_of_fields(fields) -> PLD:
    """The :class:`.PLD` whose array fields are ``fields`` (in :data:`_PLD_FIELDS` order):
    how the compiled programs that see arrays only rebuild the composed PLDs."""
    return PLD(**dict(zip(_PLD_FIELDS, fields, strict=True)))


@functools.partial(jax.jit, static_argnames=STATIC_ARGNAMES)
@float64_kernel
def _composed_kernel(
    scale, shape, sensitivity, sampling_rate, compositions, tail=None, *, noise_fn, bin_width,
    sizes, subsampled,
):
    """Every adjacency's pessimistic ``K``-fold PLD (:func:`stacked_plds`), as the tuple of
    its array fields (:data:`_PLD_FIELDS`, each with a leading adjacency axis): the first
    half of :func:`_profile_and_epsilon_kernel`, one program per family and sizes.  With
    ``sizes.fft = 0`` and ``tail`` traced (:func:`.plan.traced_tail`), the one-use pairs
    the tilted composition folds (:func:`.tilted.fold.tilted_kernel`)."""
    plds = stacked_plds(
        noise_fn, scale, shape, sensitivity, sampling_rate, compositions, bin_width, sizes,
        subsampled, tail=tail,
    )
    return tuple(getattr(plds, name) for name in _PLD_FIELDS)


_composed_kernel.__doc__ += (
    _KERNEL_ARGS.replace(
        "  x: array of {x}.\n",
        "  tail: the pairs' tail cut, traced (default ``None``: the static ``sizes.tail``).\n",
    )
    .replace("{ret}, shape of ``x``", "the composed PLDs' fields (:data:`_PLD_FIELDS`)")
)


#: The compositions of the query in progress (:func:`composed_fields`; ``None`` outside
#: one, :func:`_one_query`; one per thread, a context variable): an epsilon query's
#: certificate re-check composes the same PLDs as the query did (the plain grid, then the
#: tilted pairs) and reads them here instead.  Keeping the plain composition through the
#: tilted part adds its pmf, 16 bytes an FFT point for two adjacencies, within the headroom
#: of :data:`.compose.BYTES_PER_POINT`.
_COMPOSED: contextvars.ContextVar = contextvars.ContextVar("dpjax_pld_composed", default=None)


@contextlib.contextmanager
def _one_query():
    """Keep the compositions of one engine query (:data:`_COMPOSED`) while it runs: opened
    by the outermost :func:`_evaluate`, dropped when it returns (memory, and no test's
    patched kernel meets another's composition)."""
    if _COMPOSED.get() is not None:  # a nested query (the re-check) shares its caller's
        yield
        return
    token = _COMPOSED.set({})
    try:
        yield
    finally:
        _COMPOSED.reset(token)


@float64_kernel
def composed_fields(
    scale, shape, sensitivity, sampling_rate, compositions, tail=None, *, noise_fn, bin_width,
    sizes, subsampled,
):
    """:func:`_composed_kernel` through the export cache; within one engine query
    (:func:`_one_query`) the same concrete arguments compose once (:data:`_COMPOSED`).

    The kernel is a pure function of its arguments, so a kept composition is the one a
    second call would compute, bit for bit; traced arguments (a calibration's search) are
    never kept.

    Args:
      scale, shape, sensitivity, sampling_rate, compositions, tail, noise_fn, bin_width,
        sizes, subsampled: as in :func:`_composed_kernel`.

    Returns:
      The composed PLDs' fields (:data:`_PLD_FIELDS`, a leading adjacency axis).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld.plan import Sizes
      >>> from dpjax.noise import Gaussian
      >>> fields = composed_fields(1.0, 0.0, 1.0, 1.0, 4.0, noise_fn=Gaussian.from_scale,
      ...                          bin_width=1e-2, sizes=Sizes(256, 1024, 1e-20, False),
      ...                          subsampled=False)
      >>> fields[_PLD_FIELDS.index("pmf")].shape  # one adjacency, the FFT length
      (1, 1024)
    """
    arrays = (scale, shape, sensitivity, sampling_rate, compositions, tail, bin_width)
    kept, key = _COMPOSED.get(), None
    if kept is not None and not any(isinstance(a, jax.core.Tracer) for a in arrays):
        key = (noise_fn, sizes, subsampled, *(
            None if a is None else np.asarray(a, np.float64).tobytes() for a in arrays))
        if key in kept:
            return kept[key]
    args = arrays[:5] if tail is None else arrays[:6]
    fields = call_cached(
        _composed_kernel, *args, static_argnames=STATIC_ARGNAMES, noise_fn=noise_fn,
        bin_width=bin_width, sizes=sizes, subsampled=subsampled,
    )
    if key is not None:
        kept[key] = fields
    return fields


@jax.jit
@float64_kernel
def _queries_kernel(*arrays):
    """Both queries of stacked composed PLDs, and their profile at the epsilon answered.

    The second half of :func:`_profile_and_epsilon_kernel`: it sees arrays only (the
    composed PLDs' fields, then ``x``), so every family whose composition has the same
    FFT length and number of adjacencies shares its compiled program:
    :func:`.query.worse_queries` (``x``: ``epsilon`` / ``delta``; the worse adjacency's
    answers, entry by entry, and its profile at the epsilon answered).

    Args:
      *arrays: the fields of :data:`_PLD_FIELDS` (leading adjacency axis), then ``x``.

    Returns:
      ``(Queries at x, Certificate at epsilon(x))`` (:class:`.query.Queries`,
      :class:`.query.Certificate`; each the worse adjacency's, entry by entry).
    """
    *fields, x = arrays
    return _query.worse_queries(_pld_of_fields(fields), x)


def _profile_and_epsilon_kernel(
    scale, shape, sensitivity, sampling_rate, compositions, x, *, noise_fn, bin_width, sizes,
    subsampled,
):
    """Both queries of one composition, and its profile at the epsilon it answers.

    :func:`_composed_kernel` then :func:`_queries_kernel` (each through the export cache,
    :func:`.export_cache.call_cached`; the composed PLDs stay on the device between them):
    one composition for :func:`profile` and :func:`epsilon`; the unused query costs a
    small part of a composition.  The second part, the profile at ``epsilon(x)`` (the worse
    adjacency's; :func:`.query.certificate`), is what :func:`dpjax.account` certifies that
    epsilon by, read off the same composed PLDs and suffix sums (:func:`_evaluate_once` keeps
    it for that re-check: no second composition).  Two programs, not one: the queries,
    most of the compiling, depend on the FFT length alone, not on the family.
    """
    fields = composed_fields(
        scale, shape, sensitivity, sampling_rate, compositions, noise_fn=noise_fn,
        bin_width=bin_width, sizes=sizes, subsampled=subsampled,
    )
    return call_cached(_queries_kernel, *fields, x)


_profile_and_epsilon_kernel.__doc__ += _KERNEL_ARGS.format(
    x="``epsilon`` / ``delta``",
    ret="``(Queries at x, Certificate at epsilon(x))`` (:class:`.query.Queries`, "
    ":class:`.query.Certificate`; each the worse adjacency's, entry by entry)",
)


def scalar_args(scale, shape, sensitivity, sampling_rate, compositions):
    return tuple(device_array(v, np.float64) for v in (
        scale, shape, sensitivity, 1.0 if sampling_rate is None else sampling_rate,
        float(compositions),  # float: K may exceed int64
    ))


#: Answers of :func:`_evaluate` already computed (a deterministic function of its
#: arguments and of the grid cap): ``dpjax.account`` certifies an epsilon by the profile at
#: it, which :func:`_evaluate` has just evaluated for its own re-check (two full tilted
#: compositions at a tiny delta, the largest cost of a query at ``K ~ 1e9``).
_ANSWERS: dict = {}
#: Entries kept in :data:`_ANSWERS` (oldest dropped first).
_ANSWERS_MAX = 64


def _evaluate(
    kernel, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h, levels=None
):
    """Run ``kernel`` (:data:`log_delta_kernel` or :data:`epsilon_kernel`, both evaluated by
    :data:`_profile_and_epsilon_kernel`) as :func:`plan` says: the minimum of the certified
    answers it plans; a note (:class:`EngineNote`) when it coarsened.  ``levels`` (``log
    delta`` per entry of an epsilon query ``x``, or ``None``): the ``delta`` its tilted
    composition resolves (:func:`_tilted`).  Answers are kept in :data:`_ANSWERS`: the same
    arguments (and grid cap) are not composed twice."""
    def key_of(kernel, x, levels):
        return _memo_key(
            kernel, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h,
            levels,
        )

    key = key_of(kernel, x, levels)
    if key in _ANSWERS:
        hit = _ANSWERS[key]
        if hit[1] is not None:
            warn_user(hit[1], EngineNote)
        return hit[0].copy()
    with _one_query():
        out, note = _evaluate_once(
            kernel, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h,
            levels, certificate_key=lambda eps: key_of(log_delta_kernel, eps, None),
        )
    _remember(key, out, note)
    # a profile at a certificate's epsilon (asked without levels) reuses its re-check
    _ANSWERS.setdefault(key_of(kernel, x, None), _ANSWERS[key])
    if note is not None:
        warn_user(note, EngineNote)
    return out


def _memo_key(
    kernel, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h, levels
) -> tuple:
    """The key of an :func:`_evaluate` answer in :data:`_ANSWERS`: its arguments (arrays by
    shape and bytes), the grid cap and the refinement in force."""
    def data(v):
        v = np.asarray(v, np.float64)
        return v.shape, v.tobytes()

    return (
        kernel is log_delta_kernel, noise_fn, *map(data, (scale, shape, sensitivity, x, h)),
        float(compositions), None if sampling_rate is None else float(sampling_rate),
        max_grid_points(), refinement(), None if levels is None else data(levels),
    )


def _remember(key, out, note) -> None:
    """Keep an answer in :data:`_ANSWERS` (the oldest dropped beyond :data:`_ANSWERS_MAX`)."""
    if len(_ANSWERS) >= _ANSWERS_MAX:
        _ANSWERS.pop(next(iter(_ANSWERS)))
    _ANSWERS[key] = (np.array(out, np.float64), note)


def _keep_certificate(key, epsilon, got, plain, at, note) -> None:
    """Keep the profile at an answered ``epsilon`` (``at``: the kernel's queries there, read
    off the same composition) as the answer of the re-check :func:`dpjax.account` runs, where
    that re-check would return exactly it: one grid run answered (``got``, no ``nan``), the
    tilted composition changed no answer, and at no entry would :func:`profile` run it (the
    plain ``log delta`` at ``epsilon`` finite and tilting, :func:`_profile_tilts`, or its
    round-off deciding, :func:`_tilted`)."""
    log_d = np.asarray(at.log_delta, np.float64)
    if np.any(np.isnan(got)) or np.any(np.isnan(log_d)) or not np.array_equal(epsilon, plain):
        return
    tilts = np.isfinite(log_d) & (_profile_tilts(log_d) | _roundoff_decides(at, epsilon, False))
    if not np.any(tilts):
        _remember(key(epsilon), log_d, note)


def _evaluate_once(
    kernel, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h, levels=None,
    certificate_key=None,
):
    """:func:`_evaluate` without the memo: ``(answer, note or None)``; an epsilon query's
    profile at its answer is kept under ``certificate_key(epsilon)`` (:func:`_keep_certificate`)."""
    p = plan(noise_fn, scale, shape, sensitivity, sampling_rate, compositions, h)
    args = scalar_args(scale, shape, sensitivity, sampling_rate, compositions)
    x = np.asarray(x, np.float64)
    by_delta = kernel is epsilon_kernel
    if _tilted_alone(p, x, by_delta, levels):
        out = _tilted_only(
            by_delta, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h,
            p, args, levels,
        )
        if out is not None:
            return out, p.note
    # the targets flattened and padded (few compiles: a scalar and up to SMALL_BATCH targets
    # share one program per grid); each query entry is its own, so the padding is inert
    x_padded = device_array(pad(x, padded_size(x.size, SMALL_BATCH)))

    def cut(tree):
        return jax.tree.map(lambda v: np.asarray(v, np.float64)[: x.size].reshape(x.shape), tree)

    runs = [(p.bin_width, p.sizes)] if p.sizes is not None else []
    if p.moments is not None:
        runs.append(p.moments)
    # nothing certifiable: log delta = 0 (delta = 1), epsilon = inf
    fallback = np.inf if by_delta else 0.0
    out = np.full(np.shape(x), fallback)
    floored = np.zeros(np.shape(x), bool)
    for bin_width, sizes in runs:
        both, at = map(cut, _profile_and_epsilon_kernel(  # export cache: warm loads
            *args,
            x_padded,
            noise_fn=noise_fn,
            bin_width=bin_width,
            sizes=sizes,
            subsampled=sampling_rate is not None,
        ))
        got = np.asarray(both.epsilon if by_delta else both.log_delta, np.float64)
        out = np.minimum(out, np.where(np.isnan(got), fallback, got))
        floored |= _roundoff_decides(both, x, by_delta)
    plain = out
    if p.sizes is not None:
        out = _tilted(
            by_delta, noise_fn, args, x, out, p.bin_width, sampling_rate, floored, levels
        )
    if by_delta and len(runs) == 1 and certificate_key is not None:
        _keep_certificate(certificate_key, out, got, plain, at, p.note)
    if kernel is epsilon_kernel and np.any(out < plain):
        # the tilted epsilon, nudged up where its certificate fails its re-check; the plain
        # one where no nudge passes or it is no longer below
        tilted = out < plain
        got = _certified_tilted(
            noise_fn, scale, shape, sensitivity, np.where(tilted, out, 0.0),
            np.broadcast_to(x, np.shape(out)), compositions, sampling_rate, h, tilted,
        )
        out = np.where(tilted & (got < plain), got, plain)
    return out, p.note


def _tilted_alone(p, x, by_delta, levels) -> bool:
    """Host helper: whether every entry is answered by the tilted composition (an epsilon
    query's target ``delta``, or a ``log delta`` query's given level: a certificate's
    re-check; :func:`_target_tilts`), on one grid (no Chernoff-only run): there it answers
    alone (:func:`_tilted_only`)."""
    if p.sizes is None or p.moments is not None or x.size == 0:
        return False
    if by_delta:
        with np.errstate(divide="ignore", invalid="ignore"):
            log_t = np.log(x)
    elif levels is None:
        return False
    else:
        log_t = np.broadcast_to(np.asarray(levels, np.float64), x.shape)
    return bool(np.all(np.isfinite(x)) and np.all(np.isfinite(log_t) & _target_tilts(log_t)))


def _target_tilts(log_target) -> np.ndarray:
    """Host helper: where an epsilon query's target ``delta`` (its ``log``), or the level of
    its certificate's re-check (the same target), is answered by the tilted composition: where
    the profile at its answer falls below :data:`TILT_BELOW`.  That profile is at most
    ``delta (1 - MARGIN)`` (the plain query solves for ``delta (1 - MARGIN - 4 REL)``,
    :func:`.query.epsilon_for_delta`), and a profile there runs the tilted composition
    (:func:`_tilted`): so does the query, ``delta (1 - MARGIN) <= TILT_BELOW``, and the
    re-check then reads its compositions.  A target at ``TILT_BELOW`` itself would
    otherwise compose the plain grid for the epsilon and the tilted pairs for its
    certificate."""
    with np.errstate(divide="ignore"):
        return np.asarray(log_target, np.float64) + np.log1p(-MARGIN) <= np.log(TILT_BELOW)


def _profile_tilts(log_delta) -> np.ndarray:
    """Host helper: where a profile (a ``log delta`` query without levels) whose plain grid
    answered ``log_delta`` runs the tilted composition: below :data:`PROFILE_TILT_BELOW`
    (``nan`` does not tilt).  The rule of :func:`_tilted` and of the certificate an answer
    keeps (:func:`_keep_certificate`), so that the two agree."""
    with np.errstate(invalid="ignore"):
        return np.asarray(log_delta, np.float64) < np.log(PROFILE_TILT_BELOW)


def _recheck_passes(
    noise_fn, scale, shape, sensitivity, epsilon, delta, compositions, sampling_rate, h
) -> np.ndarray:
    """Host helper: where a tilted ``epsilon``'s certificate holds, re-checked by the profile
    as the caller will (the tilts of a delta and of an epsilon query differ), its tilted
    composition resolving the target ``delta``: ``profile(epsilon) <= delta (1 - MARGIN)``."""
    delta = np.asarray(delta, np.float64)
    back = target_profile(
        noise_fn, scale, shape, sensitivity, epsilon, delta, compositions, sampling_rate, h
    )
    with np.errstate(divide="ignore"):
        return back <= np.log(delta * (1.0 - MARGIN))


def _certified_tilted(
    noise_fn, scale, shape, sensitivity, epsilon, delta, compositions, sampling_rate, h,
    tilted=True,
) -> np.ndarray:
    r"""Host helper: each tilted ``epsilon`` whose certificate's re-check passes
    (:func:`_recheck_passes`), else the least ``epsilon (1 + s)``, ``s`` in
    :data:`RECHECK_STEPS`, whose re-check passes; ``nan`` where none does (the caller keeps
    the plain grid's epsilon there).  Entries outside the mask ``tilted`` are placeholders,
    carried along unchecked.

    .. math:: \epsilon' = \min\{\epsilon (1 + s) : s \in \{0\} \cup S,\
              \hat\delta(\epsilon (1 + s)) \le \delta (1 - \text{MARGIN})\}

    Every step re-checks the whole array (each entry's answer depends on that entry alone),
    and the array returned was re-checked as it is, so the profile asked at it afterwards
    (:func:`dpjax.account`'s re-check) reads that re-check."""
    epsilon = np.asarray(epsilon, np.float64)
    base = epsilon
    skip = ~np.broadcast_to(tilted, epsilon.shape)
    ok = skip | _recheck_passes(
        noise_fn, scale, shape, sensitivity, epsilon, delta, compositions, sampling_rate, h
    )
    for step in RECHECK_STEPS:
        if np.all(ok):
            break
        trial = np.where(ok, epsilon, base * (1.0 + step))
        passed = _recheck_passes(
            noise_fn, scale, shape, sensitivity, trial, delta, compositions, sampling_rate, h
        )
        epsilon, ok = np.where(passed, trial, epsilon), ok | passed
    if not np.all(ok):
        return np.where(ok, epsilon, np.nan)
    if not np.all(skip | _recheck_passes(
        noise_fn, scale, shape, sensitivity, epsilon, delta, compositions, sampling_rate, h
    )):  # the array as returned (a memo hit where it equals the last trial)
        return np.full(epsilon.shape, np.nan)
    return epsilon


def _tilted_only(
    by_delta, noise_fn, scale, shape, sensitivity, x, compositions, sampling_rate, h, p,
    args, levels,
):
    """Host helper: the answers of the tilted composition alone (:func:`_tilted`, no plain
    grid), or ``None`` where the plain grid is needed: an entry the tilted composition does
    not answer (no sizes, ``nan``: the fallback stays), or an epsilon whose certificate's
    re-check fails (then stepped up, :func:`_certified_tilted`, against the plain grid's
    answer: a stepped epsilon can be the larger, at 10 Gaussian uses, sigma 2, q 0.1, delta
    1e-8, by 1e-4).  Below :data:`TILT_BELOW`
    the plain grid's answer is the larger one where both run (its round-off floor; at every
    entry of ``bench/study_tilted_alone.py``), so it is composed only when needed; both
    answers are certified."""
    fallback = np.inf if by_delta else 0.0
    out = _tilted(
        by_delta, noise_fn, args, x, np.full(x.shape, fallback), p.bin_width, sampling_rate,
        False, levels,
    )
    if not np.all(out < fallback):
        return None
    if by_delta and not np.all(_recheck_passes(
        noise_fn, scale, shape, sensitivity, out, x, compositions, sampling_rate, h
    )):
        return None  # stepped up after the plain grid's answer, which may be the smaller
    return out


def _roundoff_decides(queries, x, by_delta) -> np.ndarray:
    """Host helper: where the plain grid's round-off term is at least :data:`ROUNDOFF_SHARE`
    of the answer (of the target ``delta``, ``by_delta``; of the answered ``delta``
    otherwise): the FFT's certified error floor, not the loss distribution, decides it."""
    if by_delta:
        term = np.asarray(queries.log_roundoff_at_epsilon, np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ref = np.log(np.asarray(x, np.float64))
    else:
        term = np.asarray(queries.log_roundoff, np.float64)
        ref = np.asarray(queries.log_delta, np.float64)
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(term - ref, nan=0.0) >= np.log(ROUNDOFF_SHARE)


def _tilted(
    by_delta, noise_fn, args, x, out, bin_width, sampling_rate, floored=False, levels=None
):
    """``out`` improved by the tilted composition (:mod:`.tilted`) where the target
    (``by_delta``) or the level (``log delta``: ``levels``) tilts (:func:`_target_tilts`),
    where a profile's plain answer is below :data:`PROFILE_TILT_BELOW`, or where the plain grid's
    round-off decides the answer (``floored``, :func:`_roundoff_decides`); the minimum of
    two certified answers is certified.  Each entry's sizes depend on that entry alone (its
    target, or its level), so an entry's answer does not depend on the batch it came in.
    An epsilon query and the ``log delta`` re-check of its certificate (the query asked with
    ``levels``, :func:`_evaluate_once`) run one compiled program per sizes
    (``either_kind``); a profile compiles only its own kind."""
    flat = np.asarray(x, np.float64).ravel()
    res = np.asarray(out, np.float64).ravel().copy()
    either_kind = by_delta or levels is not None  # an epsilon, or its certificate's re-check
    with np.errstate(divide="ignore", invalid="ignore"):
        if by_delta:
            log_t = np.log(flat)
        elif levels is not None:
            log_t = np.broadcast_to(np.asarray(levels, np.float64), np.shape(out)).ravel().copy()
        else:
            log_t = res.copy()
        low = _target_tilts(log_t) if either_kind else _profile_tilts(log_t)
        sel = np.isfinite(log_t) & (low | np.broadcast_to(floored, np.shape(out)).ravel())
    if by_delta:
        sel &= np.isfinite(flat) & (flat > 0)
    q = float(sampling_rate) if sampling_rate is not None else None

    def run(idx, levels):
        for sizes, grp in tilted_groups(noise_fn, args, q, bin_width, idx, levels).items():
            got = run_padded(
                tilted_kernel, args, flat[grp], np.asarray(levels, np.float64)[grp],
                noise_fn=noise_fn, bin_width=bin_width, sizes=sizes, subsampled=q is not None,
                by_delta=by_delta, either_kind=either_kind,
            )
            res[grp] = np.minimum(res[grp], np.where(np.isnan(got), res[grp], got))

    def moved(idx, levels):
        """The entries whose answer no level in ``levels`` resolved: a level resolves an
        answer of its own tilt level (:func:`.plan.tilt_level`) not below a tenth of it
        times :data:`.tilted.fold.CUT_SHARE` (what a cut top tail may have charged)."""
        floor = np.log(10.0 * CUT_SHARE)
        return [
            i for i in idx
            if np.isfinite(res[i]) and not any(
                tilt_level(res[i]) == tilt_level(v[i]) and res[i] >= v[i] + floor
                for v in levels
            )
        ]

    idx = np.nonzero(sel)[0]
    run(idx, log_t)
    if not by_delta:
        # a log delta query first ran at its plain answer's own level: where the answer
        # stayed at that level (a certificate's re-check: the epsilon query's level), that
        # is the composition the epsilon came from.  Where it moved, the plain answer (a
        # Chernoff bound, or a plain grid's atom at +infinity) exceeded the truth by far:
        # resolve down to its square (times 1e-4), then at the level of the delta found
        deep = 2.0 * log_t + np.log(1e-4)
        first, idx = idx, moved(idx, [log_t])
        run(idx, deep)
        run(moved(idx, [log_t, deep]), res.copy())
        # an answer that stayed at its level but fell below half of it: its cut top tail,
        # sized for the level, may have charged up to CUT_SHARE of the level (1% of an answer
        # a tenth of it); composed again at the answer's own level
        far = set(idx)
        run([i for i in first if i not in far and res[i] < log_t[i] + np.log(0.5)], res.copy())
    return res.reshape(np.shape(out))


def tilted_groups(noise_fn, args, sampling_rate, bin_width, idx, log_levels) -> dict:
    """Host helper: ``{sizes: [i, ...]}``, the entries ``idx`` grouped by the static sizes of
    the tilted composition at their levels (:func:`.plan.tilted_sizes`; entries it cannot
    size are left out): one compiled program per group.

    Args:
      noise_fn: the family; args: the kernels' scalar arguments (:func:`scalar_args`);
      sampling_rate: ``q`` or ``None``; bin_width: ``h``; idx: entry indices;
      log_levels: per entry, ``log`` of the least ``delta`` to resolve.

    Returns:
      The groups.
    """
    scale, shape, sens, _, k = (float(a) for a in args)
    groups: dict = {}
    for i in idx:
        sizes = tilted_sizes(noise_fn, scale, shape, sens, sampling_rate, k, bin_width,
                             log_levels[i])
        if sizes is not None:
            groups.setdefault(sizes, []).append(i)
    return groups


def run_padded(kernel, args, xs, *more, **static) -> np.ndarray:
    """``kernel(*args, xs, *more, **static)`` on ``xs`` (and the per-entry arrays ``more``)
    padded to a bucketed length (few compiles), as a float64 NumPy array of ``xs``'s
    length."""
    size = padded_size(xs.size)
    got = kernel(*args, *(device_array(pad(v, size)) for v in (xs, *more)), **static)
    return np.asarray(got, np.float64)[: xs.size]


@float64_kernel
def profile(
    noise_fn, scale, shape, sensitivity, epsilon, compositions=1, sampling_rate=None, bin_width=1e-4
):
    r"""``delta(epsilon)`` (array) of ``noise_fn(scale, shape)`` after ``compositions`` uses.

    .. math:: \delta(\epsilon) = \max_{\text{adjacency}} \Big(P(L_K = \infty)
              + \mathbb E\big[(1 - e^{\epsilon - L_K})_+\big]\Big),\qquad L_K = \sum_{k=1}^K L_k

    the hockey stick (eq. (2) of flipped-huber-mechanism) of the ``K``-fold composed
    privacy loss, from pessimistic PLDs (Doroshenko et al. 2022; Koskela, Jälkö & Honkela
    2020) and, where :func:`plan` coarsens, the Chernoff bound of the composed moments
    (minimum of the certified answers, with an :class:`EngineNote` warning).

    Args:
      noise_fn: ``(scale, shape) -> noise`` of the family (hashable: a jit static).
      scale: noise scale ``> 0``.
      shape: noise shape parameter (ignored by one-parameter families).
      sensitivity: per-use shift ``Delta > 0``.
      epsilon: ``epsilon >= 0`` (any shape).
      compositions: number of uses ``K >= 1``.
      sampling_rate: Poisson rate ``q`` in ``(0, 1]``, or ``None`` (no subsampling).
      bin_width: requested loss-grid spacing.

    Returns:
      Certified upper bounds on ``delta(epsilon)``, a NumPy array of ``epsilon``'s shape
      (e.g. ``1.0981e-4`` at ``epsilon = 1`` for 10 uses of ``N(0, 10^2)``, one use of
      ``N(0, 10)``; see :func:`epsilon` for a runnable example).
    """
    return np.exp(
        _evaluate(
            log_delta_kernel, noise_fn, scale, shape, sensitivity, epsilon, compositions,
            sampling_rate, bin_width,
        )
    )


@float64_kernel
def target_profile(
    noise_fn, scale, shape, sensitivity, epsilon, delta, compositions=1, sampling_rate=None,
    bin_width=1e-4,
):
    r"""``log delta(epsilon)`` (array) as the certificate of a target ``delta`` re-checks it:
    :func:`profile`'s bound, its tilted composition sized for ``delta``.

    .. math:: \log\hat\delta_K(\epsilon) \le \log\big(\delta\,(1 - \text{MARGIN})\big)
              \iff \text{the parameters are certified at } (\epsilon, \delta)

    (the hockey stick of :func:`profile`, eq. (2) of flipped-huber-mechanism).  Where the
    target tilts (``delta (1 - MARGIN) <= TILT_BELOW``, :func:`_target_tilts`) the tilted
    composition answers alone, resolving ``delta``: the plain grid, mostly floored by its
    round-off there, is not composed (an :func:`epsilon` query's re-check, a calibration's
    certificate; where the plain answer would have been the smaller, this one is a little
    looser, docs/accounting.md).  Elsewhere, or where the tilted composition does not
    answer, the plain grid answers, tilted where its round-off decides; the target, not the
    answer, sets the tilt (:func:`profile` also tilts a plain answer below
    :data:`PROFILE_TILT_BELOW`).  Every answer is certified; :func:`profile` asked at the
    same arguments afterwards reads this one (the memo, unless it answered them before).

    Args:
      noise_fn, scale, shape, sensitivity, epsilon, compositions, sampling_rate, bin_width:
        as in :func:`profile`.
      delta: the target ``delta`` the answer is a certificate for (broadcast with
        ``epsilon``).

    Returns:
      Certified upper bounds on ``log delta(epsilon)``, a NumPy array of ``epsilon``'s
      shape.

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.noise import Gaussian
      >>> def gaussian(scale, shape):
      ...     return Gaussian(scale)
      >>> log_d = target_profile(gaussian, 2.0, 0.0, 1.0, 3.3, 1e-8, compositions=100,
      ...                        sampling_rate=0.1)
      >>> bool(log_d <= math.log(1e-8))
      True
    """
    with np.errstate(divide="ignore"):
        levels = np.log(np.asarray(delta, np.float64))
    return _evaluate(
        log_delta_kernel, noise_fn, scale, shape, sensitivity, epsilon, compositions,
        sampling_rate, bin_width, levels=levels,
    )


@float64_kernel
def epsilon(
    noise_fn, scale, shape, sensitivity, delta, compositions=1, sampling_rate=None, bin_width=1e-4
):
    r"""Least certified ``epsilon`` (array) at ``delta`` after ``compositions`` uses.

    .. math:: \epsilon(\delta) = \min\{\epsilon \ge 0 : \delta_K(\epsilon) \le \delta\,
              (1 - \text{MARGIN})\}

    for the profile ``delta_K`` of :func:`profile` (each certified answer re-evaluated at
    the ``epsilon`` it returns, :func:`.query.epsilon_for_delta`).

    Args:
      noise_fn, scale, shape, sensitivity, compositions, sampling_rate, bin_width: as in
        :func:`profile`.
      delta: target ``delta`` (any shape).

    Returns:
      Certified ``epsilon``, a NumPy array of ``delta``'s shape (``inf`` where none).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.noise import Gaussian
      >>> def gaussian(scale, shape):
      ...     return Gaussian(scale)
      >>> # DP-SGD: sigma 1, q = 0.01, 1000 steps (dp_accounting's PLD: 1.828)
      >>> e = epsilon(gaussian, 1.0, 0.0, 1.0, 1e-5, compositions=1000, sampling_rate=0.01)
      >>> round(float(e), 2)
      1.83
    """
    return _evaluate(
        epsilon_kernel, noise_fn, scale, shape, sensitivity, delta, compositions,
        sampling_rate, bin_width,
    )


@float64_kernel
def chernoff_epsilon(log_mgf, delta):
    r"""Convenience: Chernoff-only epsilon of a composed ``log_mgf`` (see :mod:`.tail_bounds`).

    .. math:: \epsilon = \min_{\lambda > 0} \frac{\log M(\lambda) + \log c(\lambda)
              - \log\delta}{\lambda}

    (Canonne, Kamath & Steinke 2020; :func:`.tail_bounds.epsilon_chernoff`).

    Args:
      log_mgf: ``log M(lambda)`` on :data:`~dpjax.accounting.pld.LAMBDAS`.
      delta: target ``delta`` in ``(0, 1)``.

    Returns:
      ``epsilon`` (no mass at infinity accounted).
    """
    return tail_bounds.epsilon_chernoff(log_mgf, jnp.log(jnp.asarray(delta)))
