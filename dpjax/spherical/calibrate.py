r"""Least-cost spherical mechanism meeting one ``(epsilon, delta)``: the ``spherical`` entry
of the mechanism registry (``dpjax.calibrate("spherical", ...)``, the spherical row of
``dpjax.design``).

The spherical programme (spherical-kl-optimal-mechanisms, Thm 4) minimises the KL
for a cost budget ``C = E|Z|^2`` at unit ``l2`` sensitivity; privacy is a property of
the solution, certified by the exact PLD of its cells (:mod:`.mechanism`).  To meet a
target we search the budget: Illinois (regula falsi, :func:`dpjax.numerics.illinois_host`)
on ``log delta`` against ``log C`` in ``[0.8, 1.5] C_G``, ``C_G = m sigma_G^2`` the
Gaussian's budget at the same target, to a bracket of ``TOL`` in ``log C``; each step
solves the programme and accepts ``C`` only if its certified ``delta(epsilon) <= delta
(1 - MARGIN)`` (the hockey-stick summed over the exact cells,
:meth:`~dpjax.spherical.mechanism.SphericalMechanism.delta`).  The least accepted
budget is returned (a budget whose programme does not solve to tolerance counts as not
accepted).

Discretisation (fixed over the search: the cells are computed once): ``n`` shells per
unit of sensitivity; free shells up to radius ``sqrt(C_hi) + 5 sigma_hi`` (the
Gaussian's radial mass), the geometric tail's ratio matching the Gaussian's
log-density slope there, ``r = exp(-(N / n) / (n sigma_hi^2))`` (a fixed ``r = 0.9``
fails as ``m`` grows: the tail then carries the cost).  The KL-optimal mechanism is
not the least-variance one for a given ``(epsilon, delta)``: expect it near the
Gaussian, and below it only where the paper's regime (small budgets, many
compositions) applies.  Single release only.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.calibration.result import Calibration
from dpjax.certificate import log_target
from dpjax.errors import InfeasibleTargetError
from dpjax.numerics import float64_kernel, illinois_host

NAME = "spherical"
#: Shells per unit of sensitivity.
SHELLS = 10
#: Width in ``log C`` at which the budget search stops (a sixth of ten bisection steps').
TOL = 1e-4
#: Most budgets the search solves for.
MAX_SOLVES = 12
#: Budget bracket, relative to the Gaussian's ``m sigma_G^2``.
BRACKET = (0.8, 1.5)


def _plan(m: int, n: int, budget: float) -> tuple[int, float]:
    """``(N, r)``: free shells covering the radial mass of the Gaussian with ``E|Z|^2 =
    budget``, and the tail ratio matching its log-density slope at radius ``N / n``."""
    s = math.sqrt(budget / m)
    n_free = int(math.ceil(n * (math.sqrt(budget) + 5.0 * s)))
    return n_free, math.exp(-(n_free / n) / (n * s * s))


@float64_kernel
def calibrate_spherical(
    epsilon: float, delta: float, dim: int, l2: float, n: int = SHELLS, tol: float = TOL
) -> Calibration:
    r"""Least certified cost budget of the spherical mechanism meeting ``(epsilon, delta)``.

    .. math:: \min C \quad\text{s.t.}\quad \delta_{Z_C}(\epsilon) \le \delta (1 - \mathrm{MARGIN}),

    ``Z_C`` the KL-optimal monotone radial noise of budget ``C = E|Z|^2`` (Theorem 4 of
    spherical-kl-optimal-mechanisms) and ``delta_{Z_C}`` its exact cell profile at the
    worst shift (Lemma 1); Illinois on ``log C`` (module docstring).

    Args:
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      dim: dimension ``m = K``.
      l2: the ``l2`` sensitivity (the budget scales with ``l2^2``).
      n: shells per unit of sensitivity.
      tol: width of the final bracket in ``log C`` (the returned budget is at most
        ``e^tol`` times the least certified one, where ``delta(C)`` is monotone).

    Returns:
      A :class:`Calibration` whose ``params`` are ``budget`` (``E|Z|^2`` at sensitivity
      ``l2``), ``n``, ``N``, ``r``.

    Raises:
      InfeasibleTargetError: no certified budget up to ``1.5`` times the Gaussian's.
    """
    from dpjax.calibration.gaussian import calibrate_sigma
    from dpjax.spherical import coefficients as co
    from dpjax.spherical import geometric as ge
    from dpjax.spherical.cells_beta import log_cell_volumes_beta_symmetric

    if not (epsilon > 0 and 0 < delta < 1):
        raise InfeasibleTargetError(f"{NAME}: needs epsilon > 0 and 0 < delta < 1")
    m = int(dim)
    sigma = float(calibrate_sigma(epsilon, delta, 1.0)[0])  # host closed form: no compile
    lo, hi = (f * m * sigma * sigma for f in BRACKET)
    big_n, r = _plan(m, n, hi)
    grid = {"m": m, "n": n, "b": n, "first": 0, "N": big_n, "r": r,
            "rows": co.tail_rows(m, n, big_n, r)}
    # the cells do not depend on the budget: computed once (host, no compilation)
    cells = log_cell_volumes_beta_symmetric(m, n, grid["rows"])
    level = math.exp(float(log_target(delta)))

    def certified_delta(budget: float) -> float:
        try:
            res = ge.solve_plan({**grid, "budget": budget}, cells)
        except ValueError:  # budget unreachable on this grid
            return math.inf
        if res["status"] != 0:  # not solved to tolerance
            return math.inf
        return res["mechanism"].delta(epsilon)

    certified = {}  # log budget -> certified delta, of every programme solved

    def excess(log_budgets: np.ndarray) -> np.ndarray:
        """``log delta(C) - log level``: ``<= 0`` where the budget is certified."""
        x = float(log_budgets[0])
        certified[x] = certified_delta(math.exp(x))
        with np.errstate(divide="ignore"):
            return np.array([np.log(certified[x]) - math.log(level)])

    # neither end is solved first (-inf / +inf: not evaluated): the search bisects until it
    # has a point on each side; the dear end C_hi is solved only if nothing below it was
    # certified
    log_hi = math.log(hi)
    good, _ = illinois_host(
        excess, np.array([log_hi]), np.array([math.log(lo)]), tol,
        max_evaluations=MAX_SOLVES, f_good=np.array([-np.inf]), f_bad=np.array([np.inf]),
    )
    x = float(good[0])
    if x not in certified:
        excess(np.array([x]))
    if not certified[x] <= level:
        raise InfeasibleTargetError(
            f"{NAME}: no certified budget up to {BRACKET[1]} x the Gaussian's "
            f"(delta({epsilon}) = {certified[x]:.3g} > {delta})"
        )
    best, d_best = math.exp(x), certified[x]
    budget = best * l2 * l2
    return Calibration(
        mechanism=NAME,
        params={
            "budget": np.float64(budget),
            "n": np.float64(n),
            "N": np.float64(big_n),
            "r": np.float64(r),
        },
        variance=np.float64(budget / m),
        mse=np.float64(budget),
        epsilon=np.float64(epsilon),
        delta=np.float64(delta),
        delta_at_params=np.float64(d_best),
        dim=m,
        condition="exact",
        sensitivity={"l2": l2},
        notes=(
            "spherical: objective -- the shape minimises the KL at unit shift (Theorem 4), "
            "the large-T limit of the certified epsilon after T uses; for this single release "
            "it is not the (epsilon, delta) optimum, so only the scale (the budget C) is "
            "chosen by the certified delta(epsilon) of one release (for T uses at rate q, "
            "design with `dpjax spherical design --r auto --auto-delta D --auto-compositions "
            "T --auto-sampling-rate q`, which picks the tail by the certified epsilon there)",
            f"spherical: KL-optimal radial noise (monotone programme, banded Newton), least "
            f"budget by Illinois on log C ({len(certified)} programmes solved), certified "
            f"by the exact cell profile; "
            f"n = {n} shells per unit sensitivity, N = {big_n}, r = {r:.4g}; rebuild with "
            f"`dpjax spherical design --dim {m} --cost {best:.6g} --n {n} --N {big_n} "
            f"--r {r:.6g}` (unit sensitivity; scale the noise by l2)",
        ),
    )
