r"""From events to PLDs: one dominating pair per direction of the neighbouring relation.

Directions: ``"add_remove"`` accounts both ``"remove"`` (the neighbour lacks the record) and
``"add"`` and reports the worse (Zhu, Dong & Wang 2022, Thm 11, as dp_accounting does);
``"remove"`` / ``"add"`` one of them (remove-only / add-only adjacency); ``"replace_one"`` one
symmetric ``"replace"`` pair; ``"replace_special"`` (dp_accounting's ``REPLACE_SPECIAL``: a
record replaced by a special one) both directions with the ``"add_remove"`` pairs, except
randomized response, whose ``"remove"`` pair is ``(R(x), uniform)`` and ``"add"`` pair its
reverse (dp_accounting ``from_randomized_response``).  Each leaf event becomes a PLD per
direction:

* additive noise (``Gaussian``, ``Laplace``, ``Noise``): the shift pair ``(T, T - Delta)``,
  ``Delta = 1`` (add/remove) or ``2`` (replace-one: one record moves anywhere in the ball);
  truncated Laplace (bounded support: the loss is ``+infinity`` where ``T - Delta`` has no
  density) through its exact loss law (eq. (26) of flipped-huber-mechanism, App. F:
  atoms and the middle part cut at the grid), Poisson-subsampled under add/remove through
  the mixed pairs of those atoms (:func:`.truncated_laplace.poisson_truncated_laplace_atoms`;
  replace-one refused);
* ``PoissonSampled`` of additive noise: :mod:`.pld.subsample` (add/remove),
  :func:`.pld.mixture.replace_one_poisson_pld` (replace-one); of a discrete pair or of a
  mixture of Gaussians: the mixed pair (exact; pure DP gets ``log(1 + q (e^eps - 1))``);
* discrete events: :mod:`.pld.finite_pairs` (exact atoms), mixtures of Gaussians
  :mod:`.pld.mixture`;
* ``TruncatedSubsampledGaussian``: the mixture, per direction, of the Poisson-subsampled
  Gaussian's PLD (weight ``1 - t``) and the replace-one Poisson PLD at shift 2 (weight
  ``t``) (:func:`truncated_subsampled_gaussian_plds`);
* ``ZCDP`` and ``SampledWithoutReplacement`` (replace-one): :func:`.pld.profile_pair.from_profile`
  of a certified profile bound (Canonne, Kamath & Steinke 2020; Balle, Barthe & Gaboardi 2018,
  Thm 9 with ``gamma = m / n``).

Anything else raises :class:`UnsupportedEventError` naming the event and the relation.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction

import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp as jax_logsumexp

from dpjax._batching import device_array, pad, padded_size
from dpjax.accounting import events as ev
from dpjax.accounting.pld import PLD, amplification, finite_pairs, mixture
from dpjax.accounting.pld._pld import make
from dpjax.accounting.pld.atoms import from_atoms
from dpjax.accounting.pld.compose import (
    ceil_pow2,
    compose,
    floored_size,
    max_grid_points,
    self_compose,
    self_compose_size,
    window_size,
)
from dpjax.accounting.pld.discretise import TAIL, discretise_noise, noise_grid
from dpjax.accounting.pld.profile_pair import from_profile
from dpjax.accounting.pld.query import delta_for_epsilon
from dpjax.accounting.pld.subsample import (
    ADJACENCIES,
    discretise_subsampled,
    discretise_subsampled_pairs,
    subsampled_grid,
)
from dpjax.accounting.pld.underflow import charge_underflow
from dpjax.accounting.staircase import replace_one_poisson_atoms
from dpjax.accounting.truncated_laplace import (
    poisson_truncated_laplace_atoms,
    truncated_laplace_loss_atoms,
)
from dpjax.certificate import TINY
from dpjax.noise.gaussian import Gaussian
from dpjax.numerics import float64_kernel
from dpjax.numerics.export_cache import call_cached

DIRECTIONS = {
    "add_remove": ("remove", "add"),
    "remove": ("remove",),
    "add": ("add",),
    "replace_one": ("replace",),
    "replace_special": ("remove", "add"),
}
#: Relations whose directions are the two orders of one pair (``remove``: the sampled
#: output against the one without the record; ``add``: the reverse), each PLD its own order.
_ONE_ORDER = ("add_remove", "remove", "add")
#: Profile-bound PLDs stop where the bound is below this (the rest goes to ``+infinity``).
_PROFILE_FLOOR = 1e-40


class UnsupportedEventError(ValueError):
    """An event (or an event under a relation) that dpjax cannot account."""


class UnboundedLoss(Exception):
    """Raised while discretising: a leaf's loss range does not fit a loss grid.

    A noise scale so small (e.g. ``Gaussian(5e-324)``, which XLA flushes to zero) that
    its losses are not finite float64 numbers, or need more grid points than the engine's
    cap (:func:`~dpjax.accounting.pld.compose.max_grid_points`).  The accountant then
    answers from the grid vacuously (``delta = 1``): certified, and what such a mechanism
    nearly is (no privacy).
    """


def _sized(grid):
    """``grid()`` -> ``(lower, size)``, or :class:`UnboundedLoss` where the loss range is not
    finite (``OverflowError`` from ``floor`` of ``inf``) or ``size`` exceeds the engine's cap
    (:func:`~dpjax.accounting.pld.compose.max_grid_points`)."""
    try:
        lower, size = grid()
    except OverflowError as err:
        raise UnboundedLoss(str(err)) from None
    if size > max_grid_points():
        raise UnboundedLoss(f"{size} grid points")
    return lower, size


def _sized_all(grids, directions) -> dict:
    """:func:`_sized` of a ``{direction: (lower, size)}`` helper, every direction checked."""
    try:
        got = grids()
    except OverflowError as err:
        raise UnboundedLoss(str(err)) from None
    for d in directions:
        _sized(lambda d=d: got[d])
    return got


def subnormal_scale(event) -> bool:
    """A noise scale below the least normal float64 (XLA flushes it to zero)."""
    if isinstance(event, ev.PoissonSampled):
        return subnormal_scale(event.event)
    if isinstance(event, (ev.Gaussian, ev.Laplace)):
        return float(event.noise_multiplier) < TINY
    if isinstance(event, ev.MixtureOfGaussians):
        return float(event.standard_deviation) < TINY
    if isinstance(event, ev.TruncatedSubsampledGaussian):
        return float(event.noise_multiplier) < TINY
    return False


class NonPrivateEvent(Exception):
    """Raised while flattening: the events contain :class:`~.events.NonPrivate`."""


def unsupported(event, relation: str, why: str = "") -> UnsupportedEventError:
    """The error for an event dpjax cannot account under ``relation``.

    Args:
      event: the event.
      relation: the neighbouring relation.
      why: what is missing (appended).

    Returns:
      An :class:`UnsupportedEventError` naming the event type and the relation.
    """
    name = type(event).__name__
    return UnsupportedEventError(
        f"dpjax cannot account {name} under relation {relation!r}{': ' + why if why else ''}"
    )


def flatten(event, count: int = 1) -> list[tuple[ev.Event, int]]:
    """Leaf events with their repetition counts (equal leaves merged, order kept).

    Args:
      event: an event.
      count: repetitions of ``event``.

    Returns:
      ``[(leaf, count), ...]`` without ``NoOp`` and zero counts.

    Raises:
      NonPrivateEvent: a ``NonPrivate`` leaf with a positive count.
    """
    out: list[tuple[ev.Event, int]] = []

    def walk(e, k):
        if k == 0 or isinstance(e, ev.NoOp):
            return
        if isinstance(e, ev.NonPrivate):
            raise NonPrivateEvent()
        if isinstance(e, ev.Composed):
            for sub in e.events:
                walk(sub, k)
        elif isinstance(e, ev.SelfComposed):
            walk(e.event, k * e.count)
        else:
            if not isinstance(e, ev.Event):
                raise TypeError(f"not a dpjax event: {type(e).__name__}")
            for i, (leaf, n) in enumerate(out):
                if type(leaf) is type(e) and leaf == e:
                    out[i] = (leaf, n + k)
                    return
            out.append((e, k))

    walk(event, int(count))
    return out


_ADDITIVE = (ev.Gaussian, ev.Laplace, ev.Noise)
#: The relations randomized response is defined for (as in dp_accounting).
_RR_RELATIONS = ("replace_one", "replace_special")
_RR_WHY = "randomized response is defined for replace_one and replace_special"
PAIRS = (ev.DiscreteLaplace, ev.DiscreteGaussian, ev.EpsilonDelta)
#: The integer-valued additive noises: Poisson-sampled under replace-one they mix three
#: shifts (:func:`_discrete_replace_pld`).
_DISCRETE_NOISE = (ev.DiscreteLaplace, ev.DiscreteGaussian)
#: Events Poisson-sampled as a whole (a ``K``-dim query's uses: one coin for every
#: coordinate), accounted through their profiles (:func:`_amplified`).
_COMPOSITE = (ev.Composed, ev.SelfComposed)
#: The additive family of bounded support (its pair is not a log-concave shift on the line).
_BOUNDED = "truncated-laplace"
#: The additive family that is not log-concave: its pair at one shift dominates the smaller
#: shifts only when the shift is its width (:func:`staircase_as_pure_dp`).
_STAIRCASE = "staircase"


def _is_staircase(event) -> bool:
    return isinstance(event, ev.Noise) and event.mechanism == _STAIRCASE


def staircase_as_pure_dp(event, relation: str):
    r"""A staircase noise leaf whose width is not the relation's shift, as the pure-DP event
    Geng & Viswanath prove for it; any other event unchanged.

    .. math:: \epsilon_0 = \text{decay} \cdot \lceil \Delta / \text{width} \rceil,
              \qquad \Delta = 1 \ (2 \text{ under replace-one})

    (sensitivity units; the ceiling in exact rational arithmetic, the product rounded up).
    The PLD and RDP paths take a noise's pair at the one shift ``Delta``, which dominates
    every smaller shift for log-concave noise.  The staircase is not log-concave: at a shift
    equal to its width its privacy loss is monotone (``-decay, 0, decay``) and that pair
    dominates every smaller shift (``tests/accounting/events/test_staircase_leaf.py``
    checks it against the exact supremum over shifts,
    :func:`dpjax.accounting.staircase.log_delta_staircase`), but at any other width the
    loss is not monotone and the one-shift pair is not the worst (at width 2.5 and shift 1
    it gave ``delta(0) ~ 1e-19`` where the supremum over shifts is 0.109).  There the
    staircase is accounted as the ``epsilon_0``-DP pair of randomized response
    (:class:`~.events.EpsilonDelta`): certified, looser.

    Args:
      event: a leaf event.
      relation: the neighbouring relation.

    Returns:
      ``EpsilonDelta(epsilon_0, 0)`` or ``event``.
    """
    if not _is_staircase(event):
        return event
    shift = 2 if relation == "replace_one" else 1
    if float(event.params["width"]) == shift:
        return event
    return ev.EpsilonDelta(_staircase_pure_epsilon(event.params, shift), 0.0)


def _staircase_pure_epsilon(params, shift: int) -> float:
    """``decay * ceil(shift / width)`` (exact rational ceiling, product rounded up): Geng &
    Viswanath's pure-DP epsilon of a staircase at shifts up to ``shift``."""
    steps = math.ceil(Fraction(shift) / Fraction(float(params["width"])))
    return math.nextafter(float(params["decay"]) * steps, math.inf)


def staircase_replace_poisson_pure_dp(event: ev.PoissonSampled) -> ev.EpsilonDelta:
    r"""A Poisson-sampled staircase under replace-one, at a width other than the
    sensitivity, as the pure-DP event its mixture pair satisfies.

    The pair is ``P = (1 - q) P_0 + q P_a`` against ``Q = (1 - q) P_0 + q P_b`` (``P_s``: the
    staircase shifted by a contribution ``s`` in ``[-1, 1]``), with density ratios
    ``r_a = p_a / p_0`` and ``r_b`` in ``[e^{-epsilon_1}, e^{epsilon_1}]`` and ``r_a / r_b
    <= e^{epsilon_2}`` (Geng & Viswanath's bounds at shifts 1 and 2, :func:`staircase_as_
    pure_dp`), so the loss ``log((1 - q) + q r_a) - log((1 - q) + q r_b)`` is at most

    .. math:: \epsilon' = \log\big(1 - q + q e^{\epsilon_1}\big)
              - \log\big(1 - q + q e^{\max(-\epsilon_1,\ \epsilon_1 - \epsilon_2)}\big)

    (rounded up), for every pair of contributions: no monotone loss or worst pair needed.
    Certified and looser than the exact atoms the accountant takes at width 1
    (:func:`_staircase_replace_pld`).

    Args:
      event: ``PoissonSampled(q, Noise("staircase", ...))``.

    Returns:
      ``EpsilonDelta(epsilon', 0)``.
    """
    q, params = float(event.sampling_probability), event.event.params
    e1, e2 = _staircase_pure_epsilon(params, 1), _staircase_pure_epsilon(params, 2)
    up = float(np.logaddexp(math.log1p(-q), math.log(q) + e1))  # log(1 - q + q e^e1)
    low = math.log1p(q * math.expm1(max(-e1, e1 - e2)))  # log(1 - q + q e^(...)) <= 0
    pad = 8.0 * np.finfo(np.float64).eps * (abs(up) + abs(low) + 1.0)
    return ev.EpsilonDelta(float(up - low + pad), 0.0)


def check_leaf(leaf, relation: str) -> None:
    """Raise :class:`UnsupportedEventError` unless :func:`leaf_plds` can account ``leaf``.

    Args:
      leaf: a leaf event (:func:`flatten`).
      relation: the neighbouring relation.
    """
    replace = relation == "replace_one"
    if isinstance(leaf, ev.SampledWithReplacement):
        raise unsupported(leaf, relation, "sampling with replacement is not accounted yet")
    if isinstance(leaf, ev.RandomizedResponse) and relation not in _RR_RELATIONS:
        raise unsupported(leaf, relation, _RR_WHY)
    if isinstance(leaf, ev.MixtureOfGaussians) and replace:
        raise unsupported(leaf, relation, "use add_remove, add or remove")
    if isinstance(leaf, ev.SampledWithoutReplacement):
        if not replace:
            raise unsupported(leaf, relation, "sampling without replacement is accounted under "
                              "replace_one (fixed-size batches)")
        if not isinstance(leaf.event, _ADDITIVE + PAIRS + (ev.RandomizedResponse,)):
            raise unsupported(leaf, relation, f"sampling of {type(leaf.event).__name__}")
    if isinstance(leaf, ev.PoissonSampled):
        base = leaf.event
        allowed = (_ADDITIVE + _DISCRETE_NOISE if replace
                   else _ADDITIVE + PAIRS + (ev.MixtureOfGaussians,)) + _COMPOSITE
        if not isinstance(base, allowed):
            raise unsupported(leaf, relation, f"Poisson sampling of {type(base).__name__}")
        if isinstance(base, _COMPOSITE):  # accounted through the inner event's profiles
            for inner, _ in flatten(base):
                for inner_relation in _inner_relations(relation):
                    check_leaf(inner, inner_relation)
    if isinstance(leaf, (ev.Composed, ev.SelfComposed, ev.NoOp, ev.NonPrivate)):
        raise unsupported(leaf, relation, "not a leaf event")


def _discrete_pair(event, relation: str):
    """``(p, q)`` of a discrete leaf under ``relation``, or ``None``."""
    shift = 2 if relation == "replace_one" else 1
    if isinstance(event, ev.DiscreteLaplace):
        return finite_pairs.discrete_laplace_pair(event.noise_parameter, shift * event.sensitivity)
    if isinstance(event, ev.DiscreteGaussian):
        return finite_pairs.discrete_gaussian_pair(event.sigma, shift * event.sensitivity)
    if isinstance(event, ev.EpsilonDelta):
        return finite_pairs.epsilon_delta_pair(event.epsilon, event.delta)
    if isinstance(event, ev.RandomizedResponse):
        if relation not in _RR_RELATIONS:
            raise unsupported(event, relation, _RR_WHY)
        if event.num_buckets == 1:
            return np.ones(1), np.ones(1)
        if relation == "replace_special":
            return randomized_response_special_pair(event.noise_parameter, event.num_buckets)
        return finite_pairs.randomized_response_pair(event.noise_parameter, event.num_buckets)
    return None


def randomized_response_special_pair(noise_parameter: float, num_buckets: int):
    r"""``(p, q)`` of k-ary randomized response on ``x`` vs the special record (remove).

    .. math:: p = (1 - \rho + \rho/k,\ (k-1)\rho/k),\qquad q = (1/k,\ (k-1)/k)

    over the outputs ``x`` and the others: the special record's output is uniform
    (dp_accounting ``from_randomized_response`` under ``REPLACE_SPECIAL``); the ``"add"``
    direction is the reversed pair ``(q, p)``.

    Args:
      noise_parameter: ``rho`` in ``[0, 1]`` (``0``: ``p`` has no mass off ``x``, so the
        add direction has a loss ``+inf``).
      num_buckets: ``k >= 2``.

    Returns:
      ``(p, q)``: NumPy float64 arrays.
    """
    r, k = float(noise_parameter), int(num_buckets)
    p = np.array([1.0 - r + r / k, (k - 1) * r / k])
    q = np.array([1.0 / k, (k - 1) / k])
    return p, q


def _noise_pld(noise, shift: float, h: float, pessimistic: bool, tail: float = TAIL) -> PLD:
    """Connect-the-dots PLD of ``(T, T - shift)`` on a grid of :func:`.pld.compose.floored_size`
    (the extra points carry the exact, vanishing, masses): few compiles across events."""
    lower, size = _sized(lambda: noise_grid(noise, shift, h, tail))
    f64 = functools.partial(device_array, dtype=np.float64)
    pld = call_cached(  # a warm process loads its compiled program (export cache)
        discretise_noise, noise, f64(shift), f64(h), lower, tail=tail,
        static_argnames=("size", "pessimistic"), size=floored_size(size),
        pessimistic=pessimistic,
    )
    return charge_underflow(pld, tail)


#: The static arguments of :func:`.pld.subsample.discretise_subsampled`.
_SUBSAMPLED_STATIC = ("adjacency", "size", "pessimistic")


def _subsampled_plds(noise, q, h, pessimistic: bool, directions, tail: float = TAIL) -> dict:
    """Poisson-subsampled PLDs per direction (:mod:`.pld.subsample`), grids of
    :func:`.pld.compose.floored_size`.  Upper bounds (``pessimistic``) of both directions
    come from one program (:func:`.pld.subsample.discretise_subsampled_pairs`, the same
    doubles as one program per direction) where their grids have one size (a symmetric
    noise: the two loss ranges mirror each other); otherwise, and for lower bounds (whose
    bin edges are placed by comparisons that a last-bit change can flip), one program per
    direction."""
    grids = _sized_all(lambda: subsampled_grid(noise, 1.0, q, h, tail), directions)
    f64 = functools.partial(device_array, dtype=np.float64)
    sizes = {floored_size(grids[d][1]) for d in directions}
    if pessimistic and set(directions) == set(ADJACENCIES) and len(sizes) == 1:
        pair = call_cached(  # a warm process loads its compiled program (export cache)
            discretise_subsampled_pairs, noise, f64(1.0), f64(q), bin_width=f64(h),
            lowers=np.asarray([grids[d][0] for d in ADJACENCIES], np.int64), tail=tail,
            static_argnames=("size", "pessimistic"), size=sizes.pop(),
            pessimistic=pessimistic,
        )
        return {d: charge_underflow(pld, tail) for d, pld in zip(ADJACENCIES, pair, strict=True)}
    return {
        d: charge_underflow(
            call_cached(
                discretise_subsampled, noise, f64(1.0), f64(q), bin_width=f64(h),
                lower=grids[d][0], tail=tail, static_argnames=_SUBSAMPLED_STATIC, adjacency=d,
                size=floored_size(grids[d][1]), pessimistic=pessimistic,
            ),
            tail,
        )
        for d in directions
    }


def _same(pld, relation):
    return {d: pld for d in DIRECTIONS[relation]}


@float64_kernel
def leaf_plds(event, relation: str, bin_width: float, pessimistic: bool = True, tail=TAIL):
    """``{direction: PLD}`` of one leaf event (module docstring).

    Args:
      event: a leaf event (not ``Composed`` / ``SelfComposed`` / ``NoOp`` / ``NonPrivate``).
      relation: one of :data:`~.events.RELATIONS`.
      bin_width: grid spacing of every PLD.
      pessimistic: upper (default) or lower discretisation; ``False`` returns ``None`` for
        the events accounted through a profile bound (no lower bound is known there).
      tail: the mass each continuous pair leaves beyond its ``t`` range (a pessimistic PLD
        sends ``delta`` of its grid top, at most this, to ``+infinity``; default
        :data:`.pld.discretise.TAIL`): additive noise, its Poisson subsampling (every
        relation), mixtures of Gaussians and the profile-bound events take it; discrete
        pairs are exact atoms.

    Returns:
      ``{direction: PLD}`` (or ``None``).

    Raises:
      UnsupportedEventError: the event cannot be accounted under ``relation``.
    """
    check_leaf(event, relation)
    event = staircase_as_pure_dp(event, relation)
    if subnormal_scale(event):
        raise UnboundedLoss(f"{event!r}: a subnormal noise scale")
    h = float(bin_width)
    dirs = DIRECTIONS[relation]
    noise = ev.noise_family(event)
    if noise is not None:
        shift = 2.0 if relation == "replace_one" else 1.0
        if isinstance(event, ev.Noise) and event.mechanism == _BOUNDED:
            return _same(_bounded_pld(noise, shift, h, pessimistic), relation)
        return _same(_noise_pld(noise, shift, h, pessimistic, tail), relation)
    pair = _discrete_pair(event, relation)
    if pair is not None:
        if isinstance(event, ev.RandomizedResponse) and relation == "replace_special":
            return {"remove": finite_pairs.discrete_pld(*pair, h, pessimistic),
                    "add": finite_pairs.discrete_pld(pair[1], pair[0], h, pessimistic)}
        return _same(finite_pairs.discrete_pld(*pair, h, pessimistic), relation)
    if isinstance(event, ev.TruncatedSubsampledGaussian):
        return truncated_subsampled_gaussian_plds(event, relation, h, pessimistic, tail)
    if isinstance(event, ev.MixtureOfGaussians):
        if relation == "replace_one":
            raise unsupported(event, relation, "use add_remove, add or remove")
        try:
            plds = mixture.mixture_of_gaussians_plds(
                event.standard_deviation, event.sensitivities, event.sampling_probs, h,
                pessimistic, tail,
            )
        except OverflowError as err:  # a loss range beyond float64 or the grid cap
            raise UnboundedLoss(str(err)) from None
        return {d: plds[d] for d in dirs}
    if isinstance(event, ev.PoissonSampled):
        return _poisson(event, relation, h, pessimistic, tail)
    if isinstance(event, ev.ZCDP):
        if not pessimistic:
            return None
        # cycle: dpjax.accounting.events.plds <-> dpjax.accounting.rdp.ledger (via the rdp package)
        from dpjax.accounting.rdp.zcdp import delta_from_zcdp

        rho = float(event.rho)
        floor = min(_PROFILE_FLOOR, float(tail))
        top = rho + 2.0 * math.sqrt(rho * math.log(1.0 / floor)) + 1.0
        return _same(from_profile(lambda e: np.asarray(delta_from_zcdp(rho, e)), top, h), relation)
    if isinstance(event, ev.SampledWithoutReplacement):
        return _without_replacement(event, relation, h, pessimistic, tail)
    if isinstance(event, ev.SampledWithReplacement):
        raise unsupported(event, relation, "sampling with replacement is not accounted yet")
    raise unsupported(event, relation)


def _bounded_pld(noise, shift: float, h: float, pessimistic: bool = True) -> PLD:
    r"""PLD of truncated Laplace ``TL(lambda, A)`` at shift ``Delta``: its exact loss law
    (:func:`~dpjax.accounting.truncated_laplace.truncated_laplace_loss_atoms`: atoms at
    ``+infinity`` (where ``T - Delta`` has no density), ``+-Delta / lambda`` and the middle
    part cut at the grid points) by connect-the-dots (:func:`.pld.atoms.from_atoms`),
    pessimistic or a lower bound.  Symmetric noise: one law for both orders."""
    losses, probs = truncated_laplace_loss_atoms(
        float(noise.scale), float(noise.bound), shift, h, pessimistic)
    finite = losses[np.isfinite(losses)]
    if not finite.size:  # disjoint supports: no privacy (the accountant answers delta = 1)
        raise UnboundedLoss("disjoint supports: every loss is +infinity")
    if (finite.max() - finite.min()) / h + 2 > max_grid_points():
        raise UnboundedLoss(f"{finite.size} loss atoms")
    return from_atoms(losses, probs, h, pessimistic)


def _bounded_poisson_plds(noise, q: float, h: float, pessimistic: bool, directions):
    r"""``{direction: PLD}`` of Poisson-subsampled truncated Laplace (add/remove directions):
    the atoms of :func:`~dpjax.accounting.truncated_laplace.poisson_truncated_laplace_atoms`
    (the mixed pairs of its base atoms, with ``+infinity`` under ``remove``) by
    connect-the-dots; ``None`` for a lower bound (none is known for the mixed pairs of
    bounded-support noise: the accountant's bracket then has no lower end here)."""
    if not pessimistic:
        return None
    out = {}
    for d in directions:
        losses, probs = poisson_truncated_laplace_atoms(
            float(noise.scale), float(noise.bound), 1.0, q, d, h)
        finite = losses[np.isfinite(losses)]
        if finite.size and (finite.max() - finite.min()) / h + 2 > max_grid_points():
            raise UnboundedLoss(f"{finite.size} loss atoms")
        out[d] = from_atoms(losses, probs, h, True)
    return out


def _poisson(event: ev.PoissonSampled, relation, h, pessimistic, tail=TAIL):
    q, base = float(event.sampling_probability), staircase_as_pure_dp(event.event, relation)
    if q == 0.0:
        return {}
    if q == 1.0 and not isinstance(base, _COMPOSITE):  # a composite at q = 1: its profile
        return leaf_plds(base, relation, h, pessimistic, tail)
    if relation == "replace_one" and _is_staircase(event.event):
        if float(event.event.params["width"]) == 1.0:
            return _same(_staircase_replace_pld(event.event.params, q, h, pessimistic), relation)
        return leaf_plds(staircase_replace_poisson_pure_dp(event), relation, h, pessimistic, tail)
    if relation == "replace_one" and isinstance(base, _DISCRETE_NOISE):
        return _same(_discrete_replace_pld(base, q, h, pessimistic), relation)
    bounded = isinstance(base, ev.Noise) and base.mechanism == _BOUNDED
    if isinstance(base, _COMPOSITE) or (bounded and relation == "replace_one"):
        return _amplified(event, relation, h, pessimistic, tail)
    noise = ev.noise_family(base)
    if bounded:
        return _bounded_poisson_plds(noise, q, h, pessimistic, DIRECTIONS[relation])
    if noise is not None:
        if relation == "replace_one":
            try:
                pld = mixture.replace_one_poisson_pld(noise, q, 1.0, h, pessimistic, tail)
            except OverflowError as err:
                raise UnboundedLoss(str(err)) from None
            return _same(pld, relation)
        return _subsampled_plds(noise, q, h, pessimistic, DIRECTIONS[relation], tail)
    if relation == "replace_one":
        raise unsupported(event, relation, "replace_one Poisson sampling needs additive noise")
    if isinstance(base, ev.MixtureOfGaussians):
        c = (0.0,) + tuple(float(x) for x in base.sensitivities)
        w = (1.0 - q,) + tuple(q * float(x) for x in base.sampling_probs)
        mixed = ev.MixtureOfGaussians(float(base.standard_deviation), c, w)
        return leaf_plds(mixed, relation, h, pessimistic, tail)
    pair = _discrete_pair(base, relation) if not isinstance(base, ev.RandomizedResponse) else None
    if pair is None:
        raise unsupported(event, relation, f"Poisson sampling of {type(base).__name__}")
    return {
        d: finite_pairs.discrete_pld(
            *finite_pairs.poisson_subsampled_pair(*pair, q, d), h, pessimistic
        )
        for d in DIRECTIONS[relation]
    }


def _discrete_replace_pld(base, q: float, h: float, pessimistic: bool) -> PLD:
    r"""PLD of one Poisson-subsampled discrete-noise use under replace-one: the exact pair
    ``(1 - q) X + q (X + s)`` against ``(1 - q) X + q (X - s)``
    (:func:`~dpjax.accounting.pld.finite_pairs.discrete_laplace_replace_pair`,
    :func:`~dpjax.accounting.pld.finite_pairs.discrete_gaussian_replace_pair`), symmetric, so one
    law for both orders.  That the contributions ``+-s`` are the worst of every pair of
    integer contributions in ``[-s, s]`` is checked exhaustively on a grid of parameters
    (``tests/accounting/events/test_discrete_replace.py``), not proved."""
    if isinstance(base, ev.DiscreteLaplace):
        pair = finite_pairs.discrete_laplace_replace_pair(base.noise_parameter, base.sensitivity, q)
    else:
        pair = finite_pairs.discrete_gaussian_replace_pair(base.sigma, base.sensitivity, q)
    return finite_pairs.discrete_pld(*pair, h, pessimistic)


def _staircase_replace_pld(params: dict, q: float, h: float, pessimistic: bool) -> PLD:
    r"""PLD of one Poisson-subsampled staircase use under replace-one, ``(1 - q) T + q (T + 1)``
    against ``(1 - q) T + q (T - 1)``: its exact loss atoms (a loss not monotone in the
    output, periodic in the tails: :func:`~dpjax.accounting.staircase.
    replace_one_poisson_atoms`) by connect-the-dots (:func:`.pld.atoms.from_atoms`),
    pessimistic or a lower bound.  Symmetric noise: one law for both orders.  The staircase
    is not log-concave, so that the contributions ``+-1`` give the worst pair is not a
    theorem here: it is checked (``tests/accounting/events/test_staircase_leaf.py``,
    every pair of contributions on a grid of ``[-1, 1]^2``) at width 1, the only width
    this path takes (other widths: :func:`staircase_replace_poisson_pure_dp`)."""
    try:
        losses, probs = replace_one_poisson_atoms(
            params["decay"], params["width"], params["gamma"], q, 1.0, pessimistic)
    except ValueError as err:  # more periods than the atoms are built for
        raise UnboundedLoss(str(err)) from None
    if (losses.max() - losses.min()) / h + 2 > max_grid_points():
        raise UnboundedLoss(f"{losses.size} loss atoms spanning {np.ptp(losses):.3g} nats")
    return from_atoms(losses, probs, h, pessimistic)


def _inner_relations(relation: str) -> tuple[str, ...]:
    """The relations the event inside a Poisson sampling is accounted under by
    :func:`_amplified`: a record against its absence (``add_remove``: both orders), and
    under ``replace_one`` against another record too."""
    return ("add_remove", "replace_one") if relation == "replace_one" else ("add_remove",)


def _inner_profile(event, relation: str, h: float, tail: float):
    """``(profile, top)`` of an event under ``relation``: the worst of its directions'
    composed pessimistic PLDs as ``epsilon (array) -> delta``, and the top of their loss
    grids (beyond it only the mass at ``+infinity``)."""
    table = leaf_table(flatten(event), relation, h, True, tail)
    plds = [p for p in compose_table(table, relation).values() if p is not None]
    if not plds:  # nothing private inside: no loss at all
        return (lambda e: np.zeros(np.shape(e))), h
    # zero mass at the top to a power of two, and the epsilons padded likewise: the queries
    # of a whole search (a new grid length per scale) share a few compiled programs
    plds = [dataclasses.replace(p, pmf=device_array(pad(np.asarray(p.pmf), padded_size(p.size),
                                                       fill=0.0))) for p in plds]

    def profile(eps):
        eps = np.asarray(eps, np.float64)
        wide = device_array(pad(eps, padded_size(eps.size)))
        out = np.max([np.asarray(delta_for_epsilon(p, wide)) for p in plds], axis=0)
        return out[: eps.size].reshape(eps.shape)

    top = max(p.top() for p in plds)
    return profile, top


def _amplified(event: ev.PoissonSampled, relation, h, pessimistic, tail):
    r"""A Poisson sampling accounted through the profiles of the event it samples
    (:mod:`.pld.amplification`, Balle, Barthe & Gaboardi 2018, Thm 2), as the pair of
    :func:`.pld.profile_pair.from_profile`: the whole of a composed event on one coin
    (a ``K``-dim query's use), and truncated Laplace under ``replace_one`` (no worst pair of
    contributions is known for bounded-support noise; the bound needs none).

    Under ``add_remove``, ``add`` or ``remove`` each direction is one order of the sampled
    pair: its exact profile (:func:`.pld.amplification.poisson_remove` when a record is
    removed, :func:`.pld.amplification.poisson_add` when one is added, of the event's worse
    order) with the other order's below ``x = 1`` (:func:`.pld.profile_pair.from_profile`,
    two-sided: negative losses kept, so ``T`` uses compose to nearly the exact mixture; until
    2026-12-01 one law, the larger of the two profiles with every loss ``>= 0``, served both,
    and ``T = 100`` uses of 20 Gaussian coordinates at ``q = 0.01`` gave ``delta(2) = 6.2e-5``
    where the exact mixture has ``1.0e-5``, now ``1.003e-5``).  Under ``replace_special``
    that one law still.  Under ``replace_one``:
    :func:`.pld.amplification.poisson_replace_one` with the event's ``add_remove`` profile
    and its ``replace_one`` profile (left out where the replaced pair has no finite loss).
    A profile bound, so no lower discretisation (``None``)."""
    if not pessimistic:
        return None
    q, base = float(event.sampling_probability), event.event
    one, top = _inner_profile(base, "add_remove", h, tail)
    if relation == "replace_one":
        try:
            two, top_two = _inner_profile(base, "replace_one", h, tail)
        except UnboundedLoss:  # disjoint supports: every loss +infinity (delta_2 = 1)
            two, top_two = None, top
        bound = amplification.poisson_replace_one(one, q, two)
        top = max(top, top_two)
    else:
        remove, add = amplification.poisson_remove(one, q), amplification.poisson_add(one, q)
        if relation in _ONE_ORDER:
            # each direction's pair: its own order's profile, the other's below x = 1 (the
            # add order's losses end at -log(1 - q), the remove order's at its top)
            top_remove = amplification.sampled_loss(max(top, h), q)
            top_add = -math.log1p(-q) if q < 1.0 else top_remove
            orders = {"remove": (remove, top_remove, add, top_add),
                      "add": (add, top_add, remove, top_remove)}
            return {d: from_profile(fwd, top_fwd, h, reverse=rev, reverse_max=top_rev)
                    for d in DIRECTIONS[relation]
                    for fwd, top_fwd, rev, top_rev in [orders[d]]}

        def bound(e):
            return np.maximum(remove(e), add(e))

    top = amplification.sampled_loss(max(top, h), q)
    return _same(from_profile(bound, top, h), relation)


def _without_replacement(event: ev.SampledWithoutReplacement, relation, h, pessimistic, tail):
    r"""Fixed-size batches of ``m`` out of ``n`` under replace-one: Balle, Barthe & Gaboardi's
    Theorem 9 on the base event's replace-one profile (``gamma = m / n``),

    .. math:: \delta'(\epsilon') \le \gamma\,\delta\big(\log(1 + (e^{\epsilon'} - 1)/\gamma)\big),

    which needs no property of the base pair beyond dominating every substitution (any
    noise, the staircase included: its replace-one leaf is the shift-2 pair at width 2
    and the pure-DP bound of :func:`staircase_as_pure_dp` otherwise).  A profile bound,
    so no lower discretisation (``None``)."""
    if relation != "replace_one":
        raise unsupported(event, relation, "sampling without replacement is accounted under "
                          "replace_one (fixed-size batches)")
    gamma = event.sample_size / event.source_dataset_size
    if gamma >= 1.0:
        return leaf_plds(event.event, relation, h, pessimistic, tail)
    if not pessimistic:
        return None
    base = leaf_plds(event.event, relation, h, True, tail)["replace"]
    top_base = base.top()

    def bound(eps):  # Balle, Barthe & Gaboardi 2018, Thm 9: delta'(eps') <= gamma delta(eps)
        inner = np.log1p(np.expm1(np.asarray(eps, np.float64)) / gamma)
        return gamma * np.asarray(delta_for_epsilon(base, jnp.asarray(inner)))

    top = amplification.sampled_loss(max(top_base, h), gamma)
    return _same(from_profile(bound, top, h), relation)


@float64_kernel
def leaf_table(leaves, relation: str, bin_width: float, pessimistic: bool = True, tail=TAIL):
    """``[({direction: PLD}, count), ...]`` of flattened leaves (those without a PLD omitted).

    Args:
      leaves: ``[(leaf event, count), ...]`` (:func:`flatten`).
      relation: the neighbouring relation.
      bin_width: grid spacing.
      pessimistic: upper (default) or lower discretisation (leaves without a lower bound
        are left out: a sub-composition is a lower bound on the whole).
      tail: the continuous pairs' cut tail (:func:`leaf_plds`).

    Returns:
      The table.
    """
    table = []
    for leaf, count in leaves:
        plds = leaf_plds(leaf, relation, bin_width, pessimistic, tail)
        if plds is not None:
            table.append((plds, count))
    return table


@float64_kernel
def compose_table(table, relation: str):
    """Compose a :func:`leaf_table` per direction: ``{direction: PLD or None}``.

    Self-compositions by FFT powers, then one heterogeneous FFT product
    (:func:`dpjax.accounting.pld.compose`).

    Args:
      table: ``[({direction: PLD}, count), ...]``.
      relation: the neighbouring relation.

    Returns:
      ``{direction: PLD}``; ``None`` for a direction with nothing to compose.
    """
    parts: dict[str, list[PLD]] = {d: [] for d in DIRECTIONS[relation]}
    for plds, count in table:
        for d, pld in plds.items():
            if count > 1:  # FFT lengths: powers of two, at least MIN_GRID_POINTS: few compiles
                size = floored_size(self_compose_size(pld, count), ceil_pow2)
                pld = call_cached(self_compose, pld, count, static_argnames=("size",), size=size)
            parts[d].append(pld)

    def product(ps):
        log_mgf = sum(np.asarray(p.log_mgf, np.float64) for p in ps)  # host: no programs
        return compose(ps, floored_size(window_size(log_mgf, float(ps[0].bin_width)), ceil_pow2))

    composed = {d: (product(ps) if len(ps) > 1 else ps[0] if ps else None)
                for d, ps in parts.items()}
    return _common_length(composed)


def _common_length(plds: dict) -> dict:
    """Every direction's pmf padded with zero mass at the top to the longest one's length.

    The laws are unchanged (a zero-mass grid point adds nothing to any sum); a certified
    value can only rise, by the round-off allowance of the added points (of order 1e-12
    relative), and the queries of both directions (:mod:`.pld.query`, compiled per pmf
    length) then share one compiled program.
    """
    n = max((p.size for p in plds.values() if p is not None), default=0)
    return {
        d: p if p is None or p.size == n
        else dataclasses.replace(p, pmf=jnp.pad(p.pmf, (0, n - p.size)))
        for d, p in plds.items()
    }


#: Relative padding of the truncation probabilities ``t`` and ``q'`` (SciPy's binomial tail,
#: the incomplete beta function, is accurate to a few ulps relative; this covers it by far).
_BINOM_PAD = 1e-9


def truncation_probabilities(event: ev.TruncatedSubsampledGaussian, pessimistic: bool = True):
    r"""``(1 - t, t, q')`` of a truncated Poisson-subsampled Gaussian, padded to its side.

    .. math:: t = P[\mathrm{Bin}(n - 1, q) \ge B],\qquad
              q' = \frac{B\,P[\mathrm{Bin}(n, q) > B]}{n\,t}

    (dp_accounting ``from_truncated_subsampled_gaussian_mechanism``).  Pessimistic: both
    weights and ``q'`` rounded up by :data:`_BINOM_PAD` (the hockey-stick divergence is
    linear in the mixture weights and increasing in the sampling rate, so ``delta`` can only
    rise); optimistic (the bracket's lower end): rounded down.

    Args:
      event: the event.
      pessimistic: the side to pad to.

    Returns:
      ``(w_plain, t, q')`` with ``t = 0`` when no truncation can occur.
    """
    from scipy import stats  # deferred: scipy.stats (heavy import, loaded on first use)

    n, q, b = event.dataset_size, float(event.sampling_probability), event.truncated_batch_size
    t = float(stats.binom.sf(b - 1, n - 1, q))
    if not t > 0.0:
        return 1.0, 0.0, 0.0
    qc = float(stats.binom.sf(b, n, q)) * b / t / n
    up, down = 1.0 + _BINOM_PAD, 1.0 - _BINOM_PAD
    if pessimistic:
        return min(1.0, (1.0 - t) + t * _BINOM_PAD), min(1.0, t * up), min(1.0, qc * up)
    return max(0.0, 1.0 - t * up), t * down, min(1.0, qc * down)


def _mix(parts, pessimistic: bool) -> PLD:
    """The PLD of the mixture ``sum_i w_i (P_i, Q_i)`` of pairs on one grid spacing.

    The hockey-stick divergence is linear in the mixture (the component is revealed: a
    dominating pair of the mechanism that picks pair ``i`` w.p. ``w_i``), so the pmfs,
    the masses at ``+infinity`` and the moment generating functions add with the weights.
    The float64 sums are padded: the masses up by ``4 u``, ``roundoff`` by the mixing's own
    rounding (``4 u`` of the total mass), the log-MGF by ``8 u`` relative.
    """
    u = 2.0**-53
    lo = min(int(p.lower) for _, p in parts)
    hi = max(int(p.lower) + p.size for _, p in parts)
    size = floored_size(hi - lo)
    pmf = sum(
        w * jnp.pad(p.pmf, (int(p.lower) - lo, size - (int(p.lower) - lo) - p.size))
        for w, p in parts
    )
    pad = 1.0 + 4.0 * u if pessimistic else 1.0
    inf_mass = pad * sum(w * float(p.inf_mass) for w, p in parts)
    atom_inf = pad * sum(w * float(p.atom_inf) for w, p in parts)
    log_mgf = jax_logsumexp(
        jnp.stack([math.log(w) + p.log_mgf for w, p in parts if w > 0.0]), axis=0)
    log_mgf = log_mgf + 8.0 * u * jnp.abs(log_mgf)
    return make(
        parts[0][1].bin_width, lo, pmf, inf_mass,
        truncated_mass=sum(w * float(p.truncated_mass) for w, p in parts),
        roundoff=sum(w * float(p.roundoff) for w, p in parts) + 4.0 * u,
        pessimistic=pessimistic, log_mgf=log_mgf, atom_inf=atom_inf,
    )


@float64_kernel
def truncated_subsampled_gaussian_plds(
    event: ev.TruncatedSubsampledGaussian, relation: str, h: float, pessimistic: bool = True,
    tail: float = TAIL,
) -> dict:
    r"""``{direction: PLD}`` of a truncated Poisson-subsampled Gaussian (exact pairs, mixed).

    .. math:: (1 - t)\,\mathrm{PLD}_d\big(\mathrm{PS}_q(\mathcal N(0, m^2))\big)
              + t\,\mathrm{PLD}\big(\mathrm{PS}^{\text{replace}}_{q'}
              (\mathcal N(0, m^2)),\ \Delta = 2\big)

    per direction ``d`` of ``relation`` (dp_accounting
    ``from_truncated_subsampled_gaussian_mechanism``: its second component, replace-one at
    standard deviation ``m / 2``, is the replace-one Poisson pair at shift ``2`` and
    deviation ``m``, the same PLD); ``t``, ``q'`` of :func:`truncation_probabilities`.

    Args:
      event: the event.
      relation: the neighbouring relation.
      h: grid spacing.
      pessimistic: upper (default) or lower discretisation.
      tail: the continuous pairs' cut tail (:func:`leaf_plds`).

    Returns:
      ``{direction: PLD}`` (empty when nothing is released).
    """
    if not (event.dataset_size and event.truncated_batch_size
            and float(event.sampling_probability) > 0.0):
        return {}
    m = float(event.noise_multiplier)
    plain = leaf_plds(ev.PoissonSampled(float(event.sampling_probability), ev.Gaussian(m)),
                      relation, h, pessimistic, tail)
    w, t, qc = truncation_probabilities(event, pessimistic)
    if t == 0.0:
        return plain
    noise = Gaussian(jnp.asarray(m, jnp.float64))
    try:
        if qc >= 1.0:
            second = _noise_pld(noise, 4.0, h, pessimistic, tail)
        else:
            second = mixture.replace_one_poisson_pld(noise, qc, 2.0, h, pessimistic, tail)
    except OverflowError as err:
        raise UnboundedLoss(str(err)) from None
    return {d: _mix([(w, plain[d]), (t, second)], pessimistic) for d in DIRECTIONS[relation]}
