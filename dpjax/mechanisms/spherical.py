r"""The spherical mechanism: KL-optimal radial noise in ``R^K`` (spherical-kl-optimal-mechanisms).

Noise ``Z`` in ``R^K`` with a monotone radial density, the solution of the convex KL
programme of Theorem 4 for a cost budget ``C = E|Z|^2`` (:mod:`dpjax.spherical`),
added to a query with ``l2`` sensitivity ``Delta_2``; its privacy is certified by the
exact PLD of its cells at the worst shift (Lemma 1).  The query fits when it is **in ``K >= 2``
dimensions with an ``l2`` sensitivity** (stated, or derived soundly from ``l1`` / ``linf``,
:mod:`dpjax.sensitivity`), released once or ``T`` times, optionally Poisson-subsampled
under the query's relation (``add_remove``: the worse of the two dominating pairs;
``remove`` or ``add``: one of them; ``replace_one``: a bound from the unsampled cell profile,
no worst pair of contributions being known: :func:`dpjax.spherical.mechanism.adjacencies`);
in one
dimension the spherical family is the cactus mechanism, not offered here.

Parameters (the calibration's output): ``budget`` (``C`` at sensitivity ``l2``), ``n``
(shells per unit of sensitivity), ``N`` (last free shell) and ``r`` (tail ratio),
which rebuild the designed noise (:func:`dpjax.spherical.design.design_mechanism` at
budget ``C / l2^2``).  Calibration: least budget certified at the use (``T``, ``q``), the
shape the KL programme's (its large-``T`` limit objective)
(:func:`dpjax.spherical.calibrate.calibrate_spherical`).  Profiles and epsilons of a
designed mechanism, composed or subsampled, are methods of
:class:`~dpjax.spherical.mechanism.SphericalMechanism` (saved and loaded by
:mod:`dpjax.spherical.io`), not of this registry entry.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpjax.calibration.result import Calibration
from dpjax.mechanisms._spec import About, Mechanism, Query

NAME = "spherical"
#: What calibrating needs of a query, for the error messages.
FITS = "an l2 sensitivity in dim K >= 2"


def _l2(query: Query) -> tuple[float, tuple[str, ...]]:
    """The query's ``l2`` sensitivity (stated or soundly derived), if the query fits."""
    if query.dim < 2:
        raise ValueError(
            f"{NAME}: needs {FITS} (in one dimension the spherical family is the cactus "
            "mechanism); for dim = 1 calibrate gaussian, laplace or flipped-huber"
        )
    return query.sensitivity.resolve("l2")


def _stack(cals: list[Calibration], shape: tuple[int, ...]) -> Calibration:
    """One :class:`Calibration` of arrays shaped ``shape`` from one per target."""

    def arr(get) -> np.ndarray:
        return np.asarray([get(c) for c in cals], np.float64).reshape(shape)

    first = cals[0]
    return dataclasses.replace(
        first,
        params={k: arr(lambda c, k=k: c.params[k]) for k in first.params},
        variance=arr(lambda c: c.variance),
        mse=arr(lambda c: c.mse),
        epsilon=arr(lambda c: c.epsilon),
        delta=arr(lambda c: c.delta),
        delta_at_params=arr(lambda c: c.delta_at_params),
        notes=tuple(dict.fromkeys(n for c in cals for n in c.notes)),
    )


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    """Least budget certified at the query's use, per target (Thm 4 programme; cell PLD,
    Lemma 1; ``T`` uses, Poisson rate ``q``: Fig. 2).

    Args:
      epsilon, delta: broadcast target arrays (one search per element).
      query: the query (``dim >= 2``, an ``l2`` sensitivity, ``compositions``,
        ``sampling_rate``).

    Returns:
      A :class:`Calibration` with ``params = {budget, n, N, r}``.
    """
    # deferred: dpjax.spherical (its solver stack; the registry's metadata loads this module)
    from dpjax.spherical import calibrate as sph

    l2, notes = _l2(query)
    q = query.sampling_rate
    relation = query.relation if q is not None and q < 1.0 else "add_remove"
    cals = [
        sph.calibrate_spherical(float(e), float(d), query.dim, l2,
                                compositions=query.compositions, sampling_rate=q,
                                relation=relation)
        for e, d in zip(np.ravel(epsilon), np.ravel(delta), strict=True)
    ]
    cal = cals[0] if np.ndim(epsilon) == 0 else _stack(cals, np.shape(epsilon))
    return dataclasses.replace(cal, notes=cal.notes + tuple(notes))


def _designed_only(params: dict, values: np.ndarray, query: Query) -> np.ndarray:
    raise NotImplementedError(
        f"{NAME}: the privacy of a designed spherical mechanism is a property of its solved "
        "programme: build it (dpjax.spherical.design.design_mechanism) or load it "
        "(dpjax.spherical.io.load) and call its delta(epsilon, compositions, sampling_rate) "
        "or epsilon(delta, compositions, sampling_rate)"
    )


SUMMARY = (
    "spherical: KL-optimal monotone radial noise in R^K (Thm 4), exact cell PLD; "
    "l2, K >= 2, T uses, Poisson rate q"
)
#: The calibration's parameters (budget at sensitivity ``l2``, shells per unit, last free
#: shell, tail ratio).
CONSTRAINTS = {"budget": "> 0", "n": "integer >= 1", "N": "integer >= 2", "r": "in (0, 1)"}
ABOUT = About(
    "spherical-kl-optimal-mechanisms", ("l2",),
    "K >= 2 dims (l2); compositions and Poisson subsampling (add_remove, add, remove; "
    "replace_one by a profile bound) by its cell PLD",
)
MECHANISM = Mechanism(
    NAME, SUMMARY, calibrate, _designed_only, _designed_only, constraints=CONSTRAINTS,
    min_dim=2, about=ABOUT
)
