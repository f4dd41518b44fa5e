r"""Least-variance member of a Gaussian-to-Laplace family for a ``K``-dim query on one Poisson coin.

A ``K``-dim query released with i.i.d. noise per coordinate on a Poisson subsample (rate
``q``) draws one coin per use for all ``K`` coordinates, so a use's pair is the mixture of the
``K``-fold product, not a product of ``K`` subsampled 1-D pairs.  Flipped Huber
``FH(b s, s^2)`` and OSGT ``O(k rho, rho^2)`` are scale families whose shape runs from the
Gaussian (shape 0) to the Laplace (shape ``1e4``) (:mod:`dpjax.calibration.composed_family`).
At the ``linf`` corner (every coordinate shifted by ``Delta``: the pair of a product of these
noises is worst there in the box ``|d_k| <= Delta``, as for the exact ``K``-dim condition, and
Poisson subsampling of the whole use keeps that dominance, :mod:`dpjax.mechanisms.laplace`)
``T`` uses are the event

.. code-block:: text

    SelfComposed(PoissonSampled(q, SelfComposed(Noise(name, {shape s / Delta, s / Delta}), K)), T)

whose certified profile is the :class:`~dpjax.accounting.PLDAccountant`'s (the one-coin pair
built from both orders' profiles, :mod:`dpjax.accounting.pld.amplification`).  The least
variance ``min_b s*(b)^2 v(b)`` is searched on the host, one target at a time:

1. **survey**: every shape of :data:`SURVEY` (both ends of the family included), its least
   scale at bin width :data:`SURVEY_BIN_WIDTH` to relative width :data:`SURVEY_RTOL`
   (:func:`~dpjax.calibration.event_scale.calibrate_event_scale`, each bracket started at the
   previous shape's root, scaled by the shapes' ratio above 1: ``s ~ b`` at the Laplace end);
2. **refine**: the midpoints between the best shape and its finite neighbours (the Laplace
   end stands for every shape beyond the last finite one, ``b = 8``: there the Laplace centre
   reaches ``alpha = b gamma``, ``b`` of its own scales ``gamma / b`` squared, and the Gaussian
   tails beyond hold a mass ``~e^{-b^2}``, ``1.6e-28`` at ``b = 8``);
3. **settle**: the best shape's least scale and the Gaussian end's at :data:`BIN_WIDTH` to
   :data:`SETTLE_RTOL`, each re-checked by a fresh accountant; the one of least variance is
   the certified answer (a coarser survey only ranks the shapes, and its grid's pessimism
   differs between the Gaussian end, one 1-D pair, and the ``K``-coordinate pairs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpjax._progress import progress
from dpjax.accounting import events as ev
from dpjax.accounting.rdp.subsampled_gaussian import gaussian_rdp_sigma
from dpjax.calibration.event_scale import calibrate_event_scale, least_event_scale
from dpjax.errors import InfeasibleTargetError

__all__ = ["BIN_WIDTH", "SETTLE_RTOL", "SETTLE_STEP", "SURVEY", "SURVEY_BIN_WIDTH",
           "SURVEY_RTOL", "SURVEY_STEP",
           "calibrate_one_coin", "one_coin_event"]

#: Shapes of the survey: ``0`` is the Gaussian member, ``1e4`` the Laplace member.
SURVEY = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 1e4)
#: The accountant's loss-grid spacing of the certified answer.
BIN_WIDTH = 1e-4
#: Relative width of the answer's final scale bracket, and the factor of each bracketing
#: step away from its guess (the survey's root: within a few percent of it).
SETTLE_RTOL = 1e-5
SETTLE_STEP = 1.1
#: ... and of the survey (ten times coarser: certified there too, only looser).
SURVEY_BIN_WIDTH = 1e-3
#: Relative width of a surveyed shape's final scale bracket (``1e-2`` in variance).
SURVEY_RTOL = 5e-3
#: Factor of each bracketing step of the survey away from its guess (the previous shape's
#: root: near the next one).
SURVEY_STEP = 2.0


def one_coin_event(name: str, names: tuple[str, str], scale: float, shape: float, dim: int,
                   uses: int, sampling_rate: float, linf: float) -> ev.Event:
    """``T`` uses of a ``K``-dim query of the family's noise on one Poisson coin per use, at
    the ``linf`` corner (module docstring).

    Args:
      name: the noise's event name (``"flipped-huber"``, ``"osgt"``).
      names: ``(scale parameter, parameter = shape * scale)``, e.g. ``("gamma", "alpha")``.
      scale: the scale ``s``.
      shape: the shape ``b``.
      dim: the coordinates ``K``.
      uses: ``T``.
      sampling_rate: ``q`` in ``(0, 1)``.
      linf: the per-coordinate sensitivity ``Delta``.

    At shape 0 (``FH(0, s^2) = O(0, s^2) = N(0, s^2)``) the ``K`` Gaussian coordinates at the
    corner are, by rotation, exactly one Gaussian at shift ``sqrt(K) Delta``: the event is
    ``PoissonSampled(q, Gaussian(s / (sqrt(K) Delta)))`` (one 1-D pair, not ``K``).

    Example:
      >>> e = one_coin_event("flipped-huber", ("gamma", "alpha"), 2.0, 0.5, 3, 10, 0.1, 1.0)
      >>> e.count, e.event.event.count, e.event.event.event.params
      (10, 3, {'alpha': 1.0, 'gamma': 2.0})
    """
    scale_name, along = names
    s = float(scale) / float(linf)
    if float(shape) == 0.0:
        # the Gaussian end: K coordinates of N(0, s^2) at the corner are, by rotation, one
        # Gaussian at shift sqrt(K) Delta (the multiplier rounded down: never less private)
        multiplier = float(np.nextafter(s / float(np.sqrt(dim)), 0.0))
        step = ev.PoissonSampled(float(sampling_rate), ev.Gaussian(multiplier))
    else:
        leaf = ev.Noise(name, {along: float(shape) * s, scale_name: s})
        step = ev.PoissonSampled(float(sampling_rate), ev.SelfComposed(leaf, int(dim)))
    return ev.SelfComposed(step, int(uses)) if uses > 1 else step


def _surveyed(build_at: Callable, shape: float, eps: float, dlt: float, relation: str,
              guess: float, linf: float, name: str) -> float:
    """The least scale at one shape on the survey's grid (not re-checked: it only ranks the
    shapes), ``inf`` where no scale up to ``1e12 Delta`` meets the target."""
    try:
        s, _ = least_event_scale(
            lambda s: build_at(s, shape), eps, dlt, relation, guess, name=name,
            lo_limit=1e-6 * linf, hi_limit=1e12 * linf, rtol=SURVEY_RTOL,
            bin_width=SURVEY_BIN_WIDTH, step=SURVEY_STEP)
    except InfeasibleTargetError:
        return np.inf
    return float(s)


def calibrate_one_coin(name: str, names: tuple[str, str], variance_fn: Callable, epsilon,
                       delta, dim: int, uses: int, sampling_rate: float, linf: float,
                       relation: str = "add_remove"):
    r"""Least-variance ``(shape, scale)`` of ``T`` uses of a ``K``-dim query on one Poisson
    coin per use (module docstring).

    .. math:: \min_b\ s^*(b)^2\, v(b),\qquad
              s^*(b) = \min\{s : \hat\delta_{T}(\epsilon; s, b) \le \delta\},

    ``hat delta_T`` the accountant's certified profile of :func:`one_coin_event` under
    ``relation``.

    Args:
      name: the noise's event name.
      names: ``(scale parameter, parameter = shape * scale)``.
      variance_fn: ``variance_fn(scale, shape)`` -> the variance (host arrays).
      epsilon, delta: the targets (arrays, broadcast).
      dim: the coordinates ``K``.
      uses: ``T``.
      sampling_rate: ``q`` in ``(0, 1)``.
      linf: the per-coordinate sensitivity ``Delta``.
      relation: the neighbouring relation.

    Returns:
      NumPy arrays ``(shape, scale, variance, delta_at, certified)`` over the targets.
    """
    eps_all, dlt_all = np.broadcast_arrays(np.asarray(epsilon, np.float64),
                                           np.asarray(delta, np.float64))
    out = np.empty((5, eps_all.size))

    def build_at(s, b):
        return one_coin_event(name, names, s, b, dim, uses, sampling_rate, linf)

    def variance(s, b):
        return float(np.asarray(variance_fn(s, b))) if np.isfinite(s) else np.inf

    with progress(eps_all.size, f"{name}, {dim} dims on one coin, {uses} uses") as step:
        for k, (eps, dlt) in enumerate(zip(eps_all.ravel(), dlt_all.ravel(), strict=True)):
            # the Gaussian end's scale from the subsampled Gaussian's RDP (l2 = sqrt(K) Delta)
            guess = float(gaussian_rdp_sigma(eps, dlt, sampling_rate, uses,
                                             np.sqrt(dim) * linf))
            found: dict[float, tuple[float, float]] = {}
            for b in SURVEY:
                s = _surveyed(build_at, b, eps, dlt, relation, guess, linf, name)
                found[b] = (s, variance(s, b))
                if np.isfinite(s):
                    guess = s
                nxt = SURVEY[min(SURVEY.index(b) + 1, len(SURVEY) - 1)]
                guess *= max(1.0, nxt / max(b, 1.0)) ** 0.5 if nxt < 100 else nxt / max(b, 1.0)
            order = sorted(found)
            best = min(order, key=lambda b: found[b][1])
            i = order.index(best)
            for j in (i - 1, i + 1):
                # midpoints between finite shapes only: the Laplace end stands for every shape
                # beyond the last finite one (module docstring)
                if 0 <= j < len(order) and max(best, order[j]) < SURVEY[-1]:
                    b = 0.5 * (best + order[j])
                    s = _surveyed(build_at, b, eps, dlt, relation, found[best][0], linf, name)
                    found[b] = (s, variance(s, b))
            best = min(found, key=lambda b: found[b][1])
            row = (best, np.inf, np.inf, 1.0, 0.0)
            # the best shape and the Gaussian end (one 1-D pair: cheap) settled; the survey's
            # coarser grid may rank an interior shape above the Gaussian end that, settled,
            # is not (the Gaussian end goes through the accountant's exact subsampled
            # Gaussian, the others through the one-coin pair of K coordinates)
            for b in dict.fromkeys((best, SURVEY[0])):
                if not np.isfinite(found[b][1]):
                    continue
                try:
                    s, at = calibrate_event_scale(
                        lambda s, b=b: build_at(s, b), eps, dlt, relation, found[b][0],
                        name=name, lo_limit=1e-6 * linf, hi_limit=1e12 * linf,
                        rtol=SETTLE_RTOL, bin_width=BIN_WIDTH, step=SETTLE_STEP)
                except InfeasibleTargetError:
                    continue
                s, at = float(s), float(at)
                if variance(s, b) < row[2]:
                    row = (b, s, variance(s, b), at, 1.0)
            out[:, k] = row
            step()
    shape, scale, var, delta_at, ok = (x.reshape(eps_all.shape) for x in out)
    return shape, scale, var, delta_at, ok.astype(bool)
