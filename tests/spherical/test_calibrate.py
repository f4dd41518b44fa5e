"""The spherical calibration (the ``spherical`` row of ``dpjax design``): certified at the use
(one release, ``T`` compositions, Poisson subsampling), least to its tolerance, and it says
which objective it optimised (issue 35, item 3)."""

import math

import numpy as np
import pytest

from dpjax.errors import InfeasibleTargetError
from dpjax.spherical import calibrate as sc
from dpjax.spherical import geometric as ge
from dpjax.spherical.calibrate import calibrate_spherical

EPS, DELTA, M, N_SHELLS, TOL = 2.0, 1e-5, 3, 4, 0.05


def _rebuilt(cal, budget=None):
    """The calibration's mechanism at unit sensitivity, rebuilt from its params (``n, N, r``),
    or another budget on the same grid."""
    grid, cells = sc._grid_of(cal.dim, int(cal.params["n"]), int(cal.params["N"]),
                              float(cal.params["r"]))
    l2 = cal.sensitivity["l2"]
    c = float(cal.params["budget"]) / (l2 * l2) if budget is None else budget
    res = ge.solve_plan({**grid, "budget": c}, cells)
    assert res["status"] == 0
    return res["mechanism"]


def _two_fold_delta(mech, eps):
    """Exact hockey-stick of two uses from the cells (every pair of atoms summed, no grid):
    ``delta_2(eps) = P(L = inf) + sum_ab P_a P_b (1 - e^(eps - l_a - l_b))_+``."""
    loss, pm, _, p_out, _ = mech.atoms()
    total = loss[:, None] + loss[None, :]
    terms = np.outer(pm, pm) * -np.expm1(np.minimum(eps - total, 0.0))
    return math.fsum(terms[total > eps]) + (1.0 - (1.0 - p_out) ** 2)


def _subsampled_delta(mech, eps, q, directions=("remove", "add")):
    """Exact hockey-stick of one Poisson-subsampled use, the worse of the dominating pairs
    asked for (remove: ``qP + (1-q)Q`` vs ``Q``; add: ``P`` vs ``(1-q)P + qQ``), summed over
    the cells."""
    _, pm, qm, p_out, q_out = mech.atoms()
    e = math.exp(eps)
    remove = math.fsum(np.maximum(q * pm + (1 - q) * qm - e * qm, 0.0)) + q * p_out + (
        1 - q) * q_out
    add = math.fsum(np.maximum(pm - e * ((1 - q) * pm + q * qm), 0.0)) + p_out
    return max({"remove": remove, "add": add}[d] for d in directions)


def test_single_release_says_the_kl_shape_is_not_its_objective():
    cal = calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL)
    assert cal.delta_at_params <= 1e-5
    objective = cal.notes[0]
    assert "objective" in objective and "large-T limit" in objective
    assert "single release" in objective and "--r auto" in objective


def test_one_release_is_the_exact_cell_sum_and_the_defaults():
    """``compositions=1, sampling_rate=None`` is the single-release search (the same budget,
    bit for bit), certified by the exact cell sum of the rebuilt mechanism."""
    cal = calibrate_spherical(EPS, DELTA, M, 2.0, n=N_SHELLS, tol=TOL)
    same = calibrate_spherical(EPS, DELTA, M, 2.0, n=N_SHELLS, tol=TOL, compositions=1,
                               sampling_rate=None)
    assert {k: float(v) for k, v in cal.params.items()} == {
        k: float(v) for k, v in same.params.items()}
    assert float(cal.delta_at_params) == float(same.delta_at_params)
    mech = _rebuilt(cal)
    assert mech.delta(EPS) == float(cal.delta_at_params) <= DELTA
    assert float(cal.mse) == float(cal.params["budget"]) == 4.0 * mech.budget


def test_composed_budget_is_certified_by_an_exact_two_fold_sum_and_least():
    """Two uses: the returned budget's certified delta (its PLD composed by the FFT engine) is
    at least the exact two-fold hockey-stick of its cells and at most the target; a budget
    ``e^-tol`` smaller is refused at the use (the search's least, to its tolerance)."""
    cal = calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL, compositions=2)
    mech = _rebuilt(cal)
    exact = _two_fold_delta(mech, EPS)
    assert exact <= float(cal.delta_at_params) <= DELTA
    assert float(cal.delta_at_params) <= exact * 1.01  # pessimistic, not loose
    assert mech.delta(EPS, 2) == float(cal.delta_at_params)  # the mechanism's own accountant
    smaller = _rebuilt(cal, mech.budget * math.exp(-TOL))
    assert smaller.delta(EPS, 2) > DELTA
    assert _two_fold_delta(smaller, EPS) > DELTA * 0.9  # the refusal is the exact profile's too
    assert "(T=2)" in cal.notes[0] and "composed 2-fold" in cal.notes[1]
    assert "verdict" in cal.notes[2] and "Gaussian" in cal.notes[2]


def test_subsampled_budget_is_certified_by_the_exact_subsampled_pairs():
    q = 0.2
    cal = calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL, sampling_rate=q)
    mech = _rebuilt(cal)
    exact = _subsampled_delta(mech, EPS, q)
    assert exact <= float(cal.delta_at_params) <= DELTA
    assert float(cal.delta_at_params) <= exact * 1.01
    assert _subsampled_delta(_rebuilt(cal, mech.budget * math.exp(-TOL)), EPS, q) > DELTA * 0.9
    assert "(T=1, q=0.2)" in cal.notes[0] and "add and remove" in cal.notes[1]
    # subsampling amplifies: a far smaller budget than one plain release needs
    plain = calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL)
    assert float(cal.mse) < 0.5 * float(plain.mse)


#: A subsampled use where every direction needs noise: ``eps < log(1 / (1 - q)) = 0.69``
#: (else the add direction is free); the Gaussian's sigma there is large, so its loss grids
#: (replace-one's included) are small.
Q_REL, EPS_REL = 0.5, 0.3


@pytest.fixture(scope="module")
def both_at_rel():
    """The add-and-remove calibration at ``(EPS_REL, Q_REL)``: the budget every single
    relation's is compared with (computed once for the tests below)."""
    return calibrate_spherical(EPS_REL, DELTA, M, 1.0, n=N_SHELLS, tol=TOL, sampling_rate=Q_REL)


@pytest.mark.parametrize("relation", ["remove", "add"])
def test_subsampled_relation_is_certified_by_its_own_pair(relation, both_at_rel):
    """``relation="remove"`` / ``"add"`` under Poisson subsampling: the budget is certified by
    that direction's exact subsampled pair alone, and needs no more than both directions."""
    q, eps = Q_REL, EPS_REL  # the add direction needs noise too
    cal = calibrate_spherical(eps, DELTA, M, 1.0, n=N_SHELLS, tol=TOL, sampling_rate=q,
                              relation=relation)
    mech = _rebuilt(cal)
    exact = _subsampled_delta(mech, eps, q, (relation,))
    assert exact <= float(cal.delta_at_params) <= DELTA
    assert float(cal.delta_at_params) <= exact * 1.01
    smaller = _rebuilt(cal, mech.budget * math.exp(-TOL))
    assert _subsampled_delta(smaller, eps, q, (relation,)) > DELTA * 0.9
    assert f"relation {relation}" in cal.notes[1]
    assert mech.delta(eps, 1, q, relation=relation) == pytest.approx(
        float(cal.delta_at_params), rel=1e-12)
    assert float(cal.mse) <= float(both_at_rel.mse) * math.exp(TOL)
    with pytest.raises(ValueError, match="relation"):
        mech.delta(eps, 1, q, relation="replace_special")
    with pytest.raises(ValueError, match="twice the sensitivity"):
        mech.delta(eps, 1, None, relation="replace_one")


def test_subsampled_replace_one_is_certified_by_the_profile_bound(both_at_rel):
    """Replace-one under Poisson subsampling: no worst pair is known, so the budget is
    certified by the bound of :func:`dpjax.accounting.pld.amplification.poisson_replace_one`
    (the bound itself is checked against exact divergences in
    tests/accounting/pld/test_amplification.py); the mechanism then meets the target under
    add and remove too (its exact subsampled cells), and the bound is never below them.
    At ``(EPS_REL, Q_REL)``: the Gaussian's replace-one calibration that sets the bracket
    costs several times less there than at ``(EPS, 0.2)`` (its loss grids go as
    ``1 / sigma``)."""
    q, eps = Q_REL, EPS_REL
    cal = calibrate_spherical(eps, DELTA, M, 1.0, n=N_SHELLS, tol=TOL, sampling_rate=q,
                              relation="replace_one")
    mech = _rebuilt(cal)
    assert mech.delta(eps, 1, q, relation="replace_one") == pytest.approx(
        float(cal.delta_at_params), rel=1e-12)
    assert _subsampled_delta(mech, eps, q) <= float(cal.delta_at_params) <= DELTA
    assert "replace_one" in cal.notes[1] and "group privacy" in cal.notes[1]
    assert float(cal.mse) >= float(both_at_rel.mse) * math.exp(-TOL)


def test_a_bracket_that_misses_is_widened(monkeypatch):
    """The target below or above the bracket: widened until it holds a refused and a
    certified budget (the answer within the tolerance of the unwidened one's).  One release
    (the exact cell sum: fast); the search is the same for every use."""
    base = float(calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL).mse)
    for bracket in ((0.3, 0.45), (1.6, 2.4)):
        monkeypatch.setattr(sc, "BRACKET", bracket)
        cal = calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL)
        assert float(cal.delta_at_params) <= DELTA
        assert _rebuilt(cal, float(cal.mse) * math.exp(-TOL)).delta(EPS) > DELTA
        assert abs(math.log(float(cal.mse) / base)) <= 2 * TOL  # other grid: within tolerance


def test_a_target_out_of_reach_fails_closed(monkeypatch):
    monkeypatch.setattr(sc, "BRACKET", (0.3, 0.45))
    monkeypatch.setattr(sc, "WIDENINGS", 1)
    with pytest.raises(InfeasibleTargetError, match=r"no certified least budget at \(T=1\)"):
        calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL)


def test_default_shells_follow_the_geometry_capped():
    """The default grid is the geometric design's rule at the calibration's tolerance (grid
    price ``m / (6 n^2) <= SHELL_TOL``), capped at ``MAX_SHELLS`` (issue 35)."""
    for m in (2, 3, 10, 20, 100, 245):
        n = sc.default_shells(m)
        assert n == ge.shells_per_unit(m, sc.SHELL_TOL) <= sc.MAX_SHELLS
        assert m / (6.0 * n * n) <= sc.SHELL_TOL
        assert n == ge.MIN_SHELLS or m / (6.0 * (n - 1) ** 2) > sc.SHELL_TOL  # the fewest
    assert sc.default_shells(10**4) == sc.MAX_SHELLS


def test_the_default_grid_is_the_rule_and_n_overrides_it(monkeypatch):
    """``n=None`` takes :func:`default_shells` of the dimension (stubbed to a coarse grid
    here: the same search, bit for bit, as passing that ``n``); an explicit ``n`` wins."""
    asked = []
    monkeypatch.setattr(sc, "default_shells", lambda m: asked.append(m) or N_SHELLS)
    cal = calibrate_spherical(EPS, DELTA, M, 1.0, tol=TOL)
    explicit = calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL)
    assert asked == [M] and float(cal.params["n"]) == N_SHELLS
    assert {k: float(v) for k, v in cal.params.items()} == {
        k: float(v) for k, v in explicit.params.items()}
    assert float(cal.delta_at_params) == float(explicit.delta_at_params) <= DELTA
    other = calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS + 1, tol=TOL)
    assert asked == [M] and float(other.params["n"]) == N_SHELLS + 1


@pytest.mark.parametrize("kw,match", [(dict(compositions=0), "compositions"),
                                      (dict(sampling_rate=1.5), "sampling_rate")])
def test_bad_uses_are_refused_before_any_programme(kw, match):
    with pytest.raises(ValueError, match=match):
        calibrate_spherical(EPS, DELTA, M, 1.0, n=N_SHELLS, tol=TOL, **kw)


@pytest.mark.slow
def test_paper_dimension_many_compositions_certified():
    """m = 10, 50 uses at rate 0.01 (Fig. 2's regime, the default grid): certified at the use
    by the mechanism's own accountant, and a budget ``e^-tol`` smaller refused there."""
    cal = calibrate_spherical(1.0, 1e-5, 10, 1.0, compositions=50, sampling_rate=0.01)
    mech = _rebuilt(cal)
    assert mech.delta(1.0, 50, 0.01) == float(cal.delta_at_params) <= 1e-5
    assert mech.epsilon(1e-5, 50, 0.01) <= 1.0
    smaller = _rebuilt(cal, mech.budget * math.exp(-sc.TOL))
    assert smaller.delta(1.0, 50, 0.01) > 1e-5
