"""Certified flipped Huber calibration: paper numbers, certificates, optimality, mechanism glue."""

import jax
import numpy as np
import pytest
import scipy.optimize
from _helpers import once_per_arguments

import dpjax
from dpjax.accounting.flipped_huber import log_delta_flipped_huber, log_delta_flipped_huber_generic
from dpjax.calibration.flipped_huber_kdim import calibrate_flipped_huber_exact_source
from dpjax.calibration.gaussian import sigma_gaussian
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms.flipped_huber import log_delta_flipped_huber_sufficient  # jitted
from dpjax.noise.flipped_huber import standard_variance

_generic = jax.jit(log_delta_flipped_huber_generic)
_exact = jax.jit(log_delta_flipped_huber)

K = 20
TABLE2_EPS = np.array([0.2, 0.4, 1.0, 2.2, 5.0])


@pytest.fixture(scope="module")
def fig3a():
    """Fig. 3a targets (Delta = 1, delta = 1e-6), one vectorised call (padded batch of 4)."""
    return dpjax.calibrate("flipped-huber", epsilon=[0.3, 3.0, 1.0], delta=1e-6, linf=1.0)


def _table2(delta):
    return dpjax.calibrate(
        "flipped-huber",
        epsilon=TABLE2_EPS,
        delta=delta,
        dim=K,
        linf=1.0,
        l2=np.sqrt(K),
        l1=float(K),
        condition="sufficient",
    )


@pytest.fixture(scope="module")
def table2():
    """Two calls of 5 targets (same padded batch of 8: one compile)."""
    return [_table2(1e-8), _table2(1e-6)]


def test_fig3a_least_variance_reproduces(fig3a):
    var = np.asarray(fig3a.variance)
    assert round(float(var[0]), 2) == 22.21  # paper, Fig. 3a / Sec. V-A
    # "for flipped Huber ... the variances decrease by 100 times" from eps = 0.3 to 3
    assert 99.0 < var[0] / var[1] < 101.0
    # FH beats the Gaussian (168.80 at eps = 0.3) and the exact 1-D Laplace (variance 2 b^2)
    assert var[0] < 168.80
    laplace = 2.0 / (np.array([0.3, 3.0, 1.0]) - 2 * np.log1p(-1e-6)) ** 2
    assert np.all(var <= laplace * (1 + 1e-9))
    assert fig3a.member.tolist() == ["interior"] * 3


def test_every_calibration_is_certified_by_an_independent_kernel(fig3a):
    a, g = fig3a.params["alpha"], fig3a.params["gamma"]
    eps = np.asarray(fig3a.epsilon)
    assert np.all(fig3a.delta_at_params <= 1e-6)
    # the generic Lemma 11 kernel (numerical inverse of the loss) agrees it is private
    generic = np.exp(np.asarray(_generic(eps, a, g, 1.0)))
    assert np.all(generic <= 1e-6 * (1 + 1e-9))
    # ... and tight: 0.1% less scale at the same shape breaks the target
    tighter = np.exp(np.asarray(_exact(eps, a / 1.001, g / 1.001, 1.0)))
    assert np.all(tighter > 1e-6)


def test_calibration_is_optimal_against_scipy_search(fig3a):
    """Independent optimiser: brentq on gamma (generic kernel) and a bounded scan of the shape."""
    eps = 0.3
    log_t = np.log(1e-6)

    def least_var(b):
        f = lambda lg: float(_generic(eps, b * np.exp(lg), np.exp(lg), 1.0)) - log_t  # noqa: E731
        lg = scipy.optimize.brentq(f, -5.0, 10.0, xtol=1e-12)
        return np.exp(2 * lg) * float(standard_variance(b))

    b_star = float(fig3a.params["alpha"][0] / fig3a.params["gamma"][0])
    grid = b_star * np.array([0.9, 0.97, 0.995, 1.005, 1.03, 1.1])
    best = min(least_var(b) for b in grid)
    assert float(fig3a.variance[0]) <= best * (1 + 1e-7)
    assert float(fig3a.variance[0]) == pytest.approx(least_var(b_star), rel=1e-7)


def test_vectorised_equals_single_targets(fig3a):
    single = dpjax.calibrate("flipped-huber", epsilon=1.0, delta=1e-6, linf=1.0)
    assert float(single.variance) == pytest.approx(float(fig3a.variance[2]), rel=1e-12)
    assert np.shape(single.params["alpha"]) == ()


def test_sensitivity_scales_the_answer():
    cal = dpjax.calibrate("flipped-huber", epsilon=[0.3, 3.0, 1.0], delta=1e-6, linf=2.5)
    unit = dpjax.calibrate("flipped-huber", epsilon=[0.3, 3.0, 1.0], delta=1e-6, linf=1.0)
    np.testing.assert_allclose(cal.variance, 6.25 * unit.variance, rtol=1e-7)


def test_table2_theorem8_optimum(table2):
    """Theorem 8 at K = 20, Delta = 1, Delta_2 = sqrt(20), Delta_1 = 20.

    The optimum is the Gaussian limit alpha -> 0 at both delta = 1e-8 (the paper's stated
    setting) and 1e-6; the paper's printed row (7237.09, 1971.36, 359.57, 87.09, 19.49) lies
    0.01%-4% above the delta = 1e-6 optimum (a coarse (alpha, gamma) grid with alpha >= 0.02)
    and 25%-35% below the delta = 1e-8 one, so it does not reproduce at delta = 1e-8.
    """
    var = np.stack([np.asarray(c.variance) for c in table2])
    for row, delta in enumerate([1e-8, 1e-6]):
        sigma = np.asarray(sigma_gaussian(TABLE2_EPS, delta, np.sqrt(K))[0])
        # never worse than the Gaussian (alpha = 0 is in the search) and no better than it
        assert np.all(var[row] <= sigma**2 * (1 + 1e-9))
        np.testing.assert_allclose(var[row], sigma**2, rtol=1e-6)
    paper = np.array([7237.09, 1971.36, 359.57, 87.09, 19.49])
    assert np.all(paper >= var[1]) and np.all(paper <= 1.05 * var[1])
    assert np.all(paper < 0.76 * var[0]) and np.all(paper > 0.64 * var[0])
    for cal, delta in zip(table2, [1e-8, 1e-6], strict=False):
        assert np.all(cal.delta_at_params <= delta)
        recheck = np.exp(
            np.asarray(
                log_delta_flipped_huber_sufficient(
                    TABLE2_EPS, cal.params["alpha"], cal.params["gamma"], K, K, np.sqrt(K), 1.0
                )
            )
        )
        assert np.all(recheck <= delta)
        assert cal.condition == "sufficient"


def test_theorem8_search_reaches_the_laplace_limit_member():
    """K = 10, eps = 0.7, delta = 1e-7: the Theorem 8 bound improves toward the Laplace end
    (b -> inf, variance 2 (K / eps)^2 = 408.16); a grid stopping at b = 200 returned 414.90."""
    eps = np.array([0.7, 0.3, 1.0, 2.0, 3.0])  # 5 targets: same compiled batch as Table II
    cal = dpjax.calibrate(
        "flipped-huber", epsilon=eps, delta=1e-7, dim=10, linf=1.0, condition="sufficient"
    )
    limit = 2.0 * (10.0 / 0.7) ** 2
    assert abs(float(cal.variance[0]) / limit - 1.0) < 1e-3
    assert cal.member[0] == "laplace" and cal.to_json()["member"][0] == "laplace"
    assert np.all(cal.delta_at_params <= 1e-7)


def test_sufficient_calibration_beats_gaussian_in_low_dimension():
    eps = np.array([0.5, 0.8, 1.2, 2.0, 3.0])  # 5 targets: same compiled batch as Table II
    cal = dpjax.calibrate(
        "flipped-huber", epsilon=eps, delta=1e-6, dim=3, linf=1.0, condition="sufficient"
    )
    sigma = np.asarray(sigma_gaussian(eps, 1e-6, np.sqrt(3.0))[0])
    assert np.all(cal.variance < sigma**2)
    assert np.all(cal.params["alpha"] > 0)
    assert np.all(cal.delta_at_params <= 1e-6)


def test_mechanism_errors():
    with pytest.raises(InfeasibleTargetError):
        dpjax.calibrate("flipped-huber", epsilon=1.0, delta=0.0, linf=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dpjax.calibrate("flipped-huber", epsilon=-1.0, delta=1e-6, linf=1.0)
    with pytest.raises(ValueError, match="delta"):
        dpjax.calibrate("flipped-huber", epsilon=1.0, delta=1.5, linf=1.0)


def test_uses_are_one_stacked_query():
    # T uses of a K-dim query = one K T-dim query: l1 T, l2 sqrt(T) (rounded up), linf
    from fractions import Fraction

    from dpjax.mechanisms._spec import make_query
    from dpjax.mechanisms.flipped_huber import MECHANISM, stacked

    q = make_query(MECHANISM, {"dim": 3, "l1": 0.7, "l2": 0.5, "linf": 0.4, "compositions": 7})
    k, sens, notes = stacked(q)
    assert k == 21 and sens["linf"] == 0.4
    assert Fraction(sens["l1"]) >= 7 * Fraction(0.7) and sens["l1"] <= 4.9 * (1 + 1e-15)
    assert Fraction(sens["l2"]) ** 2 >= 7 * Fraction(0.5) ** 2
    assert sens["l2"] <= 0.5 * 7**0.5 * (1 + 1e-15) and "stacked" in notes[-1]
    # Theorem 8 on the stacked query, and the same bound as a profile
    eps = np.array([0.5, 2.0])
    uses = dpjax.calibrate("flipped-huber", epsilon=eps, delta=1e-6, compositions=4, l1=1.0,
                           l2=1.0, linf=1.0, condition="sufficient")
    one = dpjax.calibrate("flipped-huber", epsilon=eps, delta=1e-6, dim=4, l1=4.0, l2=2.0,
                          linf=1.0, condition="sufficient")
    # (l2 sqrt(4) is rounded up one ulp: never below the one-query numbers)
    np.testing.assert_allclose(uses.params["gamma"], one.params["gamma"], rtol=1e-13)
    assert np.all(uses.delta_at_params <= 1e-6)
    params = {"alpha": 2.0, "gamma": 3.0}
    prof = dpjax.profile("flipped-huber", params, epsilon=eps, linf=1.0, compositions=4)
    ref = dpjax.profile("flipped-huber", params, epsilon=eps, dim=4, l1=4.0, l2=2.0, linf=1.0)
    assert np.all(prof >= ref)
    np.testing.assert_allclose(prof, ref, rtol=1e-13)


def test_profile_and_account_facade():
    params = {"alpha": 2.0, "gamma": 1.5}
    eps = np.array([0.1, 1.0, 3.0])
    got = dpjax.profile("flipped-huber", params, epsilon=eps, linf=1.0)
    np.testing.assert_allclose(got, np.exp(np.asarray(_generic(eps, 2.0, 1.5, 1.0))), rtol=1e-10)
    e = dpjax.account("flipped-huber", params, delta=1e-5, linf=1.0)
    assert float(dpjax.profile("flipped-huber", params, epsilon=e, linf=1.0)) <= 1e-5
    # K dims: a certified upper bound, monotone in epsilon
    k_prof = dpjax.profile("flipped-huber", params, epsilon=eps, dim=5, linf=1.0)
    assert np.all(np.diff(k_prof) <= 0) and np.all(k_prof >= got - 1e-15)


#: the engine's exact K-dim search, run once per arguments in this module
_exact_search_once = once_per_arguments(calibrate_flipped_huber_exact_source)


@pytest.fixture
def exact_search_once(monkeypatch):
    """The mechanism's exact K-dim calibrations through :func:`_exact_search_once`."""
    from dpjax.mechanisms import flipped_huber as mech

    monkeypatch.setattr(mech, "calibrate_flipped_huber_exact_source", _exact_search_once)


@pytest.fixture(scope="module")
def exact_k2():
    """K = 2 at (1, 1e-6), necessary and sufficient (the engine's search, recorded by
    :func:`_exact_search_once`: the two stacked uses and the command line below ask the same
    search and get its answer)."""
    from dpjax.mechanisms import flipped_huber as mech

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mech, "calibrate_flipped_huber_exact_source", _exact_search_once)
        return dpjax.calibrate("flipped-huber", epsilon=1.0, delta=1e-6, dim=2, linf=1.0,
                               condition="exact")


def test_exact_k_dim_calibration_through_the_engine(exact_k2, exact_search_once):
    """K = 2, necessary and sufficient (PLD engine): certified, never worse than Theorem 8,
    and the returned parameters' optimistic (lower-bound) PLD agrees with the certificate."""
    from dpjax.accounting.pld import delta_for_epsilon, from_noise, self_compose, self_compose_size
    from dpjax.noise.flipped_huber import FlippedHuber

    eps, delta, k = 1.0, 1e-6, 2
    exact = exact_k2
    suff = dpjax.calibrate(
        "flipped-huber", epsilon=eps, delta=delta, dim=k, linf=1.0, condition="sufficient"
    )
    assert exact.condition == "exact" and float(exact.delta_at_params) <= delta
    assert float(exact.variance) <= float(suff.variance)
    # two uses of a 1-D query are this 2-dim query (mechanisms.flipped_huber.stacked): the
    # engine is asked the same search (exact_search_once answers it with exact_k2's)
    twice = dpjax.calibrate(
        "flipped-huber", epsilon=eps, delta=delta, compositions=k, linf=1.0, condition="exact"
    )
    for name in ("alpha", "gamma"):
        assert float(twice.params[name]) == float(exact.params[name])
    assert any("2 uses of the 1-dim query stacked" in n for n in twice.notes)
    a, g = float(exact.params["alpha"]), float(exact.params["gamma"])
    with jax.enable_x64(True):
        fh = FlippedHuber(jax.numpy.float64(a), jax.numpy.float64(g))
        bounds = []
        for pessimistic in (False, True):
            one = from_noise(fh, 1.0, 1e-4, pessimistic=pessimistic)
            comp = self_compose(one, k, self_compose_size(one, k))
            bounds.append(float(delta_for_epsilon(comp, eps)))
    lower, upper = bounds
    assert lower <= upper <= delta * (1 + 1e-9)
    # the search must reach the Laplace end of the family: pure-DP Laplace with the l1
    # budget (variance 2 (K / eps)^2) is the limit alpha / gamma -> infinity
    assert float(exact.variance) <= 2.0 * (k / eps) ** 2 * (1 + 1e-4)


def test_cli_table_at_small_k_prints_the_member_and_is_certified_by_the_engine(
        capsys, monkeypatch, exact_k2, exact_search_once):
    # K = 2 at (1, 1e-6): the instance of test_exact_k_dim_calibration_through_the_engine (its
    # engine search, exact_k2's); the CLI's own calibration is recorded (one search, not a
    # second identical one) and its printed member checked against it
    import dpjax.cli.calibrate as cli_calibrate
    from dpjax.accounting.flipped_huber_kdim import delta_flipped_huber_exact
    from dpjax.cli import main

    seen, calibrate = [], dpjax.calibrate

    def recording(*args, **kwargs):
        seen.append(calibrate(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(cli_calibrate.dpjax, "calibrate", recording)
    code = main(["calibrate", "flipped-huber", "--dim", "2", "--linf", "1", "--epsilon", "1",
                 "--delta", "1e-6", "--condition", "exact"])
    out = capsys.readouterr().out
    assert code == 0 and "member" in out and "exact" in out
    (cal,) = seen
    assert cal.condition == "exact" and float(np.asarray(cal.epsilon)) == 1.0
    assert str(np.asarray(cal.member)) in out
    alpha, gamma = float(cal.params["alpha"]), float(cal.params["gamma"])
    # re-derived by the exact K-dim accounting (the engine's K-fold composition)
    d = float(np.asarray(delta_flipped_huber_exact(np.array([1.0]), alpha, gamma, 2, 1.0))[0])
    assert d <= 1e-6
