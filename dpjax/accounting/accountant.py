r"""A PLD accountant with dp_accounting's interface: ``compose``, ``get_epsilon``, ``get_delta``.

:class:`PLDAccountant` keeps a ledger of events (:mod:`dpjax.accounting.events`); every query
turns the ledger into one pessimistic PLD per direction of the neighbouring relation
(:mod:`dpjax.accounting.events.plds`), composes them by FFT (heterogeneous composition: any
families, any parameters), and answers

.. math:: \delta(\epsilon) = \max_{\text{direction}} \delta_{PLD}(\epsilon),\qquad
          \epsilon(\delta) = \max_{\text{direction}} \epsilon_{PLD}(\delta)

(Zhu, Dong & Wang 2022, Thm 11; Doroshenko et al. 2022 connect-the-dots).  Every answer is
a certified upper bound: pessimistic discretisation, Chernoff-certified FFT windows, and the
returned epsilon re-checked against its own profile (:func:`dpjax.certificate.certify_epsilon`);
a ``NonPrivate`` event gives ``epsilon = inf`` and ``delta = 1``.  Exact where exact is
possible: the PLDs of Gaussian, Laplace, discrete and subsampled events are their exact
pairs, discretised only by the loss grid.

Below ``delta = 1e-7`` the ledger is also composed through the exponential tilt
(:mod:`~dpjax.accounting.pld.tilted.compose`), on leaf grids whose cut tails are sized from
the ``delta`` asked for (:func:`~dpjax.accounting.deep_tail.deep_tail`: ``tau <= 1e-14
delta / K``, one table per decade), so that their atoms at ``+infinity`` stay far below it
down to ``delta = 1e-300``.

Switching from dp_accounting is one line::

    from dpjax.accounting import PLDAccountant           # was: dp_accounting.pld.PLDAccountant
    accountant = PLDAccountant()
    accountant.compose(from_dp_accounting(event), count) # or a dpjax event
    accountant.get_epsilon(1e-5)

(``compose`` also accepts dp_accounting events directly: they are converted.)
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import jax
import numpy as np

from dpjax import _validate
from dpjax.accounting import events as ev
from dpjax.accounting.bracket import EpsilonBracket, epsilon_lower_of_pld
from dpjax.accounting.bracket.refine import MAX_REFINEMENTS, refine_bracket, validate_epsilon_error
from dpjax.accounting.deep_tail import deep_tail
from dpjax.accounting.events import tilted as ledger_tilted
from dpjax.accounting.events.basic_composition import fraction_up, pure_cap
from dpjax.accounting.events.from_dp_accounting import from_dp_accounting
from dpjax.accounting.events.plds import (
    NonPrivateEvent,
    UnboundedLoss,
    UnsupportedEventError,
    check_leaf,
    compose_table,
    flatten,
    leaf_table,
)
from dpjax.accounting.gaussian import delta_gaussian, epsilon_gaussian
from dpjax.accounting.laplace import ERROR as PURE_DP_ERROR
from dpjax.accounting.laplace import log_delta_pure_dp
from dpjax.accounting.pld.discretise import TAIL
from dpjax.accounting.pld.engine import TILT_BELOW
from dpjax.accounting.pld.plan import tilt_level
from dpjax.accounting.pld.query import delta_for_epsilon, epsilon_for_delta
from dpjax.accounting.rdp.ledger import (
    ledger_rdp_delta,
    ledger_rdp_delta_exceeds,
    ledger_rdp_epsilon,
    ledger_rdp_epsilon_exceeds,
)
from dpjax.certificate import TINY, certify_epsilon, reported_delta
from dpjax.errors import CertificationError

__all__ = ["PLDAccountant", "UnsupportedEventError"]


def _x64(method):
    """Run an accountant query in a scoped ``jax.enable_x64(True)`` (whatever the caller's
    setting: every event is accounted in float64, as the façade does)."""

    @functools.wraps(method)
    def scoped(self, *args, **kwargs):
        with jax.enable_x64(True):
            return method(self, *args, **kwargs)

    return scoped


def _least_root_above(r: Fraction) -> float:
    """The least float64 ``x >= 0`` with ``x^2 >= r`` (exact rationals; ``inf`` if none)."""
    try:
        x = math.sqrt(float(r))
    except OverflowError:
        return math.inf
    while x < math.inf and Fraction(x) ** 2 < r:
        x = math.nextafter(x, math.inf)
    while x > 0.0 and Fraction(math.nextafter(x, 0.0)) ** 2 >= r:
        x = math.nextafter(x, 0.0)
    return x


def gaussian_equivalent(leaves, relation: str):
    r"""``(sigma, Delta)`` of one Gaussian mechanism equal to a ledger of Gaussians, or ``None``.

    ``K_j`` uses of ``Gaussian(sigma_j)`` at shift ``s`` (1, or 2 under ``replace_one``) are
    one Gaussian mechanism (Dong, Roth & Su 2022, Cor. 3.3: ``mu^2 = sum_j K_j s^2 /
    sigma_j^2``), exactly; it is returned as ``N(0, sigma_1^2)`` at sensitivity

    .. math:: \Delta = \min\{x \in \text{float64} : x^2 \ge \sigma_1^2 \sum_j K_j s^2 /
              \sigma_j^2\}

    (exact rationals: rounded up, so the profile of :func:`~.gaussian.delta_gaussian`
    at ``(sigma_1, Delta)`` is an upper bound).  For ``T`` uses of one ``Gaussian(sigma)``
    this is ``(sigma, sqrt(T) s)`` rounded up, the façade's ``dpjax.account("gaussian",
    {"sigma": sigma}, compositions=T)``.

    Args:
      leaves: ``[(leaf, count), ...]`` (:func:`~.events.plds.flatten`).
      relation: the neighbouring relation.

    Returns:
      ``(sigma_1, Delta)`` (``Delta = inf``: a scale too small for float64), or ``None``
      unless every leaf is a ``Gaussian``.
    """
    if not leaves or not all(type(leaf) is ev.Gaussian for leaf, _ in leaves):
        return None
    shift = 2 if relation == "replace_one" else 1
    sigma1 = float(leaves[0][0].noise_multiplier)
    if min(float(leaf.noise_multiplier) for leaf, _ in leaves) < TINY:
        return sigma1, math.inf  # a subnormal scale (XLA flushes it to zero): no privacy
    total = Fraction(0)
    for leaf, count in leaves:  # K_j s^2 (sigma_1 / sigma_j)^2, exact where dyadic
        ratio = (Fraction(sigma1) / Fraction(float(leaf.noise_multiplier))) ** 2
        term = count * shift * shift * ratio
        if term.denominator & (term.denominator - 1):  # not dyadic: round it up to a float
            up = fraction_up(term)
            term = Fraction(up) if up < math.inf else None
        if term is None:
            return sigma1, math.inf
        total += term
    return sigma1, _least_root_above(total)


_delta_gaussian = jax.jit(delta_gaussian)
_epsilon_gaussian = jax.jit(epsilon_gaussian)


def _real(value, name: str) -> float:
    """``value`` as a float if it is one real number (``float()`` would also take ``"1e-5"``
    and ``True``, which a query must refuse)."""
    raw = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if raw is None or raw.ndim or raw.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be a single real number (not a string, boolean or list), got "
            f"{_validate.shown(value)}"
        )
    return float(raw)


def _epsilon_arg(epsilon) -> float:
    eps = _real(epsilon, "epsilon")
    if not (eps >= 0.0):
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    return eps


def _delta_arg(delta) -> float:
    dlt = _real(delta, "delta")
    if not (0.0 <= dlt < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    return dlt


def _as_event(event):
    if isinstance(event, ev.Event):
        return event
    if type(event).__module__.startswith("dp_accounting"):
        return from_dp_accounting(event)
    raise TypeError(f"expected a dpjax (or dp_accounting) event, got {type(event).__name__}")


#: Where the ends of :meth:`PLDAccountant.bracket` come from.
_LEDGER_NOTE = ("lower: optimistic discretisation of the ledger (profile-bound events left out), "
                "every error subtracted; upper: get_epsilon, certified")


class PLDAccountant:
    r"""Certified privacy-loss-distribution accountant over events (module docstring).

    Args:
      relation: neighbouring relation: ``"add_remove"`` (default: both directions, the
        worse reported), ``"add"`` (add-only), ``"remove"`` (remove-only), ``"replace_one"``.
      bin_width: loss-grid spacing of every PLD (dp_accounting's
        ``value_discretization_interval``; smaller is tighter and slower).

    Example:
      >>> from dpjax.accounting import events as ev
      >>> acc = PLDAccountant()
      >>> acc.compose(ev.Gaussian(3.0)).compose(ev.Gaussian(4.0))  # doctest: +ELLIPSIS
      <...PLDAccountant ...>
      >>> round(acc.get_epsilon(1e-5), 4)  # = one Gaussian with sigma = 12 / 5
      1.627
    """

    def __init__(self, relation: str = "add_remove", bin_width: float = 1e-4):
        if relation not in ev.RELATIONS:
            raise ValueError(f"relation must be one of {ev.RELATIONS}, got {relation!r}")
        h = float(bin_width)
        if not (math.isfinite(h) and 1e-7 <= h <= 0.1):
            raise ValueError(f"bin_width must be in [1e-7, 0.1], got {bin_width!r}")
        self.relation = relation
        self.bin_width = h
        self._ledger: list[tuple[ev.Event, int]] = []
        self._cache: dict[bool, object] = {}

    def __repr__(self) -> str:
        return f"<dpjax PLDAccountant relation={self.relation!r}, {len(self._ledger)} events>"

    @property
    def ledger(self) -> ev.Composed:
        """Everything composed so far, as one event."""
        return ev.Composed([ev.SelfComposed(e, k) if k != 1 else e for e, k in self._ledger])

    def supports(self, event) -> bool:
        """Whether :meth:`compose` would accept ``event`` under this relation.

        Args:
          event: a dpjax or dp_accounting event.

        Returns:
          ``True`` if it can be accounted.
        """
        try:
            event = _as_event(event)
            ev.check_values(event)
            self._check(event)
        except (UnsupportedEventError, TypeError, ValueError):
            return False
        return True

    def _check(self, event):
        try:
            leaves = flatten(event)
        except NonPrivateEvent:
            return
        for leaf, _ in leaves:
            check_leaf(leaf, self.relation)

    def compose(self, event, count: int = 1) -> PLDAccountant:
        """Add ``count`` adaptive repetitions of ``event`` to the ledger.

        Args:
          event: a dpjax event (or a dp_accounting ``DpEvent``, converted).
          count: repetitions, an integer ``>= 0``.

        Returns:
          ``self`` (calls chain).

        Raises:
          UnsupportedEventError: the event cannot be accounted under this relation.
        """
        event = _as_event(event)
        ev.check_values(event)
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"count must be an integer >= 0, got {count!r}")
        self._check(event)
        if count:
            self._ledger.append((event, int(count)))
            self._cache.clear()
        return self

    def _table(self, pessimistic: bool = True, log_level: float | None = None):
        """The leaf PLD table of the ledger, or ``None`` if it is non-private or some leaf's loss
        cannot be put on a grid (:class:`~.events.plds.UnboundedLoss`: the PLD answers are
        then vacuous, ``delta = 1``) (cached).

        ``log_level``: resolve ``delta ~ e^{log_level}`` (the tilted path): the leaves' cut
        tails are then :func:`deep_tail` (whole decades, one table each); ``None`` or a
        level the default :data:`~.pld.discretise.TAIL` serves: today's table."""
        try:
            leaves = flatten(self.ledger)
        except NonPrivateEvent:
            return None
        uses = sum(count for _, count in leaves)
        with jax.enable_x64(True):
            tail = TAIL if log_level is None or not uses else deep_tail(log_level, uses)
            key = ("table", pessimistic, tail)
            if key not in self._cache:
                try:
                    self._cache[key] = leaf_table(
                        leaves, self.relation, self.bin_width, pessimistic, tail
                    )
                except UnboundedLoss:
                    self._cache[key] = None
        return self._cache[key]

    def _plds(self, pessimistic: bool = True):
        """``{direction: PLD or None}`` of the ledger, or ``None`` (non-private, or a leaf
        without a grid: :meth:`_table`)."""
        key = ("plds", pessimistic)
        if key not in self._cache:
            table = self._table(pessimistic)
            with jax.enable_x64(True):
                self._cache[key] = None if table is None else compose_table(table, self.relation)
        return self._cache[key]

    def _cap(self) -> tuple[float, float]:
        """``(E, D)``: the ledger is ``(E, D)``-DP by basic composition
        (:func:`~dpjax.accounting.events.basic_composition.pure_cap`; ``(inf, 0)`` if some
        event has no cap; ``D = 0``: pure DP)."""
        if "cap" not in self._cache:
            leaves = self._leaves()
            self._cache["cap"] = (math.inf, 0.0) if leaves is None else pure_cap(
                leaves, self.relation)
        return self._cache["cap"]

    def _gaussian(self):
        """:func:`gaussian_equivalent` of the ledger (``None``: not only Gaussians)."""
        if "gaussian" not in self._cache:
            leaves = self._leaves()
            self._cache["gaussian"] = None if leaves is None else gaussian_equivalent(
                leaves, self.relation)
        return self._cache["gaussian"]

    def _pld_delta(self, epsilon: float, target: float = 0.0) -> float:
        """Certified upper bound on ``delta`` at ``epsilon`` from the composed PLDs and the cap.

        The worse direction's composed-PLD ``delta(epsilon)``; where the ledger is
        ``(E, D)``-DP (:meth:`_cap`), at most ``D`` for ``epsilon >= E`` (exactly ``0`` for
        pure DP, without a PLD) and, for pure DP below ``E``, at most the randomized-response
        profile ``(e^E - e^epsilon) / (1 + e^E)`` of every ``E``-DP mechanism
        (:func:`~dpjax.accounting.laplace.log_delta_pure_dp`; Kairouz, Oh & Viswanath 2015),
        which resolves the last bins below ``E`` that a loss grid rounds up.

        Args:
          epsilon: ``epsilon >= 0``.
          target: a plain answer at most this is returned without the tilted refinement
            (:meth:`get_delta`).

        Returns:
          The certified ``delta``.
        """
        eps = _epsilon_arg(epsilon)
        cap_eps, cap_delta = self._cap()
        if eps >= cap_eps and cap_delta == 0.0:
            return 0.0
        plds = self._plds()
        if plds is None:
            return cap_delta if eps >= cap_eps else 1.0
        values = [float(delta_for_epsilon(p, eps)) for p in plds.values() if p is not None]
        out = max(values, default=0.0)
        if math.isnan(out):
            raise CertificationError("PLDAccountant: the computed delta is NaN")
        if target < out < TILT_BELOW:
            # the plain answer may exceed the truth by far (it is at least the plain grids'
            # atom at +infinity): resolve down to its square (x 1e-4), or to the Chernoff
            # bound of the composed moments (x 1e-4) if lower; then at the window of the
            # delta found, as get_epsilon's certificate sized it, until the level stops
            # moving (an answer at a level's floor, its leaves' cut mass, moves it down: at
            # most the 27 decades of ten from 1e-40 to the 1e-300 floor)
            level = min(2.0 * math.log(out), self._log_chernoff(eps)) + math.log(1e-4)
            for _ in range(27):
                tilted = self._tilted(eps, False, level)
                if math.isnan(tilted) or tilt_level(tilted) == tilt_level(level):
                    break
                out, level = min(out, math.exp(tilted)), tilted
            out = min(out, math.exp(tilted)) if not math.isnan(tilted) else out
        if eps >= cap_eps:
            out = min(out, cap_delta)
        elif cap_delta == 0.0 and cap_eps < math.inf:
            rr = float(reported_delta(log_delta_pure_dp(eps, cap_eps), PURE_DP_ERROR))
            out = min(out, rr) if not math.isnan(rr) else out
        return min(out, 1.0)

    def _log_chernoff(self, eps: float) -> float:
        """:func:`~.events.tilted.log_chernoff` of the ledger (it only sizes a window)."""
        with jax.enable_x64(True):
            return ledger_tilted.log_chernoff(self._table(), self.relation, eps)

    def _tilted(
        self, x: float, by_delta: bool, log_level: float, either_kind: bool = False
    ) -> float:
        """:func:`~.events.tilted.tilted_answer` of the ledger (``nan``: the plain answer
        stands), its leaf tails sized for ``delta ~ e^{log_level}``; ``nan`` also where a leaf's
        loss cannot be put on a grid at that level (:meth:`_table` is ``None``: the plain
        answer stands, certified).  ``either_kind``: the program both query kinds share (an
        epsilon and its certificate's re-check)."""
        table = self._table(log_level=log_level)
        if table is None:
            return math.nan
        with jax.enable_x64(True):
            return ledger_tilted.tilted_answer(
                table, self.relation, x, by_delta, log_level, either_kind
            )

    def _pld_epsilon(self, delta: float) -> float:
        """Least certified ``epsilon`` with ``delta(epsilon) <= delta`` from the PLDs and the cap.

        The minimum of the composed PLD's certified epsilon and, when the ledger is
        ``(E, D)``-DP (:func:`~dpjax.accounting.events.basic_composition.pure_cap`: pure DP,
        ``D = 0``, or ``EpsilonDelta`` events) and ``delta >= D``, the basic composition ``E``
        (``delta = 0`` is answered by it; at ``delta = D`` exactly, ``E``: the boundary is
        compared with ``D`` rounded up from the exact rational value, never with a padded
        grid value).

        Args:
          delta: ``delta`` in ``[0, 1)``.

        Returns:
          The epsilon, re-checked against the ledger's own certified profile.
        """
        dlt = _delta_arg(delta)
        cap_eps, cap_delta = self._cap()
        capped = cap_eps if dlt >= cap_delta else math.inf
        plds = self._plds()
        if plds is None:
            return capped
        live = [p for p in plds.values() if p is not None]
        if not live:
            return 0.0
        if dlt == 0.0:
            return capped
        eps = max(float(epsilon_for_delta(p, dlt)) for p in live)

        def profile(e):
            return max(float(delta_for_epsilon(p, float(e))) for p in live)

        if dlt < TILT_BELOW:
            tilted = self._tilted(dlt, True, math.log(dlt), either_kind=True)
            if tilted < min(eps, capped):
                # re-checked by the profile a caller gets: the plain one, or the tilted
                # composition at the same window (its own tilts at that epsilon)
                def both(e):
                    at = self._tilted(float(e), False, math.log(dlt), either_kind=True)
                    return min(profile(e), math.exp(at) if not math.isnan(at) else 1.0)

                try:
                    return float(certify_epsilon("PLDAccountant", both, tilted, dlt))
                except CertificationError:
                    pass  # the plain answer below
        if capped <= eps:
            return capped
        return float(certify_epsilon("PLDAccountant", profile, eps, dlt))

    def _leaves(self):
        """The ledger's ``[(leaf, count), ...]``, or ``None`` if it is non-private."""
        try:
            return flatten(self.ledger)
        except NonPrivateEvent:
            return None

    @_x64
    def get_delta(self, epsilon: float, *, target: float = 0.0) -> float:
        """Certified upper bound on ``delta`` at ``epsilon``.

        A ledger of (composed) Gaussians only is one Gaussian mechanism
        (:func:`gaussian_equivalent`): its exact profile, eq. (29) of flipped-huber-mechanism
        (:func:`~dpjax.accounting.gaussian.delta_gaussian`, as ``dpjax.account("gaussian",
        ...)``).  Otherwise the smaller of the composed PLDs' certified ``delta(epsilon)``
        (the worse direction; tilted below ``delta = 1e-7``), the basic-composition cap
        (:meth:`_pld_delta`: exactly ``0`` at or above a pure-DP ledger's epsilon) and, when
        every event has exact moments, the RDP bound of the ledger
        (:func:`~dpjax.accounting.rdp.ledger.ledger_rdp_delta`).  Runs in float64 whatever
        the caller's x64 setting.

        A search that only asks whether a target is met passes ``target``: a certified
        answer at most ``target`` is then returned as soon as one is found, without the
        tilted refinement and the RDP bound (which could only lower it further): still an
        upper bound on the true ``delta``, possibly above the tightest one dpjax certifies.
        The RDP bound is skipped where cheap lower bounds on its moments already put it
        above the PLDs' answer (:func:`~dpjax.accounting.rdp.ledger.ledger_rdp_delta_exceeds`:
        it could not lower the answer), so the answer is the same without its fine
        quadratures.

        Args:
          epsilon: ``epsilon >= 0``.
          target: ``delta`` at which to stop refining (default ``0``: the tightest answer).

        Returns:
          The certified ``delta`` (``1`` where nothing better is certified, e.g. a noise
          scale too small for a loss grid).
        """
        eps, enough = _epsilon_arg(epsilon), _delta_arg(target)
        gauss = self._gaussian()
        if gauss is not None:
            sigma, sens = gauss
            if sens == math.inf:
                return 1.0
            out = float(_delta_gaussian(eps, sigma, sens))
            return 1.0 if math.isnan(out) else min(out, 1.0)
        out = self._pld_delta(eps, enough)
        leaves = self._leaves()
        if out > enough and leaves and not ledger_rdp_delta_exceeds(
                leaves, self.relation, eps, out):
            out = min(out, ledger_rdp_delta(leaves, self.relation, eps))
        return out

    @_x64
    def get_epsilon(self, delta: float) -> float:
        """Least certified ``epsilon`` with ``delta(epsilon) <= delta``; ``inf`` if none.

        A ledger of (composed) Gaussians only: the inverse of the exact profile of the one
        equivalent Gaussian (:func:`gaussian_equivalent`,
        :func:`~dpjax.accounting.gaussian.epsilon_gaussian`), re-checked as the façade
        does.  Otherwise the smallest of the composed PLDs' certified epsilon (re-checked
        against their own profile; tilted below ``delta = 1e-7``), the basic composition
        ``E`` when the ledger is ``(E, D)``-DP and ``delta >= D`` (:meth:`_pld_epsilon`),
        and, when every event has exact moments, the RDP bound of the ledger
        (:func:`~dpjax.accounting.rdp.ledger.ledger_rdp_epsilon`; skipped where cheap lower
        bounds on its moments already put it above the PLDs' answer,
        :func:`~dpjax.accounting.rdp.ledger.ledger_rdp_epsilon_exceeds`).  Runs in float64
        whatever the caller's x64 setting.

        Args:
          delta: ``delta`` in ``[0, 1)``.

        Returns:
          The certified epsilon (``inf`` where nothing finite is certified).
        """
        dlt = _delta_arg(delta)
        gauss = self._gaussian()
        if gauss is not None:
            sigma, sens = gauss
            if sens == math.inf or dlt == 0.0:
                return math.inf
            eps = float(_epsilon_gaussian(dlt, sigma, sens))
            if not eps < math.inf:
                return math.inf
            return float(certify_epsilon(
                "PLDAccountant", lambda e: _delta_gaussian(e, sigma, sens), eps, dlt))
        out = self._pld_epsilon(dlt)
        leaves = self._leaves()
        if out > 0.0 and dlt > 0.0 and leaves and not ledger_rdp_epsilon_exceeds(
                leaves, self.relation, dlt, out):
            out = min(out, ledger_rdp_epsilon(leaves, self.relation, dlt))
        return out

    def bracket(self, delta: float, epsilon_error: float | None = None) -> EpsilonBracket:
        """``(lower, upper)`` around the true ``epsilon(delta)`` of the ledger, both certified.

        ``upper`` is :meth:`get_epsilon`; ``lower`` composes the *optimistic* discretisation
        (losses rounded down) of every event that has one, leaving out those accounted
        through a profile bound (``ZCDP``, sampling without replacement): a sub-composition
        is at most as private as the whole.  It is read off the composed grid with every
        error subtracted (:func:`~dpjax.accounting.bracket.epsilon_lower_of_pld`: no tail
        bound, no mass sent to infinity, which would raise the lower end above the truth);
        below ``delta = 1e-7`` also off the *tilted* optimistic composition
        (:mod:`~dpjax.accounting.bracket.tilted`, accurate far below the plain grid's
        ~1e-10 floor), the larger of the two lower ends kept.

        With ``epsilon_error``, the ledger is recomposed on finer grids (bin width
        ``bin_width 2^-k``, down to ``1e-7``, :func:`~dpjax.accounting.bracket.refine.
        refine_bracket`) until ``upper - lower <= epsilon_error``; ``upper`` may then be
        below :meth:`get_epsilon` (a finer grid's certified answer).

        Args:
          delta: ``delta`` in ``(0, 1)``.
          epsilon_error: the width asked for (as prv-accountant's ``eps_error``), or
            ``None`` for this accountant's grid.  Where the finest grid leaves the bracket
            wider, the narrowest one found is returned (both ends certified) with an
            :class:`~dpjax.accounting.pld.plan.EngineNote` warning.

        Returns:
          An :class:`~dpjax.accounting.bracket.EpsilonBracket` ``(lower, upper)`` with
          ``lower <= upper``.

        Example:
          >>> from dpjax.accounting import PLDAccountant, events as ev
          >>> acc = PLDAccountant().compose(ev.PoissonSampled(0.01, ev.Gaussian(1.0)), 1000)
          >>> lower, upper = acc.bracket(1e-5, epsilon_error=0.02)
          >>> upper - lower <= 0.02
          True
        """
        if epsilon_error is None:
            return EpsilonBracket(*self._bracket(delta), _LEDGER_NOTE)
        err = validate_epsilon_error(epsilon_error)
        widths = iter(max(self.bin_width * 2.0**-k, 1e-7) for k in range(MAX_REFINEMENTS + 1))

        def finer():
            acc = PLDAccountant(self.relation, bin_width=next(widths)).compose(self.ledger)
            return acc._bracket(delta)

        lower, upper = refine_bracket(finer, err)
        return EpsilonBracket(float(lower), float(upper), _LEDGER_NOTE)

    @_x64
    def _bracket(self, delta: float) -> tuple[float, float]:
        """:meth:`bracket` on this accountant's grid."""
        upper = self.get_epsilon(delta)
        if self._leaves() is None:  # non-private
            return math.inf, math.inf
        plds = self._plds(pessimistic=False)
        if plds is None:  # a leaf without a grid: no lower end here
            return 0.0, upper
        uses = float(sum(count for _, count in flatten(self.ledger)))
        # the composed support starts at sum(count * lower) of the leaves: no FFT wrap-up below
        starts = {d: 0.0 for d in plds}
        for leaf, count in self._table(pessimistic=False):
            for d, p in leaf.items():
                starts[d] += count * float(p.lower)
        with jax.enable_x64(True):
            lower = max(
                (
                    float(epsilon_lower_of_pld(p, float(delta), uses, starts[d]))
                    for d, p in plds.items()
                    if p is not None
                ),
                default=0.0,
            )
        if 0.0 < float(delta) < TILT_BELOW:
            lower = max(lower, self._tilted_lower(float(delta)))
        return min(lower, upper), upper

    def _tilted_lower(self, delta: float) -> float:
        """:func:`~.events.tilted.tilted_lower` of the ledger (``0`` where it cannot run)."""
        table = self._table(pessimistic=False, log_level=math.log(delta))
        with jax.enable_x64(True):
            return ledger_tilted.tilted_lower(table, self.relation, delta)
