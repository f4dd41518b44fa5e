r"""The truncated Laplace mechanism (Geng, Ding, Guo & Kumar 2020).

Parameters ``scale`` (GDGK's ``lambda > 0``) and ``bound`` (GDGK's ``A > 0``,
the truncation); see :mod:`dpjax.noise.truncated_laplace`.  Profile: exact 1-D
(:mod:`dpjax.accounting.truncated_laplace`).  Calibration: least variance over
the family (:mod:`dpjax.calibration.truncated_laplace`), which matches GDGK's
closed form ``lambda = Delta / epsilon``,
``A = lambda log(1 + (e^epsilon - 1) / (2 delta))`` in the high-privacy regime.

``T`` uses of a ``K``-dim query (i.i.d. coordinates, sensitivity ``linf`` per coordinate)
are ``K T`` uses of the 1-D pair at shift ``linf``: a coordinate moves by some
``s <= linf``, and at fixed ``(lambda, A)`` every branch of the 1-D profile (eq. (26) of
flipped-huber-mechanism) increases with ``mu = s / lambda`` (and it is continuous in ``mu``),
so the pair at ``s`` is dominated by the pair at ``linf``; dominance survives the product over
coordinates and uses, so the ``K T``-fold composition of the ``linf`` pair is a sound upper
bound (as for OSGT).  Those are calibrated, profiled and inverted by
:class:`~dpjax.accounting.PLDAccountant` on the exact loss law of the pair
(:func:`dpjax.calibration.truncated_laplace.truncated_laplace_composed`).  Poisson
subsampling at rate ``q`` draws one coin per use for all ``K`` coordinates: in one
dimension each use is ``PoissonSampled(q, TL)``, accounted under ``add_remove``, ``add`` or
``remove`` through the mixed pairs of the exact loss atoms
(:func:`dpjax.accounting.truncated_laplace.poisson_truncated_laplace_atoms`); in ``K``
dimensions it is ``PoissonSampled(q, SelfComposed(TL, K))``, and under ``replace_one`` (any
``K``) the sampling is accounted through the profiles of the unsampled pairs
(:mod:`dpjax.accounting.pld.amplification`: Balle, Barthe & Gaboardi 2018's advanced joint
convexity, which needs no worst pair of contributions, none being known for bounded-support
noise).
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax.accounting import PLDAccountant
from dpjax.accounting.truncated_laplace import delta_truncated_laplace, epsilon_truncated_laplace
from dpjax.calibration.members import (
    laplace_limit_variance,
    name_by_variance,
    name_member,
    uniform_limit_variance,
)
from dpjax.calibration.result import Calibration
from dpjax.calibration.truncated_laplace import (
    C_MAX,
    C_MIN,
    COMPOSED_BIN_WIDTH,
    composed_event,
    truncated_laplace_composed,
    truncated_laplace_least_variance,
    truncation_mass,
)
from dpjax.certificate import require_certified
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms._spec import (
    About,
    Mechanism,
    Query,
    calibration,
    exact_1d_accounting,
    single_release,
)
from dpjax.noise.truncated_laplace import TruncatedLaplace

NAME = "truncated-laplace"


#: Below this delta a target the search cannot certify is refused as out of float64 range
#: (the uniform end's bound ``Delta / (2 delta)`` passes ``1e250``), not as a failed
#: certificate; above it a failure stays a :class:`~dpjax.CertificationError`.
_DEEPEST_DELTA = 1e-250


def _sampled(query: Query) -> float | None:
    """The Poisson rate ``q < 1`` of the query, or ``None`` (``q = 1`` keeps every record)."""
    q = query.sampling_rate
    return None if q is None or q >= 1.0 else float(q)


def _uses(query: Query) -> int:
    """``K T``: the 1-D pairs composed (module docstring; ``K`` of them under one coin when
    subsampled)."""
    return query.dim * query.compositions


def _relation(query: Query) -> str:
    """The relation the accountant takes: the query's under subsampling; ``add_remove``
    otherwise (symmetric noise: the other relations are mapped by
    :func:`dpjax.mechanisms._relation.calibrate_under`)."""
    return query.relation if _sampled(query) is not None else "add_remove"


def _calibrate_composed(epsilon, delta, query: Query) -> Calibration:
    """``K T`` uses of the 1-D pair through the accountant (module docstring)."""
    linf, notes = query.sensitivity.resolve("linf")
    uses, q, relation = _uses(query), _sampled(query), _relation(query)
    scale, bound, var, delta_at, ok = truncated_laplace_composed(
        epsilon, delta, uses, linf, sampling_rate=q, relation=relation, dim=query.dim)
    require_certified(NAME, ok & (delta_at <= delta), epsilon, delta, delta_at)
    shape = bound / scale
    # the ends: c = C_MAX is the Laplace member; the uniform one is the c -> 0 limit,
    # A = linf / (2 p_max), p_max = 1 - (1 - delta)^(1 / (K T)): named by its variance A^2 / 3
    member = name_member(shape, C_MIN, C_MAX, "uniform", "laplace")
    p_max = -np.expm1(np.log1p(-delta) / uses)
    uniform = name_by_variance(var, {"uniform": (linf / (2.0 * p_max)) ** 2 / 3.0},
                               rtol=1e-5, below=1e-5)
    member = np.where(uniform == "uniform", uniform, member)
    add_only = q is not None and relation == "add"
    share = 0.0 if add_only else truncation_mass(scale, bound, uses, linf, q, query.dim) / delta
    sampled = ("" if q is None else f", each use Poisson-subsampled at q = {q:g}"
               + (f" (one coin for the {query.dim} coordinates: accounted through their "
                  "profile, Balle et al. 2018)" if query.dim > 1 else ""))
    if q is not None and relation == "replace_one":
        sampled += (", replace-one bound from the profiles at one and two records' "
                    "contributions (advanced joint convexity)")
    notes += (
        f"{uses} uses of the 1-D pair at shift linf ({query.dim} dims x {query.compositions} "
        f"compositions{sampled}), relation {relation}: PLDAccountant on the exact loss law "
        f"(pessimistic connect-the-dots, bin width {COMPOSED_BIN_WIDTH}); least variance over "
        f"the shape c = A / lambda in [{C_MIN:g}, {C_MAX:g}]: member "
        + ", ".join(f"{m} (c = {c:.6g}, mass at +infinity after the uses = {f:.3g} delta)"
                    for m, c, f in zip(np.ravel(member), np.ravel(shape), np.ravel(share),
                                       strict=True)),
    )
    return calibration(
        NAME, query, params={"scale": scale, "bound": bound}, variance=var, epsilon=epsilon,
        delta=delta, delta_at_params=delta_at, sensitivity={"linf": linf}, notes=notes,
        member=member,
    )


def calibrate(epsilon: np.ndarray, delta: np.ndarray, query: Query) -> Calibration:
    r"""Least-variance ``(lambda, A)`` with the certified profile ``<= delta``.

    One use in one dimension: over the whole family with the exact 1-D profile
    (:mod:`dpjax.calibration.truncated_laplace`); in the high-privacy regime this is GDGK's
    closed form (Geng, Ding, Guo & Kumar 2020)

    .. math:: \lambda = \Delta / \epsilon,\qquad
              A = \lambda \log\!\Big(1 + \frac{e^\epsilon - 1}{2\delta}\Big).

    ``K`` dims x ``T`` uses: ``K T`` uses of the pair at ``linf`` (module docstring), the
    least variance over the shape ``c = A / lambda`` of the accountant's certified
    ``delta_T(epsilon)``
    (:func:`dpjax.calibration.truncated_laplace.truncated_laplace_composed`).

    Args:
      epsilon: target epsilons (broadcast with ``delta``).
      delta: target deltas, ``> 0``.
      query: sensitivity ``linf``, ``K`` dims, ``T`` uses, Poisson rate ``q`` (the
        relation under subsampling: ``add_remove``, ``add``, ``remove`` or ``replace_one``).
    """
    uses = _uses(query)
    if np.any(delta == 0):
        raise InfeasibleTargetError(
            "truncated-laplace: delta = 0 is infeasible (bounded support: delta(eps) > 0 "
            "for every eps)"
        )
    if uses > 1 or _sampled(query) is not None:
        return _calibrate_composed(epsilon, delta, query)
    sens, notes = single_release(NAME, query)
    scale, bound, var, delta_at, ok = truncated_laplace_least_variance(epsilon, delta, sens)
    deep = ~np.asarray(ok) & (np.broadcast_to(delta, np.shape(ok)) < _DEEPEST_DELTA)
    if np.any(deep):
        eps_bad = float(np.broadcast_to(epsilon, deep.shape)[deep][0])
        delta_bad = float(np.broadcast_to(delta, deep.shape)[deep][0])
        raise InfeasibleTargetError(
            f"{NAME}: no certified parameters for epsilon={eps_bad!r}, "
            f"delta={delta_bad!r}: near epsilon = 0 the "
            "target needs a bound of order Delta / (2 delta) (the uniform end), beyond the "
            "range where the float64 profile can be evaluated; laplace or gaussian meet it"
        )
    require_certified(NAME, ok, epsilon, delta, delta_at)
    return calibration(
        NAME, query, params={"scale": scale, "bound": bound}, variance=var, epsilon=epsilon,
        delta=delta, delta_at_params=delta_at, sensitivity={"linf": sens}, notes=notes,
        member=name_by_variance(var, {
            "uniform": uniform_limit_variance(delta, sens),
            "laplace": laplace_limit_variance(epsilon, delta, sens),
        }),
    )


def _accountant_answer(what: str, params: dict, x, query: Query) -> np.ndarray:
    """:class:`~dpjax.accounting.PLDAccountant`'s ``delta`` (``x`` = epsilons) or ``epsilon``
    (``x`` = deltas) of ``K T`` uses of the pair at ``linf`` (one parameter pair)."""
    linf = query.sensitivity.resolve("linf")[0]
    scale, bound = (np.asarray(params[n], np.float64) for n in ("scale", "bound"))
    if scale.ndim or bound.ndim:
        raise ValueError(f"{NAME}: over several uses, give one (scale, bound) at a time")
    event = composed_event(float(scale) / linf, float(bound) / linf, _uses(query),
                           _sampled(query), query.dim)
    acc = PLDAccountant(_relation(query), COMPOSED_BIN_WIDTH).compose(event)
    ask = acc.get_delta if what == "profile" else acc.get_epsilon
    x = np.asarray(x, np.float64)
    return np.vectorize(lambda v: ask(float(v)), otypes=[np.float64])(x)


_profile_1d, _epsilon_1d = exact_1d_accounting(
    TruncatedLaplace, jax.jit(delta_truncated_laplace), jax.jit(epsilon_truncated_laplace),
    "Geng, Ding, Guo & Kumar 2020")


def profile(params: dict, epsilon: np.ndarray, query: Query) -> np.ndarray:
    """``delta(epsilon)`` of truncated Laplace noise: exact in 1-D (eq. (26) of
    flipped-huber-mechanism), the accountant's ``K T``-fold composition otherwise.

    Args:
      params: ``{scale, bound}`` (validated).
      epsilon: the epsilons to evaluate at.
      query: sensitivity ``linf``, ``K`` dims, ``T`` uses.
    """
    return _answer("profile", params, epsilon, query)


def epsilon_for_delta(params: dict, delta: np.ndarray, query: Query) -> np.ndarray:
    """Least certified ``epsilon`` of truncated Laplace noise at ``delta`` (as :func:`profile`).

    Args:
      params: ``{scale, bound}`` (validated).
      delta: the deltas to invert at.
      query: sensitivity ``linf``, ``K`` dims, ``T`` uses.
    """
    return _answer("epsilon", params, delta, query)


def _answer(what: str, params: dict, x, query: Query) -> np.ndarray:
    """The exact 1-D answer for one use, else the accountant's (``what``: ``profile`` or
    ``epsilon``)."""
    if _uses(query) == 1 and _sampled(query) is None:
        return (_profile_1d if what == "profile" else _epsilon_1d)(params, x, query)
    return _accountant_answer(what, params, x, query)


SUMMARY = "truncated Laplace on [-A, A] (Geng, Ding, Guo & Kumar 2020); exact 1-D profile"
MECHANISM = Mechanism(
    NAME, SUMMARY, calibrate, profile, epsilon_for_delta, noise=TruncatedLaplace,
    about=About("flipped-huber-mechanism", ("linf",),
                "exact 1-D; K dims x T uses and Poisson subsampling by the accountant"),
)
