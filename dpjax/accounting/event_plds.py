r"""From events to PLDs: one dominating pair per direction of the neighbouring relation.

Directions: ``"add_remove"`` accounts both ``"remove"`` (the neighbour lacks the record) and
``"add"`` and reports the worse (Zhu, Dong & Wang 2022, Thm 11, as dp_accounting does);
``"remove"`` / ``"add"`` one of them (remove-only / add-only adjacency); ``"replace_one"`` one
symmetric ``"replace"`` pair.  Each leaf event becomes a PLD per direction:

* additive noise (``Gaussian``, ``Laplace``, ``Noise``): the shift pair ``(T, T - Delta)``,
  ``Delta = 1`` (add/remove) or ``2`` (replace-one: one record moves anywhere in the ball);
  truncated Laplace (bounded support: the loss is ``+infinity`` where ``T - Delta`` has no
  density) through :func:`.pld.profile_pair.from_profile` of its exact profile (eq. (26) of
  flipped-huber-mechanism; upper end only, not Poisson-subsampled);
* ``PoissonSampled`` of additive noise: :mod:`.pld.subsample` (add/remove),
  :func:`.pld.mixture.replace_one_poisson_pld` (replace-one); of a discrete pair or of a
  mixture of Gaussians: the mixed pair (exact; pure DP gets ``log(1 + q (e^eps - 1))``);
* discrete events: :mod:`.pld.discrete` (exact atoms), mixtures of Gaussians
  :mod:`.pld.mixture`;
* ``ZCDP`` and ``SampledWithoutReplacement`` (replace-one): :func:`.pld.profile_pair.from_profile`
  of a certified profile bound (Canonne, Kamath & Steinke 2020; Balle, Barthe & Gaboardi 2018,
  Thm 9 with ``gamma = m / n``).

Anything else raises :class:`UnsupportedEventError` naming the event and the relation.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax.numpy as jnp
import numpy as np

from dpjax._batching import bucket as _bucket
from dpjax.accounting import events as ev
from dpjax.accounting.pld import discrete, mixture
from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.discretise import TAIL, discretise_noise, noise_grid
from dpjax.accounting.pld.profile_pair import from_profile
from dpjax.accounting.pld.query import delta_for_epsilon
from dpjax.accounting.pld.subsample import discretise_subsampled, subsampled_grid
from dpjax.accounting.pld.underflow import charge_underflow
from dpjax.numerics import float64_kernel

DIRECTIONS = {
    "add_remove": ("remove", "add"),
    "remove": ("remove",),
    "add": ("add",),
    "replace_one": ("replace",),
}
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
    from dpjax.accounting.pld.compose import max_grid_points

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


def _subnormal_scale(event) -> bool:
    """A noise scale below the least normal float64 (XLA flushes it to zero)."""
    from dpjax.certificate import TINY

    if isinstance(event, ev.PoissonSampled):
        return _subnormal_scale(event.event)
    if isinstance(event, (ev.Gaussian, ev.Laplace)):
        return float(event.noise_multiplier) < TINY
    if isinstance(event, ev.MixtureOfGaussians):
        return float(event.standard_deviation) < TINY
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
_PAIRS = (ev.DiscreteLaplace, ev.DiscreteGaussian, ev.EpsilonDelta)
#: The additive family of bounded support (its pair is not a log-concave shift on the line).
_BOUNDED = "truncated-laplace"


def check_leaf(leaf, relation: str) -> None:
    """Raise :class:`UnsupportedEventError` unless :func:`leaf_plds` can account ``leaf``.

    Args:
      leaf: a leaf event (:func:`flatten`).
      relation: the neighbouring relation.
    """
    replace = relation == "replace_one"
    if isinstance(leaf, ev.SampledWithReplacement):
        raise unsupported(leaf, relation, "sampling with replacement is not accounted yet")
    if isinstance(leaf, ev.RandomizedResponse) and not replace:
        raise unsupported(leaf, relation, "randomized response is defined for replace_one")
    if isinstance(leaf, ev.MixtureOfGaussians) and replace:
        raise unsupported(leaf, relation, "use add_remove, add or remove")
    if isinstance(leaf, ev.SampledWithoutReplacement):
        if not replace:
            raise unsupported(leaf, relation, "sampling without replacement is accounted under "
                              "replace_one (fixed-size batches)")
        if not isinstance(leaf.event, _ADDITIVE + _PAIRS + (ev.RandomizedResponse,)):
            raise unsupported(leaf, relation, f"sampling of {type(leaf.event).__name__}")
    if isinstance(leaf, ev.PoissonSampled):
        base = leaf.event
        allowed = _ADDITIVE if replace else _ADDITIVE + _PAIRS + (ev.MixtureOfGaussians,)
        if not isinstance(base, allowed):
            raise unsupported(leaf, relation, f"Poisson sampling of {type(base).__name__}")
        if isinstance(base, ev.Noise) and base.mechanism == _BOUNDED:
            raise unsupported(leaf, relation, f"Poisson sampling of {_BOUNDED} noise")
    if isinstance(leaf, (ev.Composed, ev.SelfComposed, ev.NoOp, ev.NonPrivate)):
        raise unsupported(leaf, relation, "not a leaf event")


def _discrete_pair(event, relation: str):
    """``(p, q)`` of a discrete leaf under ``relation``, or ``None``."""
    shift = 2 if relation == "replace_one" else 1
    if isinstance(event, ev.DiscreteLaplace):
        return discrete.discrete_laplace_pair(event.noise_parameter, shift * event.sensitivity)
    if isinstance(event, ev.DiscreteGaussian):
        return discrete.discrete_gaussian_pair(event.sigma, shift * event.sensitivity)
    if isinstance(event, ev.EpsilonDelta):
        return discrete.epsilon_delta_pair(event.epsilon, event.delta)
    if isinstance(event, ev.RandomizedResponse):
        if relation != "replace_one":
            raise unsupported(event, relation, "randomized response is defined for replace_one")
        if event.num_buckets == 1:
            return np.ones(1), np.ones(1)
        return discrete.randomized_response_pair(event.noise_parameter, event.num_buckets)
    return None


def _noise_pld(noise, shift: float, h: float, pessimistic: bool, tail: float = TAIL) -> PLD:
    """Connect-the-dots PLD of ``(T, T - shift)`` on a grid rounded up to a few sizes (the
    extra points carry the exact, vanishing, masses): few compiles across events."""
    lower, size = _sized(lambda: noise_grid(noise, shift, h, tail))
    f64 = functools.partial(jnp.asarray, dtype=jnp.float64)
    pld = discretise_noise(noise, f64(shift), f64(h), lower, _bucket(size), pessimistic, tail)
    return charge_underflow(pld, tail)


def _subsampled_plds(noise, q, h, pessimistic: bool, directions, tail: float = TAIL) -> dict:
    """Poisson-subsampled PLDs per direction (:mod:`.pld.subsample`), bucketed grids."""
    grids = _sized_all(lambda: subsampled_grid(noise, 1.0, q, h, tail), directions)
    f64 = functools.partial(jnp.asarray, dtype=jnp.float64)
    return {
        d: charge_underflow(
            discretise_subsampled(
                noise, f64(1.0), f64(q), d, f64(h), grids[d][0], _bucket(grids[d][1]),
                pessimistic, tail,
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
    if _subnormal_scale(event):
        raise UnboundedLoss(f"{event!r}: a subnormal noise scale")
    h = float(bin_width)
    dirs = DIRECTIONS[relation]
    noise = ev.noise_family(event)
    if noise is not None:
        shift = 2.0 if relation == "replace_one" else 1.0
        if isinstance(event, ev.Noise) and event.mechanism == _BOUNDED:
            return _same(_bounded_pld(noise, shift, h), relation) if pessimistic else None
        return _same(_noise_pld(noise, shift, h, pessimistic, tail), relation)
    pair = _discrete_pair(event, relation)
    if pair is not None:
        return _same(discrete.discrete_pld(*pair, h, pessimistic), relation)
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
        from dpjax.accounting.zcdp import delta_from_zcdp

        rho = float(event.rho)
        floor = min(_PROFILE_FLOOR, float(tail))
        top = rho + 2.0 * math.sqrt(rho * math.log(1.0 / floor)) + 1.0
        return _same(from_profile(lambda e: np.asarray(delta_from_zcdp(rho, e)), top, h), relation)
    if isinstance(event, ev.SampledWithoutReplacement):
        return _without_replacement(event, relation, h, pessimistic, tail)
    if isinstance(event, ev.SampledWithReplacement):
        raise unsupported(event, relation, "sampling with replacement is not accounted yet")
    raise unsupported(event, relation)


def _bounded_pld(noise, shift: float, h: float) -> PLD:
    r"""Pessimistic PLD of truncated Laplace ``TL(lambda, A)`` at shift ``Delta``: its exact
    profile (:func:`~dpjax.accounting.truncated_laplace.delta_truncated_laplace`, a certified
    upper bound) through :func:`.pld.profile_pair.from_profile`, the grid topped at the
    largest finite loss ``Delta / lambda``; ``delta`` there, the mass where ``T - Delta`` has
    no density, goes to ``+infinity``.  Symmetric noise: one profile for both orders."""
    from dpjax.accounting.truncated_laplace import delta_truncated_laplace

    scale, bound = float(noise.scale), float(noise.bound)

    def profile(e):
        return np.asarray(delta_truncated_laplace(e, scale, bound, shift))

    return from_profile(profile, shift / scale + h, h)


def _poisson(event: ev.PoissonSampled, relation, h, pessimistic, tail=TAIL):
    q, base = float(event.sampling_probability), event.event
    if q == 0.0:
        return {}
    if q == 1.0:
        return leaf_plds(base, relation, h, pessimistic, tail)
    noise = ev.noise_family(base)
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
        d: discrete.discrete_pld(*discrete.poisson_subsampled_pair(*pair, q, d), h, pessimistic)
        for d in DIRECTIONS[relation]
    }


def _without_replacement(event: ev.SampledWithoutReplacement, relation, h, pessimistic, tail):
    if relation != "replace_one":
        raise unsupported(event, relation, "sampling without replacement is accounted under "
                          "replace_one (fixed-size batches)")
    gamma = event.sample_size / event.source_dataset_size
    if gamma >= 1.0:
        return leaf_plds(event.event, relation, h, pessimistic, tail)
    if not pessimistic:
        return None
    base = leaf_plds(event.event, relation, h, True, tail)["replace"]
    top_base = (int(base.lower) + base.size) * float(base.bin_width)

    def bound(eps):  # Balle, Barthe & Gaboardi 2018, Thm 9: delta'(eps') <= gamma delta(eps)
        inner = np.log1p(np.expm1(np.asarray(eps, np.float64)) / gamma)
        return gamma * np.asarray(delta_for_epsilon(base, jnp.asarray(inner)))

    top = math.log1p(gamma * math.expm1(max(top_base, h)))
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
    from dpjax.accounting.pld.compose import (
        ceil_pow2,
        compose,
        self_compose,
        self_compose_size,
        window_size,
    )

    parts: dict[str, list[PLD]] = {d: [] for d in DIRECTIONS[relation]}
    for plds, count in table:
        for d, pld in plds.items():
            if count > 1:  # FFT lengths rounded up to powers of two: few compiles
                pld = self_compose(pld, count, ceil_pow2(self_compose_size(pld, count)))
            parts[d].append(pld)

    def product(ps):
        log_mgf = np.asarray(sum(p.log_mgf for p in ps))
        return compose(ps, ceil_pow2(window_size(log_mgf, float(ps[0].bin_width))))

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
