r"""Least-cost spherical mechanism meeting one ``(epsilon, delta)`` at a use: the ``spherical``
entry of the mechanism registry (``dpjax.calibrate("spherical", ...)``, the spherical row of
``dpjax.design``).

The spherical programme (spherical-kl-optimal-mechanisms, Thm 4) minimises the KL
for a cost budget ``C = E|Z|^2`` at unit ``l2`` sensitivity; privacy is a property of
the solution, certified by the PLD of its exact cells (:mod:`.mechanism`).  To meet a
target at a use (``T`` compositions, optional Poisson rate ``q``) we search the budget:
Illinois (regula falsi, :func:`dpjax.numerics.illinois_host`) on ``log delta`` against
``log C`` in ``[0.8, 1.5] C_G``, ``C_G = m sigma_G^2`` the Gaussian's budget at the same
target *and use* (its ``sigma_G`` from the Gaussian's own calibration for ``T`` uses at rate
``q``), to a bracket of ``TOL`` in ``log C``; each step solves the programme and accepts
``C`` only if the designed mechanism's certified ``delta(epsilon)`` at the use is ``<= delta
(1 - MARGIN)``: one release sums the hockey-stick over the exact cells, ``T`` uses compose
its PLD by the engine's FFT (subsampled: add and remove, the worse;
:meth:`~dpjax.spherical.mechanism.SphericalMechanism.delta`).  The least accepted budget is
returned (a budget whose programme does not solve to tolerance counts as not accepted).
Where the target lies outside the bracket it is widened (by ``WIDEN``, at most
``WIDENINGS`` times): up when nothing up to ``C_hi`` is certified, down when the least
certified budget is the bracket's unevaluated lower end; then an
:class:`~dpjax.errors.InfeasibleTargetError`.

Objective.  The *shape* is the KL programme's optimum, the large-``T`` limit of the
certified epsilon after ``T`` uses (Theorem 1 of the paper); only the *scale* (the budget)
is chosen by the certified ``delta(epsilon)`` at the use.  The tail ratio ``r`` is not
searched by the certified epsilon (``dpjax spherical design --r auto`` does that for one
budget): a golden-section search over ``r`` solves and accounts ~8 programmes per budget,
~8x the whole calibration (each composed step costs about a programme plus an FFT
composition; ``bench/results/spherical_composed_2026-11-29.txt``), for a tail that carries
almost none of the mass at the slope rule's ``r``.

Discretisation (fixed over a bracket: the cells are computed once): ``n`` shells per unit of
sensitivity, by default from the geometry (:func:`default_shells`): the geometric design's
rule :func:`dpjax.spherical.geometric.shells_per_unit` at ``SHELL_TOL = 1e-2``, i.e. the
grid's relative KL price ``m / (6 n^2) <= 1 %`` (16 shells at ``m <= 15``, 19 at ``m = 20``,
41 at ``m = 100``), at most ``MAX_SHELLS = 64`` (beyond ``m = 245`` the price grows as ``m /
24576``; the verdict note reports it). Why
(``bench/results/spherical_composed_2026-11-29_shells.txt``): where the Gaussian is near the
KL optimum (``epsilon = 1``, ``delta = 1e-5``, ``T = 10, 100``, ``q`` none or 0.1) the row's
mse above the Gaussian's is this price: +1.7 % at ``m = 10`` and +16.7 % at ``m = 100`` with
the former fixed ``n = 10``, at most +0.7 % and +1.0 % with this rule; in the paper's regime
(``m = 10``, ``T = 100``, ``q = 0.01``) 0.838 x the Gaussian's (0.858 with ``n = 10``). The
time is mostly the cells, ``~ N n ~ n^2`` (the whole band ``b = n``): at ``m = 100``, ``T =
10`` 20 CPU s with ``n = 41``, 34 with ``n = 58`` (``1/2 %``), and ``T = 100`` unsubsampled
(``N = 28100``) 52 CPU s with ``n = 41``; the design rule's ``TOL = 5e-4`` (``n = 183``) would
take many minutes. ``1 %`` keeps the composed calibrations at ``m <= 100`` within about a
minute and one release at ``m = 20`` (``dpjax design --dim 20 --linf 1``, ``n = 19``) at ~8
CPU s cold (4 with ``n = 10``). The cap bounds the cells at large ``m``, where the unbanded
grid's cost grows as ``n^2 sqrt(m)``. An explicit ``n`` overrides the rule. Free shells up to
radius ``sqrt(C_hi) + 5 sigma_hi`` (the Gaussian's radial mass), the geometric tail's ratio
matching the Gaussian's log-density slope there, ``r = exp(-(N / n) / (n sigma_hi^2))`` (a
fixed ``r = 0.9`` fails as ``m`` grows: the tail then carries the cost). The KL-optimal
mechanism is not the least-variance one for a given ``(epsilon, delta)``: expect it near the
Gaussian, and below it only where the paper's regime (small budgets, many compositions)
applies; the calibration says which (a note comparing its budget with the Gaussian's at the
same use: never silent).
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.calibration.gaussian import calibrate_sigma
from dpjax.calibration.result import Calibration
from dpjax.certificate import log_target
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms import calibrate_under, get, make_query
from dpjax.numerics import float64_kernel, illinois_host
from dpjax.spherical import coefficients as co
from dpjax.spherical import geometric as ge
from dpjax.spherical.cells_beta import log_cell_volumes_beta_symmetric
from dpjax.spherical.design import gaussian_core_shells
from dpjax.spherical.geometric import shells_per_unit
from dpjax.spherical.mechanism import adjacencies, check_use

NAME = "spherical"
#: Target relative KL price ``m / (6 n^2)`` of the default shells (:func:`default_shells`).
SHELL_TOL = 1e-2
#: Most shells per unit of sensitivity the default takes (bounds the cells at large ``m``).
MAX_SHELLS = 64
#: Width in ``log C`` at which the budget search stops (a sixth of ten bisection steps').
TOL = 1e-4
#: Most budgets the search solves for (per bracket): the bracket's lower end is not solved
#: first, so the search bisects until it meets a refused budget, and bisection alone reaches
#: ``TOL`` in ``ceil(log2(log(1.5 / 0.8) / TOL)) = 13`` solves; 12 stopped a search whose
#: root lay near the lower end (m = 10, 50 uses at rate 0.01) at 1.3 ``TOL``.
MAX_SOLVES = 20
#: Budget bracket, relative to the Gaussian's ``m sigma_G^2`` at the same use.
BRACKET = (0.8, 1.5)
#: Factor by which a bracket that misses the target is widened, and how many times at most.
WIDEN = 2.0
WIDENINGS = 3
#: Log relative radial density of the smallest searched budget's Gaussian below which the
#: shells form a flat core (no stored cells: accounted at loss ``+inf``; without it the inner
#: shell masses underflow float64 at large budgets, e.g. ``m = 100``, ``C ~ 10^5``).
LOG_CORE = -80.0


def default_shells(m: int) -> int:
    r"""Default shells per unit of sensitivity: the geometric design's
    ``max(16, ceil(sqrt(m / (6 SHELL_TOL))))`` (grid price ``m / (6 n^2) <= SHELL_TOL``), at
    most ``MAX_SHELLS`` (module docstring: the measurements behind both).

    Args:
      m: dimension.

    Example:
      >>> [default_shells(m) for m in (2, 10, 20, 100, 10000)]
      [16, 16, 19, 41, 64]
    """
    return min(MAX_SHELLS, shells_per_unit(m, SHELL_TOL))


def _plan(m: int, n: int, budget: float) -> tuple[int, float]:
    """``(N, r)``: free shells covering the radial mass of the Gaussian with ``E|Z|^2 =
    budget``, and the tail ratio matching its log-density slope at radius ``N / n``."""
    s = math.sqrt(budget / m)
    n_free = int(math.ceil(n * (math.sqrt(budget) + 5.0 * s)))
    return n_free, math.exp(-(n_free / n) / (n * s * s))


def _grid(m: int, n: int, hi: float, floor: float) -> tuple[dict, np.ndarray]:
    """The programme's grid for budgets in ``[floor, hi]`` (:func:`_plan` at ``hi``; the
    flat core below the shells where ``floor``'s Gaussian has no mass) and its cells."""
    big_n, r = _plan(m, n, hi)
    first = min(gaussian_core_shells(m, n, floor, LOG_CORE), max(big_n - n - 1, 0))
    return _grid_of(m, n, big_n, r, first)


def _grid_of(m: int, n: int, big_n: int, r: float, first: int = 0) -> tuple[dict, np.ndarray]:
    """The grid of ``(n, N, r)`` from shell ``first`` (a calibration's ``params`` and notes
    rebuild it) and its cells (host, no compilation; they do not depend on the budget)."""
    grid = {"m": m, "n": n, "b": n, "first": first, "N": big_n, "r": r,
            "rows": co.tail_rows(m, n, big_n, r)}
    if first == 0:
        return grid, log_cell_volumes_beta_symmetric(m, n, grid["rows"])
    return grid, log_cell_volumes_beta_symmetric(m, n, grid["rows"], start=first)


def _use(compositions: int, sampling_rate: float | None) -> str:
    """``T=.., q=..`` (as :func:`dpjax.comparison.objective` writes a use)."""
    return f"T={compositions}" + ("" if sampling_rate is None else f", q={sampling_rate:.6g}")


def _gaussian_sigma(epsilon: float, delta: float, compositions: int,
                    sampling_rate: float | None, relation: str = "add_remove") -> float:
    """The Gaussian's certified ``sigma`` at unit ``l2`` for the target at the use, under
    ``relation`` (its own calibration: closed form for one release or plain composition,
    the PLD engine / RDP bound, or its events under the relation, under subsampling)."""
    if compositions == 1 and sampling_rate is None:
        return float(calibrate_sigma(epsilon, delta, 1.0)[0])  # host closed form: no compile
    gauss = get("gaussian")
    query = make_query(gauss, {"l2": 1.0, "compositions": compositions,
                               "sampling_rate": sampling_rate, "relation": relation})
    cal = calibrate_under(gauss, np.float64(epsilon), np.float64(delta), query)
    return float(cal.params["sigma"])


@float64_kernel
def calibrate_spherical(
    epsilon: float, delta: float, dim: int, l2: float, n: int | None = None, tol: float = TOL,
    compositions: int = 1, sampling_rate: float | None = None, relation: str = "add_remove",
) -> Calibration:
    r"""Least certified cost budget of the spherical mechanism meeting ``(epsilon, delta)``
    after ``compositions`` uses (Poisson rate ``sampling_rate``, neighbouring ``relation``).

    .. math:: \min C \quad\text{s.t.}\quad
              \delta_{Z_C}^{(T, q)}(\epsilon) \le \delta (1 - \mathrm{MARGIN}),

    ``Z_C`` the KL-optimal monotone radial noise of budget ``C = E|Z|^2`` (Theorem 4 of
    spherical-kl-optimal-mechanisms: the shape optimal as ``T -> infinity``) and
    ``delta^(T, q)_{Z_C}`` its certified profile at the worst shift (Lemma 1) after ``T``
    uses at rate ``q`` (one plain release: the exact cell sum; otherwise its PLD composed by
    the FFT, subsampled pairs add and remove, the worse; Fig. 2); Illinois on ``log C``
    (module docstring).

    Args:
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      dim: dimension ``m = K``.
      l2: the ``l2`` sensitivity (the budget scales with ``l2^2``).
      n: shells per unit of sensitivity (default :func:`default_shells`: grid price
        ``m / (6 n^2) <= 1 %`` up to ``m = 245``).
      tol: width of the final bracket in ``log C`` (the returned budget is at most
        ``e^tol`` times the least certified one, where ``delta(C)`` is monotone).
      compositions: number of uses ``T >= 1``.
      sampling_rate: Poisson subsampling rate ``q`` in ``(0, 1]``, or ``None``; ``q = 1``
        keeps every record (plain composition).
      relation: ``"add_remove"`` (default: both subsampled pairs, the worse), ``"remove"``
        or ``"add"`` (one of them; without subsampling all three are the shift pair:
        :func:`dpjax.spherical.mechanism.adjacencies`), or ``"replace_one"`` under
        subsampling (the profile bound of the unsampled cells).

    Returns:
      A :class:`Calibration` whose ``params`` are ``budget`` (``E|Z|^2`` at sensitivity
      ``l2``), ``n``, ``N``, ``r``; ``mse = budget``, ``variance = budget / m``.

    Raises:
      InfeasibleTargetError: no certified budget up to ``1.5 x 2^3`` times the Gaussian's
        at the same use (or the target is not ``epsilon > 0``, ``0 < delta < 1``).
      ValueError: ``compositions < 1`` or a rate outside ``(0, 1]``.

    Example:
      >>> cal = calibrate_spherical(2.0, 1e-5, 3, 1.0, n=4, tol=0.05, compositions=3)
      >>> bool(cal.delta_at_params <= 1e-5), cal.params["n"]
      (True, np.float64(4.0))
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise InfeasibleTargetError(f"{NAME}: needs epsilon > 0 and 0 < delta < 1")
    check_use(None, [compositions], sampling_rate)
    adjacencies(sampling_rate, relation)  # validates the relation
    T = int(compositions)
    q = None if sampling_rate is None or float(sampling_rate) == 1.0 else float(sampling_rate)
    relation = "add_remove" if q is None else relation
    m = int(dim)
    n = default_shells(m) if n is None else int(n)
    sigma = _gaussian_sigma(epsilon, delta, T, q, relation)
    gaussian_budget = m * sigma * sigma
    lo, hi = (f * gaussian_budget for f in BRACKET)
    floor = lo / WIDEN**WIDENINGS  # the least budget any widening searches
    level = math.exp(float(log_target(delta)))

    def certified_delta(grid, cells, budget: float) -> float:
        try:
            res = ge.solve_plan({**grid, "budget": budget}, cells)
        except ValueError:  # budget unreachable on this grid
            return math.inf
        if res["status"] != 0:  # not solved to tolerance
            return math.inf
        return res["mechanism"].delta(epsilon, T, q, relation=relation)

    grid, cells, grid_hi = None, None, None
    certified: dict = {}  # log budget -> certified delta, of every programme solved on grid
    solved = 0

    def excess(log_budgets: np.ndarray) -> np.ndarray:
        """``log delta(C) - log level``: ``<= 0`` where the budget is certified."""
        nonlocal solved
        x = float(log_budgets[0])
        certified[x] = certified_delta(grid, cells, math.exp(x))
        solved += 1
        with np.errstate(divide="ignore"):
            return np.array([np.log(certified[x]) - math.log(level)])

    # neither end is solved first (-inf / +inf: not evaluated): the search bisects until it
    # has a point on each side; the dear end C_hi is solved only if nothing below it was
    # certified.  A widened bracket's known end is passed with its value.
    log_good, f_good = math.log(hi), -np.inf
    for _ in range(WIDENINGS + 1):
        if grid_hi != hi:  # a new upper end: a new grid, its own programmes
            grid, cells = _grid(m, n, hi, floor)
            grid_hi, certified = hi, {}
        good = illinois_host(
            excess, np.array([log_good]), np.array([math.log(lo)]), tol,
            max_evaluations=MAX_SOLVES, f_good=np.array([f_good]), f_bad=np.array([np.inf]),
        ).good
        x = float(good[0])
        if x not in certified:
            excess(np.array([x]))
        if not certified[x] <= level:  # nothing certified up to hi: widen up
            lo, hi = hi, hi * WIDEN
            log_good, f_good = math.log(hi), -np.inf
            continue
        if any(y < x and not d <= level for y, d in certified.items()):
            break  # a refused budget below: x is the least (to tol, where converged)
        # certified down to the bracket's (unevaluated) lower end: widen down, same grid
        lo = lo / WIDEN
        with np.errstate(divide="ignore"):  # a certified delta of 0: -inf, still good
            log_good, f_good = x, float(np.log(certified[x])) - math.log(level)
    else:
        raise InfeasibleTargetError(
            f"{NAME}: no certified least budget at ({_use(T, q)}) within "
            f"[{lo / gaussian_budget:.3g}, {hi / gaussian_budget:.3g}] x the Gaussian's "
            f"m sigma_G^2 = {gaussian_budget:.6g} after {WIDENINGS} widenings (delta({epsilon}) "
            f"= {certified.get(x, math.inf):.3g} at the last budget tried, target {delta})"
        )
    big_n, r = grid["N"], grid["r"]
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
            _objective_note(T, q),
            f"spherical: KL-optimal radial noise (monotone programme, banded Newton), least "
            f"budget by Illinois on log C ({solved} programmes solved), certified "
            f"by the {_certificate_text(T, q, relation)}; "
            f"n = {n} shells per unit sensitivity, N = {big_n}, r = {r:.4g}"
            + (f", a flat core below shell {grid['first']} (its cells at loss +inf)"
               if grid["first"] else "")
            + "; rebuild with "
            f"`dpjax spherical design --dim {m} --cost {best:.6g} --n {n} --N {big_n} "
            f"--r {r:.6g}` (unit sensitivity; scale the noise by l2"
            + (", without the flat core)" if grid["first"] else ")"),
            _verdict(best, gaussian_budget, sigma, T, q, m, n),
        ),
    )


def _certificate_text(T: int, q: float | None, relation: str = "add_remove") -> str:
    """How the budget was certified at the use (for the notes)."""
    if T == 1 and q is None:
        return "exact cell profile"
    pairs = ("add and remove adjacency, the worse" if relation == "add_remove"
             else "relation replace_one: a bound from the unsampled cell profile (advanced "
             "joint convexity; twice the shift by group privacy)" if relation == "replace_one"
             else f"relation {relation}: the {relation} adjacency")
    sub = "" if q is None else f" of the Poisson-subsampled pairs (q = {q:.6g}, {pairs})"
    return (f"mechanism's PLD{sub} composed {T}-fold by the FFT engine (pessimistic, bin "
            "width 1e-4)")


def _objective_note(T: int, q: float | None) -> str:
    """What the calibration optimised (shape, scale) at the use."""
    if T == 1 and q is None:
        return (
            "spherical: objective -- the shape minimises the KL at unit shift (Theorem 4), "
            "the large-T limit of the certified epsilon after T uses; for this single release "
            "it is not the (epsilon, delta) optimum, so only the scale (the budget C) is "
            "chosen by the certified delta(epsilon) of one release (for T uses at rate q, "
            "design with `dpjax spherical design --r auto --auto-delta D --auto-compositions "
            "T --auto-sampling-rate q`, which picks the tail by the certified epsilon there)"
        )
    return (
        f"spherical: objective -- the shape minimises the KL at unit shift (Theorem 4), the "
        f"large-T limit of the certified epsilon after T uses; the scale (the budget C) is the "
        f"least with certified delta(epsilon) <= delta at ({_use(T, q)}); the tail ratio r is "
        "the slope rule's, not searched by the certified epsilon (`dpjax spherical design "
        "--r auto --auto-delta D --auto-compositions T --auto-sampling-rate q` does, for one "
        "budget)"
    )


def _verdict(best: float, gaussian_budget: float, sigma: float, T: int, q: float | None,
             m: int, n: int) -> str:
    """The budget against the Gaussian's at the same use (unit sensitivity): never silent."""
    ratio = best / gaussian_budget
    head = (f"spherical: verdict -- at ({_use(T, q)}) its budget is {ratio:.4g} x the "
            f"Gaussian's m sigma_G^2 (sigma_G = {sigma:.6g} per unit l2): ")
    if ratio < 1.0:
        return head + f"{1.0 - ratio:.2%} less mse, the designed mechanism pays"
    return head + (f"{ratio - 1.0:.2%} more mse, the Gaussian is better here (prefer it; the "
                   f"shells' price in the KL is about m / (6 n^2) = {m / (6.0 * n * n):.2%} "
                   "at this grid, and the design pays at small budgets with many compositions)")
