r"""The Laplace mechanism: noise ``Lap(b)`` per coordinate (``b = scale``).

* ``dim = 1``, one use: the exact (epsilon, delta) profile
  ``[1 - exp((epsilon - Delta/b)/2)]_+`` (App. F(b) of flipped-huber-mechanism).
* ``dim > 1`` or ``T`` compositions (no subsampling): the minimum of two
  certified upper bounds:

  - the PLD engine (:mod:`dpjax.accounting.pld`): the ``dim * T``-fold
    composition of the 1-D pair at the per-coordinate sensitivity
    ``Delta_inf`` (the profile of a product of Laplace noises increases in
    every ``|d_k|``, so the corner ``d = Delta_inf (1, ..., 1)`` is worst in the
    box ``|d_k| <= Delta_inf``; exact when that corner is a neighbouring shift,
    e.g. ``Delta_1 = K Delta_inf`` as in Sec. V-B of flipped-huber-mechanism);
  - pure DP with l1 budget, ``epsilon_0 = T Delta_1 / b`` (Table II of
    flipped-huber-mechanism), through the dominating pair of any
    ``epsilon_0``-DP mechanism (randomized response, Kairouz et al. 2015):
    ``delta(eps) <= (e^{eps_0} - e^{eps}) / (1 + e^{eps_0})``.

  Calibration returns the least scale meeting the target under that minimum.
* ``dim = 1`` with Poisson subsampling (rate ``q``): the minimum of the engine's
  ``T``-fold composition of the subsampled pair (add and remove adjacency, worse
  reported) and pure DP amplified by subsampling, ``epsilon_0 = T log(1 + q (e^{Delta_1/b}
  - 1))`` (Balle, Barthe, Gaboardi 2018, Thm 10), through the same dominating pair.
* ``dim > 1`` with Poisson subsampling: one coin per use for all ``K`` coordinates, so the
  ``K`` coordinates are sampled together. The minimum of three certified upper bounds, each
  the :class:`~dpjax.accounting.PLDAccountant`'s profile of ``T`` uses (pessimistic
  connect-the-dots) or the amplified pure DP above:

  - the **l1 vertex**: ``PoissonSampled(q, Laplace(b / Delta_1))``: a product of Laplace
    noises shifted by ``d`` with ``||d||_1 <= Delta_1`` is dominated by one Laplace pair at
    shift ``Delta_1`` (the vertex of the l1 ball; the same argument that every relation
    other than add-or-remove already takes, :mod:`dpjax.mechanisms._relation`);
  - the **linf corner**: ``PoissonSampled(q, SelfComposed(Laplace(b / Delta_inf), K))``:
    every coordinate's pair is dominated by the pair at ``Delta_inf`` (above), products
    keep dominance, and so does Poisson subsampling of the whole use (its subsampled pair
    is a function of the unsampled trade-off; Zhu, Dong & Wang 2022, "Optimal accounting of
    differential privacy via characteristic function", AISTATS, Prop. on subsampling);
  - pure DP amplified by subsampling (above).

  Calibration takes the least scale certified by any of them (bisection on the scale of each
  event, :func:`dpjax.calibration.event_scale.calibrate_event_scale`). The RDP bound of
  :mod:`dpjax.accounting.rdp.laplace` composes ``K T`` independently subsampled uses and so
  does not apply to ``K`` coordinates under one coin.

Every profile and epsilon beyond the exact 1-D case is also bounded by the RDP conversion of
the *exact* moments of the continuous mechanism (:mod:`dpjax.accounting.rdp.laplace`:
Mironov's closed form, or a certified quadrature of the subsampled pair), so it is never
above dp_accounting's RDP accountant; calibration without subsampling takes the RDP scale
where it is smaller.  Where the engine's grid would exceed its memory cap (huge ``T``), it
coarsens or answers by the Chernoff bound of the composed moments (:func:`dpjax.accounting.
pld.engine.plan`); the pure-DP bound keeps every answer finite.
"""

from __future__ import annotations

import numpy as np

from dpjax._batching import call_padded
from dpjax.accounting import events as ev
from dpjax.accounting.laplace import delta_laplace, epsilon_laplace, epsilon_pure_dp
from dpjax.accounting.pld import engine as pld_engine
from dpjax.accounting.rdp.laplace import (
    laplace_rdp_log_delta,
    laplace_rdp_scale,
    least_with_laplace_rdp_delta,
    least_with_laplace_rdp_epsilon,
)
from dpjax.calibration.event_scale import calibrate_event_scale, event_answer
from dpjax.calibration.laplace import (
    HOST_MAX_SIZE,
    scale_laplace_1d,
    scale_laplace_1d_host,
    scale_laplace_pure,
)
from dpjax.calibration.result import Calibration
from dpjax.calibration.scale_search import calibrate_scale
from dpjax.certificate import require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._composition import amplified_budget, composed_budget, pure_dp_delta
from dpjax.mechanisms._spec import About, Mechanism, Query, calibration
from dpjax.noise.laplace import Laplace

NAME = "laplace"


def _exact_1d(query: Query) -> bool:
    return query.dim == 1 and query.compositions == 1 and query.sampling_rate is None


def _sampled_k_dims(query: Query) -> bool:
    """A ``K``-dim query (``K > 1``) Poisson-subsampled at ``q < 1``: one coin per use."""
    q = query.sampling_rate
    return query.dim > 1 and q is not None and q < 1.0


#: Loss-grid spacing of the accountant for ``K``-dim subsampled uses.
_SAMPLED_BIN_WIDTH = 1e-4


def _sampled_bounds(query: Query) -> tuple[str, ...]:
    """The accountant bounds of a ``K``-dim query under one Poisson coin per use (module
    docstring), less the one the other dominates: the corner has l1 norm ``K Delta_inf``, so
    with ``Delta_1 >= K Delta_inf`` it lies in the l1 ball (the vertex bound is the looser),
    and with ``Delta_1 <= Delta_inf`` every shift of the ball is in the box (the corner bound
    is the looser).  Under ``replace_one`` the vertex is always kept: the accountant's
    replace-one bound of a composite (the corner) is an upper bound through pairwise profiles
    (:mod:`dpjax.accounting.pld.amplification`), the vertex's is the 1-D triple's exact
    profile, and either may be the smaller."""
    l1, _ = query.sensitivity.resolve("l1")
    linf, _ = query.sensitivity.resolve("linf")
    vertex = l1 < query.dim * linf or query.relation == "replace_one"
    return (("l1 vertex",) if vertex else ()) + (
        ("linf corner",) if l1 > linf else ())


def _sampled_event(bound: str, scale: float, query: Query):
    """The event of the ``T`` uses for one of :func:`_sampled_bounds`: the l1 vertex
    ``PoissonSampled(q, Laplace(b / Delta_1))`` or the linf corner
    ``PoissonSampled(q, SelfComposed(Laplace(b / Delta_inf), K))``."""
    q, uses = float(query.sampling_rate), query.compositions
    if bound == "l1 vertex":
        step = ev.PoissonSampled(q, ev.Laplace(scale / query.sensitivity.resolve("l1")[0]))
    else:
        leaf = ev.Laplace(scale / query.sensitivity.resolve("linf")[0])
        step = ev.PoissonSampled(q, ev.SelfComposed(leaf, query.dim))
    return ev.SelfComposed(step, uses) if uses > 1 else step


def _sampled_answer(what: str, scale: float, x, query: Query) -> np.ndarray:
    """The least of the accountant's ``delta`` (``what = "profile"``, ``x`` = epsilons) or
    ``epsilon`` (``x`` = deltas) over the events of :func:`_sampled_bounds`, and the
    amplified pure-DP bound (add or remove adjacency only), under ``query.relation``."""
    x = np.asarray(x, np.float64)
    pure = np.inf if query.relation == "replace_one" else _pure_epsilon(scale, query)
    if what == "profile":
        out = np.asarray(pure_dp_delta(x, pure), np.float64)
    else:
        out = np.broadcast_to(np.asarray(epsilon_pure_dp(x, pure), np.float64), x.shape)
    for bound in _sampled_bounds(query):
        got = event_answer(_sampled_event(bound, scale, query), what, x, query.relation,
                           _SAMPLED_BIN_WIDTH)
        out = np.minimum(out, got)
    return out


def _calibrate_sampled(epsilon, delta, query: Query, b_pure: np.ndarray):
    """``(scale, delta_at, won)``: the least scale certified by the l1 vertex, the linf corner
    or amplified pure DP (``b_pure``), per target, under ``query.relation``; ``won`` names
    the bound.  Under ``replace_one`` (a record replaced moves the query twice as far, and
    the amplification theorem is for add or remove adjacency) only the accountant's bounds,
    searched up to ``1e12 Delta``."""
    l1, _ = query.sensitivity.resolve("l1")
    linf, _ = query.sensitivity.resolve("linf")
    eps, dlt, b = np.broadcast_arrays(np.asarray(epsilon, np.float64),
                                      np.asarray(delta, np.float64), b_pure)
    replace = query.relation == "replace_one"
    scale, won = b.copy(), np.full(b.shape, "pure DP", dtype=object)
    delta_at = np.asarray(pure_dp_delta(eps, _pure_epsilon(b, query)), np.float64).copy()
    if replace:
        scale[...], delta_at[...], won[...] = np.inf, 1.0, "none"
    for name in _sampled_bounds(query):
        def build(s, name=name):
            return _sampled_event(name, float(s), query)

        for i in np.ndindex(b.shape):
            # only a scale below the best so far matters: a bound that does not certify
            # that one is dropped after one evaluation
            hi = float(scale[i]) if np.isfinite(scale[i]) else 1e12 * l1
            try:
                s, at = calibrate_event_scale(
                    build, eps[i], dlt[i], query.relation, min(2.0 * b[i], hi) if replace
                    else b[i], name=NAME, lo_limit=1e-6 * min(l1, linf), hi_limit=hi,
                    bin_width=_SAMPLED_BIN_WIDTH)
            except InfeasibleTargetError:  # this bound does not beat the best one here
                continue
            if float(s) < scale[i]:
                scale[i], delta_at[i], won[i] = float(s), float(at), name
    return scale, delta_at, won


def _bin_width(linf: float, scale) -> float:
    """Loss-grid width: 1e-4, finer when the loss range ``[-Delta/b, Delta/b]`` is narrow."""
    return float(min(1e-4, 2e-3 * linf / float(np.max(scale))))


def _engine_uses(query: Query) -> tuple[float, int, tuple[str, ...]]:
    linf, notes = query.sensitivity.resolve("linf")
    return linf, query.dim * query.compositions, notes


def _engine_profile(scale, epsilon, query: Query) -> np.ndarray:
    """Certified ``delta(epsilon)``: min of the engine, the pure-DP and the RDP bound."""
    if _sampled_k_dims(query):
        return _sampled_answer("profile", scale, epsilon, query)
    linf, uses, _ = _engine_uses(query)
    engine = pld_engine.profile(
        Laplace.from_scale, float(scale), 0.0, linf, epsilon, uses,
        query.sampling_rate, _bin_width(linf, scale),
    )
    engine = least_with_laplace_rdp_delta(engine, scale, query.sampling_rate, uses, epsilon, linf)
    return np.minimum(pure_dp_delta(epsilon, _pure_epsilon(scale, query)), engine)


def _engine_epsilon(scale, delta, query: Query) -> np.ndarray:
    """Least certified epsilon: min of the engine, the pure-DP and the RDP bound (each
    inverted at ``delta (1 - MARGIN)``, like every inverse profile)."""
    if _sampled_k_dims(query):
        return _sampled_answer("epsilon", scale, delta, query)
    linf, uses, _ = _engine_uses(query)
    engine = pld_engine.epsilon(
        Laplace.from_scale, float(scale), 0.0, linf, delta, uses,
        query.sampling_rate, _bin_width(linf, scale),
    )
    engine = least_with_laplace_rdp_epsilon(engine, scale, query.sampling_rate, uses, delta, linf)
    return np.minimum(np.asarray(epsilon_pure_dp(delta, _pure_epsilon(scale, query))), engine)


def _scalar(params: dict) -> float:
    b = np.asarray(params["scale"], np.float64)
    if b.ndim:
        raise ValueError("laplace: with dim > 1, compositions or sampling_rate give one scale")
    return float(b)


def _pure_epsilon(scale, query: Query) -> np.ndarray:
    """``epsilon_0`` of the ``T`` uses as pure DP, rounded up: ``T Delta_1 / b`` (exact
    rational rounding, :func:`composed_budget`), or with Poisson subsampling the amplified
    ``T log(1 + q (e^{Delta_1/b} - 1))`` (in log space: no overflow; padded by 8 ulps)."""
    l1, _ = query.sensitivity.resolve("l1")
    q = query.sampling_rate
    if q is None or q >= 1.0:
        return composed_budget(query.compositions, l1, scale)
    return amplified_budget(l1 / np.asarray(scale, np.float64), q, query.compositions)


def _pure_scale(epsilon, l1: float, query: Query) -> np.ndarray:
    r"""Least scale whose pure-DP epsilon (:func:`_pure_epsilon`) is ``epsilon``: ``T Delta_1 /
    epsilon``, or with Poisson subsampling the inverse of the amplified bound,
    ``b = Delta_1 / log(1 + (e^{epsilon/T} - 1) / q)`` (Balle, Barthe, Gaboardi 2018, Thm 10),
    widened by ``2^-45`` to absorb the padding of :func:`_pure_epsilon`."""
    q = query.sampling_rate
    if q is None or q >= 1.0:
        return np.asarray(scale_laplace_pure(epsilon, float(query.compositions) * l1))
    per_use = np.asarray(epsilon, np.float64) / float(query.compositions)
    return l1 / np.log1p(np.expm1(per_use) / q) * (1.0 + 2.0**-45)


def _scale_1d(epsilon: np.ndarray, delta: np.ndarray, l1: float):
    """The exact 1-D scale: on the host for up to ``HOST_MAX_SIZE`` targets (no compile),
    else (or where the host cannot certify) the compiled :func:`scale_laplace_1d`."""
    if np.size(epsilon) <= HOST_MAX_SIZE and np.all(np.isfinite(epsilon)):
        b, delta_at, ok = scale_laplace_1d_host(epsilon, delta, l1)
        if np.all(ok):
            return b, delta_at, ok
    return (np.asarray(x) for x in call_padded(scale_laplace_1d, epsilon, delta, l1))


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least scale ``b`` meeting the target, certified.

    One use in 1-D: the exact profile (App. F(b) of flipped-huber-mechanism)

    .. math:: \delta(\epsilon) = \big[1 - e^{(\epsilon - \Delta_1/b)/2}\big]_+ ;

    otherwise the least ``b`` under the minimum of the PLD engine's ``K T``-fold
    composition and pure DP with ``epsilon_0 = T Delta_1 / b`` (Table II; amplified by
    subsampling, Balle, Barthe & Gaboardi 2018, Thm 10).

    Args:
      epsilon: target epsilons (broadcast with ``delta``; one calibration each).
      delta: target deltas (``epsilon = delta = 0`` is infeasible).
      query: ``l1`` (and ``linf`` for the engine), ``K``, ``T``, optional rate ``q``.
    """
    if np.any((epsilon == 0) & (delta == 0)):
        raise InfeasibleTargetError("laplace: epsilon = delta = 0 is infeasible for additive noise")
    exact = _exact_1d(query)
    if exact:
        l1, notes = query.sensitivity.resolve("l1")
        b, delta_at, ok = _scale_1d(epsilon, delta, l1)
        require_certified(NAME, ok, epsilon, delta, delta_at)
    else:
        if np.any(epsilon == 0):
            raise InfeasibleTargetError(
                "laplace: epsilon = 0 needs the exact 1-D profile; for dim > 1, compositions > 1 "
                "or subsampling dpjax bounds Laplace by pure DP and the PLD engine, which need "
                "epsilon > 0"
            )
        l1, notes = query.sensitivity.resolve("l1")
        b = _pure_scale(epsilon, l1, query)
        for _ in range(8):  # rounding: make sure the pure-DP epsilon, rounded up, is <= epsilon
            over = _pure_epsilon(b, query) > epsilon
            b = np.where(over, np.nextafter(b, np.inf), b)
        if _sampled_k_dims(query):
            b, delta_at, won = _calibrate_sampled(epsilon, delta, query, b)
            require_certified(NAME, delta_at <= delta, epsilon, delta, delta_at)
            notes += (
                f"{query.dim} dims under one Poisson coin per use (q = {query.sampling_rate:g},"
                f" {query.compositions} uses, relation {query.relation}): min of certified "
                "bounds, PLDAccountant at the l1 vertex and at the linf corner (pessimistic "
                f"connect-the-dots, bin width {_SAMPLED_BIN_WIDTH:g}), amplified pure DP (add or "
                "remove adjacency); least scale from "
                + ", ".join(dict.fromkeys(np.ravel(won))),
            )
            return calibration(
                NAME, query, params={"scale": b}, variance=2.0 * b**2, epsilon=epsilon,
                delta=delta, delta_at_params=np.broadcast_to(delta_at, np.shape(b)).copy(),
                sensitivity={"l1": l1}, notes=notes, condition="sufficient",
            )
        delta_at = np.broadcast_to(pure_dp_delta(epsilon, _pure_epsilon(b, query)), b.shape)
        linf, uses, _ = _engine_uses(query)
        res = calibrate_scale(
            Laplace.from_scale, 0.0, linf, epsilon, delta, uses, query.sampling_rate,
            _bin_width(linf, np.min(b) / 8.0), upper=b, lower=b / 8.0,
        )
        better = np.asarray(res.certified) & (np.asarray(res.scale) < b)
        exact = bool(np.all(better)) and _corner_exact(query)
        b = np.where(better, res.scale, b)
        delta_at = np.where(better, res.delta_at, delta_at)
        b, delta_at, rdp_won = _rdp_candidate(b, delta_at, epsilon, delta, query)
        exact = exact and not rdp_won
        require_certified(NAME, delta_at <= delta, epsilon, delta, delta_at)
        notes += (
            f"min of certified bounds: PLD engine ({uses}-fold composition at linf = "
            f"{linf!r}{', Poisson-subsampled' if query.sampling_rate is not None else ''}), "
            "pure DP with l1 budget"
            + (", the RDP bound of the exact moments (smaller here)" if rdp_won else ""),
        )
    with np.errstate(over="ignore"):  # a scale past 1e154 (epsilon 0, delta 1e-300): +inf
        variance = 2.0 * b**2
    return calibration(
        NAME, query, params={"scale": b}, variance=variance, epsilon=epsilon, delta=delta,
        delta_at_params=np.broadcast_to(delta_at, np.shape(b)).copy(), sensitivity={"l1": l1},
        notes=notes, condition="exact" if exact else "sufficient",
    )


def _rdp_candidate(b, delta_at, epsilon, delta, query: Query):
    """The least of ``b`` and the RDP scale of the exact moments (no subsampling: Mironov's
    closed form, :func:`laplace_rdp_scale`), which wins where the engine's grid is capped."""
    if query.sampling_rate is not None and query.sampling_rate < 1.0:
        return b, delta_at, False  # quadrature moments: too costly for a bisection
    linf, uses, _ = _engine_uses(query)
    rdp_b = laplace_rdp_scale(epsilon, delta, uses, linf)
    use = rdp_b < b
    if not np.any(use):
        return b, delta_at, False
    at = np.exp(np.minimum(laplace_rdp_log_delta(rdp_b, None, uses, epsilon, linf), 0.0))
    return np.where(use, rdp_b, b), np.where(use, at, delta_at), True


def _corner_exact(query: Query) -> bool:
    """The engine's corner shift is a real neighbour (``l1 >= dim * linf`` stated or implied)."""
    if query.dim == 1:
        return True
    l1, _ = query.sensitivity.resolve("l1")
    linf, _ = query.sensitivity.resolve("linf")
    return l1 >= query.dim * linf * (1 - 1e-12)


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    r"""``delta(epsilon)`` of ``Lap(b)`` noise: exact in 1-D (App. F(b)), else a certified bound.

    One use in 1-D: ``[1 - exp((epsilon - Delta_1 / b) / 2)]_+``; otherwise the minimum of
    the PLD engine and the randomized-response bound of ``epsilon_0``-DP,
    ``(e^{eps_0} - e^{eps}) / (1 + e^{eps_0})`` (Kairouz et al. 2015).

    Args:
      params: ``{"scale": ...}`` (validated; one scale unless exact 1-D).
      epsilon: the epsilons to evaluate at.
      query: ``l1``, ``linf``, ``K``, ``T``, optional rate ``q``.
    """
    if _exact_1d(query):
        l1, _ = query.sensitivity.resolve("l1")
        return np.asarray(delta_laplace(epsilon, params["scale"], l1))
    return _engine_profile(_scalar(params), epsilon, query)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    r"""Least certified ``epsilon`` with ``delta(epsilon) <= delta`` for ``Lap(b)`` noise.

    One use in 1-D: ``Delta_1 / b + 2 log(1 - delta)`` (App. F(b)), clipped at 0;
    otherwise the minimum of the engine's and the pure-DP epsilon.

    Args:
      params: as for :func:`profile`; query likewise.
      delta: the deltas to invert at.
    """
    if _exact_1d(query):
        l1, _ = query.sensitivity.resolve("l1")
        return np.asarray(epsilon_laplace(delta, params["scale"], l1))
    return _engine_epsilon(_scalar(params), delta, query)


SUMMARY = "Laplace Lap(b) per coordinate; exact 1-D (eps, delta), PLD engine in K dims / T uses"
ABOUT = About(
    "flipped-huber-mechanism", ("l1", "linf"),
    "any dim, T uses, Poisson subsampling (PLD engine, min with pure DP)",
)
MECHANISM = Mechanism(
    NAME, SUMMARY, calibrate, profile, epsilon_for_delta, noise=Laplace, about=ABOUT
)
